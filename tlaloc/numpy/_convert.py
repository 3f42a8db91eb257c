"""How tlaloc.numpy takes NumPy's array_likes."""
from __future__ import annotations

import builtins

import tlaloc as _xp


def as_array(a, dtype=None, like=None):
    """An array_like (tlaloc array, NumPy array, nested sequence, scalar) as a tlaloc array
    (on the device of the array `like`, when given)."""
    if isinstance(a, _xp.Array) and dtype is None:
        return a
    return _xp.asarray(a, dtype=dtype, device=None if like is None else like.device)


def is_scalar(v) -> bool:
    """A Python scalar: beside an array it keeps the array's dtype (NumPy 2's weak scalars)."""
    return isinstance(v, (builtins.bool, builtins.int, builtins.float, builtins.complex))
