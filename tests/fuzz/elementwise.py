"""Reference element-wise functions on `Ref`s: the nominal value (NumPy, with tlaloc's
documented semantics where the standard leaves a choice: docs/precision.md), whether the
function is correctly rounded (its exact operands give an exact result), and its interval
extension (bounds of the result over ranges of operands).

Operands reach `apply` already promoted to one dtype (programs.py casts them first, as
tlaloc does), except for the few functions that change kind (comparisons, divide of
integers, which the caller casts to float64 first).
"""
from __future__ import annotations

import math

import numpy as np

from .reference import (EXACT, FREE, RANGE, Ref, broadcast, finish, from_parts, is_complex,
                        is_float, is_inexact, make_complex, nan_like, parts, real_dtype,
                        status_of, tolerance, widen)


class Fn:
    """An element-wise function's reference.

    value(*arrays): nominal result (cast to the output dtype by `apply`);
    exact: correctly rounded (or exact) on exact operands;
    bounds(*(lo, hi)): float64 interval extension for real operands, or None (ranges in,
        FREE out);
    approx: carries the transcendental tolerance (exact operands give a range around
        bounds' point value; a non-finite point value is exact: a special case);
    decide(*(lo, hi)): for boolean results of real operands, (value, known) from ranges;
    complex_fn(*refs): the complex case, built from real parts (None: FREE for ranges,
        a tolerance range for exact finite operands if approx, else exact)."""

    def __init__(self, value, *, exact=True, bounds=None, approx=False, decide=None,
                 complex_fn=None, unsigned_zero=False, inf_safe=None, inf_absorbs=False):
        self.value = value
        # inf_absorbs: an infinite operand makes the result +inf whatever the others are,
        # NaN and unknown (FREE) ones included (hypot, IEEE 754 and C99)
        self.inf_absorbs = inf_absorbs
        # inf_safe: a range reaching infinity (from an overflow) cannot make NaN here. True
        # for monotone functions of one operand and a few others; False for arithmetic,
        # where inf - inf or 0 * inf hides inside [max, inf] ranges (None: decided by arity)
        self.inf_safe = inf_safe
        self.exact = exact
        self.bounds = bounds
        self.approx = approx
        self.decide = decide
        self.complex_fn = complex_fn
        self.unsigned_zero = unsigned_zero


def apply(fn: Fn, refs, out_dtype) -> Ref:
    refs, shape = broadcast(refs)
    out = np.dtype(out_dtype)
    if refs and is_complex(refs[0].dtype) and fn.complex_fn is not None:
        return fn.complex_fn(*refs)
    free, exact = status_of(refs)
    with np.errstate(all="ignore"):
        v = np.asarray(fn.value(*[r.v for r in refs]))
        v = (v.real if is_complex(v.dtype) and not is_complex(out) else v).astype(out)
    v = np.broadcast_to(v, shape).copy()
    if refs and is_complex(refs[0].dtype):
        return _complex(fn, refs, out, v, free, exact)
    st = np.full(shape, FREE, np.uint8)
    if fn.exact:
        st[exact] = EXACT
    inexact_in = bool(refs) and all(r.lo is not None for r in refs)
    if not is_inexact(out):
        if fn.decide is not None and inexact_in:
            val, known = fn.decide(*[(r.lo, r.hi) for r in refs])
            use = ~free & (st != EXACT) & np.broadcast_to(known, shape)
            v = np.where(use, np.broadcast_to(val, shape), v).astype(out)
            st[use] = EXACT
        return finish(v, st, None, None)
    lo, hi = nan_like(shape), nan_like(shape)
    if fn.bounds is not None and inexact_in:
        with np.errstate(all="ignore"):
            lo_b, hi_b = fn.bounds(*[(r.lo, r.hi) for r in refs])
        lo_b = np.broadcast_to(np.asarray(lo_b, np.float64), shape)
        hi_b = np.broadcast_to(np.asarray(hi_b, np.float64), shape)
        if fn.approx:
            # exact operands: a non-finite point value is one of the standard's special
            # cases (log(0) = -inf, sin(inf) = nan): exact
            special = exact & ~free & ~np.isfinite(lo_b) & (np.isnan(lo_b) | (lo_b == hi_b))
            st[special] = EXACT
            v = np.where(special, lo_b.astype(out), v)
        w_lo, w_hi = widen(lo_b, hi_b, out, approx=fn.approx)
        ranged = ~free & (st != EXACT) & ~np.isnan(w_lo) & ~np.isnan(w_hi) & (w_lo <= w_hi)
        safe = fn.inf_safe if fn.inf_safe is not None else len(refs) == 1
        if not safe:
            for r in refs:
                ranged &= ~((np.isinf(r.lo) | np.isinf(r.hi)) & (r.lo != r.hi))
        st[ranged] = RANGE
        lo, hi = np.where(ranged, w_lo, lo), np.where(ranged, w_hi, hi)
    if fn.inf_absorbs:
        inf = np.zeros(shape, bool)
        for r in refs:
            inf |= definitely_infinite(r)
        st[inf] = EXACT
        v = np.where(inf, np.inf, v).astype(out)
    if fn.unsigned_zero:
        # the standard leaves the sign of these zeros open (maximum(-0, +0), sign(-0)): the
        # range [-0, +0], which `is_point` tells from an exact zero
        zero = (st == EXACT) & (v == 0)
        st[zero] = RANGE
        lo, hi = np.where(zero, -0.0, lo), np.where(zero, 0.0, hi)
    return finish(v, st, lo, hi)


