"""tlaloc.special: special functions with SciPy's names, signatures and special values.

SciPy finds this namespace as `xp.special` when SCIPY_ARRAY_API=1: `scipy.special.erf(x)`
on a tlaloc array calls `tlaloc.special.erf(x)`, so scipy.special and scipy.stats code runs
lazily, fused, on every tlaloc backend, and differentiates.

Every function is written in primitives (tlaloc/_prims/special.py): the CHLO ops XLA
compiles where one exists (erf, erfc, erf_inv, lgamma, digamma, polygamma, bessel_i1e),
compositions of primitives elsewhere (gamma, ndtri, log_ndtr, i0e, betaln, ...), with
SciPy's values selected at the points where the op and SciPy disagree (poles, infinities,
signed zeros). Real floating input keeps its dtype; integer and bool input is computed in
the default floating dtype; float16 and bfloat16 are computed in float32 and rounded back.
Complex input raises TypeError. Accuracy against SciPy is documented per function in
tests/test_special.py (TOLERANCES).
"""
from __future__ import annotations

import builtins
import functools
import math

from . import _dtypes as dt
from ._array import Array
from ._prims import lax
from ._prims import special as sp
from ._prims.special import (Derivative, Expr, ap, copysign, exp, fabs, floor, horner, isnan,
                             log, log1p, signbit, sqrt, where, with_derivative)
from ._api._core import axes_of, cast, constant, node_of, operands, wrap

__all__ = ["betaln", "digamma", "entr", "erf", "erfc", "erfcinv", "erfinv", "expit", "gamma",
           "gammaln", "i0", "i0e", "i1", "i1e", "log_expit", "log_ndtr", "log_softmax", "logit",
           "logsumexp", "ndtr", "ndtri", "polygamma", "psi", "rel_entr", "sinc", "softmax",
           "xlog1py", "xlogy"]

_inf = math.inf
_nan = math.nan
_SQRT2 = math.sqrt(2.0)
_SQRT1_2 = math.sqrt(0.5)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


# ----------------------------------------------------------------------------- arguments

def _compute_dtype(d):
    """float16/bfloat16 are computed in float32."""
    return dt.float32 if d.bits < 32 else d


def _arg(name, x, argname="x"):
    """(Expr of x in its computing dtype, result dtype)."""
    node = node_of(name, x, argname)
    d = node.aval.dtype
    if d.kind in dt.INTEGER_OR_BOOL_KINDS:
        d = dt.DEFAULTS.real_floating
    elif d.kind != "f":
        raise TypeError(f"{name}: {argname} must have a real dtype, got {d}")
    return Expr(cast(node, _compute_dtype(d))), d


def _args2(name, a, b, names):
    """Two arguments (arrays or real Python scalars) promoted to one floating dtype and
    broadcast: (Expr, Expr, result dtype)."""
    floats = []
    for v, argname in zip((a, b), names):
        if isinstance(v, Array):
            if v.dtype.kind not in dt.REAL_OR_BOOL_KINDS:
                raise TypeError(f"{name}: {argname} must have a real dtype, got {v.dtype}")
            if v.dtype.kind == "f":
                floats.append(v.dtype)
        elif not isinstance(v, (builtins.bool, builtins.int, builtins.float)):
            raise TypeError(f"{name}: {argname} must be a tlaloc array or a real Python scalar, "
                            f"got {type(v).__name__}")
    if not isinstance(a, Array) and not isinstance(b, Array):
        raise TypeError(f"{name}: at least one argument must be a tlaloc array")
    d = functools.reduce(dt.promote, floats) if floats else dt.DEFAULTS.real_floating
    (na, nb), _, _ = operands(name, a, b, dtype=_compute_dtype(d))
    return Expr(na), Expr(nb), d


def _done(e, d):
    return wrap(cast(e.node, d))


def _unary(name):
    """Makes a function of one Expr the namespace function `name`."""
    def decorate(fn):
        def wrapped(x, /):
            e, d = _arg(name, x)
            return _done(fn(e), d)

        wrapped.__name__ = wrapped.__qualname__ = name
        wrapped.__doc__ = fn.__doc__
        return wrapped
    return decorate


