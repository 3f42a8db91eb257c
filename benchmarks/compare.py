"""tlaloc beside NumPy, JAX (jax.jit and eager) and PyTorch, on the same workloads, in one
process.

    python benchmarks/compare.py            # the full run (a few minutes on 2 cores)
    python benchmarks/compare.py --quick    # fewer repetitions and iterations
    python benchmarks/compare.py --only hot,oneshot

Libraries that are not installed (jax, torch) are skipped; tlaloc never depends on them.
Repetitions are interleaved: each repetition runs every library once, in an order that
rotates, so slow drifts of a shared machine hit every library alike. The table shows the
median over repetitions. tlaloc runs with config execution "compiled" where the workload is
steady-state execution, and in the default tiered mode ("auto") for the one-shot workload.
Timings of tlaloc and jax wait for the values (`tlaloc.eval` waits; jax: `block_until_ready`).

The workloads are those of the asv benchmarks (benchmarks/_workloads.py); docs/benchmarks.md
has a recorded run.
"""
from __future__ import annotations

import argparse
import datetime
import functools
import gc
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np

try:
    from . import _workloads as wl
except ImportError:  # run as a script
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import _workloads as wl

LIBS = ("tlaloc", "tlaloc.jit", "numpy", "jax.jit", "jax", "torch")
now = time.perf_counter


# ----------------------------------------------------------------------------- libraries

class Libs:
    """The libraries this process can run; None for those that are not installed."""

    def __init__(self):
        import tlaloc
        self.tlaloc = tlaloc
        self.jax = self.jnp = None
        self.torch = self.tns = None
        self.missing = {}
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
        try:
            import jax
            import jax.numpy as jnp
            self.jax, self.jnp = jax, jnp
        except ImportError as e:
            self.missing["jax"] = str(e)
        try:
            import torch
            self.torch, self.tns = torch, wl.torch_namespace()
        except ImportError as e:
            self.missing["torch"] = str(e)

    def available(self, lib):
        if lib.startswith("jax"):
            return self.jax is not None
        if lib == "torch":
            return self.torch is not None
        return True

    def versions(self):
        v = {"tlaloc": self.tlaloc.__version__, "numpy": np.__version__}
        import jaxlib
        v["jaxlib"] = jaxlib.__version__
        if self.jax is not None:
            v["jax"] = self.jax.__version__
        if self.torch is not None:
            v["torch"] = self.torch.__version__
        return v

    def compiled(self):
        self.tlaloc.config.update(execution="compiled")

    def auto(self):
        self.tlaloc.config.update(execution="auto")


def _tl_block(a):
    return wl.block(a)


def _jax_block(a):
    return a.block_until_ready()


def _jax_block_all(tree):
    for a in tree:
        a.block_until_ready()
    return tree


# ----------------------------------------------------------------------------- timing

def _per(n, fn):
    """A runner that calls fn() n times and returns seconds per call."""
    def run():
        t = now()
        for _ in range(n):
            fn()
        return (now() - t) / n
    return run


# Each workload: (key, row label, unit, (reps, quick reps), prepare(L, lib, quick) -> runner
# or None[, libraries skipped]). A runner returns the measured seconds of one repetition
# (its optional attribute max_reps caps its repetitions); prepare warms up.

def prep_record(L, lib, q):
    n_ops = 200
    inner = 3 if q else 10
    x_np, w_np = wl.host_f32((4,), 1), wl.host_f32((4,), 2)
    if lib == "tlaloc":
        xp = L.tlaloc
        x, w = wl.device_array(x_np), wl.device_array(w_np)

        def one():
            wl.record_chain(xp, x, w, n_ops)  # recorded, never evaluated
    elif lib == "numpy":
        def one():
            wl.record_chain(np, x_np, w_np, n_ops)
    elif lib == "jax":
        x, w = L.jnp.asarray(x_np), L.jnp.asarray(w_np)

        def one():
            wl.record_chain(L.jnp, x, w, n_ops).block_until_ready()
    elif lib == "jax.jit":   # the tracing cost of jax.jit (a fresh function: no trace cache)
        x, w = L.jnp.asarray(x_np), L.jnp.asarray(w_np)

        def one():
            L.jax.make_jaxpr(lambda x, w: wl.record_chain(L.jnp, x, w, n_ops))(x, w)
    elif lib == "torch":
        x, w = L.torch.from_numpy(x_np), L.torch.from_numpy(w_np)

        def one():
            wl.record_chain(L.tns, x, w, n_ops)
    else:
        return None
    one()
    per_call = _per(inner, one)
    return lambda: per_call() / n_ops


