"""Inclusive prefix scans along one axis: `cumulative(x, *, axis, kind)` with kind "sum",
"prod", "max" or "min".

StableHLO has no scan op, and `reduce_window` with a window as long as the axis costs
O(n^2) on XLA:CPU. The emitter writes

  * for short axes, a log-depth (Hillis-Steele) scan: for s = 1, 2, 4, ... combine the
    running result with itself shifted by s along the axis (slice + pad with the identity);
  * for long axes (more than 64), a blocked scan: the axis is cut into m blocks of B ~
    sqrt(n) elements, laid out so that element i of every block forms one contiguous row; a
    `while` loop of B steps accumulates row i into row i + 1 (all blocks at once, in place);
    the block totals are scanned the same way (recursively) and added back as offsets. That
    is O(n) work in a few contiguous passes, instead of O(n log n) in ceil(log2 n) passes.

The interpreter uses NumPy's sequential accumulation; integer results are identical,
floating sums may differ in the last bits because the additions are associated differently.
"""
from __future__ import annotations

import math

import numpy as np

from .. import _dtypes as dt
from ..lowering.stablehlo import tensor_type
from . import ad, lax
from . import batching as bt
from . import padding as pd
from .core import aval, declare
from .reduce import _identity

KINDS = ("sum", "prod", "max", "min")
_OPS = {"sum": "stablehlo.add", "prod": "stablehlo.multiply",
        "max": "stablehlo.maximum", "min": "stablehlo.minimum"}
_BOOL_OPS = {"max": "stablehlo.or", "min": "stablehlo.and"}


def _i64s(values) -> str:
    return f"array<i64{': ' if values else ''}{', '.join(map(str, values))}>"


def _infer(x, *, axis, kind):
    if kind not in KINDS:
        raise ValueError(f"internal: cumulative kind {kind!r}")
    if not 0 <= axis < len(x.shape):
        raise ValueError(f"internal: cumulative axis {axis} of a {len(x.shape)}-d operand")
    allowed = dt.NUMERIC_KINDS if kind in ("sum", "prod") else dt.REAL_OR_BOOL_KINDS
    if x.dtype.kind not in allowed:
        raise TypeError(f"cumulative {kind}: unsupported dtype {x.dtype}")
    return x


_BLOCKED_ABOVE = 64


