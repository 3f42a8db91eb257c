"""Linear-algebra primitives: factorisations and triangular solves over the last two axes
(leading axes are a batch).

`cholesky` and `triangular_solve` are native StableHLO ops (`stablehlo.cholesky`,
`stablehlo.triangular_solve`), written as such for every platform but the CPU; on the CPU (and
for the other factorisations everywhere) they are calls to jaxlib's LAPACK FFI targets
(`lapack_?potrf_ffi`, `lapack_?getrf_ffi`, ...), which the PJRT CPU backend registers on first
use (`backends/_jaxlib.ensure_lapack`). XLA's own expansions of cholesky and triangular_solve
compile 2-10x slower than a LAPACK call (jax makes the same choice). What the targets expect
(column-major layouts, `mhlo.backend_config` attributes as ASCII `ui8` codes, an `info`
result per matrix) is recorded in docs/runtime-notes-linalg.md. LU, QR, eigh, eig and SVD have
no native op: on other platforms they raise NotImplementedError when compiled.

Packed results. The graph has single-result nodes, and XLA does not promise to merge two
identical custom calls, so a factorisation whose outputs are all needed (eigenvectors and
eigenvalues, U S Vh, ...) must not be two nodes. Such a primitive computes all its outputs once
and returns them *packed*: each output's core (non-batch) dims are flattened, converted to one
dtype (the complex one if any output is complex), and concatenated along one trailing axis:
result shape `batch + (sum of core sizes,)`. `<prim>_parts(...)` lists the outputs as
`(name, core_shape, dtype)`; the namespace takes them apart with slices and reshapes, which
XLA folds away. Integer outputs (LU pivots) are stored exactly as floating values.

As jax does, a matrix whose LAPACK call reports failure (`info != 0`, e.g. an eigensolver that
did not converge or a non-finite input to geev) comes back as NaN; singular matrices are not a
failure of LU: U then has a zero on its diagonal and solves give inf/nan.

Zero-size operands never reach LAPACK (LAPACK rejects a leading dimension of 0): the emitter
writes a constant instead.
"""
from __future__ import annotations

import math

import numpy as np

from .. import _dtypes as dt
from ..lowering.stablehlo import tensor_type
from . import ad, lax
from . import batching as bt
from . import padding as pd

# a matrix function mixes every element of its matrices
_ALONG_MATRIX = "a matrix function of a padded matrix is not the function of its data"
from .core import aval, batch_names, declare

_LAPACK = (dt.float32, dt.float64, dt.complex64, dt.complex128)
_PREFIX = {dt.float32: "s", dt.float64: "d", dt.complex64: "c", dt.complex128: "z"}


def _check_matrix(name, x, *, square=False, dtypes=_LAPACK):
    if x.dtype not in dtypes:
        raise TypeError(f"{name}: unsupported dtype {x.dtype}; expected one of "
                        f"{', '.join(map(str, dtypes))}")
    if len(x.shape) < 2:
        raise ValueError(f"{name}: expected an array of at least 2 dimensions, got shape {x.shape}")
    if square and x.shape[-1] != x.shape[-2]:
        raise ValueError(f"{name}: expected square matrices, got shape {x.shape}")
    return x.shape[:-2], x.shape[-2], x.shape[-1]


# ============================================================================ rule helpers
# Node-level matrix operations for the derivative rules (the vocabulary of _prims/lax.py over
# the last two axes; leading axes are a batch and match between operands).

def mT(x):
    nd = len(x.aval.shape)
    return lax.transpose(x, perm=tuple(range(nd - 2)) + (nd - 1, nd - 2))


def adjoint(x):
    return ad.conj(mT(x))


def matmul(a, b):
    nb = len(a.aval.shape) - 2
    return lax.dot_general(a, b, contract=((nb + 1,), (nb,)),
                           batch=(tuple(range(nb)), tuple(range(nb))))


def _offsets(x):
    """j - i at every element (i the row, j the column), int32."""
    shape, nd = x.aval.shape, len(x.aval.shape)
    i = lax.iota(shape=shape, dtype=dt.int32, dim=nd - 2, device=x.device)
    j = lax.iota(shape=shape, dtype=dt.int32, dim=nd - 1, device=x.device)
    return lax.subtract(j, i)


def triangle(x, lower, k=0):
    """x below (lower) or above its k-th diagonal, zeros elsewhere (tril / triu)."""
    d = _offsets(x)
    keep = lax.compare(d, ad.const(d, k), direction="LE" if lower else "GE")
    return lax.select(keep, x, ad.zeros(x))


def hermitian_part(t):
    return lax.multiply(lax.add(t, adjoint(t)), ad.const(t, 0.5))


def _eye_mask(x):
    """True on the main diagonal of x's last two axes."""
    d = _offsets(x)
    return lax.compare(d, ad.zeros(d), direction="EQ")


def diag_part(x):
    """The main diagonal of square matrices: batch + (n,)."""
    return lax.reduce_sum(lax.select(_eye_mask(x), x, ad.zeros(x)), axes=(len(x.aval.shape) - 1,))


def eye_like(x):
    """The identity in x's shape and dtype (square matrices)."""
    return lax.convert(_eye_mask(x), dtype=x.aval.dtype)


def scale_columns(x, v):
    """x[..., i, j] * v[..., j] (v converted to x's dtype)."""
    nd = len(x.aval.shape)
    v = ad.convert(v, x.aval.dtype)
    return lax.multiply(x, ad.broadcast(v, x.aval.shape, tuple(range(nd - 2)) + (nd - 1,)))


def scale_rows(x, v):
    """x[..., i, j] * v[..., i] (v converted to x's dtype)."""
    nd = len(x.aval.shape)
    v = ad.convert(v, x.aval.dtype)
    return lax.multiply(x, ad.broadcast(v, x.aval.shape, tuple(range(nd - 1))))


def _outer_diff(v, shape):
    """v[..., j] - v[..., i] as a matrix of `shape` (batch + (n, n))."""
    nd = len(shape)
    row = ad.broadcast(v, shape, tuple(range(nd - 2)) + (nd - 1,))
    col = ad.broadcast(v, shape, tuple(range(nd - 1)))
    return lax.subtract(row, col), row, col


def _inverse_off_diagonal(gaps):
    """1 / gaps off the diagonal, 0 on it (gaps' diagonal is zero)."""
    eye = eye_like(gaps)
    return lax.subtract(lax.divide(ad.const(gaps, 1), lax.add(gaps, eye)), eye)


def unpack(packed, parts):
    """The outputs of a packed factorisation result (see the module docstring), in order."""
    batch = packed.aval.shape[:-1]
    nb = len(batch)
    out, offset = [], 0
    for _, core, d in parts:
        size = math.prod(core)
        piece = packed
        if (offset, offset + size) != (0, packed.aval.shape[-1]):
            piece = lax.slice(packed, start=(0,) * nb + (offset,), limit=batch + (offset + size,),
                              strides=(1,) * (nb + 1))
        piece = ad.reshape(piece, batch + tuple(core))
        if d.kind != "c" and ad.is_complex(piece):
            piece = lax.real(piece)
        out.append(ad.convert(piece, d))
        offset += size
    return out


