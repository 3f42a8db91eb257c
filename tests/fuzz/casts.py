"""astype on reference values, with tlaloc's documented semantics (docs/precision.md):
float to integer saturates and NaN becomes 0; integer to integer wraps; anything to bool is
`x != 0` (NaN is true); real to complex has a +0 imaginary part. The standard does not
allow complex to real (programs.py never asks for it)."""
from __future__ import annotations

import numpy as np

from .reference import (EXACT, FREE, RANGE, Ref, finish, from_parts, is_complex, is_float,
                        is_inexact, nan_like, parts, real_dtype, widen)


def float_to_int(x, dtype):
    """Saturating conversion of a float array (NaN -> 0) to the integer `dtype`."""
    d = np.dtype(dtype)
    info = np.iinfo(d)
    x = np.asarray(x, np.float64)
    t = np.trunc(np.where(np.isnan(x), 0.0, x))
    # 2**63 etc. are exact in float64; compare with them, not with info.max (which rounds)
    top = float(2 ** (d.itemsize * 8 - (1 if d.kind == "i" else 0)))
    bottom = float(info.min)
    safe = np.clip(t, bottom, 0.0 if top == 0 else np.nextafter(top, 0))
    out = safe.astype(d)
    out = np.where(t >= top, info.max, out)
    out = np.where(t < bottom, info.min, out)
    return out.astype(d)


def cast_value(v, dtype):
    d = np.dtype(dtype)
    src = v.dtype
    if d.kind in "iu" and is_float(src):
        # through float64: a float32 value converts exactly
        return float_to_int(v, d)
    if d.kind == "b":
        return v != 0
    with np.errstate(all="ignore"):
        return v.astype(d)


def astype(ref: Ref, dtype) -> Ref:
    d = np.dtype(dtype)
    src = ref.dtype
    if src == d:
        return ref.copy()
    v = cast_value(ref.v, d)
    free = ref.st == FREE
    exact = ref.st == EXACT
    if not is_inexact(src):
        # integer and boolean sources are exact or free; their conversions are exact
        # (correctly rounded to a float)
        st = np.where(free, FREE, EXACT)
        if is_inexact(d):
            return finish(v, st, nan_like(v.shape, np.complex128 if is_complex(d) else np.float64),
                          nan_like(v.shape, np.complex128 if is_complex(d) else np.float64))
        return Ref(v, st)
    if is_complex(src):
        if is_complex(d):
            re, im = parts(ref)
            rd = real_dtype(d)
            return from_parts(astype(re, rd), astype(im, rd), d)
        if d.kind == "b":
            re, im = parts(ref)
            a, b = astype(re, d), astype(im, d)
            known_true = ((a.st == EXACT) & a.v) | ((b.st == EXACT) & b.v)
            st = np.where(known_true, EXACT, np.maximum(a.st, b.st))
            return Ref(a.v | b.v, st)
        raise TypeError(f"complex to {d} is not a cast the standard allows")
    # a real floating source
    if is_complex(d):
        rd = real_dtype(d)
        re = astype(ref, rd)
        zero = Ref(np.zeros(ref.shape, rd))
        return from_parts(re, zero, d)
    st = np.where(exact, EXACT, FREE).astype(np.uint8)
    ranged = ref.st == RANGE
    if is_float(d):
        lo, hi = widen(ref.lo, ref.hi, d)
        st[ranged] = RANGE
        return finish(v, st, lo, hi)
    if d.kind == "b":
        known = (ref.lo > 0) | (ref.hi < 0)
        st[ranged & known] = EXACT
        return Ref(np.where(ranged & known, True, v), st)
    # to an integer: known where both ends convert to the same integer
    a, b = float_to_int(ref.lo, d), float_to_int(ref.hi, d)
    known = ranged & (a == b)
    st[known] = EXACT
    return Ref(np.where(known, a, v).astype(d), st)
