"""NumPy's numerical helpers over the standard's functions: convolution, interpolation,
integration, and elementwise functions the standard does not have."""
from __future__ import annotations

import builtins

import numpy as _np

import tlaloc as _xp

from ._convert import as_array, is_scalar


def _floating(x):
    return x if x.dtype.kind in "fc" else _xp.astype(x, _xp.float64)


def convolve(a, v, mode="full"):
    """NumPy's `np.convolve` of 1-d arrays (modes "full", "same", "valid"): each output is
    one row of a window matrix of the zero-padded longer operand times the reversed shorter."""
    a, v = as_array(a), as_array(v)
    if a.ndim != 1 or v.ndim != 1:
        raise ValueError(f"convolve: a and v must be 1-d, got {a.ndim}-d and {v.ndim}-d")
    if a.shape[0] == 0 or v.shape[0] == 0:
        raise ValueError("convolve: a and v must not be empty")
    if v.shape[0] > a.shape[0]:
        a, v = v, a                 # a commutative product: the longer one is windowed
    n, m = a.shape[0], v.shape[0]
    ranges = {"full": (0, n + m - 1), "same": ((m - 1) // 2, (m - 1) // 2 + n),
              "valid": (m - 1, n)}
    if mode not in ranges:
        raise ValueError(f"convolve: mode must be 'full', 'same' or 'valid', got {mode!r}")
    dtype = _xp.result_type(a, v)
    a, v = _xp.astype(a, dtype), _xp.astype(v, dtype)
    zeros = _xp.zeros(m - 1, dtype=dtype, device=a.device)
    padded = _xp.concat([zeros, a, zeros])
    start, stop = ranges[mode]
    # window k holds padded[k : k + m]: the positions are host metadata
    where = _np.arange(start, stop)[:, None] + _np.arange(m)[None, :]
    windows = _xp.reshape(_xp.take(padded, _xp.asarray(where.reshape(-1), device=a.device)),
                          where.shape)
    return windows @ _xp.flip(v)


def interp(x, xp, fp, left=None, right=None, period=None):
    """NumPy's `np.interp`: piecewise-linear through (xp, fp) (xp increasing), `left` /
    `right` (fp's ends by default) outside."""
    if period is not None:
        raise ValueError("interp: period is not supported")
    x = as_array(x)
    xp_, fp_ = as_array(xp, like=x), as_array(fp, like=x)
    if xp_.ndim != 1 or fp_.shape != xp_.shape or xp_.shape[0] == 0:
        raise ValueError(f"interp: xp and fp must be 1-d of one length, got {xp_.shape} and {fp_.shape}")
    # NumPy computes in float64 (complex128), whatever the inputs' precision
    fp_ = _xp.astype(fp_, _xp.complex128 if fp_.dtype.kind == "c" else _xp.float64)
    xs = _xp.astype(xp_, _xp.float64)
    xv = _xp.astype(x, _xp.float64)
    n = xs.shape[0]
    j = _xp.clip(_xp.searchsorted(xs, xv, side="right") - 1, 0, builtins.max(n - 2, 0))
    j1 = _xp.minimum(j + 1, n - 1)
    x0, x1 = _xp.take(xs, j), _xp.take(xs, j1)
    y0, y1 = _xp.take(fp_, j), _xp.take(fp_, j1)
    slope = (y1 - y0) / _xp.where(x1 == x0, 1.0, x1 - x0)
    y = _xp.where(xv == x1, y1, slope * (xv - x0) + y0)
    y = _xp.where(xv < xs[0], fp_[0] if left is None else left, y)
    return _xp.where(xv > xs[-1], fp_[-1] if right is None else right, y)


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """NumPy's `np.trapezoid`: the trapezoidal rule along `axis`, at points x or spacing dx."""
    y = _xp.moveaxis(_floating(as_array(y)), axis, -1)
    mids = (y[..., 1:] + y[..., :-1]) / 2
    if x is None:
        return _xp.sum(mids, axis=-1) * dx
    xv = as_array(x, like=y)
    d = _xp.diff(xv if xv.ndim == 1 else _xp.moveaxis(xv, axis, -1), axis=-1)
    return _xp.sum(mids * d, axis=-1)


def sinc(x):
    """NumPy's `np.sinc`: sin(pi x) / (pi x), 1 at 0."""
    x = as_array(x)
    y = _xp.pi * _xp.where(x == 0, 1.0e-20, x)
    return _xp.sin(y) / y


def angle(z, deg=False):
    """NumPy's `np.angle`: the argument of z (in degrees with deg=True)."""
    z = as_array(z)
    if z.dtype.kind == "c":
        a = _xp.atan2(_xp.imag(z), _xp.real(z))
    else:
        z = _floating(z)
        a = _xp.atan2(_xp.zeros_like(z), z)
    return a * (180 / _xp.pi) if deg else a


def _like(x2, x1):
    """The second operand: a real Python scalar as an array of x1's dtype (NumPy 2 keeps a
    scalar weak), anything else as an array on x1's device."""
    if is_scalar(x2) and not isinstance(x2, complex) and x1.dtype.kind in "fc":
        return _xp.full_like(x1, x2)
    return as_array(x2, like=x1)


def heaviside(x1, x2):
    """NumPy's `np.heaviside`: 0 below 0, x2 at 0, 1 above (NaN stays NaN)."""
    x1 = _floating(as_array(x1))
    x2 = _like(x2, x1)
    step = _xp.where(x1 > 0, _xp.ones_like(x1), _xp.zeros_like(x1))
    step = _xp.where(x1 == 0, x2, step)
    return _xp.where(_xp.isnan(x1), x1, step)


def _nan_ignoring(name, pick):
    def fn(x1, x2):
        x1 = as_array(x1)
        x2 = _like(x2, x1)
        both = pick(x1, x2)
        if both.dtype.kind not in "fc":
            return both
        return _xp.where(_xp.isnan(x1), x2, _xp.where(_xp.isnan(x2), x1, both))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"NumPy's `np.{name}`: the {name[1:]}imum, ignoring a NaN operand."
    return fn


fmax = _nan_ignoring("fmax", _xp.maximum)
fmin = _nan_ignoring("fmin", _xp.minimum)


def select(condlist, choicelist, default=0):
    """NumPy's `np.select`: from the first choice whose condition holds, else `default`; the
    result's dtype is that of the choices and default together."""
    if len(condlist) != len(choicelist):
        raise ValueError("select: condlist and choicelist must have the same length")
    if not condlist:
        raise ValueError("select: condlist is empty")
    conds = [as_array(c) for c in condlist]
    choices = [c if is_scalar(c) else as_array(c, like=conds[0]) for c in choicelist]
    dtype = _xp.result_type(*choices, default) if not builtins.all(map(is_scalar, choices)) \
        else _xp.asarray(choices[0]).dtype
    out = _xp.asarray(default, dtype=dtype, device=conds[0].device)
    for cond, choice in zip(conds[::-1], choices[::-1]):
        out = _xp.where(cond, choice, out)
    return out


def isreal(x):
    """NumPy's `np.isreal`: whether each element's imaginary part is 0."""
    x = as_array(x)
    return _xp.imag(x) == 0 if x.dtype.kind == "c" else _xp.ones_like(x, dtype=_xp.bool)


def iscomplex(x):
    """NumPy's `np.iscomplex`: whether each element's imaginary part is not 0."""
    return ~isreal(x)


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0, *,
             device=None):
    """NumPy's `np.logspace`: base ** linspace(start, stop, num)."""
    if axis != 0:
        raise ValueError("logspace: scalar bounds only (axis=0)")
    exponents = _xp.linspace(start, stop, num, endpoint=endpoint, device=device)
    out = _xp.pow(base, exponents)
    return out if dtype is None else _xp.astype(out, dtype)
