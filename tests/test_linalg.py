"""tlaloc.linalg against numpy.linalg, on the compiled (XLA + LAPACK) and interpreter tiers."""
import numpy as np
import pytest

import tlaloc as xp
from helpers import random_normal as rand, assert_matches

L = xp.linalg

# factorisations of well-conditioned matrices: looser than the elementwise tolerances
TOL = {"float32": (2e-4, 2e-5), "complex64": (2e-4, 2e-5),
       "float64": (1e-10, 1e-12), "complex128": (1e-10, 1e-12), "float16": (5e-3, 5e-3)}
DTYPES = ["float32", "float64", "complex64", "complex128"]




def well_conditioned(shape, dtype, seed=0):
    a = rand(shape, dtype, seed)
    return (a + 2 * shape[-1] * np.eye(shape[-1])).astype(dtype)


def hermitian_pd(shape, dtype, seed=0):
    a = rand(shape, dtype, seed)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def close(actual, expected, dtype=None, **kw):
    dtype = str(np.asarray(expected).dtype) if dtype is None else dtype
    r, a = TOL[dtype]
    assert_matches(actual, expected, rtol=kw.get("rtol", r), atol=kw.get("atol", a))


def values(*arrays):
    """Evaluate `arrays` in one program and return them as NumPy arrays."""
    xp.eval(*arrays)
    return [np.asarray(a) for a in arrays]


def mT(a):
    return np.swapaxes(a, -1, -2)


# ----------------------------------------------------------------------------- re-exports

def test_namespace():
    assert xp.linalg.matmul is xp.matmul and xp.linalg.tensordot is xp.tensordot
    assert xp.linalg.vecdot is xp.vecdot and xp.linalg.matrix_transpose is xp.matrix_transpose
    for name in ("cholesky", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh",
                 "inv", "matrix_norm", "matrix_power", "matrix_rank", "outer", "pinv", "qr",
                 "slogdet", "solve", "svd", "svdvals", "trace", "vector_norm"):
        assert callable(getattr(xp.linalg, name)), name


# ----------------------------------------------------------------------------- LU family

@pytest.mark.parametrize("dtype", DTYPES)
def test_det_slogdet_inv(tier, dtype):
    a = well_conditioned((2, 3, 4, 4), dtype)
    a[0, 0] = a[0, 0][[1, 0, 3, 2]]  # a row permutation: sign bookkeeping
    x = xp.asarray(a, device=tier)
    d, (s, ld), i = L.det(x), L.slogdet(x), L.inv(x)
    dv, sv, ldv, iv = values(d, s, ld, i)
    es, eld = np.linalg.slogdet(a)
    close(dv, np.linalg.det(a))
    close(sv, es)
    close(ldv, eld)
    close(iv, np.linalg.inv(a))
    assert ldv.dtype == np.dtype(dtype).type(0).real.dtype


def test_det_singular_and_empty(tier):
    sing = np.array([[[1.0, 2.0], [2.0, 4.0]], [[0.0, 0.0], [0.0, 0.0]], [[2.0, 1.0], [1.0, 3.0]]])
    x = xp.asarray(sing, device=tier)
    d, (s, ld) = L.det(x), L.slogdet(x)
    dv, sv, ldv = values(d, s, ld)
    np.testing.assert_allclose(dv, [0.0, 0.0, 5.0], atol=1e-12)
    np.testing.assert_array_equal(sv, [0.0, 0.0, 1.0])
    assert ldv[0] == -np.inf and ldv[1] == -np.inf
    # a 0x0 matrix has determinant 1; an empty batch gives an empty result
    e = xp.asarray(np.zeros((2, 0, 0)), device=tier)
    assert_matches(L.det(e), np.ones(2))
    assert L.det(xp.asarray(np.zeros((0, 3, 3)), device=tier)).shape == (0,)
    assert L.inv(xp.asarray(np.zeros((0, 3, 3)), device=tier)).shape == (0, 3, 3)


def test_inv_singular_is_not_finite(tier):
    """numpy raises LinAlgError; tlaloc documents inf/nan entries instead of a crash."""
    x = xp.asarray(np.array([[1.0, 2.0], [2.0, 4.0]]), device=tier)
    out = np.asarray(L.inv(x))
    assert out.shape == (2, 2) and not np.isfinite(out).all()
    s = np.asarray(L.solve(x, xp.asarray(np.array([1.0, 1.0]), device=tier)))
    assert not np.isfinite(s).all()