def _binary(name, names):
    """Makes a function of two Exprs the namespace function `name` (arguments promoted and
    broadcast; either may be a Python scalar)."""
    def decorate(fn):
        def wrapped(a, b, /):
            ea, eb, d = _args2(name, a, b, names)
            return _done(fn(ea, eb), d)

        wrapped.__name__ = wrapped.__qualname__ = name
        wrapped.__doc__ = fn.__doc__
        return wrapped
    return decorate


def _gauss(x):
    """The standard normal density."""
    return exp(x * x * -0.5 - _LOG_SQRT_2PI)


# ----------------------------------------------------------------------------- error function

def _erfc(e):
    return ap(lax.erfc, e)


@_unary("erf")
def erf(x):
    """Error function."""
    return ap(lax.erf, x)


@_unary("erfc")
def erfc(x):
    """Complementary error function, 1 - erf(x) without cancellation."""
    return _erfc(x)


def _log_ndtr_series(x):
    """log(ndtr(x)) for x <= -10 (asymptotic series of the Mills ratio, 12 terms)."""
    w = 1.0 / (x * x)
    # ndtr(x) = phi(x)/(-x) * (1 + sum_k (-1)**k (2k-1)!! / x**(2k))
    terms, c = [], 1.0
    for k in range(1, 13):
        c *= 2 * k - 1
        terms.append((-1) ** k * c)
    return x * x * -0.5 - log(-x) - _LOG_SQRT_2PI + log1p(w * horner(w, terms))


def _lower(x):
    """Where log_ndtr switches from erfc to the series: erfc is accurate to its underflow."""
    return -20.0 if x.dtype.bits == 64 else -10.0


def _log_ndtr_negative(x):
    """log(ndtr(x)) for x <= 0."""
    low = x <= _lower(x)
    v_mid = log(_erfc(where(low, -1.0, x) * -_SQRT1_2) * 0.5)
    return where(low, _log_ndtr_series(where(low, x, _lower(x))), v_mid)


def _log_ndtr(x):
    """log(ndtr(x)): log1p(-ndtr(-x)) for x > 0, log(erfc(-x/sqrt2)/2) down to -20 (-10 in
    float32), the asymptotic series below."""
    pos = x > 0.0
    v_pos = log1p(_erfc(where(pos, x, 1.0) * _SQRT1_2) * -0.5)
    return where(pos, v_pos, _log_ndtr_negative(where(pos, -1.0, x)))


def _ndtri_lower(q):
    """ndtri(q) for 0 < q < 0.05: a rational first guess (Abramowitz & Stegun 26.2.23,
    |error| < 4.5e-4) refined by Newton steps on log(ndtr(x)) = log(q), which converge
    quadratically from a guess this close and keep full relative accuracy deep in the
    tail (to 1e-308)."""
    lq = log(q)
    t = sqrt(lq * -2.0)
    x = -(t - horner(t, (2.515517, 0.802853, 0.010328))
          / horner(t, (1.0, 1.432788, 0.189269, 0.001308)))
    for _ in range(3 if x.dtype.bits == 64 else 2):
        ln = _log_ndtr_negative(x)
        x = x - (ln - lq) / exp(x * x * -0.5 - _LOG_SQRT_2PI - ln)
    return x


def _ndtri_value(p):
    q = where(p > 0.5, 1.0 - p, p)            # exact for p >= 1/2
    tail = q < 0.05
    inner = tail & (q > 0.0)
    center = ap(lax.erf_inv, where(tail, 0.0, p * 2.0 - 1.0)) * _SQRT2
    x = _ndtri_lower(where(inner, q, 0.025))
    x = where(p > 0.5, -x, x)
    out = where(tail, x, center)
    out = where(p.eq(0.0), -_inf, where(p.eq(1.0), _inf, out))
    return where((p < 0.0) | (p > 1.0), _nan, out)


