"""The `linalg` extension of the array API standard (2025.12), written in primitives.

Matrices are the last two axes; leading axes are a batch. Factorisations run once per call:
LU (`det`, `slogdet`, `solve`, `inv`), QR, eigh, eig and SVD are one primitive each whose
outputs come packed in one array (see tlaloc/_prims/linalg.py).

Dtypes. Functions the standard defines for floating-point input raise TypeError for integer
and boolean arrays. float16 and bfloat16 are computed in float32 and returned in their own
dtype (complex results, from `eig`, are complex64). Results follow the standard: float32 in
gives float32 (and complex64) out.

Failures never raise from inside a program: a singular matrix makes `inv` and `solve` return
inf/nan (on the CPU LAPACK's trsm and the interpreter's substitution give inf/nan from the
singular row on; XLA's blocked triangular solve on other devices spreads NaN further), `det`
return 0 and `slogdet` (0, -inf); a matrix that is not positive definite makes `cholesky`'s
factor NaN (its whole triangle); an eigensolver or SVD that does not converge, or `eig` of a
non-finite matrix, gives NaN.
"""
from __future__ import annotations

import builtins
import math
import operator
from typing import NamedTuple

from . import _dtypes as dt
from ._array import Array
from ._prims import linalg as lp
from ._api._core import (axes_of, broadcast_names, broadcast_shapes, broadcast_to_shape, cast,
                         check_bool, check_devices, check_size, constant, eager_host_value,
                         host_leaf, names_of, node_of, normalize_axis, position_of, renamed,
                         scalar_node, wrap)
from ._api import creation as _cr
from ._api import elementwise as _ew
from ._api import statistical as _st
from ._api.linear_algebra import _pair, matmul, matrix_transpose, tensordot, vecdot  # noqa: F401
from ._prims import lax

def __getattr__(name):
    # NumPy's names the standard spells differently say what to write (tlaloc/_numpy_names.py)
    from ._numpy_names import LINALG_SPELLING, missing
    raise missing("tlaloc.linalg", name, LINALG_SPELLING)


__all__ = ["cholesky", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "inv",
           "matmul", "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "outer",
           "pinv", "qr", "slogdet", "solve", "svd", "svdvals", "tensordot", "trace", "vecdot",
           "vector_norm", "EighResult", "EigResult", "QRResult", "SlogdetResult", "SVDResult"]

_inf = builtins.float("inf")


class EighResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class EigResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class QRResult(NamedTuple):
    Q: Array
    R: Array


class SlogdetResult(NamedTuple):
    sign: Array
    logabsdet: Array


class SVDResult(NamedTuple):
    U: Array
    S: Array
    Vh: Array


# ============================================================================ helpers

def _const(node, value, shape=None, dtype=None):
    return constant(value, node.aval.shape if shape is None else shape,
                    node.aval.dtype if dtype is None else dtype, node.device)


def _floating(name, x, argname="x"):
    node = node_of(name, x, argname)
    if node.aval.dtype.kind not in dt.FLOATING_KINDS:
        raise TypeError(f"{name}: {argname} must have a floating-point dtype, got {node.aval.dtype}")
    return node


def _matrix(name, x, *, square=False, argname="x"):
    node = _floating(name, x, argname)
    shape = node.aval.shape
    if len(shape) < 2:
        raise ValueError(f"{name}: {argname} must have at least 2 dimensions, got shape {shape}")
    if square and shape[-1] != shape[-2]:
        raise ValueError(f"{name}: {argname} must be square matrices, got shape {shape}")
    return node


def _lapack(node):
    """`node` in a dtype LAPACK has: float16 and bfloat16 are computed in float32."""
    return cast(node, dt.float32) if node.aval.dtype in (dt.float16, dt.bfloat16) else node


def _restore(node, dtype):
    """A result computed by `_lapack` back in the caller's precision (real results only)."""
    if dtype in (dt.float16, dt.bfloat16) and node.aval.dtype.kind == "f":
        return cast(node, dtype)
    return node