def pack(values, parts, like):
    """A tangent of the packed result `like` from tangents of its outputs (None: zero)."""
    batch = like.aval.shape[:-1]
    target = like.aval.dtype
    flats = []
    for (_, core, _), v in zip(parts, values):
        shape = batch + (math.prod(core),)
        if v is None:
            flats.append(lax.constant(shape=shape, dtype=target, value=0, device=like.device))
        else:
            flats.append(ad.reshape(ad.convert(v, target), shape))
    return flats[0] if len(flats) == 1 else lax.concatenate(*flats, axis=len(batch))


def _permutation_matrix(perm, dtype):
    """P with P[..., i, j] = (perm[..., i] == j): (P @ b)[i] = b[perm[i]] (perm as stored in
    the packed LU result, integers held as floating values)."""
    shape = perm.aval.shape + perm.aval.shape[-1:]
    nd = len(shape)
    rows = ad.broadcast(perm, shape, tuple(range(nd - 1)))
    cols = ad.convert(lax.iota(shape=shape, dtype=dt.int32, dim=nd - 1, device=perm.device),
                      perm.aval.dtype)
    return lax.convert(lax.compare(rows, cols, direction="EQ"), dtype=dtype)


def solve(a, b):
    """a^-1 b for square a, through the lu primitive (so it differentiates again)."""
    n = a.aval.shape[-1]
    lu_, _, perm = unpack(lax.lu(a), lu_parts(n, n, a.aval.dtype))
    pb = matmul(_permutation_matrix(perm, b.aval.dtype), b)
    y = lax.triangular_solve(lu_, pb, left_side=True, lower=True, transpose_a="NO_TRANSPOSE",
                             unit_diagonal=True)
    return lax.triangular_solve(lu_, y, left_side=True, lower=False, transpose_a="NO_TRANSPOSE",
                                unit_diagonal=False)


# ============================================================================ emit helpers
# Every helper takes explicit avals: the ops written here are intermediate values of one
# primitive, not the equation's operands or result.

def _i64s(values) -> str:
    return f"array<i64{': ' if values else ''}{', '.join(map(str, values))}>"


def _compare(ctx, a, b, avl, direction):
    kind = avl.dtype.kind
    ctype = {"b": "UNSIGNED", "u": "UNSIGNED", "i": "SIGNED"}.get(kind, "FLOAT")
    return ctx.op("stablehlo.compare", (a, b), (avl, avl), aval(avl.shape, dt.bool),
                  attrs=f"comparison_direction = #stablehlo<comparison_direction {direction}>, "
                        f"compare_type = #stablehlo<comparison_type {ctype}>")


def _select(ctx, pred, a, b, avl):
    return ctx.op("stablehlo.select", (pred, a, b), (aval(avl.shape, dt.bool), avl, avl), avl)


def _broadcast(ctx, x, x_aval, shape, dims):
    if tuple(x_aval.shape) == tuple(shape):
        return x
    return ctx.op("stablehlo.broadcast_in_dim", (x,), (x_aval,), aval(shape, x_aval.dtype),
                  attrs=f"broadcast_dimensions = {_i64s(dims)}")


def _reshape(ctx, x, x_aval, shape):
    if tuple(x_aval.shape) == tuple(shape):
        return x
    return ctx.op("stablehlo.reshape", (x,), (x_aval,), aval(shape, x_aval.dtype))


def _convert(ctx, x, x_aval, dtype):
    if x_aval.dtype is dtype:
        return x
    return ctx.op("stablehlo.convert", (x,), (x_aval,), aval(x_aval.shape, dtype))


def _binary(ctx, name, a, b, avl):
    return ctx.op(name, (a, b), (avl, avl), avl)


def _reduce_sum(ctx, x, x_aval, dims):
    scalar = aval((), x_aval.dtype)
    t = tensor_type(scalar)
    init = ctx.constant(0, scalar)
    a, b, r = ctx.fresh(), ctx.fresh(), ctx.fresh()
    region = (f'{{\n      ^bb0({a}: {t}, {b}: {t}):\n'
              f'        {r} = "stablehlo.add"({a}, {b}) : ({t}, {t}) -> {t}\n'
              f'        "stablehlo.return"({r}) : ({t}) -> ()\n    }}')
    out = aval(tuple(n for i, n in enumerate(x_aval.shape) if i not in dims), x_aval.dtype)
    return ctx.op("stablehlo.reduce", (x, init), (x_aval, scalar), out,
                  attrs=f"dimensions = {_i64s(dims)}", regions=region)


def _layout(ndim, column_major):
    """An XLA layout (minor-to-major dims): column-major over the last two dims (LAPACK's
    order, batch dims major), or row-major."""
    if ndim == 0:
        return "dense<> : tensor<0xindex>"
    if column_major:
        nb = ndim - 2
        order = [nb, nb + 1] + list(range(nb - 1, -1, -1))
    else:
        order = list(range(ndim - 1, -1, -1))
    return f"dense<[{', '.join(map(str, order))}]> : tensor<{ndim}xindex>"


def _lapack_here(ctx):
    """Whether to call LAPACK rather than write the native op: on the CPU, where XLA's own
    expansions of cholesky and triangular_solve take 2-10x longer to compile (a 512x512
    cholesky: 2.3 s against 0.2 s for potrf), as jax does too."""
    return ctx.platform in (None, "cpu")


def _custom_call(ctx, target, operands, in_avals, out_avals, config=None):
    """A LAPACK FFI custom call; returns the names of its results. Arrays of the operands'
    full rank (the matrices) are column-major; lower-rank ones (pivots, tau, eigenvalues,
    info) are row-major, as jaxlib's kernels expect."""
    if not _lapack_here(ctx):
        raise NotImplementedError(
            f"{target}: LAPACK custom calls exist only on the CPU; this decomposition is not "
            f"available on {ctx.platform!r} yet (compute it on device='cpu')")
    rank = max(len(a.shape) for a in in_avals)
    config = ", ".join(f"{k} = {ord(v)} : ui8" for k, v in sorted((config or {}).items()))
    ins = ", ".join(tensor_type(a) for a in in_avals)
    outs = ", ".join(tensor_type(a) for a in out_avals)
    op_layouts = ", ".join(_layout(len(a.shape), len(a.shape) == rank) for a in in_avals)
    res_layouts = ", ".join(_layout(len(a.shape), len(a.shape) == rank) for a in out_avals)
    result = ctx.fresh()
    count = len(out_avals)
    ctx.lines.append(
        f'{result}{f":{count}" if count > 1 else ""} = "stablehlo.custom_call"({", ".join(operands)}) '
        f'{{api_version = 1 : i32, backend_config = "", call_target_name = "{target}", '
        f'has_side_effect = false, mhlo.backend_config = {{{config}}}, '
        f'operand_layouts = [{op_layouts}], result_layouts = [{res_layouts}]}} : '
        f'({ins}) -> ({outs})')
    return [f"{result}#{i}" for i in range(count)] if count > 1 else [result]


