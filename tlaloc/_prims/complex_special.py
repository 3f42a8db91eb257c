"""Special cases of the complex elementwise functions at infinite and NaN parts.

The standard prescribes them (its "For complex floating-point operands" lists, which follow
C99 Annex G), XLA does not implement them (exp(inf + inf j) is nan + nan j, not inf + nan j;
sqrt(inf + nan j) is nan + nan j, not inf + nan j; ...), and NumPy misses a few (expm1 is
exp(z) - 1, so expm1(inf + 0j) is inf + nan j).

Each rule below gives, for an input whose real part x or imaginary part y is infinite or NaN,
the result's parts, written once against a small set of operations. The same rule runs in the
StableHLO emitted for the primitive (through `_Emit`) and in the interpreter's NumPy
implementation (through `_Host`), and replaces the base result only where an input part is
not finite, so finite inputs keep the accurate base computation and both backends give the
same special values.

Rules are written for the first quadrant (x >= 0 and y >= 0, by sign bit) or the upper half
plane where the function has the matching symmetries, f(conj z) = conj f(z) and, for odd
functions, f(-z) = -f(z) (cosh is even); `_quadrants` maps the other quadrants there and back.
Functions of i*z (sin, cos, tan, asin, atan) are derived from sinh, cosh, tanh, asinh, atanh.
"""
from __future__ import annotations

import math

import numpy as np

from .. import _dtypes as dt
from .core import aval

_PI = math.pi


# ----------------------------------------------------------------------------- rules

def _exp_half(k, x, y):
    """exp for y >= 0."""
    inf, zero, nan = k.c(math.inf), k.c(0.0), k.c(math.nan)
    pinf, ninf, yfin = k.eq(x, inf), k.eq(x, k.c(-math.inf)), k.isfinite(y)
    re = k.select(pinf, k.select(yfin, k.mul(inf, k.cos(y)), inf),
                  k.select(ninf, k.select(yfin, k.mul(zero, k.cos(y)), zero), nan))
    im = k.select(pinf, k.select(yfin, k.select(k.eq(y, zero), zero, k.mul(inf, k.sin(y))), nan),
                  k.select(ninf, k.select(yfin, k.mul(zero, k.sin(y)), zero),
                           k.select(k.and_(k.isnan(x), k.eq(y, zero)), zero, nan)))
    return re, im


def _expm1_half(k, x, y):
    re, im = _exp_half(k, x, y)
    return k.sub(re, k.c(1.0)), im


def _log_any(k, x, y):
    """log and log1p, every quadrant (atan2 carries the signs)."""
    some_inf = k.or_(k.isinf(x), k.isinf(y))
    return k.select(some_inf, k.c(math.inf), k.c(math.nan)), k.atan2(y, x)


def _sqrt_half(k, x, y):
    inf, zero, nan = k.c(math.inf), k.c(0.0), k.c(math.nan)
    yinf, ynan = k.isinf(y), k.isnan(y)
    pinf, ninf = k.eq(x, inf), k.eq(x, k.c(-math.inf))
    re = k.select(yinf, inf, k.select(pinf, inf, k.select(ninf, k.select(ynan, nan, zero), nan)))
    im = k.select(yinf, inf, k.select(pinf, k.select(ynan, nan, zero), k.select(ninf, inf, nan)))
    return re, im


def _acos_half(k, x, y):
    some_inf = k.or_(k.isinf(x), k.isinf(y))
    some_nan = k.or_(k.isnan(x), k.isnan(y))
    nan = k.c(math.nan)
    re = k.select(some_inf, k.select(some_nan, nan, k.atan2(y, x)),
                  k.select(k.eq(x, k.c(0.0)), k.c(_PI / 2), nan))
    im = k.select(some_inf, k.c(-math.inf), nan)
    return re, im


def _acosh_half(k, x, y):
    some_inf = k.or_(k.isinf(x), k.isinf(y))
    nan = k.c(math.nan)
    re = k.select(some_inf, k.c(math.inf), nan)
    im = k.select(some_inf, k.atan2(y, x), k.select(k.eq(x, k.c(0.0)), k.c(_PI / 2), nan))
    return re, im


def _asinh_quadrant(k, x, y):
    some_inf = k.or_(k.isinf(x), k.isinf(y))
    zero, nan = k.c(0.0), k.c(math.nan)
    re = k.select(some_inf, k.c(math.inf), nan)
    im = k.select(some_inf, k.atan2(y, x), k.select(k.and_(k.isnan(x), k.eq(y, zero)), zero, nan))
    return re, im


def _atanh_quadrant(k, x, y):
    zero, nan, half_pi = k.c(0.0), k.c(math.nan), k.c(_PI / 2)
    xinf, yinf = k.isinf(x), k.isinf(y)
    re = k.select(k.or_(xinf, yinf), zero, k.select(k.eq(x, zero), zero, nan))
    im = k.select(yinf, half_pi, k.select(xinf, k.select(k.isnan(y), nan, half_pi), nan))
    return re, im


