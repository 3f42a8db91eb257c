"""tlaloc.random beside NumPy's default_rng() and jax.random, in one process.

    python benchmarks/compare_random.py            # 1e7 normals and uniforms, 1e6 permutation
    python benchmarks/compare_random.py --quick    # fewer repetitions

Each library draws the same amount from one key or generator: float32 standard normals and
uniforms in [0, 1), and a permutation of range(n). tlaloc runs with config execution
"compiled" (the program is compiled in the warm-up), eagerly and through tlaloc.jit; jax
through jax.jit (jax.random's eager functions are jitted internally too). Timings wait for
the values (tlaloc.eval; jax: block_until_ready). Repetitions are interleaved (each runs
every library once, in a rotating order) and the table shows the median. jax is skipped when
it is not installed; tlaloc never imports it. docs/random.md has a recorded run.
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

import numpy as np

now = time.perf_counter


def _libraries():
    import tlaloc
    libs = {"tlaloc": tlaloc, "numpy": np}
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    try:
        import jax
        libs["jax"] = jax
    except ImportError:
        pass
    return libs


def workloads(libs, n_float, n_perm):
    """{workload: {library: fn}}; each fn draws once and waits for the values."""
    xp = libs["tlaloc"]
    xp.config.update(execution="compiled")
    key = xp.random.key(0)
    xp.eval(key)
    rng = np.random.default_rng(0)
    out = {}

    def tl(draw):
        return lambda: xp.eval(draw(key))

    def tl_jit(draw):
        f = xp.jit(draw)
        return lambda: xp.eval(f(key))

    normal = lambda k: xp.random.normal(k, (n_float,), dtype=xp.float32)  # noqa: E731
    uniform = lambda k: xp.random.uniform(k, shape=(n_float,), dtype=xp.float32)  # noqa: E731
    perm = lambda k: xp.random.permutation(k, n_perm)  # noqa: E731
    out[f"normal float32 x {n_float:.0e}"] = {
        "tlaloc": tl(normal), "tlaloc.jit": tl_jit(normal),
        "numpy": lambda: rng.standard_normal(n_float, dtype=np.float32)}
    out[f"uniform float32 x {n_float:.0e}"] = {
        "tlaloc": tl(uniform), "tlaloc.jit": tl_jit(uniform),
        "numpy": lambda: rng.random(n_float, dtype=np.float32)}
    out[f"permutation of {n_perm:.0e}"] = {
        "tlaloc": tl(perm), "tlaloc.jit": tl_jit(perm),
        "numpy": lambda: rng.permutation(n_perm)}
    jax = libs.get("jax")
    if jax is not None:
        jk = jax.random.key(0)
        jn = jax.jit(lambda k: jax.random.normal(k, (n_float,), dtype="float32"))
        ju = jax.jit(lambda k: jax.random.uniform(k, (n_float,), dtype="float32"))
        jp = jax.jit(lambda k: jax.random.permutation(k, n_perm))
        names = list(out)
        out[names[0]]["jax"] = lambda: jn(jk).block_until_ready()
        out[names[1]]["jax"] = lambda: ju(jk).block_until_ready()
        out[names[2]]["jax"] = lambda: jp(jk).block_until_ready()
    return out


def measure(fns, reps):
    """Median seconds per library over interleaved repetitions (after two warm-up calls)."""
    for fn in fns.values():
        fn()
        fn()
    names = list(fns)
    times = {k: [] for k in names}
    for r in range(reps):
        order = names[r % len(names):] + names[:r % len(names)]
        for k in order:
            t = now()
            fns[k]()
            times[k].append(now() - t)
    return {k: statistics.median(v) for k, v in times.items()}


def print_table(workloads, cols, reps, ms_digits=1):
    """One markdown row per workload: each library's median time and the faster tlaloc
    column's ratio to NumPy and to jax (measured interleaved, `measure`)."""
    print(f"| workload | {' | '.join(cols)} | tlaloc / numpy | tlaloc / jax |")
    print("|---" * (len(cols) + 3) + "|")
    for name, fns in workloads.items():
        t = measure(fns, reps)
        cells = [f"{t[c] * 1e3:.{ms_digits}f} ms" if c in t else "-" for c in cols]
        best = min(t[c] for c in ("tlaloc", "tlaloc.jit") if c in t)
        vs_np = f"{best / t['numpy']:.2f}x"
        vs_jax = f"{best / t['jax']:.2f}x" if "jax" in t else "-"
        print(f"| {name} | {' | '.join(cells)} | {vs_np} | {vs_jax} |")
    print("(ratios: the faster tlaloc column over the other library; below 1 is faster)")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    ap.add_argument("--n", type=float, default=1e7, help="floats per draw (default 1e7)")
    ap.add_argument("--perm", type=float, default=1e6, help="permutation size (default 1e6)")
    args = ap.parse_args(argv)
    libs = _libraries()
    reps = 5 if args.quick else 15
    import jaxlib
    versions = {"tlaloc": libs["tlaloc"].__version__, "numpy": np.__version__,
                "jaxlib": jaxlib.__version__}
    if "jax" in libs:
        versions["jax"] = libs["jax"].__version__
    print(f"# {platform.machine()} {platform.processor() or platform.system()}, "
          f"{os.cpu_count()} CPUs; " + ", ".join(f"{k} {v}" for k, v in versions.items()))
    cols = ["tlaloc", "tlaloc.jit", "numpy"] + (["jax"] if "jax" in libs else [])
    print_table(workloads(libs, int(args.n), int(args.perm)), cols, reps)


if __name__ == "__main__":
    main()
