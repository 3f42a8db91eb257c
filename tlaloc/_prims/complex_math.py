"""The formulas of the complex elementwise primitives (see _prims/formula.py).

Each primitive of _prims/elementwise.py that needs one names its formula here at its
declaration (`formula=complex_math.sinh`); the formula is its emit rule and its interpreter
implementation for complex operands, so the namespace, derivative rules and both backends
get the same numerics. Three kinds of numerics:

* accurate formulas from real functions where XLA's complex op loses digits: sinh and sin
  (XLA's sinh is (e^z - e^-z) / 2: sinh(1e-200) gives 0), cosh and cos, and log1p (XLA
  computes log(1 + z));
* branch cuts that follow the sign of zero (sqrt, log, asin, acos, atan, asinh, acosh,
  atanh): XLA ignores it (sqrt(-1.5 - 0j) gives +1.22j, not -1.22j); evaluating in the
  upper half plane (the first quadrant for odd functions) and mapping back makes
  f(conj z) = conj f(z), and f(-z) = -f(z) for the odd ones, hold;
* the standard's (C99 Annex G's) special values at infinite and NaN parts, which XLA does
  not implement (exp(inf + inf j) is nan + nan j, not inf + nan j; sqrt(inf + nan j) is
  nan + nan j, not inf + nan j) and NumPy misses in places (expm1 is exp(z) - 1). The
  special value replaces the base result only where an input part is not finite.

Special-value rules are written for the first quadrant (x >= 0 and y >= 0, by sign bit) or
the upper half plane where the function has the matching symmetries; `_special_parts` maps
the other quadrants there and back. Functions of i*z (sin, cos, tan, asin, atan) are derived
from sinh, cosh, tanh, asinh, atanh.
"""
from __future__ import annotations

import math

from .. import _dtypes as dt
from . import ad, lax

_PI = math.pi


# ----------------------------------------------------------------------------- node helpers

def c(like, v):
    return ad.const(like, v)


def eq(a, b):
    return lax.compare(a, b, direction="EQ")


def isnan(a):
    return lax.compare(a, a, direction="NE")


def isinf(a):
    return eq(lax.abs(a), c(a, math.inf))


isfinite = lax.is_finite
select = lax.select
and_, or_, xor, not_ = lax.bitwise_and, lax.bitwise_or, lax.bitwise_xor, lax.bitwise_not
mul, sub, neg, fabs = lax.multiply, lax.subtract, lax.negate, lax.abs
atan2 = lax.atan2


def signbit(a):
    bits = lax.bitcast_convert(a, dtype=dt.int32 if a.aval.dtype.bits == 32 else dt.int64)
    return lax.compare(bits, ad.zeros(bits), direction="LT")


def parts(z):
    return lax.real(z), lax.imag(z)


# ----------------------------------------------------------------------------- special values

def _exp_half(x, y):
    """exp for y >= 0."""
    inf, zero, nan = c(x, math.inf), c(x, 0.0), c(x, math.nan)
    pinf, ninf, yfin = eq(x, inf), eq(x, c(x, -math.inf)), isfinite(y)
    re = select(pinf, select(yfin, mul(inf, lax.cos(y)), inf),
                select(ninf, select(yfin, mul(zero, lax.cos(y)), zero), nan))
    im = select(pinf, select(yfin, select(eq(y, zero), zero, mul(inf, lax.sin(y))), nan),
                select(ninf, select(yfin, mul(zero, lax.sin(y)), zero),
                       select(and_(isnan(x), eq(y, zero)), zero, nan)))
    return re, im


def _expm1_half(x, y):
    re, im = _exp_half(x, y)
    return sub(re, c(x, 1.0)), im


def _log_any(x, y):
    """log and log1p, every quadrant (atan2 carries the signs)."""
    some_inf = or_(isinf(x), isinf(y))
    return select(some_inf, c(x, math.inf), c(x, math.nan)), atan2(y, x)


def _sqrt_half(x, y):
    inf, zero, nan = c(x, math.inf), c(x, 0.0), c(x, math.nan)
    yinf, ynan = isinf(y), isnan(y)
    pinf, ninf = eq(x, inf), eq(x, c(x, -math.inf))
    re = select(yinf, inf, select(pinf, inf, select(ninf, select(ynan, nan, zero), nan)))
    im = select(yinf, inf, select(pinf, select(ynan, nan, zero), select(ninf, inf, nan)))
    return re, im


