"""NumPy's array methods on the Array (`x.sum()`, `x.reshape(3, 2)`, `x.astype(...)`, ...),
with NumPy's signatures, as thin compositions of the standard's functions.

The standard puts these operations in the namespace only; code ported from NumPy calls them
as methods. `tlaloc/_operators.py` installs every function of `METHODS` onto Array, and
`tlaloc.numpy` builds its functions of the same names on them. `out=` is NumPy's: the
result is written into `out` (an `out[...] = result` update, which the arrays sharing out's
storage see, as in NumPy) and `out` is returned.
"""
from __future__ import annotations

import builtins
import operator

from .. import _dtypes as dt
from .._array import Array
from . import creation as _creation
from . import elementwise as _ew
from . import indexing as _indexing
from . import linear_algebra as _linalg
from . import manipulation as _manip
from . import searching as _search
from . import sorting as _sorting
from . import statistical as _stat
from . import utility as _util
from ._core import normalize_axis


def store(result, out, name):
    """NumPy's `out=`: `result` cast to out's dtype and written into it (out is returned)."""
    if out is None:
        return result
    if not isinstance(out, Array):
        raise TypeError(f"{name}: out must be a tlaloc array, got {type(out).__name__}")
    if out.shape != result.shape:
        raise ValueError(f"{name}: out has shape {out.shape}, the result has {result.shape}")
    out[...] = result if result.dtype is out.dtype else _creation.astype(result, out.dtype)
    return out


def _with_dtype(x, dtype, name):
    return x if dtype is None else _creation.astype(x, dt.canonicalize(dtype, name))


def _reduction(name, fn, *, takes_dtype):
    if takes_dtype:
        def method(self, axis=None, dtype=None, out=None, keepdims=False):
            return store(fn(self, axis=axis, dtype=dtype, keepdims=keepdims), out, name)
    else:
        def method(self, axis=None, out=None, keepdims=False):
            return store(fn(self, axis=axis, keepdims=keepdims), out, name)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = (f"NumPy's `x.{name}(...)`: tlaloc.{fn.__name__}(x, axis=axis, "
                      f"{'dtype=dtype, ' if takes_dtype else ''}keepdims=keepdims).")
    return method


sum = _reduction("sum", _stat.sum, takes_dtype=True)
prod = _reduction("prod", _stat.prod, takes_dtype=True)
min = _reduction("min", _stat.min, takes_dtype=False)
max = _reduction("max", _stat.max, takes_dtype=False)
all = _reduction("all", _util.all, takes_dtype=False)
any = _reduction("any", _util.any, takes_dtype=False)


def _arg_reduction(name, fn):
    def method(self, axis=None, out=None, *, keepdims=False):
        if axis is None and keepdims:
            # NumPy keeps every axis (as size 1) around the index into the flattened array
            flat = fn(_manip.reshape(self, (-1,)), axis=0)
            return store(_manip.reshape(flat, (1,) * self.ndim), out, name)
        return store(fn(self, axis=axis, keepdims=keepdims), out, name)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"NumPy's `x.{name}(axis)`: an index into the flattened array when axis is None."
    return method


argmax = _arg_reduction("argmax", _search.argmax)
argmin = _arg_reduction("argmin", _search.argmin)


def mean(self, axis=None, dtype=None, out=None, keepdims=False):
    """NumPy's `x.mean(...)`, computed in `dtype` when given."""
    return store(_stat.mean(_with_dtype(self, dtype, "mean"), axis=axis, keepdims=keepdims),
                 out, "mean")