def _unpack(node, parts, *names):
    """The outputs `names` packed in `node` (see tlaloc/_prims/linalg.py), in that order.
    Only those are recorded: a slice nobody uses would still count as a consumer of the
    packed node, and the evaluator returns intermediates with outside consumers as extra
    program outputs (which would keep XLA from dropping the unused work)."""
    batch = node.aval.shape[:-1]
    nb = len(batch)
    packed = node.aval.dtype
    host = eager_host_value(node)
    if host is not None and node.aval.names is None and all(
            d is packed or (packed.kind == "c" and d is dt.real_of(packed))
            for name, _, d in parts if name in names):
        # computed as it was recorded (a small host value): its parts are NumPy's views
        # of it, where the slices, reshapes and real parts would each be an operation run
        # as recorded (half of a small svd's time)
        return _host_parts(host, node.device, batch, parts, names)
    out, offset = {}, 0
    for name, core, d in parts:
        size = math.prod(core)
        if name in names:
            piece = node
            if (offset, offset + size) != (0, node.aval.shape[-1]):
                piece = lax.slice(node, start=(0,) * nb + (offset,),
                                  limit=batch + (offset + size,), strides=(1,) * (nb + 1))
            if batch + core != piece.aval.shape:
                piece = lax.reshape(piece, shape=batch + core)
            if d is not packed:
                if packed.kind == "c" and d.kind != "c":
                    piece = lax.real(piece)
                piece = cast(piece, d)
            out[name] = piece
        offset += size
    return [out[n] for n in names]


def _host_parts(host, device, batch, parts, names):
    """_unpack's parts of the packed NumPy value `host`, as computed arrays."""
    out, offset = {}, 0
    for name, core, d in parts:
        size = math.prod(core)
        if name in names:
            piece = host[..., offset:offset + size].reshape(batch + core)
            if piece.dtype != d.numpy:        # a real part of complex values
                piece = piece.real
            out[name] = host_leaf(piece, device)
        offset += size
    return [out[n] for n in names]


def _conj(node):
    return _ew.conj(wrap(node))._node


def _mT(node):
    nd = len(node.aval.shape)
    return lax.transpose(node, perm=tuple(range(nd - 2)) + (nd - 1, nd - 2))


def _reduce(prim, node, axes):
    return prim(node, axes=tuple(axes)) if axes else node


def _like(x, node):
    """A matrix function's result: every name of x when it has x's shape (inv, cholesky,
    a square q or u), else what its primitives gave (x's batch axes' names)."""
    names = x._node.aval.names if isinstance(x, Array) else None
    if names is not None and node.aval.shape == x._node.aval.shape:
        return renamed(node, names)
    return node


def _keep(node, shape, axes, keepdims, names=None):
    """keepdims: the reduced axes back, of size 1 (with their names: `names`, the input's)."""
    if not keepdims:
        return node
    return renamed(lax.reshape(node,
                               shape=tuple(1 if i in axes else n for i, n in enumerate(shape))),
                   names)


def _max_or_zero(node, axes):
    """max over `axes` of non-negative values; 0 when they are empty (numpy would raise)."""
    m = _reduce(lax.reduce_max, node, axes)
    return lax.maximum(m, _const(m, 0))


def _eye(n, dtype, batch, device):
    eye = _cr.eye(n, dtype=dtype, device=device)._node
    return broadcast_to_shape(eye, tuple(batch) + (n, n))


def _diag_node(node, offset=0):
    """The `offset` diagonal of the last two axes: a strided slice of the flattened matrix."""
    shape = node.aval.shape
    batch, (m, n) = shape[:-2], shape[-2:]
    if offset >= 0:
        length, start = builtins.max(0, builtins.min(m, n - offset)), offset
    else:
        length, start = builtins.max(0, builtins.min(m + offset, n)), -offset * n
    flat = lax.reshape(node, shape=batch + (m * n,))
    nb = len(batch)
    if length == 0:
        start = limit = 0
    else:
        limit = start + (length - 1) * (n + 1) + 1
    return lax.slice(flat, start=(0,) * nb + (start,), limit=batch + (limit,),
                     strides=(1,) * nb + (n + 1,))


# ============================================================================ re-exported
# matmul, matrix_transpose, tensordot and vecdot are the main namespace's functions.


# ============================================================================ elementary

def diagonal(x, /, *, offset=0):
    """The `offset` diagonal (0 main, > 0 above, < 0 below) of each matrix in `x`."""
    node = node_of("diagonal", x)
    if x.ndim < 2:
        raise ValueError(f"diagonal: x must have at least 2 dimensions, got shape {x.shape}")
    offset = _int("diagonal", offset, "offset")
    return wrap(_diag_node(node, offset))


