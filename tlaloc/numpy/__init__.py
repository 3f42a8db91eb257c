"""tlaloc.numpy: NumPy's spellings over the standard namespace (as jax.numpy or CuPy).

    import tlaloc.numpy as tnp
    x = tnp.array([[1.0, 2.0], [3.0, 4.0]])
    y = tnp.concatenate([x, x.T]).cumsum(axis=0)
    z = tnp.einsum("ij,jk->ik", x, x)

Every function is a thin composition of tlaloc's standard functions, with NumPy's name and
signature (positional arguments where NumPy has them, `axis=None` meaning "flattened" where
NumPy means that, `ddof`, `out=`, ...), so it records, fuses, differentiates and runs on
every device like the rest of tlaloc. The names NumPy shares with the standard (`sin`,
`where`, `stack`, ...) are tlaloc's own. Arrays are tlaloc arrays: `out=` writes the result
into `out` (an `out[...] = result` update) and returns it. See docs/numpy-namespace.md.
"""
from __future__ import annotations

import builtins
import operator as _operator

import numpy as _np

import tlaloc as _xp
from tlaloc import (Array as ndarray, bfloat16, bool, can_cast,  # noqa: F401
                    complex64, complex128, e, empty, finfo, float16, float32, float64,
                    from_dlpack, full, iinfo, inf, int8, int16, int32, int64, isdtype, nan,
                    newaxis, ones, pi, result_type, uint8, uint16, uint32, uint64, zeros)
from tlaloc._api import array_methods as _m
from tlaloc._api._core import normalize_axis as _normalize_axis
from ._convert import as_array as _arr, is_scalar as _is_scalar
from ._einsum import einsum
from ._indices import diag_indices, indices, pad, tril_indices, triu_indices, unravel_index
from ._numerical import (angle, convolve, fmax, fmin, heaviside, interp, iscomplex, isreal,
                         logspace, select, sinc, trapezoid)
from ._statistics import (average, bincount, corrcoef, cov, median, nanmax, nanmean,
                          nanmedian, nanmin, nanprod, nanstd, nansum, nanvar, percentile, ptp,
                          quantile)
from . import fft, linalg  # noqa: F401


def __getattr__(name):
    if name == "random":        # tlaloc.random is imported on first use
        import importlib
        return importlib.import_module(".random", __name__)
    raise AttributeError(f"module 'tlaloc.numpy' has no attribute {name!r} (NumPy's name "
                         "is not implemented here; see docs/numpy-namespace.md)")


def _on_array(method):
    """NumPy's function form `np.f(a, ...)` of the method `a.f(...)` on any array_like."""
    def fn(a, *args, **kwargs):
        return method(a if type(a) is ndarray else _arr(a), *args, **kwargs)
    fn.__name__ = fn.__qualname__ = method.__name__
    fn.__doc__ = method.__doc__
    return fn


def _lifted(fn):
    """The standard's function, taking NumPy arrays, lists and scalars for its arrays as
    NumPy does (Python scalars beside an array stay scalars: they keep the array's dtype)."""
    def f(*args, **kwargs):
        if args and type(args[0]) is ndarray and (len(args) == 1 or type(args[1]) is ndarray
                                                   or type(args[1]) in _WEAK_SCALARS):
            return fn(*args, **kwargs)       # the common case, at the standard's cost
        like = next((a for a in args if isinstance(a, ndarray)), None)
        args = [_arr(a, like=like) if isinstance(a, _ARRAY_LIKES) else a for a in args]
        if like is None and args:
            args[0] = _arr(args[0])
        return fn(*args, **kwargs)
    f.__name__ = f.__qualname__ = fn.__name__
    f.__doc__ = fn.__doc__
    f.__wrapped__ = fn
    return f


_ARRAY_LIKES = (_np.ndarray, _np.generic, list, tuple)
_WEAK_SCALARS = (builtins.bool, builtins.int, builtins.float, builtins.complex)

