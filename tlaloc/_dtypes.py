"""Data types, type promotion, and the data type functions of the standard.

Every dtype is one `DType` instance; identity is equality. Promotion follows the standard's
table within a kind; across kinds (documented in docs/dtypes.md) bool joins any numeric
dtype, integers join a floating dtype as that floating dtype (as in JAX and PyTorch, so an
integer index array does not widen float32 data to float64), and real joins complex at the
wider of the two precisions.
"""
from __future__ import annotations

import builtins
import functools
import sys
from dataclasses import dataclass

import numpy as np


class DType:
    """An array data type. Instances are unique; compare them with `==` or `is`."""

    __slots__ = ("name", "numpy", "kind", "bits", "mlir")

    def __init__(self, name: str, numpy_dtype, kind: str, bits: int, mlir: str):
        self.name = name
        self.numpy = np.dtype(numpy_dtype)
        self.kind = kind  # 'b' bool, 'i' signed, 'u' unsigned, 'f' real floating, 'c' complex
        self.bits = bits
        self.mlir = mlir

    @property
    def dtype(self) -> np.dtype:
        """The NumPy dtype. NumPy reads any object with a `dtype` attribute as that dtype, so
        `np.dtype(xp.float32)` and `np.asarray(a, dtype=x.dtype)` work: libraries running
        with array API dispatch off (scikit-learn) pass a tlaloc array's dtype to NumPy."""
        return self.numpy

    def __repr__(self) -> str:
        return f"tlaloc.{self.name}"

    def __str__(self) -> str:
        return self.name

    def __reduce__(self):
        return (_by_name, (self.name,))

    def __eq__(self, other):
        return self is other

    # identity hashing in C: avals and program keys hash their dtypes on every lookup
    __hash__ = object.__hash__


class _MLDType(DType):
    """A dtype whose NumPy dtype is ml_dtypes' (bfloat16), imported when first asked for:
    ml_dtypes costs ~5 ms of `import tlaloc`, and most programs never use it (jaxlib
    imports it anyway when the PJRT client is made)."""

    __slots__ = ()

    def __init__(self, name: str, kind: str, bits: int, mlir: str):
        self.name = name
        self.kind = kind
        self.bits = bits
        self.mlir = mlir

    @property
    def numpy(self) -> np.dtype:
        try:
            return _NUMPY_SLOT.__get__(self)
        except AttributeError:
            import ml_dtypes
            value = np.dtype(getattr(ml_dtypes, self.name))
            _NUMPY_SLOT.__set__(self, value)
            _BY_NUMPY[value] = self
            return value


_NUMPY_SLOT = DType.numpy   # the slot's descriptor, which _MLDType.numpy shadows


_PY_BOOL = builtins.bool   # (the module's `bool` is the dtype)
bool = DType("bool", np.bool_, "b", 8, "i1")
int8 = DType("int8", np.int8, "i", 8, "i8")
int16 = DType("int16", np.int16, "i", 16, "i16")
int32 = DType("int32", np.int32, "i", 32, "i32")
int64 = DType("int64", np.int64, "i", 64, "i64")
uint8 = DType("uint8", np.uint8, "u", 8, "ui8")
uint16 = DType("uint16", np.uint16, "u", 16, "ui16")
uint32 = DType("uint32", np.uint32, "u", 32, "ui32")
uint64 = DType("uint64", np.uint64, "u", 64, "ui64")
float16 = DType("float16", np.float16, "f", 16, "f16")
bfloat16 = _MLDType("bfloat16", "f", 16, "bf16")
float32 = DType("float32", np.float32, "f", 32, "f32")
float64 = DType("float64", np.float64, "f", 64, "f64")
complex64 = DType("complex64", np.complex64, "c", 64, "complex<f32>")
complex128 = DType("complex128", np.complex128, "c", 128, "complex<f64>")

ALL = (bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
       float16, bfloat16, float32, float64, complex64, complex128)
