"""A slow training loop made fast with tlaloc.profile (docs/profiling.md tells the story).

Run: python examples/profile_step.py [--steps 50] [--out profile_step]

The slow loop reads its loss with float() every step and rebuilds its data from NumPy each
step; the profile's summary names those lines. The fast loop keeps parameters and data on the
device inside one jitted step, and reads the loss only at the end. It writes the trace
(`<out>.trace.json.gz`, for ui.perfetto.dev) and, when matplotlib is installed, the picture
(`<out>.png`).
"""
import argparse
import os
import tempfile
import time

import numpy as np

import tlaloc as xp


def make_data(n=512, d=16, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).astype(np.float32)
    true_w = rng.normal(size=(d,)).astype(np.float32)
    y = X @ true_w + 0.1 * rng.normal(size=(n,)).astype(np.float32)
    return X, y


def slow_loop(X_np, y_np, steps, lr=0.1):
    w = xp.zeros(X_np.shape[1], dtype=xp.float32)
    losses = []
    for step in range(steps):
        X = xp.asarray(X_np)                       # the data crosses to the device every step
        y = xp.asarray(y_np)
        err = X @ w - y
        losses.append(float(xp.mean(err * err)))  # a host read every step: one evaluation each
        grad = 2.0 * (X.T @ err) / X.shape[0]
        w = w - lr * grad
    return w, losses


@xp.jit
def _step(w, X, y, lr):
    err = X @ w - y
    loss = xp.mean(err * err)
    return w - lr * (2.0 * (X.T @ err) / X.shape[0]), loss


def fast_loop(X_np, y_np, steps, lr=0.1):
    X, y = xp.asarray(X_np), xp.asarray(y_np)     # on the device once
    w = xp.zeros(X_np.shape[1], dtype=xp.float32)
    rate = xp.asarray(lr, dtype=xp.float32)
    losses = []
    for step in range(steps):
        w, loss = _step(w, X, y, rate)
        losses.append(loss)                         # kept on the device
    return w, [float(v) for v in xp.eval(*losses)] if len(losses) > 1 else [float(losses[0])]


def timed(loop, X, y, steps):
    loop(X, y, 2)                                   # warm up: compile outside the timing
    start = time.perf_counter()
    w, losses = loop(X, y, steps)
    return (time.perf_counter() - start) / steps, w, losses


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "profile_step"))
    args = parser.parse_args()
    X, y = make_data()
    xp.config.update(execution="compiled")

    with xp.profile() as prof:
        slow_loop(X, y, args.steps)
    print("slow loop, profiled (one row per line of code that made tlaloc compute):")
    print(prof.summary())
    print()

    with xp.explain() as ex:
        fast_loop(X, y, 3)
    print("fast loop, explained (why each evaluation happened):")
    for record in ex.records[:3]:
        print(" ", record)
    print()

    slow, w_slow, l_slow = timed(slow_loop, X, y, args.steps)
    fast, w_fast, l_fast = timed(fast_loop, X, y, args.steps)
    print(f"time per step: slow loop {slow * 1e3:.2f} ms, fast loop {fast * 1e3:.2f} ms "
          f"({slow / fast:.1f}x faster)")
    print(f"final loss: slow {l_slow[-1]:.5f}, fast {l_fast[-1]:.5f} (the same computation)")

    trace = prof.save(args.out + ".trace.json.gz")
    print("trace of the slow loop written to", trace, "(open it in ui.perfetto.dev)")
    try:
        print("picture written to", prof.plot(args.out + ".png"))
    except ImportError as e:
        print("no picture:", e)
    print("memory:", xp.memory_stats())


if __name__ == "__main__":
    main()
