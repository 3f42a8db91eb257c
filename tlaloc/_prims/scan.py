"""Inclusive prefix scans along one axis: `cumulative(x, *, axis, kind)` with kind "sum",
"prod", "max" or "min".

StableHLO has no scan op, and `reduce_window` with a window as long as the axis costs
O(n^2) on XLA:CPU, so the emitter writes a log-depth (Hillis-Steele) scan: for s = 1, 2, 4,
... it combines the running result with itself shifted by s along the axis (slice + pad with
the identity). That is ceil(log2 n) steps of O(n) work. The interpreter uses NumPy's
sequential accumulation; integer results are identical, floating sums may differ in the
last bits because the additions are associated differently.
"""
from __future__ import annotations

import numpy as np

from ..lowering.stablehlo import tensor_type
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
    allowed = "uifc" if kind in ("sum", "prod") else "buif"
    if x.dtype.kind not in allowed:
        raise TypeError(f"cumulative {kind}: unsupported dtype {x.dtype}")
    return x


def _emit(ctx, x, *, axis, kind):
    xa = ctx.in_avals[0]
    shape, dtype = xa.shape, xa.dtype
    n = shape[axis]
    op = (_BOOL_OPS if dtype.kind == "b" else _OPS)[kind]
    scalar = aval((), dtype)
    fill = ctx.constant(_identity(kind, dtype), scalar) if n > 1 else None
    t = tensor_type(xa)
    nd = len(shape)
    acc, s = x, 1
    while s < n:
        limit = list(shape)
        limit[axis] = n - s
        head = ctx.op("stablehlo.slice", (acc,), (xa,), aval(limit, dtype),
                      attrs=f"start_indices = {_i64s([0] * nd)}, limit_indices = {_i64s(limit)}, "
                            f"strides = {_i64s([1] * nd)}")
        low = [0] * nd
        low[axis] = s
        shifted = ctx.op("stablehlo.pad", (head, fill), (aval(limit, dtype), scalar), xa,
                         attrs=f"edge_padding_low = {_i64s(low)}, "
                               f"edge_padding_high = {_i64s([0] * nd)}, "
                               f"interior_padding = {_i64s([0] * nd)}")
        nxt = ctx.fresh()
        ctx.lines.append(f'{nxt} = "{op}"({acc}, {shifted}) : ({t}, {t}) -> {t}')
        acc, s = nxt, 2 * s
    return acc


def _impl(x, *, axis, kind):
    with np.errstate(all="ignore"):
        if kind == "sum":
            return np.cumsum(x, axis=axis, dtype=x.dtype)
        if kind == "prod":
            return np.cumprod(x, axis=axis, dtype=x.dtype)
        if x.dtype == np.bool_:
            fn = np.logical_or if kind == "max" else np.logical_and
        else:
            fn = np.maximum if kind == "max" else np.minimum
        return fn.accumulate(x, axis=axis) if x.size else x


cumulative = declare("cumulative", infer=_infer, emit=_emit, impl=_impl)

__all__ = ["cumulative", "KINDS"]