def definitely_infinite(r: Ref):
    """Mask of the elements of a real Ref that are +-inf for sure: exact infinities and
    ranges pinned at one infinity ([inf, inf], e.g. hypot of a ranged value and inf)."""
    if r.lo is None or is_complex(r.dtype):
        return np.zeros(r.shape, bool)
    with np.errstate(invalid="ignore"):
        return (((r.st == EXACT) & np.isinf(r.v))
                | ((r.st == RANGE) & np.isinf(r.lo) & (r.lo == r.hi)))


def _complex(fn, refs, out, v, free, exact):
    shape = v.shape
    st = np.full(shape, FREE, np.uint8)
    if not fn.approx:
        st[exact] = EXACT
        if is_inexact(out) and not is_complex(out):
            return finish(v, st, nan_like(shape), nan_like(shape))
        if not is_inexact(out):
            return finish(v, st, None, None)
        return finish(v, st, nan_like(shape, np.complex128), nan_like(shape, np.complex128))
    # complex transcendental functions: exact finite operands give the nominal value within
    # the tolerance (relative to the modulus); XLA does not implement every C99 special
    # case for infinite or NaN parts (docs/precision.md), so those are FREE.
    finite = np.ones(shape, bool)
    for r in refs:
        finite &= np.isfinite(r.v.real) & np.isfinite(r.v.imag)
    v128 = np.asarray(fn.value(*[r.v.astype(np.complex128) for r in refs]))
    ok = exact & ~free & finite & np.isfinite(v128.real) & np.isfinite(v128.imag)
    return complex_range(v, ok, v128, np.abs(v128))


def complex_range(v, ok, center, scale, factor=1.0):
    """RANGE where `ok`: each part of `center` within factor * rtol * scale (+ rounding),
    FREE elsewhere. Used for complex results computed by formulas whose rounding differs
    between implementations (products, quotients, transcendental functions)."""
    out = v.dtype
    rtol, atol = tolerance(out)
    rd = real_dtype(out)
    fi = np.finfo(rd)
    pad = factor * rtol * scale + atol + float(fi.tiny)
    lo_r, hi_r = widen(center.real - pad, center.real + pad, rd)
    lo_i, hi_i = widen(center.imag - pad, center.imag + pad, rd)
    st = np.where(ok, RANGE, FREE).astype(np.uint8)
    lo = np.where(ok, make_complex(lo_r, lo_i, np.complex128), np.nan)
    hi = np.where(ok, make_complex(hi_r, hi_i, np.complex128), np.nan)
    return finish(v, st, lo, hi)


# ------------------------------------------------------------------------ intervals

def iv_add(a, b):
    return a[0] + b[0], a[1] + b[1]