_D_NDTRI = Derivative("ndtri", lambda p, out: 1.0 / _gauss(out))
_D_ERFINV = Derivative("erfinv", lambda y, out: exp(out * out) * (math.sqrt(math.pi) / 2))
_D_ERFCINV = Derivative("erfcinv", lambda y, out: exp(out * out) * (-math.sqrt(math.pi) / 2))
_D_NDTR = Derivative("ndtr", lambda x, out: _gauss(x))
_D_LOG_NDTR = Derivative("log_ndtr", lambda x, out: exp(x * x * -0.5 - _LOG_SQRT_2PI - out))


@_unary("erfinv")
def erfinv(y):
    """Inverse of erf on [-1, 1] (±inf at ±1, nan outside). XLA's erf_inv is used for
    |y| <= 0.9; the tails go through ndtri, which keeps full relative accuracy near ±1."""
    a = fabs(y)
    tail = a > 0.9
    inner = tail & (a < 1.0)
    center = ap(lax.erf_inv, where(tail, 0.0, y))
    t = _ndtri_lower((1.0 - where(inner, a, 0.95)) * 0.5) * -_SQRT1_2
    out = where(tail, copysign(t, y), center)
    out = where(a.eq(1.0), copysign(y.const(_inf), y), out)
    out = where(a > 1.0, _nan, out)
    out = where(y.eq(0.0), 0.0, out)          # SciPy: erfinv(-0.0) is +0.0
    return with_derivative(_D_ERFINV, out, y)


@_unary("erfcinv")
def erfcinv(y):
    """Inverse of erfc on [0, 2]: -ndtri(y/2)/sqrt(2)."""
    return with_derivative(_D_ERFCINV, _ndtri_value(y * 0.5) * -_SQRT1_2, y)


@_unary("ndtr")
def ndtr(x):
    """Standard normal CDF."""
    z = x * _SQRT1_2
    a = fabs(z)
    small = ap(lax.erf, z) * 0.5 + 0.5
    big = _erfc(a) * 0.5
    big = where(z > 0.0, 1.0 - big, big)
    return with_derivative(_D_NDTR, where(a < _SQRT1_2, small, big), x)


@_unary("ndtri")
def ndtri(p):
    """Inverse of ndtr on [0, 1] (-inf at 0, inf at 1, nan outside)."""
    return with_derivative(_D_NDTRI, _ndtri_value(p), p)


@_unary("log_ndtr")
def log_ndtr(x):
    """log of the standard normal CDF, accurate in both tails."""
    return with_derivative(_D_LOG_NDTR, _log_ndtr(x), x)


# ----------------------------------------------------------------------------- gamma family

# lgamma(2 + z) = (1 - euler) z + sum_k>=2 (-1)**k (zeta(k) - 1) / k z**k, for |z| <= 1/2
# (see tlaloc/_prims/special.py _generate_coefficients): XLA's lgamma has absolute, not
# relative, accuracy near its zeros at 1 and 2, and float32 loses ~20 eps in between.
_LGAMMA2 = (
    0.0, 0.42278433509846713, 0.3224670334241132, -0.0673523010531981, 0.020580808427784546,
    -0.007385551028673986, 0.0028905103307415234, -0.001192753911703261, 0.0005096695247430425,
    -0.00022315475845357939, 9.945751278180853e-05, -4.492623673813314e-05,
    2.050721277567069e-05, -9.439488275268397e-06, 4.374866789907488e-06,
    -2.039215753801366e-06, 9.55141213040742e-07, -4.492469198764566e-07,
    2.1207184805554665e-07, -1.0043224823968099e-07, 4.7698101693639804e-08,
    -2.2711094608943164e-08, 1.0838659214896955e-08, -5.183475041970047e-09,
    2.4836745438024785e-09, -1.1921401405860912e-09, 5.731367241678862e-10,
    -2.7595228851242334e-10)


