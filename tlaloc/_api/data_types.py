"""Data type functions: can_cast, result_type, finfo, iinfo, isdtype (astype is with creation)."""
from __future__ import annotations

import builtins

import numpy as np

from .. import _dtypes as dt
from .._array import Array
from .._dtypes import finfo, iinfo, isdtype  # noqa: F401  (re-exported by the namespace)


def can_cast(from_, to, /) -> builtins.bool:
    """Whether `from_` (a dtype or an array) converts to `to` without losing values."""
    src = from_.dtype if isinstance(from_, Array) else dt.canonicalize(from_, "can_cast", "from_")
    dst = dt.canonicalize(to, "can_cast", "to")
    if src is dst or src.kind == "b":
        return True
    if dst.kind == "b":
        return False
    if src.kind == dst.kind or {src.kind, dst.kind} == {"i", "u"} or {src.kind, dst.kind} == {"f", "c"}:
        try:
            return dt.promote(src, dst) is dst
        except TypeError:
            return False
    if src.kind in dt.FLOATING_KINDS and dst.kind in dt.INTEGER_KINDS or src.kind == "c":
        return False
    return builtins.bool(np.can_cast(src.numpy, dst.numpy, "safe"))


def result_type(*arrays_and_dtypes):
    """The promoted dtype of arrays, dtypes and (weakly) Python scalars."""
    strong, scalars = [], []
    for a in arrays_and_dtypes:
        if isinstance(a, Array):
            strong.append(a.dtype)
        elif isinstance(a, (builtins.bool, builtins.int, builtins.float, builtins.complex)):
            scalars.append(a)
        else:
            strong.append(dt.canonicalize(a, "result_type", "arrays_and_dtypes"))
    if not strong:
        raise ValueError("result_type: at least one array or dtype is required")
    try:
        d = dt.promote_all(strong)
    except TypeError as e:
        raise TypeError(f"result_type: {e}") from None
    for s in scalars:
        d = dt.scalar_dtype(s, d, "result_type")
    return d