def iv_sub(a, b):
    return a[0] - b[1], a[1] - b[0]


def _has_zero(a):
    return (a[0] <= 0) & (a[1] >= 0)


def _has_inf(a):
    return np.isinf(a[0]) | np.isinf(a[1])


def iv_mul(a, b):
    p = np.stack(np.broadcast_arrays(a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1]))
    # 0 * inf = nan: an endpoint product, or an infinity times a range that holds zero
    # inside ([inf, inf] * [-tiny, tiny]: the endpoints give -inf and inf, 0 * inf is nan)
    bad = np.isnan(p).any(axis=0) | (_has_zero(a) & _has_inf(b)) | (_has_zero(b) & _has_inf(a))
    return np.where(bad, np.nan, p.min(axis=0)), np.where(bad, np.nan, p.max(axis=0))


def iv_div(a, b):
    across_zero = (b[0] <= 0) & (b[1] >= 0)
    p = np.stack(np.broadcast_arrays(a[0] / b[0], a[0] / b[1], a[1] / b[0], a[1] / b[1]))
    bad = across_zero | np.isnan(p).any(axis=0)
    return np.where(bad, np.nan, p.min(axis=0)), np.where(bad, np.nan, p.max(axis=0))


def iv_abs(a):
    lo, hi = a
    nan = np.isnan(lo) | np.isnan(hi)       # a NaN operand stays NaN (no range of |x|)
    low = np.where(lo >= 0, lo, np.where(hi <= 0, -hi, 0.0))
    high = np.where(lo >= 0, hi, np.where(hi <= 0, -lo, np.maximum(-lo, hi)))
    return np.where(nan, np.nan, low), np.where(nan, np.nan, high)


def iv_square(a):
    lo, hi = iv_abs(a)
    return lo * lo, hi * hi


def is_point(lo, hi):
    """Whether the range [lo, hi] is one value: a zero whose sign is open, [-0, +0], is not
    (-0 == +0, but atan2 and copysign tell them apart); NaN, [nan, nan], is."""
    return ((lo == hi) & (np.signbit(lo) == np.signbit(hi))) | (np.isnan(lo) & np.isnan(hi))


def iv_copysign(a, b):
    """|a| with the sign of b, where b's sign is known (an exact zero's sign counts)."""
    mag_lo, mag_hi = iv_abs(a)
    point = is_point(b[0], b[1])
    positive = (b[0] > 0) | (point & (b[0] == 0) & ~np.signbit(b[0]))
    negative = (b[1] < 0) | (point & (b[0] == 0) & np.signbit(b[0]))
    lo = np.where(positive, mag_lo, np.where(negative, -mag_hi, np.nan))
    hi = np.where(positive, mag_hi, np.where(negative, -mag_lo, np.nan))
    return lo, hi


def increasing(f):
    return lambda *ivs: (f(*[i[0] for i in ivs]), f(*[i[1] for i in ivs]))


def decreasing(f):
    return lambda a: (f(a[1]), f(a[0]))


def _periodic(f, peak):
    """sin/cos over an interval: the endpoints, and +-1 where a peak or trough lies inside
    (peaks of f at peak + 2k pi, troughs at peak + pi + 2k pi)."""
    def bounds(a):
        lo, hi = a
        fl, fh = f(lo), f(hi)
        low, high = np.minimum(fl, fh), np.maximum(fl, fh)
        wide = (hi - lo) >= 2 * math.pi
        k_peak = np.ceil((lo - peak) / (2 * math.pi))
        has_peak = peak + 2 * math.pi * k_peak <= hi
        k_trough = np.ceil((lo - peak - math.pi) / (2 * math.pi))
        has_trough = peak + math.pi + 2 * math.pi * k_trough <= hi
        high = np.where(wide | has_peak, 1.0, high)
        low = np.where(wide | has_trough, -1.0, low)
        point = lo == hi
        return np.where(point, fl, low), np.where(point, fl, high)
    return bounds


def iv_cosh(a):
    lo, hi = iv_abs(a)
    return np.cosh(lo), np.cosh(hi)


