"""Reductions over a set of axes, and the contraction primitive dot_general."""
from __future__ import annotations

import math

import numpy as np

from .. import _dtypes as dt
from . import ad, lax
from . import batching as bt
from . import padding as pd
from .core import aval, declare, names_or_none, reduced_names, unify
from ..lowering.stablehlo import tensor_type


def _reduced(x, axes):
    return aval([n for i, n in enumerate(x.shape) if i not in axes], x.dtype)


def _identity(kind, dtype):
    if kind == "sum":
        return 0
    if kind == "prod":
        return 1
    if dtype.kind == "b":
        return kind == "min"
    if dtype.kind == "f":
        return float("-inf") if kind == "max" else float("inf")
    info = np.iinfo(dtype.numpy)
    return info.min if kind == "max" else info.max


_BODY = {"sum": "stablehlo.add", "prod": "stablehlo.multiply",
         "max": "stablehlo.maximum", "min": "stablehlo.minimum"}


def _reduce_op(ctx, x, x_aval, out_aval, body, identity, axes):
    """stablehlo.reduce of x over `axes` with the binary op `body` from `identity`."""
    scalar = aval((), x_aval.dtype)
    t = tensor_type(scalar)
    init = ctx.constant(identity, scalar)
    a, b, r = ctx.fresh(), ctx.fresh(), ctx.fresh()
    region = (f'{{\n      ^bb0({a}: {t}, {b}: {t}):\n'
              f'        {r} = "{body}"({a}, {b}) : ({t}, {t}) -> {t}\n'
              f'        "stablehlo.return"({r}) : ({t}) -> ()\n    }}')
    dims = f"array<i64{': ' if axes else ''}{', '.join(map(str, axes))}>"
    return ctx.op("stablehlo.reduce", (x, init), (x_aval, scalar), out_aval,
                  attrs=f"dimensions = {dims}", regions=region)


def _complex_sum(ctx, x, axes):
    """A complex sum as the sums of the real and the imaginary parts. XLA rewrites a sum over
    broadcast axes (of a tile, or of x - y where both are broadcast) into a multiply by the
    count, which for a complex x is a complex product: (0.6 + inf j) * (4 + 0j) has a real
    part 0.6 * 4 - inf * 0 = nan, where the sum as written is 2.4 + inf j (tests/fuzz, seed
    20261213). A sum of real parts may become a real multiply, which is the sum's value."""
    x_aval, out = ctx.in_avals[0], ctx.out_aval
    part = dt.real_of(x_aval.dtype)
    x_part, out_part = aval(x_aval.shape, part), aval(out.shape, part)
    sums = [_reduce_op(ctx, ctx.op(which, (x,), (x_aval,), x_part), x_part, out_part,
                       "stablehlo.add", 0, axes)
            for which in ("stablehlo.real", "stablehlo.imag")]
    return ctx.op("stablehlo.complex", sums, (out_part, out_part), out)