_BY_NAME = {d.name: d for d in ALL}
_BY_NUMPY = {d.numpy: d for d in ALL if type(d) is DType}   # bfloat16's once it is loaded

# The standard's dtype categories as strings of kind letters (DType.kind, NumPy's letters:
# b bool, i signed integer, u unsigned integer, f real floating, c complex floating), for
# `dtype.kind in INTEGER_KINDS`. Single kinds ("b", "f", "c") are written as letters.
INTEGER_KINDS = "iu"                # integer: signed and unsigned
FLOATING_KINDS = "fc"               # floating-point: real and complex floating
REAL_KINDS = "iuf"                  # real-valued: integer and real floating
NUMERIC_KINDS = "iufc"              # numeric: every dtype but bool
SIGNED_NUMERIC_KINDS = "ifc"        # numeric with a sign: signed integer and floating
INTEGER_OR_BOOL_KINDS = "biu"       # integer or boolean (bitwise operations)
REAL_OR_BOOL_KINDS = "biuf"         # real-valued or boolean (ordered: sort, max, min)
ALL_KINDS = "biufc"                 # every dtype

SIGNED = (int8, int16, int32, int64)
UNSIGNED = (uint8, uint16, uint32, uint64)
INTEGER = SIGNED + UNSIGNED
REAL_FLOATING = (float16, bfloat16, float32, float64)
COMPLEX = (complex64, complex128)
NUMERIC = INTEGER + REAL_FLOATING + COMPLEX


def _by_name(name: str) -> DType:
    return _BY_NAME[name]


def of_numpy(np_dtype: np.dtype):
    """The tlaloc dtype of a NumPy dtype object, or None (no conversion, no error: the fast
    path of asarray)."""
    d = _BY_NUMPY.get(np_dtype)
    if d is None and _ml_dtypes_found():
        d = _BY_NUMPY.get(np_dtype)
    return d


def from_numpy(dt) -> DType:
    """The tlaloc dtype of a NumPy dtype; TypeError for dtypes tlaloc does not have."""
    try:
        np_dtype = np.dtype(dt)
    except TypeError:
        np_dtype = None
    d = None if np_dtype is None else of_numpy(np_dtype)
    if d is None:
        raise TypeError(f"tlaloc has no dtype matching NumPy's {dt!r}")
    return d


def _ml_dtypes_found() -> builtins.bool:
    """Whether ml_dtypes is imported (by the caller, or by jaxlib), its dtypes now registered:
    a NumPy array of bfloat16 can exist only then."""
    if "ml_dtypes" not in sys.modules:
        return False
    bfloat16.numpy    # registers it
    return True


def numpy_is_bfloat16(np_dtype: np.dtype) -> builtins.bool:
    """Whether a NumPy dtype is bfloat16, importing nothing: NumPy's kind for ml_dtypes'
    dtypes is "V", and no other "V" dtype reaches tlaloc's arrays."""
    return np_dtype.kind == "V" and np_dtype == bfloat16.numpy


def canonicalize(dtype, name=None, argname="dtype") -> DType:
    """Accept a tlaloc dtype, a NumPy dtype, a dtype name, or Python's bool/int/float/complex
    (the default dtype of that kind, as NumPy-targeting code passes them); TypeError
    otherwise, naming the function `name` and its argument `argname` when given."""
    if isinstance(dtype, DType):
        return dtype
    if isinstance(dtype, str) and dtype in _BY_NAME:
        return _BY_NAME[dtype]
    if dtype in _PYTHON_TYPES:
        return _PYTHON_TYPES[dtype]()
    if dtype is not None:
        try:
            return from_numpy(dtype)
        except TypeError:
            pass
    if name is None:
        raise TypeError(f"expected a tlaloc dtype, got {dtype!r}")
    raise TypeError(f"{name}: {argname} must be a tlaloc dtype (such as tlaloc.float64), "
                    f"got {dtype!r}")


