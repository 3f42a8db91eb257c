"""Indexing: `x[key]` with integers, slices (any step), ellipsis and None."""
from __future__ import annotations

import builtins
import operator

from .._array import Array
from .._graph import bind
from .._prims import shape as sh
from ._core import wrap


def _expand_key(key, ndim):
    """Split `key` into per-axis entries; returns (entries, count of None)."""
    if not isinstance(key, tuple):
        key = (key,)
    if builtins.sum(1 for k in key if k is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = builtins.sum(1 for k in key if k is not None and k is not Ellipsis)
    if consumed > ndim:
        raise IndexError(f"too many indices: the array is {ndim}-dimensional, "
                         f"but {consumed} were indexed")
    out = []
    for k in key:
        if k is Ellipsis:
            out.extend([builtins.slice(None)] * (ndim - consumed))
        else:
            out.append(k)
    if Ellipsis not in key:
        out.extend([builtins.slice(None)] * (ndim - consumed))
    return out


def _as_int(k):
    if isinstance(k, builtins.bool):
        raise IndexError("boolean scalars are not supported as indices")
    if isinstance(k, Array):
        if k.dtype.kind not in "iu" or k.ndim != 0:
            raise IndexError("array indices (integer arrays and boolean masks) are not "
                             f"supported yet; got an array of shape {k.shape} and dtype {k.dtype}")
    try:
        return operator.index(k)
    except TypeError:
        raise IndexError(f"only integers, slices, ellipsis and None are valid indices, "
                         f"got {type(k).__name__}") from None


def getitem(x: Array, key):
    node = x._node
    shape = x.shape
    entries = _expand_key(key, len(shape))
    start, limit, strides, reverse_dims, out_shape = [], [], [], [], []
    axis = 0
    for k in entries:
        if k is None:
            out_shape.append(1)
            continue
        n = shape[axis]
        if isinstance(k, builtins.slice):
            lo, hi, step = k.indices(n)
            count = len(range(lo, hi, step))
            if step < 0:
                reverse_dims.append(axis)
                lo, step = n - 1 - lo, -step
            if count == 0:
                lo = 0
            start.append(lo)
            limit.append(lo + (count - 1) * step + 1 if count else lo)
            strides.append(step)
            out_shape.append(count)
        else:
            i = _as_int(k)
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
            i %= n
            start.append(i)
            limit.append(i + 1)
            strides.append(1)
        axis += 1
    if reverse_dims:
        node = bind(sh.reverse, (node,), {"dims": tuple(reverse_dims)})
    if (tuple(start), tuple(limit), tuple(strides)) != ((0,) * len(shape), shape, (1,) * len(shape)):
        node = bind(sh.slice, (node,), {"start": tuple(start), "limit": tuple(limit),
                                         "strides": tuple(strides)})
    out_shape = tuple(out_shape)
    if node.aval.shape != out_shape:
        node = bind(sh.reshape, (node,), {"shape": out_shape})
    return x if node is x._node else wrap(node)