def _acos_half(x, y):
    some_inf = or_(isinf(x), isinf(y))
    some_nan = or_(isnan(x), isnan(y))
    nan = c(x, math.nan)
    re = select(some_inf, select(some_nan, nan, atan2(y, x)),
                select(eq(x, c(x, 0.0)), c(x, _PI / 2), nan))
    im = select(some_inf, c(x, -math.inf), nan)
    return re, im


def _acosh_half(x, y):
    some_inf = or_(isinf(x), isinf(y))
    nan = c(x, math.nan)
    re = select(some_inf, c(x, math.inf), nan)
    im = select(some_inf, atan2(y, x), select(eq(x, c(x, 0.0)), c(x, _PI / 2), nan))
    return re, im


def _asinh_quadrant(x, y):
    some_inf = or_(isinf(x), isinf(y))
    zero, nan = c(x, 0.0), c(x, math.nan)
    re = select(some_inf, c(x, math.inf), nan)
    im = select(some_inf, atan2(y, x), select(and_(isnan(x), eq(y, zero)), zero, nan))
    return re, im


def _atanh_quadrant(x, y):
    zero, nan, half_pi = c(x, 0.0), c(x, math.nan), c(x, _PI / 2)
    xinf, yinf = isinf(x), isinf(y)
    re = select(or_(xinf, yinf), zero, select(eq(x, zero), zero, nan))
    im = select(yinf, half_pi, select(xinf, select(isnan(y), nan, half_pi), nan))
    return re, im


def _cosh_quadrant(x, y):
    inf, zero, nan = c(x, math.inf), c(x, 0.0), c(x, math.nan)
    xinf, yfin = isinf(x), isfinite(y)
    re = select(xinf, select(yfin, mul(inf, lax.cos(y)), inf), nan)
    im = select(and_(xinf, yfin), select(eq(y, zero), zero, mul(inf, lax.sin(y))),
                select(or_(eq(x, zero), and_(isnan(x), eq(y, zero))), zero, nan))
    return re, im


def _sinh_quadrant(x, y):
    inf, zero, nan = c(x, math.inf), c(x, 0.0), c(x, math.nan)
    xinf, yfin = isinf(x), isfinite(y)
    re = select(xinf, select(yfin, mul(inf, lax.cos(y)), inf), select(eq(x, zero), zero, nan))
    im = select(and_(xinf, yfin), select(eq(y, zero), zero, mul(inf, lax.sin(y))),
                select(and_(isnan(x), eq(y, zero)), zero, nan))
    return re, im


def _tanh_quadrant(x, y):
    zero, nan = c(x, 0.0), c(x, math.nan)
    xinf = isinf(x)
    re = select(xinf, c(x, 1.0), select(eq(x, zero), zero, nan))
    im = select(or_(xinf, and_(isnan(x), eq(y, zero))), zero, nan)
    return re, im


# symmetry of each rule: "conj" (upper half plane: flip the imaginary part for y < 0),
# "odd" (first quadrant, f(-z) = -f(z)), "even" (first quadrant, f(-z) = f(z)), None (any)
_RULES = {
    "exp": (_exp_half, "conj"), "expm1": (_expm1_half, "conj"),
    "log": (_log_any, None), "log1p": (_log_any, None),
    "sqrt": (_sqrt_half, "conj"), "acos": (_acos_half, "conj"), "acosh": (_acosh_half, "conj"),
    "asinh": (_asinh_quadrant, "odd"), "atanh": (_atanh_quadrant, "odd"),
    "sinh": (_sinh_quadrant, "odd"), "tanh": (_tanh_quadrant, "odd"),
    "cosh": (_cosh_quadrant, "even"),
}
# f(z) = g(i z) (cos), or -i g(i z) (sin, tan, asin, atan)
_OF_IZ = {"cos": ("cosh", False), "sin": ("sinh", True), "tan": ("tanh", True),
          "asin": ("asinh", True), "atan": ("atanh", True)}


