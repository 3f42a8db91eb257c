"""Dynamic axes against one compile per size and against jax.jit with hand padding, in one
process: 200 batches of random sizes in [1, 64] through the training-step gradient of
benchmarks/bench_dynamic.py.

    python benchmarks/compare_dynamic.py            # 200 batches
    python benchmarks/compare_dynamic.py --quick    # 60 batches

Versions (each a fresh function, so the loop pays its compiles; the disk cache is off):

  * tlaloc dynamic: tlaloc.jit(step, dynamic={"batch": (1, 64)}), config execution "compiled";
  * tlaloc static: tlaloc.jit(step), one compile per distinct size;
  * jax padded: jax.jit of the same gradient written with a mask and the true count as
    arguments, the batch padded by hand (NumPy) to the same power-of-two buckets;
  * jax static: jax.jit(step), one compile per distinct size.

The table shows each loop's total seconds, its compiles (tlaloc: compile_log records; jax:
traces of the function), and the steady state (a second pass over the same batches, every
program compiled), with ratios to tlaloc dynamic. Every version's gradients are checked
against NumPy-free tlaloc eager ones on a few batches. docs/dynamic-shapes.md has a
recorded run.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time

os.environ.setdefault("TLALOC_CACHE_DIR", "")      # compiles are part of what is measured
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_dynamic as bd  # noqa: E402

import tlaloc as xp  # noqa: E402

now = time.perf_counter


def bucket(n):
    b = 1
    while b < n:
        b *= 2
    return min(b, bd.HIGH)


def tlaloc_versions(p):
    dynamic = xp.jit(bd.step, dynamic={"batch": (bd.LOW, bd.HIGH)})
    static = xp.jit(bd.step)
    return {"tlaloc dynamic": (lambda data: bd.run(dynamic, p, data), lambda: bd.compiles_of("step")),
            "tlaloc static": (lambda data: bd.run(static, p, data), lambda: bd.compiles_of("step"))}


def jax_versions(p_np):
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return {}
    traces = {"padded": 0, "static": 0}
    p = {k: jnp.asarray(v) for k, v in p_np.items()}

    def masked_loss(p, x, y, mask, n):
        return jnp.sum(bd.per_example_loss(jnp, p, x, y) * mask) / n

    def padded_step(p, x, y, mask, n):
        traces["padded"] += 1
        return jax.grad(masked_loss)(p, x, y, mask, n)

    def static_step(p, x, y):
        traces["static"] += 1
        return jax.grad(lambda p, x, y: jnp.mean(bd.per_example_loss(jnp, p, x, y)))(p, x, y)

    padded_jit, static_jit = jax.jit(padded_step), jax.jit(static_step)

    def run_padded(data):
        for x, y in data:
            n = x.shape[0]
            b = bucket(n)
            xb = np.zeros((b,) + x.shape[1:], np.float32)
            xb[:n] = x
            yb = np.zeros((b,) + y.shape[1:], np.float32)
            yb[:n] = y
            mask = (np.arange(b) < n).astype(np.float32)
            g = jax.block_until_ready(padded_jit(p, xb, yb, mask, np.float32(n)))
        return g

    def run_static(data):
        for x, y in data:
            g = jax.block_until_ready(static_jit(p, x, y))
        return g

    return {"jax padded": (run_padded, lambda: traces["padded"]),
            "jax static": (run_static, lambda: traces["static"])}


def check(versions, p, data):
    """Every version's gradient of a few batches against tlaloc's eager gradient."""
    for x, y in data[:3]:
        want = bd.step(p, xp.asarray(x, names=("batch", None)), xp.asarray(y, names=("batch", None)))
        for name, (run, _) in versions.items():
            got = run([(x, y)])
            for k in want:
                np.testing.assert_allclose(np.asarray(got[k]), np.asarray(want[k]), rtol=2e-4,
                                           atol=2e-6, err_msg=f"{name} {k}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="60 batches")
    args = ap.parse_args(argv)
    xp.config.update(execution="compiled")
    rng = np.random.default_rng(0)
    p_np = bd.params(rng)
    data = bd.batches(rng, 60 if args.quick else bd.BATCHES)
    p = {k: xp.asarray(v) for k, v in p_np.items()}
    versions = {**tlaloc_versions(p), **jax_versions(p_np)}
    rows = {}
    for name, (run, compiles) in versions.items():
        before = compiles()
        t = now()
        run(data)
        total = now() - t
        count = compiles() - before
        t = now()
        run(data)
        rows[name] = (total, count, now() - t)
    check(versions, p, data)
    sizes = len({x.shape[0] for x, _ in data})
    print(f"{len(data)} batches, {sizes} distinct sizes in [{bd.LOW}, {bd.HIGH}]; "
          f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    base = rows["tlaloc dynamic"]
    print(f"{'version':16s} {'first pass s':>12s} {'compiles':>9s} {'steady s':>9s} "
          f"{'first/dyn':>10s} {'steady/dyn':>11s}")
    for name, (total, count, steady) in rows.items():
        print(f"{name:16s} {total:12.3f} {count:9d} {steady:9.3f} {total / base[0]:10.2f} "
              f"{steady / base[2]:11.2f}")


if __name__ == "__main__":
    main()