def _nan_unless(ctx, value, value_aval, info, batch, direction="EQ"):
    """`value` where the matrix's LAPACK `info` compares `direction` 0, NaN elsewhere."""
    info_aval = aval(batch, dt.int32)
    ok = _compare(ctx, info, ctx.constant(0, info_aval), info_aval, direction)
    ok = _broadcast(ctx, ok, aval(batch, dt.bool), value_aval.shape, tuple(range(len(batch))))
    nan = ctx.constant(complex("nan+nanj") if value_aval.dtype.kind == "c" else float("nan"),
                       value_aval)
    return _select(ctx, ok, value, nan, value_aval)


def _pack_dtype(parts):
    dtypes = [d for _, _, d in parts]
    for d in dtypes:
        if d.kind == "c":
            return d
    return next(d for d in dtypes if d.kind == "f")


def _packed_aval(batch, parts):
    return aval(tuple(batch) + (sum(math.prod(s) for _, s, _ in parts),), _pack_dtype(parts))


def _pack(ctx, batch, parts, values):
    """Emit the packed result of `values` (names, in the order of `parts`)."""
    out = _packed_aval(batch, parts)
    flats, flat_avals = [], []
    for (_, core, d), v in zip(parts, values):
        v = _convert(ctx, v, aval(tuple(batch) + tuple(core), d), out.dtype)
        flat = aval(tuple(batch) + (math.prod(core),), out.dtype)
        flats.append(_reshape(ctx, v, aval(tuple(batch) + tuple(core), out.dtype), flat.shape))
        flat_avals.append(flat)
    if len(flats) == 1:
        return flats[0]
    return ctx.op("stablehlo.concatenate", flats, flat_avals, out,
                  attrs=f"dimension = {len(batch)} : i64")


def _pack_impl(batch, parts, arrays):
    out = _packed_aval(batch, parts)
    flats = [np.asarray(a).astype(out.dtype.numpy, copy=False).reshape(
                 tuple(batch) + (math.prod(core),)) for (_, core, _), a in zip(parts, arrays)]
    return np.concatenate(flats, axis=-1) if len(flats) > 1 else flats[0]


def _zeros_if_empty(ctx):
    """A constant for a result (or an operand) without elements, which must not reach LAPACK."""
    if any(n == 0 for a in ctx.in_avals for n in a.shape) or math.prod(ctx.out_aval.shape) == 0:
        return ctx.constant(0, ctx.out_aval)
    return None


# ============================================================================ impl helpers

def _whole_stack(fn, *args, **kwargs):
    """fn (a NumPy linalg function, which runs over a stack of matrices at once) on the
    whole stack; None where a matrix makes it raise LinAlgError: the caller then computes
    each matrix on its own, the failing ones NaN."""
    try:
        return fn(*args, **kwargs)
    except np.linalg.LinAlgError:
        return None


def _matrices(x):
    """(x as a (B, m, n) array, batch shape)."""
    return x.reshape((math.prod(x.shape[:-2]),) + x.shape[-2:]), x.shape[:-2]


def _nan_like(shape, dtype):
    return np.full(shape, np.nan, dtype=np.result_type(dtype, np.float32))


# ============================================================================ cholesky

def _cholesky_infer(x):
    _check_matrix("cholesky", x, square=True)
    return x


def _cholesky_impl(x):
    """The lower factor with zeros above, or all-NaN for a matrix that is not positive
    definite (what XLA's CPU cholesky gives)."""
    mats, batch = _matrices(x)
    out = np.zeros_like(mats)
    for i, m in enumerate(mats):
        try:
            out[i] = np.linalg.cholesky(m)
        except np.linalg.LinAlgError:
            out[i] = np.nan
    return out.reshape(x.shape)


def _cholesky_emit(ctx, x):
    empty = _zeros_if_empty(ctx)
    if empty:
        return empty
    if not _lapack_here(ctx):
        return ctx.simple("stablehlo.cholesky", x, attrs="lower = true")
    xa = ctx.in_avals[0]
    batch = xa.shape[:-2]
    l, info = _custom_call(ctx, f"lapack_{_PREFIX[xa.dtype]}potrf_ffi", (x,), (xa,),
                           (xa, aval(batch, dt.int32)), {"uplo": "L"})
    return _nan_unless(ctx, l, xa, info, batch)


# Only the lower triangle of the operand is read. The upper triangle of the result is
# implementation-defined (XLA's cholesky writes zeros, LAPACK's potrf leaves the operand's
# upper triangle); the namespace masks it. A matrix that is not positive definite gives NaN.
def _cholesky_jvp(tangents, x, *, out):
    """dL = L phi(L^-1 sym(dA) L^-H), phi: the lower triangle with half the diagonal
    (derivatives are taken for Hermitian inputs: only the Hermitian part of a tangent
    counts). The result's upper triangle (implementation-defined) gets a zero tangent."""
    (t,) = tangents
    if t is None:
        return None
    low = triangle(out, True)
    solve = dict(lower=True, unit_diagonal=False)
    inner = lax.triangular_solve(low, hermitian_part(t), left_side=True,
                                 transpose_a="NO_TRANSPOSE", **solve)
    inner = lax.triangular_solve(low, inner, left_side=False, transpose_a="ADJOINT", **solve)
    d = _offsets(inner)
    on_diag = lax.compare(d, ad.zeros(d), direction="EQ")
    phi = lax.select(on_diag, lax.multiply(inner, ad.const(inner, 0.5)), triangle(inner, True, -1))
    return matmul(low, phi)


cholesky = declare("cholesky", names=batch_names, batch=bt.trailing("cholesky", 2), padding=pd.trailing("cholesky", 2, _ALONG_MATRIX), infer=_cholesky_infer, emit=_cholesky_emit,
                   impl=_cholesky_impl, jvp=_cholesky_jvp, vjp=ad.transposed(_cholesky_jvp))


# ============================================================================ triangular_solve

_TRANSPOSE = ("NO_TRANSPOSE", "TRANSPOSE", "ADJOINT")


def _trsolve_infer(a, b, *, left_side, lower, transpose_a, unit_diagonal):
    batch, m, _ = _check_matrix("triangular_solve", a, square=True)
    if b.dtype is not a.dtype:
        raise TypeError(f"triangular_solve: dtypes differ: {a.dtype} and {b.dtype}")
    if transpose_a not in _TRANSPOSE:
        raise ValueError(f"triangular_solve: transpose_a must be one of {_TRANSPOSE}")
    if len(b.shape) != len(a.shape) or b.shape[:-2] != batch:
        raise ValueError(f"triangular_solve: batch dims differ: {a.shape} and {b.shape}")
    if (b.shape[-2] if left_side else b.shape[-1]) != m:
        raise ValueError(f"triangular_solve: shapes {a.shape} and {b.shape} do not match")
    return b


