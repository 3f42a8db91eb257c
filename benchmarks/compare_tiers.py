"""The tier policy, loops that write into arrays, and start-up, beside NumPy in one process
(issue 20, parts 2-4; the asv classes are in bench_tiers.py).

    python benchmarks/compare_tiers.py            # every workload (a few minutes on 2 cores)
    python benchmarks/compare_tiers.py --quick    # fewer repetitions
    python benchmarks/compare_tiers.py --only stencil,repeated,startup,fresh

  * stencil: 500 steps of `u[1:-1, 1:-1] = ...` on 200x200: NumPy; tlaloc's default mode
    on a loop it has not seen (first run) and again (second run); interpreted; compiled, on
    a loop not seen (cold: every program compiled) and with the loop's programs cached.
  * repeated: 100 small computations (the one-shot workload), each repeated 1, 2, 5 and 50
    times, on shapes never seen before: the default mode against both fixed tiers.
  * startup: `import tlaloc` against `import numpy`, fresh processes run in pairs
    (alternating, medians, with bytecode caches), whole-process seconds and
    `-X importtime`'s own figure.
  * fresh: the 100 one-shot computations in a fresh process, timed from just after the
    imports (and the inputs' making) to the last result: what a new user's script pays,
    first uses included; processes in pairs, as for startup.

Ratios are against NumPy measured in the same process and repetition (medians of
interleaved repetitions: the machine is shared and noisy).
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np

try:
    from . import _workloads as wl
except ImportError:  # run as a script
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import _workloads as wl

now = time.perf_counter


def _timed(fn):
    t = now()
    fn()
    return now() - t


def stencil(xp, reps):
    grid = wl.stencil_grid()
    shapes = iter(range(1, 10**6))

    def tlaloc_run(execution, n=wl.STENCIL_N):
        xp.config.update(execution=execution)
        return _timed(lambda: np.asarray(wl.stencil_loop(xp.asarray(wl.stencil_grid(n)))))

    rows = {k: [] for k in ("numpy", "first run", "second run", "interpreted", "compiled cold",
                            "compiled")}
    for _ in range(reps):
        rows["numpy"].append(_timed(lambda: wl.stencil_loop(grid.copy())))
        # a loop tlaloc has not seen: a grid size of its own in each repetition
        n = wl.STENCIL_N + next(shapes)
        xp.wait_for_compiles()
        rows["first run"].append(tlaloc_run("auto", n) * (wl.STENCIL_N / n) ** 2)
        xp.wait_for_compiles()
        rows["second run"].append(tlaloc_run("auto", n) * (wl.STENCIL_N / n) ** 2)
        rows["interpreted"].append(tlaloc_run("interpreted"))
        n = wl.STENCIL_N + next(shapes)            # every program compiled, none cached
        rows["compiled cold"].append(tlaloc_run("compiled", n) * (wl.STENCIL_N / n) ** 2)
        # the loop's programs cached: warm up until a run compiles nothing (the cuts of a
        # loop's first run after another loop can fall elsewhere than in its later runs,
        # so one warm-up run may leave a structure of the later runs uncompiled)
        for _ in range(3):
            misses = xp.cache_info()["misses"]
            tlaloc_run("compiled")
            if xp.cache_info()["misses"] == misses:
                break
        rows["compiled"].append(tlaloc_run("compiled"))
        xp.config.update(execution="auto")
    return {k: statistics.median(v) for k, v in rows.items()}


def repeated(xp, reps, counts=(1, 2, 5, 50)):
    fresh = iter(range(1, 10**6))
    programs = [wl.one_shot_steps(k) for k in range(wl.ONE_SHOT_PROGRAMS)]
    out = {}
    for count in counts:
        rows = {k: [] for k in ("numpy", "auto", "interpreted", "compiled")}
        for _ in range(reps):
            inputs = [wl.one_shot_inputs(k, 0) for k in range(len(programs))]
            rows["numpy"].append(_timed(lambda: [
                float(wl.one_shot_program(np, s, a, b))
                for _ in range(count) for s, (a, b) in zip(programs, inputs)]))
            for mode in ("auto", "interpreted", "compiled"):
                rep = next(fresh)            # shapes no tier has seen
                inputs = [wl.one_shot_inputs(k, rep) for k in range(len(programs))]
                xp.wait_for_compiles()
                xp.config.update(execution=mode)
                rows[mode].append(_timed(lambda: [
                    float(wl.one_shot_program(xp, s, xp.asarray(a), xp.asarray(b)))
                    for _ in range(count) for s, (a, b) in zip(programs, inputs)]))
            xp.config.update(execution="auto")
        out[count] = {k: statistics.median(v) for k, v in rows.items()}
    return out


# Start-up as a user's machine sees it: with bytecode caches (an environment that sets
# PYTHONDONTWRITEBYTECODE compiles every tlaloc module from source at every start).
_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _process_seconds(statement):
    t = now()
    subprocess.run([sys.executable, "-c", statement], check=True, env=_ENV)
    return now() - t


def _importtime_us(module):
    err = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {module}"],
                         capture_output=True, text=True, check=True, env=_ENV).stderr
    for line in err.splitlines()[::-1]:
        m = re.match(r"import time:\s+\d+ \|\s+(\d+) \| (\S+)$", line.strip())
        if m and m.group(2) == module:
            return int(m.group(1))
    raise RuntimeError(f"no importtime line for {module}")


def startup(reps):
    _process_seconds("import tlaloc")      # writes the bytecode caches
    rows = {k: [] for k in ("python", "numpy", "tlaloc", "numpy importtime", "tlaloc importtime")}
    for i in range(reps):
        order = ("numpy", "tlaloc") if i % 2 == 0 else ("tlaloc", "numpy")
        rows["python"].append(_process_seconds("pass"))
        for m in order:
            rows[m].append(_process_seconds(f"import {m}"))
            rows[f"{m} importtime"].append(_importtime_us(m) * 1e-6)
    return {k: statistics.median(v) for k, v in rows.items()}


_FRESH_ONE_SHOT = """
import sys, time, warnings
sys.path.insert(0, {here!r})
import numpy as np
{library}
import _workloads as wl
programs = [wl.one_shot_steps(k) for k in range(wl.ONE_SHOT_PROGRAMS)]
inputs = [wl.one_shot_inputs(k, 1) for k in range(len(programs))]
warnings.simplefilter("ignore")      # NumPy's overflow warnings in exp
t = time.perf_counter()
for steps, (a, b) in zip(programs, inputs):
    float(wl.one_shot_program(xp, steps, convert(a), convert(b)))