def trace(x, /, *, offset=0, dtype=None):
    """The sum of the `offset` diagonal of each matrix; dtype as in `sum`."""
    node = node_of("trace", x)
    if x.ndim < 2:
        raise ValueError(f"trace: x must have at least 2 dimensions, got shape {x.shape}")
    if node.aval.dtype.kind == "b":
        raise TypeError("trace: x must have a numeric dtype, got bool")
    offset = _int("trace", offset, "offset")
    acc = _st._accumulator("trace", node, dtype)
    return _st.sum(wrap(_diag_node(node, offset)), axis=-1, dtype=acc)


def _int(name, value, argname):
    if isinstance(value, builtins.bool):
        raise TypeError(f"{name}: {argname} must be an int, got {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{name}: {argname} must be an int, got {value!r}") from None




def outer(x1, x2, /):
    """The outer product of two vectors: shape (N, M)."""
    a, b = _pair("outer", x1, x2)
    if len(a.aval.shape) != 1 or len(b.aval.shape) != 1:
        raise ValueError(f"outer: x1 and x2 must be 1-dimensional, got shapes {x1.shape} and {x2.shape}")
    shape = a.aval.shape + b.aval.shape
    check_size("outer", shape, a.aval.dtype, a.device)
    a = lax.broadcast_in_dim(a, shape=shape, dims=(0,))
    b = lax.broadcast_in_dim(b, shape=shape, dims=(1,))
    return wrap(lax.multiply(a, b))


def cross(x1, x2, /, *, axis=-1):
    """The cross product of 3-element vectors along `axis` (counted on the broadcast shape)."""
    a, b = _pair("cross", x1, x2)
    shape = broadcast_shapes(a.aval.shape, b.aval.shape, name="cross")
    if not shape:
        raise ValueError("cross: x1 and x2 must have at least one dimension")
    if type(axis) is str:   # a name of the broadcast operands' axes
        axis = position_of("cross", broadcast_names("cross", [names_of(a), names_of(b)]), axis)
    ax = normalize_axis("cross", axis, len(shape))
    k = ax - len(shape)  # from the end: valid for both operands before broadcasting
    for arr, argname in ((a, "x1"), (b, "x2")):
        s = arr.aval.shape
        if len(s) < -k or s[k] != 3:
            raise ValueError(f"cross: {argname} must have size 3 along axis {axis}, got shape {s}")
    a, b = broadcast_to_shape(a, shape), broadcast_to_shape(b, shape)

    def part(node, i):
        start = tuple(i if d == ax else 0 for d in range(len(shape)))
        limit = tuple(i + 1 if d == ax else n for d, n in enumerate(shape))
        return lax.slice(node, start=start, limit=limit, strides=(1,) * len(shape))

    (a0, a1, a2), (b0, b1, b2) = [part(a, i) for i in range(3)], [part(b, i) for i in range(3)]

    def term(u, v, w, z):
        return lax.subtract(lax.multiply(u, v), lax.multiply(w, z))

    parts = (term(a1, b2, a2, b1), term(a2, b0, a0, b2), term(a0, b1, a1, b0))
    return wrap(lax.concatenate(*parts, axis=ax))


# ============================================================================ norms

def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """The vector p-norm over `axis` (None: all axes; a tuple: those axes as one vector).
    ord: any real p, inf (max |x|), -inf (min |x|), 0 (number of non-zeros)."""
    node = _floating("vector_norm", x)
    if isinstance(ord, builtins.bool) or not isinstance(ord, (builtins.int, builtins.float)):
        raise TypeError(f"vector_norm: ord must be a real number, got {ord!r}")
    axes = axes_of("vector_norm", x, axis)
    check_bool("vector_norm", keepdims, "keepdims")
    a = _ew.abs(wrap(node))._node
    if ord == _inf:
        out = _max_or_zero(a, axes)
    elif ord == -_inf:
        out = _reduce(lax.reduce_min, a, axes)
    elif ord == 0:
        nonzero = lax.compare(a, _const(a, 0), direction="NE")
        out = _reduce(lax.reduce_sum, cast(nonzero, a.aval.dtype), axes)
    elif ord == 1:
        out = _reduce(lax.reduce_sum, a, axes)
    elif ord == 2:
        out = lax.sqrt(_reduce(lax.reduce_sum, lax.multiply(a, a), axes))
    else:
        p = broadcast_to_shape(scalar_node(builtins.float(ord), a.aval.dtype, a.device), a.aval.shape)
        total = _reduce(lax.reduce_sum, lax.power(a, p), axes)
        inv = broadcast_to_shape(scalar_node(1.0 / ord, a.aval.dtype, a.device), total.aval.shape)
        out = lax.power(total, inv)
    return wrap(_keep(out, x.shape, axes, keepdims, x._node.aval.names))


