"""Generators of element-wise operations: unary and binary functions (arrays or Python
scalars on either side, as functions or operators), clip, where, and one-line formulas
(expressions) over values, scalars and constants."""
from __future__ import annotations

import math
import re

import numpy as np
from hypothesis import strategies as st

from . import casts, values
from .elementwise import apply_named
from .gen_common import (name_of, kind, dtype_src, promote, cast, dtypes_of_kinds, operand,
                         partner_shape, broadcasts, scalar_for, scalar_ref)
from .programs import choice as choice_of
from .reference import EXACT, FREE, Ref, finish, is_complex, real_dtype


# ============================================================================ element-wise

TRANSCENDENTAL = ["exp", "expm1", "log", "log1p", "log2", "log10", "sin", "cos", "tan", "sinh",
                  "cosh", "tanh", "asin", "acos", "atan", "asinh", "acosh", "atanh"]
COMPLEX_TRANSCENDENTAL = ["exp", "expm1", "log", "sin", "cos", "tanh", "sqrt"]

# name: (kinds accepted, operator spelling)
UNARY = {
    "abs": ("iufc", "abs({})"), "negative": ("iufc", "-{}"), "positive": ("iufc", "+{}"),
    "square": ("iufc", None), "sign": ("iufc", None), "bitwise_invert": ("biu", "~{}"),
    "logical_not": ("b", None), "floor": ("iuf", None), "ceil": ("iuf", None),
    "trunc": ("iuf", None), "round": ("iufc", None), "sqrt": ("fc", None),
    "reciprocal": ("fc", None), "isnan": ("iufc", None), "isinf": ("iufc", None),
    "isfinite": ("iufc", None), "signbit": ("f", None), "real": ("fc", None),
    "imag": ("fc", None), "conj": ("fc", None),
}
for _name in TRANSCENDENTAL:
    # tlaloc computes integer arguments in float64 (an extension of the standard)
    UNARY[_name] = ("iufc" if _name in COMPLEX_TRANSCENDENTAL else "iuf", None)

UNARY_NAMES = (["negative", "exp", "log", "sqrt", "sin", "abs", "floor", "round", "square"]
               + sorted(UNARY))

BOOL_RESULT = {"isnan", "isinf", "isfinite", "signbit", "equal", "not_equal", "less",
               "less_equal", "greater", "greater_equal"}


def unary_ref(name, r: Ref) -> Ref:
    if name in TRANSCENDENTAL + ["sqrt"] and kind(r) in "biu":
        r = cast(r, np.float64)
    if name in BOOL_RESULT:
        out = np.bool_
    elif name in ("abs", "real", "imag") and is_complex(r.dtype):
        out = real_dtype(r.dtype)
    else:
        out = r.dtype
    return apply_named(name, [r], out)


def gen_unary(b):
    name = b.draw(choice_of(UNARY_NAMES))
    kinds, spelling = UNARY[name]
    x = operand(b, lambda r: kind(r) in kinds,
                lambda: b.input(dtype=b.draw(st.sampled_from(dtypes_of_kinds(kinds)))))
    expr = spelling.format(f"v{x}") if spelling and b.draw(st.booleans()) else f"xp.{name}(v{x})"
    b.define(expr, unary_ref(name, b.refs[x]), [x], name)


# name: (kinds accepted, result, operator)
BINARY = {
    "add": ("iufc", "same", "+"), "subtract": ("iufc", "same", "-"),
    "multiply": ("iufc", "same", "*"), "divide": ("iufc", "divide", "/"),
    "floor_divide": ("iuf", "same", "//"), "remainder": ("iuf", "same", "%"),
    "pow": ("iufc", "same", "**"), "maximum": ("iuf", "same", None),
    "minimum": ("iuf", "same", None), "atan2": ("f", "same", None),
    "hypot": ("f", "same", None), "logaddexp": ("f", "same", None),
    "copysign": ("f", "same", None), "nextafter": ("f", "same", None),
    "equal": ("biufc", "bool", "=="), "not_equal": ("biufc", "bool", "!="),
    "less": ("iuf", "bool", "<"), "less_equal": ("iuf", "bool", "<="),
    "greater": ("iuf", "bool", ">"), "greater_equal": ("iuf", "bool", ">="),
    "logical_and": ("b", "bool", None), "logical_or": ("b", "bool", None),
    "logical_xor": ("b", "bool", None), "bitwise_and": ("biu", "same", "&"),
    "bitwise_or": ("biu", "same", "|"), "bitwise_xor": ("biu", "same", "^"),
    "bitwise_left_shift": ("iu", "same", "<<"), "bitwise_right_shift": ("iu", "same", ">>"),
}
# the reflected operator of `s OP x` for a scalar s on the left
REFLECTED = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


