"""Primitives that move, select or create elements without arithmetic."""
from __future__ import annotations

import builtins
import math

import numpy as np

from .. import _dtypes as dt
from .. import _graph
from .._graph import Aval
from . import ad, lax
from . import batching as bt
from . import padding as pd
from .core import aval, declare, first_names, unify


def _i64s(values) -> str:
    return f"array<i64{': ' if values else ''}{', '.join(map(str, values))}>"


# broadcast_in_dim: operand dimension i becomes result dimension dims[i]
# (The shape rules that run on every broadcasting, transposing or writing operation loop
# over axes by index: compiled, a generator expression makes a generator object per call.)
def _broadcast_infer(x, *, shape, dims):
    fits = len(dims) == len(x.shape)
    if fits:
        for i in range(len(dims)):
            n = x.shape[i]
            if n != 1 and n != shape[dims[i]]:
                fits = False
                break
    if not fits:
        raise ValueError(f"internal: cannot broadcast {x.shape} to {shape} along {dims}")
    return aval(shape, x.dtype)


def _broadcast_impl(x, *, shape, dims):
    # A view with zero strides along the new axes and those stretched from size 1, as
    # np.broadcast_to makes, at a fraction of its cost (implementations never write to
    # their operands); operand axis i keeps its stride at result axis dims[i].
    strides = [0] * len(shape)
    x_shape, x_strides = x.shape, x.strides
    for i in range(len(dims)):
        d = dims[i]
        if x_shape[i] == shape[d]:
            strides[d] = x_strides[i]
    try:
        return np.ndarray(shape, x.dtype, x, 0, tuple(strides))
    except (ValueError, BufferError, TypeError):   # a view that exports no buffer
        expanded = [1] * len(shape)
        for i in range(len(dims)):
            expanded[dims[i]] = x_shape[i]
        return np.broadcast_to(x.reshape(expanded), shape)


def _broadcast_transpose(ct, x, *, out, shape, dims):
    # sum over the new axes and over the axes that were stretched from size 1
    summed = tuple(d for d in range(len(shape)) if d not in dims) + tuple(
        d for i, d in enumerate(dims) if x.aval.shape[i] == 1 and shape[d] != 1)
    return (ad.reshape(ad.sum_axes(ct, tuple(sorted(summed))), x.aval.shape),)


def _broadcast_source(ctx, x, *, shape, dims):
    if tuple(dims) == tuple(range(len(shape) - len(dims), len(shape))):
        return f"xp.broadcast_to({x}, {shape})"
    expanded = [1] * len(shape)
    for i, d in enumerate(dims):
        expanded[d] = ctx.in_avals[0].shape[i]
    return f"xp.broadcast_to(xp.reshape({x}, {tuple(expanded)}), {shape})"


def _broadcast_names(out, x, *, shape, dims):
    names = [None] * len(shape)
    for i, d in enumerate(dims):
        names[d] = x.names[i]
    return names


def _broadcast_batch(bdims, x, *, shape, dims):
    # the mapped axis lands right after the result axis of the operand axis before it
    (d,) = bdims
    to = dims[d - 1] + 1 if d else 0
    dims = bt.inserted(tuple(k + (k >= to) for k in dims), d, to)
    return lax.broadcast_in_dim(x, shape=bt.inserted(shape, to, x.aval.shape[d]), dims=dims), to


broadcast_in_dim = declare(
    "broadcast_in_dim", infer=_broadcast_infer, names=_broadcast_names, impl=_broadcast_impl, source=_broadcast_source,
    batch=_broadcast_batch, padding=pd.ignore("broadcast_in_dim"),
    **ad.linear_rules(_broadcast_transpose),
    emit=lambda ctx, x, *, shape, dims: ctx.simple(
        "stablehlo.broadcast_in_dim", x, attrs=f"broadcast_dimensions = {_i64s(dims)}"),
        moves_data=True)


def _reshape_infer(x, *, shape):
    if math.prod(shape) != math.prod(x.shape):
        raise ValueError(f"internal: reshape {x.shape} -> {shape}")
    return aval(shape, x.dtype)