# ----------------------------------------------------------------------------- defaults

@dataclass(frozen=True)
class DefaultDtypes:
    real_floating: DType = float64
    complex_floating: DType = complex128
    integral: DType = int64
    indexing: DType = int64

    def as_dict(self):
        return {"real floating": self.real_floating, "complex floating": self.complex_floating,
                "integral": self.integral, "indexing": self.indexing}


DEFAULTS = DefaultDtypes()

# Python's scalar types as dtypes: the defaults at the time of the call (as NumPy's
# np.zeros(3, dtype=float) is float64)
_PYTHON_TYPES = {_PY_BOOL: lambda: bool, int: lambda: DEFAULTS.integral,
                 float: lambda: DEFAULTS.real_floating,
                 complex: lambda: DEFAULTS.complex_floating}


def complex_of(d: DType) -> DType:
    """The complex dtype whose components have the precision of real dtype `d`."""
    return complex128 if d is float64 else complex64


_REAL_OF = {complex64: float32, complex128: float64}


def real_of(d: DType) -> DType:
    """The real dtype of a complex dtype's components (identity for real dtypes)."""
    return _REAL_OF.get(d, d)


def unsigned_of(d: DType) -> DType:
    """The unsigned integer dtype as wide as `d`."""
    return _BY_NAME[f"uint{d.bits}"]


# ----------------------------------------------------------------------------- promotion

def _promote_pair(a: DType, b: DType) -> DType:
    if a is b:
        return a
    if a.kind == "b":
        return b
    if b.kind == "b":
        return a
    ka, kb = a.kind, b.kind
    if ka == kb:
        if ka == "f" and {a, b} == {float16, bfloat16}:
            return float32
        return a if a.bits >= b.bits else b
    if {ka, kb} == {"i", "u"}:
        s, u = (a, b) if ka == "i" else (b, a)
        if u.bits < s.bits:
            return s
        if u.bits == 64:
            raise TypeError(f"no integer dtype can hold both {a} and {b}; cast one of them "
                            "explicitly with astype")
        return _BY_NAME[f"int{u.bits * 2}"]
    if kb in INTEGER_KINDS:  # integer with inexact: the inexact dtype
        return a
    if ka in INTEGER_KINDS:
        return b
    # real with complex: complex at the wider precision
    f, c = (a, b) if ka == "f" else (b, a)
    return complex128 if (c is complex128 or f is float64) else complex64


def _promotion_table():
    table = {}
    for a in ALL:
        for b in ALL:
            try:
                table[(a, b)] = _promote_pair(a, b)
            except TypeError:
                pass  # uint64 with a signed integer: promote() raises with the message
    return table


_PROMOTION = _promotion_table()


def promote(a: DType, b: DType) -> DType:
    try:
        return _PROMOTION[(a, b)]
    except KeyError:
        return _promote_pair(a, b)  # raises the TypeError with its message


def promote_all(dtypes) -> DType:
    """The promotion of several dtypes, whatever their order. Pairwise promotion is not
    associative across kinds: uint64 and int8 have no common dtype, while either with a
    floating dtype gives that floating dtype. An integer or bool never changes the dtype an
    inexact one gives it, so with any inexact dtype present the inexact ones alone decide."""
    inexact = [d for d in dtypes if d.kind in FLOATING_KINDS]
    pool = inexact or list(dtypes)
    d = pool[0]
    for other in pool[1:]:
        d = promote(d, other)
    return d


@functools.lru_cache(maxsize=None)
def int_bounds(d: DType) -> tuple:
    """(min, max) of an integer dtype, as Python ints."""
    info = np.iinfo(d.numpy)
    return int(info.min), int(info.max)


def check_int_fits(value: int, d: DType, name=None) -> None:
    lo, hi = int_bounds(d)
    if not lo <= value <= hi:
        where = "" if name is None else f"{name}: "
        raise OverflowError(f"{where}Python int {value} is out of bounds for {d}")


