"""The rest of the main namespace: cumulative_sum, cumulative_prod, diff, tile, repeat, roll,
take and take_along_axis."""
from __future__ import annotations

import builtins
import math

import numpy as np

from .._array import Array
from .._prims import elementwise as ew
from .._prims import indexing as ix
from .._prims import reduce as rd
from .._prims import shape as sh
from . import _ops as o
from ._core import (axis_of, cast, check_devices, check_size, distinct, is_scalar, names_of,
                    node_of, renamed, result_dtype, scalar_node, unify, wrap)
from ._core import fresh
from .statistical import _accumulator


def _is_int(v):
    return isinstance(v, (builtins.int, np.integer)) and not isinstance(v, (builtins.bool, np.bool_))


# ----------------------------------------------------------------------------- cumulative

def _cumulative(name, kind, x, axis, dtype, include_initial):
    node = node_of(name, x)
    shape = node.aval.shape
    if not shape:
        raise ValueError(f"{name}: x must have at least one dimension")
    if axis is None:
        if len(shape) > 1:
            raise ValueError(f"{name}: axis must be given for a {len(shape)}-d array")
        axis = 0
    ax = axis_of(name, node, axis)
    if not isinstance(include_initial, builtins.bool):
        raise TypeError(f"{name}: include_initial must be a bool, got {include_initial!r}")
    acc = _accumulator(name, node, dtype)
    if acc.kind == "b":
        raise TypeError(f"{name}: cannot accumulate in bool")
    node = cast(node, acc)
    out = o.cumsum(node, ax, kind)
    if include_initial:
        identity = o.const(0 if kind == "sum" else 1, (), acc, node.device)
        nd = len(shape)
        low = tuple(1 if d == ax else 0 for d in range(nd))
        out = o.p(sh.pad, out, identity, low=low, high=(0,) * nd, interior=(0,) * nd)
    return wrap(out)


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """Cumulative sums along `axis` (optional for 1-d x), accumulated in `dtype` (default: as
    `sum`). include_initial=True prepends the zero of the sum."""
    return _cumulative("cumulative_sum", "sum", x, axis, dtype, include_initial)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """Cumulative products along `axis` (optional for 1-d x), accumulated in `dtype`
    (default: as `prod`). include_initial=True prepends the one of the product."""
    return _cumulative("cumulative_prod", "prod", x, axis, dtype, include_initial)


# ----------------------------------------------------------------------------- diff

def diff(x, /, *, axis=-1, n=1, prepend=None, append=None):
    """The n-th forward difference along `axis`, after joining `prepend` and `append` (arrays
    shaped like x except along axis, or Python scalars) to x. Boolean input gives the
    not-equal of neighbours, as in NumPy."""
    node = node_of("diff", x)
    shape = node.aval.shape
    if not shape:
        raise ValueError("diff: x must have at least one dimension")
    ax = axis_of("diff", node, axis)
    if not _is_int(n):
        raise TypeError(f"diff: n must be an int, got {n!r}")
    if n < 0:
        raise ValueError(f"diff: n must be non-negative, got {n}")
    parts = [v for v in (prepend, x, append) if v is not None]
    for name, v in (("prepend", prepend), ("append", append)):
        if v is not None and not isinstance(v, Array) and not is_scalar(v):
            raise TypeError(f"diff: {name} must be a tlaloc array or a Python scalar, "
                            f"got {type(v).__name__}")
    d = result_dtype("diff", *parts)
    dev = check_devices("diff", *[v._node for v in parts if isinstance(v, Array)])
    nodes = []
    for v in parts:
        if isinstance(v, Array):
            m = cast(v._node, d)
            vs = m.aval.shape
            if len(vs) != len(shape) or builtins.any(
                    a != b for i, (a, b) in enumerate(zip(vs, shape)) if i != ax):
                raise ValueError(f"diff: prepend/append of shape {vs} does not match x's shape "
                                 f"{shape} off axis {ax}")
        else:
            one = tuple(1 if i == ax else s for i, s in enumerate(shape))
            m = o.broadcast(scalar_node(v, d, dev), one)
        nodes.append(m)
    cur = o.concat(nodes, ax) if len(nodes) > 1 else nodes[0]
    for _ in range(n):
        length = cur.aval.shape[ax]
        if length == 0:
            break
        hi = o.slice_axis(cur, ax, 1, length)
        lo = o.slice_axis(cur, ax, 0, length - 1)
        if d.kind == "b":
            cur = o.compare(hi, lo, "NE")
        else:
            cur = o.p(ew.subtract, hi, lo)
    return wrap(cur)


