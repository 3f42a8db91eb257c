"""NumPy's statistics beyond the standard's reductions: order statistics (median, quantile,
percentile), weighted and NaN-ignoring reductions, covariance, bincount."""
from __future__ import annotations

import builtins

import numpy as _np

import tlaloc as _xp
from tlaloc._api import array_methods as _m
from tlaloc._api._core import normalize_axis

from ._convert import as_array, is_scalar


def _along_last(a, axis, name):
    """(x, moved): `a` flattened (axis=None) or with `axis` moved last, and the axis."""
    if axis is None:
        return _xp.reshape(a, (-1,)), None
    ax = normalize_axis(name, axis, a.ndim)
    return _xp.moveaxis(a, ax, -1), ax


def _keep(out, a, axis, keepdims):
    """NumPy's keepdims: the reduced axis (every axis for axis=None) back, of size 1."""
    if not keepdims:
        return out
    lead = out.shape[:out.ndim - (a.ndim - (0 if axis is None else 1))]
    return _xp.reshape(out, lead + tuple(1 if axis is None or i == axis else n
                                         for i, n in enumerate(a.shape)))


def _inexact(a):
    return a if a.dtype.kind in "fc" else _xp.astype(a, _xp.float64)


def _lerp(lo, hi, t):
    """NumPy's quantile interpolation: a + t (b - a), from b's side for t >= 1/2 (b - a in
    the values' dtype, the products in t's)."""
    diff = hi - lo
    return _xp.where(t >= 0.5, hi - diff * (1 - t), lo + diff * t)


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False):
    """NumPy's `np.quantile` with method="linear": q's axes first, then a's other axes; NaN
    where the values hold one."""
    if method != "linear":
        raise ValueError(f"quantile: method={method!r} is not supported (only 'linear')")
    a = _inexact(as_array(a))
    x, axis = _along_last(a, axis, "quantile")
    n = x.shape[-1]
    if n == 0:
        raise ValueError("quantile: the axis is empty")
    if not isinstance(q, _xp.Array) and not _np.all((_np.asarray(q) >= 0) & (_np.asarray(q) <= 1)):
        raise ValueError(f"quantile: q must be in [0, 1], got {q!r}")
    qa = as_array(q, like=a)
    # NumPy: the values keep their dtype, the positions and weights are in result_type(a, q),
    # and so is the result (b - a rounds in a's dtype, as in NumPy)
    weights = _xp.result_type(x, qa) if not is_scalar(q) and qa.dtype.kind in "fc" else x.dtype
    s = _xp.sort(x, axis=-1)
    pos = _xp.astype(_xp.reshape(qa, (-1,)), weights) * (n - 1)
    lo = _xp.floor(pos)
    t = pos - lo
    lo_i = _xp.astype(lo, _xp.int64)
    hi_i = _xp.minimum(lo_i + 1, n - 1)
    picked = _lerp(_xp.take(s, lo_i, axis=-1), _xp.take(s, hi_i, axis=-1), t)
    picked = _xp.where(_xp.isnan(s[..., -1:]), _xp.nan, picked)   # sort puts NaN last
    # an array q is not read here (it may be traced): NaN where it is out of [0, 1]
    picked = _xp.where((pos >= 0) & (pos <= n - 1), picked, _xp.nan)
    result = _xp.reshape(_xp.moveaxis(picked, -1, 0), qa.shape + s.shape[:-1])
    return _m.store(_keep(result, a, axis, keepdims), out, "quantile")


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False):
    """NumPy's `np.percentile`: quantile at q / 100."""
    if is_scalar(q):
        return quantile(a, q / 100, axis, out, overwrite_input, method, keepdims)
    q = as_array(q, like=as_array(a))
    return quantile(a, (q if q.dtype.kind in "fc" else _xp.astype(q, _xp.float64)) / 100,
                    axis, out, overwrite_input, method, keepdims)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """NumPy's `np.median`: the middle of the sorted values, the mean of the two middle ones
    for an even count (not quantile's interpolation: median([1, 2, inf]) is 2); NaN where
    the values hold one."""
    a = _inexact(as_array(a))
    x, axis = _along_last(a, axis, "median")
    n = x.shape[-1]
    if n == 0:
        raise ValueError("median: the axis is empty")
    s = _xp.sort(x, axis=-1)
    mid = s[..., n // 2] if n % 2 else (s[..., n // 2 - 1] + s[..., n // 2]) / 2
    mid = _xp.where(_xp.isnan(s[..., -1]), _xp.nan, mid)     # sort puts NaN last
    return _m.store(_keep(mid, a, axis, keepdims), out, "median")


def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """NumPy's `np.average`: the mean, or the weighted mean sum(a * w) / sum(w)."""
    a = as_array(a)
    if weights is None:
        avg = _xp.mean(_inexact(a), axis=axis, keepdims=keepdims)
        return (avg, _xp.full_like(avg, a.size // builtins.max(avg.size, 1))) if returned else avg
    w = as_array(weights, like=a)
    if w.shape != a.shape:
        if axis is None or w.ndim != 1:
            raise ValueError("average: weights must have a's shape, or be 1-d along one axis")
        ax = normalize_axis("average", axis, a.ndim)
        if w.shape[0] != a.shape[ax]:
            raise ValueError(f"average: {w.shape[0]} weights for an axis of {a.shape[ax]}")
        w = _xp.broadcast_to(_xp.reshape(w, (1,) * ax + w.shape + (1,) * (a.ndim - ax - 1)),
                             a.shape)
    total = _xp.sum(w, axis=axis, keepdims=keepdims)
    avg = _xp.sum(a * w, axis=axis, keepdims=keepdims) / total
    return (avg, _xp.broadcast_to(total, avg.shape)) if returned else avg


def ptp(a, axis=None, out=None, keepdims=False):
    """NumPy's `np.ptp`: max - min."""
    a = as_array(a)
    return _m.store(_xp.max(a, axis=axis, keepdims=keepdims) -
                    _xp.min(a, axis=axis, keepdims=keepdims), out, "ptp")


# ----------------------------------------------------------------------------- NaN-ignoring

def _nan_as(a, value):
    return _xp.where(_xp.isnan(a), value, a) if a.dtype.kind in "fc" else a


def nansum(a, axis=None, dtype=None, out=None, keepdims=False):
    """NumPy's `np.nansum`: NaN counts as 0."""
    a = as_array(a)
    return _m.sum(_nan_as(a, 0), axis, dtype, out, keepdims)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False):
    """NumPy's `np.nanprod`: NaN counts as 1."""
    a = as_array(a)
    return _m.prod(_nan_as(a, 1), axis, dtype, out, keepdims)


def _count(a, axis, keepdims):
    valid = ~_xp.isnan(a) if a.dtype.kind in "fc" else _xp.ones_like(a, dtype=_xp.bool)
    return _xp.sum(_xp.astype(valid, _xp.real(a).dtype if a.dtype.kind == "c" else a.dtype),
                   axis=axis, keepdims=keepdims)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False):
    """NumPy's `np.nanmean`: the mean of the non-NaN values (NaN where there are none)."""
    a = _inexact(as_array(a) if dtype is None else as_array(a, dtype))
    total = _xp.sum(_nan_as(a, 0), axis=axis, keepdims=keepdims)
    return _m.store(total / _count(a, axis, keepdims), out, "nanmean")


def _nan_spread(name, root):
    def fn(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        a = _inexact(as_array(a) if dtype is None else as_array(a, dtype))
        mean = _xp.sum(_nan_as(a, 0), axis=axis, keepdims=True) / _count(a, axis, True)
        dev = _nan_as(a - mean, 0)
        squares = _xp.real(dev * _xp.conj(dev)) if a.dtype.kind == "c" else dev * dev
        var = _xp.sum(squares, axis=axis, keepdims=keepdims) / \
            _xp.maximum(_count(a, axis, keepdims) - ddof, 0)
        return _m.store(_xp.sqrt(var) if root else var, out, name)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"NumPy's `np.{name}`: over the non-NaN values, with ddof."
    return fn


nanvar = _nan_spread("nanvar", root=False)
nanstd = _nan_spread("nanstd", root=True)


def _nan_extremum(name, reduce, fill):
    def fn(a, axis=None, out=None, keepdims=False):
        a = as_array(a)
        if a.dtype.kind not in "f":
            return _m.store(reduce(a, axis=axis, keepdims=keepdims), out, name)
        picked = reduce(_nan_as(a, fill), axis=axis, keepdims=keepdims)
        all_nan = _xp.all(_xp.isnan(a), axis=axis, keepdims=keepdims)
        return _m.store(_xp.where(all_nan, _xp.nan, picked), out, name)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"NumPy's `np.{name}`: NaN is ignored (NaN where every value is NaN)."
    return fn


nanmax = _nan_extremum("nanmax", _xp.max, -_xp.inf)
nanmin = _nan_extremum("nanmin", _xp.min, _xp.inf)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """NumPy's `np.nanmedian`: the median of the non-NaN values, sorted first (NaN last)."""
    a = _inexact(as_array(a))
    x, ax = _along_last(a, axis, "nanmedian")
    s = _xp.sort(x, axis=-1)
    k = _xp.astype(_count(x, -1, True), _xp.int64)              # non-NaN values per row
    lo_i = _xp.maximum((k - 1) // 2, 0)
    hi_i = _xp.maximum(k // 2, 0)
    lo = _xp.take_along_axis(s, lo_i, axis=-1)
    hi = _xp.take_along_axis(s, hi_i, axis=-1)
    mid = _xp.where(k == 0, _xp.nan, (lo + hi) / 2)[..., 0]
    return _m.store(_keep(mid, a, ax, keepdims), out, "nanmedian")


# ----------------------------------------------------------------------------- covariance, counts

def _variables(v, rowvar, like=None):
    """cov's variables as rows: 1-d as one row, columns as rows for rowvar=False; float64
    at least (NumPy computes covariances in result_type(m, y, float64))."""
    v = as_array(v, like=like)
    v = _xp.astype(v, _xp.result_type(v.dtype, _xp.float64))
    if v.ndim > 2:
        raise ValueError(f"cov: m and y must be 1-d or 2-d, got {v.ndim}-d")
    if v.ndim < 2:
        return _xp.reshape(v, (1, -1))
    return v if rowvar or v.shape[0] == 1 else _xp.matrix_transpose(v)


def cov(m, y=None, rowvar=True, bias=False, ddof=None, *, dtype=None):
    """NumPy's `np.cov`: the covariance of the rows (variables; columns with rowvar=False),
    normalised by N - 1 (N with bias=True, N - ddof with ddof), in float64 (complex128)."""
    x = _variables(m, rowvar)
    if y is not None:
        yy = _variables(y, rowvar, like=x)
        x = _xp.concat([x, yy], axis=0) if yy.dtype is x.dtype else \
            _xp.concat([_xp.astype(v, _xp.result_type(x, yy)) for v in (x, yy)], axis=0)
    if dtype is not None:
        x = _xp.astype(x, dtype)
    n = x.shape[1]
    ddof = (0 if bias else 1) if ddof is None else ddof
    centred = x - _xp.mean(x, axis=1, keepdims=True)
    c = (centred @ _xp.conj(_xp.matrix_transpose(centred))) / builtins.max(n - ddof, 0)
    return _xp.reshape(c, ()) if c.shape == (1, 1) else c


def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    """NumPy's `np.corrcoef`: the covariance scaled to unit diagonal, real parts clipped to
    [-1, 1]."""
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return c / c
    d = _xp.sqrt(_xp.real(_xp.linalg.diagonal(c)))
    c = c / d[:, None] / d[None, :]
    if c.dtype.kind == "c":
        return _xp.clip(_xp.real(c), -1, 1) + 1j * _xp.clip(_xp.imag(c), -1, 1)
    return _xp.clip(c, -1, 1)


def bincount(x, weights=None, minlength=0):
    """NumPy's `np.bincount`: how often each value 0, 1, ... occurs in the 1-d non-negative
    integer x (the sum of its weights). The length, max(x) + 1, is read from x's values (an
    evaluation, as for nonzero). Counted through a sort and searchsorted."""
    x = as_array(x)
    if x.ndim != 1 or x.dtype.kind not in "iu":
        raise TypeError(f"bincount: x must be a 1-d integer array, got {x.ndim}-d {x.dtype}")
    if x.shape[0] and builtins.int(_xp.min(x)) < 0:
        raise ValueError("bincount: x must be non-negative")
    length = builtins.max(builtins.int(_xp.max(x)) + 1 if x.shape[0] else 0, minlength)
    order = _xp.argsort(x)
    xs = _xp.take(x, order)
    bins = _xp.arange(length, dtype=x.dtype, device=x.device)
    lo = _xp.searchsorted(xs, bins, side="left")
    hi = _xp.searchsorted(xs, bins, side="right")
    if weights is None:
        return hi - lo
    w = _xp.astype(as_array(weights, like=x), _xp.float64)      # NumPy sums weights as doubles
    cw = _xp.cumulative_sum(_xp.take(w, order), include_initial=True)
    return _xp.take(cw, hi) - _xp.take(cw, lo)
