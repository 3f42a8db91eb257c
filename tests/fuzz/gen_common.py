"""What the program generators share: dtype and shape helpers, and the choice of an
operand among the program's values."""
from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from helpers import expected_promotion

from . import casts, values
from .reference import Ref


MAX_ELEMENTS = 64


def name_of(r: Ref) -> str:
    return str(r.dtype)


def kind(r: Ref) -> str:
    return r.dtype.kind


def size(shape) -> int:
    return math.prod(shape)


def dtype_src(dtype) -> str:
    return f"xp.{np.dtype(dtype)}"


def promote(*dtypes):
    """The promotion of several dtypes in any order, as tlaloc's (docs/dtypes.md): pairwise
    promotion is not associative across kinds (uint64 and int8 have none, either with a
    float gives the float), so with an inexact dtype present the inexact ones alone decide.
    None where no dtype holds them all."""
    names = [str(np.dtype(d)) for d in dtypes]
    names = [d for d in names if values.kind(d) in "fc"] or names
    out = names[0]
    for d in names[1:]:
        out = expected_promotion(out, d)
        if out is None:
            return None
    return out


def cast(r: Ref, dtype) -> Ref:
    return r if r.dtype == np.dtype(dtype) else casts.astype(r, dtype)


def dtypes_of_kinds(kinds):
    """Dtypes of these kinds, floating ones repeated (drawn more often)."""
    return [d for d in values.WEIGHTED_DTYPES if values.kind(d) in kinds]


def operand(b, pred, make):
    """An existing value satisfying `pred` (usually), or a new input from `make()`."""
    if b.draw(st.integers(0, 3)) != 3:
        i = b.pick(pred)
        if i is not None:
            return i
    return make()


def partner_shape(b, shape):
    """A shape that broadcasts with `shape`."""
    choice = b.draw(st.sampled_from(["same", "ones", "suffix", "scalar", "lead"]))
    if choice == "same":
        return tuple(shape)
    if choice == "ones":
        return tuple(1 if b.draw(st.booleans()) else s for s in shape)
    if choice == "suffix":
        return tuple(shape[b.draw(st.integers(0, len(shape))):])
    if choice == "scalar":
        return ()
    lead = (b.draw(st.integers(1, 3)),) + tuple(shape)
    return lead if size(lead) <= MAX_ELEMENTS else tuple(shape)


def broadcasts(s1, s2) -> bool:
    try:
        np.broadcast_shapes(s1, s2)
        return True
    except ValueError:
        return False


def draw_axis(b, ndim, allow_none=True, allow_tuple=True):
    """None, an int (maybe negative) or a tuple of distinct axes."""
    options = ["int"] if ndim else []
    if allow_none:
        options.append("none")
    if allow_tuple:
        options.append("tuple")
    choice = b.draw(st.sampled_from(options))
    if choice == "none":
        return None
    if choice == "int":
        return b.draw(st.integers(-ndim, ndim - 1))
    axes = b.draw(st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim)) if ndim else []
    return tuple(a - ndim if b.draw(st.booleans()) else a for a in axes)


def axis_src(axis) -> str:
    return repr(axis)


def reduced_size(shape, axis) -> int:
    axes = range(len(shape)) if axis is None else ([axis] if isinstance(axis, int) else axis)
    return size([shape[a] for a in axes])


def scalar_for(b, dtype):
    """A Python scalar that the standard lets meet an array of `dtype`."""
    return b.draw(values.scalars(values.kind(dtype), dtype))


def scalar_ref(value, dtype) -> Ref:
    with np.errstate(all="ignore"):
        return Ref(np.asarray(value, dtype=np.dtype(dtype)))


def any_value(b):
    """Any value of the program (or a new input)."""
    return operand(b, lambda r: True, lambda: b.input())
