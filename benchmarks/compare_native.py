"""The compiled recording path against the pure-Python reference (docs/native.md): per-op
recording cost of a few operations and of the 200-op chain of `compare.py --only record`,
each measured in fresh processes, compiled and `TLALOC_PURE_PYTHON=1` alternating, with
NumPy's cost for the same calls measured in each process (ratios of one process).

    python benchmarks/compare_native.py [--rounds 5]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

_CHILD = r"""
import json, sys, time
import numpy as np
sys.path.insert(0, HERE)
import tlaloc as xp
from _workloads import record_chain

xp.config.update(max_pending=10 ** 9)       # record only: nothing is computed


def best_us(f, calls, repeats=15):
    best = float("inf")
    for _ in range(repeats):
        t = time.thread_time()
        for _ in range(calls):
            f()
        best = min(best, (time.thread_time() - t) / calls)
    return best * 1e6


def row(lib, x, y, col, grid):
    return {
        "x + y": lambda: x + y,
        "x * 0.5": lambda: x * 0.5,
        "sin(x)": lambda: lib.sin(x),
        "x + column (broadcast)": lambda: x + col,
        "sum(grid, axis=0)": lambda: lib.sum(grid, axis=0),
        "grid[1:-1, ::2]": lambda: grid[1:-1, ::2],
        "200-op chain, per op": lambda: record_chain(lib, x, y, 200),
    }


out = {}
for lib, make in (("tlaloc", xp.asarray), ("numpy", np.asarray)):
    x, y = make(np.ones(4)), make(np.ones(4))
    col = make(np.ones((3, 1)))
    grid = make(np.ones((16, 16)))
    for name, f in row(xp if lib == "tlaloc" else np, x, y, col, grid).items():
        chain = name.startswith("200")
        out.setdefault(name, {})[lib] = best_us(f, 50 if chain else 5000) / (200 if chain else 1)
out["_native"] = len(xp.native_modules())
print(json.dumps(out))
"""


def measure(pure: bool) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "TLALOC_PURE_PYTHON"}
    if pure:
        env["TLALOC_PURE_PYTHON"] = "1"
    code = f"HERE = {HERE!r}\n" + _CHILD
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5, help="process pairs (default 5)")
    args = ap.parse_args(argv)
    runs = {"compiled": [], "pure": []}
    for _ in range(args.rounds):
        runs["compiled"].append(measure(False))
        runs["pure"].append(measure(True))
    if runs["compiled"][0]["_native"] == 0:
        print("no compiled modules were imported: build them with `pip install -e .`")
    print("| recording, per op | compiled µs | pure Python µs | compiled / pure "
          "| compiled / NumPy | pure / NumPy |")
    print("|---|---|---|---|---|---|")
    for name in runs["compiled"][0]:
        if name.startswith("_"):
            continue
        c = statistics.median(r[name]["tlaloc"] for r in runs["compiled"])
        p = statistics.median(r[name]["tlaloc"] for r in runs["pure"])
        cn = statistics.median(r[name]["tlaloc"] / r[name]["numpy"] for r in runs["compiled"])
        pn = statistics.median(r[name]["tlaloc"] / r[name]["numpy"] for r in runs["pure"])
        print(f"| {name} | {c:.2f} | {p:.2f} | {c / p:.2f} | {cn:.1f} | {pn:.1f} |")
    print(f"(medians of {args.rounds} fresh processes each, alternating; "
          f"{runs['compiled'][0]['_native']} modules compiled)")


if __name__ == "__main__":
    main()