# the standard's functions that NumPy 2 spells the same
_SHARED = """abs acos acosh add asin asinh atan atan2 atanh bitwise_and bitwise_invert
    bitwise_left_shift bitwise_or bitwise_right_shift bitwise_xor broadcast_to ceil conj
    copysign cos cosh divide empty_like equal exp expm1 floor floor_divide full_like greater
    greater_equal hypot imag isfinite isinf isnan less less_equal log log1p log2 log10
    logaddexp logical_and logical_not logical_or logical_xor matmul matrix_transpose maximum
    minimum moveaxis multiply negative nextafter not_equal ones_like permute_dims positive pow
    real reciprocal remainder sign signbit sin sinh sqrt square subtract take_along_axis tan
    tanh tensordot tril triu trunc unstack vecdot zeros_like""".split()
globals().update({name: _lifted(getattr(_xp, name)) for name in _SHARED})


# NumPy's other names for the standard's functions
absolute, power, conjugate = abs, pow, conj
arccos, arccosh, arcsin, arcsinh, arctan, arctan2, arctanh = acos, acosh, asin, asinh, atan, atan2, atanh
invert = bitwise_not = bitwise_invert
left_shift, right_shift = bitwise_left_shift, bitwise_right_shift
mod, true_divide = remainder, divide
float_, double, single, int_, bool_, complex_ = float64, float64, float32, int64, bool, complex128
euler_gamma = 0.5772156649015329


def _each(arrays):
    return [_arr(a) for a in arrays]


def stack(arrays, axis=0, out=None, *, dtype=None):
    """NumPy's `np.stack` (array_likes)."""
    return _m.store(_xp.stack([_arr(a, dtype) for a in arrays], axis=axis), out, "stack")


def concat(arrays, /, *, axis=0):
    """The standard's concat, of array_likes."""
    return _xp.concat(_each(arrays), axis=axis)


def broadcast_arrays(*args):
    """NumPy's `np.broadcast_arrays`: a tuple."""
    return tuple(_xp.broadcast_arrays(*_each(args)))


broadcast_shapes = _xp.broadcast_shapes


def meshgrid(*xi, indexing="xy", copy=True, sparse=False):
    """NumPy's `np.meshgrid` (dense grids only)."""
    if sparse:
        raise ValueError("meshgrid: sparse=True is not supported")
    return tuple(_xp.meshgrid(*_each(xi), indexing=indexing))


# ----------------------------------------------------------------------------- creation

def array(object, dtype=None, *, copy=True, order="K", ndmin=0):
    """NumPy's `np.array`: a new array (a copy unless copy=False), with at least `ndmin` axes."""
    out = _xp.asarray(object, dtype=dtype, copy=copy if copy else None)
    if out.ndim < ndmin:
        out = _xp.reshape(out, (1,) * (ndmin - out.ndim) + out.shape)
    return out


def asarray(a, dtype=None, order=None, *, device=None, copy=None):
    """NumPy's `np.asarray`."""
    return _xp.asarray(a, dtype=dtype, device=device, copy=copy)


asanyarray = ascontiguousarray = asarray


def copy(a, order="K"):
    """NumPy's `np.copy`: a new array with a's value."""
    return _xp.asarray(a, copy=True)


def arange(start, stop=None, step=None, dtype=None, *, device=None):
    """NumPy's `np.arange([start,] stop[, step])`."""
    return _xp.arange(start, stop, 1 if step is None else step, dtype=dtype, device=device)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
             device=None):
    """NumPy's `np.linspace` for scalar bounds (num defaults to 50)."""
    if axis != 0:
        raise ValueError("linspace: scalar bounds only (axis=0); stack the results for array bounds")
    out = _xp.linspace(start, stop, num, dtype=dtype, device=device, endpoint=endpoint)
    if not retstep:
        return out
    divisions = (num - 1) if endpoint else num
    return out, (stop - start) / divisions if divisions > 0 else float("nan")


def eye(N, M=None, k=0, dtype=None, *, device=None):
    """NumPy's `np.eye(N, M=None, k=0)`."""
    return _xp.eye(N, M, k=k, dtype=dtype, device=device)


def identity(n, dtype=None, *, device=None):
    """NumPy's `np.identity(n)`."""
    return _xp.eye(n, dtype=dtype, device=device)


def diag(v, k=0):
    """NumPy's `np.diag`: the k-th diagonal of a 2-d array, or a 2-d array with a 1-d `v`
    on its k-th diagonal."""
    v = _arr(v)
    if v.ndim == 2:
        return diagonal(v, offset=k)
    if v.ndim != 1:
        raise ValueError(f"diag: v must be 1-d or 2-d, got {v.ndim}-d")
    n = v.shape[0] + builtins.abs(k)
    i = _xp.arange(v.shape[0], device=v.device)
    out = _xp.zeros((n, n), dtype=v.dtype, device=v.device)
    out[i + builtins.max(-k, 0), i + builtins.max(k, 0)] = v
    return out


