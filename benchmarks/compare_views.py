"""Writes through views, tlaloc beside NumPy in one process: the workloads of
benchmarks/bench_views.py, from the same inputs to values on the host, repetitions
interleaved (NumPy, tlaloc, tlaloc.jit in turn), medians and their ratios to NumPy.

    python benchmarks/compare_views.py [--quick]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_views as bv  # noqa: E402
import tlaloc as xp  # noqa: E402


def _seconds(run, args):
    start = time.perf_counter()
    np.asarray(run(*args))
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    repeats = 5 if parser.parse_args().quick else 21
    xp.config.update(execution="compiled")
    runs = {
        "numpy": lambda name: (lambda *a: bv.WORKLOADS[name](np, *a)),
        "tlaloc": lambda name: (lambda *a: bv.WORKLOADS[name](xp, *a)),
        "tlaloc.jit": lambda name: (lambda *a: (bv.jit_covariances(*a), a[0])[1])
        if name == "covariances" else None,
    }
    print("| workload | numpy | tlaloc | tlaloc.jit | tlaloc/NumPy | tlaloc.jit/NumPy |")
    print("|---|---|---|---|---|---|")
    for name in bv.WORKLOADS:
        times = {lib: [] for lib in runs if runs[lib](name) is not None}
        for lib in times:   # first use: compiles
            _seconds(runs[lib](name), bv.arguments(xp if lib != "numpy" else np, name))
        for _ in range(repeats):
            for lib in times:
                m = np if lib == "numpy" else xp
                times[lib].append(_seconds(runs[lib](name), bv.arguments(m, name)))
        med = {lib: statistics.median(t) * 1e3 for lib, t in times.items()}
        base = med["numpy"]
        jit = med.get("tlaloc.jit")
        jit_time, jit_ratio = (f"{jit:.2f} ms", f"{jit / base:.1f}") if jit else ("—", "—")
        print(f"| {name} | {base:.3f} ms | {med['tlaloc']:.2f} ms | {jit_time} | "
              f"{med['tlaloc'] / base:.0f} | {jit_ratio} |")


if __name__ == "__main__":
    main()
