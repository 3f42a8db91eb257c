"""NumPy's index helpers and padding. The index arrays of a shape are host metadata, made
with NumPy itself (so they are NumPy's to the element) and sent as constants; the values
they index stay on the device."""
from __future__ import annotations

import builtins
import operator

import numpy as _np

import tlaloc as _xp

from ._convert import as_array


def _indices_of(fn, *args, device=None):
    return tuple(_xp.asarray(i, dtype=_xp.int64, device=device) for i in fn(*args))


def tril_indices(n, k=0, m=None, *, device=None):
    """NumPy's `np.tril_indices`: (rows, columns) of the lower triangle."""
    return _indices_of(_np.tril_indices, n, k, m, device=device)


def triu_indices(n, k=0, m=None, *, device=None):
    """NumPy's `np.triu_indices`: (rows, columns) of the upper triangle."""
    return _indices_of(_np.triu_indices, n, k, m, device=device)


def diag_indices(n, ndim=2, *, device=None):
    """NumPy's `np.diag_indices`."""
    return _indices_of(_np.diag_indices, n, ndim, device=device)


def indices(dimensions, dtype=None, *, device=None):
    """NumPy's `np.indices`: a grid of each axis's index, stacked (shape (ndim, *dimensions))."""
    grids = _xp.meshgrid(*[_xp.arange(n, dtype=dtype or _xp.int64, device=device)
                           for n in dimensions], indexing="ij")
    return _xp.stack(grids, axis=0) if grids else _xp.zeros((0,), dtype=dtype or _xp.int64)


def unravel_index(indices, shape, order="C"):
    """NumPy's `np.unravel_index`: the coordinates of flat indices in an array of `shape`."""
    if order not in ("C", "F"):
        raise ValueError(f"unravel_index: order must be 'C' or 'F', got {order!r}")
    idx = as_array(indices)
    if idx.dtype.kind not in "iu":
        raise TypeError(f"unravel_index: indices must be integers, got {idx.dtype}")
    dims = list(shape)[::-1] if order == "C" else list(shape)
    out = []
    for n in dims:
        out.append(idx % n)
        idx = idx // n
    return tuple(out[::-1] if order == "C" else out)


def _pairs(name, pad_width, ndim):
    """NumPy's pad_width forms (n, (n,), (before, after), one pair per axis) as pairs."""
    widths = _np.broadcast_to(_np.asarray(pad_width, dtype=object), (ndim, 2))
    try:
        pairs = [(operator.index(b), operator.index(a)) for b, a in widths]
    except TypeError:
        raise TypeError(f"{name}: pad_width must be integers, got {pad_width!r}") from None
    if builtins.any(b < 0 or a < 0 for b, a in pairs):
        raise ValueError(f"{name}: pad_width must be non-negative, got {pad_width!r}")
    return pairs


_INDEX_MODES = ("edge", "reflect", "symmetric", "wrap")


def pad(array, pad_width, mode="constant", *, constant_values=0):
    """NumPy's `np.pad` with mode "constant" (a scalar, or a (before, after) value per axis),
    "edge", "reflect", "symmetric" or "wrap". The other modes gather a's own elements at the
    positions NumPy's pad of an index vector gives, so large pads repeat as NumPy's do."""
    a = as_array(array)
    if mode != "constant" and mode not in _INDEX_MODES:
        raise ValueError(f"pad: mode {mode!r} is not supported; one of "
                         f"{('constant',) + _INDEX_MODES}")
    pairs = _pairs("pad", pad_width, a.ndim)
    values = _np.broadcast_to(_np.asarray(constant_values, dtype=object), (a.ndim, 2)) \
        if mode == "constant" else None
    for axis, (before, after) in enumerate(pairs):
        if before == after == 0:
            continue
        if mode == "constant":
            parts = []
            for count, value in ((before, values[axis][0]), (after, values[axis][1])):
                shape = a.shape[:axis] + (count,) + a.shape[axis + 1:]
                parts.append(_xp.full(shape, value, dtype=a.dtype, device=a.device))
            a = _xp.concat([parts[0], a, parts[1]], axis=axis)
        else:
            if a.shape[axis] == 0:
                raise ValueError(f"pad: mode {mode!r} cannot pad an empty axis")
            where = _np.pad(_np.arange(a.shape[axis]), (before, after), mode=mode)
            a = _xp.take(a, _xp.asarray(where, device=a.device), axis=axis)
    return a