@pytest.mark.parametrize("dtype", ["float32", "complex128"])
def test_solve(tier, dtype):
    a = well_conditioned((3, 1, 4, 4), dtype)
    b = rand((2, 4, 3), dtype, seed=1)
    v = rand((4,), dtype, seed=2)
    x1 = xp.asarray(a, device=tier)
    m, vec = L.solve(x1, xp.asarray(b, device=tier)), L.solve(x1, xp.asarray(v, device=tier))
    mv, vv = values(m, vec)
    assert mv.shape == (3, 2, 4, 3) and vv.shape == (3, 1, 4)
    close(mv, np.linalg.solve(a, b))
    close(vv, np.linalg.solve(a, v))


def test_solve_promotes_and_checks(tier):
    a = xp.asarray(well_conditioned((3, 3), "float32"), device=tier)
    b = xp.asarray(rand((3, 2), "float64"), device=tier)
    assert L.solve(a, b).dtype == xp.float64
    with pytest.raises(ValueError):
        L.solve(a, xp.asarray(np.ones(4), device=tier))
    with pytest.raises(ValueError):
        L.solve(xp.asarray(np.ones((3, 4)), device=tier), b)
    with pytest.raises(ValueError):
        L.solve(a, xp.asarray(np.ones((2, 3, 2)), device=tier)[..., :1, :])
    with pytest.raises(TypeError):
        L.solve(xp.asarray(np.eye(3, dtype=np.int32), device=tier), b)


def test_matrix_power(tier):
    a = well_conditioned((2, 3, 3), "float64") / 6
    x = xp.asarray(a, device=tier)
    outs = [L.matrix_power(x, n) for n in (0, 1, 2, 5, -1, -3)]
    got = values(*outs)
    for n, g in zip((0, 1, 2, 5, -1, -3), got):
        close(g, np.linalg.matrix_power(a, n))
    ints = xp.asarray(np.array([[1, 1], [1, 0]], dtype=np.int64), device=tier)
    assert_matches(L.matrix_power(ints, 10), np.linalg.matrix_power(np.array([[1, 1], [1, 0]]), 10))
    with pytest.raises(TypeError):
        L.matrix_power(x, 1.5)
    with pytest.raises(ValueError):
        L.matrix_power(xp.asarray(np.ones((2, 3)), device=tier), 2)


# ----------------------------------------------------------------------------- cholesky, QR

@pytest.mark.parametrize("dtype", DTYPES)
def test_cholesky(tier, dtype):
    a = hermitian_pd((2, 4, 4), dtype)
    x = xp.asarray(a, device=tier)
    lo, up = values(L.cholesky(x), L.cholesky(x, upper=True))
    close(lo, np.linalg.cholesky(a))
    close(up, np.linalg.cholesky(a, upper=True))


def test_cholesky_not_positive_definite(tier):
    a = np.stack([hermitian_pd((3, 3), "float64"), -np.eye(3)])
    out = np.asarray(L.cholesky(xp.asarray(a, device=tier)))
    close(out[0], np.linalg.cholesky(a[0]))
    assert np.isnan(out[1][np.tril_indices(3)]).all() and (np.triu(out[1], 1) == 0).all()


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 6, 2)])
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr(tier, shape, mode):
    dtype = "complex64" if shape == (3, 5) else "float64"
    a = rand(shape, dtype)
    q, r = L.qr(xp.asarray(a, device=tier), mode=mode)
    qv, rv = values(q, r)
    eq, er = np.linalg.qr(a, mode=mode)
    assert qv.shape == eq.shape and rv.shape == er.shape and qv.dtype == eq.dtype
    close(qv @ rv, a)
    k = qv.shape[-1]
    close(mT(qv).conj() @ qv, np.broadcast_to(np.eye(k, dtype=dtype), qv.shape[:-2] + (k, k)))
    np.testing.assert_array_equal(np.tril(rv, -1), 0)
    close(np.abs(rv), np.abs(er))  # unique up to the signs of Q's columns


def test_qr_empty(tier):
    q, r = L.qr(xp.asarray(np.zeros((3, 0)), device=tier), mode="complete")
    assert_matches(q, np.eye(3))
    assert r.shape == (3, 0)
    q, r = L.qr(xp.asarray(np.zeros((0, 3)), device=tier))
    assert q.shape == (0, 0) and r.shape == (0, 3)
    with pytest.raises(ValueError):
        L.qr(xp.asarray(np.eye(2), device=tier), mode="r")