def _reshape_names(out, x, *, shape):
    """The names of leading and trailing axes that survive unchanged."""
    names, old = x.names, x.shape
    if tuple(shape) == tuple(old):
        return names
    new = [None] * len(shape)
    i = 0
    while i < min(len(old), len(shape)) and old[i] == shape[i]:
        new[i] = names[i]
        i += 1
    j = 1
    while j <= min(len(old), len(shape)) - i and old[-j] == shape[-j]:
        new[-j] = names[-j]
        j += 1
    return new


reshape = declare("reshape", infer=_reshape_infer, names=_reshape_names,
                  emit=lambda ctx, x, *, shape: ctx.simple("stablehlo.reshape", x),
                  impl=lambda x, *, shape: x.reshape(shape),   # (np.reshape's Python wrapper calls this)
                  source=lambda ctx, x, *, shape: f"xp.reshape({x}, {shape})",
                  batch=lambda bdims, x, *, shape: (lax.reshape(
                      bt.moved(x, bdims[0], 0, None), shape=(x.aval.shape[bdims[0]],) + tuple(shape)), 0),
                  padding=pd.keeps_axes("reshape"),
                  **ad.linear_rules(lambda ct, x, *, out, shape: (ad.reshape(ct, x.aval.shape),)),
                  moves_data=True)


transpose = declare(
    "transpose",
    infer=lambda x, *, perm: aval([x.shape[p] for p in perm], x.dtype),
    names=lambda out, x, *, perm: tuple(x.names[p] for p in perm),
    emit=lambda ctx, x, *, perm: ctx.simple("stablehlo.transpose", x,
                                            attrs=f"permutation = {_i64s(perm)}"),
    impl=lambda x, *, perm: x.transpose(perm),   # (as np.transpose's Python wrapper does)
    source=lambda ctx, x, *, perm: f"xp.permute_dims({x}, {perm})",
    batch=lambda bdims, x, *, perm: (bt.transposed(x, (bdims[0],) + bt.shifted_all(perm, bdims[0])), 0),
    padding=pd.ignore("transpose"),
    **ad.linear_rules(lambda ct, x, *, out, perm: (ad.transpose(ct, [perm.index(i) for i in range(len(perm))]),)),
    moves_data=True)


