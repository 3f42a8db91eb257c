"""Special-function primitives: the CHLO ops that XLA:CPU compiles (erf, erfc, erf_inv,
lgamma, digamma, polygamma, bessel_i1e); `Expr`, for writing compositions of primitives as
formulas; and the compositions that derivative rules need (i0e, polygamma at negative x).

The interpreter's implementations call scipy.special (always installed: jaxlib depends on
it) and keep the operand's dtype. Where scipy and XLA disagree at special points (poles,
infinities), `tlaloc.special` selects the value SciPy documents above these primitives, so
both backends give the same results; the primitives themselves are only used where they
agree.
"""
from __future__ import annotations

import math

import numpy as np

from .. import _dtypes as dt
from . import ad, lax
from . import batching as bt
from . import padding as pd
from .core import declare, kinds_check


def _scipy(name):
    """scipy.special.<name>, imported on first use (importing scipy.special takes ~1 s)."""
    import scipy.special
    return getattr(scipy.special, name)


def _in_dtype(fn):
    """The interpreter's implementation: `fn` (a scipy.special name or a function) in the
    operands' dtype."""
    def impl(*args):
        f = _scipy(fn) if isinstance(fn, str) else fn
        return np.asarray(f(*args)).astype(args[-1].dtype, copy=False)
    impl.__name__ = fn if isinstance(fn, str) else getattr(fn, "__name__", "impl")
    return impl


# ----------------------------------------------------------------------------- expressions

class Expr:
    """A graph node with arithmetic, for writing compositions of primitives as formulas.
    Operands share the node's shape and dtype (no promotion or broadcasting); Python
    numbers become constants of that shape and dtype (values fixed by the program's
    structure, such as polynomial coefficients). Comparisons give bool Exprs; combine
    them with & | ~."""

    __slots__ = ("node",)

    def __init__(self, node):
        self.node = node

    @property
    def dtype(self):
        return self.node.aval.dtype

    def const(self, value):
        return Expr(ad.const(self.node, value))

    def _lift(self, other):
        return other if isinstance(other, Expr) else self.const(other)

    def _bin(self, fn, other, swap=False):
        o = self._lift(other)
        a, b = (o, self) if swap else (self, o)
        return Expr(fn(a.node, b.node))

    def __add__(self, o):
        return self._bin(lax.add, o)

    def __radd__(self, o):
        return self._bin(lax.add, o, True)

    def __sub__(self, o):
        return self._bin(lax.subtract, o)

    def __rsub__(self, o):
        return self._bin(lax.subtract, o, True)

    def __mul__(self, o):
        return self._bin(lax.multiply, o)

    def __rmul__(self, o):
        return self._bin(lax.multiply, o, True)

    def __truediv__(self, o):
        return self._bin(lax.divide, o)

    def __rtruediv__(self, o):
        return self._bin(lax.divide, o, True)

    def __neg__(self):
        return Expr(lax.negate(self.node))

    def _cmp(self, o, direction):
        return Expr(lax.compare(self.node, self._lift(o).node, direction=direction))

    def __lt__(self, o):
        return self._cmp(o, "LT")

    def __le__(self, o):
        return self._cmp(o, "LE")

    def __gt__(self, o):
        return self._cmp(o, "GT")

    def __ge__(self, o):
        return self._cmp(o, "GE")

    def eq(self, o):
        return self._cmp(o, "EQ")

    def ne(self, o):
        return self._cmp(o, "NE")

    def __and__(self, o):
        return self._bin(lax.bitwise_and, o)

    def __or__(self, o):
        return self._bin(lax.bitwise_or, o)

    def __invert__(self):
        return Expr(lax.bitwise_not(self.node))


def ap(fn, *args, **params):
    """The node function `fn` (of _prims/lax.py) applied to Exprs."""
    return Expr(fn(*(a.node for a in args), **params))


def where(cond, a, b):
    """select(cond, a, b); either branch may be a Python number."""
    like = a if isinstance(a, Expr) else b
    if not isinstance(like, Expr):
        raise TypeError("where: one branch must be an Expr (it sets the dtype)")
    a, b = like._lift(a), like._lift(b)
    return Expr(lax.select(cond.node, a.node, b.node))


def exp(x):
    return ap(lax.exp, x)


def log(x):
    return ap(lax.log, x)


