"""Manipulation functions: shape, order and joining."""
from __future__ import annotations

import builtins
import math
import operator

from .._array import Array
from .._graph import bind
from .._prims import shape as sh
from ._core import (broadcast_shapes, broadcast_to_shape, cast, check_devices, check_size,
                    axes_of, axis_of, node_of, promote, renamed, unify, wrap)
from ._core import fresh


def _reshape_node(node, shape):
    if node.aval.shape == shape:
        return node
    return bind(sh.reshape, (node,), {"shape": shape})


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
        known = math.prod(n for n in dims if n != -1)
        if known == 0 or size % known:
            raise ValueError(f"reshape: cannot reshape an array of shape {x.shape} into {tuple(dims)}")
        dims[dims.index(-1)] = size // known
    dims = tuple(dims)
    if math.prod(dims) != size:
        raise ValueError(f"reshape: cannot reshape an array of shape {x.shape} into {dims}")
    return fresh(x) if dims == x.shape and not copy else wrap(_reshape_node(node, dims))


def permute_dims(x, /, axes):
    node = node_of("permute_dims", x)
    axes = tuple(axis_of("permute_dims", x, a, "axes") for a in axes)
    if sorted(axes) != list(range(x.ndim)):
        raise ValueError(f"permute_dims: axes {axes} is not a permutation of {x.ndim} axes")
    if axes == tuple(range(x.ndim)):
        return fresh(x)
    return wrap(bind(sh.transpose, (node,), {"perm": axes}))


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
    d = nodes[0].aval.dtype
    for n in nodes[1:]:
        d = promote(name, d, n.aval.dtype)
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
    return wrap(bind(sh.concatenate, tuple(nodes), {"axis": ax}))


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
    out = parts[0] if len(parts) == 1 else bind(sh.concatenate, tuple(parts), {"axis": ax})
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
    out = _reshape_node(node, tuple(shape))
    return wrap(out if node.aval.names is None else renamed(out, names))


def squeeze(x, /, axis):
    node = node_of("squeeze", x)
    axes = axes_of("squeeze", x, axis)
    for a in axes:
        if x.shape[a] != 1:
            raise ValueError(f"squeeze: axis {a} has size {x.shape[a]}, not 1")
    shape = tuple(n for i, n in enumerate(x.shape) if i not in axes)
    if not axes:
        return fresh(x)
    out = _reshape_node(node, shape)
    if node.aval.names is not None:
        out = renamed(out, [n for i, n in enumerate(node.aval.names) if i not in axes])
    return wrap(out)


def flip(x, /, *, axis=None):
    node = node_of("flip", x)
    axes = axes_of("flip", x, axis)
    if not axes:
        return fresh(x)
    return wrap(bind(sh.reverse, (node,), {"dims": axes}))


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


__all__ = ["reshape", "permute_dims", "broadcast_to", "broadcast_arrays", "concat", "stack",
           "expand_dims", "squeeze", "flip", "moveaxis", "unstack"]
