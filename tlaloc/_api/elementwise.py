"""Element-wise functions of the standard, written in primitives."""
from __future__ import annotations

import builtins

from .. import _dtypes as dt
from .._array import Array, from_node as wrap
from .._prims import complex_math
from ._core import (binary_operands, broadcast_shapes, broadcast_to_shape, cast, constant,
                    node_of, operands)
from ._core import fresh
from . import views
from .._prims import lax

_inf = float("inf")


# ----------------------------------------------------------------------------- helpers

def _require(name, x, kinds, what):
    node = node_of(name, x)
    if node.aval.dtype.kind not in kinds:
        raise TypeError(f"{name}: x must have a {what} dtype, got {node.aval.dtype}")
    return node


def _inexact(name, x):
    """The node of `x` in a floating dtype: integers and bools become the default float."""
    node = node_of(name, x)
    if node.aval.dtype.kind in dt.INTEGER_OR_BOOL_KINDS:
        node = cast(node, dt.DEFAULTS.real_floating)
    return node


def _const_like(node, value):
    return constant(value, node.aval.shape, node.aval.dtype, node.device)


def _binary(name, x1, x2, kinds, what):
    a, b = pair = binary_operands(name, x1, x2)
    if a.aval.dtype.kind not in kinds:
        raise TypeError(f"{name}: arguments must have {what} dtypes, got {a.aval.dtype}")
    return pair


def _float_unary(name, prim, complex_ok=True):
    kinds = dt.FLOATING_KINDS if complex_ok else "f"

    def fn(x, /):
        node = _inexact(name, x)
        if node.aval.dtype.kind not in kinds:
            raise TypeError(f"{name}: x must have a real floating dtype, got {node.aval.dtype}")
        # complex accuracy, branch cuts and special values are the primitive's own
        # (its formula, _prims/complex_math.py)
        return wrap(prim(node))
    fn.__name__ = name
    fn.__doc__ = f"Element-wise {name}; integer input is computed in the default float dtype."
    return fn


# ----------------------------------------------------------------------------- transcendental

exp = _float_unary("exp", lax.exp)
expm1 = _float_unary("expm1", lax.expm1)
log = _float_unary("log", lax.log)
log1p = _float_unary("log1p", lax.log1p)
sqrt = _float_unary("sqrt", lax.sqrt)
sin = _float_unary("sin", lax.sin)
cos = _float_unary("cos", lax.cos)
tan = _float_unary("tan", lax.tan)
tanh = _float_unary("tanh", lax.tanh)
asin = _float_unary("asin", lax.asin)
acos = _float_unary("acos", lax.acos)
atan = _float_unary("atan", lax.atan)
sinh = _float_unary("sinh", lax.sinh)
cosh = _float_unary("cosh", lax.cosh)
asinh = _float_unary("asinh", lax.asinh)
acosh = _float_unary("acosh", lax.acosh)
atanh = _float_unary("atanh", lax.atanh)


def _log_base(name, base_log):
    def fn(x, /):
        node = _inexact(name, x)
        if node.aval.dtype.kind == "c":
            # scale the parts: a complex product with (s + 0j) turns log(0) = -inf + 0j
            # into -inf + nan j
            ln = lax.log(node)
            re, im = lax.real(ln), lax.imag(ln)
            scale = _const_like(re, 1.0 / base_log)
            return wrap(lax.complex(lax.multiply(re, scale), lax.multiply(im, scale)))
        ln = lax.log(node)
        scale = _const_like(ln, 1.0 / base_log)
        return wrap(lax.multiply(ln, scale))
    fn.__name__ = name
    return fn


log2 = _log_base("log2", 0.6931471805599453)
log10 = _log_base("log10", 2.302585092994046)


def atan2(x1, x2, /):
    a, b = _binary("atan2", x1, x2, "f", "real floating")
    return wrap(lax.atan2(a, b))