def _trsolve_emit(ctx, a, b, *, left_side, lower, transpose_a, unit_diagonal):
    if math.prod(ctx.out_aval.shape) == 0:
        return ctx.constant(0, ctx.out_aval)
    if _lapack_here(ctx):
        aa, ba = ctx.in_avals
        trans = {"NO_TRANSPOSE": "N", "TRANSPOSE": "T", "ADJOINT": "C"}[transpose_a]
        if aa.dtype.kind != "c" and trans == "C":
            trans = "T"
        out, = _custom_call(ctx, f"lapack_{_PREFIX[aa.dtype]}trsm_ffi", (a, b), (aa, ba), (ba,),
                            {"side": "L" if left_side else "R", "uplo": "L" if lower else "U",
                             "trans_x": trans, "diag": "U" if unit_diagonal else "N"})
        return out
    flag = lambda v: "true" if v else "false"  # noqa: E731
    return ctx.simple("stablehlo.triangular_solve", a, b, attrs=(
        f"left_side = {flag(left_side)}, lower = {flag(lower)}, "
        f"transpose_a = #stablehlo<transpose {transpose_a}>, unit_diagonal = {flag(unit_diagonal)}"))


def _trsolve_impl(a, b, *, left_side, lower, transpose_a, unit_diagonal):
    n = a.shape[-1]
    t = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        t = np.where(np.eye(n, dtype=bool), np.ones((), a.dtype), t)
    if transpose_a != "NO_TRANSPOSE":
        t = np.swapaxes(t, -1, -2)
        if transpose_a == "ADJOINT":
            t = np.conj(t)
        lower = not lower
    if not left_side:  # x t = b  <=>  t^T x^T = b^T
        t, rhs, lower = np.swapaxes(t, -1, -2), np.swapaxes(b, -1, -2), not lower
    else:
        rhs = b
    # Substitution with IEEE semantics: a zero on the diagonal gives inf/nan from its row on,
    # as LAPACK's trsm does (XLA's blocked native solve spreads NaN over whole blocks).
    x = np.zeros(np.broadcast_shapes(rhs.shape), dtype=b.dtype)
    order = range(n) if lower else range(n - 1, -1, -1)
    for i in order:
        acc = rhs[..., i, :] - np.einsum("...j,...jk->...k", t[..., i, :], x)
        x[..., i, :] = acc / t[..., i, i][..., None]
    return x if left_side else np.swapaxes(x, -1, -2)


# Derivatives of op(A) X = B (left_side) or X op(A) = B, op one of identity, transpose and
# adjoint; only A's triangle (strict, with a unit diagonal) is read, so only it gets a
# derivative.

def _trsolve_masked(t, lower, unit_diagonal):
    k = (-1 if lower else 1) if unit_diagonal else 0
    return triangle(t, lower, k)


def _op(m, transpose_a):
    if transpose_a == "NO_TRANSPOSE":
        return m
    return adjoint(m) if transpose_a == "ADJOINT" else mT(m)


def _trsolve_jvp(tangents, a, b, *, out, left_side, lower, transpose_a, unit_diagonal):
    ta, tb = tangents
    params = dict(left_side=left_side, lower=lower, transpose_a=transpose_a,
                  unit_diagonal=unit_diagonal)
    rhs = tb
    if ta is not None:
        dop = _op(_trsolve_masked(ta, lower, unit_diagonal), transpose_a)
        term = matmul(dop, out) if left_side else matmul(out, dop)
        rhs = lax.negate(term) if rhs is None else lax.subtract(rhs, term)
    if rhs is None:
        return None
    return lax.triangular_solve(a, rhs, **params)


def _trsolve_vjp(ct, a, b, *, out, left_side, lower, transpose_a, unit_diagonal):
    # B's cotangent: op(A)^-H applied on the same side
    if transpose_a == "TRANSPOSE" and ad.is_complex(ct):
        solved = ad.conj(lax.triangular_solve(
            a, ad.conj(ct), left_side=left_side, lower=lower, transpose_a="NO_TRANSPOSE",
            unit_diagonal=unit_diagonal))
    else:
        flipped = {"NO_TRANSPOSE": "ADJOINT", "ADJOINT": "NO_TRANSPOSE",
                   "TRANSPOSE": "NO_TRANSPOSE"}[transpose_a]
        solved = lax.triangular_solve(a, ct, left_side=left_side, lower=lower,
                                      transpose_a=flipped, unit_diagonal=unit_diagonal)
    xh = adjoint(out)
    a_op = lax.negate(matmul(solved, xh) if left_side else matmul(xh, solved))
    if transpose_a != "NO_TRANSPOSE":
        a_op = _op(a_op, transpose_a)
    return (_trsolve_masked(a_op, lower, unit_diagonal), solved)


triangular_solve = declare("triangular_solve", names=batch_names, batch=bt.trailing("triangular_solve", 2), padding=pd.trailing("triangular_solve", 2, _ALONG_MATRIX), infer=_trsolve_infer, emit=_trsolve_emit,
                           impl=_trsolve_impl, jvp=_trsolve_jvp, vjp=_trsolve_vjp)


# ============================================================================ LU (getrf)

def lu_parts(m, n, dtype):
    """Outputs of `lu` on (m, n) matrices: the factors (unit-lower L below the diagonal, U on
    and above), the 0-based row swaps LAPACK made (row i was swapped with row pivots[i]), and
    the permutation they amount to: P @ A = L @ U with (P @ A)[i] = A[permutation[i]]."""
    k = min(m, n)
    return (("lu", (m, n), dtype), ("pivots", (k,), dt.int32), ("permutation", (m,), dt.int32))


def _lu_infer(x):
    batch, m, n = _check_matrix("lu", x)
    return _packed_aval(batch, lu_parts(m, n, x.dtype))