def points(f):
    """Bounds for exact operands only (FREE for ranges): f at the points."""
    def bounds(*ivs):
        point = np.ones(np.broadcast_shapes(*[np.shape(i[0]) for i in ivs]), bool)
        for lo, hi in ivs:
            point &= is_point(lo, hi)
        val = f(*[i[0] for i in ivs])
        return np.where(point, val, np.nan), np.where(point, val, np.nan)
    return bounds


# ------------------------------------------------------------------------ decisions

def _less(a, b):
    true = a[1] < b[0]
    false = a[0] >= b[1]
    return true, true | false


def _less_equal(a, b):
    true = a[1] <= b[0]
    false = a[0] > b[1]
    return true, true | false


def _disjoint(a, b):
    return (a[1] < b[0]) | (b[1] < a[0])


def _isinf(a):
    both_inf = np.isinf(a[0]) & (a[0] == a[1])
    both_finite = np.isfinite(a[0]) & np.isfinite(a[1])
    return both_inf, both_inf | both_finite


def _signbit(a):
    return a[1] < 0, (a[0] > 0) | (a[1] < 0)


def _nonzero(a):
    """x != 0 from a range: known true where the range excludes zero."""
    return (a[0] > 0) | (a[1] < 0), (a[0] > 0) | (a[1] < 0) | ((a[0] == 0) & (a[1] == 0))


# --------------------------------------------------------------------- nominal values

def _f64(f):
    """A transcendental function computed in float64 (the reference for float32 too)."""
    def value(*xs):
        if xs and is_complex(xs[0].dtype):
            return f(*xs)
        return f(*[np.asarray(x, np.float64) for x in xs])
    return value


def floor_divide_value(a, b):
    out = np.floor_divide(a, b)
    if is_float(a.dtype):
        # the standard: +-inf // nonzero finite is +-inf (NumPy gives nan)
        special = np.isinf(a) & np.isfinite(b) & (b != 0)
        out = np.where(special, a / b, out).astype(out.dtype)
    return out


def elementwise_power(a, b):
    """np.power element by element: an exponent that is one value (0-d or broadcast) takes
    NumPy's fast path (sqrt for 0.5: (-0) ** 0.5 = -0, (-inf) ** 0.5 = nan), where C's pow,
    the standard and XLA give +0 and +inf."""
    shape = np.broadcast_shapes(np.shape(a), np.shape(b))
    flat = [np.array(np.broadcast_to(v, shape)).reshape(-1) for v in (a, b)]
    return np.power(*flat).reshape(shape)


def pow_value(a, b):
    if a.dtype.kind not in "iu":
        return elementwise_power(a, b)
    # tlaloc (docs/precision.md): a negative exponent gives 0 except for bases 1 and -1;
    # integer overflow wraps, and exponents from 64 on give 0 for other bases
    minus_one = np.array(-1).astype(a.dtype)
    negative = b < 0 if b.dtype.kind == "i" else np.zeros(b.shape, bool)
    out = np.power(a, np.where(negative, 0, b).astype(b.dtype))
    inverse = np.where(a == 1, 1, np.where(a == minus_one, np.where(b % 2 == 0, 1, minus_one), 0))
    out = np.where(negative, inverse.astype(a.dtype), out)
    unit = (a == 1) | (a == minus_one) | (a == 0)
    return np.where((b >= 64) & ~unit, np.zeros_like(a), out).astype(a.dtype)


def shift_value(left):
    """Shifts by the bit width or more, or by a negative amount: 0, or the sign bits for
    an arithmetic right shift (XLA's semantics, which tlaloc documents)."""
    def value(a, b):
        bits = a.dtype.itemsize * 8
        big = (b < 0) | (b >= bits) if b.dtype.kind == "i" else (b >= bits)
        safe = np.where(big, 0, b).astype(a.dtype)
        if left:
            return np.where(big, 0, np.left_shift(a, safe)).astype(a.dtype)
        fill = np.where(a < 0, -1, 0).astype(a.dtype) if a.dtype.kind == "i" else np.zeros_like(a)
        return np.where(big, fill, np.right_shift(a, safe)).astype(a.dtype)
    return value