def binary_ref(name, a: Ref, c: Ref, common) -> Ref:
    """`name`(a, c) where both are cast to `common` first (as tlaloc promotes)."""
    _, result, _ = BINARY[name]
    if result == "divide" and values.kind(common) in "biu":
        common = "float64"
    a, c = cast(a, common), cast(c, common)
    out = np.bool_ if result == "bool" else common
    return apply_named(name, [a, c], out)


# arithmetic drawn more often (first: hypothesis favours and shrinks towards the first)
BINARY_NAMES = ["add", "subtract", "multiply", "divide"] * 3 + sorted(BINARY)


def gen_binary(b):
    name = b.draw(choice_of(BINARY_NAMES))
    kinds, result, op = BINARY[name]
    x = operand(b, lambda r: kind(r) in kinds,
                lambda: b.input(dtype=b.draw(st.sampled_from(dtypes_of_kinds(kinds)))))
    rx = b.refs[x]
    form = b.draw(st.sampled_from(["array", "array", "scalar"]))
    if form == "scalar":
        s = scalar_for(b, rx.dtype)
        left = b.draw(st.booleans())
        rs = scalar_ref(s, rx.dtype)
        src = values.scalar_source(s)
        if op and b.draw(st.booleans()):
            if left:
                expr = f"{_left(src)} {op} v{x}"
            else:
                expr = f"v{x} {op} {src}"
        else:
            expr = f"xp.{name}({src}, v{x})" if left else f"xp.{name}(v{x}, {src})"
        pair = (rs, rx) if left else (rx, rs)
        ref = binary_ref(name, *pair, name_of(rx))
        b.define(expr, ref, [x], name)
        return

    def fits(r):
        common = promote(rx.dtype, r.dtype)
        return common is not None and values.kind(common) in kinds and broadcasts(rx.shape, r.shape)

    def make():
        dtype = name_of(rx)
        if b.draw(st.booleans()):
            dtype = b.draw(st.sampled_from(dtypes_of_kinds(kinds)))
        if not fits(Ref(np.zeros((), dtype))):
            dtype = name_of(rx)
        return b.input(dtype=dtype, shape=partner_shape(b, rx.shape))
    y = operand(b, fits, make)
    ry = b.refs[y]
    if b.draw(st.booleans()):
        x, y, rx, ry = y, x, ry, rx
    common = promote(rx.dtype, ry.dtype)
    if op and b.draw(st.booleans()):
        expr = f"v{x} {op} v{y}"
    else:
        expr = f"xp.{name}(v{x}, v{y})"
    b.define(expr, binary_ref(name, rx, ry, common), [x, y], name)


def gen_clip(b):
    x = operand(b, lambda r: kind(r) in "iuf",
                lambda: b.input(dtype=b.draw(st.sampled_from(dtypes_of_kinds("iuf")))))
    rx = b.refs[x]
    if kind(rx) == "f":
        bound = st.one_of(st.sampled_from([0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, 2.5]),
                          st.floats(-100, 100, width=32, allow_subnormal=False))
    else:
        info = np.iinfo(rx.dtype)
        bound = st.integers(max(int(info.min), -10), min(int(info.max), 10))
    lo = b.draw(st.one_of(st.none(), bound))
    hi = b.draw(st.one_of(st.none(), bound))
    if lo is not None and hi is not None and lo > hi:
        lo, hi = hi, lo
    ref = rx
    if lo is not None:
        ref = apply_named("maximum", [ref, scalar_ref(lo, rx.dtype)], rx.dtype)
    if hi is not None:
        ref = apply_named("minimum", [ref, scalar_ref(hi, rx.dtype)], rx.dtype)
    if lo is None and hi is None:
        ref = rx.copy()
    args = [f"v{x}"]
    if lo is not None:
        args.append(f"min={values.scalar_source(lo)}")
    if hi is not None:
        args.append(f"max={values.scalar_source(hi)}")
    b.define(f"xp.clip({', '.join(args)})", ref, [x], "clip")