def logaddexp(x1, x2, /):
    a, b = _binary("logaddexp", x1, x2, "f", "real floating")
    hi = lax.maximum(a, b)
    delta = lax.subtract(a, b)
    tail = lax.log1p(lax.exp(lax.negate(lax.abs(delta))))
    # equal infinities make delta NaN; a + b is then the right answer (and NaN stays NaN)
    return wrap(lax.select(_isnan(delta), lax.add(a, b), lax.add(hi, tail)))


def hypot(x1, x2, /):
    a, b = _binary("hypot", x1, x2, "f", "real floating")
    return wrap(complex_math.hypot(a, b))


# ----------------------------------------------------------------------------- arithmetic

def add(x1, x2, /):
    a, b = _binary("add", x1, x2, dt.ALL_KINDS, "numeric")
    if a.aval.dtype.kind == "b":
        return wrap(lax.bitwise_or(a, b))
    return wrap(lax.add(a, b))


def subtract(x1, x2, /):
    a, b = _binary("subtract", x1, x2, dt.NUMERIC_KINDS, "numeric")
    return wrap(lax.subtract(a, b))


def multiply(x1, x2, /):
    a, b = _binary("multiply", x1, x2, dt.ALL_KINDS, "numeric")
    if a.aval.dtype.kind == "b":
        return wrap(lax.bitwise_and(a, b))
    return wrap(lax.multiply(a, b))


def divide(x1, x2, /):
    a, b = binary_operands("divide", x1, x2)
    if a.aval.dtype.kind in dt.INTEGER_OR_BOOL_KINDS:   # true division, in the default float
        f = dt.DEFAULTS.real_floating
        a, b = cast(a, f), cast(b, f)
    return wrap(lax.divide(a, b))


def _is_negative(node):
    return lax.compare(node, _const_like(node, 0), direction="LT")


def floor_divide(x1, x2, /):
    a, b = _binary("floor_divide", x1, x2, dt.REAL_KINDS, "real numeric")
    if a.aval.dtype.kind in dt.INTEGER_KINDS:
        q = lax.divide(a, b)
        if a.aval.dtype.kind == "i":
            r = lax.remainder(a, b)
            inexact = lax.compare(r, _const_like(r, 0), direction="NE")
            differ = lax.compare(_is_negative(r), _is_negative(b), direction="NE")
            q = lax.select(lax.bitwise_and(inexact, differ), lax.subtract(q, _const_like(q, 1)), q)
        by_zero = lax.compare(b, _const_like(b, 0), direction="EQ")
        return wrap(lax.select(by_zero, _const_like(q, 0), q))
    # Python's float floor division: exact through fmod, then rounded to the nearest integer
    mod = lax.remainder(a, b)
    div = lax.divide(lax.subtract(a, mod), b)
    fix = lax.bitwise_and(lax.compare(mod, _const_like(mod, 0), direction="NE"),
                          lax.compare(_is_negative(b), _is_negative(mod), direction="NE"))
    div = lax.select(fix, lax.subtract(div, _const_like(div, 1)), div)
    floored = lax.floor(div)
    half_up = lax.compare(lax.subtract(div, floored), _const_like(div, 0.5), direction="GT")
    floored = lax.select(half_up, lax.add(floored, _const_like(div, 1)), floored)
    quotient = lax.divide(a, b)
    zero_div = lax.compare(div, _const_like(div, 0), direction="EQ")
    floored = lax.select(zero_div, _copysign(_const_like(div, 0.0), quotient), floored)
    # x // 0, x // inf and non-finite x follow true division's special cases
    by_zero = lax.compare(b, _const_like(b, 0), direction="EQ")
    special = lax.bitwise_or(by_zero, lax.bitwise_not(lax.is_finite(mod)))
    return wrap(lax.select(special, lax.floor(quotient), floored))