def _reflect(x):
    """For the reflection formulas at x < 0: (negative, 1 - x there (x elsewhere), and
    s = x - n with n the nearest integer, |s| <= 1/2, exact). XLA's own reflection
    takes sin and tan of pi * x, whose rounding costs |x| eps / distance-to-the-pole."""
    neg = x < 0.0
    xn = where(neg, x, -0.5)
    return neg, where(neg, 1.0 - x, x), xn - ap(lax.round_even, xn)


def _gammaln(x):
    """log|Gamma(x)|: XLA's lgamma for x > 0 except on [1/2, 5/2] around its zeros at 1
    and 2 (a series there); log(pi / |sin(pi x)|) - gammaln(1 - x) for x < 0."""
    neg, z, s = _reflect(x)
    z1, z2 = z - 1.0, z - 2.0
    near2 = fabs(z2) <= 0.5
    near1 = (fabs(z1) <= 0.5) & ~near2
    t = where(near1, z1, where(near2, z2, 0.0))
    series = horner(t, _LGAMMA2)
    pos = where(near1, series - log1p(t), where(near2, series, ap(lax.lgamma, z)))
    out = where(neg, log(math.pi / fabs(ap(lax.sin, s * math.pi))) - pos, pos)
    return where(x.eq(-_inf), -_inf, out)       # SciPy: gammaln(-inf) is -inf


def _digamma(x):
    """psi(x): XLA's digamma for x > 0, psi(1 - x) - pi / tan(pi x) for x < 0; psi(±0) =
    ∓inf, nan at the negative integers."""
    neg, z, s = _reflect(x)
    pos = ap(lax.digamma, z)
    out = where(neg, pos - math.pi / ap(lax.tan, s * math.pi), pos)
    out = where(_pole(x) & ~x.eq(0.0), _nan, out)
    return where(x.eq(0.0), where(signbit(x), x.const(_inf), -_inf), out)


def _odd(v):
    """1.0 where the integer-valued v is odd, else 0.0."""
    return v - floor(v * 0.5) * 2.0


def _pole(x):
    """x is 0 or a negative integer (or -inf)."""
    return (x <= 0.0) & x.eq(floor(x))


_D_GAMMALN = Derivative("gammaln", lambda x, out: _digamma(x))
_D_GAMMA = Derivative("gamma", lambda x, out: out * _digamma(x))


def _gammaln_d(x):
    return with_derivative(_D_GAMMALN, _gammaln(x), x)


@_unary("gammaln")
def gammaln(x):
    """log|Gamma(x)| (inf at the poles)."""
    return _gammaln_d(x)


@_unary("gamma")
def gamma(x):
    """Gamma function: sign * exp(gammaln(x)); ±inf at ±0, nan at the negative integers and
    -inf."""
    sign = where((x < 0.0) & _odd(floor(x)).eq(1.0), x.const(-1.0), 1.0)
    out = where(_pole(x), _nan, sign * exp(_gammaln(x)))
    out = where(x.eq(0.0), copysign(x.const(_inf), x), out)
    return with_derivative(_D_GAMMA, out, x)


@_unary("digamma")
def digamma(x):
    """Digamma (psi) function; psi(±0) = ∓inf, nan at the negative integers."""
    return _digamma(x)


psi = digamma


def polygamma(n, x, /):
    """polygamma(n, x), the n-th derivative of digamma; n a non-negative integer (array or
    Python int), nan for other n. ±inf at the poles (sign (-1)**(n+1))."""
    en, ex, d = _args2("polygamma", n, x, ("n", "x"))
    valid = (en >= 0.0) & en.eq(floor(en)) & (en < _inf)
    ns = where(valid, en, 1.0)
    pole = _pole(ex)
    top = ex.eq(_inf)
    val = sp.polygamma_any(ns, where(pole | top | isnan(ex), 1.0, ex))
    sign = _odd(ns) * 2.0 - 1.0                  # (-1)**(n+1)
    n0 = ns.eq(0.0)
    at_pole = where(n0, where(ex.eq(0.0), where(signbit(ex), ex.const(_inf), -_inf), _nan),
                    sign * _inf)
    at_top = where(n0, _inf, sign * 0.0)
    out = where(pole, at_pole, where(top, at_top, val))
    return _done(where((~valid) | isnan(ex), _nan, out), d)


