"""Element-wise functions of the standard, written in primitives."""
from __future__ import annotations

import builtins

from .. import _dtypes as dt
from .._array import Array
from .._graph import bind
from .._prims import complex_math
from .._prims import elementwise as ew
from ._core import (broadcast_shapes, broadcast_to_shape, cast, constant, node_of, operands,
                    result_dtype, wrap)
from ._core import fresh

_inf = builtins.float("inf")


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


def _p(prim, *nodes, **params):
    return bind(prim, nodes, params)


def _const_like(node, value):
    return constant(value, node.aval.shape, node.aval.dtype, node.device)


def _binary(name, x1, x2, kinds, what):
    (a, b), dtype, _ = operands(name, x1, x2)
    if dtype.kind not in kinds:
        raise TypeError(f"{name}: arguments must have {what} dtypes, got {dtype}")
    return a, b


def _float_unary(name, prim, complex_ok=True):
    kinds = dt.FLOATING_KINDS if complex_ok else "f"

    def fn(x, /):
        node = _inexact(name, x)
        if node.aval.dtype.kind not in kinds:
            raise TypeError(f"{name}: x must have a real floating dtype, got {node.aval.dtype}")
        # complex accuracy, branch cuts and special values are the primitive's own
        # (its formula, _prims/complex_math.py)
        return wrap(_p(prim, node))
    fn.__name__ = name
    fn.__doc__ = f"Element-wise {name}; integer input is computed in the default float dtype."
    return fn


# ----------------------------------------------------------------------------- transcendental

exp = _float_unary("exp", ew.exp)
expm1 = _float_unary("expm1", ew.expm1)
log = _float_unary("log", ew.log)
log1p = _float_unary("log1p", ew.log1p)
sqrt = _float_unary("sqrt", ew.sqrt)
sin = _float_unary("sin", ew.sin)
cos = _float_unary("cos", ew.cos)
tan = _float_unary("tan", ew.tan)
tanh = _float_unary("tanh", ew.tanh)
asin = _float_unary("asin", ew.asin)
acos = _float_unary("acos", ew.acos)
atan = _float_unary("atan", ew.atan)
sinh = _float_unary("sinh", ew.sinh)
cosh = _float_unary("cosh", ew.cosh)
asinh = _float_unary("asinh", ew.asinh)
acosh = _float_unary("acosh", ew.acosh)
atanh = _float_unary("atanh", ew.atanh)


def _log_base(name, base_log):
    def fn(x, /):
        node = _inexact(name, x)
        if node.aval.dtype.kind == "c":
            # scale the parts: a complex product with (s + 0j) turns log(0) = -inf + 0j
            # into -inf + nan j
            ln = _p(ew.log, node)
            re, im = _p(ew.real, ln), _p(ew.imag, ln)
            scale = _const_like(re, 1.0 / base_log)
            return wrap(_p(ew.complex, _p(ew.multiply, re, scale), _p(ew.multiply, im, scale)))
        ln = _p(ew.log, node)
        scale = _const_like(ln, 1.0 / base_log)
        return wrap(_p(ew.multiply, ln, scale))
    fn.__name__ = name
    return fn


log2 = _log_base("log2", 0.6931471805599453)
log10 = _log_base("log10", 2.302585092994046)


def atan2(x1, x2, /):
    a, b = _binary("atan2", x1, x2, "f", "real floating")
    return wrap(_p(ew.atan2, a, b))


def logaddexp(x1, x2, /):
    a, b = _binary("logaddexp", x1, x2, "f", "real floating")
    hi = _p(ew.maximum, a, b)
    delta = _p(ew.subtract, a, b)
    tail = _p(ew.log1p, _p(ew.exp, _p(ew.negate, _p(ew.abs, delta))))
    # equal infinities make delta NaN; a + b is then the right answer (and NaN stays NaN)
    return wrap(_p(ew.select, _isnan(delta), _p(ew.add, a, b), _p(ew.add, hi, tail)))


def hypot(x1, x2, /):
    a, b = _binary("hypot", x1, x2, "f", "real floating")
    return wrap(complex_math.hypot(a, b))


# ----------------------------------------------------------------------------- arithmetic

def add(x1, x2, /):
    a, b = _binary("add", x1, x2, dt.ALL_KINDS, "numeric")
    if a.aval.dtype.kind == "b":
        return wrap(_p(ew.bitwise_or, a, b))
    return wrap(_p(ew.add, a, b))


def subtract(x1, x2, /):
    a, b = _binary("subtract", x1, x2, dt.NUMERIC_KINDS, "numeric")
    return wrap(_p(ew.subtract, a, b))


