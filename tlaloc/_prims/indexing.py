"""Gather and scatter along a set of axes, in one simple form.

Both primitives index the axes `axes` of an operand `x` with an integer array `idx` of shape
`batch + (len(axes),)`: the vector `idx[b]` holds one coordinate per indexed axis, in the order
of `axes`. The remaining ("window") axes of `x` are taken whole.

  * `gather(x, idx, *, axes)` has shape `batch + rest`, where `rest` are the dimensions of `x`
    not in `axes`, in order: `out[b, r] = x[idx[b] on axes, r on the others]`.
    Out-of-bounds coordinates are **clamped** to `[0, n - 1]` (StableHLO's rule).
  * `scatter(x, idx, updates, *, axes, mode)` returns `x` with `updates[b, r]` combined into
    the element `idx[b]` on `axes`; `updates` has shape `batch + rest`. `mode` is the combiner:
    "set" (replace), "add", "mul", "min" or "max" (on bool: "add"/"max" are or, "mul"/"min"
    are and). Out-of-bounds coordinates (negative ones included) are **dropped**. With "set"
    and duplicate coordinates the last update wins in the interpreter; XLA does not promise an
    order.

Negative coordinates are *not* wrapped: the namespace normalises them before binding.
"""
from __future__ import annotations

import numpy as np

from .. import _dtypes as dt
from ..lowering.stablehlo import tensor_type
from . import ad, lax
from . import batching as bt
from . import padding as pd
from . import elementwise as ew
from . import shape as sh
from .core import aval, declare, first_names, names_or_none


def _ints(values) -> str:
    return "[" + ", ".join(map(str, values)) + "]"


def _check(name, x, idx, axes):
    if idx.dtype.kind not in dt.INTEGER_KINDS:
        raise TypeError(f"internal: {name} indices must be integers, got {idx.dtype}")
    if not idx.shape or idx.shape[-1] != len(axes):
        raise ValueError(f"internal: {name} indices of shape {idx.shape} for axes {axes}")
    if len(set(axes)) != len(axes) or any(not 0 <= a < len(x.shape) for a in axes):
        raise ValueError(f"internal: {name} axes {axes} for a {len(x.shape)}-d operand")
    if any(x.shape[a] == 0 for a in axes):
        raise ValueError(f"internal: {name} along an axis of size 0")
    batch = tuple(idx.shape[:-1])
    rest = tuple(n for i, n in enumerate(x.shape) if i not in axes)
    return batch, rest


# ----------------------------------------------------------------------------- gather

def _gather_infer(x, idx, *, axes):
    batch, rest = _check("gather", x, idx, axes)
    return aval(batch + rest, x.dtype)


def _gather_emit(ctx, x, idx, *, axes):
    xa, ia = ctx.in_avals
    nb = len(ia.shape) - 1
    n_rest = len(xa.shape) - len(axes)
    sizes = [1 if d in axes else n for d, n in enumerate(xa.shape)]
    dims = (f"#stablehlo.gather<offset_dims = {_ints(range(nb, nb + n_rest))}, "
            f"collapsed_slice_dims = {_ints(sorted(axes))}, "
            f"start_index_map = {_ints(axes)}, index_vector_dim = {nb}>")
    return ctx.simple("stablehlo.gather", x, idx,
                      attrs=f"dimension_numbers = {dims}, indices_are_sorted = false, "
                            f"slice_sizes = array<i64{': ' if sizes else ''}{', '.join(map(str, sizes))}>")


def _coords(x_shape, idx, axes, clamp):
    """Per-axis int64 coordinate arrays, clamped into their axes; or unclamped, with the
    mask of the valid ones (None when clamped). They may be views of `idx`: read only."""
    cols = []
    valid = None if clamp else np.ones(idx.shape[:-1], dtype=bool)
    for k in range(len(axes)):
        c = idx[..., k]
        n = x_shape[axes[k]]
        if c.dtype.kind == "u":
            c = np.where(c >= np.uint64(n), n, c).astype(np.int64)
        elif c.dtype != np.int64:
            c = c.astype(np.int64)
        if clamp:
            c = np.minimum(np.maximum(c, 0), n - 1)   # (np.clip's wrapper costs ~3 us)
        else:
            valid &= (c >= 0) & (c < n)
        cols.append(c)
    return cols, valid


