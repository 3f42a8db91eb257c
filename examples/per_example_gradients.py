"""Per-example gradient norms of the MLP of examples/train_mlp.py, with tlaloc.vmap.

`vmap(grad(loss))` gives one gradient per example from the loss written for one example (the
same `loss_fn` train_mlp.py uses on batches). The script checks them against a Python loop
and against the batch gradient (their mean), times both, and uses the norms the way
differentially private SGD does: each example's gradient clipped to a norm bound before they
are averaged. Run: python examples/per_example_gradients.py [--batch N]
"""
import argparse
import os
import sys
import time

import numpy as np

import tlaloc as xp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_mlp import init_params, load_data, loss_fn, tree_map  # noqa: E402


def per_example_norms(grads):
    """The norm of each example's whole gradient (every parameter's leaf of the tree)."""
    squares = [xp.sum(xp.reshape(g * g, (g.shape[0], -1)), axis=1)
               for layer in grads for g in layer.values()]
    return xp.sqrt(sum(squares))


def clipped_mean(grads, norms, bound):
    """The mean of the per-example gradients, each scaled to norm <= bound (DP-SGD's clip)."""
    scale = xp.minimum(1.0, bound / (norms + 1e-12))
    return tree_map(lambda g: xp.mean(g * xp.reshape(scale, (-1,) + (1,) * (g.ndim - 1)), axis=0),
                    grads)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    name, (xtr, ytr), _ = load_data(rng)
    sizes = [xtr.shape[1], 64, 64, ytr.shape[1]]
    params = init_params(rng, sizes)
    x, y = xp.asarray(xtr[:args.batch]), xp.asarray(ytr[:args.batch])
    print(f"data: {name}; MLP {sizes}; {args.batch} examples")

    grads_of = xp.jit(xp.vmap(xp.grad(loss_fn), in_axes=(None, 0, 0)))
    grads = grads_of(params, x, y)
    norms = per_example_norms(grads)
    n = np.asarray(norms)
    print(f"per-example gradient norms: min {n.min():.4f}, median {np.median(n):.4f}, "
          f"max {n.max():.4f}")

    # the same gradients from a Python loop over the examples, and the batch gradient
    one = xp.jit(xp.grad(loss_fn))
    def loop():
        return tree_map(lambda *gs: xp.stack(gs), *[one(params, x[i], y[i]) for i in range(args.batch)])

    looped = loop()
    worst = max(float(xp.max(xp.abs(grads[k][p] - looped[k][p])))
                for k in range(len(params)) for p in ("w", "b"))
    batch_grad = xp.grad(loss_fn)(params, x, y)
    mean_gap = max(float(xp.max(xp.abs(xp.mean(grads[k][p], axis=0) - batch_grad[k][p])))
                   for k in range(len(params)) for p in ("w", "b"))
    print(f"largest difference from the loop: {worst:.2e}; mean of per-example gradients vs "
          f"the batch gradient: {mean_gap:.2e}")

    bound = float(np.median(n))
    update = clipped_mean(grads, norms, bound)
    clipped = per_example_norms(tree_map(lambda g: g[None], update))
    print(f"clipped at norm {bound:.4f}: the mean update's norm is {float(clipped[0]):.4f}")

    def timed(fn, reps=10):
        fn()
        start = time.perf_counter()
        for _ in range(reps):
            fn()
        return (time.perf_counter() - start) / reps

    vmapped = timed(lambda: xp.eval(per_example_norms(grads_of(params, x, y))))
    looping = timed(lambda: xp.eval(per_example_norms(loop())), reps=3)
    print(f"time for the norms: vmap {vmapped * 1e3:.2f} ms, Python loop {looping * 1e3:.2f} ms "
          f"({looping / vmapped:.0f}x)")


if __name__ == "__main__":
    main()