def multiply(x1, x2, /):
    a, b = _binary("multiply", x1, x2, dt.ALL_KINDS, "numeric")
    if a.aval.dtype.kind == "b":
        return wrap(_p(ew.bitwise_and, a, b))
    return wrap(_p(ew.multiply, a, b))


def divide(x1, x2, /):
    dtype = result_dtype("divide", x1, x2)
    if dtype.kind in dt.INTEGER_OR_BOOL_KINDS:
        dtype = dt.DEFAULTS.real_floating
    (a, b), _, _ = operands("divide", x1, x2, dtype=dtype)
    return wrap(_p(ew.divide, a, b))


def _is_negative(node):
    return _p(ew.compare, node, _const_like(node, 0), direction="LT")


def floor_divide(x1, x2, /):
    a, b = _binary("floor_divide", x1, x2, dt.REAL_KINDS, "real numeric")
    if a.aval.dtype.kind in dt.INTEGER_KINDS:
        q = _p(ew.divide, a, b)
        if a.aval.dtype.kind == "i":
            r = _p(ew.remainder, a, b)
            inexact = _p(ew.compare, r, _const_like(r, 0), direction="NE")
            differ = _p(ew.compare, _is_negative(r), _is_negative(b), direction="NE")
            q = _p(ew.select, _p(ew.bitwise_and, inexact, differ), _p(ew.subtract, q, _const_like(q, 1)), q)
        by_zero = _p(ew.compare, b, _const_like(b, 0), direction="EQ")
        return wrap(_p(ew.select, by_zero, _const_like(q, 0), q))
    # Python's float floor division: exact through fmod, then rounded to the nearest integer
    mod = _p(ew.remainder, a, b)
    div = _p(ew.divide, _p(ew.subtract, a, mod), b)
    fix = _p(ew.bitwise_and, _p(ew.compare, mod, _const_like(mod, 0), direction="NE"),
             _p(ew.compare, _is_negative(b), _is_negative(mod), direction="NE"))
    div = _p(ew.select, fix, _p(ew.subtract, div, _const_like(div, 1)), div)
    floored = _p(ew.floor, div)
    half_up = _p(ew.compare, _p(ew.subtract, div, floored), _const_like(div, 0.5), direction="GT")
    floored = _p(ew.select, half_up, _p(ew.add, floored, _const_like(div, 1)), floored)
    quotient = _p(ew.divide, a, b)
    zero_div = _p(ew.compare, div, _const_like(div, 0), direction="EQ")
    floored = _p(ew.select, zero_div, _copysign(_const_like(div, 0.0), quotient), floored)
    # x // 0, x // inf and non-finite x follow true division's special cases
    by_zero = _p(ew.compare, b, _const_like(b, 0), direction="EQ")
    special = _p(ew.bitwise_or, by_zero, _p(ew.bitwise_not, _p(ew.is_finite, mod)))
    return wrap(_p(ew.select, special, _p(ew.floor, quotient), floored))


def remainder(x1, x2, /):
    a, b = _binary("remainder", x1, x2, dt.REAL_KINDS, "real numeric")
    r = _p(ew.remainder, a, b)
    zero = _const_like(r, 0)
    if a.aval.dtype.kind == "u":
        by_zero = _p(ew.compare, b, _const_like(b, 0), direction="EQ")
        return wrap(_p(ew.select, by_zero, zero, r))
    nonzero = _p(ew.compare, r, zero, direction="NE")
    differ = _p(ew.compare, _is_negative(r), _is_negative(b), direction="NE")
    fixed = _p(ew.select, _p(ew.bitwise_and, nonzero, differ), _p(ew.add, r, b), r)
    if a.aval.dtype.kind == "i":
        by_zero = _p(ew.compare, b, _const_like(b, 0), direction="EQ")
        return wrap(_p(ew.select, by_zero, zero, fixed))
    # a zero remainder takes the divisor's sign, as in Python
    return wrap(_p(ew.select, nonzero, fixed, _copysign(zero, b)))


def pow(x1, x2, /):
    a, b = _binary("pow", x1, x2, dt.NUMERIC_KINDS, "numeric")
    out = _p(ew.power, a, b)
    if a.aval.dtype.kind in dt.INTEGER_KINDS:
        # XLA's integer power reads only the low 6 bits of the exponent and compares it as
        # signed (0 ** 64 gives 1). From 64 on, only bases 0, 1 and -1 (all bits set) do not
        # overflow (or wrap to 0 or +-1): give their exact powers, and 0 for the overflowing
        # rest, the same on every backend.
        big = _p(ew.compare, b, _const_like(b, 64), direction="GE")
        one = _const_like(out, 1)
        minus_one = _const_like(out, -1 if a.aval.dtype.kind == "i" else dt.iinfo(a.aval.dtype).max)
        odd = _p(ew.compare, _p(ew.bitwise_and, b, one), one, direction="EQ")
        exact = _p(ew.select, _p(ew.compare, a, one, direction="EQ"), one, _const_like(out, 0))
        exact = _p(ew.select, _p(ew.compare, a, minus_one, direction="EQ"),
                   _p(ew.select, odd, minus_one, one), exact)
        out = _p(ew.select, big, exact, out)
    # complex 0 ** z: the primitive's formula (_prims/complex_math.py)
    return wrap(out)