def nextafter_value(a, b):
    return np.where(a == b, b, np.nextafter(a, b)).astype(a.dtype)


def round_value(a):
    if a.dtype.kind in "biu":
        return a.copy()
    return np.round(a) if is_complex(a.dtype) else np.rint(a)


def _identity_int(f):
    return lambda a: a.copy() if a.dtype.kind in "biu" else f(a)


# --------------------------------------------------------------------- complex cases

def _parts_unary(f_re, f_im):
    def fn(z):
        re, im = parts(z)
        return from_parts(f_re(re, im), f_im(re, im), z.dtype)
    return fn


def _neg(r):
    return apply(FUNCTIONS["negative"], [r], r.dtype)


def _complex_add(sign):
    def fn(a, b):
        ar, ai = parts(a)
        br, bi = parts(b)
        f = FUNCTIONS["add" if sign > 0 else "subtract"]
        return from_parts(apply(f, [ar, br], ar.dtype), apply(f, [ai, bi], ai.dtype), a.dtype)
    return fn


def _complex_mul(a, b):
    """Rectangle interval product; never exact (implementations may fuse the products), and
    FREE where a part is not finite (implementation-defined by the standard)."""
    ar, ai = parts(a)
    br, bi = parts(b)
    mul, add, sub = FUNCTIONS["multiply"], FUNCTIONS["add"], FUNCTIONS["subtract"]
    rd = ar.dtype
    re = apply(sub, [apply(mul, [ar, br], rd), apply(mul, [ai, bi], rd)], rd)
    im = apply(add, [apply(mul, [ar, bi], rd), apply(mul, [ai, br], rd)], rd)
    out = from_parts(re, im, a.dtype)
    return _inexact_complex(out, [a, b])


def _inexact_complex(out, operands):
    """Demote EXACT to RANGE (widened by one rounding of each part relative to the modulus),
    and FREE where an operand or the result has a non-finite part."""
    finite = np.isfinite(out.v.real) & np.isfinite(out.v.imag)
    for r in operands:
        rv = np.broadcast_to(r.v, out.shape)
        finite &= np.isfinite(rv.real) & np.isfinite(rv.imag)
    st = np.where(finite, np.where(out.st == EXACT, RANGE, out.st), FREE).astype(np.uint8)
    rd = real_dtype(out.dtype)
    eps = float(np.finfo(rd).eps)
    scale = 4 * eps * (np.abs(out.lo) + np.abs(out.hi)) + float(np.finfo(rd).tiny)
    lo = make_complex(out.lo.real - scale, out.lo.imag - scale, np.complex128)
    hi = make_complex(out.hi.real + scale, out.hi.imag + scale, np.complex128)
    return finish(out.v, st, lo, hi)


def _complex_approx(f, domain=None):
    """A complex result computed by a formula: within the tolerance of exact finite
    operands (FREE otherwise, and outside `domain`: where the formula's intermediates may
    overflow in single precision). The factor covers quotients' extra roundings."""
    def fn(*refs):
        shape = np.broadcast_shapes(*[r.shape for r in refs])
        refs = [r.map(lambda c: np.broadcast_to(c, shape)) for r in refs]
        free, exact = status_of(refs)
        out = refs[0].dtype
        with np.errstate(all="ignore"):
            v128 = np.asarray(f(*[r.v.astype(np.complex128) for r in refs]), np.complex128)
        finite = np.isfinite(v128.real) & np.isfinite(v128.imag)
        scale = np.abs(v128)
        for r in refs:
            finite &= np.isfinite(r.v.real) & np.isfinite(r.v.imag)
        v = v128.astype(out)
        ok = exact & ~free & finite
        if domain is not None:
            ok &= domain(*[r.v.astype(np.complex128) for r in refs], dtype=out)
        return complex_range(v, ok, v128, scale, factor=4.0)
    return fn


def _pow_domain(a, b, dtype):
    """Complex pow is exp(b * log(a)): moderate operands only (and a != 0)."""
    return (np.abs(a) > 1e-3) & (np.abs(a) < 100) & (np.abs(b) < 100)