# ----------------------------------------------------------------------------- eigen

@pytest.mark.parametrize("dtype", DTYPES)
def test_eigh(tier, dtype):
    a = hermitian_pd((2, 4, 4), dtype)
    x = xp.asarray(a, device=tier)
    (w, v), wo = L.eigh(x), L.eigvalsh(x)
    wv, vv, wov = values(w, v, wo)
    ew = np.linalg.eigvalsh(a)
    close(wv, ew)
    close(wov, ew)
    assert vv.dtype == np.dtype(dtype) and wv.dtype == ew.dtype
    close(a @ vv, vv * wv[..., None, :], dtype)
    close(mT(vv).conj() @ vv, np.broadcast_to(np.eye(4, dtype=dtype), a.shape), dtype)


def test_eigh_reads_lower_triangle(tier):
    a = hermitian_pd((3, 3), "float64")
    junk = np.tril(a) + np.triu(np.full((3, 3), 7.0), 1)
    close(np.asarray(L.eigvalsh(xp.asarray(junk, device=tier))), np.linalg.eigvalsh(a))


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
def test_eig(tier, dtype):
    a = rand((2, 4, 4), dtype, seed=3)  # real matrices have complex conjugate pairs
    x = xp.asarray(a, device=tier)
    (w, v), wo = L.eig(x), L.eigvals(x)
    wv, vv, wov = values(w, v, wo)
    cdt = np.result_type(dtype, np.complex64)
    assert wv.dtype == cdt and vv.dtype == cdt and wov.dtype == cdt
    close(a @ vv, vv * wv[..., None, :], str(cdt))
    norms = np.linalg.norm(vv, axis=-2)
    close(norms, np.ones((2, 4), norms.dtype), str(cdt))
    key = lambda z: np.sort_complex(np.round(z, 3))  # noqa: E731
    close(key(wov), key(np.linalg.eigvals(a)), str(cdt), rtol=1e-3, atol=1e-3)


def test_eig_non_finite_gives_nan(tier):
    a = np.array([[[1.0, np.nan], [0.0, 1.0]], [[2.0, 0.0], [0.0, 3.0]]])
    w = np.asarray(L.eigvals(xp.asarray(a, device=tier)))
    assert np.isnan(w[0]).all()
    np.testing.assert_allclose(np.sort(w[1].real), [2.0, 3.0])


# ----------------------------------------------------------------------------- SVD family

@pytest.mark.parametrize("shape", [(2, 5, 3), (3, 5)])
@pytest.mark.parametrize("full", [True, False])
def test_svd(tier, shape, full):
    dtype = "float32" if full else "complex128"
    a = rand(shape, dtype)
    u, s, vh = L.svd(xp.asarray(a, device=tier), full_matrices=full)
    uv, sv, vhv = values(u, s, vh)
    eu, es, evh = np.linalg.svd(a, full_matrices=full)
    assert (uv.shape, sv.shape, vhv.shape) == (eu.shape, es.shape, evh.shape)
    assert (uv.dtype, sv.dtype, vhv.dtype) == (eu.dtype, es.dtype, evh.dtype)
    close(sv, es)
    k = sv.shape[-1]
    close((uv[..., :k] * sv[..., None, :]) @ vhv[..., :k, :], a)


def test_svd_single_factorisation(lazy):
    """U, S and Vh of one call come from one LAPACK call, not three."""
    x = xp.asarray(rand((4, 3), "float64"))
    assert xp.stablehlo(*L.svd(x)).count('"lapack_') == 1
    assert xp.stablehlo(*L.eigh(x[:3])).count('"lapack_') == 1
    # det uses two of LU's three packed outputs: the program returns det alone, so XLA can
    # drop the unused permutation
    text = xp.stablehlo(L.det(x[:3]))
    ret = next(line for line in text.splitlines() if "func.return" in line)
    assert ret.count("%") == 1


def test_svdvals_and_empty(tier):
    a = rand((3, 4, 2), "float64")
    close(np.asarray(L.svdvals(xp.asarray(a, device=tier))), np.linalg.svdvals(a))
    u, s, vh = L.svd(xp.asarray(np.zeros((2, 3, 0)), device=tier))
    assert_matches(u, np.broadcast_to(np.eye(3), (2, 3, 3)))
    assert s.shape == (2, 0) and vh.shape == (2, 0, 0)
    assert L.svdvals(xp.asarray(np.zeros((0, 4, 4)), device=tier)).shape == (0, 4)