def _leading(x, axes):
    """x with `axes` moved to the front, in their order (x itself when they lead already)."""
    front = tuple(range(len(axes)))
    return x if tuple(axes) == front else np.moveaxis(x, axes, front)


def _gather_impl(x, idx, *, axes):
    cols, _ = _coords(x.shape, idx, axes, clamp=True)
    return _leading(x, axes)[tuple(cols)]


def _gather_jvp(tangents, x, idx, *, out, axes):
    return None if tangents[0] is None else lax.gather(tangents[0], idx, axes=axes)


def _gather_vjp(ct, x, idx, *, out, axes):
    if not ad.differentiable(x):
        return (None, None)
    return (lax.scatter(ad.zeros(x), idx, ct, axes=axes, mode="add"), None)


def _gather_names(out, x, idx, *, axes):
    """The index array's batch axes' names, then those of x's axes not indexed."""
    return (names_or_none(idx)[:-1]
            + tuple(n for i, n in enumerate(names_or_none(x)) if i not in axes))


def _window_position(n_batch, axes, d):
    """Where operand axis `d` (not indexed) is in a gather's result (or a scatter's updates)
    with `n_batch` index batch axes."""
    return n_batch + sum(1 for a in range(d) if a not in axes)


def _gather_batch(bdims, x, idx, *, axes):
    dx, di = bdims
    n_batch = len(idx.aval.shape) - 1 - (di is not None)
    if di is None:                 # the same indices for all: the mapped axis is a window axis
        axes = bt.shifted_all(axes, dx)
        return lax.gather(x, idx, axes=axes), _window_position(n_batch, axes, dx)
    if di == len(idx.aval.shape) - 1:      # mapped along the coordinate vectors: put it first
        idx, di = bt.moved(idx, di, 0, None), 0
    if dx is None:                 # the same operand: the indices' axes lead the result
        return lax.gather(x, idx, axes=axes), di
    size = x.aval.shape[dx]
    idx = bt.with_batch_coordinate(bt.moved(idx, di, 0, size))
    return lax.gather(bt.moved(x, dx, 0, size), idx, axes=(0,) + bt.shifted_all(axes, 0)), 0


gather = declare("gather", infer=_gather_infer, names=_gather_names, emit=_gather_emit, impl=_gather_impl,
                 jvp=_gather_jvp, vjp=_gather_vjp, batch=_gather_batch,
                 padding=pd.gather_rule)


# ----------------------------------------------------------------------------- scatter

SCATTER_MODES = ("set", "add", "mul", "min", "max")


def _scatter_infer(x, idx, updates, *, axes, mode):
    if mode not in SCATTER_MODES:
        raise ValueError(f"internal: scatter mode {mode!r}")
    batch, rest = _check("scatter", x, idx, axes)
    if updates.shape != batch + rest or updates.dtype is not x.dtype:
        raise ValueError(f"internal: scatter updates {updates} for operand {x} and indices {idx}")
    if x.dtype.kind == "c" and mode in ("min", "max"):
        raise TypeError("internal: scatter min/max of complex numbers")
    return x


def _combiner(mode, dtype):
    if mode == "set":
        return None
    if dtype.kind == "b":
        return "stablehlo.or" if mode in ("add", "max") else "stablehlo.and"
    return {"add": "stablehlo.add", "mul": "stablehlo.multiply",
            "min": "stablehlo.minimum", "max": "stablehlo.maximum"}[mode]


def _scatter_emit(ctx, x, idx, updates, *, axes, mode):
    xa, ia, _ = ctx.in_avals
    nb = len(ia.shape) - 1
    n_rest = len(xa.shape) - len(axes)
    t = tensor_type(aval((), xa.dtype))
    a, b = ctx.fresh(), ctx.fresh()
    body = _combiner(mode, xa.dtype)
    if body is None:
        inner, result = "", b
    else:
        result = ctx.fresh()
        inner = f'        {result} = "{body}"({a}, {b}) : ({t}, {t}) -> {t}\n'
    region = (f"{{\n      ^bb0({a}: {t}, {b}: {t}):\n{inner}"
              f'        "stablehlo.return"({result}) : ({t}) -> ()\n    }}')
    dims = (f"#stablehlo.scatter<update_window_dims = {_ints(range(nb, nb + n_rest))}, "
            f"inserted_window_dims = {_ints(sorted(axes))}, "
            f"scatter_dims_to_operand_dims = {_ints(axes)}, index_vector_dim = {nb}>")
    return ctx.op("stablehlo.scatter", (x, idx, updates), ctx.in_avals, ctx.out_aval,
                  attrs=f"indices_are_sorted = false, scatter_dimension_numbers = {dims}, "
                        "unique_indices = false", regions=region)