def _spread(name, fn):
    def method(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        x = _with_dtype(self, dtype, name)
        return store(fn(x, axis=axis, correction=ddof, keepdims=keepdims), out, name)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"NumPy's `x.{name}(..., ddof=)`: tlaloc.{name} with correction=ddof."
    return method


std = _spread("std", _stat.std)
var = _spread("var", _stat.var)


def _cumulative(name, fn):
    def method(self, axis=None, dtype=None, out=None):
        x, axis = _flat_or(self, axis)
        return store(fn(x, axis=axis, dtype=dtype), out, name)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = (f"NumPy's `x.{name}(axis)`: over the flattened array when axis is None "
                      f"(tlaloc.{fn.__name__}).")
    return method


cumsum = _cumulative("cumsum", _stat.cumulative_sum)
cumprod = _cumulative("cumprod", _stat.cumulative_prod)


def _order(name, order, allowed=("C", "F")):
    if order not in allowed:
        raise ValueError(f"{name}: order must be one of {allowed}, got {order!r}")
    return order


def _reversed_axes(x):
    return _manip.permute_dims(x, tuple(range(x.ndim - 1, -1, -1)))


def _shape_arguments(name, shape):
    if len(shape) == 1 and not isinstance(shape[0], (builtins.int, Array)):
        shape = shape[0]         # x.reshape((2, 3)) as well as x.reshape(2, 3)
    try:
        return tuple(operator.index(n) for n in shape) if not isinstance(shape, builtins.int) \
            else (shape,)
    except TypeError:
        raise TypeError(f"{name}: the shape must be integers, got {shape!r}") from None


def reshape(self, *shape, order="C", copy=None):
    """NumPy's `x.reshape(2, 3)` or `x.reshape((2, 3))`; order="F" fills in column-major order."""
    shape = _shape_arguments("reshape", shape)
    if _order("reshape", order) == "F":
        return _reversed_axes(_manip.reshape(_reversed_axes(self), shape[::-1], copy=copy))
    return _manip.reshape(self, shape, copy=copy)


def ravel(self, order="C"):
    """NumPy's `x.ravel()`: the elements as a 1-d array, in row-major order (or "F")."""
    if _order("ravel", order) == "F":
        return _manip.reshape(_reversed_axes(self), (-1,))
    return _manip.reshape(self, (-1,))


def flatten(self, order="C"):
    """NumPy's `x.flatten()`: a 1-d copy of the elements."""
    return _manip.reshape(ravel(self, order), (-1,), copy=True)


def transpose(self, *axes):
    """NumPy's `x.transpose()` (axes reversed), `x.transpose(1, 0, 2)` or `x.transpose((1, 0, 2))`."""
    if not axes or axes == (None,):
        return _reversed_axes(self)
    if len(axes) == 1 and not isinstance(axes[0], builtins.int):
        axes = tuple(axes[0])
    return _manip.permute_dims(self, axes)


def swapaxes(self, axis1, axis2):
    """NumPy's `x.swapaxes(i, j)`."""
    i, j = normalize_axis("swapaxes", axis1, self.ndim), normalize_axis("swapaxes", axis2, self.ndim)
    perm = list(range(self.ndim))
    perm[i], perm[j] = j, i
    return _manip.permute_dims(self, tuple(perm))


def squeeze(self, axis=None):
    """NumPy's `x.squeeze()`: every axis of size 1 when axis is None."""
    if axis is None:
        axis = tuple(i for i, n in enumerate(self.shape) if n == 1)
    return _manip.squeeze(self, axis)


def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
    """NumPy's `x.astype(dtype)`; `order` and `subok` have no effect (tlaloc arrays have no
    memory layout nor subclasses); casting="unsafe" only."""
    _order("astype", order, ("K", "A", "C", "F"))
    if casting != "unsafe":
        raise ValueError(f"astype: only casting='unsafe' (NumPy's default) is supported, "
                         f"got {casting!r}; check with tlaloc.can_cast")
    return _creation.astype(self, dt.canonicalize(dtype, "astype"), copy=copy)


def copy(self, order="K"):
    """NumPy's `x.copy()`: a new array with the same value."""
    _order("copy", order, ("K", "A", "C", "F"))
    return _creation.asarray(self, copy=True)


def clip(self, min=None, max=None, out=None):
    """NumPy's `x.clip(min, max)`."""
    return store(_ew.clip(self, min, max), out, "clip")


def round(self, decimals=0, out=None):
    """NumPy's `x.round(decimals)`: to the nearest multiple of 10**-decimals, halves to even
    (as NumPy: scaled, rounded, scaled back, so 0.285 -> 0.28 where 0.285 is below)."""
    decimals = operator.index(decimals)
    if self.dtype.kind in dt.INTEGER_KINDS or self.dtype is dt.bool:
        result = self if decimals >= 0 else _round_integers(self, 10 ** -decimals)
        return store(_creation.asarray(result, copy=True), out, "round")
    if decimals == 0:
        return store(_ew.round(self), out, "round")
    scale = 10.0 ** builtins.abs(decimals)
    if decimals > 0:
        return store(_ew.round(self * scale) / scale, out, "round")
    return store(_ew.round(self / scale) * scale, out, "round")


def _round_integers(x, step):
    """x rounded to a multiple of `step`, halves to the even multiple (NumPy's integer round)."""
    below = x - _ew.remainder(x, step)            # floor to a multiple
    rest = x - below
    up = (2 * rest > step) | ((2 * rest == step) & (_ew.remainder(below // step, 2) == 1))
    return _search.where(up, below + step, below)


def conj(self):
    """NumPy's `x.conj()`."""
    return _ew.conj(self)


def nonzero(self):
    """NumPy's `x.nonzero()`: a tuple of index arrays."""
    return _search.nonzero(self)


def _flat_or(self, axis):
    """NumPy's axis=None: the flattened array along axis 0."""
    return (_manip.reshape(self, (-1,)), 0) if axis is None else (self, axis)


def argsort(self, axis=-1, kind=None, order=None, *, stable=None):
    """NumPy's `x.argsort()` (always stable; flattened for axis=None)."""
    x, axis = _flat_or(self, axis)
    return _sorting.argsort(x, axis=axis)


def sort(self, axis=-1, kind=None, order=None, *, stable=None):
    """NumPy's in-place `x.sort()`: x (and the arrays that share its storage) become
    sorted along `axis` (always stable). Returns None, as NumPy."""
    self[...] = _sorting.sort(self, axis=axis)


def fill(self, value):
    """NumPy's in-place `x.fill(value)`."""
    self[...] = value


def repeat(self, repeats, axis=None):
    """NumPy's `x.repeat(repeats, axis)` (flattened for axis=None)."""
    return _manip.repeat(self, repeats, axis=axis)


def take(self, indices, axis=None, out=None, mode="raise"):
    """NumPy's `x.take(indices, axis)`: flattened for axis=None; indices of any shape."""
    if mode != "raise":
        raise ValueError(f"take: mode={mode!r} is not supported (only 'raise')")
    x, axis = _flat_or(self, axis)
    axis = normalize_axis("take", axis, x.ndim)
    idx = indices if isinstance(indices, Array) else \
        _creation.asarray(indices, device=self.device)
    picked = _indexing.take(x, _manip.reshape(idx, (-1,)), axis=axis)
    shape = x.shape[:axis] + idx.shape + x.shape[axis + 1:]
    return store(_manip.reshape(picked, shape), out, "take")


def dot(self, b, out=None):
    """NumPy's `x.dot(b)`: a product with a scalar or 0-d operand, the inner product of 1-d
    ones, matmul of 2-d ones, and otherwise the sum over x's last axis and b's
    second-to-last."""
    if not isinstance(b, Array) or self.ndim == 0 or b.ndim == 0:
        result = self * b        # a Python scalar keeps x's dtype
    elif b.ndim == 1:
        result = _linalg.tensordot(self, b, axes=((self.ndim - 1,), (0,)))
    elif self.ndim <= 2 and b.ndim <= 2:
        result = _linalg.matmul(self, b)
    else:
        result = _linalg.tensordot(self, b, axes=((self.ndim - 1,), (b.ndim - 2,)))
    return store(result, out, "dot")


def nbytes(self) -> int:
    """The size of the value in bytes (NumPy's `x.nbytes`)."""
    return self.size * self.dtype.numpy.itemsize


def itemsize(self) -> int:
    """The size of one element in bytes (NumPy's `x.itemsize`)."""
    return self.dtype.numpy.itemsize


def _deepcopy(self, memo):
    """copy.deepcopy(x): a new array with x's value (lazily: nothing is computed)."""
    return copy(self)


# attribute of Array -> its function; installed by tlaloc/_operators.py
METHODS = {f.__name__: f for f in (
    sum, prod, min, max, all, any, argmax, argmin, mean, std, var, cumsum, cumprod,
    reshape, ravel, flatten, transpose, swapaxes, squeeze, astype, copy, clip, round, conj,
    nonzero, argsort, sort, fill, repeat, take, dot)}
METHODS.update({"conjugate": conj, "__copy__": copy, "__deepcopy__": _deepcopy})
# read-only attributes
PROPERTIES = {"nbytes": nbytes, "itemsize": itemsize}