# ----------------------------------------------------------------------------- tile / repeat / roll

def tile(x, repetitions, /):
    """x repeated `repetitions[i]` times along each axis (the shorter of x.ndim and
    len(repetitions) is padded with leading ones)."""
    node = node_of("tile", x)
    if isinstance(repetitions, (builtins.int, np.integer)) and not isinstance(repetitions, builtins.bool):
        repetitions = (repetitions,)
    if not isinstance(repetitions, (tuple, list)) or not builtins.all(_is_int(r) for r in repetitions):
        raise TypeError(f"tile: repetitions must be a tuple of ints, got {repetitions!r}")
    reps = tuple(builtins.int(r) for r in repetitions)
    if builtins.any(r < 0 for r in reps):
        raise ValueError(f"tile: repetitions must be non-negative, got {reps}")
    shape = node.aval.shape
    nd = builtins.max(len(shape), len(reps))
    shape = (1,) * (nd - len(shape)) + shape
    reps = (1,) * (nd - len(reps)) + reps
    names = x._node.aval.names
    if names is not None:   # x's axes keep their names; new leading axes have none
        names = (None,) * (nd - len(names)) + names
    node = o.reshape(node, shape)
    if builtins.all(r == 1 for r in reps):
        return wrap(renamed(node, names)) if node is not x._node else fresh(x)
    wide = tuple(v for pair in zip(reps, shape) for v in pair)
    out_shape = tuple(r * s for r, s in zip(reps, shape))
    check_size("tile", out_shape, node.aval.dtype, node.device)
    if math.prod(out_shape) == 0:
        return wrap(o.const(0, out_shape, node.aval.dtype, node.device))
    b = o.broadcast(node, wide, dims=tuple(range(1, 2 * nd, 2)))
    return wrap(renamed(o.reshape(b, out_shape), names))


def repeat(x, repeats, /, *, axis=None):
    """Each element of x repeated along `axis` (x flattened when None). `repeats` is an int or
    an integer array of one value per element along the axis (or a single value). With an
    array the output's length depends on its values: repeat evaluates their sum."""
    out = _repeat(x, repeats, axis)
    names = x._node.aval.names
    if names is None or axis is None:
        return out
    return wrap(renamed(out._node, names))   # the axes are x's, one longer