def _special_parts(name, x, y):
    """(re, im) of the special value of `name` at x + i y (meaningful where x or y is not
    finite)."""
    if name in _OF_IZ:
        base, times_minus_i = _OF_IZ[name]
        u, v = _special_parts(base, neg(y), x)  # g(i z), i z = -y + i x
        return (v, neg(u)) if times_minus_i else (u, v)
    rule, symmetry = _RULES[name]
    if symmetry is None:
        return rule(x, y)
    sy = signbit(y)
    if symmetry == "conj":
        re, im = rule(x, fabs(y))
        return re, select(sy, neg(im), im)
    sx = signbit(x)
    re, im = rule(fabs(x), fabs(y))
    if symmetry == "odd":        # f(x + iy) = -conj f(-x + iy) = conj f(x - iy)
        return select(sx, neg(re), re), select(sy, neg(im), im)
    flip = xor(sx, sy)           # even: f(-z) = f(z), with conj symmetry
    return re, select(flip, neg(im), im)


def with_special_values(name, z, out):
    """`out` (a result of `name` at the complex `z`) with the standard's special values
    where a part of z is not finite."""
    x, y = parts(z)
    re, im = _special_parts(name, x, y)
    special = not_(and_(isfinite(x), isfinite(y)))
    return select(special, lax.complex(re, im), out)


# ----------------------------------------------------------------------------- formulas

def _plain(name):
    """Formula: the primitive's own op, with the special values."""
    op = getattr(lax, name)

    def formula(z):
        return with_special_values(name, z, op(z))
    formula.__name__ = name
    return formula


def _symmetric(name, odd, finite=None):
    """Formula of a function with a branch cut: evaluated in the upper half plane (the
    first quadrant if odd) and mapped back, so the sign of a zero part picks the side.
    `finite(w)` gives the value at finite w (default: the backend's own complex op)."""
    op = finite or getattr(lax, name)

    def formula(z):
        re, im = parts(z)
        w = lax.complex(fabs(re) if odd else re, fabs(im))
        w = with_special_values(name, w, op(w))
        wr, wi = parts(w)
        wi = select(signbit(im), neg(wi), wi)           # conj(f(conj z))
        if odd:
            wr = select(signbit(re), neg(wr), wr)       # -conj(f(-conj z))
        return lax.complex(wr, wi)
    formula.__name__ = name
    return formula


def _eq0(a):
    return eq(a, ad.zeros(a))


def _hyperbolic_times(h, x, t):
    """h(x) * t for h = lax.cosh or lax.sinh, finite where h(x) alone overflows but the
    product does not (cos(1e-13 + 100i) is inf - 4.7e30i in float32, not inf - inf i): past
    |x| = 20, cosh x and |sinh x| are e^|x| / 2 to working precision, taken as
    (e^(|x|/2) / 2 * t) * e^(|x|/2), as exp's parts are."""
    half = lax.exp(mul(fabs(x), c(x, 0.5)))
    scaled = mul(mul(mul(half, c(x, 0.5)), t), half)
    if h is lax.sinh:
        scaled = select(signbit(x), neg(scaled), scaled)
    big = lax.compare(fabs(x), c(x, 20.0), direction="GT")
    return select(big, scaled, mul(h(x), t))


def _sinh_parts(x, y):
    """sinh(x + iy) = sinh(x) lax.cos(y) + i cosh(x) lax.sin(y), from real functions. A zero part
    stays exact (and signed): sinh(x + 0i) = sinh(x) + 0i, sinh(0 + iy) = 0 + i lax.sin(y)."""
    sx = lax.sinh(x)
    re = select(_eq0(y), sx, _hyperbolic_times(lax.sinh, x, lax.cos(y)))
    im = select(_eq0(y), y, _hyperbolic_times(lax.cosh, x, lax.sin(y)))
    # C99: sinh(+-0 + i inf) is +-0 + i nan, sinh(+-inf + i inf) is +-inf + i nan (y inf or nan)
    keep = and_(or_(_eq0(x), isinf(x)), not_(isfinite(y)))
    return select(keep, x, re), im


def sinh(z):
    return lax.complex(*_sinh_parts(*parts(z)))