# ----------------------------------------------------------------------------- logistic

@_unary("expit")
def expit(x):
    """Logistic sigmoid 1 / (1 + exp(-x))."""
    return ap(lax.logistic, x)


_D_LOGIT = Derivative("logit", lambda p, out: 1.0 / (p * (1.0 - p)))
_D_LOG_EXPIT = Derivative("log_expit", lambda x, out: ap(lax.logistic, -x))


@_unary("logit")
def logit(p):
    """log(p / (1 - p)); log1p(2 (p - 1/2) / (1 - p)) for 0.3 <= p <= 0.65, as in SciPy."""
    mid = (p >= 0.3) & (p <= 0.65)
    pm = where(mid, p, 0.5)
    po = where(mid, 0.1, p)
    out = where(mid, log1p((pm - 0.5) * 2.0 / (1.0 - pm)), log(po / (1.0 - po)))
    return with_derivative(_D_LOGIT, out, p)


@_unary("log_expit")
def log_expit(x):
    """log(expit(x)) without overflow or cancellation."""
    neg = x < 0.0
    xn = where(neg, x, 0.0)
    xp = where(neg, 0.0, x)
    out = where(neg, xn - log1p(exp(xn)), -log1p(exp(-xp)))
    return with_derivative(_D_LOG_EXPIT, out, x)


# ----------------------------------------------------------------------------- information theory

# d/dx is log(y) at x = 0 too; d/dy is 0 there (not 0 * inf)
_D_XLOGY = Derivative("xlogy", lambda x, y, out: log(y),
                       lambda x, y, out: where(x.eq(0.0), 0.0, x / y))
_D_XLOG1PY = Derivative("xlog1py", lambda x, y, out: log1p(y),
                         lambda x, y, out: where(x.eq(0.0), 0.0, x / (y + 1.0)))


@_binary("xlogy", ("x", "y"))
def xlogy(x, y):
    """x * log(y), 0 where x == 0 (unless y is nan)."""
    out = where(x.eq(0.0) & ~isnan(y), x.const(0.0), x * log(y))
    return with_derivative(_D_XLOGY, out, x, y)


@_binary("xlog1py", ("x", "y"))
def xlog1py(x, y):
    """x * log1p(y), 0 where x == 0 (unless y is nan)."""
    out = where(x.eq(0.0) & ~isnan(y), x.const(0.0), x * log1p(y))
    return with_derivative(_D_XLOG1PY, out, x, y)


@_unary("entr")
def entr(x):
    """-x log(x) for x > 0, 0 at 0, -inf for x < 0."""
    xs = where((x < 0.0) | x.eq(0.0), 1.0, x)
    return where(x < 0.0, -_inf, where(x.eq(0.0), 0.0, -xs * log(xs)))


@_binary("rel_entr", ("x", "y"))
def rel_entr(x, y):
    """x log(x / y) for x, y > 0; 0 for x == 0 <= y; inf otherwise; nan if either is."""
    pos = (x > 0.0) & (y > 0.0)
    xs, ys = where(pos, x, 1.0), where(pos, y, 1.0)
    out = where(pos, xs * log(xs / ys), where(x.eq(0.0) & (y >= 0.0), x.const(0.0), _inf))
    return where(isnan(x) | isnan(y), _nan, out)


# ----------------------------------------------------------------------------- beta

# Stirling series of lgamma(z) - ((z - 1/2) log z - z + log(2 pi)/2): B_2k / (2k (2k-1) z**(2k-1))
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156,
             -3617 / 122400)


def _stirling_correction(z):
    """For z >= 8."""
    return horner(1.0 / (z * z), _STIRLING) / z


