"""Searching functions: argmax, argmin, nonzero, count_nonzero, searchsorted, where."""
from __future__ import annotations

import math

import numpy as np

from .. import _dtypes as dt
from .._array import Array
from . import _ops as o
from .._prims import lax
from ._core import (broadcast_shapes, cast, check_bool, check_devices, check_size, is_scalar,
                    axes_of, axis_of, check_names, eager_host_value, host_leaf, node_of, renamed,
                    result_dtype, scalar_node, wrap)


def _real(name, x, argname="x"):
    node = node_of(name, x, argname)
    if node.aval.dtype.kind == "c":
        raise TypeError(f"{name}: {argname} must have a real dtype, got {node.aval.dtype}")
    return node


def _host_value(node):
    """node's value where NumPy finds the extremum at once (bfloat16 aside: ml_dtypes'
    argmax does not put its NaNs first); None for a named array, whose result keeps names."""
    if node.aval.names is not None or node.aval.dtype is dt.bfloat16:
        return None
    return eager_host_value(node)


def _arg_extremum(name, prim, host_search):
    def fn(x, /, *, axis=None, keepdims=False):
        node = _real(name, x)
        check_bool(name, keepdims, "keepdims")
        shape = node.aval.shape
        ax = None if axis is None else axis_of(name, node, axis)
        if (math.prod(shape) if ax is None else shape[ax]) == 0:
            raise ValueError(f"{name}: attempt to get {name} of an empty sequence")
        host = _host_value(node)
        if host is not None:
            # NumPy's argmax and argmin give the composition's result: the first extremal
            # element, the first NaN where there is one
            found = host_search(host, axis=ax, keepdims=keepdims)
            return wrap(host_leaf(np.asarray(found, o.index_dtype().numpy), node.device))
        if ax is None:
            node = o.flatten(node)
            ax = 0
        n = node.aval.shape[ax]
        full = node.aval.shape
        others = tuple(d for d in range(len(full)) if d != ax)
        best = o.broadcast(prim(node, axes=(ax,)), full, dims=others)
        hit = o.compare(node, best, "EQ")
        if node.aval.dtype.kind == "f":
            # max/min propagate NaN, so a NaN anywhere makes the NaNs the hits: the first
            # NaN wins, as in NumPy
            hit = lax.bitwise_or(hit, o.isnan(node))
        position = o.iota(full, ax, node.device)
        candidate = o.select(hit, position, o.const_like(position, n))
        out = lax.reduce_min(candidate, axes=(ax,))
        if keepdims:
            out = renamed(o.reshape(out, (1,) * len(shape) if axis is None else
                                    tuple(1 if d == ax else m for d, m in enumerate(shape))),
                          x._node.aval.names)
        return wrap(out)
    fn.__name__ = name
    return fn


argmax = _arg_extremum("argmax", lax.reduce_max, np.argmax)
argmin = _arg_extremum("argmin", lax.reduce_min, np.argmin)
argmax.__doc__ = ("The index of the first maximal element along `axis` (of the flattened array "
                  "when axis is None). A NaN is the maximum: the first NaN's index is returned.")
argmin.__doc__ = ("The index of the first minimal element along `axis` (of the flattened array "
                  "when axis is None). As in NumPy, a NaN wins: the first NaN's index is returned.")


def _nonzero_mask(node):
    if node.aval.dtype is dt.bool:
        return node
    return o.compare(node, o.const_like(node, 0), "NE")


def nonzero(x, /):
    """The indices of the non-zero elements, one int64 array per dimension, in row-major
    order. Its output shape depends on the values: it evaluates the count of non-zero
    elements, then records the computation of the indices."""
    node = node_of("nonzero", x)
    if not node.aval.shape:
        raise ValueError("nonzero: x must have at least one dimension (use atleast_1d semantics "
                         "explicitly, e.g. reshape(x, (1,)))")
    return tuple(wrap(c) for c in o.nonzero_nodes(_nonzero_mask(node)))


def count_nonzero(x, /, *, axis=None, keepdims=False):
    node = node_of("count_nonzero", x)
    shape = node.aval.shape
    axes = axes_of("count_nonzero", node, axis)
    check_bool("count_nonzero", keepdims, "keepdims")
    out = o.count_true(_nonzero_mask(node), axes)
    if keepdims:
        out = renamed(o.reshape(out, tuple(1 if d in axes else n for d, n in enumerate(shape))),
                      node.aval.names)
    return wrap(out)


# ----------------------------------------------------------------------------- searchsorted