_UFUNC = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum}


def _scatter_impl(x, idx, updates, *, axes, mode):
    cols, valid = _coords(x.shape, idx, axes, clamp=False)
    out = np.array(x, copy=True)
    front = _leading(out, axes)   # a view of `out`
    if valid.all():
        where, ups = tuple(cols), updates
    else:
        where = tuple([c[valid] for c in cols])
        ups = updates[valid]
    if mode == "set":
        front[where] = ups   # NumPy assigns in order: the last duplicate wins
    elif out.dtype == np.bool_:
        fn = np.logical_or if mode in ("add", "max") else np.logical_and
        fn.at(front, where, ups)
    else:
        _UFUNC[mode].at(front, where, ups)
        if mode in ("min", "max") and out.dtype.kind in "fV":
            # XLA orders -0 < +0 (ufunc.at keeps the zero that came first): a max that is
            # zero is +0 when a candidate was +0, a min -0 when one was -0
            sign = mode == "min"
            wanted = (_leading(x, axes) == 0) & (np.signbit(_leading(x, axes)) == sign)
            np.logical_or.at(wanted, where, (ups == 0) & (np.signbit(ups) == sign))
            zeros = front == 0
            front[zeros] = np.where(wanted[zeros] == sign, -0.0, 0.0).astype(out.dtype)
    return out


# Derivatives. "set" and "add" are linear in (x, updates). "mul": out_s = x_s * prod of the
# updates u_k landing on slot s, so d out_s = dx_s * U_s + sum_k du_k * (x_s * prod_{j!=k}
# u_j), where the product of the others is computed without dividing by a zero factor (see
# _product_of_others). "min"/"max": out_s is one of the candidates (x_s and its updates);
# the derivative goes to the candidates equal to out_s, shared equally among ties (the
# convention of reductions). Updates whose coordinates fall outside x are dropped by the
# scatter, and get no derivative.

def _in_bounds(x, idx, updates, axes):
    """Whether each update lands inside x: bool of updates' shape."""
    batch = idx.aval.shape[:-1]
    nb = len(batch)
    ok = None
    for k, a in enumerate(axes):
        column = lax.slice(idx, start=(0,) * nb + (k,), limit=batch + (k + 1,),
                      strides=(1,) * (nb + 1))
        c = ad.reshape(column, batch)
        inside = lax.compare(c, ad.scalar(x.aval.shape[a], c.aval.dtype, c.device), direction="LT")
        if c.aval.dtype.kind == "i":
            inside = lax.bitwise_and(inside,
                          lax.compare(c, ad.scalar(0, c.aval.dtype, c.device), direction="GE"))
        ok = inside if ok is None else lax.bitwise_and(ok, inside)
    return ad.broadcast(ok, updates.aval.shape, range(nb))


def _at_updates(node, x, idx, updates, axes):
    """node (shape of x) read at every update's slot; zero for dropped updates."""
    return lax.select(_in_bounds(x, idx, updates, axes), lax.gather(node, idx, axes=axes),
                     ad.zeros(updates))


def _candidates(x, idx, updates, out, axes):
    """For min/max: (x is out, update k is its slot's out, number of candidates per slot) as
    masks in x's dtype."""
    one, zero = ad.const(x, 1), ad.zeros(x)
    x_wins = lax.select(lax.compare(x, out, direction="EQ"), one, zero)
    at_slot = lax.gather(out, idx, axes=axes)
    u_wins = lax.select(lax.bitwise_and(_in_bounds(x, idx, updates, axes),
                            lax.compare(updates, at_slot, direction="EQ")),
                       ad.const(updates, 1), ad.zeros(updates))
    count = lax.scatter(x_wins, idx, u_wins, axes=axes, mode="add")
    return x_wins, u_wins, count


