"""tlaloc.numpy beside NumPy and jax.numpy on the same calls, in one process: einsum
(contractions, a batched product, a trace), median, and a pickle round trip.

    python benchmarks/compare_numpy_namespace.py            # 15 interleaved repetitions
    python benchmarks/compare_numpy_namespace.py --quick    # 5

tlaloc runs with config execution "compiled" (compiled in the warm-up), eagerly and through
tlaloc.jit; jax through jax.jit. Timings wait for the values (tlaloc.eval; jax:
block_until_ready). Repetitions are interleaved (each runs every library once, in a rotating
order) and the table shows the median (benchmarks/compare_random.py's `measure`). jax is
skipped when it is not installed; tlaloc never imports it. docs/numpy-namespace.md has a
recorded run.
"""
from __future__ import annotations

import argparse
import os
import pickle
import platform
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_random import print_table  # noqa: E402


def _jax():
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    try:
        import jax
        import jax.numpy as jnp
        return jax, jnp
    except ImportError:
        return None, None


def workloads(n):
    """{workload: {library: fn}}; each fn computes once and waits for the values."""
    import tlaloc as xp
    import tlaloc.numpy as tnp
    xp.config.update(execution="compiled")
    jax, jnp = _jax()
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    ba, bb = rng.standard_normal((32, n // 4, n // 4)), rng.standard_normal((32, n // 4, n // 4))
    big = rng.standard_normal(n * n * 4)
    calls = {
        f"einsum ij,jk->ik ({n}x{n})": ("ij,jk->ik", a, b),
        f"einsum bij,bjk->bik (32x{n // 4}x{n // 4})": ("bij,bjk->bik", ba, bb),
        f"einsum ii-> ({n}x{n})": ("ii->", a),
        f"einsum ij,ij->i ({n}x{n})": ("ij,ij->i", a, b),
    }
    out = {}
    for name, (subscripts, *ops) in calls.items():
        t_ops = [xp.asarray(o) for o in ops]
        xp.eval(*t_ops)
        jitted = xp.jit(lambda *o, s=subscripts: tnp.einsum(s, *o))
        fns = {"tlaloc": lambda s=subscripts, o=t_ops: xp.eval(tnp.einsum(s, *o)),
               "tlaloc.jit": lambda f=jitted, o=t_ops: xp.eval(f(*o)),
               "numpy": lambda s=subscripts, o=ops: np.einsum(s, *o, optimize=True)}
        if jax is not None:
            j_ops = [jnp.asarray(o) for o in ops]
            jf = jax.jit(lambda *o, s=subscripts: jnp.einsum(s, *o))
            fns["jax"] = lambda f=jf, o=j_ops: f(*o).block_until_ready()
        out[name] = fns
    t_big = xp.asarray(big)
    xp.eval(t_big)
    med = xp.jit(tnp.median)
    out[f"median of {big.size:.0e}"] = {
        "tlaloc": lambda: xp.eval(tnp.median(t_big)), "tlaloc.jit": lambda: xp.eval(med(t_big)),
        "numpy": lambda: np.median(big)}
    out[f"pickle round trip of {big.size:.0e} float64"] = {
        "tlaloc": lambda: xp.eval(pickle.loads(pickle.dumps(t_big))),
        "numpy": lambda: pickle.loads(pickle.dumps(big))}
    if jax is not None:
        j_big = jnp.asarray(big)
        jm = jax.jit(jnp.median)
        out[f"median of {big.size:.0e}"]["jax"] = lambda: jm(j_big).block_until_ready()
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    ap.add_argument("--n", type=int, default=256, help="matrix side (default 256)")
    args = ap.parse_args(argv)
    reps = 5 if args.quick else 15
    import jaxlib
    import tlaloc
    jax, _ = _jax()
    versions = {"tlaloc": tlaloc.__version__, "numpy": np.__version__, "jaxlib": jaxlib.__version__}
    if jax is not None:
        versions["jax"] = jax.__version__
    print(f"# {platform.machine()} {platform.processor() or platform.system()}, "
          f"{os.cpu_count()} CPUs; " + ", ".join(f"{k} {v}" for k, v in versions.items()))
    cols = ["tlaloc", "tlaloc.jit", "numpy"] + (["jax"] if jax is not None else [])
    print_table(workloads(args.n), cols, reps, ms_digits=2)


if __name__ == "__main__":
    main()
