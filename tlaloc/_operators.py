"""The Array's operators and namespace methods, from one table.

`tlaloc._array.Array` holds a node and its metadata and imports nothing of the namespace; the
namespace owns what its operators mean. `TABLE` maps each attribute of Array to the namespace
function it calls and how it calls it; `install(namespace)` (run once, by `tlaloc/__init__.py`)
sets them on the class.

Kinds of entry:
    binary     x op y: Python and NumPy scalars and tlaloc arrays; NotImplemented for foreign
               types; TypeError for a NumPy array (NumPy would compute eagerly through
               __array__ otherwise)
    reflected  y op x, the same operands
    inplace    x op= y: the result rebinds x (it must keep x's dtype and shape); arrays that
               share x's storage see it (tlaloc/_api/views.py)
    matmul     x @ y and y @ x (`rmatmul`): tlaloc arrays only
    unary      op x
    method     a method calling the function with the array first
    setitem    x[key] = value: rebinds x to the functional update, seen as x op= y's
    property   a read-only attribute computed by the function
"""
from __future__ import annotations


import numpy as np

from . import _dtypes as dt
from . import named as _named
from ._array import Array
from ._api import array_methods as _methods
from ._api import elementwise as _ew
from ._api import indexing as _indexing
from ._api import linear_algebra as _linalg
from ._api import views as _views

_PYTHON_SCALARS = (Array, bool, int, float, complex)


def _binary(name, fn, reflected=False):
    """`x op y` (`y op x` when reflected) for a tlaloc x and an array or Python scalar y;
    NotImplemented for other types, whose own operator may know tlaloc arrays."""
    apply = (lambda self, other: fn(other, self)) if reflected else fn

    def op(self, other):
        t = type(other)
        if t is Array or t is float or t is int:   # the common case first
            return apply(self, other)
        if not isinstance(other, _PYTHON_SCALARS):
            other = _foreign(name, other)
            if other is NotImplemented:
                return NotImplemented
        return apply(self, other)
    return op


def _reflected(name, fn):
    return _binary(name, fn, reflected=True)


def _foreign(name, other):
    """A NumPy scalar acts as the Python scalar it holds; a NumPy array raises; anything else
    is NotImplemented (its own reflected operator may know tlaloc arrays)."""
    if isinstance(other, np.generic) and other.dtype.kind in dt.ALL_KINDS:
        return other.item()
    if isinstance(other, np.ndarray):
        # returning NotImplemented would let NumPy compute `x + ndarray` eagerly through
        # __array__ (and `ndarray + x` fail with a confusing message)
        raise TypeError(f"{name}: cannot mix a tlaloc array with a NumPy array; "
                        "convert it with tlaloc.asarray first")
    return NotImplemented


def _inplace(name, fn, dunder):
    def op(self, other):
        return _views.assign(self, fn(self, other), dunder)
    return op


def _matmul_operand(other, name):
    if isinstance(other, np.ndarray):
        # NotImplemented would let NumPy compute `x @ ndarray` eagerly through __array__
        raise TypeError(f"{name}: cannot mix a tlaloc array with a NumPy array; "
                        "convert it with tlaloc.asarray first")
    return isinstance(other, Array)


def _matmul(name, fn):
    def op(self, other):
        return fn(self, other) if _matmul_operand(other, name) else NotImplemented
    return op


def _rmatmul(name, fn):
    def op(self, other):
        return fn(other, self) if _matmul_operand(other, name) else NotImplemented
    return op


def _unary(name, fn):
    def op(self):
        return fn(self)
    return op


def _method(name, fn):
    return fn


def _setitem(name, fn):
    def __setitem__(self, key, value):
        """A functional update: computes the new value and rebinds this array to it; the
        arrays that share its storage (its views, its base) see the write."""
        _views.assign(self, fn(self, key, value), "__setitem__")
    return __setitem__


def _property(name, fn):
    return property(fn, doc=fn.__doc__)


def transpose_2d(x) -> Array:
    """`x.T`: the transpose of a 2-d array."""
    if x.ndim != 2:
        raise ValueError(f"Array.T needs a 2-d array, got {x.ndim}-d; use permute_dims or mT")
    return _linalg.matrix_transpose(x)   # (1, 0) without permute_dims' checks of the axes


_ARITHMETIC = {
    "add": _ew.add, "sub": _ew.subtract, "mul": _ew.multiply, "truediv": _ew.divide,
    "floordiv": _ew.floor_divide, "mod": _ew.remainder, "pow": _ew.pow,
    "and": _ew.bitwise_and, "or": _ew.bitwise_or, "xor": _ew.bitwise_xor,
    "lshift": _ew.bitwise_left_shift, "rshift": _ew.bitwise_right_shift,
}

# attribute of Array -> (kind, namespace function)
TABLE = {}
for _short, _fn in _ARITHMETIC.items():
    TABLE[f"__{_short}__"] = ("binary", _fn)
    TABLE[f"__r{_short}__"] = ("reflected", _fn)
    TABLE[f"__i{_short}__"] = ("inplace", _fn)
TABLE.update({
    "__eq__": ("binary", _ew.equal), "__ne__": ("binary", _ew.not_equal),
    "__lt__": ("binary", _ew.less), "__le__": ("binary", _ew.less_equal),
    "__gt__": ("binary", _ew.greater), "__ge__": ("binary", _ew.greater_equal),
    "__matmul__": ("matmul", _linalg.matmul), "__rmatmul__": ("rmatmul", _linalg.matmul),
    "__imatmul__": ("inplace", _linalg.matmul),
    "__neg__": ("unary", _ew.negative), "__pos__": ("unary", _ew.positive),
    "__abs__": ("unary", _ew.abs), "__invert__": ("unary", _ew.bitwise_invert),
    "__getitem__": ("method", _indexing.getitem), "__setitem__": ("setitem", _indexing.setitem),
    "T": ("property", transpose_2d), "mT": ("property", _linalg.matrix_transpose),
    "rename": ("method", _named.rename), "align_to": ("method", _named.align_to),
})
# NumPy's methods (x.sum(), x.reshape(3, 2), x.astype(...), ...): _api/array_methods.py
TABLE.update({name: ("method", fn) for name, fn in _methods.METHODS.items()})
TABLE.update({name: ("property", fn) for name, fn in _methods.PROPERTIES.items()})
del _short, _fn

_KINDS = {"binary": _binary, "reflected": _reflected, "matmul": _matmul,
          "rmatmul": _rmatmul, "unary": _unary, "method": _method, "setitem": _setitem,
          "property": _property}

_API_VERSIONS = (None, "2021.12", "2022.12", "2023.12", "2024.12", "2025.12")


def install(namespace) -> None:
    """Set TABLE's entries on Array, and `__array_namespace__` returning `namespace` (the
    tlaloc module)."""
    for attr, (kind, fn) in TABLE.items():
        if kind == "inplace":
            op = _inplace(fn.__name__, fn, attr)
        else:
            op = _KINDS[kind](fn.__name__, fn)
        if kind != "property" and kind != "method":
            op.__name__ = op.__qualname__ = attr
            op.__qualname__ = f"Array.{attr}"
        setattr(Array, attr, op)

    def __array_namespace__(self, /, *, api_version=None):
        if api_version not in _API_VERSIONS:
            raise ValueError(f"tlaloc implements the array API 2025.12 (and older versions "
                             f"{_API_VERSIONS[1:-1]}); got api_version={api_version!r}")
        return namespace
    Array.__array_namespace__ = __array_namespace__