def _product_of_others(x, idx, updates, axes):
    """For "mul": (product of the updates at each slot, for dx; x_s * prod_{j!=k} u_j for
    each update k). With Z the number of zero factors at the slot and P the product of its
    nonzero ones: a nonzero u_k gets P / u_k if Z == 0 (else 0); a zero u_k gets P if it is
    the only zero (else 0)."""
    one, zero = ad.const(x, 1), ad.zeros(x)
    u_one, u_zero = ad.const(updates, 1), ad.zeros(updates)
    product = lax.scatter(one, idx, updates, axes=axes, mode="mul")
    x_is_zero = lax.compare(x, zero, direction="EQ")
    u_is_zero = lax.compare(updates, u_zero, direction="EQ")
    nonzero = lax.scatter(lax.select(x_is_zero, one, x), idx,
                   lax.select(u_is_zero, u_one, updates), axes=axes, mode="mul")
    zeros = lax.scatter(lax.select(x_is_zero, one, zero), idx,
                 lax.select(u_is_zero, u_one, u_zero), axes=axes, mode="add")
    p_k = lax.gather(nonzero, idx, axes=axes)
    z_k = lax.gather(zeros, idx, axes=axes)
    safe_u = lax.select(u_is_zero, u_one, updates)
    others = lax.select(u_is_zero,
                       lax.select(lax.compare(z_k, u_one, direction="EQ"), p_k, u_zero),
                       lax.select(lax.compare(z_k, u_zero, direction="EQ"), lax.divide(p_k, safe_u), u_zero))
    valid = _in_bounds(x, idx, updates, axes)
    return product, lax.select(valid, others, u_zero)


def _scatter_jvp(tangents, x, idx, updates, *, out, axes, mode):
    tx, _, tu = tangents
    if tx is None and tu is None:
        return None
    tx = ad.zeros(x) if tx is None else tx
    tu = ad.zeros(updates) if tu is None else tu
    if mode in ("set", "add"):
        return lax.scatter(tx, idx, tu, axes=axes, mode=mode)
    if mode == "mul":
        product, others = _product_of_others(x, idx, updates, axes)
        return lax.scatter(lax.multiply(tx, product), idx, lax.multiply(tu, others), axes=axes, mode="add")
    x_wins, u_wins, count = _candidates(x, idx, updates, out, axes)
    total = lax.scatter(lax.multiply(tx, x_wins), idx, lax.multiply(tu, u_wins), axes=axes, mode="add")
    return lax.divide(total, count)


def _scatter_vjp(ct, x, idx, updates, *, out, axes, mode):
    if not ad.differentiable(x):
        return (None, None, None)
    if mode == "add":
        return (ct, None, _at_updates(ct, x, idx, updates, axes))
    if mode == "set":
        # overwritten elements get no gradient; each update gets the gradient of its slot
        cleared = lax.scatter(ct, idx, ad.zeros(updates), axes=axes, mode="set")
        return (cleared, None, _at_updates(ct, x, idx, updates, axes))
    if mode == "mul":
        product, others = _product_of_others(x, idx, updates, axes)
        ct_u = lax.multiply(lax.gather(ct, idx, axes=axes), ad.conj(others))
        return (lax.multiply(ct, ad.conj(product)), None, ct_u)
    x_wins, u_wins, count = _candidates(x, idx, updates, out, axes)
    shared = lax.divide(ct, count)
    return (lax.multiply(shared, x_wins), None, lax.multiply(lax.gather(shared, idx, axes=axes), u_wins))


def _scatter_batch(bdims, x, idx, updates, *, axes, mode):
    dx, di, du = bdims
    size = bt.size_of(bdims, (x, idx, updates))
    if di is None:                 # the same indices for all: the mapped axis is a window axis
        d = 0 if dx is None else dx
        axes = bt.shifted_all(axes, d)
        at = _window_position(len(idx.aval.shape) - 1, axes, d)
        return lax.scatter(bt.moved(x, dx, d, size), idx, bt.moved(updates, du, at, size),
                           axes=axes, mode=mode), d
    # indices per example: each example's coordinates gain its number and write its own slice
    idx = bt.with_batch_coordinate(bt.moved(idx, di, 0, size))
    return lax.scatter(bt.moved(x, dx, 0, size), idx, bt.moved(updates, du, 0, size),
                       axes=(0,) + bt.shifted_all(axes, 0), mode=mode), 0


scatter = declare("scatter", infer=_scatter_infer, names=first_names, emit=_scatter_emit, impl=_scatter_impl,
                  jvp=_scatter_jvp, vjp=_scatter_vjp, batch=_scatter_batch,
                  padding=pd.scatter_rule)

__all__ = ["gather", "scatter", "SCATTER_MODES"]