def _permutation_loop(ctx, pivots, batch, k, m):
    """Emit the permutation of `pivots` (0-based swaps, shape batch + (k,)): a while loop
    that applies swap i to an iota, one swap per iteration."""
    bsize = math.prod(batch)
    i32 = aval((), dt.int32)
    piv_a, perm_a = aval((bsize, k), dt.int32), aval((bsize, m), dt.int32)
    vec_a, one_a = aval((bsize,), dt.int32), aval((bsize, 1), dt.int32)
    piv = _reshape(ctx, pivots, aval(tuple(batch) + (k,), dt.int32), piv_a.shape)
    perm0 = ctx.op("stablehlo.iota", (), (), perm_a, attrs="iota_dimension = 1 : i64")
    i0 = ctx.constant(0, i32)
    types = f"{tensor_type(i32)}, {tensor_type(perm_a)}, {tensor_type(piv_a)}"
    outer = ctx.lines

    ctx.lines = []
    ci, cp, cv = ctx.fresh(), ctx.fresh(), ctx.fresh()
    lt = _compare(ctx, ci, ctx.constant(k, i32), i32, "LT")
    ctx.lines.append(f'"stablehlo.return"({lt}) : (tensor<i1>) -> ()')
    cond = ctx.lines

    ctx.lines = []
    bi, bp, bv = ctx.fresh(), ctx.fresh(), ctx.fresh()
    zero = ctx.constant(0, i32)
    p = ctx.op("stablehlo.dynamic_slice", (bv, zero, bi), (piv_a, i32, i32), one_a,
               attrs=f"slice_sizes = {_i64s((bsize, 1))}")
    iota = ctx.op("stablehlo.iota", (), (), perm_a, attrs="iota_dimension = 1 : i64")
    is_i = _compare(ctx, iota, _broadcast(ctx, bi, i32, perm_a.shape, ()), perm_a, "EQ")
    is_p = _compare(ctx, iota, _broadcast(ctx, p, one_a, perm_a.shape, (0, 1)), perm_a, "EQ")
    zeros = ctx.constant(0, perm_a)
    at_i = _reduce_sum(ctx, _select(ctx, is_i, bp, zeros, perm_a), perm_a, (1,))
    at_p = _reduce_sum(ctx, _select(ctx, is_p, bp, zeros, perm_a), perm_a, (1,))
    swapped = _select(ctx, is_p, _broadcast(ctx, at_i, vec_a, perm_a.shape, (0,)), bp, perm_a)
    swapped = _select(ctx, is_i, _broadcast(ctx, at_p, vec_a, perm_a.shape, (0,)), swapped, perm_a)
    nxt = _binary(ctx, "stablehlo.add", bi, ctx.constant(1, i32), i32)
    ctx.lines.append(f'"stablehlo.return"({nxt}, {swapped}, {bv}) : ({types}) -> ()')
    body = ctx.lines

    ctx.lines = outer
    result = ctx.fresh()

    def block(args, lines):
        head = ", ".join(f"{a}: {t}" for a, t in zip(args, types.split(", ")))
        inner = "\n".join("        " + line for line in lines)
        return f"{{\n      ^bb0({head}):\n{inner}\n    }}"

    ctx.lines.append(f'{result}:3 = "stablehlo.while"({i0}, {perm0}, {piv}) '
                     f'({block((ci, cp, cv), cond)}, {block((bi, bp, bv), body)}) : '
                     f'({types}) -> ({types})')
    return _reshape(ctx, f"{result}#1", perm_a, tuple(batch) + (m,))


def _lu_emit(ctx, x):
    empty = _zeros_if_empty(ctx)
    if empty:
        return empty
    xa = ctx.in_avals[0]
    batch, (m, n) = xa.shape[:-2], xa.shape[-2:]
    parts = lu_parts(m, n, xa.dtype)
    k = min(m, n)
    piv_a = aval(tuple(batch) + (k,), dt.int32)
    lu, piv, info = _custom_call(ctx, f"lapack_{_PREFIX[xa.dtype]}getrf_ffi", (x,), (xa,),
                                 (xa, piv_a, aval(batch, dt.int32)))
    lu = _nan_unless(ctx, lu, xa, info, batch, "GE")
    piv = _binary(ctx, "stablehlo.subtract", piv, ctx.constant(1, piv_a), piv_a)
    perm = _permutation_loop(ctx, piv, batch, k, m)
    return _pack(ctx, batch, parts, (lu, piv, perm))


def _lu_impl(x):
    import scipy.linalg
    mats, batch = _matrices(x)
    m, n = x.shape[-2:]
    k = min(m, n)
    lus = np.zeros_like(mats)
    pivs = np.zeros((len(mats), k), np.int32)
    perms = np.zeros((len(mats), m), np.int32)
    getrf, = scipy.linalg.get_lapack_funcs(("getrf",), (mats,))
    for b, a in enumerate(mats):
        if a.size == 0:
            continue
        lus[b], piv, _ = getrf(a)  # 0-based pivots
        pivs[b] = piv[:k]
        perm = np.arange(m)
        for i, j in enumerate(piv[:k]):
            perm[i], perm[j] = perm[j], perm[i]
        perms[b] = perm
    shape = lambda core: tuple(batch) + core  # noqa: E731
    return _pack_impl(batch, lu_parts(m, n, dt.from_numpy(x.dtype)),
                      [lus.reshape(shape((m, n))), pivs.reshape(shape((k,))),
                       perms.reshape(shape((m,)))])


def _lu_jvp(tangents, x, *, out):
    """P A = L U: with X = L^-1 P dA U^-1, dL = L tril(X, -1) and dU = triu(X) U (square
    matrices; the pivots and the permutation are piecewise constant)."""
    (t,) = tangents
    if t is None:
        return None
    m, n = x.aval.shape[-2:]
    if m != n:
        raise NotImplementedError("the derivative of lu is defined for square matrices")
    parts = lu_parts(m, n, x.aval.dtype)
    lu_, _, perm = unpack(out, parts)
    inner = matmul(_permutation_matrix(perm, t.aval.dtype), t)
    inner = lax.triangular_solve(lu_, inner, left_side=True, lower=True,
                                 transpose_a="NO_TRANSPOSE", unit_diagonal=True)
    inner = lax.triangular_solve(lu_, inner, left_side=False, lower=False,
                                 transpose_a="NO_TRANSPOSE", unit_diagonal=False)
    low = lax.add(triangle(lu_, True, -1), eye_like(lu_))
    dl = matmul(low, triangle(inner, True, -1))
    du = matmul(triangle(inner, False), triangle(lu_, False))
    return pack((lax.add(dl, du), None, None), parts, out)


lu = declare("lu", names=batch_names, batch=bt.trailing("lu", 2), padding=pd.trailing("lu", 2, _ALONG_MATRIX), infer=_lu_infer, emit=_lu_emit, impl=_lu_impl,
         jvp=_lu_jvp, vjp=ad.transposed(_lu_jvp))


# ============================================================================ qr (geqrf + orgqr)
# Q and R in one node (packed): the two LAPACK calls with the slicing and padding between them,
# so the factorisation's derivative rule sees Q and R rather than Householder reflectors.

def qr_result_parts(m, n, dtype, full):
    """Outputs of `qr`: Q (m, m if full else k) and R (m if full else k, n), k = min(m, n)."""
    k = m if full else min(m, n)
    return (("q", (m, k), dtype), ("r", (k, n), dtype))


def _qr_infer(x, *, full):
    batch, m, n = _check_matrix("qr", x)
    return _packed_aval(batch, qr_result_parts(m, n, x.dtype, full))


def _eye_emit(ctx, shape, dtype):
    """The leading columns of the identity, in `shape` (matrices over the last two axes)."""
    i32 = aval(shape, dt.int32)
    eye = _compare(ctx, ctx.op("stablehlo.iota", (), (), i32,
                               attrs=f"iota_dimension = {len(shape) - 2} : i64"),
                   ctx.op("stablehlo.iota", (), (), i32,
                          attrs=f"iota_dimension = {len(shape) - 1} : i64"), i32, "EQ")
    return _convert(ctx, eye, aval(shape, dt.bool), dtype)