def _reduction(kind, numpy_fn, kinds):
    name = f"reduce_{kind}"

    def infer(x, *, axes):
        if x.dtype.kind not in kinds:
            raise TypeError(f"{name}: unsupported dtype {x.dtype}")
        return _reduced(x, axes)

    def emit(ctx, x, *, axes):
        dtype = ctx.in_avals[0].dtype
        body = _BODY[kind]
        if dtype.kind == "b":   # max/min of booleans are or/and; sum/prod are not used on bool
            body = {"max": "stablehlo.or", "min": "stablehlo.and"}.get(kind, body)
        if kind == "sum" and dtype.kind == "c":
            return _complex_sum(ctx, x, axes)
        out = _reduce_op(ctx, x, ctx.in_avals[0], ctx.out_aval, body, _identity(kind, dtype), axes)
        if kind in ("max", "min") and dtype.kind == "f":
            # XLA:CPU's vectorised max/min reductions do not propagate NaN (from about 4,096
            # elements a NaN is dropped with the values beside it; jax 0.10.2 gives the same):
            # a NaN anywhere in the reduced elements is found by an or of x != x
            x_aval, out_aval = ctx.in_avals[0], ctx.out_aval
            isnan = ctx.op("stablehlo.compare", (x, x), (x_aval, x_aval),
                           aval(x_aval.shape, dt.bool),
                           attrs="comparison_direction = #stablehlo<comparison_direction NE>, "
                                 "compare_type = #stablehlo<comparison_type FLOAT>")
            some_nan = _reduce_op(ctx, isnan, aval(x_aval.shape, dt.bool),
                                  aval(out_aval.shape, dt.bool), "stablehlo.or", False, axes)
            out = ctx.op("stablehlo.select", (some_nan, ctx.constant(float("nan"), out_aval), out),
                         (aval(out_aval.shape, dt.bool), out_aval, out_aval), out_aval)
        return out

    def impl(x, *, axes):
        # a full reduction is faster with axis=None than with the tuple of every axis
        return numpy_fn(x, axis=None if len(axes) == x.ndim else axes)

    def source(ctx, x, *, axes):
        dtype = ctx.out_aval.dtype
        keep = f", dtype=xp.{dtype}" if kind in ("sum", "prod") and dtype.kind in dt.INTEGER_KINDS else ""
        return f"xp.{kind}({x}, axis={axes}{keep})"

    def batch(bdims, x, *, axes):     # the mapped axis loses the reduced axes before it
        (d,) = bdims
        return getattr(lax, name)(x, axes=bt.shifted_all(axes, d)), d - sum(a < d for a in axes)

    return declare(name, infer=infer, emit=emit, impl=impl, source=source, names=reduced_names,
                   batch=batch, padding=pd.reduction(name, lambda dtype: _identity(kind, dtype)),
                   **_REDUCE_RULES[kind])


def _expand(node, x, axes):
    """Broadcast a reduced node back to the operand's shape."""
    kept = tuple(i for i in range(len(x.aval.shape)) if i not in axes)
    return ad.broadcast(node, x.aval.shape, kept)


def _sum_vjp(ct, x, *, out, axes):
    return (_expand(ct, x, axes),)


def _prod_partial(x, out, axes):
    # d prod / d x_i = prod / x_i: exact except where x_i == 0 (see docs/derivatives.md)
    return lax.divide(_expand(out, x, axes), x)


def _extremum_weights(x, out, axes):
    """1/k on each of the k elements equal to the extremum, 0 elsewhere (as in JAX)."""
    hit = ad.convert(lax.compare(x, _expand(out, x, axes), direction="EQ"), x.aval.dtype)
    count = lax.reduce_sum(hit, axes=axes)
    return lax.divide(hit, _expand(count, x, axes))


def _weighted_rules(weights):
    def jvp(tangents, x, *, out, axes):
        if tangents[0] is None or not ad.differentiable(x):
            return None
        return lax.reduce_sum(lax.multiply(tangents[0], weights(x, out, axes)), axes=axes)

    def vjp(ct, x, *, out, axes):
        if not ad.differentiable(x):
            return (None,)
        return (lax.multiply(_expand(ct, x, axes), ad.conj(weights(x, out, axes))),)

    return {"jvp": jvp, "vjp": vjp}


_REDUCE_RULES = {
    "sum": ad.linear_rules(_sum_vjp),
    "prod": _weighted_rules(_prod_partial),
    "max": _weighted_rules(_extremum_weights),
    "min": _weighted_rules(_extremum_weights),
}


# The ufuncs' reduce methods, not np.sum & co: those wrap them in Python that costs more than
# the reduction itself on the small arrays the interpreter tier runs.
reduce_sum = _reduction("sum", lambda x, axis: np.add.reduce(x, axis=axis, dtype=x.dtype), dt.NUMERIC_KINDS)
reduce_prod = _reduction("prod", lambda x, axis: np.multiply.reduce(x, axis=axis, dtype=x.dtype), dt.NUMERIC_KINDS)
reduce_max = _reduction("max", lambda x, axis: np.maximum.reduce(x, axis=axis, initial=_identity("max", dt.from_numpy(x.dtype))), dt.REAL_OR_BOOL_KINDS)
reduce_min = _reduction("min", lambda x, axis: np.minimum.reduce(x, axis=axis, initial=_identity("min", dt.from_numpy(x.dtype))), dt.REAL_OR_BOOL_KINDS)


# dot_general: contract lhs dims with rhs dims, batch over paired dims.
# Result dims: batch dims, then lhs free dims, then rhs free dims (StableHLO's order).
def _dot_free(shape, contract, batch):
    return [i for i in range(len(shape)) if i not in contract and i not in batch]