def _valid_matrix_ord(ord):
    if isinstance(ord, str):
        return ord in ("fro", "nuc")
    if isinstance(ord, builtins.bool) or not isinstance(ord, (builtins.int, builtins.float)):
        return False
    return ord in (1, -1, 2, -2, _inf, -_inf)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """The matrix norm of each matrix: 'fro', 'nuc' (sum of singular values), 2 / -2 (largest /
    smallest singular value), 1 / -1 (max / min column sum of |x|), inf / -inf (max / min row
    sum)."""
    node = _matrix("matrix_norm", x)
    check_bool("matrix_norm", keepdims, "keepdims")
    if not _valid_matrix_ord(ord):
        raise ValueError(f"matrix_norm: ord must be one of 'fro', 'nuc', 1, -1, 2, -2, inf, -inf; "
                         f"got {ord!r}")
    nd = x.ndim
    rows, cols = nd - 2, nd - 1
    if ord in ("nuc", 2, -2):
        s = svdvals(x)._node  # (..., k), descending (the svd primitive carries its rules)
        if ord == "nuc":
            out = lax.reduce_sum(s, axes=(nd - 2,))
        elif ord == 2:
            out = _max_or_zero(s, (nd - 2,))
        else:
            out = lax.reduce_min(s, axes=(nd - 2,))
    else:
        a = _ew.abs(x)._node
        if ord == "fro":
            out = lax.sqrt(lax.reduce_sum(lax.multiply(a, a), axes=(rows, cols)))
        else:
            summed = lax.reduce_sum(a, axes=(rows,) if ord in (1, -1) else (cols,))
            last = (len(summed.aval.shape) - 1,)
            out = _max_or_zero(summed, last) if ord > 0 else lax.reduce_min(summed, axes=last)
    return wrap(_keep(_restore(out, dt.real_of(node.aval.dtype)), x.shape, (rows, cols), keepdims,
                      x._node.aval.names))


# ============================================================================ LU: det, slogdet, solve, inv

def _lu(name, x, *outputs):
    """(x's dtype, the LU outputs named)."""
    node = _matrix(name, x, square=True)
    work = _lapack(node)
    n = node.aval.shape[-1]
    return node.aval.dtype, _unpack(lax.lu(work), lp.lu_parts(n, n, work.aval.dtype), *outputs)


def _swap_sign(pivots, dtype):
    """(-1) ** (number of row swaps LAPACK made), per matrix, in `dtype`."""
    shape = pivots.aval.shape
    iota = lax.iota(shape=shape, dtype=dt.int32, dim=len(shape) - 1, device=pivots.device)
    moved = cast(lax.compare(pivots, iota, direction="NE"), dt.int32)
    count = lax.reduce_sum(moved, axes=(len(shape) - 1,))
    odd = lax.remainder(count, _const(count, 2))
    one = _const(odd, 1)
    return cast(lax.subtract(one, lax.add(odd, odd)), dtype)


def det(x, /):
    """The determinant of each square matrix (0 for a singular one, 1 for a 0x0 one)."""
    d, (lu, pivots) = _lu("det", x, "lu", "pivots")
    diag = _diag_node(lu)
    prod = lax.reduce_prod(diag, axes=(len(diag.aval.shape) - 1,))
    return wrap(_restore(lax.multiply(_swap_sign(pivots, prod.aval.dtype), prod), d))


def slogdet(x, /):
    """(sign, log|det|) of each square matrix; sign is 0 and logabsdet -inf when singular.
    For complex matrices sign is det / |det|."""
    d, (lu, pivots) = _lu("slogdet", x, "lu", "pivots")
    diag = _diag_node(lu)
    last = (len(diag.aval.shape) - 1,)
    if diag.aval.dtype.kind == "c":   # diag / |diag| (0 where singular): differentiable
        mag = lax.abs(diag)
        zero = lax.compare(mag, _const(mag, 0), direction="EQ")
        safe = cast(lax.select(zero, _const(mag, 1), mag), diag.aval.dtype)
        signs = lax.select(zero, _const(diag, 0), lax.divide(diag, safe))
    else:
        signs = lax.sign(diag)
    sign = lax.multiply(_swap_sign(pivots, diag.aval.dtype), lax.reduce_prod(signs, axes=last))
    logabs = lax.reduce_sum(lax.log(lax.abs(diag)), axes=last)
    return SlogdetResult(wrap(_restore(sign, d)), wrap(_restore(logabs, dt.real_of(d))))