def sin(z):
    # sin(z) = -i sinh(iz), iz = -y + ix
    x, y = parts(z)
    a, b = _sinh_parts(neg(y), x)
    return lax.complex(b, neg(a))


def log1p(z):
    """log1p(z) = log|1 + z| + i arg(1 + z). XLA computes log(1 + z), which loses the digits
    of a small z; for |x|, |y| < 0.5 use log|1 + z| = log1p(x (2 + x) + y^2) / 2."""
    x, y = parts(z)
    u = lax.add(x, c(x, 1))
    small = lax.compare(lax.maximum(fabs(x), fabs(y)), c(x, 0.5), direction="LT")
    near = lax.log1p(lax.add(mul(x, lax.add(x, c(x, 2))), mul(y, y)))
    near = mul(near, c(x, 0.5))
    far = lax.log(hypot(u, y))
    return lax.complex(select(small, near, far), atan2(y, u))


def hypot(a, b):
    """sqrt(a^2 + b^2) of real nodes without overflow or underflow; inf if either is."""
    a, b = fabs(a), fabs(b)
    hi, lo = lax.maximum(a, b), lax.minimum(a, b)
    zero = c(hi, 0.0)
    is_zero = eq(hi, zero)
    ratio = lax.divide(lo, select(is_zero, c(hi, 1.0), hi))
    r = mul(hi, lax.sqrt(lax.add(c(hi, 1.0), mul(ratio, ratio))))
    inf = c(hi, math.inf)
    any_inf = or_(eq(a, inf), eq(b, inf))
    return select(any_inf, inf, select(is_zero, zero, r))


def abs(z):
    """|z|; an infinite part makes it +inf even when the other part is NaN (XLA gives NaN)."""
    out = lax.abs(z)
    x, y = parts(z)
    return select(or_(isinf(x), isinf(y)), c(out, math.inf), out)


def divide(z, w):
    """z / w by Smith's method, as NumPy divides: scale by the larger part of w, so that
    neither |w|^2 nor the products overflow or underflow where the quotient does not (XLA
    divides by c^2 + d^2: (0.947 + 3.4e38j) / itself gave 0 in complex64). A zero w gives
    the parts of z over +0 (inf or nan parts, as in NumPy)."""
    a, b = parts(z)
    cr, ci = parts(w)
    wide = lax.compare(fabs(cr), fabs(ci), direction="GE")   # False for a NaN part
    # wide: w = cr (1 + r i) with r = ci / cr; else w = ci (r + i) with r = cr / ci
    big, small = select(wide, cr, ci), select(wide, ci, cr)
    zero = eq(big, c(big, 0.0))
    r = lax.divide(small, select(zero, c(big, 1.0), big))
    # divided, not multiplied by 1 / den: that reciprocal is subnormal (flushed to 0) for
    # |w| near the largest float
    den = lax.add(big, mul(small, r))
    re_w = select(wide, lax.add(a, mul(b, r)), lax.add(mul(a, r), b))
    im_w = select(wide, sub(b, mul(a, r)), sub(mul(b, r), a))
    by_zero = and_(wide, zero)
    over_zero = fabs(big)     # +0 here: inf or nan parts with z's signs
    re = select(by_zero, lax.divide(a, over_zero), lax.divide(re_w, den))
    im = select(by_zero, lax.divide(b, over_zero), lax.divide(im_w, den))
    return lax.complex(re, im)


def sign(x):
    """sign(+-0 +- 0j) is 0 + 0j in the standard, and sign(-0.0) is 0 (+0 in the official
    suite); XLA returns x (keeping the zeros' signs). Real and complex floats.

    Complex: each part over |z|, as NumPy (XLA's complex sign and a complex division by
    |z| + 0j differ in signs of zero parts); one infinite part gives its direction
    (sign(inf + 1j) = 1 + 0j), a NaN part or two infinite ones NaN + NaN j."""
    zero = ad.zeros(x)
    if x.aval.dtype.kind != "c":
        return select(eq(x, zero), zero, lax.sign(x))
    re, im = parts(x)
    r = lax.abs(x)
    zr, one, nan = c(re, 0.0), c(re, 1.0), c(re, math.nan)

    def signed(magnitude, v):
        return select(signbit(v), neg(magnitude), magnitude)
    xinf, yinf = isinf(re), isinf(im)
    on_axis = lax.complex(select(xinf, signed(one, re), signed(zr, re)),
                          select(yinf, signed(one, im), signed(zr, im)))
    safe = select(eq(r, zr), c(r, 1.0), r)
    out = select(xor(xinf, yinf), on_axis, lax.complex(lax.divide(re, safe), lax.divide(im, safe)))
    undefined = or_(or_(isnan(re), isnan(im)), and_(xinf, yinf))
    out = select(undefined, lax.complex(nan, nan), out)
    return select(eq(r, zr), zero, out)


