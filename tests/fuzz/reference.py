"""The reference's values: what a correct backend may return for each element.

A reference value (`Ref`) is a NumPy array of the standard's result dtype with, per element,
a status:

- EXACT: the backend must give this value bit for bit (NaN for NaN, the sign of zeros
  included). Integer and boolean results, and floating results of correctly rounded
  operations (+ - * / sqrt, comparisons, casts, rounding, shape and index operations) on
  exact operands, are exact: a compiler rewrite that changes them is a bug.
- RANGE: the backend's value must lie in [lo, hi] (float64, or complex128 with separate
  bounds for the real and imaginary parts) and must not be NaN; the sign of zero is not
  checked. Transcendental functions (with the tolerances of docs/precision.md),
  reductions (XLA sums in its own order), and anything computed from such values. The
  bounds are interval arithmetic: an operation on ranges gives the range of its results
  over every choice of operands in their ranges, widened by the result's rounding.
- FREE: anything is accepted. Order-dependent overflow, a comparison or a floor of a
  range that straddles the decision, implementation-defined complex special values.

Subnormal results are never exact: XLA:CPU flushes them to zero (docs/precision.md), so an
exact subnormal becomes the range [v - tiny, v + tiny], and every range is widened by the
smallest normal number, which covers flushing anywhere in a chain.
"""
from __future__ import annotations

import numpy as np

from . import TOLERANCE

EXACT, RANGE, FREE = 0, 1, 2


def is_float(dtype) -> bool:
    return np.dtype(dtype).kind == "f"


def is_complex(dtype) -> bool:
    return np.dtype(dtype).kind == "c"


def is_inexact(dtype) -> bool:
    return np.dtype(dtype).kind in "fc"


def real_dtype(dtype):
    """float32 for complex64, float64 for complex128, the dtype itself otherwise."""
    d = np.dtype(dtype)
    return np.dtype(np.float32 if d == np.complex64 else np.float64) if d.kind == "c" else d


def bounds_dtype(dtype):
    return np.dtype(np.complex128 if is_complex(dtype) else np.float64)


class Ref:
    """A reference array: nominal values `v`, statuses `st` (uint8), and for floating and
    complex dtypes the bounds `lo`, `hi` of RANGE elements (equal to `v` where EXACT)."""
    __slots__ = ("v", "st", "lo", "hi")

    def __init__(self, v, st=None, lo=None, hi=None):
        v = np.asarray(v)
        self.v = v
        self.st = np.zeros(v.shape, np.uint8) if st is None else np.asarray(st, np.uint8)
        if is_inexact(v.dtype) and lo is None:
            lo = hi = v.astype(bounds_dtype(v.dtype))
        if lo is not None:
            lo, hi = np.asarray(lo), np.asarray(hi)
        self.lo, self.hi = lo, hi

    @property
    def dtype(self):
        return self.v.dtype

    @property
    def shape(self):
        return self.v.shape

    @property
    def size(self):
        return self.v.size

    @property
    def ndim(self):
        return self.v.ndim

    def all_exact(self) -> bool:
        return bool((self.st == EXACT).all())

    def components(self):
        return [self.v, self.st] + ([self.lo, self.hi] if self.lo is not None else [])

    def map(self, fn):
        """A structural operation (reshape, transpose, index, ...) on every component."""
        return Ref(*[fn(c) for c in self.components()])

    def copy(self):
        return self.map(np.array)

    def __repr__(self):
        return f"Ref({self.v!r}, st={self.st.tolist()})"


def combine(fn, refs):
    """A structural operation of several arrays (concat, stack, where's selection): `fn`
    takes one list per component. The refs must share a dtype."""
    assert len({r.dtype for r in refs}) == 1, [r.dtype for r in refs]
    columns = zip(*[r.components() for r in refs])
    return Ref(*[fn(list(col)) for col in columns])


def broadcast(refs):
    shape = np.broadcast_shapes(*[r.shape for r in refs])
    return [r.map(lambda c: np.broadcast_to(c, shape)) for r in refs], shape


# ------------------------------------------------------------------------------ numbers

def finfo(dtype):
    return np.finfo(real_dtype(dtype))


def tolerance(dtype):
    return TOLERANCE[str(np.dtype(dtype))]


def subnormal(x, dtype):
    """Mask of nonzero values smaller in magnitude than the smallest normal of `dtype`."""
    a = np.abs(np.asarray(x, np.float64))
    return (a != 0) & (a < finfo(dtype).tiny)