def _qr_emit(ctx, x, *, full):
    xa = ctx.in_avals[0]
    batch, (m, n) = xa.shape[:-2], xa.shape[-2:]
    nb, k = len(batch), min(m, n)
    if math.prod(ctx.out_aval.shape) == 0:
        return ctx.constant(0, ctx.out_aval)
    if math.prod(xa.shape) == 0:   # no reflectors: Q is the identity's columns, R is empty
        parts = qr_result_parts(m, n, xa.dtype, full)
        (_, q_core, _), (_, r_core, _) = parts
        q = _eye_emit(ctx, tuple(batch) + q_core, xa.dtype)
        r = ctx.constant(0, aval(tuple(batch) + r_core, xa.dtype))
        return _pack(ctx, batch, parts, (q, r))
    prefix = _PREFIX[xa.dtype]
    tau_a = aval(tuple(batch) + (k,), xa.dtype)
    a, tau = _custom_call(ctx, f"lapack_{prefix}geqrf_ffi", (x,), (xa,), (xa, tau_a))
    qcols = m if full else k
    if qcols > n:       # tall, complete: Q needs m columns of reflector room
        q_in_a = aval(tuple(batch) + (m, m), xa.dtype)
        zero = ctx.constant(0, aval((), xa.dtype))
        q_in = ctx.op("stablehlo.pad", (a, zero), (xa, aval((), xa.dtype)), q_in_a,
                      attrs=f"edge_padding_low = {_i64s((0,) * (nb + 2))}, "
                      f"edge_padding_high = {_i64s((0,) * (nb + 1) + (m - n,))}, "
                      f"interior_padding = {_i64s((0,) * (nb + 2))}")
    elif qcols < n:     # wide: the first m columns hold the reflectors
        q_in_a = aval(tuple(batch) + (m, qcols), xa.dtype)
        q_in = ctx.op("stablehlo.slice", (a,), (xa,), q_in_a,
                      attrs=f"start_indices = {_i64s((0,) * (nb + 2))}, "
                      f"limit_indices = {_i64s(tuple(batch) + (m, qcols))}, "
                      f"strides = {_i64s((1,) * (nb + 2))}")
    else:
        q_in_a, q_in = xa, a
    name = f"lapack_{prefix}{'ungqr' if xa.dtype.kind == 'c' else 'orgqr'}_ffi"
    q, = _custom_call(ctx, name, (q_in, tau), (q_in_a, tau_a), (q_in_a,))
    r_a = aval(tuple(batch) + (qcols, n), xa.dtype)
    r = a
    if qcols != m:
        r = ctx.op("stablehlo.slice", (a,), (xa,), r_a,
                   attrs=f"start_indices = {_i64s((0,) * (nb + 2))}, "
                   f"limit_indices = {_i64s(tuple(batch) + (qcols, n))}, "
                   f"strides = {_i64s((1,) * (nb + 2))}")
    i32 = aval(r_a.shape, dt.int32)
    rows = ctx.op("stablehlo.iota", (), (), i32, attrs=f"iota_dimension = {nb} : i64")
    cols = ctx.op("stablehlo.iota", (), (), i32, attrs=f"iota_dimension = {nb + 1} : i64")
    upper = _compare(ctx, rows, cols, i32, "LE")
    r = _select(ctx, upper, r, ctx.constant(0, r_a), r_a)
    return _pack(ctx, batch, qr_result_parts(m, n, xa.dtype, full), (q, r))


def _qr_impl(x, *, full):
    m, n = x.shape[-2:]
    q, r = np.linalg.qr(x, mode="complete" if full else "reduced")
    batch = x.shape[:-2]
    return _pack_impl(batch, qr_result_parts(m, n, dt.from_numpy(x.dtype), full), [q, r])


def _qr_jvp(tangents, x, *, out, full):
    """With C = Q^H dA R^-1 and Omega = tril(C, -1) - tril(C, -1)^H (plus i Im diag(C) for
    complex matrices, whose R has a real diagonal): dQ = Q (Omega - C) + dA R^-1 and
    dR = (C - Omega) R. Reduced factorisations of matrices with at least as many rows as
    columns (square ones for `full`)."""
    (t,) = tangents
    if t is None:
        return None
    m, n = x.aval.shape[-2:]
    if m < n or (full and m != n):
        raise NotImplementedError("the derivative of qr is defined for reduced factorisations "
                                  "of matrices with at least as many rows as columns")
    parts = qr_result_parts(m, n, x.aval.dtype, full)
    q, r = unpack(out, parts)
    dx_rinv = lax.triangular_solve(r, t, left_side=False, lower=False,
                                   transpose_a="NO_TRANSPOSE", unit_diagonal=False)
    c = matmul(adjoint(q), dx_rinv)
    low = triangle(c, True, -1)
    omega = lax.subtract(low, adjoint(low))
    if ad.is_complex(c):
        imag_part = lax.subtract(c, ad.convert(lax.real(c), c.aval.dtype))
        omega = lax.add(omega, lax.multiply(eye_like(c), imag_part))
    dq = lax.add(matmul(q, lax.subtract(omega, c)), dx_rinv)
    dr = matmul(lax.subtract(c, omega), r)
    return pack((dq, dr), parts, out)


qr = declare("qr", names=batch_names, batch=bt.trailing("qr", 2), padding=pd.trailing("qr", 2, _ALONG_MATRIX), infer=_qr_infer, emit=_qr_emit, impl=_qr_impl,
             jvp=_qr_jvp, vjp=ad.transposed(_qr_jvp))


# ============================================================================ eigh (syevd / heevd)

def eigh_parts(n, dtype):
    return (("eigenvectors", (n, n), dtype), ("eigenvalues", (n,), dt.real_of(dtype)))


def _eigh_infer(x, *, vectors):
    batch, n, _ = _check_matrix("eigh", x, square=True)
    if vectors:
        return _packed_aval(batch, eigh_parts(n, x.dtype))
    return aval(tuple(batch) + (n,), dt.real_of(x.dtype))


def _eigh_emit(ctx, x, *, vectors):
    """Eigenvalues in ascending order; only the lower triangle is read (numpy's UPLO='L')."""
    empty = _zeros_if_empty(ctx)
    if empty:
        return empty
    xa = ctx.in_avals[0]
    batch, n = xa.shape[:-2], xa.shape[-1]
    kind = "heevd" if xa.dtype.kind == "c" else "syevd"
    w_a = aval(tuple(batch) + (n,), dt.real_of(xa.dtype))
    v, w, info = _custom_call(ctx, f"lapack_{_PREFIX[xa.dtype]}{kind}_ffi", (x,), (xa,),
                              (xa, w_a, aval(batch, dt.int32)),
                              {"mode": "V" if vectors else "N", "uplo": "L"})
    w = _nan_unless(ctx, w, w_a, info, batch)
    if not vectors:
        return w
    v = _nan_unless(ctx, v, xa, info, batch)
    return _pack(ctx, batch, eigh_parts(n, xa.dtype), (v, w))