def diagonal(a, offset=0, axis1=0, axis2=1):
    """NumPy's `np.diagonal`: the diagonal of axes axis1, axis2, as the last axis."""
    a = _arr(a)
    return _xp.linalg.diagonal(_xp.moveaxis(a, (axis1, axis2), (-2, -1)), offset=offset)


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """NumPy's `np.trace`: the sum of `diagonal(a, offset, axis1, axis2)`."""
    return _m.store(_xp.sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype), out, "trace")


# ----------------------------------------------------------------------------- manipulation

def concatenate(arrays, axis=0, out=None, *, dtype=None):
    """NumPy's `np.concatenate`: axis=None joins the flattened arrays."""
    arrays = [_arr(a, dtype) for a in arrays]
    if axis is None:
        arrays, axis = [_xp.reshape(a, (-1,)) for a in arrays], 0
    return _m.store(_xp.concat(arrays, axis=axis), out, "concatenate")


def _at_least(n, arys):
    out = []
    for a in arys:
        a = _arr(a)
        if a.ndim < n:
            # NumPy's placement: () -> (1, 1, 1), (N,) -> (1, N) -> (1, N, 1), (M, N) -> (M, N, 1)
            if a.ndim == 0:
                shape = (1,) * n
            elif a.ndim == 1:
                shape = (1,) + a.shape + (1,) * (n - 2)
            else:
                shape = a.shape + (1,)
            a = _xp.reshape(a, shape)
        out.append(a)
    return out[0] if len(out) == 1 else tuple(out)


def atleast_1d(*arys):
    """NumPy's `np.atleast_1d`."""
    return _at_least(1, arys)


def atleast_2d(*arys):
    """NumPy's `np.atleast_2d`: (N,) becomes (1, N)."""
    return _at_least(2, arys)


def atleast_3d(*arys):
    """NumPy's `np.atleast_3d`: (N,) becomes (1, N, 1), (M, N) becomes (M, N, 1)."""
    return _at_least(3, arys)


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def vstack(tup, *, dtype=None):
    """NumPy's `np.vstack`: rows (1-d arrays become rows)."""
    return _xp.concat([_arr(a, dtype) for a in _as_tuple(atleast_2d(*tup))], axis=0)


def hstack(tup, *, dtype=None):
    """NumPy's `np.hstack`: along axis 1 (axis 0 for 1-d arrays)."""
    arrays = [_arr(a, dtype) for a in _as_tuple(atleast_1d(*tup))]
    return _xp.concat(arrays, axis=0 if arrays[0].ndim == 1 else 1)


def dstack(tup):
    """NumPy's `np.dstack`: along the third axis."""
    return _xp.concat(list(_as_tuple(atleast_3d(*tup))), axis=2)


def column_stack(tup):
    """NumPy's `np.column_stack`: 1-d arrays become columns."""
    arrays = [_arr(a) for a in tup]
    return _xp.concat([_xp.reshape(a, (-1, 1)) if a.ndim < 2 else a for a in arrays], axis=1)


def _split_points(name, n, indices_or_sections, even):
    if isinstance(indices_or_sections, (builtins.int, ndarray)) and \
            getattr(indices_or_sections, "ndim", 0) == 0:
        sections = _operator.index(indices_or_sections)
        if sections <= 0:
            raise ValueError(f"{name}: the number of sections must be positive, got {sections}")
        if even and n % sections:
            raise ValueError(f"{name}: an axis of {n} does not split into {sections} equal sections")
        size, extra = divmod(n, sections)
        points = [0]
        for i in range(sections):
            points.append(points[-1] + size + (1 if i < extra else 0))
        return points
    return [0] + [builtins.min(builtins.max(_operator.index(i) + (n if i < 0 else 0), 0), n)
                  for i in indices_or_sections] + [n]


def split(ary, indices_or_sections, axis=0):
    """NumPy's `np.split`: equal sections (ValueError if they are not), or at indices."""
    return _split("split", ary, indices_or_sections, axis, even=True)


