"""Instructions per repetition of the one-shot and scikit-learn workloads (those of
`compare.py`), tlaloc against NumPy, counted by valgrind's callgrind.

Seconds on a shared machine move by 5-20% between runs of the same tree (docs/benchmarks.md),
more than most single changes to the per-call path gain. Instructions executed do not move:
with the hash seed and the thread counts fixed, two runs of one tree agree to within 0.01%,
so an A/B of two trees is one run of each. Instructions are not time (NumPy's small ufunc
calls spend more of theirs waiting on memory than tlaloc's Python does), so the ratio here
is a floor of the seconds' ratio, not the figure the targets name: report both.

Each (workload, library) runs in two fresh processes under callgrind, one with R1 and one
with R2 repetitions after the same warm-up; the difference divided by R2 - R1 is what one
repetition costs, with start-up, imports and warm-up cancelled out.

    python benchmarks/count_instructions.py [--only oneshot,sklearn] [--reps 2,6]
    PYTHONPATH=/path/to/other/tree python benchmarks/count_instructions.py   # the A side

Needs valgrind (Debian's package); skips with a message where it is missing. Under
callgrind a repetition runs ~50x slower: the default run takes 2-4 minutes.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
WORKLOADS = ("oneshot", "sklearn")
LIBS = ("tlaloc", "numpy")


# ----------------------------------------------------------------------------- the child

def _oneshot(lib):
    """One repetition: the 100 one-shot programs on inputs made beforehand (new shapes in
    each repetition, as in compare.py), converted and reduced to a float."""
    import numpy as np
    import _workloads as wl
    programs = [wl.one_shot_steps(k) for k in range(wl.ONE_SHOT_PROGRAMS)]
    if lib == "tlaloc":
        import tlaloc as xp
        ns, convert = xp, xp.asarray
    else:
        ns, convert = np, (lambda a: a)
    reps = iter(range(1, 10 ** 6))
    # every process makes the inputs of as many repetitions, whatever it runs of them
    inputs = {rep: [wl.one_shot_inputs(k, rep) for k in range(len(programs))]
              for rep in range(1, 40)}

    def run():
        for steps, (a, b) in zip(programs, inputs[next(reps)]):
            float(wl.one_shot_program(ns, steps, convert(a), convert(b)))
    return run


def _sklearn(lib):
    """One repetition: compare.py's pipeline, fitted and scored on new data, in tlaloc's
    default mode."""
    import types
    import compare
    import tlaloc
    # compare.Libs imports jax and torch where installed: the pipeline needs none of it
    libs = types.SimpleNamespace(
        tlaloc=tlaloc, auto=lambda: tlaloc.config.update(execution="auto"),
        compiled=lambda: tlaloc.config.update(execution="compiled"))
    return compare.prep_sklearn(libs, lib, None)


def child(workload, lib, reps):
    import warnings
    warnings.simplefilter("ignore")     # (overflow in exp: the programs are random)
    sys.path.insert(0, HERE)
    run = {"oneshot": _oneshot, "sklearn": _sklearn}[workload](lib)
    for _ in range(2):                  # first-use costs: imports, code paths, caches
        run()
    if lib == "tlaloc":
        import tlaloc
        tlaloc.wait_for_compiles()
    for _ in range(reps):
        run()


# ----------------------------------------------------------------------------- the parent

def instructions(workload, lib, reps) -> int:
    """Instructions callgrind counts in a fresh process running `reps` repetitions."""
    env = dict(os.environ, PYTHONHASHSEED="0", OPENBLAS_NUM_THREADS="1",
               OMP_NUM_THREADS="1")
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
           sys.executable, os.path.abspath(__file__), "--child", workload, lib, str(reps)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stderr
    found = re.search(r"Collected\s*:\s*(\d+)", out)
    if found is None:
        raise RuntimeError(f"callgrind printed no count:\n{out[-2000:]}")
    return int(found.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default=",".join(WORKLOADS))
    ap.add_argument("--reps", default="2,6", help="R1,R2: repetitions of the two processes")
    ap.add_argument("--child", nargs=3, metavar=("WORKLOAD", "LIB", "REPS"),
                    help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        workload, lib, reps = args.child
        child(workload, lib, int(reps))
        return
    if shutil.which("valgrind") is None:
        print("valgrind is not installed: nothing counted (apt-get install valgrind)")
        return
    r1, r2 = (int(r) for r in args.reps.split(","))
    import tlaloc
    print(f"tlaloc from {os.path.dirname(tlaloc.__file__)}, "
          f"{len(tlaloc.native_modules())} modules compiled")
    print("| workload | tlaloc | numpy | tlaloc/NumPy |")
    print("|---|---|---|---|")
    for workload in args.only.split(","):
        per_rep = {lib: (instructions(workload, lib, r2) - instructions(workload, lib, r1))
                   / (r2 - r1) for lib in LIBS}
        t, n = per_rep["tlaloc"], per_rep["numpy"]
        print(f"| {workload} (instructions a repetition) | {t / 1e6:.2f} M | {n / 1e6:.2f} M "
              f"| {t / n:.2f} |", flush=True)


if __name__ == "__main__":
    main()
