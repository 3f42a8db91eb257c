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
from tlaloc._prims import linalg as lp

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


def _numeric(f, v, symmetric, eps=1e-5):
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

GENERAL = F + np.diag([3.0, 7.0, 11.0])         # real, well separated eigenvalues
PAIR = F + np.diag([4.0, 6.0, 8.0])             # a complex-conjugate pair of eigenvalues
TALL = RNG.normal(size=(4, 3))
WIDE = RNG.normal(size=(2, 4))


def _weights(node, device):
    n = node.aval.shape[-1]
    return xp.asarray(np.linspace(0.5, 1.5, n), device=device)


def _raw(prim_call):
    """A loss of a factorisation primitive's packed result taken directly."""
    def loss(m):
        out = Array._from_node(prim_call(m._node))
        w = _weights(out._node, m.device)
        return xp.sum(out * w)
    return loss


def _raw_sign_free(prim_call):
    """The same for results whose vectors are fixed up to sign or phase: |packed|^2."""
    def loss(m):
        out = Array._from_node(prim_call(m._node))
        w = _weights(out._node, m.device)
        return xp.sum(xp.real(out * xp.conj(out)) * w)
    return loss


def _wt(shape, device):
    return xp.asarray(np.linspace(0.5, 1.5, int(np.prod(shape))).reshape(shape), device=device)


CASES.update({
    "lu primitive": (GENERAL, False, _raw(lambda a: lax.lu(a))),
    "lu through slogdet, inv and solve": (GENERAL, False, lambda m: xp.linalg.slogdet(m)[1]
        + xp.sum(xp.linalg.inv(m) * _wt((3, 3), m.device))
        + xp.sum(xp.linalg.solve(m, xp.asarray(B, device=m.device)) ** 2)),
    "lu through det": (GENERAL, False, lambda m: xp.linalg.det(m)),
    "qr primitive (tall)": (TALL, False, _raw(lambda a: lax.qr(a, full=False))),
    "qr primitive (square, complete)": (GENERAL, False, _raw(lambda a: lax.qr(a, full=True))),
    "qr through the namespace": (TALL, False, lambda m: xp.sum(xp.linalg.qr(m).Q * _wt((4, 3), m.device))
        + xp.sum(xp.linalg.qr(m).R * _wt((3, 3), m.device))),
    "eigh primitive": (SPD, True, _raw_sign_free(lambda a: lax.eigh(a, vectors=True))),
    "eigh primitive (values)": (SPD, True, _raw(lambda a: lax.eigh(a, vectors=False))),
    "eigh through eigvalsh and eigh": (SPD, True, lambda m: xp.sum(xp.linalg.eigvalsh(m) ** 2)
        + xp.sum(xp.linalg.eigh(m).eigenvectors ** 2 * _wt((3, 3), m.device))),
    "svd primitive (tall)": (TALL, False, _raw_sign_free(lambda a: lax.svd(a, mode="S"))),
    "svd primitive (wide)": (WIDE, False, _raw_sign_free(lambda a: lax.svd(a, mode="S"))),
    "svd primitive (values)": (TALL, False, _raw(lambda a: lax.svd(a, mode="N"))),
    "svd through matrix_norm and pinv": (TALL, False, lambda m: xp.linalg.matrix_norm(m, ord="nuc")
        + xp.sum(xp.linalg.pinv(m) * _wt((3, 4), m.device))),
    "eig primitive": (GENERAL, False, _raw_sign_free(lambda a: lax.eig(a, vectors=True))),
    "eig primitive (values)": (GENERAL, False, lambda m: xp.sum(xp.real(Array._from_node(
        lax.eig(m._node, vectors=False))) ** 2)),
    "eig primitive (a complex pair)": (PAIR, False, _raw_sign_free(lambda a: lax.eig(a, vectors=True))),
    "eig through eigvals and eig": (GENERAL, False, lambda m: xp.sum(xp.real(xp.linalg.eigvals(m)) ** 2)
        + xp.sum(xp.abs(xp.linalg.eig(m).eigenvectors) * _wt((3, 3), m.device))),
})