def remainder(x1, x2, /):
    a, b = _binary("remainder", x1, x2, dt.REAL_KINDS, "real numeric")
    r = lax.remainder(a, b)
    zero = _const_like(r, 0)
    if a.aval.dtype.kind == "u":
        by_zero = lax.compare(b, _const_like(b, 0), direction="EQ")
        return wrap(lax.select(by_zero, zero, r))
    nonzero = lax.compare(r, zero, direction="NE")
    differ = lax.compare(_is_negative(r), _is_negative(b), direction="NE")
    fixed = lax.select(lax.bitwise_and(nonzero, differ), lax.add(r, b), r)
    if a.aval.dtype.kind == "i":
        by_zero = lax.compare(b, _const_like(b, 0), direction="EQ")
        return wrap(lax.select(by_zero, zero, fixed))
    # a zero remainder takes the divisor's sign, as in Python
    return wrap(lax.select(nonzero, fixed, _copysign(zero, b)))


def pow(x1, x2, /):
    a, b = _binary("pow", x1, x2, dt.NUMERIC_KINDS, "numeric")
    if type(x2) is int and x2 == 2 and isinstance(x1, Array):
        # x ** 2 is x * x, bit for bit (special values and zeros' signs included), and XLA:CPU
        # runs a power whose exponent is a program input ~25x slower than a product
        return wrap(lax.multiply(a, a))
    out = lax.power(a, b)
    if a.aval.dtype.kind in dt.INTEGER_KINDS:
        # XLA's integer power reads only the low 6 bits of the exponent and compares it as
        # signed (0 ** 64 gives 1). From 64 on, only bases 0, 1 and -1 (all bits set) do not
        # overflow (or wrap to 0 or +-1): give their exact powers, and 0 for the overflowing
        # rest, the same on every backend.
        big = lax.compare(b, _const_like(b, 64), direction="GE")
        one = _const_like(out, 1)
        minus_one = _const_like(out, -1 if a.aval.dtype.kind == "i" else dt.iinfo(a.aval.dtype).max)
        odd = lax.compare(lax.bitwise_and(b, one), one, direction="EQ")
        exact = lax.select(lax.compare(a, one, direction="EQ"), one, _const_like(out, 0))
        exact = lax.select(lax.compare(a, minus_one, direction="EQ"),
                           lax.select(odd, minus_one, one), exact)
        out = lax.select(big, exact, out)
    # complex 0 ** z: the primitive's formula (_prims/complex_math.py)
    return wrap(out)


def negative(x, /):
    node = _require("negative", x, dt.NUMERIC_KINDS, "numeric")
    return wrap(lax.negate(node))


def positive(x, /):
    _require("positive", x, dt.NUMERIC_KINDS, "numeric")
    return fresh(x)


def abs(x, /):
    node = _require("abs", x, dt.NUMERIC_KINDS, "numeric")
    if node.aval.dtype.kind == "u":
        return fresh(x)
    return wrap(lax.abs(node))     # complex infinities: the primitive's formula


def sign(x, /):
    node = _require("sign", x, dt.NUMERIC_KINDS, "numeric")
    if node.aval.dtype.kind == "u":
        return wrap(cast(lax.compare(node, _const_like(node, 0), direction="NE"), node.aval.dtype))
    return wrap(lax.sign(node))


def square(x, /):
    _require("square", x, dt.ALL_KINDS, "numeric")
    return multiply(x, x)


def reciprocal(x, /):
    node = _inexact("reciprocal", x)
    return wrap(lax.divide(_const_like(node, 1), node))


def maximum(x1, x2, /):
    a, b = _binary("maximum", x1, x2, dt.REAL_KINDS, "real numeric")
    return wrap(lax.maximum(a, b))


def minimum(x1, x2, /):
    a, b = _binary("minimum", x1, x2, dt.REAL_KINDS, "real numeric")
    return wrap(lax.minimum(a, b))


