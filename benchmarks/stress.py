"""Stress figures for docs/reliability.md: threads, long loops, the disk cache.

    python benchmarks/stress.py                   # everything: 10^6-step loops (~10 minutes)
    python benchmarks/stress.py --steps 200000    # shorter loops
    python benchmarks/stress.py --only memory     # threads | memory | cache

Every case runs in a fresh process (the device's first use, and memory, are the process's
own). Reported per case: wall time, peak resident set (ru_maxrss), and for the loops the
growth of the resident set and of Python's allocated blocks per 100,000 steps, measured from
the 20% mark of the run to its end (past the warm-up: compiles, caches filling). The same
cases, smaller and with bounds, are tests/test_stress.py (TLALOC_STRESS=full for the large
sizes there too). To measure another checkout, put it first on PYTHONPATH.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import random
import shutil
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve()


# ----------------------------------------------------------------------------- children

def _rss() -> int:
    import resource
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()


def _peak_rss() -> int:
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def child_loop(kind: str, steps: int) -> dict:
    """`x = x * 0.999 + 1` for `steps` steps; kinds: [jit-|noread-]read?-(cpu|interpreter)."""
    import gc
    import tlaloc as xp
    device = "interpreter" if kind.endswith("interpreter") else "cpu"
    reads = not kind.startswith("noread")
    step = xp.jit(lambda x: x * 0.999 + 1.0) if kind.startswith("jit") else None
    x = xp.ones(10, device=device)
    marks = []
    every = max(1, steps // 10)
    start = time.perf_counter()
    for i in range(1, steps + 1):
        x = step(x) if step is not None else x * 0.999 + 1.0
        if reads:
            float(x[0])
        if i % every == 0:
            gc.collect()
            marks.append((i, _rss(), sys.getallocatedblocks()))
    seconds = time.perf_counter() - start
    value = float(x[0])
    (i0, r0, b0), (i1, r1, b1) = marks[1], marks[-1]
    per = 100_000 / (i1 - i0)
    return {"kind": kind, "steps": steps, "seconds": seconds, "us_per_step": seconds / steps * 1e6,
            "peak_rss_mb": _peak_rss() / 2**20,
            "rss_growth_mb_per_100k": (r1 - r0) * per / 2**20,
            "blocks_per_100k": (b1 - b0) * per,
            "rss_marks_mb": [round(r / 2**20, 1) for _, r, _ in marks],
            "rel_error": abs(value - (1000.0 - 999.0 * 0.999 ** steps)) / 1000.0}


def child_threads(mode: str, device: str, steps: int) -> dict:
    """Eight threads that use the device for the first time together, then record and
    evaluate `steps` steps each (plus reads of one array recorded before they started)."""
    import threading
    import numpy as np
    import tlaloc as xp
    xp.config.update(execution=mode)
    shared = xp.reshape(xp.arange(6.0, device=device), (2, 3)) * 3.0 + 1.0
    shared_np = np.arange(6.0).reshape(2, 3) * 3.0 + 1.0
    errors = []
    barrier = threading.Barrier(8)

    def work(i):
        try:
            barrier.wait()
            x = xp.asarray(np.arange(5.0) * (i + 1), device=device)
            a = np.arange(5.0) * (i + 1)
            for s in range(steps):
                x, a = x * 0.5 + float(s), a * 0.5 + float(s)
                if not np.isclose(float(xp.sum(x * x)), float(np.sum(a * a)), rtol=1e-12):
                    errors.append(f"thread {i} step {s}")
                got = np.asarray(xp.sum(shared * float(i), axis=1))
                if not np.allclose(got, np.sum(shared_np * i, axis=1), rtol=1e-12):
                    errors.append(f"thread {i} step {s}: shared")
        except BaseException as e:
            errors.append(f"thread {i}: {type(e).__name__}: {e}")

    start = time.perf_counter()
    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {"mode": mode, "device": device, "steps": steps, "errors": len(errors),
            "first_error": errors[0] if errors else None,
            "seconds": time.perf_counter() - start, "peak_rss_mb": _peak_rss() / 2**20}


def child_programs(count: int) -> dict:
    """Compile `count` programs (compiled tier) and return their values."""
    import numpy as np
    import tlaloc as xp
    xp.config.update(execution="compiled")
    x = xp.asarray(np.arange(6.0) - 2.5)
    values = []
    start = time.perf_counter()
    for k in range(count):
        y = x
        for j in range(k % 7 + 1):       # a different chain per program
            y = xp.sin(y) * float(j + 1) if (k + j) % 2 else xp.exp(y * 0.1) - float(k)
        values.append(np.asarray(xp.sum(y * y) if k % 3 == 0 else y).tolist())
    return {"values": values, "info": xp.cache_info(), "seconds": time.perf_counter() - start,
            "peak_rss_mb": _peak_rss() / 2**20}


def _run_child(args, env=None, timeout=3600) -> dict:
    full_env = dict(os.environ)
    full_env.setdefault("TLALOC_CACHE_DIR", "")
    full_env.update(env or {})
    full_env.pop("TLALOC_EXECUTION", None)
    start = time.perf_counter()
    out = subprocess.run([sys.executable, str(HERE), "--child", *map(str, args)], env=full_env,
                         capture_output=True, text=True, timeout=timeout)
    if out.returncode != 0:
        return {"crashed": out.returncode, "stderr": out.stderr[-2000:],
                "process_seconds": time.perf_counter() - start}
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["process_seconds"] = time.perf_counter() - start
    return result


# ----------------------------------------------------------------------------- cases

def run_threads(steps):
    rows = []
    for mode, device in [("auto", "cpu"), ("compiled", "cpu"), ("interpreted", "cpu"),
                         ("auto", "interpreter")]:
        rows.append(_run_child(["threads", mode, device, steps]))
    return rows


LOOP_KINDS = ("read-cpu", "jit-read-cpu", "noread-cpu", "read-interpreter", "noread-interpreter")


def run_memory(steps, kinds=LOOP_KINDS):
    return [_run_child(["loop", kind, steps]) for kind in kinds]


def _garble(path, how, rng):
    data = path.read_bytes()
    if how == "empty":
        path.write_bytes(b"")
    elif how == "half":
        path.write_bytes(data[: len(data) // 2])
    elif how == "bit":
        i = rng.randrange(len(data))
        path.write_bytes(data[:i] + bytes([data[i] ^ 1 << rng.randrange(8)]) + data[i + 1:])
    elif how == "random":
        path.write_bytes(os.urandom(len(data)))


def run_cache(programs):
    rows = []
    rng = random.Random(23)
    root = pathlib.Path(tempfile.mkdtemp(prefix="tlaloc-stress-cache-"))
    try:
        env = {"TLALOC_CACHE_DIR": str(root)}
        cold = _run_child(["programs", programs], env)
        rows.append(dict(cold, case="cold: compile every program"))
        warm = _run_child(["programs", programs], env)
        rows.append(dict(warm, case="warm: load every program", same=warm.get("values") == cold["values"]))
        entries = sorted(root.rglob("*.bin"))
        for i, path in enumerate(entries):
            _garble(path, ("empty", "half", "bit", "random")[i % 4], rng)
        garbled = _run_child(["programs", programs], env)
        rows.append(dict(garbled, case="every entry garbled", same=garbled.get("values") == cold["values"]))
        blobs = [p.read_bytes() for p in entries]
        for path, blob in zip(entries, blobs[1:] + blobs[:1]):
            path.write_bytes(blob)
        moved = _run_child(["programs", programs], env)
        rows.append(dict(moved, case="every entry moved to another's name",
                         same=moved.get("values") == cold["values"]))
        shutil.rmtree(root)
        root.mkdir()
        start = time.perf_counter()
        procs = [subprocess.Popen([sys.executable, str(HERE), "--child", "programs", str(programs)],
                                  env=dict(os.environ, **env), stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for _ in range(2)]
        try:
            outs = [p.communicate(timeout=3600) for p in procs]
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                p.wait()
        both = time.perf_counter() - start
        results = [json.loads(o.strip().splitlines()[-1]) if p.returncode == 0 else
                   {"crashed": p.returncode, "stderr": e[-2000:]} for p, (o, e) in zip(procs, outs)]
        for r in results:
            rows.append(dict(r, case="two processes at once", process_seconds=both,
                             same=r.get("values") == cold["values"]))
        after = _run_child(["programs", programs], env)
        rows.append(dict(after, case="after the two", same=after.get("values") == cold["values"]))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    for r in rows:
        r.pop("values", None)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1_000_000, help="loop steps (memory)")
    parser.add_argument("--thread-steps", type=int, default=500)
    parser.add_argument("--programs", type=int, default=40, help="programs (disk cache)")
    parser.add_argument("--only", choices=["threads", "memory", "cache"])
    parser.add_argument("--loops", default=",".join(LOOP_KINDS),
                        help="comma-separated loop kinds (memory): " + ", ".join(LOOP_KINDS))
    parser.add_argument("--child", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    if args.child:
        kind, *rest = args.child
        if kind == "loop":
            result = child_loop(rest[0], int(rest[1]))
        elif kind == "threads":
            result = child_threads(rest[0], rest[1], int(rest[2]))
        else:
            result = child_programs(int(rest[0]))
        print(json.dumps(result))
        return
    import tlaloc
    print(f"# tlaloc from {pathlib.Path(tlaloc.__file__).parent}", flush=True)
    cases = {"threads": lambda: run_threads(args.thread_steps),
             "memory": lambda: run_memory(args.steps, args.loops.split(",")),
             "cache": lambda: run_cache(args.programs)}
    for name, case in cases.items():
        if args.only in (None, name):
            for row in case():
                print(json.dumps({"case": name, **row}), flush=True)


if __name__ == "__main__":
    main()