def _dot_infer(lhs, rhs, *, contract, batch):
    (lc, rc), (lb, rb) = contract, batch
    if lhs.dtype is not rhs.dtype or lhs.dtype.kind == "b":
        raise TypeError(f"dot_general: unsupported dtypes {lhs.dtype}, {rhs.dtype}")
    for a, b in zip(lc + lb, rc + rb):     # (a loop: compiled, a generator is an object)
        if lhs.shape[a] != rhs.shape[b]:
            raise ValueError(f"internal: dot_general shapes {lhs.shape} {rhs.shape} disagree")
    shape = ([lhs.shape[i] for i in lb] + [lhs.shape[i] for i in _dot_free(lhs.shape, lc, lb)]
             + [rhs.shape[i] for i in _dot_free(rhs.shape, rc, rb)])
    return aval(shape, lhs.dtype)


def _dot_emit(ctx, lhs, rhs, *, contract, batch):
    (lc, rc), (lb, rb) = contract, batch
    dims = (f"#stablehlo.dot<lhs_batching_dimensions = [{', '.join(map(str, lb))}], "
            f"rhs_batching_dimensions = [{', '.join(map(str, rb))}], "
            f"lhs_contracting_dimensions = [{', '.join(map(str, lc))}], "
            f"rhs_contracting_dimensions = [{', '.join(map(str, rc))}]>")
    precision = "[#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]"
    return ctx.simple("stablehlo.dot_general", lhs, rhs,
                      attrs=f"dot_dimension_numbers = {dims}, precision_config = {precision}")


# dtypes whose dot product is BLAS's (vectorised; NumPy's float32 sum is a scalar loop)
_BLAS_DTYPES = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.complex64),
                np.dtype(np.complex128))


def _all_finite(a) -> bool:
    """Whether every element of the floating array `a` is finite, read from one reduction
    (no temporary array but the copy `ravel` makes of a strided one): a NaN or an infinity
    makes the dot product of the elements with themselves (or their sum) NaN or infinite.
    One that overflows says False of finite elements, which only costs the exact path."""
    if a.dtype in _BLAS_DTYPES:
        flat = a.ravel(order="K")       # (a view of a transposed operand: no copy)
        total = np.dot(flat, flat)
    else:
        total = np.add.reduce(a, axis=None)
    # (math.isfinite reads a real NumPy scalar as a float, faster than np.isfinite)
    return math.isfinite(total) if a.dtype.kind == "f" else bool(np.isfinite(total))


def _dot_exact(lhs, rhs, contract, batch):
    """dot_general as a plain sum of products (einsum's own loops, no BLAS): BLAS kernels
    may skip zero factors, so inf * 0 would not give nan. A contraction over one element is
    the product itself, as XLA computes it (a sum starting from +0 would lose the sign of
    a zero product)."""
    (lc, rc), (lb, rb) = contract, batch
    lf, rf = _dot_free(lhs.shape, lc, lb), _dot_free(rhs.shape, rc, rb)
    if math.prod([lhs.shape[i] for i in lc]) == 1:
        a = np.transpose(lhs, list(lb) + lf + list(lc)).reshape(
            [lhs.shape[i] for i in lb] + [lhs.shape[i] for i in lf] + [1] * len(rf))
        c = np.transpose(rhs, list(rb) + rf + list(rc)).reshape(
            [rhs.shape[i] for i in rb] + [1] * len(lf) + [rhs.shape[i] for i in rf])
        return np.multiply(a, c)
    letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    left = [next(letters) for _ in range(lhs.ndim)]
    right = [next(letters) for _ in range(rhs.ndim)]
    for i, j in zip(lc + lb, rc + rb):
        right[j] = left[i]
    out = [left[i] for i in lb] + [left[i] for i in lf] + [right[j] for j in rf]
    return np.einsum(f"{''.join(left)},{''.join(right)}->{''.join(out)}", lhs, rhs,
                     optimize=False)