def power(x, y):
    """Complex x ** y = exp(y log x) from log's and exp's formulas, the same on both backends
    (XLA's complex power and NumPy's differ in zero signs and at the extremes); x ** 0 is 1
    and 0 ** y for Re(y) > 0 is 0 (the standard: as if exp(y log 0), and exp(-inf + b j) is
    0)."""
    out = lax.exp(lax.multiply(y, lax.log(x)))
    zero = ad.zeros(out)
    yr = lax.real(y)
    positive = lax.compare(yr, ad.zeros(yr), direction="GT")
    out = select(and_(eq(x, ad.zeros(x)), positive), zero, out)
    return select(eq(y, ad.zeros(y)), ad.const(out, 1.0), out)


def _finite_from_parts(name, parts_rule):
    """Formula: `parts_rule(x, y)` (real functions of the parts, for finite z) with the
    standard's special values where a part is not finite. Both backends then compute the
    same composition (XLA's complex exp and NumPy's differ in the signs of zero parts)."""
    def formula(z):
        return with_special_values(name, z, lax.complex(*parts_rule(*parts(z))))
    formula.__name__ = name
    return formula


def _exp_parts(x, y):
    """exp(x + iy) = e^x cos y + i e^x sin y, e^x as (e^(x/2))^2 so that e^x cos y stays finite
    where e^x alone overflows; a zero imaginary part stays exact: exp(x + 0i) = e^x + 0i."""
    h = lax.exp(mul(x, c(x, 0.5)))
    zero = _eq0(y)
    re = select(zero, lax.exp(x), mul(mul(h, lax.cos(y)), h))
    im = select(zero, y, mul(mul(h, lax.sin(y)), h))
    return re, im


def _expm1_parts(x, y):
    """expm1(x + iy) = (expm1(x) cos y - 2 sin^2(y/2)) + i e^x sin y (no cancellation for a
    small z); expm1(x + 0i) = expm1(x) + 0i, except expm1(-0 + 0i) = +0 + 0i (the standard's
    "0 + 0j" for a zero of either sign)."""
    s = lax.sin(mul(y, c(y, 0.5)))
    zero = _eq0(y)
    re = select(zero, lax.expm1(x), sub(mul(lax.expm1(x), lax.cos(y)), mul(c(x, 2.0), mul(s, s))))
    re = select(and_(zero, _eq0(x)), c(x, 0.0), re)
    h = lax.exp(mul(x, c(x, 0.5)))
    im = select(zero, y, mul(mul(h, lax.sin(y)), h))
    return re, im


def _cosh_parts(x, y):
    """cosh(x + iy) = cosh x cos y + i sinh x sin y; with y = 0 the imaginary part is the
    zero of sign(x) * sign(y) (sinh x * 0 would be nan where sinh x overflows)."""
    one = c(x, 1.0)
    sgn = select(signbit(x), neg(one), one)
    zero = _eq0(y)
    re = select(zero, lax.cosh(x), _hyperbolic_times(lax.cosh, x, lax.cos(y)))
    im = select(zero, mul(sgn, y), _hyperbolic_times(lax.sinh, x, lax.sin(y)))
    return re, im


exp, expm1 = _finite_from_parts("exp", _exp_parts), _finite_from_parts("expm1", _expm1_parts)
cosh = _finite_from_parts("cosh", _cosh_parts)


def cos(z):
    """cos(z) = cosh(iz), iz = -y + ix, with cos's special values."""
    x, y = parts(z)
    return with_special_values("cos", z, lax.complex(*_cosh_parts(neg(y), x)))