def scalar_dtype(value, array_dtype: DType, name=None) -> DType:
    """The dtype a Python scalar takes when it meets an array of `array_dtype` (OverflowError,
    naming the function `name`, for an int the integer dtype cannot hold)."""
    k = array_dtype.kind
    if isinstance(value, _PY_BOOL):
        return array_dtype
    if isinstance(value, int):
        if k == "b":
            return DEFAULTS.integral
        if k in INTEGER_KINDS:
            check_int_fits(value, array_dtype, name)
        return array_dtype
    if isinstance(value, float):
        return array_dtype if k in FLOATING_KINDS else DEFAULTS.real_floating
    if isinstance(value, complex):
        if k == "c":
            return array_dtype
        if k == "f":
            return complex_of(array_dtype)
        return DEFAULTS.complex_floating
    raise TypeError(f"unsupported scalar type {type(value).__name__}")


def default_for_scalar(value) -> DType:
    if isinstance(value, _PY_BOOL):
        return bool
    if isinstance(value, int):
        return DEFAULTS.integral
    if isinstance(value, float):
        return DEFAULTS.real_floating
    if isinstance(value, complex):
        return DEFAULTS.complex_floating
    raise TypeError(f"unsupported scalar type {type(value).__name__}")


# ----------------------------------------------------------------------------- isdtype

_KIND_GROUPS = {
    "bool": (bool,),
    "signed integer": SIGNED,
    "unsigned integer": UNSIGNED,
    "integral": INTEGER,
    "real floating": REAL_FLOATING,
    "complex floating": COMPLEX,
    "numeric": NUMERIC,
}


def isdtype(dtype, kind) -> builtins.bool:
    """The standard's `isdtype`: is `dtype` of `kind` (a dtype, a kind name, or a tuple)?"""
    if not isinstance(dtype, DType):
        raise TypeError(f"isdtype: expected a tlaloc dtype, got {dtype!r}")
    if isinstance(kind, tuple):
        return any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, DType):
        return dtype is kind
    if isinstance(kind, str):
        if kind not in _KIND_GROUPS:
            raise ValueError(f"isdtype: unknown kind {kind!r}; expected one of {sorted(_KIND_GROUPS)}")
        return dtype in _KIND_GROUPS[kind]
    raise TypeError(f"isdtype: kind must be a dtype, a kind name or a tuple, got {kind!r}")


# ----------------------------------------------------------------------------- finfo / iinfo

@dataclass(frozen=True)
class finfo_object:
    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: DType


@dataclass(frozen=True)
class iinfo_object:
    bits: int
    max: int
    min: int
    dtype: DType


@functools.lru_cache(maxsize=None)
def _finfo(d: DType) -> finfo_object:
    import ml_dtypes   # its finfo knows bfloat16
    f = ml_dtypes.finfo(real_of(d).numpy)
    # bits: the width of the real-valued floating dtype (32 for complex64), as the standard says
    return finfo_object(bits=real_of(d).bits, eps=float(f.eps), max=float(f.max), min=float(f.min),
                        smallest_normal=float(f.smallest_normal), dtype=real_of(d))


def finfo(type, /) -> finfo_object:
    d = type.dtype if hasattr(type, "dtype") and not isinstance(type, DType) else type
    d = canonicalize(d, "finfo", "type")
    if d.kind not in FLOATING_KINDS:
        raise TypeError(f"finfo: {d} is not a floating-point dtype")
    return _finfo(d)


def iinfo(type, /) -> iinfo_object:
    d = type.dtype if hasattr(type, "dtype") and not isinstance(type, DType) else type
    d = canonicalize(d, "iinfo", "type")
    if d.kind not in INTEGER_KINDS:
        raise TypeError(f"iinfo: {d} is not an integer dtype")
    i = np.iinfo(d.numpy)
    return iinfo_object(bits=d.bits, max=int(i.max), min=int(i.min), dtype=d)