def clip(x, /, min=None, max=None):
    node = _require("clip", x, dt.REAL_KINDS, "real numeric")
    dtype = node.aval.dtype
    out = node
    for bound, prim, name in ((min, lax.maximum, "min"), (max, lax.minimum, "max")):
        if bound is None:
            continue
        if isinstance(bound, Array):
            if bound.dtype.kind != dtype.kind and not (bound.dtype.kind in dt.INTEGER_KINDS and dtype.kind in dt.INTEGER_KINDS):
                raise TypeError(f"clip: {name} has dtype {bound.dtype}, x has {dtype}")
            (_, b), _, shape = operands("clip", x, bound, dtype=dtype)
        else:
            if isinstance(bound, complex) or not isinstance(bound, (int, float)):
                raise TypeError(f"clip: {name} must be a real number or an array, got {bound!r}")
            if dtype.kind in dt.INTEGER_KINDS:
                if isinstance(bound, float):
                    raise TypeError(f"clip: float bound {bound!r} for an integer array")
                info = dt.iinfo(dtype)
                bound = builtins.min(builtins.max(bound, info.min), info.max)
            (_, b), _, shape = operands("clip", x, bound, dtype=dtype)
        # min and max broadcast with x, as in the standard and array_api_strict
        shape = broadcast_shapes(out.aval.shape, b.aval.shape, name="clip")
        out = prim(broadcast_to_shape(out, shape), broadcast_to_shape(b, shape))
    return wrap(out) if out is not node else fresh(x)


# ----------------------------------------------------------------------------- rounding

def _integer_identity(name, prim):
    def fn(x, /):
        node = _require(name, x, dt.ALL_KINDS if name == "round" else dt.REAL_OR_BOOL_KINDS, "real numeric")
        kind = node.aval.dtype.kind
        if kind in dt.INTEGER_OR_BOOL_KINDS:
            return fresh(x)
        if kind == "c":
            parts = [prim(part(node)) for part in (lax.real, lax.imag)]
            return wrap(lax.complex(*parts))
        return wrap(prim(node))
    fn.__name__ = name
    return fn


floor = _integer_identity("floor", lax.floor)
ceil = _integer_identity("ceil", lax.ceil)
round = _integer_identity("round", lax.round_even)


def trunc(x, /):
    node = _require("trunc", x, dt.REAL_OR_BOOL_KINDS, "real numeric")
    if node.aval.dtype.kind in dt.INTEGER_OR_BOOL_KINDS:
        return fresh(x)
    return wrap(lax.select(_is_negative(node), lax.ceil(node), lax.floor(node)))


# ----------------------------------------------------------------------------- complex parts

def real(x, /):
    """The real part: a view of x, as in NumPy (x itself, viewed, when x is real)."""
    node = _require("real", x, dt.ALL_KINDS, "numeric")
    complex_ = node.aval.dtype.kind == "c"
    return _part(x, views.ComplexPart(False) if complex_ else views.Reshape(x.shape))


def imag(x, /):
    """The imaginary part: a view of a complex x, as in NumPy; zeros for a real x (NumPy's
    are read-only, not a view)."""
    node = _require("imag", x, dt.ALL_KINDS, "numeric")
    if node.aval.dtype.kind == "c":
        return _part(x, views.ComplexPart(True))
    return wrap(_const_like(node, 0))


def _part(x, step):
    strides, itemsize = views.layout(x)
    if x.dtype.kind != "c":
        return views.view(x, step, strides)
    # a part's items are the first or second half of each complex item, at the same strides
    itemsize //= 2
    return views.view(x, step, strides, itemsize, itemsize if step.imaginary else 0)


def conj(x, /):
    node = _require("conj", x, dt.ALL_KINDS, "numeric")
    if node.aval.dtype.kind != "c":
        return fresh(x)
    return wrap(lax.complex(lax.real(node), lax.negate(lax.imag(node))))


# ----------------------------------------------------------------------------- classification

def _isnan(node):
    return lax.compare(node, node, direction="NE")


def _isinf(node):
    return lax.compare(lax.abs(node), _const_like(lax.abs(node), _inf), direction="EQ")