def _before(a, b):
    """a < b in NumPy's sort order (NaN is the largest value, -0.0 == +0.0)."""
    lt = o.compare(a, b, "LT")
    if a.aval.dtype.kind != "f":
        return lt
    return lax.bitwise_or(lt, lax.bitwise_and(o.isnan(b), o.logical_not(o.isnan(a))))


def search(sorted_node, values, side):
    """Insertion points (int64, values' shape) of `values` in the 1-d ascending
    `sorted_node`: a binary search unrolled over ceil(log2(n + 1)) gather steps."""
    n = sorted_node.aval.shape[0]
    shape = values.aval.shape
    dev = values.device
    idx = o.index_dtype()
    lo = o.const(0, shape, idx, dev)
    if n == 0 or math.prod(shape) == 0:
        return lo
    hi = o.const(n, shape, idx, dev)
    one = o.const(1, shape, idx, dev)
    for _ in range(n.bit_length()):
        active = o.compare(lo, hi, "LT")
        mid = lax.shift_right_logical(lax.add(lo, hi), one)
        pivot = o.take_axis(sorted_node, mid, 0)
        if side == "left":
            right = _before(pivot, values)               # pivot < v: go right
        else:
            right = o.logical_not(_before(values, pivot))  # pivot <= v: go right
        go_right = lax.bitwise_and(active, right)
        go_left = lax.bitwise_and(active, o.logical_not(right))
        lo = o.select(go_right, lax.add(mid, one), lo)
        hi = o.select(go_left, mid, hi)
    return lo


def searchsorted(x1, x2, /, *, side="left", sorter=None):
    """Indices where the elements of `x2` would be inserted into the sorted 1-d `x1` to keep
    it sorted (NumPy's order: NaN last). `sorter` is a permutation that sorts `x1`."""
    n1 = node_of("searchsorted", x1, "x1")
    if len(n1.aval.shape) != 1:
        raise ValueError(f"searchsorted: x1 must be one-dimensional, got shape {n1.aval.shape}")
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if not isinstance(x2, Array) and not is_scalar(x2):
        raise TypeError(f"searchsorted: x2 must be a tlaloc array or a Python scalar, "
                        f"got {type(x2).__name__}")
    d = result_dtype("searchsorted", x1, x2)
    if d.kind == "c":
        raise TypeError("searchsorted: complex numbers are not ordered")
    if isinstance(x2, Array):
        check_devices("searchsorted", n1, x2._node)
        n2 = cast(x2._node, d)
    else:
        n2 = scalar_node(x2, d, n1.device)
    n1 = cast(n1, d)
    if sorter is not None:
        s = node_of("searchsorted", sorter, "sorter")
        check_devices("searchsorted", n1, s)
        if s.aval.dtype.kind not in dt.INTEGER_KINDS:
            raise TypeError(f"searchsorted: sorter must have an integer dtype, got {s.aval.dtype}")
        if s.aval.shape != n1.aval.shape:
            raise ValueError(f"searchsorted: sorter must have x1's shape {n1.aval.shape}, "
                             f"got {s.aval.shape}")
        if n1.aval.shape[0]:
            n1 = o.take_axis(n1, o.normalize_indices(s, n1.aval.shape[0]), 0)
    return wrap(search(n1, n2, side))


# ----------------------------------------------------------------------------- where

def where(condition, x1, x2, /):
    """Elements of x1 where condition is true, else of x2 (broadcast together; x1 or x2 may
    be a Python scalar, not both)."""
    cond = node_of("where", condition, "condition")
    if cond.aval.dtype is not dt.bool:
        raise TypeError(f"where: condition must have a bool dtype, got {cond.aval.dtype}")
    for name, v in (("x1", x1), ("x2", x2)):
        if not isinstance(v, Array) and not is_scalar(v):
            raise TypeError(f"where: {name} must be a tlaloc array or a Python scalar, "
                            f"got {type(v).__name__}")
    d = result_dtype("where", x1, x2)
    arrays = [cond] + [v._node for v in (x1, x2) if isinstance(v, Array)]
    dev = check_devices("where", *arrays)
    check_names("where", arrays)
    shape = broadcast_shapes(*[a.aval.shape for a in arrays], name="where")
    if all(a.aval.shape != shape for a in arrays):   # an outer product
        check_size("where", shape, d, dev)
    # a Python scalar stays 0-d: select, as every elementwise primitive, takes 0-d operands
    # beside full ones (a scalar leaf has no derivative to gather back to its shape)
    nodes = [o.broadcast(cast(v._node, d), shape) if isinstance(v, Array)
             else scalar_node(v, d, dev) for v in (x1, x2)]
    return wrap(o.select(o.broadcast(cond, shape), *nodes))


__all__ = ["argmax", "argmin", "nonzero", "count_nonzero", "searchsorted", "where"]