def array_split(ary, indices_or_sections, axis=0):
    """NumPy's `np.array_split`: like split, the first sections one longer where uneven."""
    return _split("array_split", ary, indices_or_sections, axis, even=False)


def _split(name, ary, indices_or_sections, axis, even):
    a = _arr(ary)
    axis = _normalize_axis(name, axis, a.ndim)
    points = _split_points(name, a.shape[axis], indices_or_sections, even)
    lead = (slice(None),) * axis
    return [a[lead + (slice(lo, builtins.max(lo, hi)),)] for lo, hi in zip(points, points[1:])]


def transpose(a, axes=None):
    """NumPy's `np.transpose`: axes reversed, or permuted by `axes`."""
    return _m.transpose(_arr(a), *(() if axes is None else (tuple(axes),)))


def reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    """NumPy's `np.reshape(a, shape, order="C")` (an int or a sequence; -1 infers one axis)."""
    if shape is None:
        shape = newshape
    return _m.reshape(_arr(a), shape, order=order, copy=copy)


def expand_dims(a, axis):
    """NumPy's `np.expand_dims` (an int or a tuple of ints)."""
    return _xp.expand_dims(_arr(a), axis=axis)


def squeeze(a, axis=None):
    """NumPy's `np.squeeze`: every axis of size 1 when axis is None."""
    return _m.squeeze(_arr(a), axis)


def flip(m, axis=None):
    """NumPy's `np.flip`."""
    return _xp.flip(_arr(m), axis=axis)


def fliplr(m):
    """NumPy's `np.fliplr`: columns reversed."""
    return _xp.flip(_arr(m), axis=1)


def flipud(m):
    """NumPy's `np.flipud`: rows reversed."""
    return _xp.flip(_arr(m), axis=0)


def roll(a, shift, axis=None):
    """NumPy's `np.roll`."""
    return _xp.roll(_arr(a), shift, axis=axis)


def tile(A, reps):
    """NumPy's `np.tile` (reps an int or a tuple)."""
    return _xp.tile(_arr(A), _as_tuple(reps) if not isinstance(reps, list) else tuple(reps))


def repeat(a, repeats, axis=None):
    """NumPy's `np.repeat`: over the flattened array when axis is None."""
    return _xp.repeat(_arr(a), repeats, axis=axis)


def where(condition, x=None, y=None):
    """NumPy's `np.where(condition, x, y)`, and `np.where(condition)` (= nonzero)."""
    if x is None and y is None:
        return nonzero(condition)
    if x is None or y is None:
        raise ValueError("where: give both x and y, or neither")
    cond = _arr(condition)
    if cond.dtype is not _xp.bool:
        cond = cond != 0
    if not _is_scalar(x) or _is_scalar(y):     # the standard's where takes one scalar at most
        x = _arr(x, like=cond)
    return _xp.where(cond, x, y if _is_scalar(y) else _arr(y, like=cond))


def nonzero(a):
    """NumPy's `np.nonzero`: a tuple of index arrays."""
    return _xp.nonzero(_arr(a))


def argwhere(a):
    """NumPy's `np.argwhere`: the indices of the nonzero elements, one row each."""
    a = _arr(a)
    if a.ndim == 0:        # NumPy: a 0-d array acts as 1-d, with no index columns
        return _xp.zeros((builtins.int(builtins.bool(a)), 0), dtype=_xp.int64, device=a.device)
    return _xp.stack(_xp.nonzero(a), axis=-1)


def flatnonzero(a):
    """NumPy's `np.flatnonzero`: indices of the nonzero elements of the flattened array."""
    return _xp.nonzero(_xp.reshape(_arr(a), (-1,)))[0]


def take(a, indices, axis=None, out=None, mode="raise"):
    """NumPy's `np.take`: over the flattened array when axis is None; any shape of indices."""
    return _m.take(_arr(a), indices, axis, out, mode)


def swapaxes(a, axis1, axis2):
    """NumPy's `np.swapaxes`."""
    return _m.swapaxes(_arr(a), axis1, axis2)


def ravel(a, order="C"):
    """NumPy's `np.ravel`."""
    return _m.ravel(_arr(a), order)


def ndim(a):
    """NumPy's `np.ndim`."""
    return _arr(a).ndim