@_binary("betaln", ("a", "b"))
def betaln(a, b):
    """log|B(a, b)|. For arguments of 8 and more the Stirling corrections are combined
    before the logarithms, so no two large lgamma values cancel."""
    x, y = ap(lax.minimum, a, b), ap(lax.maximum, a, b)
    both = x >= 8.0
    one = (x < 8.0) & (y >= 8.0) & (x + y >= 8.0)      # x may be negative
    small = ~(both | one)
    c = _stirling_correction
    xb, yb = where(both, x, 8.0), where(both, y, 8.0)
    v_both = (log(yb) * -0.5 + _LOG_SQRT_2PI + c(xb) + c(yb) - c(xb + yb)
              + (xb - 0.5) * log(xb / (xb + yb)) - yb * log1p(xb / yb))
    xo, yo = where(one, x, 1.0), where(one, y, 8.0)
    # lgamma(y) - lgamma(x + y) by Stirling's formula for both
    v_one = (_gammaln_d(xo) + c(yo) - c(xo + yo) + xo - xo * log(xo + yo)
             + (yo - 0.5) * log1p(-xo / (xo + yo)))
    xs, ys = where(small, x, 1.0), where(small, y, 1.0)
    v_small = _gammaln_d(xs) + _gammaln_d(ys) - _gammaln_d(xs + ys)
    out = where(both, v_both, where(one, v_one, v_small))
    y_inf = y.eq(_inf)
    out = where(y_inf & (x > 0.0), -_inf, out)
    out = where(_pole(x) | _pole(y) | (y_inf & (x < 0.0)), _inf, out)
    return where(y_inf & x.eq(_inf), _nan, out)


# ----------------------------------------------------------------------------- Bessel

_i0e = sp.i0e_d


@_unary("i0e")
def i0e(x):
    """Exponentially scaled modified Bessel function of order 0, exp(-|x|) I0(x)."""
    return _i0e(x)


@_unary("i0")
def i0(x):
    """Modified Bessel function of order 0 (i0e(x) exp(|x|), in two halves so it
    overflows only where I0 does)."""
    h = exp(fabs(x) * 0.5)
    return _i0e(x) * h * h


_D_I1E = Derivative("i1e", sp.i1e_partial)


def _i1e_expr(x):
    out = where(x.eq(0.0), 0.0, ap(lax.bessel_i1e, x))    # SciPy: i1e(-0.0) is +0.0
    return with_derivative(_D_I1E, out, x)


@_unary("i1e")
def i1e(x):
    """Exponentially scaled modified Bessel function of order 1, exp(-|x|) I1(x)."""
    return _i1e_expr(x)


@_unary("i1")
def i1(x):
    """Modified Bessel function of order 1."""
    h = exp(fabs(x) * 0.5)
    return _i1e_expr(x) * h * h


# ----------------------------------------------------------------------------- sinc

@_unary("sinc")
def sinc(x):
    """Normalized sinc, sin(pi x) / (pi x), 1 at 0 (NumPy's sinc; scipy.special.sinc)."""
    y = x * math.pi
    small = fabs(y) < (1e-3 if x.dtype.bits == 64 else 0.05)
    ys = where(small, 1.0, y)
    y2 = y * y
    return where(small, 1.0 - y2 * (1.0 / 6.0 - y2 * (1.0 / 120.0)), ap(lax.sin, ys) / ys)


# ----------------------------------------------------------------------------- reductions

def _reduce(fn, e, axes):
    return Expr(fn(e.node, axes=axes)) if axes else e


def _expand(e, shape, axes):
    """A reduced Expr broadcast back to `shape`."""
    if not axes:
        return e
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    return Expr(lax.broadcast_in_dim(e.node, shape=shape, dims=kept))


def _kept_shape(shape, axes):
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def _reshape(e, shape):
    shape = tuple(shape)
    if e.node.aval.shape == shape:
        return e
    return Expr(lax.reshape(e.node, shape=shape))