def where_ref(c: Ref, a: Ref, d: Ref) -> Ref:
    shape = np.broadcast_shapes(c.shape, a.shape, d.shape)
    c, a, d = (r.map(lambda comp: np.broadcast_to(comp, shape)) for r in (c, a, d))
    v = np.where(c.v, a.v, d.v)
    st_ = np.where(c.st != EXACT, FREE, np.where(c.v, a.st, d.st))
    if a.lo is None:
        return Ref(v, st_)
    return finish(v, st_, np.where(c.v, a.lo, d.lo), np.where(c.v, a.hi, d.hi))


def gen_where(b):
    x1 = operand(b, lambda r: True, lambda: b.input())
    r1 = b.refs[x1]
    cond = operand(b, lambda r: kind(r) == "b" and broadcasts(r.shape, r1.shape),
                   lambda: b.input(dtype="bool", shape=partner_shape(b, r1.shape)))
    rc = b.refs[cond]
    if b.draw(st.booleans()):
        s = scalar_for(b, r1.dtype)
        args, uses = (f"v{x1}", values.scalar_source(s)), [cond, x1]
        r2 = scalar_ref(s, r1.dtype)
        common = name_of(r1)
    else:
        shape = np.broadcast_shapes(r1.shape, rc.shape)
        x2 = operand(b, lambda r: promote(r.dtype, r1.dtype) is not None
                     and broadcasts(r.shape, shape),
                     lambda: b.input(dtype=name_of(r1), shape=partner_shape(b, shape)))
        r2 = b.refs[x2]
        args, uses = (f"v{x1}", f"v{x2}"), [cond, x1, x2]
        common = promote(r1.dtype, r2.dtype)
    a, d = cast(r1, common), cast(r2, common)
    if b.draw(st.booleans()):
        args, a, d = args[::-1], d, a
    b.define(f"xp.where(v{cond}, {args[0]}, {args[1]})", where_ref(rc, a, d), uses, "where")


# ========================================================================== expressions

# Formulas on one line, as numeric code writes them: a small tree of arithmetic and
# element-wise functions over values of one dtype, Python scalars and constants
# (zeros_like and friends: constants the compiler can fold). The patterns compilers rewrite
# (a*b - c, c / (a / b), log(a ** b), x + zeros, exp(a) * exp(b)) are all trees like these.
EXPR_BINARY = {
    "f": ["+", "-", "*", "/", "+", "-", "*", "/", "//", "%", "**", "maximum", "minimum",
          "hypot", "atan2", "copysign", "logaddexp", "nextafter"],
    "c": ["+", "-", "*", "/", "+", "-", "*", "**"],
    "i": ["+", "-", "*", "//", "%", "&", "|", "^", "<<", ">>", "maximum", "minimum", "**"],
}
EXPR_UNARY = {
    "f": ["negative", "abs", "exp", "log", "sqrt", "sin", "cos", "tanh", "square", "floor",
          "reciprocal", "expm1", "log1p", "sign", "round", "trunc", "ceil"],
    "c": ["negative", "exp", "log", "sqrt", "square", "conj"],
    "i": ["negative", "abs", "bitwise_invert", "square"],
}
def _left(src):
    """A left operand's source: a negative literal in parentheses (`-1 ** x` is -(1 ** x))."""
    return f"({src})" if src.startswith("-") else src