def _permutation_matrix(perm, dtype):
    """P with P[..., i, j] = (perm[..., i] == j), so (P @ b)[i] = b[perm[i]]."""
    shape = perm.aval.shape + perm.aval.shape[-1:]
    nd = len(shape)
    rows = lax.broadcast_in_dim(perm, shape=shape, dims=tuple(range(nd - 1)))
    cols = lax.iota(shape=shape, dtype=dt.int32, dim=nd - 1, device=perm.device)
    return cast(lax.compare(rows, cols, direction="EQ"), dtype)


def _lu_solve(lu, pb):
    """Solve L U x = pb with the packed LU factors (b already permuted)."""
    y = lax.triangular_solve(lu, pb, left_side=True, lower=True, transpose_a="NO_TRANSPOSE",
                             unit_diagonal=True)
    return lax.triangular_solve(lu, y, left_side=True, lower=False, transpose_a="NO_TRANSPOSE",
                                unit_diagonal=False)


def inv(x, /):
    """The inverse of each square matrix; a singular matrix gives inf/nan entries."""
    d, (lu, perm) = _lu("inv", x, "lu", "permutation")
    return wrap(_like(x, _restore(_lu_solve(lu, _permutation_matrix(perm, lu.aval.dtype)), d)))


def solve(x1, x2, /):
    """The solution X of x1 @ X = x2. x2 of shape (M,) is one vector for every matrix (result
    shape x1.shape[:-1]); otherwise x2 is (..., M, K) and batch dims broadcast."""
    a = _matrix("solve", x1, square=True, argname="x1")
    b = _floating("solve", x2, "x2")
    check_devices("solve", a, b)
    d = dt.promote(a.aval.dtype, b.aval.dtype)
    n = x1.shape[-1]
    if x2.ndim == 0:
        raise ValueError("solve: x2 must have at least 1 dimension")
    vector = x2.ndim == 1
    if vector:
        if x2.shape[0] != n:
            raise ValueError(f"solve: x2 of shape {x2.shape} does not match x1 of shape {x1.shape}")
        batch = x1.shape[:-2]
        b = broadcast_to_shape(lax.reshape(b, shape=(n, 1)), batch + (n, 1))
    else:
        if x2.shape[-2] != n:
            raise ValueError(f"solve: x2 of shape {x2.shape} does not match x1 of shape {x1.shape}")
        batch = broadcast_shapes(x1.shape[:-2], x2.shape[:-2], name="solve")
        b = broadcast_to_shape(b, batch + x2.shape[-2:])
    a = _lapack(cast(a, d))
    b = cast(b, a.aval.dtype)
    lu, perm = _unpack(lax.lu(a), lp.lu_parts(n, n, a.aval.dtype), "lu", "permutation")
    lu = broadcast_to_shape(lu, batch + (n, n))
    perm = broadcast_to_shape(perm, batch + (n,))
    # P @ b by a one-hot matmul: exact, but an inf/nan in b spreads to the whole column
    pb = matmul(wrap(_permutation_matrix(perm, b.aval.dtype)), wrap(b))._node
    out = _lu_solve(lu, pb)
    if vector:
        out = lax.reshape(out, shape=batch + (n,))
    return wrap(_restore(out, d))


def matrix_power(x, n, /):
    """x raised to the integer power n by repeated squaring; n < 0 inverts x first; n == 0
    gives the identity."""
    node = node_of("matrix_power", x)
    n = _int("matrix_power", n, "n")
    if node.aval.dtype.kind == "b":
        raise TypeError("matrix_power: x must have a numeric dtype, got bool")
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(f"matrix_power: x must be square matrices, got shape {x.shape}")
    if n == 0:
        return wrap(_like(x, _eye(x.shape[-1], node.aval.dtype, x.shape[:-2], node.device)))
    if n < 0:
        if node.aval.dtype.kind not in dt.FLOATING_KINDS:
            raise TypeError("matrix_power: a negative power needs a floating-point x")
        x, n = inv(x), -n
    result, base = None, x
    while True:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if not n:
            return result if result is not x else wrap(_like(x, x._node))
        base = matmul(base, base)


