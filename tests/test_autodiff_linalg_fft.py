"""Derivatives of every linalg function and of the FFTs against finite differences (float64,
both tiers). Functions of Hermitian matrices (cholesky, eigh, eigvalsh) are checked along
symmetric perturbations, the convention their rules use."""
import numpy as np
import pytest

import tlaloc as xp

RNG = np.random.default_rng(7)
F = RNG.normal(size=(3, 3))
SPD = F @ F.T + 3 * np.eye(3)
GENERAL = RNG.normal(size=(3, 3)) + 2 * np.eye(3)
TALL = RNG.normal(size=(4, 3))
WIDE = RNG.normal(size=(2, 4))
VEC = RNG.normal(size=(6,))
CVEC = RNG.normal(size=(6,)) + 1j * RNG.normal(size=(6,))
HALF = RNG.normal(size=(4,)) + 1j * RNG.normal(size=(4,))
NONSYM = np.array([[1.0, 2.0, 0.5], [-1.5, 0.3, 1.0], [0.2, -0.7, 2.0]])   # a complex pair
CGENERAL = RNG.normal(size=(3, 3)) + 1j * RNG.normal(size=(3, 3))


def numeric(f, v, symmetric, eps=1e-6):
    g = np.zeros_like(v)
    for idx in np.ndindex(v.shape):
        for unit in ((1.0,) if v.dtype.kind != "c" else (1.0, 1j)):
            d = np.zeros_like(v)
            d[idx] = eps * unit
            if symmetric:
                d = (d + d.T) / 2
            diff = (float(f(xp.asarray(v + d))) - float(f(xp.asarray(v - d)))) / (2 * eps)
            g[idx] += diff * (1 if unit == 1.0 else 1j)
    return g


def w(shape, device):
    return xp.asarray(np.linspace(0.5, 1.5, int(np.prod(shape))).reshape(shape), device=device)


CASES = {
    "cholesky": (SPD, True, lambda m, d: xp.sum(xp.linalg.cholesky(m) * w((3, 3), d))),
    "cholesky_upper": (SPD, True, lambda m, d: xp.sum(xp.linalg.cholesky(m, upper=True) ** 2)),
    "inv": (GENERAL, False, lambda m, d: xp.sum(xp.linalg.inv(m) * w((3, 3), d))),
    "solve": (GENERAL, False, lambda m, d: xp.sum(xp.linalg.solve(m, w((3, 2), d)))),
    "solve_vector": (GENERAL, False, lambda m, d: xp.sum(xp.linalg.solve(m, w((3,), d)) ** 2)),
    "det": (GENERAL, False, lambda m, d: xp.linalg.det(m)),
    "slogdet": (GENERAL, False, lambda m, d: xp.linalg.slogdet(m)[1]),
    "eigh": (SPD, True, lambda m, d: xp.sum(xp.linalg.eigh(m).eigenvalues * w((3,), d))
             + xp.sum(xp.linalg.eigh(m).eigenvectors[:, 0] ** 2 * w((3,), d))),
    "eigvalsh": (SPD, True, lambda m, d: xp.sum(xp.linalg.eigvalsh(m) ** 2)),
    # eig: real and imaginary parts of eigenvalues and of the eigenvectors as LAPACK
    # normalises them (unit norm, largest component real), so the rule's gauge is checked too
    "eig": (NONSYM, False, lambda m, d: xp.sum(xp.real(xp.linalg.eig(m).eigenvalues) * w((3,), d))
            + xp.sum(xp.imag(xp.linalg.eig(m).eigenvalues) ** 2)
            + xp.sum(xp.real(xp.linalg.eig(m).eigenvectors) * w((3, 3), d))
            + xp.sum(xp.imag(xp.linalg.eig(m).eigenvectors) * w((3, 3), d) ** 2)),
    "eig_complex": (CGENERAL, False, lambda m, d: xp.sum(xp.imag(xp.linalg.eig(m).eigenvectors) * w((3, 3), d))
                    + xp.sum(xp.abs(xp.linalg.eig(m).eigenvalues))),
    "eigvals": (NONSYM, False, lambda m, d: xp.sum(xp.abs(xp.linalg.eigvals(m)) * w((3,), d))),
    "svd_tall": (TALL, False, lambda m, d: xp.sum(xp.linalg.svd(m, full_matrices=False).S * w((3,), d))
                 + xp.sum(xp.abs(xp.linalg.svd(m, full_matrices=False).U[:, 0]))),
    "svd_wide": (WIDE, False, lambda m, d: xp.sum(xp.abs(xp.linalg.svd(m, full_matrices=False).Vh[0]))),
    "svdvals": (TALL, False, lambda m, d: xp.sum(xp.linalg.svdvals(m) ** 3)),
    "qr": (TALL, False, lambda m, d: xp.sum(xp.linalg.qr(m).R * w((3, 3), d))
           + xp.sum(xp.linalg.qr(m).Q[:, 1] * w((4,), d))),
    "pinv": (TALL, False, lambda m, d: xp.sum(xp.linalg.pinv(m) * w((3, 4), d))),
    "matrix_power": (GENERAL, False, lambda m, d: xp.sum(xp.linalg.matrix_power(m, -2))),
    "matrix_norm_fro": (GENERAL, False, lambda m, d: xp.linalg.matrix_norm(m)),
    "matrix_norm_nuc": (GENERAL, False, lambda m, d: xp.linalg.matrix_norm(m, ord="nuc")),
    "matrix_norm_2": (GENERAL, False, lambda m, d: xp.linalg.matrix_norm(m, ord=2)),
    "matrix_norm_inf": (GENERAL, False, lambda m, d: xp.linalg.matrix_norm(m, ord=xp.inf)),
    "vector_norm_3": (GENERAL, False, lambda m, d: xp.linalg.vector_norm(m, ord=3)),
    "trace": (GENERAL, False, lambda m, d: xp.linalg.trace(m @ m)),
    "outer_cross": (GENERAL, False, lambda m, d: xp.sum(xp.linalg.outer(m[0], m[1]) ** 2)
                    + xp.sum(xp.linalg.cross(m[0], m[2]) ** 2)),
    "fft": (CVEC, False, lambda v, d: xp.sum(xp.abs(xp.fft.fft(v)) * w((6,), d))),
    "ifft": (CVEC, False, lambda v, d: xp.sum(xp.real(xp.fft.ifft(v, norm="ortho")) * w((6,), d))),
    "fftn": (CVEC, False, lambda v, d: xp.sum(xp.abs(xp.fft.fftn(xp.reshape(v, (2, 3)))))),
    "rfft": (VEC, False, lambda v, d: xp.sum(xp.abs(xp.fft.rfft(v)) ** 2 * w((4,), d))),
    "irfft": (HALF, False, lambda v, d: xp.sum(xp.fft.irfft(v, n=6) * w((6,), d))),
    "irfft_odd": (HALF, False, lambda v, d: xp.sum(xp.fft.irfft(v, n=7) * w((7,), d))),
    "hfft": (HALF, False, lambda v, d: xp.sum(xp.fft.hfft(v, n=6) * w((6,), d))),
    "ihfft": (VEC, False, lambda v, d: xp.sum(xp.abs(xp.fft.ihfft(v)))),
}


