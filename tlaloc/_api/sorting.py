"""Sorting functions: sort and argsort (stable; NumPy's order, NaN last ascending and first
descending; -0.0 and +0.0 compare equal)."""
from __future__ import annotations

from . import _ops as o
from ._core import axis_of, node_of, wrap


def _sortable(name, x, axis, descending, stable):
    node = node_of(name, x)
    if node.aval.dtype.kind == "c":
        raise TypeError(f"{name}: complex numbers are not ordered")
    if not isinstance(descending, bool) or not isinstance(stable, bool):
        raise TypeError(f"{name}: descending and stable must be bools")
    if not node.aval.shape:
        raise ValueError(f"{name}: x must have at least one dimension")
    return node, axis_of(name, node, axis)


def sort(x, /, *, axis=-1, descending=False, stable=True):
    """The sorted copy of x along `axis`. The sort is always stable."""
    node, ax = _sortable("sort", x, axis, descending, stable)
    return wrap(o.sort_values(node, ax, descending))


def argsort(x, /, *, axis=-1, descending=False, stable=True):
    """The (int64) indices that sort x along `axis`; stable, so equal elements keep their
    order, in descending sorts too."""
    node, ax = _sortable("argsort", x, axis, descending, stable)
    return wrap(o.argsort_keys([node], ax, descending))


__all__ = ["sort", "argsort"]
