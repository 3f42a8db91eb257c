"""Set functions: unique_all, unique_counts, unique_inverse, unique_values, and isin.

The unique functions flatten x, sort it (stably, in NumPy's order), and mark the first
element of each run of equal values. Every NaN is distinct from every other value (NaN !=
NaN), as the standard requires, and -0.0 equals +0.0. The number of unique values is the
output's shape, so these functions evaluate it (one of the documented evaluation triggers);
the values, indices, inverse indices and counts are then recorded as primitives. Results
are in ascending order; `indices` point at the first occurrence of each value.

On the host devices (the CPU and the interpreter) a real x is evaluated itself instead, and
the sort and the runs are found with NumPy on its value: the same stable order, and one
NumPy sort instead of a recorded program of a dozen operations (packed sort keys, the runs,
their count) that evaluates anyway. The values are still recorded, as a gather of x's
elements, so derivatives flow through them as before; the indices, inverse indices and
counts are integers computed with the values. (`unique_values` of 400 labels, as
scikit-learn calls it about ten times per fit: 350-520 us recorded, 80-90 us so; NumPy's own
7-10 us.) Elsewhere (an accelerator, where x's value would have to travel to the host), for
complex x, and for bfloat16 (NumPy's argsort of ml_dtypes' bfloat16 puts NaNs among the
numbers), the graph above is recorded and the device sorts.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .. import _dtypes as dt
from .._array import Array
from . import _ops as o
from ._core import (cast, check_devices, eager_host_value, host_leaf, is_scalar, node_of, on_host,
                    result_dtype, scalar_node, wrap)
from .searching import search
from .._prims import lax


class UniqueAllResult(NamedTuple):
    values: Array
    indices: Array
    inverse_indices: Array
    counts: Array


class UniqueCountsResult(NamedTuple):
    values: Array
    counts: Array


class UniqueInverseResult(NamedTuple):
    values: Array
    inverse_indices: Array


def _unique(name, x, *, indices=False, inverse=False, counts=False):
    node = node_of(name, x)
    shape = node.aval.shape
    dev = node.device
    idx = o.index_dtype()
    flat = o.flatten(node)
    n = flat.aval.shape[0]
    if n == 0:
        empty = o.const(0, (0,), idx, dev)
        return (wrap(o.const(0, (0,), node.aval.dtype, dev)), wrap(empty),
                wrap(o.const(0, shape, idx, dev)), wrap(empty))
    if on_host(dev) and node.aval.dtype.kind in dt.REAL_OR_BOOL_KINDS \
            and node.aval.dtype is not dt.bfloat16:   # ml_dtypes' sort misplaces its NaNs
        (host,) = o.concrete(flat)
        return _unique_on_host(flat, host, shape, indices, inverse, counts)
    perm = o.argsort_keys(o.sort_key_parts(flat), 0)
    ordered = o.take_axis(flat, perm, 0) if n > 1 else flat
    first = o.const(True, (1,), dt.bool, dev)
    if n > 1:
        changed = o.compare(o.slice_axis(ordered, 0, 1, n), o.slice_axis(ordered, 0, 0, n - 1), "NE")
        first = o.concat([first, changed], 0)
    (k,) = o.concrete(o.count_true(first), keep=(first, ordered, perm))
    k = int(k)
    starts = o.compact_positions(first, k)
    values = o.take_axis(ordered, starts, 0) if k != n else ordered
    out_indices = out_inverse = out_counts = None
    if indices:
        out_indices = o.take_axis(perm, starts, 0) if k != n else perm
    if counts:
        ends = o.concat([o.slice_axis(starts, 0, 1, k), o.const(n, (1,), idx, dev)], 0)
        out_counts = lax.subtract(ends, starts)
    if inverse:
        group = lax.subtract(o.cumsum(cast(first, idx), 0), o.const(1, (n,), idx, dev))
        scattered = lax.scatter(o.const(0, (n,), idx, dev), o.reshape(perm, (n, 1)), group,
                                axes=(0,), mode="set")
        out_inverse = o.reshape(scattered, shape)
    return tuple(None if v is None else wrap(v)
                 for v in (values, out_indices, out_inverse, out_counts))


def _unique_on_host(flat, host, shape, indices, inverse, counts):
    """_unique's results for the 1-d `flat` (n > 0 elements, real or bool) whose value is
    `host`: the sort and the runs of equal values computed by NumPy, the values recorded as
    a gather of `flat` where the graph is kept (a derivative flows to x through them)."""
    dev = flat.device
    idx = o.index_dtype().numpy
    n = host.shape[0]
    computed = eager_host_value(flat) is not None   # nothing keeps the graph: no gather
    if computed and not (indices or inverse):
        # the values alone need no permutation: a stable sort keeps the first of equal
        # values (+0.0 or -0.0) first, as the permutation's order does
        ordered, perm = np.sort(host, kind="stable"), None
    else:
        perm = np.argsort(host, kind="stable")   # NumPy's order: NaN last, -0.0 == +0.0
        ordered = host[perm]
    first = np.empty(n, dtype=bool)
    first[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])   # NaN != NaN: each its own run
    starts = np.flatnonzero(first)
    if computed:
        values = host_leaf(ordered[starts], dev, flat.aval.names)
    if perm is not None:
        at = perm[starts].astype(idx)            # the first occurrence of each value
        if not computed:
            values = o.take_axis(flat, host_leaf(at, dev), 0)
    out_indices = out_inverse = out_counts = None
    if indices:
        out_indices = host_leaf(at.copy(), dev)
    if counts:
        out_counts = host_leaf(np.diff(starts, append=n).astype(idx), dev)
    if inverse:
        group = np.empty(n, dtype=idx)
        group[perm] = np.cumsum(first, dtype=idx) - 1
        out_inverse = host_leaf(group.reshape(shape), dev)
    return tuple(None if v is None else wrap(v)
                 for v in (values, out_indices, out_inverse, out_counts))


def unique_all(x, /):
    v, i, inv, c = _unique("unique_all", x, indices=True, inverse=True, counts=True)
    return UniqueAllResult(v, i, inv, c)


def unique_counts(x, /):
    v, _, _, c = _unique("unique_counts", x, counts=True)
    return UniqueCountsResult(v, c)


def unique_inverse(x, /):
    v, _, inv, _ = _unique("unique_inverse", x, inverse=True)
    return UniqueInverseResult(v, inv)


def unique_values(x, /):
    return _unique("unique_values", x)[0]


def isin(x1, x2, /, *, invert=False):
    """Whether each element of x1 occurs in x2 (x2 is flattened); `invert` negates the
    result. Either argument may be a Python scalar, not both. NaN is in nothing."""
    for name, v in (("x1", x1), ("x2", x2)):
        if not isinstance(v, Array) and not is_scalar(v):
            raise TypeError(f"isin: {name} must be a tlaloc array or a Python scalar, "
                            f"got {type(v).__name__}")
    if not isinstance(invert, bool):
        raise TypeError(f"isin: invert must be a bool, got {invert!r}")
    d = result_dtype("isin", x1, x2)
    arrays = [v._node for v in (x1, x2) if isinstance(v, Array)]
    dev = check_devices("isin", *arrays)
    a, b = (cast(v._node, d) if isinstance(v, Array) else scalar_node(v, d, dev)
            for v in (x1, x2))
    b = o.flatten(b)
    m = b.aval.shape[0]
    shape = a.aval.shape
    if m == 0:
        found = o.const(False, shape, dt.bool, dev)
    elif d.kind == "c" or m == 1:
        wide = shape + (m,)
        eq = o.compare(o.broadcast(a, wide, dims=tuple(range(len(shape)))),
                       o.broadcast(b, wide, dims=(len(shape),)), "EQ")
        found = lax.reduce_max(eq, axes=(len(shape),))
    else:
        ordered = o.sort_keys([b], 0)
        position = search(ordered, a, "left")
        found = o.compare(o.take_axis(ordered, position, 0), a, "EQ")   # gather clamps
    if invert:
        found = o.logical_not(found)
    return wrap(found)


__all__ = ["unique_all", "unique_counts", "unique_inverse", "unique_values", "isin",
           "UniqueAllResult", "UniqueCountsResult", "UniqueInverseResult"]
