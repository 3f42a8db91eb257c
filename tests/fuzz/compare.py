"""Comparison of a backend's result with a reference (reference.py): the shape and dtype
exactly, then each element by its status. Returns a list of problems (empty: it matches)."""
from __future__ import annotations

import numpy as np

from .reference import EXACT, RANGE, Ref, is_complex, is_inexact

MAX_REPORTED = 4


def _float_problems(a, ref_v, st, lo, hi):
    """Masks of failing elements for one real part: EXACT must be bit-identical up to NaN
    payloads (NaN for NaN, the sign of zero); RANGE must be a number within [lo, hi]."""
    a64 = a.astype(np.float64)
    e64 = ref_v.astype(np.float64)
    exact = st == EXACT
    same = (a64 == e64) & (np.signbit(a64) == np.signbit(e64))
    same |= np.isnan(a64) & np.isnan(e64)
    bad_exact = exact & ~same
    ranged = st == RANGE
    with np.errstate(invalid="ignore"):
        inside = (a64 >= lo) & (a64 <= hi)
        # a complex element's exact NaN part beside a ranged part: that part must be NaN
        nan_part = np.isnan(lo) & np.isnan(hi) & np.isnan(e64)
        inside = np.where(nan_part, np.isnan(a64), inside)
    bad_range = ranged & ~inside
    return bad_exact | bad_range


def problems(actual, ref: Ref, label="") -> list:
    a = np.asarray(actual)
    if a.shape != ref.shape:
        return [f"{label}shape {a.shape}, expected {ref.shape}"]
    if a.dtype != ref.dtype:
        return [f"{label}dtype {a.dtype}, expected {ref.dtype}"]
    if not is_inexact(a.dtype):
        bad = (ref.st == EXACT) & (a != ref.v)
    elif is_complex(a.dtype):
        bad = (_float_problems(a.real, ref.v.real, ref.st, ref.lo.real, ref.hi.real)
               | _float_problems(a.imag, ref.v.imag, ref.st, ref.lo.imag, ref.hi.imag))
    else:
        bad = _float_problems(a, ref.v, ref.st, ref.lo, ref.hi)
    if not bad.any():
        return []
    where = np.argwhere(bad)
    lines = [f"{label}{len(where)} of {a.size} elements differ:"]
    for idx in where[:MAX_REPORTED]:
        idx = tuple(int(i) for i in idx)
        got, want = a[idx], ref.v[idx]
        if ref.st[idx] == EXACT:
            lines.append(f"  at {idx}: got {got!r}, expected exactly {want!r}")
        else:
            lines.append(f"  at {idx}: got {got!r}, expected within [{ref.lo[idx]!r}, "
                         f"{ref.hi[idx]!r}] (nominal {want!r})")
    return lines


def checked_fraction(refs) -> tuple:
    """(elements compared, elements in all): how much of the output the reference pins."""
    checked = total = 0
    for r in refs:
        total += r.size
        checked += int((r.st != 2).sum())
    return checked, total
