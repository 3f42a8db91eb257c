"""The factorisation primitives carry their derivative rules (tlaloc/_prims/linalg.py), so a
derivative reaches them through any namespace function built on them, and through the
primitive itself: checked against central finite differences in float64 on both tiers, in
reverse mode, forward mode, and reverse-over-reverse (the transposed rules are recorded in
primitives, so they differentiate again)."""
import numpy as np
import pytest

import tlaloc as xp
from tlaloc._array import Array
from tlaloc._prims import lax

RNG = np.random.default_rng(3)
F = RNG.normal(size=(3, 3))
SPD = F @ F.T + 3 * np.eye(3)
W = np.linspace(0.5, 1.5, 9).reshape(3, 3)
LOWER = np.tril(RNG.normal(size=(3, 3))) + 3 * np.eye(3)
B = RNG.normal(size=(3, 2))


def _raw_cholesky(a):
    """The primitive directly (its upper triangle is implementation-defined: masked)."""
    return xp.tril(Array._from_node(lax.cholesky(a._node)))


def _raw_trsolve(a, b, **params):
    return Array._from_node(lax.triangular_solve(a._node, b._node, **params))


def _numeric(f, v, symmetric, eps=1e-6):
    g = np.zeros_like(v)
    for idx in np.ndindex(v.shape):
        d = np.zeros_like(v)
        d[idx] = eps
        if symmetric:
            d = (d + d.T) / 2
        g[idx] = (float(f(xp.asarray(v + d))) - float(f(xp.asarray(v - d)))) / (2 * eps)
    return g


def _through_namespace(m):
    # the cholesky primitive reached through another namespace function (the multivariate
    # normal's log-density, as tlaloc.random and user code write it)
    low = xp.linalg.cholesky((m + xp.matrix_transpose(m)) / 2)
    return xp.sum(xp.log(xp.linalg.diagonal(low))) + xp.sum(low * xp.asarray(W, device=m.device))


CASES = {
    "cholesky primitive": (SPD, True, lambda m: xp.sum(_raw_cholesky(m) * xp.asarray(W, device=m.device))),
    "cholesky through a namespace function": (SPD, True, _through_namespace),
    "triangular_solve (a)": (LOWER, False, lambda a: xp.sum(_raw_trsolve(
        a, xp.asarray(B, device=a.device), left_side=True, lower=True, transpose_a="NO_TRANSPOSE",
        unit_diagonal=False) ** 2)),
    "triangular_solve adjoint, right side (a)": (LOWER, False, lambda a: xp.sum(_raw_trsolve(
        a, xp.asarray(B.T, device=a.device), left_side=False, lower=True, transpose_a="ADJOINT",
        unit_diagonal=False) ** 2)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_reverse_and_forward_mode_match_finite_differences(name, tier):
    v, symmetric, f = CASES[name]
    expected = _numeric(f, v, symmetric)
    x = xp.asarray(v, device=tier)
    g = np.asarray(xp.grad(f)(x))
    if symmetric:
        g = (g + g.T) / 2
    np.testing.assert_allclose(g, expected, rtol=1e-6, atol=1e-8)
    direction = np.eye(3)[0][:, None] * np.eye(3)[1][None, :]
    if symmetric:
        direction = (direction + direction.T) / 2
    _, t = xp.jvp(f, (x,), (xp.asarray(direction, device=tier),))
    np.testing.assert_allclose(float(t), float(np.sum(expected * direction)), rtol=1e-6, atol=1e-8)


def test_the_transposed_rule_differentiates_again(tier):
    """d/dm of <grad f(m), w> through the cholesky primitive's transposed rule, against
    finite differences of the gradient."""
    _, _, f = CASES["cholesky primitive"]
    def directional(m):
        return xp.sum(xp.grad(f)(m) * xp.asarray(W, device=m.device))
    eps = 1e-5
    d = np.zeros((3, 3))
    d[0, 1] = d[1, 0] = eps / 2
    fd = (float(directional(xp.asarray(SPD + d))) - float(directional(xp.asarray(SPD - d)))) / (2 * eps)
    h = np.asarray(xp.grad(directional)(xp.asarray(SPD, device=tier)))
    np.testing.assert_allclose((h[0, 1] + h[1, 0]) / 2, fd, rtol=1e-5, atol=1e-7)
