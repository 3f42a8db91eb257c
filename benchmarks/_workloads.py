"""Workloads shared by the asv benchmarks and `compare.py`.

Every workload is written once against an array namespace `xp` with the standard's names
(tlaloc, NumPy, jax.numpy, or the small PyTorch adapter `torch_namespace()` below), so every
library runs the same operations. Nothing here times anything: timing belongs to the callers.

Names here must not start with `time_`, `peakmem_`, `mem_`, `track_` or `timeraw_`: asv
imports every module of this folder and would take such names for benchmarks.
"""
from __future__ import annotations

import random
import types

import numpy as np

# --------------------------------------------------------------------------- helpers


def host_f32(shape, seed=0):
    """A float32 NumPy array of standard normal values (deterministic)."""
    return np.random.default_rng(seed).standard_normal(shape, dtype=np.float32)


_DATA = {}


def cached_host_f32(shape, seed=0):
    """`host_f32`, made once per process (setup methods run before every asv sample)."""
    key = (tuple(shape) if isinstance(shape, tuple) else (shape,), seed)
    a = _DATA.get(key)
    if a is None:
        a = _DATA[key] = host_f32(shape, seed)
    return a


def block(a):
    """Wait until the tlaloc array `a` holds its value (`tlaloc.eval` dispatches the program
    and waits), without copying it to the host: the counterpart of jax's
    `block_until_ready`."""
    import tlaloc
    tlaloc.eval(a)
    return a


def block_all(arrays):
    import tlaloc
    tlaloc.eval(*arrays)
    return arrays


def device_array(np_array):
    """A tlaloc array whose value is already on the default device (so a timed evaluation
    does not include the host-to-device copy of its inputs)."""
    import tlaloc
    a = tlaloc.asarray(np_array)
    previous = tlaloc.config.update(execution="compiled")
    try:
        block(a + 0)  # a compiled run moves the leaf's value to the device, where it stays
    finally:
        tlaloc.config.update(**previous)
    return a


_DEVICE = {}


def cached_device_array(shape, seed=0):
    """`device_array(cached_host_f32(shape, seed))`, made once per process."""
    key = (tuple(shape) if isinstance(shape, tuple) else (shape,), seed)
    a = _DEVICE.get(key)
    if a is None:
        a = _DEVICE[key] = device_array(cached_host_f32(shape, seed))
    return a


# --------------------------------------------------------------------------- the workloads

def chain10(xp, x):
    """Ten elementwise operations (four of them with a Python scalar)."""
    y = x * 1.5
    y = y + 0.5
    y = xp.sin(y)
    y = y * y
    y = y - 0.25
    y = xp.exp(y)
    y = y / 3.0
    y = xp.tanh(y)
    y = y + x
    return xp.abs(y)


def small3(xp, x, w):
    """The small program: three operations."""
    return xp.sin(x * w + 1.0)


def small3_arrays(xp, x, w):
    """The small program without a Python scalar (its third input is an array)."""
    return xp.sin(x * w + w)


def record_chain(xp, x, w, n):
    """`n` operations, each consuming the previous result, cycling through four kinds
    (array add, scalar multiply, a transcendental, array multiply)."""
    y = x
    for i in range(n):
        k = i % 4
        if k == 0:
            y = y + w
        elif k == 1:
            y = y * 0.5
        elif k == 2:
            y = xp.sin(y)
        else:
            y = y * w
    return y


def mid_program(xp, x, n_ops=100):
    """About `n_ops` operations of mixed kinds on a 2-D array: elementwise chains, row
    normalisations (mean and max over an axis, broadcast back) and a final reduction."""
    y = x
    count = 0
    i = 0
    while count < n_ops - 1:
        k = i % 8
        if k == 0:
            y = y * 0.9 + 0.1
            count += 2
        elif k == 1:
            y = xp.sin(y)
            count += 1
        elif k == 2:
            y = y - xp.mean(y, axis=1, keepdims=True)
            count += 3  # reduce, divide, subtract (broadcasts not counted)
        elif k == 3:
            y = xp.tanh(y * y)
            count += 2
        elif k == 4:
            y = y / (xp.max(xp.abs(y), axis=0, keepdims=True) + 1.0)
            count += 4
        elif k == 5:
            y = xp.exp(-y * y)
            count += 3
        elif k == 6:
            y = xp.sqrt(xp.abs(y) + 1e-3) + x
            count += 4
        else:
            y = xp.maximum(y, 0.0) - 0.5
            count += 2
        i += 1
    return xp.sum(y)


# --------------------------------------------------------------------------- MLP loss

MLP_SIZES = {"batch": 256, "inputs": 128, "hidden": 256, "outputs": 16}


def mlp_host_data(seed=0):
    """(params, X, Y) as float32 NumPy arrays; params = (W1, b1, W2, b2)."""
    s = MLP_SIZES
    rng = np.random.default_rng(seed)
    W1 = rng.standard_normal((s["inputs"], s["hidden"]), dtype=np.float32) * np.float32(0.1)
    b1 = np.zeros(s["hidden"], dtype=np.float32)
    W2 = rng.standard_normal((s["hidden"], s["outputs"]), dtype=np.float32) * np.float32(0.1)
    b2 = np.zeros(s["outputs"], dtype=np.float32)
    X = rng.standard_normal((s["batch"], s["inputs"]), dtype=np.float32)
    Y = rng.standard_normal((s["batch"], s["outputs"]), dtype=np.float32)
    return (W1, b1, W2, b2), X, Y