def _eigh_impl(x, *, vectors):
    n = x.shape[-1]
    whole = _whole_stack(np.linalg.eigh if vectors else np.linalg.eigvalsh, x, UPLO="L")
    if whole is not None:
        if not vectors:
            return whole
        return _pack_impl(x.shape[:-2], eigh_parts(n, dt.from_numpy(x.dtype)), whole[::-1])
    mats, batch = _matrices(x)
    ws = np.zeros((len(mats), n), dt.real_of(dt.from_numpy(x.dtype)).numpy)
    vs = np.zeros_like(mats)
    for b, a in enumerate(mats):
        try:
            if vectors:
                ws[b], vs[b] = np.linalg.eigh(a, UPLO="L")
            else:
                ws[b] = np.linalg.eigvalsh(a, UPLO="L")
        except np.linalg.LinAlgError:
            ws[b], vs[b] = np.nan, np.nan
    ws = ws.reshape(tuple(batch) + (n,))
    if not vectors:
        return ws
    return _pack_impl(batch, eigh_parts(n, dt.from_numpy(x.dtype)), [vs.reshape(x.shape), ws])


def _eigh_jvp(tangents, x, *, out, vectors):
    """With M = V^H sym(dA) V: dw = Re diag(M), dV = V (F * M), F_ij = 1 / (w_j - w_i) off
    the diagonal (distinct eigenvalues). Only the Hermitian part of a tangent counts."""
    (t,) = tangents
    if t is None:
        return None
    n = x.aval.shape[-1]
    parts = eigh_parts(n, x.aval.dtype)
    v, w = unpack(out if vectors else lax.eigh(x, vectors=True), parts)
    m = matmul(adjoint(v), matmul(hermitian_part(t), v))
    dw = ad.real(diag_part(m))
    if not vectors:
        return dw
    gaps, _, _ = _outer_diff(w, v.aval.shape[:-2] + (n, n))
    dv = matmul(v, lax.multiply(ad.convert(_inverse_off_diagonal(gaps), v.aval.dtype), m))
    return pack((dv, dw), parts, out)


eigh = declare("eigh", names=batch_names, batch=bt.trailing("eigh", 2), padding=pd.trailing("eigh", 2, _ALONG_MATRIX), infer=_eigh_infer, emit=_eigh_emit, impl=_eigh_impl,
               jvp=_eigh_jvp, vjp=ad.transposed(_eigh_jvp))


# ============================================================================ svd (gesdd)

_SVD_MODES = ("N", "S", "A")


def svd_parts(m, n, dtype, mode):
    """Outputs of `svd`: U (m, m or k), S (k,) in descending order, Vh (n or k, n)."""
    k = min(m, n)
    full = mode == "A"
    return (("u", (m, m if full else k), dtype), ("s", (k,), dt.real_of(dtype)),
            ("vt", (n if full else k, n), dtype))


def _svd_infer(x, *, mode):
    batch, m, n = _check_matrix("svd", x)
    if mode not in _SVD_MODES:
        raise ValueError(f"svd: mode must be one of {_SVD_MODES}, got {mode!r}")
    if mode == "N":
        return aval(tuple(batch) + (min(m, n),), dt.real_of(x.dtype))
    if min(m, n) == 0:
        raise ValueError("svd: internal: U and Vh of an empty matrix are not computed here")
    return _packed_aval(batch, svd_parts(m, n, x.dtype, mode))


def _svd_emit(ctx, x, *, mode):
    empty = _zeros_if_empty(ctx)
    if empty:
        return empty
    xa = ctx.in_avals[0]
    batch, (m, n) = xa.shape[:-2], xa.shape[-2:]
    k = min(m, n)
    if mode == "N":  # U and Vh are not referenced: give LAPACK minimal 1x1 buffers
        u_a = aval(tuple(batch) + (1, 1), xa.dtype)
        vt_a = u_a
    else:
        (_, u_core, _), _, (_, vt_core, _) = svd_parts(m, n, xa.dtype, mode)
        u_a = aval(tuple(batch) + u_core, xa.dtype)
        vt_a = aval(tuple(batch) + vt_core, xa.dtype)
    s_a = aval(tuple(batch) + (k,), dt.real_of(xa.dtype))
    _, s, u, vt, info = _custom_call(ctx, f"lapack_{_PREFIX[xa.dtype]}gesdd_ffi", (x,), (xa,),
                                     (xa, s_a, u_a, vt_a, aval(batch, dt.int32)), {"mode": mode})
    s = _nan_unless(ctx, s, s_a, info, batch)
    if mode == "N":
        return s
    u = _nan_unless(ctx, u, u_a, info, batch)
    vt = _nan_unless(ctx, vt, vt_a, info, batch)
    return _pack(ctx, batch, svd_parts(m, n, xa.dtype, mode), (u, s, vt))


def _svd_impl(x, *, mode):
    m, n = x.shape[-2:]
    k = min(m, n)
    d = dt.from_numpy(x.dtype)
    parts = svd_parts(m, n, d, "S" if mode == "N" else mode)
    if mode == "N":
        whole = _whole_stack(np.linalg.svd, x, compute_uv=False)
        if whole is not None:
            return whole
    else:
        whole = _whole_stack(np.linalg.svd, x, full_matrices=mode == "A")
        if whole is not None:
            return _pack_impl(x.shape[:-2], parts, whole)
    mats, batch = _matrices(x)
    outs = [np.zeros((len(mats),) + core, dtype.numpy) for _, core, dtype in parts]
    for b, a in enumerate(mats):
        try:
            if mode == "N":
                outs[1][b] = np.linalg.svd(a, compute_uv=False)
            else:
                outs[0][b], outs[1][b], outs[2][b] = np.linalg.svd(a, full_matrices=mode == "A")
        except np.linalg.LinAlgError:
            for o in outs:
                o[b] = np.nan
    if mode == "N":
        return outs[1].reshape(tuple(batch) + (k,))
    return _pack_impl(batch, parts, [o.reshape(tuple(batch) + o.shape[1:]) for o in outs])


