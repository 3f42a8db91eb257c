"""A variable-length sequence model trained with tlaloc.jit(..., dynamic=...).

Every batch has its own number of sequences (1 to 64) and its own sequence length (4 to 128):
without `dynamic`, each new (batch, length) pair would trace and compile the training step
again. With `dynamic={"batch": (1, 64), "seq": (4, 128)}` a call pads its arguments to a
bucket (here two per axis, `buckets=`; by default the powers of two) and one compiled
program serves every size in it: four programs for the whole run. The padding is
invisible: attention pooling's softmax over "seq", the mean over "batch" in the loss and the
gradients are those of the unpadded batch.

    python examples/variable_length.py [--steps 80]
"""
import argparse

import numpy as np

import tlaloc as xp

FEATURES, HIDDEN, CLASSES = 8, 16, 2


def init(rng):
    return {"w": xp.asarray(rng.standard_normal((FEATURES, HIDDEN)) * 0.3),
            "v": xp.asarray(rng.standard_normal((HIDDEN,)) * 0.3),
            "out": xp.asarray(rng.standard_normal((FEATURES, CLASSES)) * 0.3)}


def logits(params, x):
    """x: (batch, seq, features) -> (batch, classes), by attention pooling over "seq"."""
    scores = xp.tanh(x @ params["w"]) @ params["v"]                  # (batch, seq)
    weights = xp.exp(scores - xp.max(scores, axis=1, keepdims=True))
    weights = weights / xp.sum(weights, axis=1, keepdims=True)        # softmax over seq
    pooled = xp.sum(weights[:, :, None] * x, axis=1)                  # (batch, features)
    return pooled @ params["out"]


def loss(params, x, labels):
    z = logits(params, x)
    log_p = z - xp.log(xp.sum(xp.exp(z), axis=1, keepdims=True))
    picked = xp.sum(log_p * labels, axis=1)                           # labels are one-hot
    return -xp.mean(picked)                                           # over the true batch


def train_step(params, x, labels):
    value, grads = xp.value_and_grad(loss)(params, x, labels)
    return {k: params[k] - 0.5 * grads[k] for k in params}, value


def batch(rng):
    """A batch of `n` sequences of one length; the class says whether the sequence's
    feature 0 averages above zero (it needs every position, padded ones excluded)."""
    n, length = int(rng.integers(1, 65)), int(rng.integers(4, 129))
    x = rng.standard_normal((n, length, FEATURES))
    x[:, :, 0] += rng.choice([-0.4, 0.4], size=(n, 1))
    labels = np.eye(CLASSES)[(x[:, :, 0].mean(axis=1) > 0).astype(int)]
    return (xp.asarray(x, names=("batch", "seq", None)),
            xp.asarray(labels, names=("batch", None)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=80)
    steps = parser.parse_args().steps
    rng = np.random.default_rng(0)
    params = init(rng)
    step = xp.jit(train_step, dynamic={"batch": (1, 64), "seq": (4, 128)},
                  buckets={"batch": [16, 64], "seq": [32, 128]})
    shapes = set()
    for i in range(steps):
        x, labels = batch(rng)
        shapes.add(x.shape[:2])
        params, value = step(params, x, labels)
        if i % 20 == 0 or i == steps - 1:
            print(f"step {i:3d}  batch {x.shape[0]:2d} x length {x.shape[1]:3d}  loss {float(value):.4f}")

    # the padded program computes what the unpadded one does
    x, labels = batch(rng)
    padded_params, padded_loss = step(params, x, labels)
    eager_params, eager_loss = train_step(params, x, labels)
    gap = max(float(xp.max(xp.abs(padded_params[k] - eager_params[k]))) for k in params)
    print(f"padded vs unpadded: loss {float(padded_loss):.6f} vs {float(eager_loss):.6f}, "
          f"largest parameter difference {gap:.2e}")
    assert abs(float(padded_loss) - float(eager_loss)) < 1e-9 and gap < 1e-9

    compiles = [r for r in xp.compile_log() if r["function"] == "train_step"]
    print(f"{len(shapes)} distinct (batch, length) shapes, {step.traces()} traces, "
          f"{len(compiles)} compiles; buckets: "
          + ", ".join(f"{r['bucket']['batch']}x{r['bucket']['seq']}" for r in compiles[:8])
          + (" ..." if len(compiles) > 8 else ""))

    accuracy = []
    for _ in range(5):
        x, labels = batch(rng)
        predicted = xp.argmax(logits(params, x), axis=1)
        accuracy.append(float(xp.mean(xp.astype(predicted == xp.argmax(labels, axis=1), xp.float64))))
    print(f"held-out accuracy {np.mean(accuracy):.2f}")


if __name__ == "__main__":
    main()