def _cosh_quadrant(k, x, y):
    inf, zero, nan = k.c(math.inf), k.c(0.0), k.c(math.nan)
    xinf, yfin = k.isinf(x), k.isfinite(y)
    re = k.select(xinf, k.select(yfin, k.mul(inf, k.cos(y)), inf), nan)
    im = k.select(k.and_(xinf, yfin), k.select(k.eq(y, zero), zero, k.mul(inf, k.sin(y))),
                  k.select(k.or_(k.eq(x, zero), k.and_(k.isnan(x), k.eq(y, zero))), zero, nan))
    return re, im


def _sinh_quadrant(k, x, y):
    inf, zero, nan = k.c(math.inf), k.c(0.0), k.c(math.nan)
    xinf, yfin = k.isinf(x), k.isfinite(y)
    re = k.select(xinf, k.select(yfin, k.mul(inf, k.cos(y)), inf), k.select(k.eq(x, zero), zero, nan))
    im = k.select(k.and_(xinf, yfin), k.select(k.eq(y, zero), zero, k.mul(inf, k.sin(y))),
                  k.select(k.and_(k.isnan(x), k.eq(y, zero)), zero, nan))
    return re, im


def _tanh_quadrant(k, x, y):
    zero, nan = k.c(0.0), k.c(math.nan)
    xinf = k.isinf(x)
    re = k.select(xinf, k.c(1.0), k.select(k.eq(x, zero), zero, nan))
    im = k.select(k.or_(xinf, k.and_(k.isnan(x), k.eq(y, zero))), zero, nan)
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
NAMES = tuple(_RULES) + tuple(_OF_IZ)


def _apply(k, name, x, y):
    """(re, im) of the special value of `name` at x + i y (meaningful where x or y is not
    finite)."""
    if name in _OF_IZ:
        base, times_minus_i = _OF_IZ[name]
        u, v = _apply(k, base, k.neg(y), x)  # g(i z), i z = -y + i x
        return (v, k.neg(u)) if times_minus_i else (u, v)
    rule, symmetry = _RULES[name]
    if symmetry is None:
        return rule(k, x, y)
    sy = k.signbit(y)
    if symmetry == "conj":
        re, im = rule(k, x, k.abs(y))
        return re, k.select(sy, k.neg(im), im)
    sx = k.signbit(x)
    re, im = rule(k, k.abs(x), k.abs(y))
    if symmetry == "odd":        # f(x + iy) = -conj f(-x + iy) = conj f(x - iy)
        return k.select(sx, k.neg(re), re), k.select(sy, k.neg(im), im)
    flip = k.xor(sx, sy)         # even: f(-z) = f(z), with conj symmetry
    return re, k.select(flip, k.neg(im), im)


# ----------------------------------------------------------------------------- backends

class _Host:
    """The rules' operations on NumPy arrays (the interpreter)."""

    def __init__(self, part):
        self.part = part

    def c(self, v):
        return self.part.type(v)

    eq = staticmethod(np.equal)
    isnan = staticmethod(np.isnan)
    isinf = staticmethod(np.isinf)
    isfinite = staticmethod(np.isfinite)
    signbit = staticmethod(np.signbit)
    and_ = staticmethod(np.logical_and)
    or_ = staticmethod(np.logical_or)
    xor = staticmethod(np.logical_xor)
    mul = staticmethod(np.multiply)
    sub = staticmethod(np.subtract)
    neg = staticmethod(np.negative)
    abs = staticmethod(np.abs)
    cos = staticmethod(np.cos)
    sin = staticmethod(np.sin)
    atan2 = staticmethod(np.arctan2)

    def select(self, p, a, b):
        return np.where(p, a, b).astype(self.part)


def host_fix(name, z, out):
    """`out` (NumPy result of `name` at `z`) with the special values where z has a part that
    is not finite."""
    if z.dtype.kind != "c":
        return out
    part = np.dtype(np.float32 if z.dtype == np.complex64 else np.float64)
    x, y = z.real.astype(part), z.imag.astype(part)
    special = ~(np.isfinite(x) & np.isfinite(y))
    if name == "expm1":
        # NumPy's expm1(-0 + 0j) is -0 + 0j; the standard (and XLA) give 0 + 0j
        zero = (x == 0) & (y == 0)
        if zero.any():
            plus_zero = np.empty(np.shape(out), z.dtype)
            plus_zero.real, plus_zero.imag = 0.0, y
            out = np.where(zero, plus_zero, out)
    if not special.any():
        return out
    with np.errstate(all="ignore"):
        re, im = _apply(_Host(part), name, x, y)
    fixed = np.empty(np.shape(out), z.dtype)
    fixed.real, fixed.imag = re, im
    return np.where(special, fixed, out).astype(z.dtype)