def _moderate(*zs, dtype):
    """Parts whose squares neither overflow nor underflow: a complex quotient's formula
    squares them (NumPy's own complex64 (max + max j) / (max + max j) is nan + 0j)."""
    fi = np.finfo(real_dtype(dtype))
    top, bottom = np.sqrt(float(fi.max)) / 4, np.sqrt(float(fi.tiny)) * 4
    ok = np.ones(np.broadcast_shapes(*[np.shape(z) for z in zs]), bool)
    for z in zs:
        for part in (np.abs(z.real), np.abs(z.imag)):
            ok &= (part < top) & ((part == 0) | (part > bottom))
    return ok


def _complex_equal(negate):
    def fn(a, b):
        ar, ai = parts(a)
        br, bi = parts(b)
        e = FUNCTIONS["equal"]
        re = apply(e, [ar, br], np.bool_)
        im = apply(e, [ai, bi], np.bool_)
        both = apply(FUNCTIONS["logical_and"], [re, im], np.bool_)
        # equal is known False where either part is known False
        known_false = ((re.st == EXACT) & ~re.v) | ((im.st == EXACT) & ~im.v)
        st = np.where(known_false, EXACT, both.st).astype(np.uint8)
        v = np.where(known_false, False, both.v)
        return Ref(~v if negate else v, st)
    return fn


def _complex_predicate(name, any_part):
    def fn(z):
        re, im = parts(z)
        f = FUNCTIONS[name]
        a, b = apply(f, [re], np.bool_), apply(f, [im], np.bool_)
        op = FUNCTIONS["logical_or" if any_part else "logical_and"]
        return apply(op, [a, b], np.bool_)
    return fn


def _complex_isnan(z):
    re, im = parts(z)
    f = FUNCTIONS["isnan"]
    return apply(FUNCTIONS["logical_or"], [apply(f, [re], np.bool_), apply(f, [im], np.bool_)],
                 np.bool_)


def _complex_isinf(z):
    """Either part infinite (true even when the other is NaN)."""
    re, im = parts(z)
    f = FUNCTIONS["isinf"]
    a, b = apply(f, [re], np.bool_), apply(f, [im], np.bool_)
    out = apply(FUNCTIONS["logical_or"], [a, b], np.bool_)
    known_true = ((a.st == EXACT) & a.v) | ((b.st == EXACT) & b.v)
    return Ref(out.v | known_true, np.where(known_true, EXACT, out.st))


def _complex_real(z):
    return parts(z)[0]


def _complex_imag(z):
    return parts(z)[1]


def _complex_conj(z):
    re, im = parts(z)
    return from_parts(re, _neg(im), z.dtype)


def _complex_round(z):
    re, im = parts(z)
    f = FUNCTIONS["round"]
    return from_parts(apply(f, [re], re.dtype), apply(f, [im], im.dtype), z.dtype)


def _complex_abs(z):
    re, im = parts(z)
    return apply(FUNCTIONS["hypot"], [re, im], re.dtype)


def _complex_bool(name):
    def fn(a, b):
        ta = apply(FUNCTIONS["not_equal"], [a, Ref(np.zeros((), a.dtype))], np.bool_)
        tb = apply(FUNCTIONS["not_equal"], [b, Ref(np.zeros((), b.dtype))], np.bool_)
        return apply(FUNCTIONS[name], [ta, tb], np.bool_)
    return fn


# ------------------------------------------------------------------------- the table

_add = Fn(lambda a, b: np.logical_or(a, b) if a.dtype.kind == "b" else a + b, bounds=iv_add,
          complex_fn=_complex_add(1))
_sub = Fn(np.subtract, bounds=iv_sub, complex_fn=_complex_add(-1))

