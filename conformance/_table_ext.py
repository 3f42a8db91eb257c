"""Table entries of the linalg and fft extensions (see _table for the conventions).

Matrices are drawn from well-conditioned families (entries in [-1, 1], plus n*I where an
inverse or a factorization is taken, B B^H + n*I where it must be Hermitian positive definite)
and without special values: how LAPACK propagates nan/inf is not specified by the standard.
Factorizations whose factors are not unique (eigh, qr, svd) are checked by their properties
(reconstruction, orthonormality, triangularity) and by their unique parts (eigenvalues,
singular values, |diag R|) against array-api-strict.
"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from ._harness import (ALL, COMPLEX, DEVICE, FLOATS, NUMERIC, REAL, RTOL_ACCUM, Dt, Entry,
                       Mismatch, compare, kind, same_category, values)
from ._table import ABSENT, _kw, matmul_args, maybe, tensordot_args, vecdot_args

MATRIX_SHAPES = [(2, 2), (3, 3), (1, 1), (2, 3, 3), (0, 0)]
RECT_SHAPES = [(2, 3), (3, 2), (2, 2), (2, 3, 2), (1, 4)]


@st.composite
def matrices(draw, dtypes=FLOATS, shapes=MATRIX_SHAPES, *, shift=False, hermitian=False,
             spd=False):
    d = draw(st.sampled_from(dtypes))
    s = draw(st.sampled_from(shapes))
    a = draw(values(d, s, values="unit", special=False))
    n = s[-1]
    if spd:
        a = a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n, dtype=d)
    elif hermitian:
        a = (a + np.conj(np.swapaxes(a, -1, -2))) / 2
    if shift:
        a = a + (n + 1) * np.eye(s[-2], s[-1], dtype=d)
    return a.astype(d)


def _one(strategy, **kwstrats):
    @st.composite
    def strat(draw):
        return (draw(strategy),), _kw(**{k: draw(v) for k, v in kwstrats.items()})
    return strat()


def _tol(dtype):
    return RTOL_ACCUM[str(np.dtype(dtype))] * 50


def _close(a, b, where, dtype, scale=1.0):
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        raise Mismatch(f"{where}: shape {a.shape} != {b.shape}")
    if a.size and not np.allclose(a, b, rtol=_tol(dtype), atol=_tol(dtype) * scale):
        raise Mismatch(f"{where}: max error {np.max(np.abs(a - b))}: got {a!r}, expected {b!r}")


def _same_meta(actual, expected):
    for i, (a, e) in enumerate(zip(actual[2], expected[2])):
        if a.shape != e.shape or a.dtype != e.dtype:
            raise Mismatch(f"output {expected[1][i]}: {a.shape} {a.dtype} != expected {e.shape} {e.dtype}")
    if actual[1] != expected[1]:
        raise Mismatch(f"fields {actual[1]} != {expected[1]}")


def _h(m):
    return np.conj(np.swapaxes(m, -1, -2))


def check_eigh(actual, expected, args, kwargs):
    _same_meta(actual, expected)
    (w, v), (ew, _) = actual[2], expected[2]
    a = args[0]
    _close(w, ew, "eigenvalues", a.dtype, a.shape[-1])
    _close((v * w[..., None, :]) @ _h(v), a, "V diag(w) V^H", a.dtype, a.shape[-1])
    _close(_h(v) @ v, np.broadcast_to(np.eye(a.shape[-1]), v.shape), "V^H V", a.dtype, a.shape[-1])


def check_qr(actual, expected, args, kwargs):
    _same_meta(actual, expected)
    (q, r), (eq, er) = actual[2], expected[2]
    a = args[0]
    _close(q @ r, a, "Q R", a.dtype, a.shape[-1])
    k = q.shape[-1]
    _close(_h(q) @ q, np.broadcast_to(np.eye(k), q.shape[:-2] + (k, k)), "Q^H Q", a.dtype, 1)
    if np.any(np.tril(r, -1)):
        raise Mismatch(f"R is not upper triangular: {r!r}")
    _close(np.abs(np.diagonal(r, axis1=-2, axis2=-1)), np.abs(np.diagonal(er, axis1=-2, axis2=-1)),
           "|diag R|", a.dtype, a.shape[-1])


def check_svd(actual, expected, args, kwargs):
    _same_meta(actual, expected)
    (u, s, vh), (_, es, _) = actual[2], expected[2]
    a = args[0]
    _close(s, es, "singular values", a.dtype, a.shape[-1])
    k = s.shape[-1]
    _close((u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :], a, "U S Vh", a.dtype, a.shape[-1])
    _close(_h(u) @ u, np.broadcast_to(np.eye(u.shape[-1]), u.shape[:-2] + (u.shape[-1],) * 2), "U^H U",
           a.dtype, 1)


def check_accum(actual, expected, args, kwargs):
    compare(actual, expected, mode="accum", scale=50.0)


@st.composite
def cross_args(draw):
    d1 = draw(st.sampled_from(NUMERIC))
    d2 = draw(st.sampled_from(same_category(d1)))
    form = draw(st.integers(0, 3))
    s1, s2, ax = [((3,), (3,), ABSENT), ((2, 3), (3,), -1), ((3, 2), (3, 2), -2),
                  ((2, 3, 2), (1, 3, 2), -2)][form]
    v = "small" if kind(d1) in "iu" else "unit"
    return (draw(values(d1, s1, values=v, special=False)), draw(values(d2, s2, values=v, special=False))), \
        _kw(axis=ax)


@st.composite
def diagonal_args(draw):
    x = draw(values(draw(st.sampled_from(ALL)), draw(st.sampled_from(RECT_SHAPES + [(0, 2)]))))
    return (x,), _kw(offset=draw(maybe(st.integers(-3, 3))))


@st.composite
def matrix_norm_args(draw):
    x = draw(matrices(FLOATS, RECT_SHAPES + MATRIX_SHAPES[:3]))
    ords = ["fro", "nuc", np.inf, -np.inf, 1, -1, 2, -2]
    return (x,), _kw(ord=draw(maybe(st.sampled_from(ords))), keepdims=draw(maybe(st.booleans())))


@st.composite
def matrix_power_args(draw):
    n = draw(st.integers(-2, 3))
    x = draw(matrices(FLOATS, MATRIX_SHAPES[:4], shift=n < 0))
    return (x, n), {}


@st.composite
def low_rank(draw):
    d = draw(st.sampled_from(FLOATS))
    m, n = draw(st.sampled_from([(3, 3), (2, 4), (4, 2), (3, 3)]))
    r = draw(st.integers(0, min(m, n)))
    b = draw(values(d, (m, r), values="unit", special=False))
    c = draw(values(d, (r, n), values="unit", special=False))
    return (b @ c).astype(d)


@st.composite
def matrix_rank_args(draw):
    x = draw(low_rank())
    return (x,), _kw(rtol=draw(maybe(st.sampled_from([None, 1e-3]))))


@st.composite
def pinv_args(draw):
    x = draw(matrices(FLOATS, RECT_SHAPES, shift=True))
    return (x,), _kw(rtol=draw(maybe(st.sampled_from([None, 1e-3]))))


@st.composite
def outer_args(draw):
    d1 = draw(st.sampled_from(NUMERIC))
    d2 = draw(st.sampled_from(same_category(d1)))
    return (draw(values(d1, draw(st.sampled_from([(0,), (1,), (3,)])))),
            draw(values(d2, draw(st.sampled_from([(0,), (2,), (4,)]))))), {}


@st.composite
def solve_args(draw):
    a = draw(matrices(FLOATS, [(2, 2), (3, 3), (2, 3, 3)], shift=True))
    n = a.shape[-1]
    d2 = draw(st.sampled_from([d for d in same_category(str(a.dtype))]))
    bshape = draw(st.sampled_from([(n,), (n, 2), a.shape[:-2] + (n, 1)]))
    return (a, draw(values(d2, bshape, values="unit", special=False))), {}


@st.composite
def trace_args(draw):
    d = draw(st.sampled_from(NUMERIC))
    x = draw(values(d, draw(st.sampled_from(RECT_SHAPES)), values="small" if kind(d) in "iu" else "any",
                    special=False))
    kw = _kw(offset=draw(maybe(st.integers(-2, 2))))
    if draw(st.booleans()):
        k = kind(d)
        kw["dtype"] = Dt(draw(st.sampled_from([e for e in NUMERIC if kind(e) == k or
                                               (k == "f" and kind(e) == "c")])))
    return (x,), kw


@st.composite
def vector_norm_args(draw):
    d = draw(st.sampled_from(FLOATS))
    s = draw(st.sampled_from([(), (3,), (2, 3), (2, 3, 2), (0,)]))
    x = draw(values(d, s, special=False))
    kw = _kw(ord=draw(maybe(st.sampled_from([1, 2, np.inf, -np.inf, 0, 3, 0.5]))),
             keepdims=draw(maybe(st.booleans())))
    if s and draw(st.booleans()):
        nd = len(s)
        kw["axis"] = draw(st.one_of(st.integers(-nd, nd - 1),
                                    st.lists(st.integers(0, nd - 1), unique=True, min_size=1,
                                             max_size=nd).map(tuple)))
    return (x,), kw


def linalg_entries():
    return [
        Entry("linalg.cholesky", _one(matrices(spd=True), upper=maybe(st.booleans())), check_accum),
        Entry("linalg.cross", cross_args(), "accum"),
        Entry("linalg.det", _one(matrices()), check_accum),
        Entry("linalg.diagonal", diagonal_args(), "exact"),
        Entry("linalg.eigh", _one(matrices(hermitian=True)), check_eigh),
        Entry("linalg.eigvalsh", _one(matrices(hermitian=True)), check_accum),
        Entry("linalg.inv", _one(matrices(shift=True)), check_accum),
        Entry("linalg.matmul", matmul_args(), "accum"),
        Entry("linalg.matrix_norm", matrix_norm_args(), check_accum),
        Entry("linalg.matrix_power", matrix_power_args(), check_accum),
        Entry("linalg.matrix_rank", matrix_rank_args(), "exact"),
        Entry("linalg.matrix_transpose", _one(values("int8", (2, 3))), "exact"),
        Entry("linalg.outer", outer_args(), "exact-real"),
        Entry("linalg.pinv", pinv_args(), check_accum),
        Entry("linalg.qr", _one(matrices(FLOATS, RECT_SHAPES, shift=True),
                                mode=maybe(st.sampled_from(["reduced", "complete"]))), check_qr),
        Entry("linalg.slogdet", _one(matrices(shift=True)), check_accum),
        Entry("linalg.solve", solve_args(), check_accum),
        Entry("linalg.svd", _one(matrices(FLOATS, RECT_SHAPES), full_matrices=maybe(st.booleans())),
              check_svd),
        Entry("linalg.svdvals", _one(matrices(FLOATS, RECT_SHAPES)), check_accum),
        Entry("linalg.tensordot", tensordot_args(), "accum"),
        Entry("linalg.trace", trace_args(), "accum"),
        Entry("linalg.vecdot", vecdot_args(), "accum"),
        Entry("linalg.vector_norm", vector_norm_args(), check_accum,
              # the standard does not say what the -inf norm (a minimum) of no elements is
              unspecified=((ValueError, "zero-size array to reduction operation minimum"),)),
    ]


# ------------------------------------------------------------------------------ fft

FFT_SHAPES = [(4,), (5,), (2, 4), (3, 5), (2, 3, 2), (1,)]
NORMS = ["backward", "ortho", "forward"]


@st.composite
def fft1_args(draw, dtypes, min_len=1):
    d = draw(st.sampled_from(dtypes))
    s = draw(st.sampled_from([s for s in FFT_SHAPES if min(s) >= min_len]))
    x = draw(values(d, s, special=False))
    nd = len(s)
    kw = _kw(axis=draw(maybe(st.integers(-nd, nd - 1))), norm=draw(maybe(st.sampled_from(NORMS))),
             n=draw(maybe(st.sampled_from([None, 2, 3, 6, 8]))))
    return (x,), kw


@st.composite
def fftn_args(draw, dtypes, min_len=1):
    d = draw(st.sampled_from(dtypes))
    s = draw(st.sampled_from([s for s in FFT_SHAPES if min(s) >= min_len]))
    x = draw(values(d, s, special=False))
    nd = len(s)
    kw = _kw(norm=draw(maybe(st.sampled_from(NORMS))))
    axes = draw(maybe(st.one_of(st.none(), st.lists(st.integers(-nd, nd - 1), min_size=1, max_size=nd,
                                                      unique_by=lambda a: a % nd).map(tuple))))
    if axes is not ABSENT:
        kw["axes"] = axes
    if draw(st.booleans()):
        k = len(axes) if axes not in (ABSENT, None) else nd
        kw["s"] = tuple(draw(st.lists(st.sampled_from([2, 3, 4, 6]), min_size=k, max_size=k)))
    return (x,), kw


@st.composite
def freq_args(draw):
    return (draw(st.sampled_from([1, 2, 5, 8])),), _kw(d=draw(maybe(st.sampled_from([1.0, 0.5, 2.0]))),
                                                       dtype=draw(maybe(st.sampled_from(REAL).map(Dt))),
                                                       device=draw(maybe(st.just(DEVICE))))


@st.composite
def shift_args(draw):
    d = draw(st.sampled_from(FLOATS))
    s = draw(st.sampled_from(FFT_SHAPES))
    nd = len(s)
    return (draw(values(d, s)),), _kw(axes=draw(maybe(st.one_of(
        st.none(), st.integers(-nd, nd - 1),
        st.lists(st.integers(0, nd - 1), unique=True, min_size=1, max_size=nd).map(tuple)))))


def fft_entries():
    E = []
    for name in ("fft", "ifft"):
        E.append(Entry(f"fft.{name}", fft1_args(COMPLEX), "accum"))
        E.append(Entry(f"fft.{name}n", fftn_args(COMPLEX), "accum"))
    E += [
        Entry("fft.rfft", fft1_args(REAL), "accum"),
        Entry("fft.irfft", fft1_args(COMPLEX, 2), "accum"),
        Entry("fft.rfftn", fftn_args(REAL), "accum"),
        Entry("fft.irfftn", fftn_args(COMPLEX, 2), "accum"),
        Entry("fft.hfft", fft1_args(COMPLEX, 2), "accum"),
        Entry("fft.ihfft", fft1_args(REAL), "accum"),
        Entry("fft.fftfreq", freq_args(), "close"),
        Entry("fft.rfftfreq", freq_args(), "close"),
        Entry("fft.fftshift", shift_args(), "exact"),
        Entry("fft.ifftshift", shift_args(), "exact"),
    ]
    return E