@pytest.mark.parametrize("name", list(CASES))
def test_reverse_and_forward_mode_match_finite_differences(name, tier):
    v, symmetric, f = CASES[name]
    expected = _numeric(f, v, symmetric)
    x = xp.asarray(v, device=tier)
    g = np.asarray(xp.grad(f)(x))
    if symmetric:
        g = (g + g.T) / 2
    np.testing.assert_allclose(g, expected, rtol=1e-6, atol=1e-8)
    direction = np.zeros(v.shape)
    direction[0, 1] = 1.0
    if symmetric:
        direction = (direction + direction.T) / 2
    _, t = xp.jvp(f, (x,), (xp.asarray(direction, device=tier),))
    np.testing.assert_allclose(float(t), float(np.sum(expected * direction)), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", list(CASES))
def test_the_transposed_rule_differentiates_again(name, tier):
    """d/dm of <grad f(m), w> through the primitive's transposed rule (reverse over reverse),
    against finite differences of the gradient."""
    v, symmetric, f = CASES[name]
    weights = np.linspace(0.5, 1.5, v.size).reshape(v.shape)
    def directional(m):
        return xp.sum(xp.grad(f)(m) * xp.asarray(weights, device=m.device))
    eps = 1e-5
    d = np.zeros(v.shape)
    if symmetric:
        d[0, 1] = d[1, 0] = eps / 2
    else:
        d[0, 1] = eps
    fd = (float(directional(xp.asarray(v + d))) - float(directional(xp.asarray(v - d)))) / (2 * eps)
    h = np.asarray(xp.grad(directional)(xp.asarray(v, device=tier)))
    got = (h[0, 1] + h[1, 0]) / 2 if symmetric else h[0, 1]
    np.testing.assert_allclose(got, fd, rtol=2e-5, atol=1e-6)


ZF = RNG.normal(size=(3, 3)) + 1j * RNG.normal(size=(3, 3))
HPD = ZF @ ZF.conj().T + 3 * np.eye(3)
ZGENERAL = ZF + np.diag([3.0, 7.0, 11.0])
ZTALL = RNG.normal(size=(4, 3)) + 1j * RNG.normal(size=(4, 3))

COMPLEX_CASES = {
    "lu primitive": (ZGENERAL, False, lambda m: xp.sum(xp.real(Array._from_node(lax.lu(m._node)))
                                                       * _wt((15,), m.device))),
    "lu through slogdet (sign and log|det|)": (ZGENERAL, False, lambda m: xp.linalg.slogdet(m)[1]
        + xp.sum(xp.imag(xp.linalg.slogdet(m)[0]))),
    "qr primitive": (ZTALL, False, _raw_sign_free(lambda a: lax.qr(a, full=False))),
    "qr through the namespace": (ZTALL, False, lambda m: xp.sum(xp.imag(xp.linalg.qr(m).R))
        + xp.sum(xp.real(xp.linalg.qr(m).Q) * _wt((4, 3), m.device))),
    "eigh primitive (values)": (HPD, True, _raw(lambda a: lax.eigh(a, vectors=False))),
    "eigh through eigh": (HPD, True, lambda m: xp.sum(xp.abs(xp.linalg.eigh(m).eigenvectors)
                                                      * _wt((3, 3), m.device))),
    "svd primitive": (ZTALL, False, _raw(lambda a: lax.svd(a, mode="N"))),
    "svd through svd": (ZTALL, False, lambda m: xp.sum(xp.abs(xp.linalg.svd(m, full_matrices=False).U)
                                                       * _wt((4, 3), m.device))),
    "eig primitive": (ZGENERAL, False, _raw_sign_free(lambda a: lax.eig(a, vectors=True))),
}


def _numeric_complex(f, v, hermitian, eps=1e-5):
    """dL/dx + i dL/dy by central differences (Hermitian perturbations for `hermitian`)."""
    g = np.zeros(v.shape, complex)
    for idx in np.ndindex(v.shape):
        for unit in (1.0, 1j):
            d = np.zeros(v.shape, complex)
            d[idx] = eps * unit
            if hermitian:
                d = (d + d.conj().T) / 2
            diff = (float(f(xp.asarray(v + d))) - float(f(xp.asarray(v - d)))) / (2 * eps)
            g[idx] += diff * unit
    return g


@pytest.mark.parametrize("name", list(COMPLEX_CASES))
def test_complex_matrices_follow_the_gradient_convention(name, tier):
    """Reverse mode gives dL/dx + i dL/dy; forward mode the directional derivative."""
    v, hermitian, f = COMPLEX_CASES[name]
    expected = _numeric_complex(f, v, hermitian)
    x = xp.asarray(v, device=tier)
    g = np.asarray(xp.grad(f)(x))
    if hermitian:
        g = (g + g.conj().T) / 2
    np.testing.assert_allclose(g, expected, rtol=1e-5, atol=1e-7)
    direction = np.zeros(v.shape, complex)
    direction[0, 1] = 1 + 0.5j
    if hermitian:
        direction = (direction + direction.conj().T) / 2
    _, t = xp.jvp(f, (x,), (xp.asarray(direction, device=tier),))
    np.testing.assert_allclose(float(t), float(np.real(np.sum(np.conj(expected) * direction))),
                               rtol=1e-5, atol=1e-7)