def _tanh_parts(x, y):
    """Kahan's tanh(x + iy) for finite z: with t = tan y, s = sinh x, rho = sqrt(1 + s^2),
    tanh z = (beta rho s + i t) / (1 + beta s^2), beta = 1 + t^2; for |x| > 20 (where s^2
    could overflow) it is sign(x) + 4i sin y cos y e^(-2|x|). Zero parts keep their signs."""
    t = lax.tan(y)
    beta = lax.add(c(x, 1.0), mul(t, t))
    s = lax.sinh(x)
    ss = mul(s, s)
    rho = lax.sqrt(lax.add(c(x, 1.0), ss))
    denom = lax.add(c(x, 1.0), mul(beta, ss))
    re = lax.divide(mul(mul(beta, rho), s), denom)
    im = lax.divide(t, denom)
    one = c(x, 1.0)
    far = lax.compare(fabs(x), c(x, 20.0), direction="GT")
    far_re = select(signbit(x), neg(one), one)
    far_im = mul(mul(c(x, 4.0), mul(lax.sin(y), lax.cos(y))), lax.exp(mul(c(x, -2.0), fabs(x))))
    return select(far, far_re, re), select(far, far_im, im)


tanh = _finite_from_parts("tanh", _tanh_parts)


def tan(z):
    """tan(z) = -i tanh(iz), iz = -y + ix, with tan's special values."""
    x, y = parts(z)
    a, b = _tanh_parts(neg(y), x)
    return with_special_values("tan", z, lax.complex(b, neg(a)))
def _exact_square(a):
    """(p, e) with p + e = a * a exactly (Dekker's product on Veltkamp's split of a). Every
    product in it is exact, so a fused multiply-add computes it the same; the barrier keeps
    the simplifier from folding t - (t - a) into a."""
    bits = 27 if a.aval.dtype.bits == 64 else 12
    t = lax.optimization_barrier(mul(a, c(a, float(2 ** bits + 1))))
    hi = sub(t, sub(t, a))
    lo = sub(a, hi)
    p = mul(a, a)
    e = lax.add(lax.add(sub(mul(hi, hi), p), mul(c(a, 2.0), mul(hi, lo))), mul(lo, lo))
    return p, e


def _two_sum(a, b):
    """(s, e) with s + e = a + b exactly (Knuth's two-sum)."""
    s = lax.add(a, b)
    v = sub(s, a)
    return s, lax.add(sub(a, sub(s, v)), sub(b, v))


def _log_finite(w):
    """log w = log|w| + i arg w in real operations, the same on both backends (XLA's complex
    log and NumPy's differ in signs of zero parts and at the extremes). Where the larger
    part h is in [0.5, 2], log|w| = log1p(h^2 - 1 + l^2) / 2 (l the smaller part) with the
    squares exact and summed with their errors, so it keeps the digits that log(|w|) loses
    near |w| = 1 (as glibc's clog does); elsewhere |w| is hypot's."""
    x, y = parts(w)
    ax, ay = fabs(x), fabs(y)
    h, l = lax.maximum(ax, ay), lax.minimum(ax, ay)
    near = and_(lax.compare(h, c(h, 0.5), direction="GE"),
                lax.compare(h, c(h, 2.0), direction="LE"))
    ph, eh = _exact_square(h)
    pl, el = _exact_square(l)
    # |w|^2 - 1 = (ph - 1) + pl + eh + el, summed with each rounding error carried (the terms
    # cancel to far below their size near |w| = 1); ph - 1 is exact (ph is in [0.25, 4])
    s, err = _two_sum(sub(ph, c(h, 1.0)), pl)
    s, e2 = _two_sum(s, eh)
    s, e3 = _two_sum(s, el)
    m1 = lax.add(s, lax.add(lax.add(err, e2), e3))
    close = mul(c(h, 0.5), lax.log1p(m1))
    return lax.complex(select(near, close, lax.log(hypot(x, y))), atan2(y, x))