FUNCTIONS = {
    # arithmetic: correctly rounded
    "add": _add,
    "subtract": _sub,
    "multiply": Fn(lambda a, b: np.logical_and(a, b) if a.dtype.kind == "b" else a * b,
                   bounds=iv_mul, complex_fn=_complex_mul),
    "divide": Fn(np.divide, bounds=iv_div, complex_fn=_complex_approx(np.divide, _moderate)),
    "negative": Fn(np.negative, bounds=lambda a: (-a[1], -a[0]),
                   complex_fn=_parts_unary(lambda re, im: _neg(re), lambda re, im: _neg(im))),
    "positive": Fn(np.copy, bounds=lambda a: a, complex_fn=lambda z: z.copy()),
    "abs": Fn(np.abs, bounds=iv_abs, complex_fn=_complex_abs),
    "square": Fn(lambda a: a * a, bounds=iv_square,
                 complex_fn=lambda z: _complex_mul(z, z)),
    "sqrt": Fn(np.sqrt, bounds=lambda a: (np.sqrt(a[0]), np.sqrt(a[1])),
               complex_fn=_complex_approx(np.sqrt)),
    "reciprocal": Fn(lambda a: np.divide(np.ones_like(a), a),
                     bounds=lambda a: iv_div((np.ones_like(a[0]), np.ones_like(a[0])), a),
                     complex_fn=_complex_approx(lambda z: 1 / z, _moderate)),
    "floor_divide": Fn(floor_divide_value),
    "remainder": Fn(np.remainder),
    "maximum": Fn(np.maximum, bounds=increasing(np.maximum), unsigned_zero=True, inf_safe=True),
    "minimum": Fn(np.minimum, bounds=increasing(np.minimum), unsigned_zero=True, inf_safe=True),
    "copysign": Fn(np.copysign, bounds=lambda a, b: iv_copysign(a, b), inf_safe=True),
    "nextafter": Fn(nextafter_value),
    # rounding: exact, monotone step functions
    "floor": Fn(_identity_int(np.floor), bounds=increasing(np.floor)),
    "ceil": Fn(_identity_int(np.ceil), bounds=increasing(np.ceil)),
    "trunc": Fn(_identity_int(np.trunc), bounds=increasing(np.trunc)),
    "round": Fn(round_value, bounds=increasing(np.rint), complex_fn=_complex_round),
    "sign": Fn(np.sign, bounds=increasing(np.sign), unsigned_zero=True,
               complex_fn=_complex_approx(lambda z: np.where(z == 0, 0, z / np.abs(z)))),
    # transcendental (documented tolerances)
    "exp": Fn(_f64(np.exp), exact=False, approx=True, bounds=increasing(np.exp),
              complex_fn=_complex_approx(np.exp)),
    "expm1": Fn(_f64(np.expm1), exact=False, approx=True, bounds=increasing(np.expm1),
                complex_fn=_complex_approx(np.expm1)),
    "log": Fn(_f64(np.log), exact=False, approx=True, bounds=increasing(np.log),
              complex_fn=_complex_approx(np.log)),
    "log1p": Fn(_f64(np.log1p), exact=False, approx=True, bounds=increasing(np.log1p)),
    "log2": Fn(_f64(np.log2), exact=False, approx=True, bounds=increasing(np.log2)),
    "log10": Fn(_f64(np.log10), exact=False, approx=True, bounds=increasing(np.log10)),
    "sin": Fn(_f64(np.sin), exact=False, approx=True, bounds=_periodic(np.sin, math.pi / 2),
              inf_safe=False,
              complex_fn=_complex_approx(np.sin)),
    "cos": Fn(_f64(np.cos), exact=False, approx=True, bounds=_periodic(np.cos, 0.0), inf_safe=False,
              complex_fn=_complex_approx(np.cos)),
    "tan": Fn(_f64(np.tan), exact=False, approx=True, bounds=points(np.tan), inf_safe=False),
    "sinh": Fn(_f64(np.sinh), exact=False, approx=True, bounds=increasing(np.sinh)),
    "cosh": Fn(_f64(np.cosh), exact=False, approx=True, bounds=iv_cosh),
    "tanh": Fn(_f64(np.tanh), exact=False, approx=True, bounds=increasing(np.tanh),
               complex_fn=_complex_approx(np.tanh)),
    "asin": Fn(_f64(np.arcsin), exact=False, approx=True, bounds=increasing(np.arcsin)),
    "acos": Fn(_f64(np.arccos), exact=False, approx=True, bounds=decreasing(np.arccos)),
    "atan": Fn(_f64(np.arctan), exact=False, approx=True, bounds=increasing(np.arctan)),
    "asinh": Fn(_f64(np.arcsinh), exact=False, approx=True, bounds=increasing(np.arcsinh)),
    "acosh": Fn(_f64(np.arccosh), exact=False, approx=True, bounds=increasing(np.arccosh)),
    "atanh": Fn(_f64(np.arctanh), exact=False, approx=True, bounds=increasing(np.arctanh)),
    "atan2": Fn(_f64(np.arctan2), exact=False, approx=True, bounds=points(np.arctan2)),
    "hypot": Fn(_f64(np.hypot), exact=False, approx=True, inf_safe=True, inf_absorbs=True,
                bounds=lambda a, b: increasing(np.hypot)(iv_abs(a), iv_abs(b))),
    "logaddexp": Fn(_f64(np.logaddexp), exact=False, approx=True, inf_safe=True,
                    bounds=increasing(np.logaddexp)),
    "pow": Fn(pow_value, exact=False, approx=True, bounds=points(elementwise_power),
              complex_fn=_complex_approx(np.power, _pow_domain)),
    # comparisons and predicates
    "equal": Fn(np.equal, decide=lambda a, b: (False, _disjoint(a, b)),
                complex_fn=_complex_equal(False)),
    "not_equal": Fn(np.not_equal, decide=lambda a, b: (True, _disjoint(a, b)),
                    complex_fn=_complex_equal(True)),
    "less": Fn(np.less, decide=_less),
    "less_equal": Fn(np.less_equal, decide=_less_equal),
    "greater": Fn(np.greater, decide=lambda a, b: _less(b, a)),
    "greater_equal": Fn(np.greater_equal, decide=lambda a, b: _less_equal(b, a)),
    "isnan": Fn(np.isnan, decide=lambda a: (False, True), complex_fn=_complex_isnan),
    "isinf": Fn(np.isinf, decide=_isinf, complex_fn=_complex_isinf),
    "isfinite": Fn(np.isfinite, decide=lambda a: (lambda t, k: (~t & k, k))(*_isinf(a)),
                   complex_fn=_complex_predicate("isfinite", any_part=False)),
    "signbit": Fn(np.signbit, decide=_signbit),
    # logical and bitwise
    "logical_and": Fn(np.logical_and, complex_fn=_complex_bool("logical_and")),
    "logical_or": Fn(np.logical_or, complex_fn=_complex_bool("logical_or")),
    "logical_xor": Fn(np.logical_xor, complex_fn=_complex_bool("logical_xor")),
    "logical_not": Fn(np.logical_not),
    "bitwise_and": Fn(np.bitwise_and),
    "bitwise_or": Fn(np.bitwise_or),
    "bitwise_xor": Fn(np.bitwise_xor),
    "bitwise_invert": Fn(np.invert),
    "bitwise_left_shift": Fn(shift_value(True)),
    "bitwise_right_shift": Fn(shift_value(False)),
    # complex parts (real input: the standard's real/imag/conj of real arrays)
    "real": Fn(np.real, bounds=lambda a: a, complex_fn=_complex_real),
    "imag": Fn(lambda a: np.zeros_like(a), bounds=lambda a: (0 * a[0], 0 * a[0]),
               complex_fn=_complex_imag),
    "conj": Fn(np.conj, bounds=lambda a: a, complex_fn=_complex_conj),
}

def apply_named(name, refs, out_dtype) -> Ref:
    """`apply` by name, with the NaN-sign rule of copysign and signbit: they read a NaN's
    sign bit, which operations set as they like (x86 makes -nan for inf - inf): FREE."""
    out = apply(FUNCTIONS[name], refs, out_dtype)
    if name in ("copysign", "signbit"):
        arg = refs[1] if name == "copysign" else refs[0]
        arg_v = np.broadcast_to(arg.v, out.shape)
        nan = np.isnan(arg_v) if is_inexact(arg.dtype) else np.zeros(out.shape, bool)
        if nan.any():
            st = np.where(nan, FREE, out.st)
            out = finish(out.v, st, out.lo, out.hi) if out.lo is not None else Ref(out.v, st)
    return out