def log1p(x):
    return ap(lax.log1p, x)


def sqrt(x):
    return ap(lax.sqrt, x)


def fabs(x):
    return ap(lax.abs, x)


def floor(x):
    return ap(lax.floor, x)


def isnan(x):
    return x.ne(x)


def isinf(x):
    return fabs(x).eq(math.inf)


def signbit(x):
    bits = ap(lax.bitcast_convert, x, dtype=dt.canonicalize(f"int{x.dtype.bits}"))
    return bits < 0


def copysign(mag, sign_source):
    m = fabs(mag)
    return where(signbit(sign_source), -m, m)


def horner(x, coeffs):
    """sum_k coeffs[k] x**k."""
    out = x.const(coeffs[-1])
    for c in reversed(coeffs[:-1]):
        out = out * x + c
    return out


def chebyshev(y, coeffs):
    """sum_k coeffs[k] T_k(y) by Clenshaw's recurrence (y in [-1, 1])."""
    two_y = y + y
    b1 = b2 = None
    for c in reversed(coeffs[1:]):
        b = y.const(c)
        if b1 is not None:
            b = b + two_y * b1
        if b2 is not None:
            b = b - b2
        b1, b2 = b, b1
    out = y * b1 + coeffs[0]
    return out if b2 is None else out - b2


# ----------------------------------------------------------------------------- derivatives of compositions

class Derivative:
    """The rule object of a `custom_derivative_call` (see _prims/autodiff.py): the
    derivative of a composed function as formulas in its arguments and result, so grad
    and jvp apply them instead of differentiating the composition (Newton steps, series,
    selects between branches). The formulas are written in primitives and may use the
    result node, whose derivative is again this rule, so higher orders work."""

    def __init__(self, name, *partials):
        self.name = name
        self.partials = partials        # one per argument: (*args: Expr, out: Expr) -> Expr

    def __repr__(self):
        return f"<derivative of {self.name}>"

    def _jvp_rule(self, out, tangents, arg_nodes, output=None):
        args, o = [Expr(n) for n in arg_nodes], Expr(out)
        total = None
        for t, partial in zip(tangents, self.partials):
            if t is not None:
                term = Expr(t) * partial(*args, o)
                total = term if total is None else total + term
        return None if total is None else total.node

    def _vjp_rule(self, out, ct, arg_nodes, output=None):
        args, o = [Expr(n) for n in arg_nodes], Expr(out)
        return [(Expr(ct) * partial(*args, o)).node for partial in self.partials]


def with_derivative(rule, value, *args):
    """`value` (a composition of `args`) with derivative `rule`."""
    return Expr(lax.custom_derivative_call(value.node, *(a.node for a in args), rule=rule))



# ----------------------------------------------------------------------------- compositions

# Chebyshev coefficients of exp(-t) I0(t) on 0 <= t <= 8 in y = t/4 - 1, and of
# sqrt(t) exp(-t) I0(t) on t >= 8 in y = 16/t - 1; computed with mpmath (50 digits) at 80
# Chebyshev nodes and truncated below 1e-18 relative (see _generate_coefficients).
I0E_SMALL = (
    3.3839763720473804e-1, -3.046826723431984e-1, 1.7162090152220878e-1, -9.4901097048047644e-2,
    4.9305284239670708e-2, -2.3737414805899469e-2, 1.0546460394594998e-2, -4.3243099950505759e-3,
    1.6394756169413358e-3, -5.7637557453858237e-4, 1.8850288509584166e-4, -5.7541950100821037e-5,
    1.6448448070728897e-5, -4.4167383584587506e-6, 1.1173875391201037e-6, -2.6707938539406117e-7,
    6.0469950225419189e-8, -1.300025009986248e-8, 2.6598237246823867e-9, -5.1897956016352629e-10,
    9.6758090353732369e-11, -1.7268262914415557e-11, 2.9550526631296398e-12,
    -4.8564467831119295e-13, 7.6761854986049356e-14, -1.1685332877993452e-14,
    1.715391285555133e-15, -2.4312798465479547e-16, 3.3307945188222381e-17,
    -4.4153416464793394e-18, 5.6691780069214962e-19)