OPERATOR_NAMES = {"+": "add", "-": "subtract", "*": "multiply", "/": "divide",
                  "//": "floor_divide", "%": "remainder", "**": "pow", "&": "bitwise_and",
                  "|": "bitwise_or", "^": "bitwise_xor", "<<": "bitwise_left_shift",
                  ">>": "bitwise_right_shift"}


def _expr_kind(dtype):
    k = values.kind(dtype)
    return "i" if k in "iu" else k


def _leaf(b, dtype, shape, uses, allow_scalar):
    """(source, ref, is_array) of a leaf: a value, a new input, a scalar or a constant."""
    choice = b.draw(choice_of(["value"] * 4 + ["input"] * 3 + ["scalar"] + ["constant"] * 2))
    if choice == "scalar" and allow_scalar:
        s = scalar_for(b, dtype)
        return values.scalar_source(s), scalar_ref(s, dtype), False
    if choice == "constant":
        kind_ = b.draw(st.sampled_from(["zeros_like", "ones_like", "full_like", "zeros"]))
        if kind_ == "zeros":
            return (f"xp.zeros({tuple(shape)!r}, dtype={dtype_src(dtype)}, device=dev)",
                    Ref(np.zeros(shape, dtype)), True)
        like = _leaf(b, dtype, shape, uses, False)
        if kind_ == "full_like":
            fill = scalar_for(b, dtype)
            return (f"xp.full_like({like[0]}, {values.scalar_source(fill)})",
                    Ref(np.full(like[1].shape, scalar_ref(fill, dtype).v)), True)
        f = np.zeros if kind_ == "zeros_like" else np.ones
        return f"xp.{kind_}({like[0]})", Ref(f(like[1].shape, dtype)), True
    sub = tuple(1 if b.draw(st.integers(0, 3)) == 0 else n for n in shape)
    sub = sub[b.draw(st.integers(0, len(sub))):] if b.draw(st.integers(0, 3)) == 0 else sub
    i = None
    if choice == "value":
        i = b.pick(lambda r: r.dtype == np.dtype(dtype) and broadcasts(r.shape, shape)
                   and len(np.broadcast_shapes(r.shape, shape)) == len(shape)
                   and np.broadcast_shapes(r.shape, shape) == tuple(shape))
    if i is None:
        i = b.input(dtype=dtype, shape=sub)
    uses.append(i)
    return f"v{i}", b.refs[i], True


def _expression(b, dtype, shape, depth, uses, allow_scalar=False):
    k = _expr_kind(dtype)
    form = "leaf"
    if depth > 0:
        form = b.draw(choice_of(["binary", "binary", "binary", "unary", "leaf", "cast"]))
    if form == "leaf":
        return _leaf(b, dtype, shape, uses, allow_scalar)
    if form == "cast":
        # a subexpression of another dtype converted (narrowing, widening, float <-> int);
        # no complex source for a real target (the standard has no such cast)
        sources = [d for d in values.WEIGHTED_DTYPES if d != "bool"
                   and (values.kind(d) != "c" or values.kind(dtype) == "c")]
        source = b.draw(choice_of(sources))
        src, ref, _ = _expression(b, source, shape, depth - 1, uses)
        return f"xp.astype({src}, {dtype_src(dtype)})", casts.astype(ref, dtype), True
    if form == "unary":
        name = b.draw(st.sampled_from(EXPR_UNARY[k]))
        src, ref, _ = _expression(b, dtype, shape, depth - 1, uses)
        if name == "negative" and b.draw(st.booleans()):
            return f"(-{src})", unary_ref(name, ref), True
        return f"xp.{name}({src})", unary_ref(name, ref), True
    op = b.draw(choice_of(EXPR_BINARY[k]))
    left_scalar = b.draw(st.integers(0, 4)) == 0
    a = _expression(b, dtype, shape, depth - 1, uses, allow_scalar=left_scalar)
    c = _expression(b, dtype, shape, depth - 1, uses, allow_scalar=a[2])
    name = OPERATOR_NAMES.get(op, op)
    ref = binary_ref(name, a[1], c[1], str(np.dtype(dtype)))
    if op in OPERATOR_NAMES:
        return f"({_left(a[0])} {op} {c[0]})", ref, True
    return f"xp.{name}({a[0]}, {c[0]})", ref, True