def _classify(name, real_fn, combine):
    def fn(x, /):
        node = _require(name, x, dt.ALL_KINDS, "numeric")
        kind = node.aval.dtype.kind
        if kind in dt.INTEGER_OR_BOOL_KINDS:
            const = name == "isfinite"
            return wrap(constant(const, node.aval.shape, dt.bool, node.device))
        if kind == "c":
            return wrap(combine(real_fn(lax.real(node)), real_fn(lax.imag(node))))
        return wrap(real_fn(node))
    fn.__name__ = name
    return fn


isnan = _classify("isnan", _isnan, lax.bitwise_or)
isinf = _classify("isinf", _isinf, lax.bitwise_or)
isfinite = _classify("isfinite", lambda n: lax.is_finite(n), lax.bitwise_and)


def _signbit(node):
    dtype = node.aval.dtype
    as_int = lax.bitcast_convert(node, dtype=dt.canonicalize(f"int{dtype.bits}"))
    return _is_negative(as_int)


def signbit(x, /):
    node = _require("signbit", x, "f", "real floating")
    return wrap(_signbit(node))


def _copysign(magnitude, sign_source):
    mag = lax.abs(magnitude)
    return lax.select(_signbit(sign_source), lax.negate(mag), mag)


def copysign(x1, x2, /):
    a, b = _binary("copysign", x1, x2, "f", "real floating")
    return wrap(_copysign(a, b))


def nextafter(x1, x2, /):
    a, b = _binary("nextafter", x1, x2, "f", "real floating")
    return wrap(lax.nextafter(a, b))


# ----------------------------------------------------------------------------- comparison

def _comparison(name, direction):
    def fn(x1, x2, /):
        (a, b), dtype, _ = operands(name, x1, x2)
        if dtype.kind == "c" and direction not in ("EQ", "NE"):
            raise TypeError(f"{name}: complex numbers are not ordered")
        return wrap(lax.compare(a, b, direction=direction))
    fn.__name__ = name
    return fn


equal = _comparison("equal", "EQ")
not_equal = _comparison("not_equal", "NE")
less = _comparison("less", "LT")
less_equal = _comparison("less_equal", "LE")
greater = _comparison("greater", "GT")
greater_equal = _comparison("greater_equal", "GE")


# ----------------------------------------------------------------------------- logical / bitwise

def _as_bool(node):
    if node.aval.dtype is dt.bool:
        return node
    return lax.compare(node, _const_like(node, 0), direction="NE")


def _logical(name, prim):
    def fn(x1, x2, /):
        (a, b), _, _ = operands(name, x1, x2)
        return wrap(prim(_as_bool(a), _as_bool(b)))
    fn.__name__ = name
    return fn


logical_and = _logical("logical_and", lax.bitwise_and)
logical_or = _logical("logical_or", lax.bitwise_or)
logical_xor = _logical("logical_xor", lax.bitwise_xor)


def logical_not(x, /):
    return wrap(lax.bitwise_not(_as_bool(node_of("logical_not", x))))


def _bitwise(name, prim, kinds=dt.INTEGER_OR_BOOL_KINDS):
    def fn(x1, x2, /):
        a, b = _binary(name, x1, x2, kinds, "integer or boolean" if "b" in kinds else "integer")
        return wrap(prim(a, b))
    fn.__name__ = name
    return fn


bitwise_and = _bitwise("bitwise_and", lax.bitwise_and)
bitwise_or = _bitwise("bitwise_or", lax.bitwise_or)
bitwise_xor = _bitwise("bitwise_xor", lax.bitwise_xor)
bitwise_left_shift = _bitwise("bitwise_left_shift", lax.shift_left, dt.INTEGER_KINDS)


def bitwise_right_shift(x1, x2, /):
    a, b = _binary("bitwise_right_shift", x1, x2, dt.INTEGER_KINDS, "integer")
    prim = lax.shift_right_arithmetic if a.aval.dtype.kind == "i" else lax.shift_right_logical
    return wrap(prim(a, b))


def bitwise_invert(x, /):
    return wrap(lax.bitwise_not(_require("bitwise_invert", x, dt.INTEGER_OR_BOOL_KINDS,
                                         "integer or boolean")))