I0E_LARGE = (
    4.0224520550705442e-1, 3.3691164782556941e-3, 6.889758346916824e-5, 2.8913705208347565e-6,
    2.0489185894690637e-7, 2.2666689904981781e-8, 3.3962320257083863e-9, 4.9406023882249696e-10,
    1.1889147107846438e-11, -3.1499165279632414e-11, -1.3215811840447713e-11,
    -1.7941785315068061e-12, 7.1801244513836662e-13, 3.8527783827421427e-13,
    1.5400862175214098e-14, -4.1505693472872221e-14, -9.5548466988283076e-15,
    3.8116806693526224e-15, 1.7725601330565264e-15, -3.4254856196772191e-16,
    -2.8276239805165835e-16, 3.4612228676974611e-17, 4.46562142029676e-17,
    -4.8305044859441821e-18, -7.233180487874754e-18, 9.9214754121736986e-19,
    1.1936508908459821e-18)


def i0e(x: Expr) -> Expr:
    """exp(-|x|) I0(x). Each branch sees safe operands, so the unused one has finite
    derivatives (a zero cotangent times an infinite partial would be NaN)."""
    t = fabs(x)
    small = t <= 8.0
    near = chebyshev(where(small, t, 4.0) * 0.25 - 1.0, I0E_SMALL)
    tl = where(small, 16.0, t)
    far = chebyshev(16.0 / tl - 1.0, I0E_LARGE) / sqrt(tl)
    return where(small, near, far)


# d/dx i0e = i1e - sign(x) i0e
_D_I0E = Derivative("i0e", lambda x, out: ap(lax.bessel_i1e, x) - ap(lax.sign, x) * out)


def i0e_d(x: Expr) -> Expr:
    """i0e with its derivative as a formula (the Chebyshev sums are not differentiated)."""
    return with_derivative(_D_I0E, i0e(x), x)


def _nearest_offset(x):
    """x - n for the integer n nearest to x: exact, in [-1/2, 1/2]."""
    return x - ap(lax.round_even, x)


def polygamma_any(n: Expr, x: Expr) -> Expr:
    """polygamma(n, x) for finite x that is not a pole. XLA's polygamma is only right for
    x > 0; for x < 0, with r = x - floor(x) in (0, 1), the Hurwitz zeta identity
        zeta(s, x) = zeta(s, r) + (-1)**s (zeta(s, 1 - r) - zeta(s, 1 - x))
    gives polygamma(n, x) = polygamma(n, r) + (-1)**(n+1) (polygamma(n, 1 - r) - polygamma(n, 1 - x)),
    all at positive arguments. r and 1 - r come from the exact offset to the nearest
    integer, so the term that is large next to a pole has an exact argument."""
    positive = x > 0.0
    xp = where(positive, x, 1.0)
    xn = where(positive, -0.5, x)
    s = _nearest_offset(xn)
    above = s > 0.0
    r = where(above, s, s + 1.0)
    r1 = where(above, 1.0 - s, -s)              # 1 - r
    odd = n - 2.0 * floor(n * 0.5)             # 1 for odd n, 0 for even
    sign = 2.0 * odd - 1.0                     # (-1)**(n+1)
    # the first two terms cancel exactly for even n at half-integers: add them first
    negative = ((ap(lax.polygamma, n, r) + sign * ap(lax.polygamma, n, r1))
                - sign * ap(lax.polygamma, n, 1.0 - xn))
    return where(positive, ap(lax.polygamma, n, xp), negative)


def trigamma(x: Expr) -> Expr:
    """polygamma(1, x) for finite x that is not a pole; for x < 0 by the reflection
    psi1(x) = pi**2 / sin(pi x)**2 - psi1(1 - x), with sin(pi x)**2 taken at the exact
    offset of x to the nearest integer."""
    positive = x > 0.0
    xn = where(positive, -0.5, x)
    s = ap(lax.sin, _nearest_offset(xn) * math.pi)
    negative = (math.pi ** 2) / (s * s) - ap(lax.polygamma, x.const(1.0), 1.0 - xn)
    return where(positive, ap(lax.polygamma, x.const(1.0), where(positive, x, 1.0)), negative)