def shape(a):
    """NumPy's `np.shape`."""
    return _arr(a).shape


def size(a, axis=None):
    """NumPy's `np.size`: of the array, or of one axis."""
    a = _arr(a)
    return a.size if axis is None else a.shape[axis]


# ----------------------------------------------------------------------------- reductions

sum = _on_array(_m.sum)
prod = _on_array(_m.prod)
mean = _on_array(_m.mean)
std = _on_array(_m.std)
var = _on_array(_m.var)
min = amin = _on_array(_m.min)
max = amax = _on_array(_m.max)
all = _on_array(_m.all)
any = _on_array(_m.any)
argmax = _on_array(_m.argmax)
argmin = _on_array(_m.argmin)
cumsum = _on_array(_m.cumsum)
cumprod = _on_array(_m.cumprod)
clip = _on_array(_m.clip)
round = around = _on_array(_m.round)


def count_nonzero(a, axis=None, *, keepdims=False):
    """NumPy's `np.count_nonzero`."""
    return _xp.count_nonzero(_arr(a), axis=axis, keepdims=keepdims)


def diff(a, n=1, axis=-1, prepend=None, append=None):
    """NumPy's `np.diff(a, n, axis)` (n positional)."""
    return _xp.diff(_arr(a), axis=axis, n=n, prepend=prepend, append=append)


# ----------------------------------------------------------------------------- products

def dot(a, b, out=None):
    """NumPy's `np.dot`: a product for scalar or 0-d operands, the inner product of 1-d
    ones, matmul of 2-d ones, and otherwise the sum over a's last axis and b's second-to-last."""
    if _is_scalar(a):
        a, b = b, a              # a product: commutes
    a = _arr(a)
    return _m.dot(a, b if _is_scalar(b) else _arr(b, like=a), out)


def vdot(a, b):
    """NumPy's `np.vdot`: the inner product of the flattened arrays, a conjugated."""
    a, b = _xp.reshape(_arr(a), (-1,)), _xp.reshape(_arr(b), (-1,))
    return _xp.vecdot(a, b)       # vecdot conjugates its first argument


def inner(a, b):
    """NumPy's `np.inner`: the sum over both last axes (no conjugation)."""
    if _is_scalar(a):
        a, b = b, a              # a product: commutes
    a = _arr(a)
    if _is_scalar(b):
        return a * b
    b = _arr(b, like=a)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    return _xp.tensordot(a, b, axes=((a.ndim - 1,), (b.ndim - 1,)))


def outer(a, b, out=None):
    """NumPy's `np.outer` of the flattened arrays."""
    a, b = _xp.reshape(_arr(a), (-1, 1)), _xp.reshape(_arr(b), (1, -1))
    return _m.store(a * b, out, "outer")


def cross(a, b, axis=-1):
    """NumPy's `np.cross` of 3-vectors along `axis`."""
    return _xp.linalg.cross(_arr(a), _arr(b), axis=axis)


def kron(a, b):
    """NumPy's `np.kron`: the Kronecker product."""
    a = _arr(a)
    b = _arr(b, like=a)
    nd = builtins.max(a.ndim, b.ndim)
    a = _xp.reshape(a, (1,) * (nd - a.ndim) + a.shape)
    b = _xp.reshape(b, (1,) * (nd - b.ndim) + b.shape)
    # a[i, 1, j, 1] * b[1, k, 1, l] interleaved, then each pair of axes merged
    ea = _xp.reshape(a, tuple(x for n in a.shape for x in (n, 1)))
    eb = _xp.reshape(b, tuple(x for n in b.shape for x in (1, n)))
    return _xp.reshape(ea * eb, tuple(m * n for m, n in zip(a.shape, b.shape)))


# ----------------------------------------------------------------------------- comparisons

def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """NumPy's `np.isclose`: |a - b| <= atol + rtol * |b|, infinities close to themselves."""
    a = _arr(a)
    b = _arr(b, like=a)
    dtype = _xp.result_type(a, b)
    if dtype.kind in "iub":                    # NumPy compares integers as floats
        dtype = _xp.float64
    a, b = _xp.astype(a, dtype), _xp.astype(b, dtype)
    finite = _xp.isfinite(a) & _xp.isfinite(b)
    close = _xp.abs(a - b) <= atol + rtol * _xp.abs(b)
    out = _xp.where(finite, close, a == b)
    if equal_nan:
        out = out | (_xp.isnan(a) & _xp.isnan(b))
    return out


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """NumPy's `np.allclose`: a Python bool (evaluates)."""
    return builtins.bool(_xp.all(isclose(a, b, rtol, atol, equal_nan)))