def _dot_impl(lhs, rhs, *, contract, batch):
    (lc, rc), (lb, rb) = contract, batch
    if lhs.dtype.kind in dt.FLOATING_KINDS and (math.prod([lhs.shape[i] for i in lc]) == 1
                                   or not (_all_finite(lhs) and _all_finite(rhs))):
        return _dot_exact(lhs, rhs, contract, batch)
    if not lb:
        if lc == (lhs.ndim - 1,) and rc == (0,) and lhs.ndim <= 2 and rhs.ndim <= 2:
            return np.matmul(lhs, rhs) if lhs.ndim == 2 and rhs.ndim == 2 else np.dot(lhs, rhs)
        # tensordot is BLAS without the 3-d reshaping
        return np.tensordot(lhs, rhs, axes=(list(lc), list(rc)))
    lf, rf = _dot_free(lhs.shape, lc, lb), _dot_free(rhs.shape, rc, rb)
    bshape = [lhs.shape[i] for i in lb]
    k = int(np.prod([lhs.shape[i] for i in lc], dtype=np.int64))
    m = int(np.prod([lhs.shape[i] for i in lf], dtype=np.int64))
    n = int(np.prod([rhs.shape[i] for i in rf], dtype=np.int64))
    b = int(np.prod(bshape, dtype=np.int64))
    a = np.transpose(lhs, list(lb) + lf + list(lc)).reshape(b, m, k)
    c = np.transpose(rhs, list(rb) + list(rc) + rf).reshape(b, k, n)
    out = np.matmul(a, c)
    return out.reshape(bshape + [lhs.shape[i] for i in lf] + [rhs.shape[i] for i in rf])


def _dot_jvp(tangents, lhs, rhs, *, out, contract, batch):
    ta, tb = tangents
    total = None
    if ta is not None:
        total = lax.dot_general(ta, rhs, contract=contract, batch=batch)
    if tb is not None:
        total = ad.add_any(total, lax.dot_general(lhs, tb, contract=contract, batch=batch))
    return total


def _dot_ct_operand(ct, other, nb, n_free_self, ct_other_free, own, other_dims):
    """Cotangent of one dot_general operand: contract ct with the other operand over the
    other's free dims, then permute into this operand's dimension order.

    own = (batch, contract, free) dims of this operand; other_dims = (batch, contract, free)
    of the other operand, with contract pairs aligned to own's contract dims."""
    own_b, own_c, own_f = own
    oth_b, oth_c, oth_f = other_dims
    g = lax.dot_general(ct, ad.conj(other), contract=(tuple(ct_other_free), tuple(oth_f)),
             batch=(tuple(range(nb)), tuple(oth_b)))
    # g dims: batch, this operand's free dims, then the other's contract dims in sorted order
    rest = sorted(oth_c)
    own_for_rest = [own_c[oth_c.index(r)] for r in rest]
    placed = list(own_b) + list(own_f) + own_for_rest
    perm = [placed.index(d) for d in range(len(placed))]
    return ad.transpose(g, perm) if perm != list(range(len(perm))) else g


def _dot_vjp(ct, lhs, rhs, *, out, contract, batch):
    (lc, rc), (lb, rb) = contract, batch
    lf, rf = _dot_free(lhs.aval.shape, lc, lb), _dot_free(rhs.aval.shape, rc, rb)
    nb = len(lb)
    ct_lhs_free = list(range(nb, nb + len(lf)))
    ct_rhs_free = list(range(nb + len(lf), nb + len(lf) + len(rf)))
    ct_l = _dot_ct_operand(ct, rhs, nb, len(lf), ct_rhs_free, (list(lb), list(lc), lf),
                           (list(rb), list(rc), rf))
    ct_r = _dot_ct_operand(ct, lhs, nb, len(rf), ct_lhs_free, (list(rb), list(rc), rf),
                           (list(lb), list(lc), lf))
    return (ct_l, ct_r)


def _dot_source(ctx, lhs, rhs, *, contract, batch):
    (lc, rc), (lb, rb) = contract, batch
    nl, nr = len(ctx.in_avals[0].shape), len(ctx.in_avals[1].shape)
    if not lb:
        return f"xp.tensordot({lhs}, {rhs}, axes=({list(lc)}, {list(rc)}))"
    nb = len(lb)
    if (tuple(lb) == tuple(rb) == tuple(range(nb)) and nl == nr == nb + 2
            and tuple(lc) == (nb + 1,) and tuple(rc) == (nb,)):
        return f"{lhs} @ {rhs}"
    return None