class _Writer:
    """Writes the ops of one scan through an EmitContext."""

    def __init__(self, ctx, dtype, kind):
        self.ctx = ctx
        self.dtype = dtype
        self.op = (_BOOL_OPS if dtype.kind == "b" else _OPS)[kind]
        self.scalar = aval((), dtype)
        self.fill = ctx.constant(_identity(kind, dtype), self.scalar)

    def av(self, shape):
        return aval(shape, self.dtype)

    def slice(self, v, shape, axis, start, stop):
        lo, hi = [0] * len(shape), list(shape)
        lo[axis], hi[axis] = start, stop
        out = list(shape)
        out[axis] = stop - start
        return self.ctx.op("stablehlo.slice", (v,), (self.av(shape),), self.av(out),
                           attrs=f"start_indices = {_i64s(lo)}, limit_indices = {_i64s(hi)}, "
                                 f"strides = {_i64s([1] * len(shape))}")

    def pad(self, v, shape, axis, low, high):
        nd = len(shape)
        lo, hi = [0] * nd, [0] * nd
        lo[axis], hi[axis] = low, high
        out = list(shape)
        out[axis] += low + high
        return self.ctx.op("stablehlo.pad", (v, self.fill), (self.av(shape), self.scalar), self.av(out),
                           attrs=f"edge_padding_low = {_i64s(lo)}, edge_padding_high = {_i64s(hi)}, "
                                 f"interior_padding = {_i64s([0] * nd)}")

    def combine(self, a, b, shape):
        r = self.ctx.fresh()
        t = tensor_type(self.av(shape))
        self.ctx.lines.append(f'{r} = "{self.op}"({a}, {b}) : ({t}, {t}) -> {t}')
        return r

    def reshape(self, v, shape, new):
        return self.ctx.op("stablehlo.reshape", (v,), (self.av(shape),), self.av(new))

    def transpose(self, v, shape, perm):
        return self.ctx.op("stablehlo.transpose", (v,), (self.av(shape),),
                           self.av([shape[p] for p in perm]), attrs=f"permutation = {_i64s(perm)}")

    def scan(self, v, shape, axis):
        n = shape[axis]
        if n <= 1:
            return v
        if n <= _BLOCKED_ABOVE:
            return self.hillis_steele(v, shape, axis)
        return self.blocked(v, shape, axis)

    def hillis_steele(self, v, shape, axis):
        n = shape[axis]
        acc, s = v, 1
        while s < n:
            head = self.slice(acc, shape, axis, 0, n - s)
            shifted = self.pad(head, [*shape[:axis], n - s, *shape[axis + 1:]], axis, s, 0)
            acc, s = self.combine(acc, shifted, shape), 2 * s
        return acc

    def blocked(self, v, shape, axis):
        shape = list(shape)
        n = shape[axis]
        block = math.isqrt(n - 1) + 1
        m = -(-n // block)
        pre, post = shape[:axis], shape[axis + 1:]
        if m * block != n:
            v = self.pad(v, shape, axis, 0, m * block - n)
        blocks = pre + [m, block] + post
        v = self.reshape(v, pre + [m * block] + post, blocks)
        # rows: (block, *pre, m, *post); row i holds element i of every block
        perm = [axis + 1] + list(range(axis + 1)) + list(range(axis + 2, len(blocks)))
        rows_shape = [blocks[p] for p in perm]
        rows = self.transpose(v, blocks, perm)
        rows = self.row_loop(rows, rows_shape)
        # the block totals (the last row), scanned, shifted to exclusive offsets
        totals_shape = rows_shape[1:]
        last = self.slice(rows, rows_shape, 0, block - 1, block)
        totals = self.reshape(last, [1] + totals_shape, totals_shape)
        inclusive = self.scan(totals, totals_shape, axis)
        head = self.slice(inclusive, totals_shape, axis, 0, m - 1)
        offsets = self.pad(head, [*totals_shape[:axis], m - 1, *totals_shape[axis + 1:]], axis, 1, 0)
        spread = self.ctx.op("stablehlo.broadcast_in_dim", (offsets,), (self.av(totals_shape),),
                             self.av(rows_shape),
                             attrs=f"broadcast_dimensions = {_i64s(range(1, len(rows_shape)))}")
        rows = self.combine(rows, spread, rows_shape)
        inverse = [perm.index(d) for d in range(len(perm))]
        v = self.transpose(rows, rows_shape, inverse)
        v = self.reshape(v, blocks, pre + [m * block] + post)
        if m * block != n:
            v = self.slice(v, pre + [m * block] + post, axis, 0, n)
        return v

    def row_loop(self, rows, shape):
        """for i in 1..shape[0]-1: rows[i] = rows[i - 1] (op) rows[i], as a while loop."""
        ctx = self.ctx
        i64 = tensor_type(aval((), dt.int64))
        i1 = tensor_type(aval((), dt.bool))
        t = tensor_type(self.av(shape))
        row = [1] + list(shape[1:])
        rt = tensor_type(self.av(row))
        ci, ct, bi, bt = ctx.fresh(), ctx.fresh(), ctx.fresh(), ctx.fresh()
        start, result = ctx.fresh(), ctx.fresh()
        limit, cond = ctx.fresh(), ctx.fresh()
        one, zero, prev_i, prev, cur, comb, upd, nxt = (ctx.fresh() for _ in range(8))
        zeros = ", ".join([zero] * (len(shape) - 1))
        idx_types = ", ".join([i64] * len(shape))
        sizes = _i64s(row)

        def const(name, value):
            return f'{name} = "stablehlo.constant"() {{value = dense<{value}> : {i64}}} : () -> {i64}'

        ctx.lines.append(const(start, 1))
        ctx.lines.append(
            f'{result}:2 = "stablehlo.while"({start}, {rows}) ({{\n'
            f"      ^bb0({ci}: {i64}, {ct}: {t}):\n"
            f"        {const(limit, shape[0])}\n"
            f'        {cond} = "stablehlo.compare"({ci}, {limit}) {{comparison_direction = '
            f"#stablehlo<comparison_direction LT>, compare_type = #stablehlo<comparison_type SIGNED>}}"
            f" : ({i64}, {i64}) -> {i1}\n"
            f'        "stablehlo.return"({cond}) : ({i1}) -> ()\n'
            f"    }}, {{\n"
            f"      ^bb0({bi}: {i64}, {bt}: {t}):\n"
            f"        {const(one, 1)}\n"
            f"        {const(zero, 0)}\n"
            f'        {prev_i} = "stablehlo.subtract"({bi}, {one}) : ({i64}, {i64}) -> {i64}\n'
            f'        {prev} = "stablehlo.dynamic_slice"({bt}, {prev_i}{", " if zeros else ""}{zeros}) '
            f"{{slice_sizes = {sizes}}} : ({t}, {idx_types}) -> {rt}\n"
            f'        {cur} = "stablehlo.dynamic_slice"({bt}, {bi}{", " if zeros else ""}{zeros}) '
            f"{{slice_sizes = {sizes}}} : ({t}, {idx_types}) -> {rt}\n"
            f'        {comb} = "{self.op}"({prev}, {cur}) : ({rt}, {rt}) -> {rt}\n'
            f'        {upd} = "stablehlo.dynamic_update_slice"({bt}, {comb}, {bi}{", " if zeros else ""}{zeros})'
            f" : ({t}, {rt}, {idx_types}) -> {t}\n"
            f'        {nxt} = "stablehlo.add"({bi}, {one}) : ({i64}, {i64}) -> {i64}\n'
            f'        "stablehlo.return"({nxt}, {upd}) : ({i64}, {t}) -> ()\n'
            f"    }}) : ({i64}, {t}) -> ({i64}, {t})")
        return f"{result}#1"


def _emit(ctx, x, *, axis, kind):
    xa = ctx.in_avals[0]
    if xa.shape[axis] <= 1:
        return x
    return _Writer(ctx, xa.dtype, kind).scan(x, list(xa.shape), axis)


def _impl(x, *, axis, kind):
    if kind == "sum":
        return np.cumsum(x, axis=axis, dtype=x.dtype)
    if kind == "prod":
        return np.cumprod(x, axis=axis, dtype=x.dtype)
    if x.dtype == np.bool_:
        fn = np.logical_or if kind == "max" else np.logical_and
    else:
        fn = np.maximum if kind == "max" else np.minimum
    if not x.size:
        return x
    out = fn.accumulate(x, axis=axis)
    if x.dtype.kind in "fV":
        # XLA orders -0 < +0: a running max that is zero is +0 once a +0 was seen (a min,
        # -0 once a -0 was); NumPy's accumulate keeps whichever zero came first.
        zeros = out == 0
        if zeros.any():
            wanted = (x == 0) & (np.signbit(x) == (kind == "min"))
            seen = np.logical_or.accumulate(wanted, axis=axis)
            signed = seen if kind == "min" else ~seen
            out = np.where(zeros, np.where(signed, -np.zeros_like(out), np.zeros_like(out)), out)
    return out


# Derivatives. sum: the tangent is the running sum of tangents, the cotangent the running
# sum taken from the end. prod: out_i = prod_{j<=i} x_j, so d out_i = out_i * sum_{j<=i}
# dx_j / x_j (exact except where an element is zero, as for reduce_prod). max and min: out_i
# is the element x_j it came from, so the tangent is t_j (a gather) and the cotangent goes
# back to x_j (a scatter-add); among equal candidates the latest one is chosen.

def _source_coordinates(x, out, axis):
    """For every element of out = cumulative max/min(x) along `axis`, the coordinates of the
    element of x it equals, shape x.shape + (ndim,): along `axis` the last position j <= i
    where x_j == out_j (a new extremum or a tie), elsewhere the element's own."""
    shape = x.aval.shape
    zero = ad.scalar(0, dt.int64, x.device)
    columns = []
    for d in range(len(shape)):
        pos = lax.iota(shape=shape, dtype=dt.int64, dim=d, device=x.device)
        if d == axis:
            pos = lax.cumulative(lax.select(lax.compare(x, out, direction="EQ"), pos, zero),
                       axis=axis, kind="max")
        columns.append(ad.reshape(pos, shape + (1,)))
    return lax.concatenate(*columns, axis=len(shape))


def _cumulative_jvp(tangents, x, *, out, axis, kind):
    if tangents[0] is None or not ad.differentiable(x):
        return None
    if kind == "sum":
        return lax.cumulative(tangents[0], axis=axis, kind=kind)
    if kind == "prod":
        return lax.multiply(out, lax.cumulative(lax.divide(tangents[0], x), axis=axis, kind="sum"))
    if math.prod(x.aval.shape) == 0 or x.aval.shape[axis] == 1:
        return tangents[0]
    coords = _source_coordinates(x, out, axis)
    return lax.gather(tangents[0], coords, axes=tuple(range(len(x.aval.shape))))


def _reverse_cumsum(node, axis):
    flipped = lax.reverse(node, dims=(axis,))
    return lax.reverse(lax.cumulative(flipped, axis=axis, kind="sum"), dims=(axis,))


def _cumulative_vjp(ct, x, *, out, axis, kind):
    if not ad.differentiable(x):
        return (None,)
    if kind == "sum":
        return (_reverse_cumsum(ct, axis),)
    if kind == "prod":
        return (lax.divide(_reverse_cumsum(lax.multiply(ct, ad.conj(out)), axis), ad.conj(x)),)
    if math.prod(x.aval.shape) == 0 or x.aval.shape[axis] == 1:
        return (ct,)
    coords = _source_coordinates(x, out, axis)
    return (lax.scatter(ad.zeros(x), coords, ct, axes=tuple(range(len(x.aval.shape))),
                        mode="add"),)


cumulative = declare("cumulative", infer=_infer, emit=_emit, impl=_impl,
                     batch=lambda bdims, x, *, axis, kind: (
                         lax.cumulative(x, axis=bt.shifted(axis, bdims[0]), kind=kind), bdims[0]),
                     # a forward scan: position i reads positions 0..i, data before padding
                     padding=pd.ignore("cumulative"),
                     jvp=_cumulative_jvp, vjp=_cumulative_vjp)

__all__ = ["cumulative", "KINDS"]