def gen_expression(b):
    dtype = b.draw(st.sampled_from(dtypes_of_kinds("iufc")))
    base = operand(b, lambda r: r.dtype == np.dtype(dtype), lambda: b.input(dtype=dtype))
    shape = b.refs[base].shape
    uses = []
    depth = b.draw(st.integers(1, 3))
    src, ref, is_array = _expression(b, dtype, shape, depth, uses)
    if re.fullmatch(r"v\d+", src) or not is_array:       # a bare leaf: make it an operation
        one = scalar_ref(1, dtype)
        src, ref = f"({src} * 1)", binary_ref("multiply", ref, one, str(np.dtype(dtype)))
    if src.startswith("(") and src.endswith(")"):
        src = src[1:-1]
    b.define(src, ref, uses, "expression")


def gen_cast_op(b):
    """astype(x, d) OP y: a conversion feeding an operation in the new dtype (narrowing
    and widening, float <-> int, signed <-> unsigned), where compilers have crashed."""
    if b.draw(st.integers(0, 3)) == 0:
        # an integer narrowed, then combined bit by bit (XLA:CPU's fusion emitter crashed
        # on a narrowing signed convert feeding `and`/`or`)
        dtype = b.draw(choice_of(["int8", "int16", "int32", "int8", "int16", "uint8", "uint16"]))
        bits = np.dtype(dtype).itemsize
        source = b.draw(choice_of([d for d in values.INTS if np.dtype(d).itemsize > bits]
                                  + [d for d in values.UINTS if np.dtype(d).itemsize > bits][:1]))
        k = "bitwise"
    else:
        dtype = b.draw(choice_of(values.WEIGHTED_DTYPES))
        k = _expr_kind(dtype)
        # a source of the same family half the time (integer narrowing and widening, float
        # precision), of any dtype otherwise; complex only into complex
        family = "iu" if k == "i" else values.kind(dtype)
        sources = [d for d in values.DTYPES if d != str(np.dtype(dtype))
                   and (values.kind(d) != "c" or k == "c")]
        near = [d for d in sources if values.kind(d) in family] or sources
        source = b.draw(choice_of(near if b.draw(st.booleans()) else sources))
    x = operand(b, lambda r: name_of(r) == source, lambda: b.input(dtype=source))
    rx = b.refs[x]
    cast_ref = casts.astype(rx, dtype)
    if k == "bitwise":
        op = b.draw(choice_of(["&", "|", "&", "|", "^", "+", "*"]))
    elif k == "b":
        op = b.draw(choice_of(["&", "|", "^"]))
    elif k == "i":
        op = b.draw(choice_of(["&", "|", "^"] + EXPR_BINARY["i"]))
    else:
        op = b.draw(choice_of(EXPR_BINARY[k]))
    name = OPERATOR_NAMES.get(op, op)
    uses = [x]
    if b.draw(st.integers(0, 2)):
        # mostly an operand of the same shape: a broadcast in between changes the fusion
        # (the crash above needed the two operands side by side)
        y = operand(b, lambda r: name_of(r) == str(np.dtype(dtype)) and r.shape == rx.shape,
                    lambda: b.input(dtype=dtype, shape=rx.shape))
        uses.append(y)
        other, ref_other, is_array = f"v{y}", b.refs[y], True
    else:
        other, ref_other, is_array = _leaf(b, dtype, rx.shape, uses, allow_scalar=True)
    left, right = (f"xp.astype(v{x}, {dtype_src(dtype)})", cast_ref), (other, ref_other)
    if b.draw(st.booleans()) and is_array:
        left, right = right, left
    ref = binary_ref(name, left[1], right[1], str(np.dtype(dtype)))
    expr = f"{_left(left[0])} {op} {right[0]}" if op in OPERATOR_NAMES else \
        f"xp.{name}({left[0]}, {right[0]})"
    b.define(expr, ref, uses, "cast_op")