@pytest.mark.parametrize("name", list(CASES))
def test_gradient(tier, name):
    value, symmetric, fn = CASES[name]
    f = lambda m: fn(m, tier)
    g = np.asarray(xp.grad(f)(xp.asarray(value, device=tier)))
    if symmetric:
        g = (g + g.T) / 2
    expected = numeric(lambda m: f(xp.asarray(np.asarray(m), device=tier)), value, symmetric)
    np.testing.assert_allclose(g, expected, rtol=1e-6, atol=1e-7)


def test_forward_mode_matches_reverse():
    a = xp.asarray(SPD)
    direction = xp.asarray((F + F.T) / 2)
    f = lambda m: xp.sum(xp.linalg.eigvalsh(m) ** 2) + xp.linalg.slogdet(m)[1]
    _, t = xp.jvp(f, (a,), (direction,))
    g = xp.grad(f)(a)
    np.testing.assert_allclose(float(t), float(xp.sum(g * direction)), rtol=1e-10)


def test_second_derivative_of_logdet():
    a = xp.asarray(SPD)
    v = xp.asarray(np.eye(3)[0])
    # d^2/dt^2 logdet(A + t v v^T) at 0 = -(v^T A^-1 v)^2
    f = lambda t: xp.linalg.slogdet(a + t * xp.linalg.outer(v, v))[1]
    second = xp.grad(xp.grad(f))(xp.asarray(0.0))
    expected = -(np.linalg.inv(SPD)[0, 0]) ** 2
    np.testing.assert_allclose(float(second), expected, rtol=1e-8)


def test_eig_forward_mode_against_finite_differences():
    """jvp of eig returns EigResult pairs (named tuples are trees); the tangents of the
    eigenvalues and of LAPACK's normalised eigenvectors match central differences."""
    t = RNG.normal(size=(3, 3)) + 1j * RNG.normal(size=(3, 3))
    (w0, v0), (dw, dv) = xp.jvp(xp.linalg.eig, (xp.asarray(CGENERAL),), (xp.asarray(t),))
    assert isinstance(dw, xp.Array) and dv.shape == (3, 3)
    eps = 1e-6
    up, down = xp.linalg.eig(xp.asarray(CGENERAL + eps * t)), xp.linalg.eig(xp.asarray(CGENERAL - eps * t))
    for tangent, hi, lo in ((dw, up.eigenvalues, down.eigenvalues), (dv, up.eigenvectors, down.eigenvectors)):
        np.testing.assert_allclose(np.asarray(tangent), (np.asarray(hi) - np.asarray(lo)) / (2 * eps),
                                   rtol=1e-6, atol=1e-7)
