"""Recording and evaluating leave no reference cycles behind: every node, value and helper
object of a computation goes by reference counting when the user's arrays go, as NumPy's
buffers do. A cycle would keep the values behind it (large intermediates included) until
Python's cycle collector runs, and its collections would cost time on every evaluation.
Each area runs once to fill its caches, then twice more with the collector saving what it
finds."""
import gc

import numpy as np
import pytest

import tlaloc as xp

A = np.random.default_rng(0).standard_normal((6, 5)).astype(np.float32)


def _loss(x):
    return xp.sum(xp.tanh(x @ x.T))


_grad = xp.grad(_loss)
_jit = xp.jit(_loss)
_jit_grad = xp.jit(xp.grad(_loss))


def _elementwise():
    float(xp.sum(xp.sin(xp.asarray(A)) * 2 + 1))


def _reductions():
    x = xp.asarray(A)
    float(xp.sum(xp.mean(x, axis=0) + xp.max(x, axis=1)[0]))


def _getitem():
    x = xp.asarray(A)
    float(xp.sum(x[1:3, ::2]) + xp.sum(x[xp.asarray([0, 2])]) + xp.sum(x[x > 0]))


def _setitem():
    x = xp.asarray(A)
    x[1] = 3.0
    x[:, 2] += 1
    x[x > 1] = 0
    float(xp.sum(x))


def _views():
    x = xp.asarray(A) * 1
    t = x.T
    t[0] = 1
    flat = xp.reshape(x, (-1,))
    flat[::3] = 2
    float(xp.sum(x))


def _stencil():
    u = xp.asarray(np.ones((20, 20)))
    for _ in range(10):
        u[1:-1, 1:-1] = u[1:-1, 1:-1] + 0.2 * (u[:-2, 1:-1] + u[2:, 1:-1] - 2 * u[1:-1, 1:-1])
    float(xp.sum(u))


def _linalg():
    x = xp.asarray(A)
    float(xp.sum(xp.linalg.svd(x @ x.T)[1]) + xp.sum(xp.linalg.inv(x.T @ x + xp.eye(5))))


def _fft():
    float(xp.sum(xp.abs(xp.fft.fft(xp.asarray(A)))))


def _random():
    float(xp.sum(xp.random.normal(xp.random.key(0), (4, 4))))


def _derivatives():
    float(xp.sum(_grad(xp.asarray(A))))


def _jitted():
    float(_jit(xp.asarray(A)))
    float(xp.sum(_jit_grad(xp.asarray(A))))


def _vmapped():
    float(xp.sum(xp.vmap(lambda r: xp.sum(r * r))(xp.asarray(A))))


def _control_flow():
    float(xp.fori_loop(0, 3, lambda i, c: c * 2, xp.asarray(1.0)))
    float(xp.cond(xp.asarray(True), lambda v: v + 1, lambda v: v - 1, xp.asarray(2.0)))
    carry, ys = xp.scan(lambda c, v: (c + v, c), xp.asarray(0.0), xp.asarray(A[:, 0]))
    float(carry + xp.sum(ys))


def _named():
    float(xp.sum(xp.zeros((2, 3), names=("batch", "feature")) + 1))


AREAS = [_elementwise, _reductions, _getitem, _setitem, _views, _stencil, _linalg, _fft,
         _random, _derivatives, _jitted, _vmapped, _control_flow, _named]


@pytest.mark.parametrize("execution", ["interpreted", "compiled"])
@pytest.mark.parametrize("area", AREAS, ids=lambda f: f.__name__.strip("_"))
def test_no_reference_cycles(area, execution):
    xp.config.update(execution=execution)   # conftest restores the configuration
    area()                       # caches filled: what they keep is not garbage
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        area()
        area()
        gc.collect()
        found = [type(o).__name__ for o in gc.garbage]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    assert found == [], f"reference cycles left behind: {sorted(set(found))}"
