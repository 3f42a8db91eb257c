"""tlaloc.numpy.linalg: NumPy's linalg signatures over tlaloc.linalg (`norm`, `lstsq`,
`multi_dot`, `svd(compute_uv=)`, `eigh(UPLO=)`, ...); the rest are tlaloc.linalg's own."""
from __future__ import annotations

import builtins

import tlaloc as _xp
from tlaloc import linalg as _la
from tlaloc.linalg import (cholesky, cross, det, diagonal, eig, eigvals, inv,  # noqa: F401
                           matrix_norm, matrix_power, matrix_transpose, outer, qr, slogdet,
                           solve, svdvals, tensordot, trace, vecdot, vector_norm)

LinAlgError = ValueError    # what tlaloc.linalg raises for a matrix of the wrong shape


def _float(a):
    a = _xp.asarray(a)
    return a if a.dtype.kind in "fc" else _xp.astype(a, _xp.float64)


def norm(x, ord=None, axis=None, keepdims=False):
    """NumPy's `np.linalg.norm`: the 2-norm of the flattened array (ord=None, axis=None), a
    vector norm over an int axis (or of a 1-d x), a matrix norm over a pair of axes (or of
    a 2-d x)."""
    x = _float(x)
    if axis is None:
        if ord is None:
            return vector_norm(x, axis=None, keepdims=keepdims)
        if x.ndim == 1:
            axis = 0
        elif x.ndim == 2:
            axis = (0, 1)
        else:
            raise ValueError(f"norm: ord={ord!r} needs a 1-d or 2-d array or an axis, "
                             f"got {x.ndim}-d")
    if isinstance(axis, int):
        axis = (axis,)
    axis = tuple(axis)
    if len(axis) == 1:
        if isinstance(ord, str):
            raise ValueError(f"norm: ord={ord!r} is a matrix norm; a vector norm takes a number")
        return vector_norm(x, axis=axis[0], keepdims=keepdims, ord=2 if ord is None else ord)
    if len(axis) != 2:
        raise ValueError(f"norm: axis must be an int or a pair of ints, got {axis!r}")
    rows, cols = (a % x.ndim for a in axis)
    if rows == cols:
        raise ValueError(f"norm: the two axes are the same ({axis!r})")
    moved = _xp.moveaxis(x, (rows, cols), (-2, -1))
    out = matrix_norm(moved, ord="fro" if ord is None else ord)
    if keepdims:
        shape = list(x.shape)
        shape[rows] = shape[cols] = 1
        out = _xp.reshape(out, tuple(shape))
    return out


def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """NumPy's `np.linalg.svd`: (U, S, Vh), or S alone for compute_uv=False."""
    a = _xp.asarray(a)
    if not compute_uv:
        return svdvals(a)
    return _la.svd(a, full_matrices=full_matrices)


def eigh(a, UPLO="L"):
    """NumPy's `np.linalg.eigh`, reading the lower (UPLO="L") or upper triangle."""
    return _la.eigh(_triangle("eigh", _xp.asarray(a), UPLO))


def eigvalsh(a, UPLO="L"):
    """NumPy's `np.linalg.eigvalsh`, reading the lower (UPLO="L") or upper triangle."""
    return _la.eigvalsh(_triangle("eigvalsh", _xp.asarray(a), UPLO))


def _triangle(name, a, uplo):
    """The Hermitian matrix of which NumPy's eigh reads one triangle (UPLO), built from
    that triangle (the diagonal's imaginary part is dropped, as LAPACK does)."""
    if uplo not in ("L", "U"):
        raise ValueError(f"{name}: UPLO must be 'L' or 'U', got {uplo!r}")
    if uplo == "U":
        a = _xp.conj(_xp.matrix_transpose(a))     # the upper triangle as a lower one
    strict = _xp.tril(a, k=-1)
    diag = _xp.astype(_xp.real(_la.diagonal(a)), a.dtype)
    eye = _xp.eye(a.shape[-1], dtype=a.dtype, device=a.device)
    return strict + _xp.conj(_xp.matrix_transpose(strict)) + diag[..., None] * eye


def matrix_rank(A, tol=None, hermitian=False, *, rtol=None):
    """NumPy's `np.linalg.matrix_rank`: singular values above `tol` (absolute) or
    rtol * largest (default: max(M, N) * eps)."""
    A = _xp.asarray(A)
    if tol is None:
        return _la.matrix_rank(A, rtol=rtol)
    return _xp.count_nonzero(svdvals(A) > tol, axis=-1)


def pinv(a, rcond=None, hermitian=False, *, rtol=None):
    """NumPy's `np.linalg.pinv` (rcond is NumPy's older name for rtol)."""
    return _la.pinv(_xp.asarray(a), rtol=rtol if rcond is None else rcond)


def lstsq(a, b, rcond=None):
    """NumPy's `np.linalg.lstsq`: (x, residuals, rank, s), x minimising |b - a x| (the
    minimum-norm one when a is rank-deficient), through the pseudo-inverse."""
    a, b = _float(a), _float(b)
    if a.ndim != 2 or b.ndim not in (1, 2):
        raise ValueError(f"lstsq: a must be 2-d and b 1-d or 2-d, got {a.shape} and {b.shape}")
    m, n = a.shape
    s = svdvals(a)
    eps = _xp.finfo(a.dtype).eps
    cutoff = builtins.max(m, n) * eps if rcond is None else rcond
    x = _la.pinv(a, rtol=cutoff) @ b
    rank = builtins.int(_xp.count_nonzero(s > cutoff * _xp.max(s))) if s.shape[0] else 0
    if rank == n and m > n:
        r = b - a @ x
        residuals = _xp.sum(_xp.real(r * _xp.conj(r)), axis=0)
        residuals = _xp.reshape(residuals, (1,)) if b.ndim == 1 else residuals
    else:
        residuals = _xp.zeros((0,), dtype=_xp.real(s).dtype, device=a.device)
    return x, residuals, rank, s


def multi_dot(arrays):
    """NumPy's `np.linalg.multi_dot`: the chained product (1-d ends as row / column vectors)."""
    arrays = [_xp.asarray(a) for a in arrays]
    if len(arrays) < 2:
        raise ValueError("multi_dot: at least two arrays are needed")
    out = arrays[0]
    for b in arrays[1:]:
        out = out @ b
    return out
