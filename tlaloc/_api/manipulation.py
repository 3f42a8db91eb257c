"""The standard's manipulation functions: shape, order, joining and repetition."""
from __future__ import annotations

import builtins
import math
import operator

from .. import _dtypes as dt
from .._array import Array
from . import _ops as o
from . import views
from .._prims import lax
from ._core import (broadcast_shapes, broadcast_to_shape, cast, check_devices, check_size,
                    axes_of, axis_of, is_int, node_of, promote_all, renamed, unify, wrap)
from ._core import fresh


def _reshape_node(node, shape):
    if node.aval.shape == shape:
        return node
    return lax.reshape(node, shape=shape)


def reshape(x, /, shape, *, copy=None):
    node = node_of("reshape", x)
    try:
        dims = [operator.index(n) for n in ((shape,) if not isinstance(shape, (tuple, list)) else shape)]
    except TypeError:
        raise TypeError(f"reshape: shape must be a tuple of ints, got {shape!r}") from None
    if dims.count(-1) > 1 or any(n < -1 for n in dims):
        raise ValueError(f"reshape: invalid shape {tuple(dims)}")
    size = math.prod(x.shape)
    if -1 in dims:
        known = math.prod([n for n in dims if n != -1])
        if known == 0 or size % known:
            raise ValueError(f"reshape: cannot reshape an array of shape {x.shape} into {tuple(dims)}")
        dims[dims.index(-1)] = size // known
    dims = tuple(dims)
    if math.prod(dims) != size:
        raise ValueError(f"reshape: cannot reshape an array of shape {x.shape} into {dims}")
    if copy:
        return wrap(_reshape_node(node, dims))
    # a view where NumPy gives one: x's layout allows the new shape without moving elements
    new_strides = views.reshaped(x, dims)
    if new_strides is None:
        if copy is False:
            raise ValueError(f"reshape: copy=False, but this array's elements (a "
                             f"non-contiguous view of shape {x.shape}) cannot be reshaped to "
                             f"{dims} without a copy")
        return wrap(_reshape_node(node, dims))
    return views.view(x, views.Reshape(dims), new_strides)


def permute_dims(x, /, axes):
    node_of("permute_dims", x)
    axes = tuple([axis_of("permute_dims", x, a, "axes") for a in axes])
    if sorted(axes) != list(range(x.ndim)):
        raise ValueError(f"permute_dims: axes {axes} is not a permutation of {x.ndim} axes")
    strides, _ = views.layout(x)
    return views.view(x, views.Permute(axes), [strides[a] for a in axes])


def broadcast_to(x, /, shape):
    node = node_of("broadcast_to", x)
    try:
        shape = tuple(operator.index(n) for n in shape)
    except TypeError:
        raise TypeError(f"broadcast_to: shape must be a tuple of ints, got {shape!r}") from None
    if any(n < 0 for n in shape):
        raise ValueError(f"broadcast_to: negative dimension in shape {shape}")
    if broadcast_shapes(x.shape, shape, name="broadcast_to") != shape:
        raise ValueError(f"broadcast_to: cannot broadcast shape {x.shape} to {shape}")
    if shape == x.shape:
        return fresh(x)
    check_size("broadcast_to", shape, node.aval.dtype, node.device)
    return wrap(broadcast_to_shape(node, shape))


def broadcast_arrays(*arrays):
    nodes = [node_of("broadcast_arrays", a, "arrays") for a in arrays]
    if nodes:
        check_devices("broadcast_arrays", *nodes)
    shape = broadcast_shapes(*[a.shape for a in arrays], name="broadcast_arrays")
    if nodes and all(n.aval.shape != shape for n in nodes):
        check_size("broadcast_arrays", shape, nodes[0].aval.dtype, nodes[0].device)
    # a tuple since 2025.12
    return tuple(a if a.shape == shape else wrap(broadcast_to_shape(n, shape))
                 for a, n in zip(arrays, nodes))