def _repeat(x, repeats, axis):
    node = node_of("repeat", x)
    if axis is None:
        node = o.flatten(node)
        ax = 0
    else:
        if not node.aval.shape:
            raise ValueError("repeat: a 0-d array has no axis; use axis=None")
        ax = axis_of("repeat", node, axis)
    shape = node.aval.shape
    n = shape[ax]
    dev = node.device
    if _is_int(repeats):
        r = builtins.int(repeats)
        if r < 0:
            raise ValueError(f"repeat: repeats must be non-negative, got {r}")
        out_shape = shape[:ax] + (n * r,) + shape[ax + 1:]
        check_size("repeat", out_shape, node.aval.dtype, dev)
        if math.prod(out_shape) == 0:
            return wrap(o.const(0, out_shape, node.aval.dtype, dev))
        wide = shape[:ax + 1] + (r,) + shape[ax + 1:]
        dims = tuple(d if d <= ax else d + 1 for d in range(len(shape)))
        return wrap(o.reshape(o.broadcast(node, wide, dims=dims), out_shape))
    if not isinstance(repeats, Array):
        raise TypeError(f"repeat: repeats must be an int or a tlaloc array, got {type(repeats).__name__}")
    rn = repeats._node
    check_devices("repeat", node, rn)
    if rn.aval.dtype.kind not in "iu":
        raise TypeError(f"repeat: repeats must have an integer dtype, got {rn.aval.dtype}")
    if len(rn.aval.shape) > 1 or math.prod(rn.aval.shape) not in (1, n):
        raise ValueError(f"repeat: repeats of shape {rn.aval.shape} do not match the {n} "
                         f"element(s) along axis {ax}")
    counts = o.broadcast(o.reshape(cast(rn, o.index_dtype()), (math.prod(rn.aval.shape),)), (n,))
    if n == 0:
        return wrap(node)
    total, smallest = o.concrete(o.p(rd.reduce_sum, counts, axes=(0,)),
                                 o.p(rd.reduce_min, counts, axes=(0,)), keep=(counts,))
    if smallest < 0:
        raise ValueError("repeat: repeats must be non-negative")
    total = builtins.int(total)
    out_shape = shape[:ax] + (total,) + shape[ax + 1:]
    check_size("repeat", out_shape, node.aval.dtype, dev)
    if math.prod(out_shape) == 0:
        return wrap(o.const(0, out_shape, node.aval.dtype, dev))
    # source[j] = number of cumulative ends <= j: scatter-add a 1 at each end, then cumsum
    ends = o.reshape(o.cumsum(counts, 0), (n, 1))
    marks = o.p(ix.scatter, o.const(0, (total,), o.index_dtype(), dev), ends,
                o.const(1, (n,), o.index_dtype(), dev), axes=(0,), mode="add")
    source = o.cumsum(marks, 0)
    return wrap(o.take_axis(node, source, ax))


def roll(x, /, shift, *, axis=None):
    """Elements shifted by `shift` along `axis` (of the flattened array when None), wrapping
    around. shift and axis may be tuples of one length; an int shift applies to every axis."""
    node = node_of("roll", x)
    shape = node.aval.shape
    if axis is None:
        if not _is_int(shift):
            raise TypeError(f"roll: shift must be an int when axis is None, got {shift!r}")
        flat = o.flatten(node)
        return wrap(o.reshape(_roll(flat, [(builtins.int(shift), 0)]), shape))
    axes = axis if isinstance(axis, tuple) else (axis,)
    axes = [axis_of("roll", node, a) for a in axes]
    shifts = shift if isinstance(shift, tuple) else (shift,) * len(axes)
    if not builtins.all(_is_int(s) for s in shifts):
        raise TypeError(f"roll: shift must be an int or a tuple of ints, got {shift!r}")
    if len(shifts) != len(axes):
        raise ValueError(f"roll: shift {shift!r} and axis {axis!r} differ in length")
    return wrap(_roll(node, [(builtins.int(s), a) for s, a in zip(shifts, axes)]))


def _roll(node, pairs):
    total = {}
    for s, a in pairs:
        total[a] = total.get(a, 0) + s
    for a, s in total.items():
        n = node.aval.shape[a]
        if n == 0 or s % n == 0:
            continue
        s %= n
        node = o.concat([o.slice_axis(node, a, n - s, n), o.slice_axis(node, a, 0, n - s)], a)
    return node


# ----------------------------------------------------------------------------- take

def _index_node(name, x, indices):
    if isinstance(indices, Array):
        node = indices._node
    else:
        raise TypeError(f"{name}: indices must be a tlaloc array, got {type(indices).__name__}")
    if node.aval.dtype.kind not in "iu":
        raise TypeError(f"{name}: indices must have an integer dtype, got {node.aval.dtype}")
    check_devices(name, x._node, node)
    return node


def _check_bounds(name, node, n, axis):
    host = o.known_value(node)
    if host is not None and host.size:
        lo, hi = host.min(), host.max()
        if lo < -n or hi >= n:
            bad = lo if lo < -n else hi
            raise IndexError(f"{name}: index {builtins.int(bad)} is out of bounds for axis "
                             f"{axis} with size {n}")