def _generate_coefficients():  # pragma: no cover - documents the tables in this module
    import mpmath as mp
    mp.mp.dps = 50

    def cheb(f, n=80):
        nodes = [(j + mp.mpf(1) / 2) * mp.pi / n for j in range(n)]
        vals = [f(mp.cos(t)) for t in nodes]
        cs = [2 * mp.fsum(v * mp.cos(k * t) for v, t in zip(vals, nodes)) / n for k in range(n)]
        cs[0] /= 2
        top = max(abs(c) for c in cs)
        while abs(cs[-1]) < 1e-18 * top:
            cs.pop()
        return [float(c) for c in cs]

    def large(y):
        u = (y + 1) / 2
        if u == 0:
            return 1 / mp.sqrt(2 * mp.pi)
        t = 8 / u
        return mp.sqrt(t) * mp.exp(-t) * mp.besseli(0, t)

    small = cheb(lambda y: mp.exp(-4 * (y + 1)) * mp.besseli(0, 4 * (y + 1)))
    # lgamma(2 + z) = (1 - euler) z + sum_k>=2 (-1)**k (zeta(k) - 1) / k z**k, |z| <= 1/2
    # (tlaloc/special.py _LGAMMA2)
    lgamma2 = [0.0, float(1 - mp.euler)] + [float((-1) ** k * (mp.zeta(k) - 1) / k)
                                            for k in range(2, 28)]
    return small, cheb(large), lgamma2


# ----------------------------------------------------------------------------- primitives

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _partial(fn):
    """A partial derivative written with Exprs, for ad.elementwise_rules."""
    return lambda *nodes: fn(*(Expr(n) for n in nodes)).node


def i1e_partial(x, out):
    # d/dx i1e = i0e - i1e (sign(x) + 1/x); 1/2 at 0
    zero = x.eq(0.0)
    d = i0e_d(x) - out * (ap(lax.sign, x) + 1.0 / where(zero, 1.0, x))
    return where(zero, 0.5, d)


def _polygamma_impl(n, x):
    ok = (n >= 0) & (n == np.floor(n))
    r = _scipy("polygamma")(np.where(ok, n, 0).astype(np.int64), x)
    return np.where(ok, r, np.nan)


def _unary(name, hlo, impl, partial, source):
    return declare(name, infer=kinds_check(name, "f"), emit=lambda ctx, x: ctx.simple(hlo, x),
                   impl=_in_dtype(impl), source=source, elementwise=True, batch=bt.elementwise(name),
                   padding=pd.ignore(name),
                   **ad.elementwise_rules(_partial(partial)))


erf = _unary("erf", "chlo.erf", "erf",
             lambda x, out: exp(-(x * x)) * _TWO_OVER_SQRT_PI, "xp.special.erf({0})")
erfc = _unary("erfc", "chlo.erfc", "erfc",
              lambda x, out: exp(-(x * x)) * -_TWO_OVER_SQRT_PI, "xp.special.erfc({0})")
erf_inv = _unary("erf_inv", "chlo.erf_inv", "erfinv",
                 lambda x, out: exp(out * out) * (math.sqrt(math.pi) / 2), "xp.special.erfinv({0})")
def _lgamma(x):
    """scipy's gammaln, with lgamma(-inf) = +inf (C99, and XLA; scipy gives -inf)."""
    out = _scipy("gammaln")(x)
    return np.where(x == -np.inf, np.inf, out)


lgamma = _unary("lgamma", "chlo.lgamma", _lgamma,
                lambda x, out: ap(lax.digamma, x), "xp.special.gammaln({0})")
# d/dx digamma = polygamma(1, x), for negative x too
digamma = _unary("digamma", "chlo.digamma", "psi",
                 lambda x, out: trigamma(x), "xp.special.digamma({0})")
bessel_i1e = _unary("bessel_i1e", "chlo.bessel_i1e", "i1e", i1e_partial, "xp.special.i1e({0})")
# polygamma(n, x): n is a float holding a non-negative integer (NaN otherwise); XLA's
# results are right for x > 0 (tlaloc.special uses it there only)
polygamma = declare(
    "polygamma", infer=kinds_check("polygamma", "f"), elementwise=True,
    emit=lambda ctx, n, x: ctx.simple("chlo.polygamma", n, x), impl=_in_dtype(_polygamma_impl),
    source="xp.special.polygamma({0}, {1})", batch=bt.elementwise("polygamma"),
    padding=pd.ignore("polygamma"),
    **ad.elementwise_rules(None, _partial(lambda n, x, out: ap(lax.polygamma, n + 1.0, x))))