def _joined(name, arrays):
    if not isinstance(arrays, (tuple, list)):
        raise TypeError(f"{name}: arrays must be a tuple or list of arrays, got "
                        f"{type(arrays).__name__}")
    if not arrays:
        raise ValueError(f"{name}: expected a non-empty tuple or list of arrays")
    nodes = [node_of(name, a, "arrays") for a in arrays]
    check_devices(name, *nodes)
    d = promote_all(name, [n.aval.dtype for n in nodes])
    return [cast(n, d) for n in nodes]


def concat(arrays, /, *, axis=0):
    nodes = _joined("concat", arrays)
    if axis is None:
        nodes = [_reshape_node(n, (math.prod(n.aval.shape),)) for n in nodes]
        axis = 0
    ndim = len(nodes[0].aval.shape)
    if ndim == 0:
        raise ValueError("concat: 0-d arrays cannot be concatenated; use stack")
    for n in nodes:
        if len(n.aval.shape) != ndim:
            raise ValueError("concat: arrays must have the same number of dimensions")
    ax = axis_of("concat", nodes[0], axis)
    if builtins.any(n.aval.names is not None for n in nodes):
        unify("concat", [n.aval.names for n in nodes])   # a clash raises naming concat
    for n in nodes:
        if any(a != b for i, (a, b) in enumerate(zip(n.aval.shape, nodes[0].aval.shape)) if i != ax):
            raise ValueError(f"concat: shapes {[m.aval.shape for m in nodes]} differ off axis {ax}")
    if len(nodes) == 1:
        return wrap(nodes[0])
    return wrap(lax.concatenate(*nodes, axis=ax))


def stack(arrays, /, *, axis=0):
    nodes = _joined("stack", arrays)
    shape = nodes[0].aval.shape
    if any(n.aval.shape != shape for n in nodes):
        raise ValueError(f"stack: arrays must share one shape, got {[n.aval.shape for n in nodes]}")
    ax = axis_of("stack", nodes[0], axis, ndim=len(shape) + 1)
    new = shape[:ax] + (1,) + shape[ax:]
    names = None
    if builtins.any(n.aval.names is not None for n in nodes):
        names = unify("stack", [n.aval.names for n in nodes])   # the new axis is unnamed
        names = names[:ax] + (None,) + names[ax:]
    parts = [_reshape_node(n, new) for n in nodes]
    out = parts[0] if len(parts) == 1 else lax.concatenate(*parts, axis=ax)
    return wrap(out if names is None else renamed(out, names))


def expand_dims(x, /, axis=0):
    node = node_of("expand_dims", x)
    axes = axis if isinstance(axis, tuple) else (axis,)
    nd = x.ndim + len(axes)
    positions = sorted(axis_of("expand_dims", node, a, ndim=nd) for a in axes)
    if len(set(positions)) != len(positions):
        raise ValueError(f"expand_dims: repeated axis in {axis!r}")
    shape = list(x.shape)
    names = list(x.names)
    for p in positions:
        shape.insert(p, 1)
        names.insert(p, None)
    strides = list(views.layout(x)[0])
    for p in positions:
        strides.insert(p, 0)    # the stride of a new axis of size 1 is moot
    step = views.Reshape(shape, None if node.aval.names is None else names)
    return views.view(x, step, strides)


def squeeze(x, /, axis):
    node = node_of("squeeze", x)
    axes = axes_of("squeeze", x, axis)
    for a in axes:
        if x.shape[a] != 1:
            raise ValueError(f"squeeze: axis {a} has size {x.shape[a]}, not 1")
    shape = tuple(n for i, n in enumerate(x.shape) if i not in axes)
    names = None
    if node.aval.names is not None:
        names = [n for i, n in enumerate(node.aval.names) if i not in axes]
    strides = [s for i, s in enumerate(views.layout(x)[0]) if i not in axes]
    return views.view(x, views.Reshape(shape, names), strides)


def flip(x, /, *, axis=None):
    node_of("flip", x)
    axes = axes_of("flip", x, axis)
    if not x.ndim:
        return fresh(x)    # NumPy's flip of a 0-d array is a scalar: a copy
    strides = views.layout(x)[0]
    first = builtins.sum((x.shape[i] - 1) * strides[i] for i in axes if x.shape[i])   # the old last
    strides = [-s if i in axes else s for i, s in enumerate(strides)]
    return views.view(x, views.Reverse(axes), strides, offset=first)