def _svd_jvp(tangents, x, *, out, mode):
    """The reduced SVD's tangents (the formulas of JAX's svd rule): with M = U^H dA V,
    dS = Re diag(M), dU = U (F * (M S + S M^H) + (M - M^H) / 2 * S^-1) (+ (I - U U^H) dA V S^-1
    for tall matrices), dV = V (F * (S M + M^H S)) (+ (I - V V^H) dA^H U S^-1 for wide ones),
    F_ij = 1 / (s_j^2 - s_i^2) off the diagonal. `mode="A"` needs square matrices."""
    (t,) = tangents
    if t is None:
        return None
    m, n = x.aval.shape[-2:]
    k = min(m, n)
    if k == 0:
        return None
    if mode == "A" and m != n:
        raise NotImplementedError("the derivative of svd(full_matrices=True) of a non-square "
                                  "matrix is not unique; use full_matrices=False")
    d = x.aval.dtype
    parts = svd_parts(m, n, d, "S")
    u, s, vh = unpack(out if mode != "N" else lax.svd(x, mode="S"), parts)
    v, uh = adjoint(vh), adjoint(u)
    mm = matmul(uh, matmul(t, v))
    ds = ad.real(diag_part(mm))
    if mode == "N":
        return ds
    shape = mm.aval.shape
    _, s_row, s_col = _outer_diff(s, shape)
    diffs = lax.multiply(lax.add(s_row, s_col), lax.subtract(s_row, s_col))
    is_zero = lax.convert(lax.compare(diffs, ad.zeros(diffs), direction="EQ"), dtype=diffs.aval.dtype)
    f = ad.convert(lax.subtract(lax.divide(ad.const(diffs, 1), lax.add(diffs, is_zero)), is_zero), d)
    dss = scale_columns(mm, s)
    sds = scale_rows(mm, s)
    s_zero = lax.convert(lax.compare(s, ad.zeros(s), direction="EQ"), dtype=s.aval.dtype)
    s_inv = lax.subtract(lax.divide(ad.const(s, 1), lax.add(s, s_zero)), s_zero)
    skew = lax.multiply(lax.subtract(mm, adjoint(mm)), ad.const(mm, 0.5))
    du = matmul(u, lax.add(lax.multiply(f, lax.add(dss, adjoint(dss))),
                           lax.multiply(skew, scale_columns(eye_like(mm), s_inv))))
    dv = matmul(v, lax.multiply(f, lax.add(sds, adjoint(sds))))
    if m > n:
        dav = matmul(t, v)
        du = lax.add(du, scale_columns(lax.subtract(dav, matmul(u, matmul(uh, dav))), s_inv))
    if n > m:
        dahu = matmul(adjoint(t), u)
        dv = lax.add(dv, scale_columns(lax.subtract(dahu, matmul(v, matmul(vh, dahu))), s_inv))
    return pack((du, ds, adjoint(dv)), parts, out)


svd = declare("svd", names=batch_names, batch=bt.trailing("svd", 2), padding=pd.trailing("svd", 2, _ALONG_MATRIX), infer=_svd_infer, emit=_svd_emit, impl=_svd_impl,
              jvp=_svd_jvp, vjp=ad.transposed(_svd_jvp))


# ============================================================================ eig (geev)

def eig_parts(n, dtype):
    c = dt.complex_of(dt.real_of(dtype))
    return (("eigenvalues", (n,), c), ("eigenvectors", (n, n), c))


def _eig_infer(x, *, vectors):
    batch, n, _ = _check_matrix("eig", x, square=True)
    if vectors:
        return _packed_aval(batch, eig_parts(n, x.dtype))
    return aval(tuple(batch) + (n,), dt.complex_of(dt.real_of(x.dtype)))


def _eig_emit(ctx, x, *, vectors):
    """Right eigenvectors, normalised to unit 2-norm with their largest component real (LAPACK
    geev); eigenvalues in LAPACK's order. A non-finite matrix gives NaN."""
    empty = _zeros_if_empty(ctx)
    if empty:
        return empty
    xa = ctx.in_avals[0]
    batch, n = xa.shape[:-2], xa.shape[-1]
    c = dt.complex_of(dt.real_of(xa.dtype))
    w_a = aval(tuple(batch) + (n,), c)
    v_a = aval(xa.shape, c)
    info_a = aval(batch, dt.int32)
    mode = {"compute_left": "N", "compute_right": "V" if vectors else "N"}
    target = f"lapack_{_PREFIX[xa.dtype]}geev_ffi"
    if xa.dtype.kind == "c":
        w, _, v, info = _custom_call(ctx, target, (x,), (xa,), (w_a, v_a, v_a, info_a), mode)
    else:
        wr_a = aval(tuple(batch) + (n,), xa.dtype)
        wr, wi, _, v, info = _custom_call(ctx, target, (x,), (xa,), (wr_a, wr_a, v_a, v_a, info_a),
                                          mode)
        w = ctx.op("stablehlo.complex", (wr, wi), (wr_a, wr_a), w_a)
    w = _nan_unless(ctx, w, w_a, info, batch)
    if not vectors:
        return w
    v = _nan_unless(ctx, v, v_a, info, batch)
    return _pack(ctx, batch, eig_parts(n, xa.dtype), (w, v))


def _eig_impl(x, *, vectors):
    mats, batch = _matrices(x)
    n = x.shape[-1]
    c = dt.complex_of(dt.real_of(dt.from_numpy(x.dtype))).numpy
    ws = np.zeros((len(mats), n), c)
    vs = np.zeros((len(mats), n, n), c)
    for b, a in enumerate(mats):
        try:
            if vectors:
                ws[b], vs[b] = np.linalg.eig(a)
            else:
                ws[b] = np.linalg.eigvals(a)
        except np.linalg.LinAlgError:
            ws[b], vs[b] = np.nan, np.nan
    ws = ws.reshape(tuple(batch) + (n,))
    if not vectors:
        return ws
    return _pack_impl(batch, eig_parts(n, dt.from_numpy(x.dtype)), [ws, vs.reshape(x.shape)])


def _eig_jvp(tangents, x, *, out, vectors):
    """With M = V^-1 dA V: dw = diag(M), and before normalisation dV = V (F * M),
    F_ij = 1 / (w_j - w_i) off the diagonal (distinct eigenvalues); then the derivative of
    LAPACK's normalisation of each eigenvector (unit 2-norm, largest component real)."""
    (t,) = tangents
    if t is None:
        return None
    n = x.aval.shape[-1]
    parts = eig_parts(n, x.aval.dtype)
    w, v = unpack(out if vectors else lax.eig(x, vectors=True), parts)
    c = v.aval.dtype
    mm = solve(v, matmul(ad.convert(t, c), v))
    dw = diag_part(mm)
    if not vectors:
        return dw
    gaps, _, _ = _outer_diff(w, v.aval.shape)
    du = matmul(v, lax.multiply(_inverse_off_diagonal(gaps), mm))
    rows = (len(v.aval.shape) - 2,)
    # unit norm: Re(v^H dv) = 0 in every column
    du = lax.subtract(du, scale_columns(v, lax.real(lax.reduce_sum(
        lax.multiply(ad.conj(v), du), axes=rows))))
    # phase: the largest component stays real, so its imaginary part turns v by i*phi
    size = lax.abs(v)
    top = ad.broadcast(lax.reduce_max(size, axes=rows), size.aval.shape,
                       tuple(i for i in range(len(size.aval.shape)) if i != rows[0]))
    at_top = lax.compare(size, top, direction="EQ")
    vk = lax.real(lax.reduce_sum(lax.select(at_top, v, ad.zeros(v)), axes=rows))
    duk = lax.imag(lax.reduce_sum(lax.select(at_top, du, ad.zeros(du)), axes=rows))
    phase = lax.divide(duk, vk)
    turn = lax.multiply(v, ad.const(v, 1j))
    dv = lax.subtract(du, scale_columns(turn, phase))
    return pack((dw, dv), parts, out)


eig = declare("eig", names=batch_names, batch=bt.trailing("eig", 2), padding=pd.trailing("eig", 2, _ALONG_MATRIX), infer=_eig_infer, emit=_eig_emit, impl=_eig_impl,
              jvp=_eig_jvp, vjp=ad.transposed(_eig_jvp))