# ============================================================================ cholesky, QR

def cholesky(x, /, *, upper=False):
    """The Cholesky factor of each Hermitian positive-definite matrix (read from its lower
    triangle): lower L with x = L @ L^H, or upper U = L^H. Not positive definite: NaN in the
    whole triangle (zeros in the other, as jax gives)."""
    node = _matrix("cholesky", x, square=True)
    check_bool("cholesky", upper, "upper")
    d = node.aval.dtype
    lower = _cr.tril(wrap(lax.cholesky(_lapack(node))))._node
    out = _conj(_mT(lower)) if upper else lower
    return wrap(_like(x, _restore(out, d)))


def qr(x, /, *, mode="reduced"):
    """Q and R with x = Q @ R. mode 'reduced': Q (..., M, K), R (..., K, N) with K = min(M, N);
    'complete': Q (..., M, M), R (..., M, N)."""
    node = _matrix("qr", x)
    if mode not in ("reduced", "complete"):
        raise ValueError(f"qr: mode must be 'reduced' or 'complete', got {mode!r}")
    d = node.aval.dtype
    work = _lapack(node)
    m, n = x.shape[-2:]
    full = mode == "complete"
    q, r = _unpack(lax.qr(work, full=full), lp.qr_result_parts(m, n, work.aval.dtype, full),
                   "q", "r")
    return QRResult(wrap(_like(x, _restore(q, d))), wrap(_like(x, _restore(r, d))))


# ============================================================================ eigen

def eigh(x, /):
    """Eigenvalues (ascending, real) and eigenvectors (columns) of each Hermitian matrix, read
    from its lower triangle."""
    node = _matrix("eigh", x, square=True)
    d = node.aval.dtype
    work = _lapack(node)
    n = x.shape[-1]
    w, v = _unpack(lax.eigh(work, vectors=True), lp.eigh_parts(n, work.aval.dtype),
                   "eigenvalues", "eigenvectors")
    return EighResult(wrap(_like(x, _restore(w, dt.real_of(d)))), wrap(_like(x, _restore(v, d))))


def eigvalsh(x, /):
    """Eigenvalues (ascending, real) of each Hermitian matrix, read from its lower triangle."""
    node = _matrix("eigvalsh", x, square=True)
    d = node.aval.dtype
    return wrap(_restore(lax.eigh(_lapack(node), vectors=False), dt.real_of(d)))


def eig(x, /):
    """Eigenvalues and right eigenvectors (columns, unit 2-norm) of each square matrix, both
    complex; x @ v = v * w. Eigenvalues come in LAPACK geev's order (not sorted)."""
    node = _matrix("eig", x, square=True)
    work = _lapack(node)
    n = x.shape[-1]
    w, v = _unpack(lax.eig(work, vectors=True), lp.eig_parts(n, work.aval.dtype),
                   "eigenvalues", "eigenvectors")
    return EigResult(wrap(_like(x, w)), wrap(_like(x, v)))


def eigvals(x, /):
    """Eigenvalues (complex, LAPACK geev's order) of each square matrix."""
    node = _matrix("eigvals", x, square=True)
    return wrap(lax.eig(_lapack(node), vectors=False))


# ============================================================================ SVD

def _svdvals_node(node):
    return lax.svd(_lapack(node), mode="N")


def svdvals(x, /):
    """Singular values of each matrix, descending, real: shape (..., min(M, N))."""
    node = _matrix("svdvals", x)
    return wrap(_restore(_svdvals_node(node), dt.real_of(node.aval.dtype)))


def svd(x, /, *, full_matrices=True):
    """U, S, Vh with x = U @ diag(S) @ Vh; S descending and real. full_matrices: U (..., M, M)
    and Vh (..., N, N); otherwise (..., M, K) and (..., K, N) with K = min(M, N)."""
    node = _matrix("svd", x)
    check_bool("svd", full_matrices, "full_matrices")
    d = node.aval.dtype
    work = _lapack(node)
    batch, (m, n) = x.shape[:-2], x.shape[-2:]
    k = builtins.min(m, n)
    if k == 0:  # no singular values; the full bases are identities
        s = _const(node, 0, shape=batch + (0,), dtype=dt.real_of(d))
        if full_matrices:
            u, vh = _eye(m, d, batch, node.device), _eye(n, d, batch, node.device)
        else:
            u, vh = _const(node, 0, shape=batch + (m, 0)), _const(node, 0, shape=batch + (0, n))
        return SVDResult(wrap(_like(x, u)), wrap(_like(x, s)), wrap(_like(x, vh)))
    mode = "A" if full_matrices else "S"
    u, s, vt = _unpack(lax.svd(work, mode=mode), lp.svd_parts(m, n, work.aval.dtype, mode),
                       "u", "s", "vt")
    return SVDResult(wrap(_like(x, _restore(u, d))), wrap(_like(x, _restore(s, dt.real_of(d)))),
                     wrap(_like(x, _restore(vt, d))))