def widen(lo, hi, dtype, approx=False):
    """Outward rounding of float64 bounds for a result of the real dtype `dtype`: two
    roundings (the operation's and the bound computation's), the flush of a subnormal, the
    transcendental tolerance for `approx`, and overflow (a bound past the largest finite
    value may round to it or to infinity)."""
    fi = finfo(dtype)
    rel, ab = 2 * float(fi.eps), float(fi.tiny)
    if approx:
        rtol, atol = tolerance(dtype)
        rel, ab = rel + rtol, ab + atol
    with np.errstate(all="ignore"):
        lo = np.where(np.isfinite(lo), lo - rel * np.abs(lo) - ab, lo)
        hi = np.where(np.isfinite(hi), hi + rel * np.abs(hi) + ab, hi)
        top = float(fi.max)
        hi = np.where(hi > top, np.inf, np.where(hi < -top, -top, hi))
        lo = np.where(lo < -top, -np.inf, np.where(np.isfinite(lo) & (lo > top), top, lo))
    return lo, hi


def nan_like(shape, dtype=np.float64):
    return np.full(shape, np.nan, dtype)


def finish(v, st, lo, hi):
    """A Ref from computed parts: exact subnormal results become ranges; the bounds of
    FREE elements are NaN; EXACT elements' bounds are their value."""
    v = np.asarray(v)
    st = np.array(st, np.uint8)
    if not is_inexact(v.dtype):
        return Ref(v, st)
    bd = bounds_dtype(v.dtype)
    exact64 = v.astype(bd)
    lo = np.where(st == EXACT, exact64, np.asarray(lo, bd))
    hi = np.where(st == EXACT, exact64, np.asarray(hi, bd))
    parts = [(v.real, lo.real, hi.real), (v.imag, lo.imag, hi.imag)] if is_complex(v.dtype) \
        else [(v, lo, hi)]
    flushed = np.zeros(v.shape, bool)
    for pv, _, _ in parts:
        flushed |= subnormal(pv, v.dtype)
    sub = flushed & (st == EXACT)
    if sub.any():
        st[sub] = RANGE
        lo, hi = np.array(lo), np.array(hi)
        if is_complex(v.dtype):
            w_lo, w_hi = widen(exact64.real, exact64.real, v.dtype)
            u_lo, u_hi = widen(exact64.imag, exact64.imag, v.dtype)
            lo[sub] = make_complex(w_lo, u_lo, np.complex128)[sub]
            hi[sub] = make_complex(w_hi, u_hi, np.complex128)[sub]
        else:
            w_lo, w_hi = widen(exact64, exact64, v.dtype)
            lo[sub], hi[sub] = w_lo[sub], w_hi[sub]
    nan = bd.type(complex(np.nan, np.nan)) if is_complex(v.dtype) else np.nan
    lo = np.where(st == FREE, nan, lo)
    hi = np.where(st == FREE, nan, hi)
    return Ref(v, st, lo, hi)


def make_complex(re, im, dtype):
    """A complex array from parts, keeping infinities and signed zeros (re + 1j * im
    would turn 1j * inf into nan + inf j)."""
    out = np.empty(np.broadcast_shapes(np.shape(re), np.shape(im)), dtype)
    out.real, out.imag = re, im
    return out


def parts(ref):
    """The real and imaginary parts of a complex Ref, as Refs of the real dtype (each with
    the element's status)."""
    rd = real_dtype(ref.dtype)
    re = Ref(ref.v.real.astype(rd), ref.st, ref.lo.real.copy(), ref.hi.real.copy())
    im = Ref(ref.v.imag.astype(rd), ref.st, ref.lo.imag.copy(), ref.hi.imag.copy())
    return re, im


def from_parts(re, im, dtype):
    st = np.maximum(re.st, im.st)
    v = make_complex(re.v, im.v, dtype)
    lo = make_complex(re.lo, im.lo, np.complex128)
    hi = make_complex(re.hi, im.hi, np.complex128)
    return finish(v, st, lo, hi)


def status_of(refs):
    """Element-wise: any FREE operand, and every operand EXACT (refs already broadcast)."""
    st = np.maximum.reduce([r.st for r in refs]) if refs else np.zeros((), np.uint8)
    return st == FREE, st == EXACT