def negative(x, /):
    node = _require("negative", x, dt.NUMERIC_KINDS, "numeric")
    return wrap(_p(ew.negate, node))


def positive(x, /):
    _require("positive", x, dt.NUMERIC_KINDS, "numeric")
    return fresh(x)


def abs(x, /):
    node = _require("abs", x, dt.NUMERIC_KINDS, "numeric")
    if node.aval.dtype.kind == "u":
        return fresh(x)
    return wrap(_p(ew.abs, node))     # complex infinities: the primitive's formula


def sign(x, /):
    node = _require("sign", x, dt.NUMERIC_KINDS, "numeric")
    if node.aval.dtype.kind == "u":
        return wrap(cast(_p(ew.compare, node, _const_like(node, 0), direction="NE"), node.aval.dtype))
    return wrap(_p(ew.sign, node))


def square(x, /):
    _require("square", x, dt.ALL_KINDS, "numeric")
    return multiply(x, x)


def reciprocal(x, /):
    node = _inexact("reciprocal", x)
    return wrap(_p(ew.divide, _const_like(node, 1), node))


def maximum(x1, x2, /):
    a, b = _binary("maximum", x1, x2, dt.REAL_KINDS, "real numeric")
    return wrap(_p(ew.maximum, a, b))


def minimum(x1, x2, /):
    a, b = _binary("minimum", x1, x2, dt.REAL_KINDS, "real numeric")
    return wrap(_p(ew.minimum, a, b))


def clip(x, /, min=None, max=None):
    node = _require("clip", x, dt.REAL_KINDS, "real numeric")
    dtype = node.aval.dtype
    out = node
    for bound, prim, name in ((min, ew.maximum, "min"), (max, ew.minimum, "max")):
        if bound is None:
            continue
        if isinstance(bound, Array):
            if bound.dtype.kind != dtype.kind and not (bound.dtype.kind in dt.INTEGER_KINDS and dtype.kind in dt.INTEGER_KINDS):
                raise TypeError(f"clip: {name} has dtype {bound.dtype}, x has {dtype}")
            (_, b), _, shape = operands("clip", x, bound, dtype=dtype)
        else:
            if isinstance(bound, builtins.complex) or not isinstance(bound, (builtins.int, builtins.float)):
                raise TypeError(f"clip: {name} must be a real number or an array, got {bound!r}")
            if dtype.kind in dt.INTEGER_KINDS:
                if isinstance(bound, builtins.float):
                    raise TypeError(f"clip: float bound {bound!r} for an integer array")
                info = dt.iinfo(dtype)
                bound = builtins.min(builtins.max(bound, info.min), info.max)
            (_, b), _, shape = operands("clip", x, bound, dtype=dtype)
        # min and max broadcast with x, as in the standard and array_api_strict
        shape = broadcast_shapes(out.aval.shape, b.aval.shape, name="clip")
        out = _p(prim, broadcast_to_shape(out, shape), broadcast_to_shape(b, shape))
    return wrap(out) if out is not node else fresh(x)


# ----------------------------------------------------------------------------- rounding

def _integer_identity(name, prim):
    def fn(x, /):
        node = _require(name, x, dt.ALL_KINDS if name == "round" else dt.REAL_OR_BOOL_KINDS, "real numeric")
        kind = node.aval.dtype.kind
        if kind in dt.INTEGER_OR_BOOL_KINDS:
            return fresh(x)
        if kind == "c":
            parts = [_p(prim, _p(part, node)) for part in (ew.real, ew.imag)]
            return wrap(_p(ew.complex, *parts))
        return wrap(_p(prim, node))
    fn.__name__ = name
    return fn


floor = _integer_identity("floor", ew.floor)
ceil = _integer_identity("ceil", ew.ceil)
round = _integer_identity("round", ew.round_even)


def trunc(x, /):
    node = _require("trunc", x, dt.REAL_OR_BOOL_KINDS, "real numeric")
    if node.aval.dtype.kind in dt.INTEGER_OR_BOOL_KINDS:
        return fresh(x)
    return wrap(_p(ew.select, _is_negative(node), _p(ew.ceil, node), _p(ew.floor, node)))


# ----------------------------------------------------------------------------- complex parts