def array_equal(a1, a2, equal_nan=False):
    """NumPy's `np.array_equal`: same shape and elements (a Python bool; evaluates)."""
    a1, a2 = _arr(a1), _arr(a2)
    if a1.shape != a2.shape:
        return False
    same = a1 == a2
    if equal_nan:
        same = same | (_xp.isnan(a1) & _xp.isnan(a2))
    return builtins.bool(_xp.all(same))


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """NumPy's `np.nan_to_num`: NaN -> nan, +inf -> posinf (the largest finite value by
    default), -inf -> neginf; each part of a complex number separately."""
    x = _arr(x)
    if x.dtype.kind == "c":
        parts = [nan_to_num(p, nan=nan, posinf=posinf, neginf=neginf)
                 for p in (_xp.real(x), _xp.imag(x))]
        return parts[0] + 1j * parts[1]         # the Python 1j keeps the parts' precision
    if x.dtype.kind != "f":
        return _xp.asarray(x, copy=True)
    big = _xp.finfo(x.dtype).max
    x = _xp.where(_xp.isnan(x), nan, x)
    x = _xp.where(x == _xp.inf, big if posinf is None else posinf, x)
    return _xp.where(x == -_xp.inf, -big if neginf is None else neginf, x)


def deg2rad(x):
    """NumPy's `np.deg2rad` (`np.radians`)."""
    return _arr(x) * (pi / 180)


def rad2deg(x):
    """NumPy's `np.rad2deg` (`np.degrees`)."""
    return _arr(x) * (180 / pi)


radians, degrees = deg2rad, rad2deg


def exp2(x):
    """NumPy's `np.exp2`: 2 ** x."""
    x = _arr(x)
    return _xp.pow(2.0 if x.dtype.kind in "fc" else 2, x)


# ----------------------------------------------------------------------------- sorting, sets

def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    """NumPy's `np.sort` (always stable): over the flattened array when axis is None."""
    a = _arr(a)
    if axis is None:
        a, axis = _xp.reshape(a, (-1,)), 0
    return _xp.sort(a, axis=axis)


argsort = _on_array(_m.argsort)


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
           *, equal_nan=True):
    """NumPy's `np.unique` of the flattened array (axis=None only): the sorted unique
    values, and on request the first indices, the inverse (shaped as `ar`) and the counts.
    With equal_nan (NumPy's default) the NaNs count as one value, which the standard's
    unique_* functions keep apart."""
    if axis is not None:
        raise ValueError("unique: axis=None only")
    a = _arr(ar)
    u = _xp.unique_all(a)
    values, indices, inverse, counts = u.values, u.indices, u.inverse_indices, u.counts
    n_nan = builtins.int(_xp.sum(_xp.isnan(values))) if equal_nan and a.dtype.kind in "fc" else 0
    if n_nan > 1:                  # sorted last, in order of appearance: keep the first
        first = values.shape[0] - n_nan
        values, indices = values[:first + 1], indices[:first + 1]
        counts = _xp.concat([counts[:first], _xp.sum(counts[first:], keepdims=True)])
        inverse = _xp.minimum(inverse, first)
    out = [values] + [r for r, wanted in ((indices, return_index), (inverse, return_inverse),
                                           (counts, return_counts)) if wanted]
    return out[0] if len(out) == 1 else tuple(out)


def searchsorted(a, v, side="left", sorter=None):
    """NumPy's `np.searchsorted`."""
    a = _arr(a)
    v = _arr(v, like=a)
    out = _xp.searchsorted(a, _xp.reshape(v, (-1,)) if v.ndim != 1 else v, side=side,
                           sorter=None if sorter is None else _arr(sorter, like=a))
    return _xp.reshape(out, v.shape)


def isin(element, test_elements, assume_unique=False, invert=False):
    """NumPy's `np.isin`."""
    element = _arr(element)
    return _xp.isin(element, _arr(test_elements, like=element), invert=invert)