def _slice_infer(x, *, start, limit, strides):
    # indexed, not zipped: compiled, zip builds an iterator and a tuple per axis (every
    # basic index records a slice, so this runs on each x[a:b])
    shape = []
    for i in range(len(start)):
        n = -(-(limit[i] - start[i]) // strides[i])
        shape.append(n if n > 0 else 0)
    return Aval(tuple(shape), x.dtype)


_SLICE_KEYS = {}        # (start, limit, strides) -> the NumPy key of that slice
_SLICE_KEYS_MAX = 1024  # emptied when full


def _slice_impl(x, *, start, limit, strides):
    # the NumPy key is made once per slice of a loop body, not at every run (the interpreter
    # runs the stencil's six slices in every step)
    params = (start, limit, strides)
    key = _SLICE_KEYS.get(params)
    if key is None:
        if len(_SLICE_KEYS) >= _SLICE_KEYS_MAX:
            _SLICE_KEYS.clear()
        key = _SLICE_KEYS[params] = tuple(map(builtins.slice, start, limit, strides))
    return x[key]


def _slice_transpose(ct, x, *, out, start, limit, strides):
    low, high, interior = [], [], []
    for n, lo, st, m in zip(x.aval.shape, start, strides, out.aval.shape):
        spread = m + max(m - 1, 0) * (st - 1)
        low.append(lo)
        high.append(n - lo - spread)
        interior.append(st - 1 if m > 1 else 0)
    return (lax.pad(ct, _scalar_zero(ct), low=tuple(low), high=tuple(high), interior=tuple(interior)),)


def _scalar_zero(like):
    return lax.constant(shape=(), dtype=like.aval.dtype, value=0, device=like.device)


def _slice_source(ctx, x, *, start, limit, strides):
    parts = []
    for lo, hi, st, n in zip(start, limit, strides, ctx.in_avals[0].shape):
        text = f"{lo or ''}:{'' if hi == n else hi}" + (f":{st}" if st != 1 else "")
        parts.append(text)
    return f"{x}[{', '.join(parts)}]"


def _slice_batch(bdims, x, *, start, limit, strides):
    (d,) = bdims
    return lax.slice(x, start=bt.inserted(start, d, 0), limit=bt.inserted(limit, d, x.aval.shape[d]),
                     strides=bt.inserted(strides, d, 1)), d


slice = declare(
    "slice", infer=_slice_infer, names=first_names, source=_slice_source, **ad.linear_rules(_slice_transpose),
    batch=_slice_batch, padding=pd.slice_rule,
    emit=lambda ctx, x, *, start, limit, strides: ctx.simple(
        "stablehlo.slice", x, attrs=f"start_indices = {_i64s(start)}, "
        f"limit_indices = {_i64s(limit)}, strides = {_i64s(strides)}"),
    impl=_slice_impl, moves_data=True)


reverse = declare(
    "reverse", infer=lambda x, *, dims: x, names=first_names,
    emit=lambda ctx, x, *, dims: ctx.simple("stablehlo.reverse", x, attrs=f"dimensions = {_i64s(dims)}"),
    impl=lambda x, *, dims: np.flip(x, dims) if dims else x,
    source=lambda ctx, x, *, dims: f"xp.flip({x}, axis={dims})",
    batch=lambda bdims, x, *, dims: (lax.reverse(x, dims=bt.shifted_all(dims, bdims[0])), bdims[0]),
    padding=pd.reverse_rule,
    **ad.linear_rules(lambda ct, x, *, out, dims: (lax.reverse(ct, dims=dims),)), moves_data=True)


def _concat_infer(*xs, axis):
    first = xs[0]
    for x in xs[1:]:
        if x.dtype is not first.dtype or len(x.shape) != len(first.shape) or any(
                a != b for i, (a, b) in enumerate(zip(x.shape, first.shape)) if i != axis):
            raise ValueError("internal: concatenate operands disagree")
    shape = list(first.shape)
    shape[axis] = sum(x.shape[axis] for x in xs)
    return aval(shape, first.dtype)


def _concat_transpose(ct, *xs, out, axis):
    cts, offset = [], 0
    shape = ct.aval.shape
    for x in xs:
        n = x.aval.shape[axis]
        start = tuple(offset if d == axis else 0 for d in range(len(shape)))
        limit = tuple(offset + n if d == axis else shape[d] for d in range(len(shape)))
        cts.append(lax.slice(ct, start=start, limit=limit, strides=(1,) * len(shape)))
        offset += n
    return tuple(cts)


def _concat_batch(bdims, *xs, axis):
    size, d = bt.size_of(bdims, xs), bt.first_dim(bdims)
    xs = [bt.moved(x, xd, d, size) for x, xd in zip(xs, bdims)]
    return lax.concatenate(*xs, axis=bt.shifted(axis, d)), d


concatenate = declare(
    "concatenate", infer=_concat_infer, names=lambda out, *xs, axis: unify(None, [x.names for x in xs]),
    batch=_concat_batch,
    padding=pd.along("concatenate", lambda *xs, axis: (axis,), why="the padding of one operand would "
                     "come before the next operand's data"),
    **ad.linear_rules(_concat_transpose),
    source=lambda ctx, *xs, axis: f"xp.concat([{', '.join(xs)}], axis={axis})",
    emit=lambda ctx, *xs, axis: ctx.simple("stablehlo.concatenate", *xs, attrs=f"dimension = {axis} : i64"),
    impl=lambda *xs, axis: np.concatenate(xs, axis=axis), moves_data=True)


def _iota_impl(*, shape, dtype, dim):
    n = shape[dim]
    line = np.arange(n).astype(dtype.numpy)
    view = [1] * len(shape)
    view[dim] = n
    return np.broadcast_to(line.reshape(view), shape)


def _iota_source(ctx, *, shape, dtype, dim):
    line = f"xp.arange({shape[dim]}, dtype=xp.{dtype})"
    if len(shape) == 1:
        return line
    view = tuple(n if i == dim else 1 for i, n in enumerate(shape))
    return f"xp.broadcast_to(xp.reshape({line}, {view}), {shape})"


iota = declare(
    "iota", infer=lambda *, shape, dtype, dim: aval(shape, dtype), source=_iota_source,
    emit=lambda ctx, *, shape, dtype, dim: ctx.op(
        "stablehlo.iota", (), (), ctx.out_aval, attrs=f"iota_dimension = {dim} : i64"),
    impl=_iota_impl)


def _constant_impl(*, shape, dtype, value):
    if not shape:
        try:
            return np.array(value, dtype=dtype.numpy)    # np.full's value at a third of its cost
        except (TypeError, ValueError, OverflowError):   # a value the dtype cannot hold
            pass                                         # (nan in an int): np.full's cast
    return np.full(shape, value, dtype=dtype.numpy)


def _constant_emit(ctx, *, shape, dtype, value):
    return ctx.constant(value, ctx.out_aval)


constant = declare(
    "constant", infer=lambda *, shape, dtype, value: aval(shape, dtype),
    source=lambda ctx, *, shape, dtype, value: f"xp.full({shape}, {ad.py_literal(value)}, dtype=xp.{dtype})",
    emit=_constant_emit,
    impl=_constant_impl)
_graph.CONSTANT = constant


def _pad_infer(x, padding_value, *, low, high, interior):
    shape = tuple(lo + hi + n + max(n - 1, 0) * it for n, lo, hi, it in zip(x.shape, low, high, interior))
    return aval(shape, x.dtype)


def _pad_impl(x, padding_value, *, low, high, interior):
    out = np.full(_pad_infer(x, padding_value, low=low, high=high, interior=interior).shape,
                  padding_value, dtype=x.dtype)
    if not any(interior) and min(low) >= 0 and min(high) >= 0:
        # the common case (x[region] = v places v so): one copy into place
        out[tuple(builtins.slice(lo, lo + n) for lo, n in zip(low, x.shape))] = x
        return out
    # negative low/high padding crops; place the interior-dilated operand then crop
    dilated_shape = tuple(n + max(n - 1, 0) * it for n, it in zip(x.shape, interior))
    dilated = np.full(dilated_shape, padding_value, dtype=x.dtype)
    dilated[tuple(builtins.slice(None, None, it + 1) for it in interior)] = x
    src, dst = [], []
    for n, lo, hi in zip(dilated_shape, low, high):
        s0, d0 = max(0, -lo), max(0, lo)
        length = n - s0 - max(0, -hi)
        src.append(builtins.slice(s0, s0 + max(length, 0)))
        dst.append(builtins.slice(d0, d0 + max(length, 0)))
    out[tuple(dst)] = dilated[tuple(src)]
    return out


def _pad_transpose(ct, x, padding_value, *, out, low, high, interior):
    # undo negative padding (cropping) with zeros, then take every (interior+1)-th element
    grown = lax.pad(ct, _scalar_zero(ct), low=tuple(max(-l, 0) for l in low),
                 high=tuple(max(-h, 0) for h in high), interior=(0,) * len(low))
    start = tuple(max(l, 0) for l in low)
    strides = tuple(i + 1 for i in interior)
    limit = tuple(s + (n - 1) * st + 1 if n else s for s, n, st in zip(start, x.aval.shape, strides))
    ct_x = lax.slice(grown, start=start, limit=limit, strides=strides)
    all_axes = tuple(range(len(low)))
    ct_v = lax.subtract(ad.sum_axes(ct, all_axes), ad.sum_axes(ct_x, all_axes))
    return (ct_x, ct_v)


def _pad_batch(bdims, x, padding_value, *, low, high, interior):
    dx, dv = bdims
    size = bt.size_of(bdims, (x, padding_value))
    d = 0 if dx is None else dx
    x = bt.moved(x, dx, d, size)
    params = {"low": bt.inserted(low, d, 0), "high": bt.inserted(high, d, 0),
              "interior": bt.inserted(interior, d, 0)}
    if dv is None:
        return lax.pad(x, padding_value, **params), d
    # a padding value per example: pad with zeros, then fill what is not the operand
    padded = lax.pad(x, _scalar_zero(x), **params)
    inside = lax.pad(lax.constant(shape=x.aval.shape, dtype=dt.bool, value=True, device=x.device),
                     lax.constant(shape=(), dtype=dt.bool, value=False, device=x.device), **params)
    fill = lax.broadcast_in_dim(padding_value, shape=padded.aval.shape, dims=(d,))
    return lax.select(inside, padded, fill), d


pad = declare(
    "pad", infer=_pad_infer, names=first_names, impl=_pad_impl, **ad.linear_rules(_pad_transpose),
    batch=_pad_batch,
    padding=pd.along("pad", lambda x, v, *, low, high, interior: [
        a for a in range(len(low)) if (low[a], high[a], interior[a]) != (0, 0, 0)],
        why="the padding's place would move with the size"),
    emit=lambda ctx, x, v, *, low, high, interior: ctx.simple(
        "stablehlo.pad", x, v, attrs=f"edge_padding_low = {_i64s(low)}, "
        f"edge_padding_high = {_i64s(high)}, interior_padding = {_i64s(interior)}"),
        moves_data=True)


# dynamic_slice: a window of `sizes` starting at run-time positions (0-d int64 operands, one
# per axis), so `x[i]` with a changing Python int reuses one program. As in StableHLO, start
# positions are clamped so the window fits.

def _clamped_starts(shape, sizes, starts):
    return [int(min(max(int(s), 0), n - k)) for s, n, k in zip(starts, shape, sizes)]


def _check_starts(name, x, starts):
    if len(starts) != len(x.shape):
        raise TypeError(f"internal: {name} needs one 0-d integer start per axis")
    for s in starts:
        if s.shape != () or s.dtype.kind not in dt.INTEGER_KINDS:
            raise TypeError(f"internal: {name} needs one 0-d integer start per axis")


def _fits(inner, outer) -> bool:
    """Whether a window of shape `inner` fits in an array of shape `outer` (same rank)."""
    for i in range(len(inner)):
        if not 0 <= inner[i] <= outer[i]:
            return False
    return True


def _dynamic_slice_infer(x, *starts, sizes):
    _check_starts("dynamic_slice", x, starts)
    if len(sizes) != len(x.shape) or not _fits(sizes, x.shape):
        raise ValueError(f"internal: dynamic_slice sizes {sizes} for shape {x.shape}")
    return aval(sizes, x.dtype)


def _dynamic_slice_impl(x, *starts, sizes):
    begin = _clamped_starts(x.shape, sizes, starts)
    return x[tuple(builtins.slice(b, b + k) for b, k in zip(begin, sizes))]


def _dynamic_slice_vjp(ct, x, *starts, out, sizes):
    zero = ad.zeros(x)
    return (lax.dynamic_update_slice(zero, ct, *starts),) + (None,) * len(starts)


def _dynamic_slice_source(ctx, x, *starts, sizes):
    if not all(s.lstrip("-").isdigit() for s in starts):
        return None     # run-time positions: no slicing spelling
    parts = [":" if k == n and int(s) == 0 else f"{s}:{int(s) + k}"
             for s, k, n in zip(starts, sizes, ctx.in_avals[0].shape)]
    return f"{x}[{', '.join(parts)}]"


def _start_zero(starts, like):
    """The start of the mapped axis (taken whole): 0, of the other starts' dtype (StableHLO
    wants one index type)."""
    dtype = starts[0].aval.dtype if starts else dt.int64
    return lax.constant(shape=(), dtype=dtype, value=0, device=like.device)


def _dynamic_slice_batch(bdims, x, *starts, sizes):
    dx, ds = bdims[0], bdims[1:]
    size = bt.size_of(bdims, (x,) + starts)
    if all(d is None for d in ds):     # one window for all: the mapped axis is taken whole
        return lax.dynamic_slice(x, *bt.inserted(starts, dx, _start_zero(starts, x)),
                                 sizes=bt.inserted(sizes, dx, size)), dx
    # a window per example: gather its elements
    idx = bt.window_coordinates(starts, ds, x.aval.shape if dx is None else
                                x.aval.shape[:dx] + x.aval.shape[dx + 1:], sizes, size, dt.int64)
    if dx is None:
        return lax.gather(x, idx, axes=tuple(range(len(sizes)))), 0
    return lax.gather(bt.moved(x, dx, 0, size), bt.with_batch_coordinate(idx),
                      axes=tuple(range(len(sizes) + 1))), 0


dynamic_slice = declare(
    "dynamic_slice", infer=_dynamic_slice_infer, names=first_names, impl=_dynamic_slice_impl,
    batch=_dynamic_slice_batch, padding=pd.dynamic_slice_rule,
    source=_dynamic_slice_source,
    emit=lambda ctx, x, *starts, sizes: ctx.simple("stablehlo.dynamic_slice", x, *starts,
                                                   attrs=f"slice_sizes = {_i64s(sizes)}"),
    jvp=lambda tangents, x, *starts, out, sizes: (
        None if tangents[0] is None else lax.dynamic_slice(tangents[0], *starts, sizes=sizes)),
    vjp=_dynamic_slice_vjp, moves_data=True)


def _dynamic_update_infer(x, update, *starts):
    if update.dtype is not x.dtype or len(update.shape) != len(x.shape) or \
            not _fits(update.shape, x.shape):
        raise ValueError(f"internal: dynamic_update_slice of {update} into {x}")
    _check_starts("dynamic_update_slice", x, starts)
    return x


def _dynamic_update_impl(x, update, *starts):
    return _dynamic_update_into(np.array(x, copy=True), x, update, *starts)


def _dynamic_update_into(out, x, update, *starts):
    begin = _clamped_starts(x.shape, update.shape, starts)
    out[tuple(builtins.slice(b, b + k) for b, k in zip(begin, update.shape))] = update
    return out


def _dynamic_update_jvp(tangents, x, update, *starts, out):
    tx, tu = tangents[0], tangents[1]
    if tx is None and tu is None:
        return None
    return lax.dynamic_update_slice(ad.zeros(x) if tx is None else tx,
                ad.zeros(update) if tu is None else tu, *starts)


def _dynamic_update_vjp(ct, x, update, *starts, out):
    cleared = lax.dynamic_update_slice(ct, ad.zeros(update), *starts)
    piece = lax.dynamic_slice(ct, *starts, sizes=update.aval.shape)
    return (cleared, piece) + (None,) * len(starts)


def _dynamic_update_batch(bdims, x, update, *starts):
    dx, du, ds = bdims[0], bdims[1], bdims[2:]
    size = bt.size_of(bdims, (x, update) + starts)
    if all(d is None for d in ds):     # one window for all: it spans the mapped axis
        d = dx if dx is not None else du
        return lax.dynamic_update_slice(bt.moved(x, dx, d, size), bt.moved(update, du, d, size),
                                        *bt.inserted(starts, d, _start_zero(starts, x))), d
    # a window per example: scatter its elements
    example = x.aval.shape if dx is None else x.aval.shape[:dx] + x.aval.shape[dx + 1:]
    sizes = update.aval.shape if du is None else update.aval.shape[:du] + update.aval.shape[du + 1:]
    idx = bt.window_coordinates(starts, ds, example, sizes, size, dt.int64)
    return lax.scatter(bt.moved(x, dx, 0, size), bt.with_batch_coordinate(idx),
                       bt.moved(update, du, 0, size), axes=tuple(range(len(sizes) + 1)),
                       mode="set"), 0


_CONCATENATED_FROM = 2 ** 14    # elements of an update written as a new array


def _dynamic_update_emit(ctx, x, update, *starts):
    """An update at constant starts that covers most of `x` (a stencil's interior,
    `u[1:-1, 1:-1] = ...`) is written as a new array: the update concatenated with the slices
    of `x` around it, which XLA computes in one loop. As an in-place dynamic_update_slice,
    XLA must first copy every slice of `x` that computes the update (they would read what
    the update overwrites): four copies of the interior per stencil step. A small update (a
    row, x[i] = v) stays in place, and so does a write of fewer than 2^14 elements: XLA
    compiles the concatenations about 3x slower (a 15-step stencil program: 0.2 -> 0.6 s),
    which only a large update's faster loop repays (200x200: 115 -> 55 us a step).

    Where `x` is itself such a write of the same box, its value outside the box is its own
    `x`'s, and the slices around the update are taken from that one: a loop's writes then do
    not nest every earlier step's pieces in each step's. (A select of the padded update over
    `x` chained the earlier steps' selects into each step's loop: XLA does not merge selects
    on one mask.)"""
    xa, ua = ctx.in_avals[0], ctx.in_avals[1]
    begin = [ctx.scalar_value(s) for s in starts]
    size = math.prod(ua.shape)
    if None in begin or size < _CONCATENATED_FROM or 2 * size < math.prod(xa.shape):
        return ctx.simple("stablehlo.dynamic_update_slice", x, update, *starts)
    # clamped as dynamic_update_slice clamps: the update fits
    low = tuple(min(max(int(b), 0), n - k) for b, n, k in zip(begin, xa.shape, ua.shape))
    box = ("box write", low, ua.shape)
    noted = ctx.notes.get(x)
    if noted is not None and noted[0] == box:
        x = noted[1]
    out = _assembled(ctx, x, xa, update, ua, low, 0)
    ctx.notes[out] = (box, x)
    return out


def _assembled(ctx, x, xa, update, ua, low, axis):
    """The box of `x` that spans the update on the axes before `axis` and all of the others,
    with the update in place: [x before, (recursively) the band, x after] along `axis`."""
    if axis == len(low):
        return update
    n, k, lo = xa.shape[axis], ua.shape[axis], low[axis]
    band_start = [lo_ if d < axis else 0 for d, lo_ in enumerate(low)]
    band_limit = [low[d] + ua.shape[d] if d < axis else xa.shape[d] for d in range(len(low))]

    def piece(start, limit):
        start_, limit_ = list(band_start), list(band_limit)
        start_[axis], limit_[axis] = start, limit
        out = aval(tuple(b - a for a, b in zip(start_, limit_)), xa.dtype)
        return ctx.op("stablehlo.slice", (x,), (xa,), out,
                      attrs=f"start_indices = {_i64s(start_)}, limit_indices = {_i64s(limit_)}, "
                            f"strides = {_i64s([1] * len(low))}"), out

    middle_shape = tuple(ua.shape[d] if d <= axis else xa.shape[d] for d in range(len(low)))
    parts = [(_assembled(ctx, x, xa, update, ua, low, axis + 1), aval(middle_shape, xa.dtype))]
    if lo > 0:
        parts.insert(0, piece(0, lo))
    if lo + k < n:
        parts.append(piece(lo + k, n))
    if len(parts) == 1:
        return parts[0][0]
    out_shape = tuple(band_limit[d] - band_start[d] for d in range(len(low)))
    return ctx.op("stablehlo.concatenate", [p for p, _ in parts], [a for _, a in parts],
                  aval(out_shape, xa.dtype), attrs=f"dimension = {axis} : i64")


dynamic_update_slice = declare(
    "dynamic_update_slice", infer=_dynamic_update_infer, names=first_names, impl=_dynamic_update_impl,
    impl_into=_dynamic_update_into, into_operands=(0,),
    batch=_dynamic_update_batch, padding=pd.dynamic_update_slice_rule, emit=_dynamic_update_emit,
    jvp=_dynamic_update_jvp, vjp=_dynamic_update_vjp, moves_data=True)


# rename: the operand, with new axis names (`names`: one str or None per axis, or None).
# Computes nothing; its equations' cache keys leave `names` out (see _graph.RENAME).
def _rename_infer(x, *, names):
    if names is not None and len(names) != len(x.shape):
        raise ValueError(f"rename: {len(names)} names for an array of {len(x.shape)} "
                         "dimension(s)")
    return Aval(x.shape, x.dtype, names)


def _names_with(names, d):
    """Names with an unnamed mapped axis at `d` (None stays None)."""
    return None if names is None else bt.inserted(names, d, None)


rename = declare(
    "rename", infer=_rename_infer, names=lambda out, x, *, names: names,
    emit=lambda ctx, x, *, names: x, impl=lambda x, *, names: x, source="{0}",
    batch=lambda bdims, x, *, names: (lax.rename(x, names=_names_with(names, bdims[0])), bdims[0]),
    padding=pd.renames,
    jvp=lambda tangents, x, *, out, names: (
        None if tangents[0] is None else lax.rename(tangents[0], names=names)),
    vjp=lambda ct, x, *, out, names: (lax.rename(ct, names=x.aval.names),), moves_data=True)
_graph.RENAME = rename