def softmax(x, /, axis=None):
    """exp(x) / sum(exp(x)) over `axis` (an int, a tuple, or None for all), shifted by the
    maximum as in SciPy."""
    e, d = _arg("softmax", x)
    shape = e.node.aval.shape
    axes = axes_of("softmax", e.node, axis)
    m = ap(lax.stop_gradient, _expand(_reduce(lax.reduce_max, e, axes), shape, axes))
    ex = exp(e - m)
    return _done(ex / _expand(_reduce(lax.reduce_sum, ex, axes), shape, axes), d)


def log_softmax(x, /, axis=None):
    """log(softmax(x)) without underflow: (x - m) - log(sum(exp(x - m))), m the finite
    maximum."""
    e, d = _arg("log_softmax", x)
    shape = e.node.aval.shape
    axes = axes_of("log_softmax", e.node, axis)
    m = _reduce(lax.reduce_max, e, axes)
    m = ap(lax.stop_gradient, where(ap(lax.is_finite, m), m, 0.0))
    tmp = e - _expand(m, shape, axes)
    s = _reduce(lax.reduce_sum, exp(tmp), axes)
    return _done(tmp - _expand(log(s), shape, axes), d)


def logsumexp(a, /, axis=None, b=None, keepdims=False, return_sign=False):
    """log(sum(b * exp(a))) over `axis`, as scipy.special.logsumexp: `b` (array or Python
    scalar) broadcasts with `a` and may be negative or zero (a zero weight drops its term,
    even an infinite or nan one); with return_sign, returns (log|sum|, sign of sum),
    otherwise a negative sum gives nan. Real floating input only."""
    name = "logsumexp"
    if b is None:
        e, d = _arg(name, a, "a")
        w = None
    else:
        e, w, d = _args2(name, a, b, ("a", "b"))
    if not isinstance(keepdims, builtins.bool) or not isinstance(return_sign, builtins.bool):
        raise TypeError(f"{name}: keepdims and return_sign must be bools")
    if e.node.aval.shape == ():
        e = _reshape(e, (1,))
        w = None if w is None else _reshape(w, (1,))
    shape = e.node.aval.shape
    axes = axes_of(name, e.node, axis)
    reduced = tuple(n for i, n in enumerate(shape) if i not in axes)
    out_shape = _kept_shape(shape, axes) if keepdims else reduced
    cdt = e.dtype
    if math.prod(shape) == 0:
        out = wrap(cast(constant(-_inf, out_shape, cdt, e.node.device), d))
        sgn = wrap(cast(constant(-1.0, out_shape, cdt, e.node.device), d))
        return (out, sgn) if return_sign else out

    def total(v):
        return _reduce(lax.reduce_sum, v, axes)

    def full(v):
        return _expand(v, shape, axes)

    # the maximum's terms are counted apart (m), the rest summed shifted by it (s)
    am = e if w is None else where(w.eq(0.0), -_inf, e)
    a_max = _reduce(lax.reduce_max, am, axes)
    at_max = am.eq(full(a_max))
    ones = where(at_max, am.const(1.0), 0.0)
    m = total(ones if w is None else w * ones)
    terms = exp(where(at_max, -_inf, am) - full(a_max))
    s = total(terms if w is None else w * terms)
    s = where(s.eq(0.0), s, s / m)
    sgn = ap(lax.sign, s + 1.0) * ap(lax.sign, m)
    s = where(s < -1.0, -s - 2.0, s)
    out = log1p(s) + log(fabs(m)) + a_max
    if not return_sign:
        out = where(sgn < 0.0, _nan, out)
    # infinite results: the direct formula, which follows exp's and log's special cases
    finite = ap(lax.is_finite, out)
    direct = where(full(finite), 0.0, e)
    direct = total(exp(direct) if w is None else w * exp(direct))
    if return_sign:
        sgn_inf = ap(lax.sign, direct)
        direct = fabs(direct)
    out = where(finite, out, log(where(finite, 1.0, direct)))
    out = _done(_reshape(out, out_shape), d)
    if not return_sign:
        return out
    sgn = where(finite, sgn, sgn_inf)
    return out, _done(_reshape(sgn, out_shape), d)