def test_pinv_and_rank(tier):
    a = rand((2, 5, 3), "float64")
    a[1, :, 2] = a[1, :, 0] + a[1, :, 1]  # rank 2
    x = xp.asarray(a, device=tier)
    rtol = xp.asarray(np.array([0.9, 1e-12]), device=tier)
    p, r, r2 = L.pinv(x), L.matrix_rank(x), L.matrix_rank(x, rtol=rtol)
    pv, rv, r2v = values(p, r, r2)
    close(pv, np.linalg.pinv(a))
    assert_matches(rv, np.linalg.matrix_rank(a).astype(np.int64))
    assert_matches(r2v, np.linalg.matrix_rank(a, rtol=np.array([0.9, 1e-12])).astype(np.int64))
    close(np.asarray(L.pinv(x, rtol=0.5)), np.linalg.pinv(a, rtol=0.5))
    assert L.pinv(xp.asarray(np.zeros((4, 0)), device=tier)).shape == (0, 4)


# ----------------------------------------------------------------------------- norms

@pytest.mark.parametrize("dtype", ["float32", "complex128"])
def test_matrix_norm(tier, dtype):
    a = rand((2, 4, 3), dtype)
    x = xp.asarray(a, device=tier)
    ords = ["fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]
    got = values(*[L.matrix_norm(x, ord=o) for o in ords], L.matrix_norm(x, ord=1, keepdims=True))
    for o, g in zip(ords, got):
        close(g, np.linalg.matrix_norm(a, ord=o))
    close(got[-1], np.linalg.matrix_norm(a, ord=1, keepdims=True))
    with pytest.raises(ValueError):
        L.matrix_norm(x, ord=3)
    with pytest.raises(ValueError):
        L.matrix_norm(x, ord="f")


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
def test_vector_norm(tier, dtype):
    a = rand((3, 4, 5), dtype)
    a[0, 0, :2] = 0
    x = xp.asarray(a, device=tier)
    cases = [dict(), dict(ord=1), dict(ord=0, axis=1), dict(ord=np.inf, axis=(0, 2)),
             dict(ord=-np.inf, axis=-1), dict(ord=3, axis=(1, 2), keepdims=True),
             dict(ord=-1.5, axis=0), dict(axis=(0, 1, 2), keepdims=True)]
    got = values(*[L.vector_norm(x, **c) for c in cases])
    for c, g in zip(cases, got):
        close(g, np.linalg.vector_norm(a, **c))
    with pytest.raises(TypeError):
        L.vector_norm(xp.asarray(np.ones(3, dtype=np.int32), device=tier))


def test_norms_of_empty(tier):
    e = xp.asarray(np.zeros((0, 3)), device=tier)
    assert float(L.vector_norm(e)) == 0.0
    assert float(L.vector_norm(e, ord=np.inf)) == 0.0
    assert float(L.matrix_norm(e, ord=1)) == 0.0


# ----------------------------------------------------------------------------- elementary

def test_diagonal_trace(tier):
    a = np.arange(2 * 3 * 4, dtype=np.int32).reshape(2, 3, 4)
    x = xp.asarray(a, device=tier)
    offsets = (0, 1, 3, 4, -1, -2, -3, 7)
    got = values(*[L.diagonal(x, offset=k) for k in offsets],
                 *[L.trace(x, offset=k) for k in offsets])
    for k, g in zip(offsets, got):
        assert_matches(g, np.linalg.diagonal(a, offset=k))
    for k, g in zip(offsets, got[len(offsets):]):
        assert_matches(g, np.linalg.trace(a, offset=k, dtype=np.int64))
    f = xp.asarray(a.astype(np.float32), device=tier)
    assert L.trace(f).dtype == xp.float32
    assert L.trace(f, dtype=xp.float64).dtype == xp.float64
    with pytest.raises(ValueError):
        L.diagonal(xp.asarray(np.ones(3), device=tier))
    with pytest.raises(TypeError):
        L.trace(x, offset=1.0)


def test_cross_outer(tier):
    a = rand((2, 3), "float64")
    b = rand((4, 1, 3), "float64", seed=1)
    c = rand((3, 2), "float32", seed=2)
    x, y, z = (xp.asarray(v, device=tier) for v in (a, b, c))
    r1, r2, o = L.cross(x, y), L.cross(z, z[::-1], axis=0), L.outer(x[0], z[:, 0])
    v1, v2, ov = values(r1, r2, o)
    close(v1, np.linalg.cross(a, b))
    close(v2, np.cross(c, c[::-1], axis=0))
    close(ov, np.linalg.outer(a[0], c[:, 0]))
    assert ov.dtype == np.float64
    with pytest.raises(ValueError):
        L.cross(xp.asarray(np.ones((2, 4)), device=tier), xp.asarray(np.ones((2, 4)), device=tier))
    with pytest.raises(ValueError):
        L.outer(x, y)


# ----------------------------------------------------------------------------- dtypes, errors

def test_dtypes_and_errors(tier):
    a = well_conditioned((3, 3), "float32")
    x = xp.asarray(a, device=tier)
    assert L.inv(x).dtype == xp.float32 and L.det(x).dtype == xp.float32
    assert L.eigvals(x).dtype == xp.complex64 and L.svdvals(x).dtype == xp.float32
    h = xp.asarray(a.astype(np.float16), device=tier)
    hv = np.asarray(L.inv(h))
    assert hv.dtype == np.float16
    close(hv.astype(np.float32), np.linalg.inv(a.astype(np.float16).astype(np.float32)), "float16")
    ints = xp.asarray(np.eye(3, dtype=np.int64), device=tier)
    for fn in (L.inv, L.det, L.cholesky, L.eigh, L.svd, L.qr, L.matrix_norm):
        with pytest.raises(TypeError):
            fn(ints)
    for fn in (L.inv, L.det, L.cholesky, L.eigh, L.eig):
        with pytest.raises(ValueError):
            fn(xp.asarray(np.ones((2, 3)), device=tier))
    with pytest.raises(ValueError):
        L.svd(xp.asarray(np.ones(3), device=tier))
    with pytest.raises(TypeError):
        L.det(np.eye(2))


# ----------------------------------------------------------------------------- other platforms

def test_native_emission_off_the_cpu(lazy):
    """Off the CPU, cholesky and triangular solves are the native StableHLO ops (checked here
    by compiling such a module for the CPU client) and LAPACK-only factorisations refuse."""
    from tlaloc._graph import _Plan
    from tlaloc.backends import _jaxlib
    from tlaloc.lowering import lower_program

    class Elsewhere:
        platform = "cuda"

    a = hermitian_pd((2, 4, 4), "float64")
    b = rand((2, 4, 3), "float64", seed=1)
    x, y = xp.asarray(a), xp.asarray(b)
    outs = (L.cholesky(x), L.solve(x, y)[..., :0, :])  # solve: its LAPACK LU refuses below
    plan = _Plan([outs[0]._node], outs[0].device)
    program = plan.program()
    program.device = Elsewhere()
    text = lower_program(program)
    assert '"stablehlo.cholesky"' in text and "lapack" not in text
    client = _jaxlib.cpu_client()
    rt = _jaxlib.Runtime(client, client.local_devices()[0])
    exe = rt.compile(text)
    leaves = [rt.put(np.ascontiguousarray(np.asarray(l.value))) for l in plan.leaves]
    got = np.asarray(rt.execute(exe, rt.handlers([((2, 4, 4), np.float64)]), leaves)[0])
    close(got, np.linalg.cholesky(a))

    tri = xp.asarray(np.tril(a))
    t = xp.asarray(b)
    from tlaloc._graph import bind
    from tlaloc._prims import linalg as lp
    node = bind(lp.triangular_solve, (tri._node, t._node),
                dict(left_side=True, lower=True, transpose_a="TRANSPOSE", unit_diagonal=False))
    plan = _Plan([node], node.device)
    program = plan.program()
    program.device = Elsewhere()
    text = lower_program(program)
    assert '"stablehlo.triangular_solve"' in text and "lapack" not in text
    leaves = [rt.put(np.ascontiguousarray(np.asarray(l.value))) for l in plan.leaves]
    got = np.asarray(rt.execute(rt.compile(text), rt.handlers([((2, 4, 3), np.float64)]), leaves)[0])
    close(got, np.linalg.solve(mT(np.tril(a)), b))

    plan = _Plan([outs[1]._node], outs[1].device)
    program = plan.program()
    program.device = Elsewhere()
    with pytest.raises(NotImplementedError, match="only on the CPU"):
        lower_program(program)