class _Emit:
    """The rules' operations as StableHLO ops on real tensors of one shape."""

    def __init__(self, ctx, shape, part):
        self.ctx = ctx
        self.f = aval(shape, part)
        self.b = aval(shape, dt.bool)
        self.i = aval(shape, dt.int32 if part.bits == 32 else dt.int64)

    def c(self, v):
        return self.ctx.constant(v, self.f)

    def _un(self, op, a, out=None):
        return self.ctx.op(op, (a,), (self.f,), out or self.f)

    def _bin(self, op, a, b):
        return self.ctx.op(op, (a, b), (self.f, self.f), self.f)

    def _cmp(self, a, b, direction, ctype="FLOAT", of=None):
        of = of or self.f
        return self.ctx.op("stablehlo.compare", (a, b), (of, of), self.b,
                           attrs=f"comparison_direction = #stablehlo<comparison_direction {direction}>, "
                                 f"compare_type = #stablehlo<comparison_type {ctype}>")

    def eq(self, a, b):
        return self._cmp(a, b, "EQ")

    def isnan(self, a):
        return self._cmp(a, a, "NE")

    def isinf(self, a):
        return self._cmp(self.abs(a), self.c(math.inf), "EQ")

    def isfinite(self, a):
        return self._un("stablehlo.is_finite", a, self.b)

    def signbit(self, a):
        bits = self.ctx.op("stablehlo.bitcast_convert", (a,), (self.f,), self.i)
        zero = self.ctx.constant(0, self.i)
        return self._cmp(bits, zero, "LT", "SIGNED", self.i)

    def _logic(self, op, p, q):
        return self.ctx.op(op, (p, q), (self.b, self.b), self.b)

    def and_(self, p, q):
        return self._logic("stablehlo.and", p, q)

    def or_(self, p, q):
        return self._logic("stablehlo.or", p, q)

    def xor(self, p, q):
        return self._logic("stablehlo.xor", p, q)

    def select(self, p, a, b):
        return self.ctx.op("stablehlo.select", (p, a, b), (self.b, self.f, self.f), self.f)

    def mul(self, a, b):
        return self._bin("stablehlo.multiply", a, b)

    def sub(self, a, b):
        return self._bin("stablehlo.subtract", a, b)

    def atan2(self, a, b):
        return self._bin("stablehlo.atan2", a, b)

    def neg(self, a):
        return self._un("stablehlo.negate", a)

    def abs(self, a):
        return self._un("stablehlo.abs", a)

    def cos(self, a):
        return self._un("stablehlo.cosine", a)

    def sin(self, a):
        return self._un("stablehlo.sine", a)


def emit_fix(ctx, name, z, out):
    """StableHLO: `out` (the base result of `name` at the complex tensor `z`) with the special
    values where z has a part that is not finite."""
    c = ctx.in_avals[0]
    part = dt.float32 if c.dtype.bits == 64 else dt.float64
    k = _Emit(ctx, c.shape, part)
    x = ctx.op("stablehlo.real", (z,), (c,), k.f)
    y = ctx.op("stablehlo.imag", (z,), (c,), k.f)
    re, im = _apply(k, name, x, y)
    fixed = ctx.op("stablehlo.complex", (re, im), (k.f, k.f), c)
    special = ctx.op("stablehlo.not", (k.and_(k.isfinite(x), k.isfinite(y)),), (k.b,), k.b)
    return ctx.op("stablehlo.select", (special, fixed, out), (k.b, c, c), c)


def install(prims):
    """Give each primitive of `prims` (name -> Primitive, complex-capable) the special values
    in its emission and its interpreter implementation."""
    for name, prim in prims.items():
        emit, impl = prim.emit, prim.impl

        def fixed_emit(ctx, z, *, _emit=emit, _name=name, **params):
            out = _emit(ctx, z, **params)
            if ctx.in_avals[0].dtype.kind != "c":
                return out
            return emit_fix(ctx, _name, z, out)

        def fixed_impl(z, *, _impl=impl, _name=name, **params):
            out = _impl(z, **params)
            return host_fix(_name, z, out) if z.dtype.kind == "c" else out

        prim.emit = fixed_emit
        prim.impl = fixed_impl


def install_sign(prim):
    """sign(+-0 +- 0j) is 0 + 0j in the standard, and sign(-0.0) is 0 (+0 in the official
    suite and in the interpreter); XLA returns x (keeping the zeros' signs)."""
    emit = prim.emit

    def fixed_emit(ctx, z, **params):
        out = emit(ctx, z, **params)
        c = ctx.in_avals[0]
        if c.dtype.kind not in "fc":
            return out
        b = aval(c.shape, dt.bool)
        zero = ctx.constant(0, c)
        is_zero = ctx.op("stablehlo.compare", (z, zero), (c, c), b,
                         attrs="comparison_direction = #stablehlo<comparison_direction EQ>, "
                               "compare_type = #stablehlo<comparison_type FLOAT>")
        return ctx.op("stablehlo.select", (is_zero, zero, out), (b, c, c), c)

    prim.emit = fixed_emit