print(time.perf_counter() - t)
"""
_LIBRARIES = {"numpy": "xp, convert = np, np.asarray",
              "tlaloc": "import tlaloc as xp\nconvert = xp.asarray"}


def fresh(reps):
    """Seconds of the one-shot workload in fresh processes (medians), tlaloc and NumPy in
    alternating pairs."""
    here = os.path.dirname(os.path.abspath(__file__))
    rows = {"numpy": [], "tlaloc": []}
    for i in range(reps):
        for lib in (("numpy", "tlaloc") if i % 2 == 0 else ("tlaloc", "numpy")):
            code = _FRESH_ONE_SHOT.format(here=here, library=_LIBRARIES[lib])
            out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                 check=True, env=_ENV).stdout
            rows[lib].append(float(out.split()[-1]))
    return {k: statistics.median(v) for k, v in rows.items()}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default="stencil,repeated,startup,fresh")
    args = ap.parse_args(argv)
    only = set(args.only.split(","))
    os.environ.setdefault("TLALOC_CACHE_DIR", "")   # compiles are compiles, not disk loads
    import tlaloc as xp
    xp.config.update(compile_cache_dir=os.environ["TLALOC_CACHE_DIR"])
    reps = 3 if args.quick else 7
    if "stencil" in only:
        r = stencil(xp, reps)
        print(f"stencil 200x200, {wl.STENCIL_STEPS} steps (NumPy {r['numpy'] * 1e3:.1f} ms):")
        for k in ("first run", "second run", "interpreted", "compiled cold", "compiled"):
            print(f"  tlaloc {k:<12} {r[k] * 1e3:8.1f} ms  {r[k] / r['numpy']:6.2f}x NumPy")
        print(f"  first run / second run: {r['first run'] / r['second run']:.2f}")
    if "repeated" in only:
        print("100 small computations repeated, fresh shapes (ratios to NumPy):")
        print(f"  {'reps':>4} {'auto':>8} {'interp':>8} {'compiled':>9}  auto/better fixed tier")
        for count, r in repeated(xp, max(1, reps // 2)).items():
            best = min(r["interpreted"], r["compiled"])
            print(f"  {count:>4} {r['auto'] / r['numpy']:8.2f} {r['interpreted'] / r['numpy']:8.2f}"
                  f" {r['compiled'] / r['numpy']:9.2f}  {r['auto'] / best:.2f}")
    if "startup" in only:
        r = startup(reps * 2 + 1)
        print("start-up, fresh processes (medians):")
        print(f"  python -c pass {r['python'] * 1e3:.0f} ms; import numpy {r['numpy'] * 1e3:.0f} ms;"
              f" import tlaloc {r['tlaloc'] * 1e3:.0f} ms: {r['tlaloc'] / r['numpy']:.2f}x")
        print(f"  -X importtime: numpy {r['numpy importtime'] * 1e3:.0f} ms, tlaloc "
              f"{r['tlaloc importtime'] * 1e3:.0f} ms: "
              f"{r['tlaloc importtime'] / r['numpy importtime']:.2f}x")
    if "fresh" in only:
        r = fresh(reps * 2 + 1)
        print("100 small computations in a fresh process, after the imports (medians):")
        print(f"  numpy {r['numpy'] * 1e3:.2f} ms, tlaloc {r['tlaloc'] * 1e3:.2f} ms: "
              f"{r['tlaloc'] / r['numpy']:.2f}x")


if __name__ == "__main__":
    main()