def real(x, /):
    node = _require("real", x, dt.ALL_KINDS, "numeric")
    return wrap(_p(ew.real, node)) if node.aval.dtype.kind == "c" else fresh(x)


def imag(x, /):
    node = _require("imag", x, dt.ALL_KINDS, "numeric")
    if node.aval.dtype.kind == "c":
        return wrap(_p(ew.imag, node))
    return wrap(_const_like(node, 0))


def conj(x, /):
    node = _require("conj", x, dt.ALL_KINDS, "numeric")
    if node.aval.dtype.kind != "c":
        return fresh(x)
    return wrap(_p(ew.complex, _p(ew.real, node), _p(ew.negate, _p(ew.imag, node))))


# ----------------------------------------------------------------------------- classification

def _isnan(node):
    return _p(ew.compare, node, node, direction="NE")


def _isinf(node):
    return _p(ew.compare, _p(ew.abs, node), _const_like(_p(ew.abs, node), _inf), direction="EQ")


def _classify(name, real_fn, combine):
    def fn(x, /):
        node = _require(name, x, dt.ALL_KINDS, "numeric")
        kind = node.aval.dtype.kind
        if kind in dt.INTEGER_OR_BOOL_KINDS:
            const = name == "isfinite"
            return wrap(constant(const, node.aval.shape, dt.bool, node.device))
        if kind == "c":
            return wrap(_p(combine, real_fn(_p(ew.real, node)), real_fn(_p(ew.imag, node))))
        return wrap(real_fn(node))
    fn.__name__ = name
    return fn


isnan = _classify("isnan", _isnan, ew.bitwise_or)
isinf = _classify("isinf", _isinf, ew.bitwise_or)
isfinite = _classify("isfinite", lambda n: _p(ew.is_finite, n), ew.bitwise_and)


def _signbit(node):
    dtype = node.aval.dtype
    as_int = _p(ew.bitcast_convert, node, dtype=dt.canonicalize(f"int{dtype.bits}"))
    return _is_negative(as_int)


def signbit(x, /):
    node = _require("signbit", x, "f", "real floating")
    return wrap(_signbit(node))


def _copysign(magnitude, sign_source):
    mag = _p(ew.abs, magnitude)
    return _p(ew.select, _signbit(sign_source), _p(ew.negate, mag), mag)


def copysign(x1, x2, /):
    a, b = _binary("copysign", x1, x2, "f", "real floating")
    return wrap(_copysign(a, b))


def nextafter(x1, x2, /):
    a, b = _binary("nextafter", x1, x2, "f", "real floating")
    return wrap(_p(ew.nextafter, a, b))


# ----------------------------------------------------------------------------- comparison

def _comparison(name, direction):
    def fn(x1, x2, /):
        (a, b), dtype, _ = operands(name, x1, x2)
        if dtype.kind == "c" and direction not in ("EQ", "NE"):
            raise TypeError(f"{name}: complex numbers are not ordered")
        return wrap(_p(ew.compare, a, b, direction=direction))
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
    return _p(ew.compare, node, _const_like(node, 0), direction="NE")


def _logical(name, prim):
    def fn(x1, x2, /):
        (a, b), _, _ = operands(name, x1, x2)
        return wrap(_p(prim, _as_bool(a), _as_bool(b)))
    fn.__name__ = name
    return fn


logical_and = _logical("logical_and", ew.bitwise_and)
logical_or = _logical("logical_or", ew.bitwise_or)
logical_xor = _logical("logical_xor", ew.bitwise_xor)


def logical_not(x, /):
    return wrap(_p(ew.bitwise_not, _as_bool(node_of("logical_not", x))))


def _bitwise(name, prim, kinds=dt.INTEGER_OR_BOOL_KINDS):
    def fn(x1, x2, /):
        a, b = _binary(name, x1, x2, kinds, "integer or boolean" if "b" in kinds else "integer")
        return wrap(_p(prim, a, b))
    fn.__name__ = name
    return fn


bitwise_and = _bitwise("bitwise_and", ew.bitwise_and)
bitwise_or = _bitwise("bitwise_or", ew.bitwise_or)
bitwise_xor = _bitwise("bitwise_xor", ew.bitwise_xor)
bitwise_left_shift = _bitwise("bitwise_left_shift", ew.shift_left, dt.INTEGER_KINDS)


def bitwise_right_shift(x1, x2, /):
    a, b = _binary("bitwise_right_shift", x1, x2, dt.INTEGER_KINDS, "integer")
    prim = ew.shift_right_arithmetic if a.aval.dtype.kind == "i" else ew.shift_right_logical
    return wrap(_p(prim, a, b))


def bitwise_invert(x, /):
    return wrap(_p(ew.bitwise_not, _require("bitwise_invert", x, dt.INTEGER_OR_BOOL_KINDS, "integer or boolean")))