def prep_small(L, lib, q):
    n = 200 if q else 1000
    x_np, w_np = wl.host_f32((4,), 1), wl.host_f32((4,), 2)
    # tlaloc.eval waits as jax's block_until_ready does: one call on the result (through
    # _tl_block, two more calls and an import per call were timed with it)
    if lib == "tlaloc":
        xp = L.tlaloc
        x, w = wl.device_array(x_np), wl.device_array(w_np)
        ev = xp.eval
        fn = lambda: ev(wl.small3(xp, x, w))  # noqa: E731
    elif lib == "tlaloc.jit":
        xp = L.tlaloc
        x, w = wl.device_array(x_np), wl.device_array(w_np)
        f = xp.jit(lambda x, w: wl.small3(xp, x, w))
        ev = xp.eval
        fn = lambda: ev(f(x, w))  # noqa: E731
    elif lib == "numpy":
        fn = lambda: wl.small3(np, x_np, w_np)  # noqa: E731
    elif lib == "jax.jit":
        x, w = L.jnp.asarray(x_np), L.jnp.asarray(w_np)
        f = L.jax.jit(lambda x, w: wl.small3(L.jnp, x, w))
        fn = lambda: f(x, w).block_until_ready()  # noqa: E731
    elif lib == "jax":
        x, w = L.jnp.asarray(x_np), L.jnp.asarray(w_np)
        fn = lambda: wl.small3(L.jnp, x, w).block_until_ready()  # noqa: E731
    elif lib == "torch":
        x, w = L.torch.from_numpy(x_np), L.torch.from_numpy(w_np)
        fn = lambda: wl.small3(L.tns, x, w)  # noqa: E731
    for _ in range(20):
        fn()
    return _per(n, fn)


def _chain_fn(L, lib, x_np):
    """fn() computing chain10 once (and waiting for it), on inputs already converted."""
    if lib == "tlaloc":
        xp = L.tlaloc
        x = wl.device_array(x_np)
        return lambda: _tl_block(wl.chain10(xp, x))
    if lib == "tlaloc.jit":
        xp = L.tlaloc
        x = wl.device_array(x_np)
        f = xp.jit(lambda x: wl.chain10(xp, x))
        return lambda: _tl_block(f(x))
    if lib == "numpy":
        return lambda: wl.chain10(np, x_np)
    if lib == "jax.jit":
        x = L.jnp.asarray(x_np)
        f = L.jax.jit(lambda x: wl.chain10(L.jnp, x))
        return lambda: f(x).block_until_ready()
    if lib == "jax":
        x = L.jnp.asarray(x_np)
        return lambda: wl.chain10(L.jnp, x).block_until_ready()
    if lib == "torch":
        x = L.torch.from_numpy(x_np)
        return lambda: wl.chain10(L.tns, x)


def prep_hot(n):
    def prep(L, lib, q):
        iters = 100 if q else 1000
        fn = _chain_fn(L, lib, wl.host_f32((n,), 3))
        for _ in range(3):
            fn()
        return _per(iters, fn)
    return prep


def prep_fused(L, lib, q):
    fn = _chain_fn(L, lib, wl.cached_host_f32((10**7,), 4))
    fn()
    return _per(1 if q else 3, fn)


def prep_fused_compile(L, lib, q):
    """Compile time of the 10-op chain on 10**7 float32 elements: a fresh shape every
    repetition, tlaloc's disk cache disabled. tlaloc: lowering + XLA compile (its cache
    statistics); jax.jit: trace + lower + XLA compile (jit(f).lower(x).compile())."""
    base = wl.cached_host_f32((10**7 + 64,), 4)
    counter = iter(range(1, 10**6))
    if lib == "tlaloc":
        xp = L.tlaloc

        def run():
            n = 10**7 + next(counter)
            x = wl.device_array(base[:n])
            previous = xp.config.update(compile_cache_dir="")
            try:
                before = xp.cache_info()["compile_seconds"]
                _tl_block(wl.chain10(xp, x))
                return xp.cache_info()["compile_seconds"] - before
            finally:
                xp.config.update(**previous)
        return run
    if lib == "jax.jit":
        f = L.jax.jit(lambda x: wl.chain10(L.jnp, x))

        def run():
            n = 10**7 + next(counter)
            x = L.jnp.asarray(base[:n])
            t = now()
            f.lower(x).compile()
            return now() - t
        return run
    return None