def moveaxis(x, source, destination, /):
    node_of("moveaxis", x)
    src = source if isinstance(source, tuple) else (source,)
    dst = destination if isinstance(destination, tuple) else (destination,)
    if len(src) != len(dst):
        raise ValueError("moveaxis: source and destination must have the same number of axes")
    src = [axis_of("moveaxis", x, a, "source") for a in src]
    dst = [axis_of("moveaxis", x, a, "destination") for a in dst]
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ValueError("moveaxis: repeated axis")
    order = [a for a in range(x.ndim) if a not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute_dims(x, tuple(order))


def unstack(x, /, *, axis=0):
    node_of("unstack", x)
    if x.ndim == 0:
        raise ValueError("unstack: x must have at least one dimension")
    ax = axis_of("unstack", x, axis)
    moved = moveaxis(x, ax, 0)
    return tuple(moved[i] for i in range(x.shape[ax]))


# ----------------------------------------------------------------------------- tile / repeat / roll

def tile(x, repetitions, /):
    """x repeated `repetitions[i]` times along each axis (the shorter of x.ndim and
    len(repetitions) is padded with leading ones)."""
    node = node_of("tile", x)
    if is_int(repetitions):
        repetitions = (repetitions,)
    if not isinstance(repetitions, (tuple, list)) or not builtins.all(is_int(r) for r in repetitions):
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
    if is_int(repeats):
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
    if rn.aval.dtype.kind not in dt.INTEGER_KINDS:
        raise TypeError(f"repeat: repeats must have an integer dtype, got {rn.aval.dtype}")
    if len(rn.aval.shape) > 1 or math.prod(rn.aval.shape) not in (1, n):
        raise ValueError(f"repeat: repeats of shape {rn.aval.shape} do not match the {n} "
                         f"element(s) along axis {ax}")
    counts = o.broadcast(o.reshape(cast(rn, o.index_dtype()), (math.prod(rn.aval.shape),)), (n,))
    if n == 0:
        return wrap(node)
    total, smallest = o.concrete(lax.reduce_sum(counts, axes=(0,)),
                                 lax.reduce_min(counts, axes=(0,)), keep=(counts,))
    if smallest < 0:
        raise ValueError("repeat: repeats must be non-negative")
    total = builtins.int(total)
    out_shape = shape[:ax] + (total,) + shape[ax + 1:]
    check_size("repeat", out_shape, node.aval.dtype, dev)
    if math.prod(out_shape) == 0:
        return wrap(o.const(0, out_shape, node.aval.dtype, dev))
    # source[j] = number of cumulative ends <= j: scatter-add a 1 at each end, then cumsum
    ends = o.reshape(o.cumsum(counts, 0), (n, 1))
    marks = lax.scatter(o.const(0, (total,), o.index_dtype(), dev), ends,
                        o.const(1, (n,), o.index_dtype(), dev), axes=(0,), mode="add")
    source = o.cumsum(marks, 0)
    return wrap(o.take_axis(node, source, ax))


def roll(x, /, shift, *, axis=None):
    """Elements shifted by `shift` along `axis` (of the flattened array when None), wrapping
    around. shift and axis may be tuples of one length; an int shift applies to every axis."""
    node = node_of("roll", x)
    shape = node.aval.shape
    if axis is None:
        if not is_int(shift):
            raise TypeError(f"roll: shift must be an int when axis is None, got {shift!r}")
        flat = o.flatten(node)
        return wrap(o.reshape(_roll(flat, [(builtins.int(shift), 0)]), shape))
    axes = axis if isinstance(axis, tuple) else (axis,)
    axes = [axis_of("roll", node, a) for a in axes]
    shifts = shift if isinstance(shift, tuple) else (shift,) * len(axes)
    if not builtins.all(is_int(s) for s in shifts):
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


__all__ = ["reshape", "permute_dims", "broadcast_to", "broadcast_arrays", "concat", "stack",
           "expand_dims", "squeeze", "flip", "moveaxis", "unstack", "tile", "repeat", "roll"]
