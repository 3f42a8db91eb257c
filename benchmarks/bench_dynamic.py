"""Dynamic axes (issue 19): 200 batches of random sizes in [1, 64] through one training-step
gradient (a 32 -> 64 -> 10 MLP's cross-entropy, float32), in config execution "compiled":

  * jit_dynamic: tlaloc.jit(step, dynamic={"batch": (1, 64)}): one program per power-of-two
    bucket (7 at most);
  * jit_static: tlaloc.jit(step): one program per distinct size.

The time_ benchmarks time the whole loop, compiles included where the loop meets a size or
bucket first (asv repeats them: later samples find the programs compiled); the track_
benchmarks count the compiles of a fresh function. benchmarks/compare_dynamic.py runs both
beside jax.jit with hand padding to the same buckets, in one process.
"""
from __future__ import annotations

import numpy as np

import tlaloc as xp

try:
    from ._base import Configured
except ImportError:  # imported as a script's sibling (compare_dynamic.py)
    from _base import Configured

BATCHES, LOW, HIGH = 200, 1, 64
SIZES = (32, 64, 10)


def params(rng):
    return {"w1": (rng.standard_normal(SIZES[:2]) / 6).astype(np.float32),
            "w2": (rng.standard_normal(SIZES[1:]) / 8).astype(np.float32)}


def batches(rng, count=BATCHES):
    """(x, one-hot y) NumPy pairs of random batch sizes in [LOW, HIGH]."""
    out = []
    for n in rng.integers(LOW, HIGH + 1, count):
        x = rng.standard_normal((int(n), SIZES[0])).astype(np.float32)
        y = np.eye(SIZES[2], dtype=np.float32)[rng.integers(0, SIZES[2], int(n))]
        out.append((x, y))
    return out


def per_example_loss(ns, p, x, y):
    """The cross-entropy of each row, written against namespace `ns`."""
    h = ns.tanh(x @ p["w1"])
    z = h @ p["w2"]
    z = z - ns.max(z, axis=1, keepdims=True)
    return -ns.sum(y * (z - ns.log(ns.sum(ns.exp(z), axis=1, keepdims=True))), axis=1)


def loss(p, x, y):
    return xp.mean(per_example_loss(xp, p, x, y))     # over the true batch, padded or not


def step(p, x, y):
    return xp.grad(loss)(p, x, y)


def run(fn, p, data):
    """Every batch through `fn`, waiting for each gradient."""
    for x, y in data:
        g = fn(p, xp.asarray(x, names=("batch", None)), xp.asarray(y, names=("batch", None)))
        xp.eval(*g.values())
    return g


def compiles_of(name):
    return sum(1 for r in xp.compile_log() if r["function"] == name)


class DynamicBatches(Configured):
    timeout = 600
    number = 1
    repeat = 3

    def setup(self):
        self.configure()
        rng = np.random.default_rng(0)
        self.p = {k: xp.asarray(v) for k, v in params(rng).items()}
        self.data = batches(rng)

    def time_jit_dynamic(self):
        run(xp.jit(step, dynamic={"batch": (LOW, HIGH)}), self.p, self.data)

    def time_jit_static(self):
        run(xp.jit(step), self.p, self.data)

    def track_compiles_jit_dynamic(self):
        before = compiles_of("step")
        run(xp.jit(step, dynamic={"batch": (LOW, HIGH)}), self.p, self.data)
        return compiles_of("step") - before

    def track_compiles_jit_static(self):
        before = compiles_of("step")
        run(xp.jit(step), self.p, self.data)
        return compiles_of("step") - before

    track_compiles_jit_dynamic.unit = "compiles"
    track_compiles_jit_static.unit = "compiles"