def mlp_loss(xp, params, X, Y):
    W1, b1, W2, b2 = params
    h = xp.tanh(X @ W1 + b1)
    out = h @ W2 + b2
    d = out - Y
    return xp.mean(d * d)


def mlp_grad_numpy(params, X, Y):
    """The gradient of `mlp_loss` written by hand in NumPy (the baseline)."""
    W1, b1, W2, b2 = params
    h = np.tanh(X @ W1 + b1)
    out = h @ W2 + b2
    d = out - Y
    g_out = d * np.float32(2.0 / d.size)
    gW2 = h.T @ g_out
    gb2 = g_out.sum(axis=0)
    g_h = (g_out @ W2.T) * (1 - h * h)
    gW1 = X.T @ g_h
    gb1 = g_h.sum(axis=0)
    return gW1, gb1, gW2, gb2


# --------------------------------------------------------------------------- one-shot

ONE_SHOT_PROGRAMS = 100


def one_shot_steps(k):
    """The step list of one-shot program `k` (fixed by k, so every library and repetition
    runs the same program; the shapes change per repetition)."""
    rng = random.Random(1000 + k)
    steps = []
    for _ in range(rng.randint(3, 9)):
        kind = rng.choice(("unary", "unary", "scalar", "binary", "square", "normalize",
                           "softsign"))
        if kind == "unary":
            steps.append(("unary", rng.choice(("sin", "cos", "tanh", "exp", "abs"))))
        elif kind == "scalar":
            steps.append(("scalar", rng.choice("+-*"), round(rng.uniform(0.1, 2.0), 2)))
        elif kind == "binary":
            steps.append(("binary", rng.choice("+-*")))
        else:
            steps.append((kind,))
    steps.append(("final", rng.choice(("sum", "max", "mean", "gram"))))
    return steps


def one_shot_shape(k, rep, scale=1):
    """A small shape (at most 8 x (464 + rep), ~1,000 elements on average; `scale` multiplies
    the rows): program k gets a new shape in every repetition, so tlaloc never finds it in
    its caches (nor jax.jit in its). Programs k >= ONE_SHOT_PROGRAMS are spares, for warming
    up."""
    rows = (1, 2, 4, 8)[k % 4] * scale
    return rows, 64 + 4 * k + rep


def one_shot_inputs(k, rep, scale=1):
    shape = one_shot_shape(k, rep, scale)
    rng = np.random.default_rng(k)
    a = rng.standard_normal(shape, dtype=np.float32)
    b = rng.standard_normal(shape, dtype=np.float32)
    return a, b


def one_shot_program(xp, steps, x, w):
    """Run one one-shot program; returns a 0-d array."""
    y = x
    for step in steps:
        kind = step[0]
        if kind == "unary":
            y = getattr(xp, step[1])(y)
        elif kind == "scalar":
            c = step[2]
            y = y + c if step[1] == "+" else (y - c if step[1] == "-" else y * c)
        elif kind == "binary":
            y = y + w if step[1] == "+" else (y - w if step[1] == "-" else y * w)
        elif kind == "square":
            y = y * y
        elif kind == "normalize":
            y = y - xp.mean(y, axis=1, keepdims=True)
        elif kind == "softsign":
            y = y / (xp.abs(y) + 1.0)
        else:
            final = step[1]
            if final == "gram":
                return xp.sum(y @ y.T)
            return getattr(xp, final)(y)
    raise AssertionError("a one-shot program ends with a final step")


# --------------------------------------------------------------------------- loops that write

STENCIL_N = 200
STENCIL_STEPS = 500


def stencil_grid(n=STENCIL_N, seed=0):
    return np.random.default_rng(seed).random((n, n))


def stencil_loop(u, steps=STENCIL_STEPS):
    """The explicit heat-equation stencil NumPy users write, updating `u` in place (any
    namespace whose arrays take slice assignment)."""
    for _ in range(steps):
        u[1:-1, 1:-1] = u[1:-1, 1:-1] + 0.2 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2]
                                               + u[1:-1, 2:] - 4 * u[1:-1, 1:-1])
    return u


# --------------------------------------------------------------------------- PyTorch

def torch_namespace():
    """The few standard functions the workloads use, on PyTorch (thin: no wrapping of
    results, so dispatch cost is PyTorch's own)."""
    import torch

    def _reduce(fn_all, fn_dim):
        def reduce(x, axis=None, keepdims=False):
            if axis is None:
                return fn_all(x)
            return fn_dim(x, dim=axis, keepdim=keepdims)
        return reduce

    return types.SimpleNamespace(
        sin=torch.sin, cos=torch.cos, tanh=torch.tanh, exp=torch.exp, abs=torch.abs,
        sqrt=torch.sqrt, maximum=lambda x, c: torch.clamp_min(x, c) if isinstance(c, float)
        else torch.maximum(x, c),
        sum=_reduce(torch.sum, torch.sum), mean=_reduce(torch.mean, torch.mean),
        max=_reduce(torch.amax, torch.amax),
    )
