"""Existing array code runs on tlaloc unchanged.

The functions below were written for any Array API namespace: they take the namespace from
their inputs (array_api_compat.array_namespace) and use only standard calls. The same code
runs on NumPy and on tlaloc; on tlaloc it is recorded and fused. Run:
python examples/numpy_style_code.py
"""
import time

import numpy as np
from array_api_compat import array_namespace

import tlaloc as xp


def kmeans_step(points, centers):
    """One Lloyd iteration: assign points to the nearest center, move centers to the mean."""
    ns = array_namespace(points)
    d2 = ns.sum((points[:, None, :] - centers[None, :, :]) ** 2, axis=-1)
    nearest = ns.argmin(d2, axis=1)
    onehot = ns.astype(nearest[:, None] == ns.arange(centers.shape[0])[None, :], points.dtype)
    counts = ns.sum(onehot, axis=0)
    return (ns.matrix_transpose(onehot) @ points) / ns.maximum(counts, 1.0)[:, None]


def zscore(x, axis=0):
    ns = array_namespace(x)
    return (x - ns.mean(x, axis=axis, keepdims=True)) / ns.std(x, axis=axis, keepdims=True)


def softmax_rows(x):
    ns = array_namespace(x)
    e = ns.exp(x - ns.max(x, axis=1, keepdims=True))
    return e / ns.sum(e, axis=1, keepdims=True)


def main():
    rng = np.random.default_rng(0)
    blobs = np.concatenate([rng.normal(c, 0.5, size=(200, 2)) for c in ([0, 0], [4, 4], [0, 5])])
    start = blobs[[0, 250, 450]]
    results = {}
    for name, ns in (("numpy", np), ("tlaloc", xp)):
        t0 = time.perf_counter()
        points, centers = ns.asarray(blobs), ns.asarray(start)
        for _ in range(10):
            centers = kmeans_step(points, centers)
        z = zscore(points)
        probs = softmax_rows(z @ ns.ones((2, 3)))
        results[name] = (np.asarray(centers), np.asarray(z), np.asarray(probs))
        print(f"{name:7s} centers after 10 iterations:\n{np.round(np.asarray(centers), 3)}"
              f"\n        ({time.perf_counter() - t0:.3f} s)")
    for a, b in zip(results["numpy"], results["tlaloc"]):
        assert np.allclose(a, b, rtol=1e-10, atol=1e-12)
    print("tlaloc and NumPy agree on every result")


if __name__ == "__main__":
    main()