def _dot_names(out, lhs, rhs, *, contract, batch):
    """Batch axes' names unified, then lhs's free axes', then rhs's; contracted axes' names
    must agree where both are named (`bind` refuses a result that repeats a name)."""
    (lc, rc), (lb, rb) = contract, batch
    ln, rn = names_or_none(lhs), names_or_none(rhs)
    for a, b in zip(lc, rc):
        if ln[a] is not None and rn[b] is not None and ln[a] != rn[b]:
            raise ValueError(f"contracted axes are named {ln[a]!r} and {rn[b]!r}")
    names = list(unify(None, [tuple(ln[i] for i in lb), tuple(rn[i] for i in rb)]) or ())
    names += [ln[i] for i in _dot_free(lhs.shape, lc, lb)]
    names += [rn[i] for i in _dot_free(rhs.shape, rc, rb)]
    return names


def _dot_batch(bdims, lhs, rhs, *, contract, batch):
    (lc, rc), (lb, rb) = contract, batch
    ld, rd = bdims
    lc, lb = (lc, lb) if ld is None else (bt.shifted_all(lc, ld), bt.shifted_all(lb, ld))
    rc, rb = (rc, rb) if rd is None else (bt.shifted_all(rc, rd), bt.shifted_all(rb, rd))
    if ld is not None and rd is not None:    # both mapped: one more batch axis, in front
        contract, batch = (lc, rc), ((ld,) + lb, (rd,) + rb)
        if all(lhs.aval.shape[a] == 1 for a in lc):
            return _outer_product(lhs, rhs, contract, batch), 0
        return lax.dot_general(lhs, rhs, contract=contract, batch=batch), 0
    # one side mapped: the mapped axis is a free axis of that side, merged with the side's
    # other free axes when they are adjacent (XLA:CPU runs a dot whose operand has several
    # free axes, (B, 1, k) @ (k, n) say, an order of magnitude slower than (B, k) @ (k, n))
    mapped, d, own, other = (lhs, ld, (lc, lb), (rc, rb)) if ld is not None else (rhs, rd, (rc, rb), (lc, lb))
    free = _dot_free(mapped.aval.shape, *own)
    shape = mapped.aval.shape
    merged = len(free) > 1 and free == list(range(free[0], free[0] + len(free)))
    if merged:
        s, e = free[0], free[-1] + 1
        mapped = lax.reshape(mapped, shape=shape[:s] + (math.prod(shape[s:e]),) + shape[e:])
        own = tuple(tuple(a if a < s else a - (e - s - 1) for a in axes) for axes in own)
    (lc, lb), (rc, rb) = (own, other) if ld is not None else (other, own)
    lhs, rhs = (mapped, rhs) if ld is not None else (lhs, mapped)
    out = lax.dot_general(lhs, rhs, contract=(lc, rc), batch=(lb, rb))
    start = len(lb) if ld is not None else len(lb) + len(_dot_free(lhs.aval.shape, lc, lb))
    if merged:
        o = out.aval.shape
        out = lax.reshape(out, shape=o[:start] + tuple(shape[a] for a in free) + o[start + 1:])
    return out, start + free.index(d)


def _outer_product(lhs, rhs, contract, batch):
    """dot_general with contracted axes of size 1, as the product of broadcasts (XLA:CPU
    runs batched matrix products of inner size 1 at half the speed)."""
    (lc, rc), (lb, rb) = contract, batch
    lf, rf = _dot_free(lhs.aval.shape, lc, lb), _dot_free(rhs.aval.shape, rc, rb)
    nb = len(lb)
    out = tuple(lhs.aval.shape[a] for a in lb + tuple(lf)) + tuple(rhs.aval.shape[a] for a in rf)

    def spread(x, axes, at):
        kept = lax.transpose(x, perm=axes + tuple(a for a in range(len(x.aval.shape)) if a not in axes))
        kept = lax.reshape(kept, shape=tuple(x.aval.shape[a] for a in axes))
        return lax.broadcast_in_dim(kept, shape=out, dims=at)

    left = spread(lhs, lb + tuple(lf), tuple(range(nb + len(lf))))
    right = spread(rhs, rb + tuple(rf), tuple(range(nb)) + tuple(range(nb + len(lf), len(out))))
    return lax.multiply(left, right)


dot_general = declare("dot_general", infer=_dot_infer, emit=_dot_emit, impl=_dot_impl,
                      names=_dot_names, batch=_dot_batch, padding=pd.dot_general_rule,
                      jvp=_dot_jvp, vjp=_dot_vjp, source=_dot_source)
