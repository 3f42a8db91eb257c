"""Structured control flow in config execution "compiled", under tlaloc.jit.

Workloads (each written against a namespace and its loop functions, so that
benchmarks/compare_control_flow.py runs the same ones with jax.lax):

  * fori: 1,000 steps of an elementwise update of 1,024 float32 values (fori_loop);
  * rnn: a tanh recurrent layer over 200 steps, 128 hidden units, float32 (scan);
  * ode_grad: the gradient of an RK4 integrator's loss (200 steps of a damped oscillator,
    float64) with respect to its two parameters (reverse mode through a scan).

Compile time: `track_compile_seconds` reports the seconds XLA spent compiling a jitted
fori_loop of 10 to 10,000 elementwise steps (tanh(v) * 0.999 + 0.001 * v on 1,024 float32
values; constant in the trip count) and the same loop unrolled in Python under jit (growing
with it; 1,000 steps take about half a minute, so asv skips 10,000).
"""
from __future__ import annotations

import types

import numpy as np

import tlaloc as xp

try:
    from ._base import Configured
except ImportError:  # imported as a script's sibling (compare_control_flow.py)
    from _base import Configured


def tlaloc_loops():
    return types.SimpleNamespace(fori_loop=xp.fori_loop, scan=xp.scan, grad=xp.grad)


# ----------------------------------------------------------------------------- workloads
# Each returns (arguments as NumPy arrays, function of them) for namespace `ns` and loop
# functions `lp` (fori_loop, scan, grad).

def fori(ns, lp, rng, steps=1000):
    x = rng.standard_normal(1024).astype(np.float32)

    def f(x):
        return lp.fori_loop(0, steps, lambda i, v: ns.sin(v) * 0.999 + 0.001 * ns.cos(v), x)
    return (x,), f


def rnn(ns, lp, rng, steps=200, hidden=128):
    w = (rng.standard_normal((hidden, hidden)) / np.sqrt(hidden)).astype(np.float32)
    xs = rng.standard_normal((steps, hidden)).astype(np.float32)
    h0 = np.zeros(hidden, dtype=np.float32)

    def f(w, xs, h0):
        def step(h, x):
            h = ns.tanh(h @ w + x)
            return h, ns.sum(h * h)
        return lp.scan(step, h0, xs)
    return (w, xs, h0), f


def ode_grad(ns, lp, rng, steps=200, dt=0.02):
    theta = np.array([4.0, 0.3])
    y0 = np.array([1.0, 0.0])

    def rhs(y, th):
        return ns.stack([y[1], -th[0] * y[0] - th[1] * y[1]])

    def loss(th, y0):
        def step(y, _):
            k1 = rhs(y, th)
            k2 = rhs(y + 0.5 * dt * k1, th)
            k3 = rhs(y + 0.5 * dt * k2, th)
            k4 = rhs(y + dt * k3, th)
            y = y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            return y, y[0]
        _, ys = lp.scan(step, y0, None, length=steps)
        return ns.sum(ys * ys)
    return (theta, y0), lp.grad(loss)


WORKLOADS = {"fori": fori, "rnn": rnn, "ode_grad": ode_grad}


def tlaloc_workload(name):
    """A function that computes the workload under tlaloc.jit and waits for it."""
    args, f = WORKLOADS[name](xp, tlaloc_loops(), np.random.default_rng(0))
    args = [xp.asarray(a) for a in args]
    jitted = xp.jit(f)

    def run():
        xp.eval(*xp.tree.leaves(jitted(*args)))
    return run


def compile_seconds(steps, unrolled, size=1024):
    """XLA's compile seconds for a jitted loop of `steps` elementwise steps on `size` values
    (a new size gives a new program, so nothing comes from the cache)."""
    body = lambda i, v: xp.tanh(v) * 0.999 + 0.001 * v   # noqa: E731
    if unrolled:
        def f(v):
            for i in range(steps):
                v = body(i, v)
            return v
    else:
        def f(v):
            return xp.fori_loop(0, steps, body, v)
    before = xp.cache_info()["compile_seconds"]
    xp.eval(xp.jit(f)(xp.ones(size, dtype=xp.float32)))
    return xp.cache_info()["compile_seconds"] - before


# ----------------------------------------------------------------------------- asv

class ControlFlow(Configured):
    params = [list(WORKLOADS)]
    param_names = ["workload"]
    settings = {"execution": "compiled", "compile_cache_dir": ""}

    def setup(self, workload):
        self.configure()
        self.fn = tlaloc_workload(workload)
        self.fn()

    def time_call(self, workload):
        self.fn()


class LoopCompile(Configured):
    params = ([10, 100, 1000, 10000], [False, True])
    param_names = ["steps", "unrolled"]
    settings = {"execution": "compiled", "compile_cache_dir": ""}
    _sizes = iter(range(2000, 10 ** 9))

    def setup(self, steps, unrolled):
        if unrolled and steps > 1000:
            raise NotImplementedError   # asv: skipped (minutes to trace and compile)
        self.configure()

    def track_compile_seconds(self, steps, unrolled):
        return compile_seconds(steps, unrolled, size=next(self._sizes))

    track_compile_seconds.unit = "seconds"