def take(x, indices, /, *, axis=None):
    """Elements of x at `indices` along `axis` (optional for 1-d x). Negative indices count
    from the end. Out-of-bounds indices raise IndexError when their values are known;
    pending ones are clamped."""
    node = node_of("take", x)
    idx = _index_node("take", x, indices)
    shape = node.aval.shape
    if axis is None:
        if len(shape) != 1:
            raise ValueError(f"take: axis must be given for a {len(shape)}-d array")
        axis = 0
    if not shape:
        raise ValueError("take: x must have at least one dimension")
    ax = axis_of("take", node, axis)
    n = shape[ax]
    _check_bounds("take", idx, n, ax)
    out_shape = shape[:ax] + idx.aval.shape + shape[ax + 1:]
    check_size("take", out_shape, node.aval.dtype, node.device)
    if n == 0 and math.prod(idx.aval.shape):
        raise IndexError(f"take: cannot take from axis {ax} of size 0")
    names = None
    if node.aval.names is not None or idx.aval.names is not None:
        # x's axes keep their names; the taken axis keeps its own for 1-d indices
        xn, inn = names_of(node), names_of(idx)
        mid = (xn[ax],) if len(inn) == 1 and inn[0] is None else inn
        names = distinct("take", xn[:ax] + mid + xn[ax + 1:])
    if math.prod(out_shape) == 0:
        return wrap(renamed(o.const(0, out_shape, node.aval.dtype, node.device), names))
    return wrap(renamed(o.take_axis(node, o.normalize_indices(idx, n), ax), names))


def take_along_axis(x, indices, /, *, axis=-1):
    """out[..., i, ...] = x[..., indices[..., i, ...], ...] along `axis`; x and indices have
    the same number of dimensions and broadcast against each other off the axis."""
    node = node_of("take_along_axis", x)
    idx = _index_node("take_along_axis", x, indices)
    shape, ishape = node.aval.shape, idx.aval.shape
    if len(shape) != len(ishape):
        raise ValueError(f"take_along_axis: x ({len(shape)}-d) and indices ({len(ishape)}-d) "
                         "must have the same number of dimensions")
    if not shape:
        raise ValueError("take_along_axis: x must have at least one dimension")
    ax = axis_of("take_along_axis", node, axis)
    names = unify("take_along_axis", [node.aval.names, idx.aval.names])   # x's axes' names
    out = []
    for d, (a, b) in enumerate(zip(shape, ishape)):
        if d == ax:
            out.append(b)
        elif a == b or b == 1:
            out.append(a)
        elif a == 1:
            out.append(b)
        else:
            raise ValueError(f"take_along_axis: shapes {shape} and {ishape} do not broadcast "
                             f"off axis {ax}")
    out = tuple(out)
    n = shape[ax]
    _check_bounds("take_along_axis", idx, n, ax)
    if n == 0 and math.prod(out):
        raise IndexError(f"take_along_axis: cannot take from axis {ax} of size 0")
    if math.prod(out) == 0:
        return wrap(renamed(o.const(0, out, node.aval.dtype, node.device), names))
    nd = len(shape)
    xb = o.broadcast(node, tuple(n if d == ax else m for d, m in enumerate(out)),
                     dims=tuple(range(nd))) if shape != tuple(
                         n if d == ax else m for d, m in enumerate(out)) else node
    ib = o.normalize_indices(idx, n)
    if ishape != out:
        ib = o.broadcast(ib, out, dims=tuple(range(nd)))
    cols = [o.reshape(ib if d == ax else o.iota(out, d, node.device), out + (1,)) for d in range(nd)]
    coords = cols[0] if nd == 1 else o.p(sh.concatenate, *cols, axis=nd)
    return wrap(renamed(o.p(ix.gather, xb, coords, axes=tuple(range(nd))), names))


__all__ = ["cumulative_sum", "cumulative_prod", "diff", "tile", "repeat", "roll", "take",
           "take_along_axis"]