def prep_matmul(n):
    def prep(L, lib, q):
        calls = max(1, (2 if q else 8) * (512 // n) ** 2)
        a_np, b_np = wl.host_f32((n, n), 5), wl.host_f32((n, n), 6)
        if lib == "tlaloc":
            a, b = wl.device_array(a_np), wl.device_array(b_np)
            fn = lambda: _tl_block(a @ b)  # noqa: E731
        elif lib == "tlaloc.jit":
            a, b = wl.device_array(a_np), wl.device_array(b_np)
            f = L.tlaloc.jit(lambda a, b: a @ b)
            fn = lambda: _tl_block(f(a, b))  # noqa: E731
        elif lib == "numpy":
            fn = lambda: a_np @ b_np  # noqa: E731
        elif lib == "jax.jit":
            a, b = L.jnp.asarray(a_np), L.jnp.asarray(b_np)
            f = L.jax.jit(lambda a, b: a @ b)
            fn = lambda: f(a, b).block_until_ready()  # noqa: E731
        elif lib == "jax":
            a, b = L.jnp.asarray(a_np), L.jnp.asarray(b_np)
            fn = lambda: (a @ b).block_until_ready()  # noqa: E731
        elif lib == "torch":
            a, b = L.torch.from_numpy(a_np), L.torch.from_numpy(b_np)
            fn = lambda: a @ b  # noqa: E731
        fn()
        fn()
        return _per(calls, fn)
    return prep


def prep_grad(L, lib, q):
    calls = 5 if q else 20
    params_np, X_np, Y_np = wl.mlp_host_data()
    if lib in ("tlaloc", "tlaloc.jit"):
        xp = L.tlaloc
        params = tuple(wl.device_array(p) for p in params_np)
        X, Y = wl.device_array(X_np), wl.device_array(Y_np)
        g = xp.grad(lambda p, X, Y: wl.mlp_loss(xp, p, X, Y))
        if lib == "tlaloc.jit":
            g = xp.jit(g)
        fn = lambda: wl.block_all(g(params, X, Y))  # noqa: E731
    elif lib == "numpy":
        fn = lambda: wl.mlp_grad_numpy(params_np, X_np, Y_np)  # noqa: E731
    elif lib in ("jax.jit", "jax"):
        jnp = L.jnp
        params = tuple(jnp.asarray(p) for p in params_np)
        X, Y = jnp.asarray(X_np), jnp.asarray(Y_np)
        g = L.jax.grad(lambda p, X, Y: wl.mlp_loss(jnp, p, X, Y))
        if lib == "jax.jit":
            g = L.jax.jit(g)
        fn = lambda: _jax_block_all(g(params, X, Y))  # noqa: E731
    elif lib == "torch":
        torch = L.torch
        params = tuple(torch.from_numpy(p.copy()).requires_grad_() for p in params_np)
        X, Y = torch.from_numpy(X_np), torch.from_numpy(Y_np)

        def fn():
            return torch.autograd.grad(wl.mlp_loss(L.tns, params, X, Y), params)
    for _ in range(3):
        fn()
    return _per(calls, fn)


def prep_oneshot(scale):
    return functools.partial(_prep_oneshot, scale=scale)


def _prep_oneshot(L, lib, q, scale):
    """100 different small computations, each run once: from NumPy inputs to a float.
    Every repetition uses shapes never seen before (so no cache helps). `scale` multiplies
    the arrays' rows."""
    if lib == "tlaloc.jit":
        return None
    programs = [wl.one_shot_steps(k) for k in range(wl.ONE_SHOT_PROGRAMS)]
    counter = iter(range(1, 10**6))
    if lib == "tlaloc":
        xp = L.tlaloc
        convert, prog = xp.asarray, functools.partial(wl.one_shot_program, xp)
    elif lib == "numpy":
        convert, prog = (lambda a: a), functools.partial(wl.one_shot_program, np)
    elif lib == "jax":
        convert, prog = L.jnp.asarray, functools.partial(wl.one_shot_program, L.jnp)
    elif lib == "jax.jit":
        convert = L.jnp.asarray

        def prog(steps, x, w):
            return L.jax.jit(functools.partial(wl.one_shot_program, L.jnp, steps))(x, w)
    elif lib == "torch":
        convert, prog = L.torch.from_numpy, functools.partial(wl.one_shot_program, L.tns)

    def run():
        rep = next(counter)
        inputs = [wl.one_shot_inputs(k, rep, scale) for k in range(len(programs))]
        if lib == "tlaloc":
            L.auto()
            L.tlaloc.wait_for_compiles()
        gc.collect()
        t = now()
        for steps, (a, b) in zip(programs, inputs):
            float(prog(steps, convert(a), convert(b)))
        elapsed = now() - t
        if lib == "tlaloc":
            L.compiled()
        return elapsed

    # First-use costs (imports, first code paths) are not one-shot costs: warm up on a few
    # programs with shapes of their own.
    for k in range(len(programs), len(programs) + 5):
        a, b = wl.one_shot_inputs(k, 0, scale)
        float(prog(wl.one_shot_steps(k), convert(a), convert(b)))
    if lib.startswith("jax"):
        # jax compiles per new shape (jit: every program; eager: every primitive), tens of
        # seconds per repetition here: one timed repetition is enough to see it.
        run.max_reps = 1
    return run


def prep_sklearn(L, lib, q):
    """A scikit-learn pipeline (StandardScaler, PCA, LinearDiscriminantAnalysis) fitted on
    600 x 8 blobs and scored, with array API dispatch on: library code that runs once per
    call. New data (same shapes) in every repetition; tlaloc in its default tiered mode."""
    if lib not in ("tlaloc", "numpy"):
        return None
    os.environ.setdefault("SCIPY_ARRAY_API", "1")
    import sklearn
    from sklearn.decomposition import PCA
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    convert = L.tlaloc.asarray if lib == "tlaloc" else np.asarray
    counter = iter(range(1, 10**6))

    def run():
        rng = np.random.default_rng(next(counter))
        centres = rng.normal(scale=2.0, size=(3, 8))
        labels = rng.integers(0, 3, size=600)
        X, y = convert(centres[labels] + rng.normal(size=(600, 8))), convert(labels)
        model = make_pipeline(StandardScaler(), PCA(n_components=3), LinearDiscriminantAnalysis())
        if lib == "tlaloc":
            L.auto()
        t = now()
        with sklearn.config_context(array_api_dispatch=True):
            model.fit(X[:400], y[:400])
            float(model.score(X[400:], y[400:]))
        elapsed = now() - t
        if lib == "tlaloc":
            L.compiled()
        return elapsed
    run()   # first-use costs (imports, scikit-learn's own caches)
    return run


WORKLOADS = [
    ("record", "recording / dispatch cost per op (200-op chain, 4 elements)", "per op",
     (7, 3), prep_record),
    ("small", "small program latency (3 ops, 4 elements, cached)", "per call", (7, 3),
     prep_small),
    ("hot", "hot loop 1e5 f32 (10-op chain, x1000)", "per iteration", (3, 2), prep_hot(10**5)),
    ("hot", "hot loop 1e6 f32 (10-op chain, x1000)", "per iteration", (2, 2), prep_hot(10**6),
     {"jax"}),  # eager jax: ~40 s per repetition here; its dispatch cost shows at 1e5
    ("oneshot", "one-shot (100 different small computations)", "total", (5, 2), prep_oneshot(1),
     {"jax"}),  # eager jax compiles every primitive per new shape: ~100 s per repetition here
    ("oneshot", "one-shot, 8x the rows (~8,000 elements on average)", "total", (5, 2),
     prep_oneshot(8), {"jax", "jax.jit"}),
    ("oneshot", "one-shot, 64x the rows (~64,000 elements on average)", "total", (5, 2),
     prep_oneshot(64), {"jax", "jax.jit"}),
    ("fused", "fused 10-op chain, 1e7 f32", "per call", (5, 2), prep_fused),
    ("compile", "compile of the 10-op chain, 1e7 f32 (fresh shape)", "per compile", (3, 2),
     prep_fused_compile),
    ("matmul", "matmul 512 f32", "per call", (5, 2), prep_matmul(512)),
    ("matmul", "matmul 1024 f32", "per call", (5, 2), prep_matmul(1024)),
    ("grad", "grad of MLP loss (256x128 -> 256 -> 16)", "per call", (7, 3), prep_grad),
    ("sklearn", "scikit-learn pipeline fit + score (600 x 8)", "per call", (7, 3), prep_sklearn),
]


# ----------------------------------------------------------------------------- running

def fmt_seconds(s):
    if s is None:
        return "—"
    if isinstance(s, str):
        return s
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.3g} ms"
    return f"{s * 1e6:.3g} µs"


def fmt_ratio(a, b):
    if not isinstance(a, float) or not isinstance(b, float) or b == 0:
        return "—"
    return f"{a / b:.2f}"


def run_workload(L, libs, label, reps, prepare, quick, log):
    runners = {}
    for lib in libs:
        if not L.available(lib):
            continue
        L.compiled()
        try:
            r = prepare(L, lib, quick)
        except Exception as e:  # a library that cannot run this workload
            log(f"  {lib}: skipped ({type(e).__name__}: {e})")
            runners[lib] = f"error: {type(e).__name__}"
            continue
        if r is not None:
            runners[lib] = r
    times = {lib: [] for lib, r in runners.items() if callable(r)}
    order = list(times)
    for rep in range(reps):
        k = rep % max(1, len(order))
        for lib in order[k:] + order[:k]:
            if len(times[lib]) >= getattr(runners[lib], "max_reps", reps):
                continue
            gc.collect()
            L.compiled()
            L.tlaloc.wait_for_compiles()
            times[lib].append(runners[lib]())
    result = {}
    for lib in libs:
        r = runners.get(lib)
        if isinstance(r, str):
            result[lib] = r
        elif lib in times:
            result[lib] = statistics.median(times[lib])
        else:
            result[lib] = None
    log(f"  {label}: " + ", ".join(f"{lib} {fmt_seconds(v)}" for lib, v in result.items()))
    return result


def machine_description():
    lines = []
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
        lines += out.splitlines()[:10]
    except (OSError, subprocess.SubprocessError):
        lines.append(platform.processor() or platform.machine())
    lines.append(f"nproc: {os.cpu_count()}")
    if hasattr(os, "sched_getaffinity"):
        cpus = sorted(os.sched_getaffinity(0))
        if len(cpus) != os.cpu_count():
            lines.append(f"this process may run on CPUs {cpus} only (taskset)")
    try:
        lines.append(f"load average: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    except OSError:
        pass
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions/iterations")
    parser.add_argument("--only", default="", help="comma-separated workload keys: "
                        + ",".join(dict.fromkeys(w[0] for w in WORKLOADS)))
    parser.add_argument("--libs", default=",".join(LIBS), help="comma-separated libraries")
    args = parser.parse_args(argv)
    only = {s for s in args.only.split(",") if s}
    libs = [lib for lib in args.libs.split(",") if lib]
    for lib in libs:
        if lib not in LIBS:
            parser.error(f"unknown library {lib!r}; choose from {', '.join(LIBS)}")

    L = Libs()
    log = functools.partial(print, file=sys.stderr, flush=True)
    for name, why in L.missing.items():
        log(f"{name} is not installed ({why}): its columns are skipped")
    previous = L.tlaloc.config.update(execution="compiled")
    results = []
    started = now()
    try:
        for key, label, unit, (reps, qreps), prepare, *skip in WORKLOADS:
            if only and key not in only:
                continue
            log(f"{label} ...")
            use = [lib for lib in libs if not skip or lib not in skip[0]]
            results.append((label, unit, run_workload(
                L, use, label, qreps if args.quick else reps, prepare, args.quick, log)))
    finally:
        L.tlaloc.config.update(**previous)
    wall = now() - started

    print(f"# tlaloc vs NumPy / JAX / PyTorch ({datetime.datetime.now():%Y-%m-%d %H:%M})")
    print()
    print("```")
    for line in machine_description():
        print(line)
    print(" ".join(f"{k} {v}" for k, v in L.versions().items()))
    for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OMP_NUM_THREADS", "XLA_FLAGS"):
        if k in os.environ:
            print(f"{k}={os.environ[k]}")
    print(f"{'quick' if args.quick else 'full'} run, {wall:.0f} s")
    print("```")
    print()
    shown = [lib for lib in libs if any(r.get(lib) is not None for _, _, r in results)]
    head = ["workload", "unit"] + shown + ["tlaloc/NumPy", "tlaloc/jax.jit"]
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join("---" for _ in head) + "|")
    for label, unit, r in results:
        cells = [label, unit] + [fmt_seconds(r.get(lib)) for lib in shown]
        cells += [fmt_ratio(r.get("tlaloc"), r.get("numpy")),
                  fmt_ratio(r.get("tlaloc"), r.get("jax.jit"))]
        print("| " + " | ".join(cells) + " |")
    print()
    print("Medians over interleaved repetitions; ratios below 1 mean tlaloc is faster. "
          "'—': not applicable, not installed, or skipped (see the notes).")
    return results


if __name__ == "__main__":
    main()
