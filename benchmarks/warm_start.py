"""Cold against warm start of a fresh process: what the persistent compile cache saves.

    python benchmarks/warm_start.py            # 5 cold and 5 warm processes per library
    python benchmarks/warm_start.py --reps 2

Each process imports the library, then runs one workload that compiles eight programs
(the 10-op chain on three shapes, the ~100-op `mid_program` on two, the MLP loss and its
gradient, and a jitted SGD step), waiting for every result. tlaloc runs with execution
"compiled", so every program goes to XLA (or to the disk cache). A cold process starts
from an empty cache directory; a warm one from the directory a previous process filled.
jax.jit, where installed, runs the same workload with its own persistent compilation cache
(`jax_compilation_cache_dir`, every entry cached). Reported: the median wall time of the
workload (after imports), of the whole process (interpreter start and imports included),
and the compiles and disk hits tlaloc counted.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def _workload(lib):
    """Run the workload once in this process; returns what the parent reports."""
    sys.path.insert(0, HERE)
    if lib == "tlaloc":
        import tlaloc as xp
        xp.config.update(execution="compiled")
        jit, grad = xp.jit, xp.grad

        def wait(a):
            xp.eval(a)
    else:
        import jax
        import jax.numpy as xp
        jit, grad = jax.jit, jax.grad

        def wait(a):
            a.block_until_ready()
    import _workloads as wl
    started = time.perf_counter()

    for n in (1_000, 10_000, 100_000):
        x = xp.asarray(wl.host_f32((n,), 1))
        wait(jit(lambda v: wl.chain10(xp, v))(x))
    for shape in ((32, 48), (64, 64)):
        x = xp.asarray(wl.host_f32(shape, 2))
        wait(jit(lambda v: wl.mid_program(xp, v))(x))
    params, X, Y = wl.mlp_host_data()
    params = tuple(xp.asarray(p) for p in params)
    X, Y = xp.asarray(X), xp.asarray(Y)
    loss = jit(lambda p, a, b: wl.mlp_loss(xp, p, a, b))
    wait(loss(params, X, Y))
    g = jit(grad(lambda p, a, b: wl.mlp_loss(xp, p, a, b)))
    for gi in g(params, X, Y):
        wait(gi)

    @jit
    def step(p, a, b):
        gs = grad(lambda q: wl.mlp_loss(xp, q, a, b))(p)
        return tuple(pi - 0.01 * gi for pi, gi in zip(p, gs))
    for pi in step(params, X, Y):
        wait(pi)
    report = {"workload_s": time.perf_counter() - started}
    if lib == "tlaloc":
        info = xp.cache_info()
        report.update(compiles=info["compiles"], disk_hits=info["disk_hits"])
    return report


def _child(lib, cache_dir):
    if lib == "tlaloc":
        os.environ["TLALOC_CACHE_DIR"] = cache_dir
    else:
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
        import jax
        jax.config.update("jax_compilation_cache_dir", cache_dir)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    print(json.dumps(_workload(lib)))


def _run(lib, cache_dir):
    t = time.perf_counter()
    out = subprocess.run([sys.executable, __file__, "--child", lib, cache_dir],
                         capture_output=True, text=True, check=True)
    report = json.loads(out.stdout.strip().splitlines()[-1])
    report["process_s"] = time.perf_counter() - t
    return report


def _available(lib):
    if lib == "tlaloc":
        return True
    try:
        import jax  # noqa: F401
    except ImportError:
        return False
    return True


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--child", nargs=2, metavar=("LIB", "CACHE_DIR"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(*args.child)
        return
    rows = []
    for lib in ("tlaloc", "jax.jit"):
        if not _available(lib):
            print(f"{lib}: not installed, skipped", file=sys.stderr)
            continue
        name = "tlaloc" if lib == "tlaloc" else "jax"
        cold, warm = [], []
        for _ in range(args.reps):   # interleaved: a cold process, then a warm one
            with tempfile.TemporaryDirectory() as d:
                cold.append(_run(name, d))
                warm.append(_run(name, d))
        rows.append((lib, cold, warm))

    def med(runs, k):
        return statistics.median(r[k] for r in runs)
    print("| library | workload cold | workload warm | warm/cold | process cold | process warm "
          "| warm/cold | compiles cold / warm | disk hits warm |")
    print("|---|---|---|---|---|---|---|---|---|")
    for lib, cold, warm in rows:
        c, w = med(cold, "workload_s"), med(warm, "workload_s")
        pc, pw = med(cold, "process_s"), med(warm, "process_s")
        counts = (f"{cold[0].get('compiles', '—')} / {warm[0].get('compiles', '—')}",
                  str(warm[0].get("disk_hits", "—")))
        print(f"| {lib} | {c * 1e3:.0f} ms | {w * 1e3:.0f} ms | {w / c:.2f} | {pc * 1e3:.0f} ms "
              f"| {pw * 1e3:.0f} ms | {pw / pc:.2f} | {counts[0]} | {counts[1]} |")
    print(f"\nMedians of {args.reps} cold and {args.reps} warm processes each, "
          f"{time.strftime('%Y-%m-%d %H:%M')}.")


if __name__ == "__main__":
    main()
