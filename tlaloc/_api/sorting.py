"""Sorting functions: sort and argsort (stable; NumPy's order, NaN last ascending and first
descending; -0.0 and +0.0 compare equal)."""
from __future__ import annotations

import numpy as np

from .. import _dtypes as dt
from .._context import trace
from . import _ops as o
from ._core import axis_of, host_leaf, node_of, on_host, wrap


def _sortable(name, x, axis, descending, stable):
    node = node_of(name, x)
    if node.aval.dtype.kind == "c":
        raise TypeError(f"{name}: complex numbers are not ordered")
    if not isinstance(descending, bool) or not isinstance(stable, bool):
        raise TypeError(f"{name}: descending and stable must be bools")
    if not node.aval.shape:
        raise ValueError(f"{name}: x must have at least one dimension")
    return node, axis_of(name, node, axis)


def _host_value(node):
    """The value of `node` when it is computed in host memory and no derivative is being
    recorded: then NumPy sorts it, in place of the integer keys and the sort that suit
    XLA (a dozen operations run one by one), and the result is a computed array."""
    if trace.retain_graph or not on_host(node.device) \
            or node.aval.dtype is dt.bfloat16:    # ml_dtypes' sort misplaces its NaNs
        return None
    return o.known_value(node)


def _sorted(host, axis, descending):
    """np.sort in sort_values' order: -0.0 before +0.0 (np.sort keeps the zeros in their
    first order; descending, after it), and every NaN the one NaN the keys make."""
    out = np.sort(host, axis=axis, kind="stable")
    if out.dtype.kind == "f":
        zero = out == 0
        if zero.any():
            # each line's zeros are one run, from the count of its negative values: its
            # first (number of negative zeros) entries are -0.0
            start = np.sum(out < 0, axis=axis, keepdims=True)
            negatives = np.sum(zero & np.signbit(out), axis=axis, keepdims=True)
            shape = [1] * out.ndim
            shape[axis] = out.shape[axis]
            position = np.arange(out.shape[axis]).reshape(shape)
            out[zero] = np.where(position - start < negatives, -0.0, 0.0).astype(out.dtype)[zero]
        nan = np.isnan(out)
        if nan.any():
            out[nan] = np.nan
    return np.flip(out, axis=axis) if descending else out


def _argsorted(host, axis, descending):
    """The stable permutation NumPy gives (zeros equal, NaN last); descending keeps equal
    elements in their order."""
    if not descending:
        return np.argsort(host, axis=axis, kind="stable")
    flipped = np.argsort(np.flip(host, axis=axis), axis=axis, kind="stable")
    return host.shape[axis] - 1 - np.flip(flipped, axis=axis)


def sort(x, /, *, axis=-1, descending=False, stable=True):
    """The sorted copy of x along `axis`. The sort is always stable."""
    node, ax = _sortable("sort", x, axis, descending, stable)
    host = _host_value(node)
    if host is not None:
        return wrap(host_leaf(_sorted(host, ax, descending), node.device, node.aval.names))
    return wrap(o.sort_values(node, ax, descending))


def argsort(x, /, *, axis=-1, descending=False, stable=True):
    """The (int64) indices that sort x along `axis`; stable, so equal elements keep their
    order, in descending sorts too."""
    node, ax = _sortable("argsort", x, axis, descending, stable)
    host = _host_value(node)
    if host is not None:
        perm = _argsorted(host, ax, descending).astype(o.index_dtype().numpy, copy=False)
        return wrap(host_leaf(perm, node.device, node.aval.names))
    return wrap(o.argsort_keys([node], ax, descending))


__all__ = ["sort", "argsort"]
