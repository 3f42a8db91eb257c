"""tlaloc's fori_loop and scan beside jax.lax's, in one process; and the compile time of a
fori_loop against the same loop unrolled in Python.

    python benchmarks/compare_control_flow.py            # every workload, full repetitions
    python benchmarks/compare_control_flow.py --quick    # fewer repetitions

Run time: the workloads of benchmarks/bench_control_flow.py under tlaloc.jit (config
execution "compiled") and jax.jit, timings waiting for the values (tlaloc.eval;
jax: block_until_ready). Repetitions are interleaved and the table shows the median, and in
parentheses the ratio of the fastest runs, which a shared machine's load disturbs least.
The issue's goal: tlaloc / jax within 1.1x. jax is skipped when it is not installed.

Compile time: XLA's compile seconds (tlaloc.cache_info) of a jitted loop of 10 to 10,000
elementwise steps, written with fori_loop and unrolled in Python (goal: constant in the trip
count for fori_loop). docs/control-flow.md has a recorded run.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import types

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_control_flow as bc  # noqa: E402
from compare_vmap import measure  # noqa: E402  (interleaved repetitions: median, fastest)

def jax_workload(name):
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    loops = types.SimpleNamespace(fori_loop=jax.lax.fori_loop, scan=jax.lax.scan, grad=jax.grad)
    args, f = bc.WORKLOADS[name](jnp, loops, np.random.default_rng(0))
    args = [jnp.asarray(a) for a in args]
    jitted = jax.jit(f)
    return lambda: jax.block_until_ready(jitted(*args))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = ap.parse_args(argv)
    import jaxlib
    import tlaloc
    tlaloc.config.update(execution="compiled", compile_cache_dir="")
    reps = 7 if args.quick else 31
    print(f"# {platform.machine()} {platform.processor() or platform.system()}, "
          f"{os.cpu_count()} CPUs; tlaloc {tlaloc.__version__}, jaxlib {jaxlib.__version__}")
    print("| workload | tlaloc | jax | tlaloc / jax |")
    print("|---|---|---|---|")
    for name in bc.WORKLOADS:
        fns = {"tlaloc": bc.tlaloc_workload(name)}
        theirs = jax_workload(name)
        if theirs is not None:
            fns["jax"] = theirs
        t, fastest = measure(fns, reps, loop_reps=0)
        vs = f"{t['tlaloc'] / t['jax']:.2f}x ({fastest['tlaloc'] / fastest['jax']:.2f}x)" \
            if "jax" in t else "-"
        jx = f"{t['jax'] * 1e3:.3f} ms" if "jax" in t else "-"
        print(f"| {name} | {t['tlaloc'] * 1e3:.3f} ms | {jx} | {vs} |")
    print()
    print("| steps | fori_loop compile | unrolled compile |")
    print("|---|---|---|")
    sizes = iter(range(3000, 10 ** 9))
    for steps in (10, 100, 1000, 10000):
        loop = bc.compile_seconds(steps, False, size=next(sizes))
        unrolled = "-" if steps > 1000 or args.quick and steps > 100 else \
            f"{bc.compile_seconds(steps, True, size=next(sizes)):.3f} s"
        print(f"| {steps} | {loop:.3f} s | {unrolled} |")


if __name__ == "__main__":
    main()
