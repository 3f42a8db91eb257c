"""Train an MLP classifier with the namespace: SGD and Adam written with tlaloc, the training
step captured by tlaloc.jit with parameters and optimizer state donated, so they are updated
in place on the device.

Data: scikit-learn's bundled digits if scikit-learn is installed, otherwise a generated
three-class spiral. Run: python examples/train_mlp.py [--steps N]
"""
import argparse
import time

import numpy as np

import tlaloc as xp


def load_data(rng):
    try:
        from sklearn.datasets import load_digits
        digits = load_digits()
        x = digits.data.astype(np.float32) / 16.0
        y = digits.target
        name = "digits (scikit-learn)"
    except ImportError:
        n, classes = 600, 3
        t = rng.uniform(0, 1, size=n)
        y = rng.integers(0, classes, size=n)
        angle = 4.0 * t + y * (2 * np.pi / classes) + rng.normal(scale=0.2, size=n)
        x = np.stack([t * np.cos(angle), t * np.sin(angle)], axis=1).astype(np.float32)
        name = "generated spiral"
    order = rng.permutation(len(y))
    x, y = x[order], y[order]
    split = int(0.8 * len(y))
    onehot = np.eye(int(y.max()) + 1, dtype=np.float32)[y]
    return name, (x[:split], onehot[:split]), (x[split:], onehot[split:])


def init_params(rng, sizes):
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        w = rng.normal(scale=np.sqrt(2.0 / fan_in), size=(fan_in, fan_out)).astype(np.float32)
        params.append({"w": xp.asarray(w), "b": xp.zeros((fan_out,), dtype=xp.float32)})
    return params


def forward(params, x):
    h = x
    for layer in params[:-1]:
        h = xp.maximum(h @ layer["w"] + layer["b"], 0.0)      # ReLU
    last = params[-1]
    return h @ last["w"] + last["b"]


def loss_fn(params, x, y):
    logits = forward(params, x)
    shifted = logits - xp.max(logits, axis=-1, keepdims=True)
    log_probs = shifted - xp.log(xp.sum(xp.exp(shifted), axis=-1, keepdims=True))
    return -xp.mean(xp.sum(y * log_probs, axis=-1))


def accuracy(params, x, y):
    logits = forward(params, x)
    correct = xp.sum(y * logits, axis=-1) >= xp.max(logits, axis=-1)
    return float(xp.mean(xp.astype(correct, xp.float32)))


def tree_map(fn, *trees):
    if isinstance(trees[0], dict):
        return {k: tree_map(fn, *[t[k] for t in trees]) for k in trees[0]}
    if isinstance(trees[0], (list, tuple)):
        return type(trees[0])(tree_map(fn, *items) for items in zip(*trees))
    return fn(*trees)


def sgd_step(params, x, y, lr=0.1):
    loss, grads = xp.value_and_grad(loss_fn)(params, x, y)
    return tree_map(lambda p, g: p - lr * g, params, grads), loss


def adam_step(params, state, x, y, lr=1e-2, b1=0.9, b2=0.999, eps=1e-8):
    loss, grads = xp.value_and_grad(loss_fn)(params, x, y)
    step = state["step"] + 1.0
    m = tree_map(lambda m, g: b1 * m + (1 - b1) * g, state["m"], grads)
    v = tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, state["v"], grads)
    scale_m = 1.0 / (1.0 - b1 ** step)
    scale_v = 1.0 / (1.0 - b2 ** step)
    params = tree_map(lambda p, m, v: p - lr * (m * scale_m) / (xp.sqrt(v * scale_v) + eps),
                      params, m, v)
    return params, {"step": step, "m": m, "v": v}, loss


def adam_init(params):
    zeros = lambda p: xp.zeros_like(p)
    return {"step": xp.asarray(0.0, dtype=xp.float32), "m": tree_map(zeros, params),
            "v": tree_map(zeros, params)}


def time_steps(step_fn, params, state, batches, n):
    start = time.perf_counter()
    for i in range(n):
        x, y = batches[i % len(batches)]
        params, state, loss = step_fn(params, state, x, y)
    xp.eval(loss)
    return (time.perf_counter() - start) / n


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    name, (xtr, ytr), (xte, yte) = load_data(rng)
    sizes = [xtr.shape[1], 64, 64, ytr.shape[1]]
    print(f"data: {name}, {len(xtr)} training / {len(xte)} test examples, MLP {sizes}")
    batch = 64
    batches = [(xp.asarray(xtr[i:i + batch]), xp.asarray(ytr[i:i + batch]))
               for i in range(0, len(xtr) - batch + 1, batch)]
    x_test, y_test = xp.asarray(xte), xp.asarray(yte)

    # SGD, captured
    params = init_params(rng, sizes)
    sgd = xp.jit(sgd_step, donate_argnums=0)
    for i in range(args.steps):
        x, y = batches[i % len(batches)]
        params, loss = sgd(params, x, y)
        if i % 100 == 0 or i == args.steps - 1:
            print(f"sgd  step {i:4d}  loss {float(loss):.4f}")
    print(f"sgd  test accuracy {accuracy(params, x_test, y_test):.3f}")

    # Adam, captured, parameters and optimizer state donated (updated in place)
    params = init_params(rng, sizes)
    state = adam_init(params)
    adam = xp.jit(adam_step, donate_argnums=(0, 1))
    for i in range(args.steps):
        x, y = batches[i % len(batches)]
        params, state, loss = adam(params, state, x, y)
        if i % 100 == 0 or i == args.steps - 1:
            print(f"adam step {i:4d}  loss {float(loss):.4f}")
    print(f"adam test accuracy {accuracy(params, x_test, y_test):.3f}")

    # time per step, after a few warm-up steps (first-seen structures, compiles): eager
    # (recorded and fused per step), jit, jit with donation
    n = 50
    p = init_params(rng, sizes)
    time_steps(adam_step, p, adam_init(p), batches, 5)
    xp.wait_for_compiles()
    eager = time_steps(adam_step, p, adam_init(p), batches, n)
    p = init_params(rng, sizes)
    jit_plain = xp.jit(adam_step)
    time_steps(jit_plain, p, adam_init(p), batches, 3)
    plain = time_steps(jit_plain, p, adam_init(p), batches, n)
    p = init_params(rng, sizes)
    donated = time_steps(adam, p, adam_init(p), batches, n)
    print(f"time per Adam step: eager {eager * 1e3:.2f} ms, jit {plain * 1e3:.2f} ms, "
          f"jit+donation {donated * 1e3:.2f} ms")
    print("compiles:", [(r["function"], r["cause"]) for r in xp.compile_log()])


if __name__ == "__main__":
    main()
