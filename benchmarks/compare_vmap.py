"""tlaloc.vmap beside the hand-vectorised function, the Python loop, and jax.vmap, in one
process.

    python benchmarks/compare_vmap.py            # every workload of benchmarks/bench_vmap.py
    python benchmarks/compare_vmap.py --quick    # fewer repetitions

Every version runs under its library's jit (tlaloc.jit with config execution "compiled",
jax.jit): `vmap` batches the per-example function, `hand` is the same computation written for
the batch, `loop` calls the jitted per-example function once per example and stacks the
results. Timings wait for the values (tlaloc.eval; jax: block_until_ready). Repetitions are
interleaved (each runs every version once, in a shuffled order) and the table shows the
median; the ratios (of medians, and in parentheses of the fastest runs, which a shared
machine's load disturbs least) are the ones the issue sets goals for: vmap / hand and tlaloc
vmap / jax vmap within 1.1x. jax is skipped when it is not installed. docs/vmap.md has a
recorded run.
"""
from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import time
import types

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_vmap as bv  # noqa: E402

now = time.perf_counter


def jax_variants(name):
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return {}
    jax.config.update("jax_enable_x64", True)
    ad = types.SimpleNamespace(grad=jax.grad, stop_gradient=jax.lax.stop_gradient)
    args, one, in_axes, hand = bv.WORKLOADS[name](jnp, ad, np.random.default_rng(0), bv.SIZES[name])
    args = jax.tree_util.tree_map(jnp.asarray, args)
    vmapped = jax.jit(jax.vmap(one, in_axes=in_axes))
    by_hand = jax.jit(hand)
    return {"jax vmap": lambda: jax.block_until_ready(vmapped(*args)),
            "jax hand": lambda: jax.block_until_ready(by_hand(*args))}


def measure(fns, reps, loop_reps):
    """(median, fastest) seconds per version over interleaved repetitions (after two
    warm-up calls); the loop, far slower, runs in the first `loop_reps` repetitions only."""
    for fn in fns.values():
        fn()
        fn()
    names = list(fns)
    times = {k: [] for k in names}
    shuffle = random.Random(0).shuffle
    for r in range(reps):
        # a new order each repetition: a version timed right after jax (whose threads may
        # still be spinning) in a rotation would always follow the same one
        order = list(names)
        shuffle(order)
        for k in order:
            if k == "loop" and r >= loop_reps:
                continue
            t = now()
            fns[k]()
            times[k].append(now() - t)
    return ({k: statistics.median(v) for k, v in times.items()},
            {k: min(v) for k, v in times.items()})


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    ap.add_argument("--only", default=None, help="comma-separated workloads")
    args = ap.parse_args(argv)
    import jaxlib
    import tlaloc
    tlaloc.config.update(execution="compiled")
    reps = 7 if args.quick else 31
    print(f"# {platform.machine()} {platform.processor() or platform.system()}, "
          f"{os.cpu_count()} CPUs; tlaloc {tlaloc.__version__}, jaxlib {jaxlib.__version__}")
    cols = ["vmap", "hand", "loop", "jax vmap", "jax hand"]
    print(f"| workload (batch) | {' | '.join(cols)} | vmap / hand | vmap / jax vmap | loop / vmap |")
    print("|---" * (len(cols) + 4) + "|")
    names = args.only.split(",") if args.only else list(bv.WORKLOADS)
    for name in names:
        fns = dict(bv.tlaloc_variants(name))
        fns.update(jax_variants(name))
        t, fastest = measure(fns, reps, loop_reps=3 if args.quick else 5)
        cells = [f"{t[c] * 1e3:.2f} ms" if c in t else "-" for c in cols]
        ratio = lambda a, b: f"{t[a] / t[b]:.2f}x ({fastest[a] / fastest[b]:.2f}x)"  # noqa: E731
        vs_jax = ratio("vmap", "jax vmap") if "jax vmap" in t else "-"
        print(f"| {name} ({bv.SIZES[name]}) | {' | '.join(cells)} | {ratio('vmap', 'hand')} "
              f"| {vs_jax} | {t['loop'] / t['vmap']:.0f}x |")


if __name__ == "__main__":
    main()