def _rtol(name, rtol, s, m, n):
    """The relative tolerance as a node broadcastable against s's (..., 1)."""
    r = s.aval.dtype
    batch = s.aval.shape[:-1]
    if rtol is None:
        return _const(s, builtins.max(m, n) * dt.finfo(r).eps, shape=batch + (1,))
    if isinstance(rtol, Array):
        node = node_of(name, rtol, "rtol")
        check_devices(name, s, node)
        if node.aval.dtype.kind not in dt.REAL_KINDS:
            raise TypeError(f"{name}: rtol must be a real number or real array, got {node.aval.dtype}")
        node = cast(node, r)
        shape = broadcast_shapes(node.aval.shape, batch, name=name)
        if shape != batch:
            raise ValueError(f"{name}: rtol of shape {rtol.shape} does not broadcast to the batch "
                             f"shape {batch}")
        node = broadcast_to_shape(node, batch)
        return lax.reshape(node, shape=batch + (1,))
    if isinstance(rtol, builtins.bool) or not isinstance(rtol, (builtins.int, builtins.float)):
        raise TypeError(f"{name}: rtol must be a real number or an array, got {rtol!r}")
    return broadcast_to_shape(scalar_node(builtins.float(rtol), r, s.device), batch + (1,))


def matrix_rank(x, /, *, rtol=None):
    """The number of singular values greater than rtol * the largest one (rtol defaults to
    max(M, N) * eps), as the default integer dtype."""
    node = _matrix("matrix_rank", x)
    m, n = x.shape[-2:]
    s = _svdvals_node(node)
    last = len(s.aval.shape) - 1
    smax = lax.reshape(_max_or_zero(s, (last,)), shape=s.aval.shape[:-1] + (1,))
    tol = lax.multiply(smax, _rtol("matrix_rank", rtol, s, m, n))
    tol = lax.broadcast_in_dim(tol, shape=s.aval.shape, dims=tuple(range(last + 1)))
    big = lax.compare(s, tol, direction="GT")
    return wrap(lax.reduce_sum(cast(big, dt.DEFAULTS.integral), axes=(last,)))


def pinv(x, /, *, rtol=None):
    """The Moore-Penrose pseudo-inverse, shape (..., N, M): singular values at most rtol * the
    largest (rtol defaults to max(M, N) * eps) are treated as zero."""
    node = _matrix("pinv", x)
    d = node.aval.dtype
    batch, (m, n) = x.shape[:-2], x.shape[-2:]
    if builtins.min(m, n) == 0:
        return wrap(_like(x, _const(node, 0, shape=batch + (n, m))))
    work = _lapack(node)
    u, s, vt = (r._node for r in svd(wrap(work), full_matrices=False))
    last = len(s.aval.shape) - 1
    smax = lax.reshape(_max_or_zero(s, (last,)), shape=s.aval.shape[:-1] + (1,))
    tol = lax.multiply(smax, _rtol("pinv", rtol, s, m, n))
    tol = lax.broadcast_in_dim(tol, shape=s.aval.shape, dims=tuple(range(last + 1)))
    keep = lax.compare(s, tol, direction="GT")
    safe = lax.select(keep, s, _const(s, 1))
    s_inv = lax.select(keep, lax.divide(_const(s, 1), safe), _const(s, 0))
    s_inv = cast(s_inv, work.aval.dtype)
    v = _conj(_mT(vt))                                        # (..., n, k)
    scaled = lax.multiply(v,
                          lax.broadcast_in_dim(s_inv, shape=v.aval.shape,
                                               dims=tuple(range(last)) + (last + 1,)))
    out = matmul(wrap(scaled), wrap(_conj(_mT(u))))._node     # (..., n, m)
    return wrap(_like(x, _restore(out, d)))