log = _symmetric("log", False, _log_finite)
sqrt = _symmetric("sqrt", False)
def _atanh_parts(x, y):
    """atanh(x + iy) for finite x, y >= 0 in real operations:
    Re = log1p(4x / ((1 - x)^2 + y^2)) / 4, Im = atan2(2y, (1 - x)(1 + x) - y^2) / 2; past
    sqrt(largest float) / 4, where the squares overflow, Re = x / |z|^2 (scaled by the
    larger part) and Im = pi / 2."""
    one, two = c(x, 1.0), c(x, 2.0)
    h, l = lax.maximum(x, y), lax.minimum(x, y)
    large = lax.compare(h, c(x, 1e150 if x.aval.dtype.bits == 64 else 1e18), direction="GT")
    safe_h = select(large, h, one)
    ratio = lax.divide(l, safe_h)
    far_re = lax.divide(lax.divide(lax.divide(x, safe_h), safe_h),
                        lax.add(one, mul(ratio, ratio)))
    sx = select(large, c(x, 0.0), x)
    sy = select(large, c(x, 0.0), y)
    gap = sub(one, sx)
    re = mul(c(x, 0.25), lax.log1p(lax.divide(mul(c(x, 4.0), sx),
                                              lax.add(mul(gap, gap), mul(sy, sy)))))
    im = mul(c(x, 0.5), atan2(mul(two, sy), sub(mul(gap, lax.add(one, sx)), mul(sy, sy))))
    return select(large, far_re, re), select(large, c(x, _PI / 2), im)


def _atanh_finite(w):
    return lax.complex(*_atanh_parts(*parts(w)))


def _atan_finite(w):
    """atan(z) = -i atanh(iz): for z = x + iy in the first quadrant, Im and Re of
    atanh(y + ix)."""
    x, y = parts(w)
    a, b = _atanh_parts(y, x)
    return lax.complex(b, a)


def _conj_product(a, b):
    """conj(a) * b, as its real and imaginary parts."""
    ar, ai = parts(a)
    br, bi = parts(b)
    return lax.add(mul(ar, br), mul(ai, bi)), sub(mul(ar, bi), mul(ai, br))


def _acos_finite(w):
    """Kahan's acos for finite z in the upper half plane: with s = sqrt(1 - z), t = sqrt(1 + z),
    acos z = 2 atan2(Re s, Re t) + i asinh(Im(conj(t) s)) (1 - z's imaginary part is -y, so
    that y = +0 gives -0 and the right side of the cut)."""
    x, y = parts(w)
    one = c(x, 1.0)
    s = lax.sqrt(lax.complex(sub(one, x), neg(y)))
    t = lax.sqrt(lax.complex(lax.add(one, x), y))
    return lax.complex(mul(c(x, 2.0), atan2(lax.real(s), lax.real(t))),
                       lax.asinh(_conj_product(t, s)[1]))


def _acosh_finite(w):
    """Kahan's acosh for finite z in the upper half plane: with s = sqrt(z - 1), t = sqrt(z + 1),
    acosh z = asinh(Re(conj(s) t)) + 2i atan2(Im s, Re t)."""
    x, y = parts(w)
    one = c(x, 1.0)
    s = lax.sqrt(lax.complex(sub(x, one), y))
    t = lax.sqrt(lax.complex(lax.add(x, one), y))
    return lax.complex(lax.asinh(_conj_product(s, t)[0]),
                       mul(c(x, 2.0), atan2(lax.imag(s), lax.real(t))))


acos = _symmetric("acos", False, _acos_finite)
acosh = _symmetric("acosh", False, _acosh_finite)
asin, atan = _symmetric("asin", True), _symmetric("atan", True, _atan_finite)
asinh, atanh = _symmetric("asinh", True), _symmetric("atanh", True, _atanh_finite)


def rsqrt(z):
    """1 / sqrt(z) from sqrt's formula and Smith's division (XLA's complex rsqrt and NumPy's
    1 / sqrt differ in signs of zero parts and at overflow)."""
    root = lax.sqrt(z)
    return lax.divide(ad.const(root, 1.0), root)


def logistic(z):
    """1 / (1 + exp(-z)) from exp's formula and Smith's division, on both backends alike."""
    e = lax.exp(neg(z))
    one = ad.const(e, 1.0)
    return lax.divide(one, lax.add(one, e))
