"""tlaloc.vmap in config execution "compiled", under tlaloc.jit: the same computation written
for one example and batched by vmap, written by hand for the batch, and run as a Python loop
over the examples (a jitted per-example function, results stacked). Workloads:

  * mlp_grads: per-example gradients of a one-hidden-layer MLP's cross-entropy (64 -> 128 ->
    10, float32); the hand version is the batched backward pass written out;
  * solve: one linear system per example (16 x 16, float64);
  * distances: each example's distances to a shared set of points (64 points in 32-d).

benchmarks/compare_vmap.py times the same workloads beside jax.vmap under jax.jit.
"""
from __future__ import annotations

import numpy as np

import tlaloc as xp

try:
    from ._base import Configured
    from ._workloads import block_all
except ImportError:  # imported as a script's sibling (compare_vmap.py)
    from _base import Configured
    from _workloads import block_all

SIZES = {"mlp_grads": 256, "solve": 256, "distances": 512}


# ----------------------------------------------------------------------------- workloads
# Each workload is written against a namespace `ns` (tlaloc, or jax.numpy in compare_vmap.py)
# and `ad` (grad and stop_gradient of that library), and returns (arguments, per-example
# function, in_axes, hand-vectorised function).

def mlp_grads(ns, ad, rng, batch):
    sizes = (64, 128, 10)
    params = {"w1": rng.standard_normal(sizes[:2]) / 8, "b1": np.zeros(sizes[1]),
              "w2": rng.standard_normal(sizes[1:]) / 11, "b2": np.zeros(sizes[2])}
    params = {k: v.astype(np.float32) for k, v in params.items()}
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    y = np.eye(sizes[2], dtype=np.float32)[rng.integers(0, sizes[2], batch)]

    def loss(p, x, y):
        h = ns.tanh(x @ p["w1"] + p["b1"])
        logits = h @ p["w2"] + p["b2"]
        # the shift only keeps exp finite: no gradient flows through it (as in logsumexp)
        shifted = logits - ad.stop_gradient(ns.max(logits, axis=-1, keepdims=True))
        return -ns.sum(y * (shifted - ns.log(ns.sum(ns.exp(shifted), axis=-1, keepdims=True))))

    def hand(p, x, y):     # the batched backward pass, one gradient per row
        h = ns.tanh(x @ p["w1"] + p["b1"])
        logits = h @ p["w2"] + p["b2"]
        shifted = logits - ns.max(logits, axis=-1, keepdims=True)
        e = ns.exp(shifted)
        d_logits = e / ns.sum(e, axis=-1, keepdims=True) * ns.sum(y, axis=-1, keepdims=True) - y
        d_h = (d_logits @ ns.matrix_transpose(p["w2"])) * (1 - h * h)
        return {"w1": x[:, :, None] * d_h[:, None, :], "b1": d_h,
                "w2": h[:, :, None] * d_logits[:, None, :], "b2": d_logits}

    return (params, x, y), ad.grad(loss), (None, 0, 0), hand


def solve(ns, ad, rng, batch):
    n = 16
    a = rng.standard_normal((batch, n, n)) + n * np.eye(n)
    b = rng.standard_normal((batch, n))
    return (a, b), lambda a, b: ns.linalg.solve(a, b[:, None])[:, 0], (0, 0), \
        lambda a, b: ns.linalg.solve(a, b[..., None])[..., 0]


def distances(ns, ad, rng, batch):
    points = rng.standard_normal((64, 32)).astype(np.float32)
    x = rng.standard_normal((batch, 32)).astype(np.float32)
    return (x, points), lambda x, p: ns.sqrt(ns.sum(ns.square(x - p), axis=-1)), (0, None), \
        lambda x, p: ns.sqrt(ns.sum(ns.square(x[:, None, :] - p[None, :, :]), axis=-1))


WORKLOADS = {"mlp_grads": mlp_grads, "solve": solve, "distances": distances}


def as_tlaloc(tree):
    if isinstance(tree, dict):
        return {k: as_tlaloc(v) for k, v in tree.items()}
    if isinstance(tree, tuple):
        return tuple(as_tlaloc(v) for v in tree)
    return xp.asarray(tree)


def example(tree, axis, i):
    """Example i of an argument mapped along `axis` (None: shared)."""
    if axis is None:
        return tree
    return tree[(slice(None),) * axis + (i,)]


def tlaloc_variants(name, batch=None):
    """{"vmap": fn, "hand": fn, "loop": fn}: each call computes the workload and waits."""
    batch = batch or SIZES[name]
    args, one, in_axes, hand = WORKLOADS[name](xp, xp, np.random.default_rng(0), batch)
    args = as_tlaloc(args)
    vmapped = xp.jit(xp.vmap(one, in_axes=in_axes))
    by_hand = xp.jit(hand)
    single = xp.jit(one)
    examples = [tuple(example(a, ax, i) for a, ax in zip(args, in_axes)) for i in range(batch)]
    leaves = lambda out: list(out.values()) if isinstance(out, dict) else [out]  # noqa: E731

    def loop():
        outs = [single(*e) for e in examples]
        if isinstance(outs[0], dict):
            return block_all([xp.stack([o[k] for o in outs]) for k in outs[0]])
        return block_all([xp.stack(outs)])

    return {"vmap": lambda: block_all(leaves(vmapped(*args))),
            "hand": lambda: block_all(leaves(by_hand(*args))),
            "loop": loop}


# ----------------------------------------------------------------------------- asv

class Vmap(Configured):
    params = (list(WORKLOADS), ["vmap", "hand", "loop"])
    param_names = ["workload", "version"]

    def setup(self, workload, version):
        self.configure()
        self.fn = tlaloc_variants(workload)[version]
        self.fn()
        self.fn()

    def time_call(self, workload, version):
        self.fn()
