"""Elementwise primitives. Operands share one shape and dtype (the namespace broadcasts and
promotes before binding), except that a 0-d operand (a Python scalar) may stand beside full
ones. The NumPy implementations follow StableHLO's semantics where they
differ from NumPy's: integer division and remainder by zero, negative integer powers, shifts
past the bit width, and float-to-integer conversion."""
from __future__ import annotations

import numpy as np

from .. import _dtypes as dt
from ..lowering import fast_trig
from . import ad, lax
from . import batching as bt
from . import padding as pd
from . import complex_math as cm
from .core import aval, common_shape, declare, kinds_check



def _unary(name, hlo, impl, kinds, result=None, rules=None, source=None, emit=None,
           formula=None, formula_kinds="c"):
    """Declare a one-operand primitive; `result` maps the operand dtype to the result's;
    `rules` are its derivative rules (see _prims/ad.py); `emit` replaces the plain `hlo` op;
    `formula` gives its numerics for operands of `formula_kinds` (see _prims/formula.py)."""
    check = kinds_check(name, kinds)

    def infer(x):
        check(x)
        if result is None:
            return x
        d = result(x.dtype)
        return x if d is x.dtype else aval(x.shape, d)   # (abs of a real: x's own aval)

    return declare(name, infer=infer, emit=emit or (lambda ctx, x: ctx.simple(hlo, x)),
                   impl=impl, elementwise=True, formula=formula, formula_kinds=formula_kinds,
                   source=source or f"xp.{name}({{0}})", batch=bt.elementwise(name),
                   padding=pd.ignore(name), **(rules or ad.no_derivative()))


def _binary(name, hlo, impl, kinds, rules=None, source=None, emit=None, formula=None):
    return declare(name, infer=kinds_check(name, kinds), elementwise=True, formula=formula,
                   emit=emit or (lambda ctx, x, y: ctx.simple(hlo, x, y)), impl=impl,
                   source=source if source is not None else f"xp.{name}({{0}}, {{1}})",
                   batch=bt.elementwise(name), padding=pd.ignore(name),
                   **(rules or ad.no_derivative()))


# ----------------------------------------------------------------------------- shields
# XLA's algebraic simplifier rewrites some float patterns into others that change results
# beyond rounding (docs/runtime-notes-cpu.md lists them). The emit rules below put an
# optimization barrier between the ops of such a pattern. XLA removes barriers after
# simplification, so the ops still fuse into one loop.

def _shielded(ctx, x, i, when):
    """Operand `x` (operand number `i`) behind a barrier when `when` holds."""
    return ctx.barrier(x, ctx.in_avals[i]) if when else x


_ADDITIVE_OPS = ("stablehlo.add", "stablehlo.subtract")


def _additive_emit(hlo):
    """x + 0 -> x and x - (-0) -> x are wrong for x = -0.0: an operand that XLA would fold
    into a zero literal is shielded. The barrier stops XLA's algebraic simplifier, but the
    CPU fusion emitters fold the same patterns again after barriers are gone, looking at the
    right operand only: the loop emitter's complex dialect (`complex.add(x, 0)`, `complex.sub(x,
    -0)` for complex x of any shape) and the tiled emitter's StableHLO simplification
    (`add(x, 0)` for some shapes, e.g. one element). So a constant right operand is moved
    left, where neither looks: x + c is emitted as c + x, and x - c as (-c) + x (exact in
    IEEE arithmetic: subtraction is the addition of the negation), the negation folded by
    XLA into a literal behind the barrier.

    And complex addition is taken to be exact, as integer addition is: the CPU emitters'
    complex dialect folds (A - B) + B, B + (A - B) and (A + B) - B to A (behind barriers too),
    wrong where B has an inf or nan part (the sum as written is nan there) and for the sign
    of a zero part. A complex add or subtract of an operand that an add or a subtract
    computed is emitted on the real and imaginary parts, which is what it is."""
    def emit(ctx, x, y):
        kind = ctx.out_aval.dtype.kind
        if kind not in dt.FLOATING_KINDS:
            return ctx.simple(hlo, x, y)
        x_const, y_const = ctx.is_constant(x), ctx.is_constant(y)
        if y_const and not x_const:
            aval = ctx.in_avals[1]
            if hlo == "stablehlo.subtract":
                y = ctx.op("stablehlo.negate", (y,), (aval,), aval)
            y = ctx.barrier(y, aval)
            return ctx.op("stablehlo.add", (y, x), (aval, ctx.in_avals[0]), ctx.out_aval)
        x = _shielded(ctx, x, 0, x_const)
        y = _shielded(ctx, y, 1, y_const)
        if kind == "c" and (ctx.origin(x) in _ADDITIVE_OPS or ctx.origin(y) in _ADDITIVE_OPS):
            return _by_parts(ctx, hlo, x, y)
        return ctx.simple(hlo, x, y)
    return emit


def _by_parts(ctx, hlo, x, y):
    """Complex x + y or x - y (`hlo`) as complex(re(x) op re(y), im(x) op im(y))."""
    out = ctx.out_aval
    part = type(out)(out.shape, dt.real_of(out.dtype))
    ax, ay = ctx.in_avals
    parts = [ctx.op(hlo, (ctx.op(which, (x,), (ax,), part), ctx.op(which, (y,), (ay,), part)),
                    (part, part), part)
             for which in ("stablehlo.real", "stablehlo.imag")]
    return ctx.op("stablehlo.complex", parts, (part, part), out)


def _multiply_emit(ctx, x, y):
    """exp(a) * exp(b) -> exp(a + b) overflows differently (exp(100) * exp(-100) is
    inf * 0 = nan in float32, exp(0) is 1). And XLA takes a signed integer x * x to be
    non-negative (abs(x * x) -> x * x, x * x < 0 -> false, and so floor_divide and
    remainder by x * x), which wrapping overflow breaks (int32 46341 * 46341 < 0): the
    second factor of every signed integer product is shielded, since CSE would make a
    square of two equal operands too."""
    both_exp = ctx.origin(x) == ctx.origin(y) == "stablehlo.exponential"
    kind = ctx.out_aval.dtype.kind
    out = ctx.simple("stablehlo.multiply", x, _shielded(ctx, y, 1, both_exp or kind == "i"))
    return ctx.rounded_product(out, ctx.out_aval) if kind == "f" else out


def _abs_emit(ctx, x):
    """XLA takes a signed integer abs(x) to be non-negative, as it takes x * x: floor_divide
    and remainder by abs(x) drop their sign corrections (1 // abs(x) gave 0, not -1), which
    the wrap at the minimum value breaks (abs of int32 -2147483648 is -2147483648; tests/fuzz,
    seed 20261211). The result is shielded."""
    out = ctx.simple("stablehlo.abs", x)
    return ctx.barrier(out, ctx.out_aval) if ctx.out_aval.dtype.kind == "i" else out


def _log_emit(ctx, x):
    """log(a ** b) -> b * log(|a|) is wrong for a < 0 (nan); log(exp(a)) -> a is wrong
    where exp(a) overflows. And XLA:CPU's vectorized log reads the exponent bits of a
    subnormal input although it runs in flush-to-zero mode (log(1e-40) is -103.97 in
    float32): the input is flushed explicitly, as every other op sees it."""
    a = ctx.in_avals[0]
    x = _shielded(ctx, x, 0, ctx.origin(x) in ("stablehlo.power", "stablehlo.exponential"))
    if a.dtype in (dt.float32, dt.float64):   # narrower floats compute in float32
        x = _flushed(ctx, x, a)
    return ctx.simple("stablehlo.log", x)


def _sqrt_emit(ctx, x):
    """sqrt(a * a) -> |a| ignores the overflow (and the flushed underflow) of a * a."""
    product = ctx.origin(x) == "stablehlo.multiply"
    return ctx.simple("stablehlo.sqrt", _shielded(ctx, x, 0, product))


def _power_emit(ctx, x, y):
    """exp(a) ** b -> exp(a * b) ignores the overflow of exp(a)."""
    exp_base = ctx.origin(x) == "stablehlo.exponential"
    return ctx.simple("stablehlo.power", _shielded(ctx, x, 0, exp_base), y)


_EXP_FINITE_MAX_F32 = float(np.float32(88.72283))   # the largest float32 whose exp is finite


def _exp_emit(ctx, x):
    """XLA:CPU's float32 exp fused into an add or a subtract gives a large finite number
    where exp overflows (x - exp(x) at x = inf was inf, not nan; jax's jit gives the same):
    past the largest float32 whose exp is finite, +inf is selected explicitly, which the
    fused loop keeps (docs/runtime-notes-cpu.md)."""
    a = ctx.in_avals[0]
    out = ctx.simple("stablehlo.exponential", x)
    if a.dtype is not dt.float32:
        return out
    over = ctx.compare(x, ctx.constant(_EXP_FINITE_MAX_F32, a), a, "GT")
    return ctx.select(over, ctx.constant(float("inf"), a), out, a)


def _flushed(ctx, x, a):
    """`x` with subnormals replaced by zeros of the same sign."""
    tiny = float(np.finfo(np.float32 if a.dtype is dt.bfloat16 else a.dtype.numpy).tiny)
    small = ctx.compare(ctx.op("stablehlo.abs", (x,), (a,), a), ctx.constant(tiny, a), a, "LT")
    return ctx.select(small, ctx.op("stablehlo.multiply", (x, ctx.constant(0, a)), (a, a), a), x, a)


_BITS = {2: (np.uint16, 0x7F80), 4: (np.uint32, 0x7F800000), 8: (np.uint64, 0x7FF0000000000000)}


def _flush_bits(x):
    """`x` (float32, float64 or bfloat16) with subnormals replaced by zeros of the same sign,
    read from the bits: the interpreter runs with DAZ set, so comparing `x` with zero would
    see a subnormal as zero already."""
    if not (x.dtype.kind == "V" or x.dtype in (np.float32, np.float64)) or not x.size:
        return x
    utype, exponent = _BITS[x.dtype.itemsize]
    bits = x.view(utype)
    sign = utype(1 << (8 * x.dtype.itemsize - 1))
    # the magnitude's bits less one: a subnormal's (1 to the smallest normal's less one)
    # become the only values below the smallest normal's less one; a zero's wraps to the
    # largest (three passes over the array, no boolean temporaries)
    limit = utype((exponent & -exponent) - 1)     # the smallest normal's bits, less one
    below = np.bitwise_and(bits, ~sign, out=np.empty_like(bits))   # (an array when 0-d too)
    np.subtract(below, utype(1), out=below)
    if below.min() >= limit:
        return x
    return np.where(below < limit, (bits & sign).view(x.dtype), x)


def _log(x):
    """np.log with the input flushed as XLA:CPU reads it: NumPy's vectorized log, like
    XLA's, reads the exponent bits of a subnormal (float32 and bfloat16, whose subnormals
    are float32 ones: log(-1e-40) would be nan, not -inf)."""
    return np.log(_flush_bits(x))


def _atan2(x, y):
    """np.arctan2 of flushed operands: libm's atan2 reads subnormal bits whatever the
    floating-point mode (atan2(1e-45, 0) was pi/2, atan2(1e-45, 1e-45) nan in float32)."""
    return np.arctan2(_flush_bits(x), _flush_bits(y))


def _atan2_emit(ctx, x, y):
    """XLA's atan2 reads subnormal bits too (bfloat16 ones are float32 subnormals): both
    operands are flushed explicitly. Where both are zero, y is replaced by 1 of its sign,
    which gives the same result (±0 or ±pi): XLA:CPU folded atan2 of two zeros it could
    compute at compile time to NaN (tests/fuzz, seed 20261202: atan2(0 + 0, |0|))."""
    a = ctx.in_avals[0]
    if a.dtype in (dt.bfloat16, dt.float32, dt.float64):
        x, y = _flushed(ctx, x, a), _flushed(ctx, y, ctx.in_avals[1])
    zero, mask = ctx.constant(0, a), aval(a.shape, dt.bool)
    both = ctx.op("stablehlo.and", (ctx.compare(x, zero, a, "EQ"), ctx.compare(y, zero, a, "EQ")),
                  (mask, mask), mask)
    unit = ctx.select(_sign_bit(ctx, y, a), ctx.constant(-1, a), ctx.constant(1, a), a)
    y = ctx.select(both, unit, y, a)
    return ctx.simple("stablehlo.atan2", x, y)


def _sign_bit(ctx, x, a):
    """Whether x's sign bit is set (true for -0.0, which compares equal to 0.0)."""
    signed = aval(a.shape, {16: dt.int16, 32: dt.int32, 64: dt.int64}[a.dtype.bits])
    bits = ctx.op("stablehlo.bitcast_convert", (x,), (a,), signed)
    return ctx.compare(bits, ctx.constant(0, signed), signed, "LT")


# ----------------------------------------------------------------------------- arithmetic

def _int_divide(x, y):
    """Truncating division; x/0 is -1 (all bits set), INT_MIN/-1 is INT_MIN, as in XLA."""
    zero = y == 0
    safe = np.where(zero, 1, y).astype(x.dtype)
    if x.dtype.kind == "i":
        # INT_MIN / -1 overflows; XLA wraps it to INT_MIN, which is INT_MIN / 1
        safe = np.where((safe == -1) & (x == np.iinfo(x.dtype).min), 1, safe).astype(x.dtype)
    q = x // safe
    # floor -> truncation: step towards zero where the signs differ and the division is inexact
    q = (q + ((q * safe != x) & ((x < 0) != (safe < 0)))).astype(x.dtype)
    return np.where(zero, np.array(-1).astype(x.dtype), q)


def _divide(x, y):
    if x.dtype.kind in dt.INTEGER_KINDS:
        return _int_divide(x, y)
    return np.true_divide(x, y)


def _remainder(x, y):
    if x.dtype.kind in dt.INTEGER_KINDS:
        zero = y == 0
        safe = np.where(zero, 1, y)
        return np.where(zero, x, np.fmod(x, safe))
    return np.fmod(x, y)


def _power(x, y):
    if x.dtype.kind in dt.INTEGER_KINDS:
        # XLA squares and multiplies over the exponent's low 6 bits only, and compares the
        # exponent with 0 as a signed number (an unsigned one with its top bit set counts as
        # negative); tlaloc.pow corrects exponents >= 64 above this primitive
        if x.dtype.kind == "i":
            negative = y < 0
        else:
            negative = y >= np.array(1 << (x.dtype.itemsize * 8 - 1), dtype=y.dtype)
        r = np.power(x, np.where(negative, 0, y & 63).astype(y.dtype))
        # x**-n is 0 except for x == 1 and x == -1 (all bits set, unsigned too), and 0**-n,
        # which XLA also makes 0
        minus_one = np.array(-1).astype(x.dtype)
        inv = np.where(x == 1, 1, np.where(x == minus_one, np.where(y % 2 == 0, 1, minus_one), 0))
        return np.where(negative, inv.astype(x.dtype), r)
    # an exponent that is one value (0-d, or any stride-0 operand) takes NumPy's fast path
    # (sqrt for 0.5: (-0) ** 0.5 = -0, (-inf) ** 0.5 = nan); element by element it is C's
    # pow, the standard's (+0, +inf) and XLA's
    shape = np.broadcast_shapes(x.shape, y.shape)
    if y.ndim == 0 or y.shape != shape or 0 in y.strides:
        y = np.array(np.broadcast_to(y, shape)).reshape(-1)
        return np.power(np.broadcast_to(x, shape).reshape(-1), y).reshape(shape)
    return np.power(x, y)


def _sign(x):
    if x.dtype.kind == "c":
        a = np.abs(x)
        return np.where(a == 0, 0, x / np.where(a == 0, 1, a)).astype(x.dtype)
    return np.sign(x)


def _shift(kind):
    def impl(x, y):
        bits = x.dtype.itemsize * 8
        unsigned_y = y.astype(np.dtype(f"u{x.dtype.itemsize}"))
        too_far = unsigned_y >= bits
        amount = np.where(too_far, 0, y).astype(x.dtype)
        if kind == "left":
            return np.where(too_far, 0, np.left_shift(x, amount)).astype(x.dtype)
        if kind == "arithmetic":  # on the bits as signed, unsigned operands too (StableHLO)
            sx = x.view(np.dtype(f"i{x.dtype.itemsize}"))
            r = np.where(too_far, np.where(sx < 0, -1, 0), np.right_shift(sx, amount.view(sx.dtype)))
            return r.astype(sx.dtype).view(x.dtype)
        ux = x.view(np.dtype(f"u{x.dtype.itemsize}"))
        r = np.right_shift(ux, amount.view(ux.dtype))
        return np.where(too_far, 0, r).astype(ux.dtype).view(x.dtype)
    return impl


# ----------------------------------------------------------------------------- derivative helpers

def _inv(x):
    return lax.divide(ad.const(x, 1), x)


def _sumsq(x, y):
    return lax.add(ad.square(x), ad.square(y))


def _trunc(q):
    return lax.select(lax.compare(q, ad.zeros(q), direction="LT"), lax.ceil(q), lax.floor(q))


def _pick(a, b, direction):
    """d max(a, b) / d a: 1 where a wins, 1/2 on ties (as in JAX), else 0."""
    wins = ad.convert(lax.compare(a, b, direction=direction), a.aval.dtype)
    ties = ad.convert(lax.compare(a, b, direction="EQ"), a.aval.dtype)
    return lax.add(wins, lax.multiply(ties, ad.const(a, 0.5)))


def _dpow_dx(x, y):
    # y * x**(y-1), defined as 0 where y == 0 (so d/dx x**0 at x=0 is 0, not nan)
    d = lax.multiply(y, lax.power(x, lax.subtract(y, ad.const(y, 1))))
    return lax.select(lax.compare(y, ad.zeros(y), direction="EQ"), ad.zeros(d), d)


def _dpow_dy(x, out):
    # out * log(x), defined as 0 where x == 0
    d = lax.multiply(out, lax.log(x))
    return lax.select(lax.compare(x, ad.zeros(x), direction="EQ"), ad.zeros(d), d)


_ADD_RULES = {
    "jvp": lambda tangents, x, y, *, out: ad.add_any(*tangents),
    "vjp": lambda ct, x, y, *, out: (ct, ct),
}
_SUBTRACT_RULES = {
    "jvp": lambda tangents, x, y, *, out: ad.add_any(tangents[0], None if tangents[1] is None else lax.negate(tangents[1])),
    "vjp": lambda ct, x, y, *, out: (ct, lax.negate(ct)),
}


def _abs_jvp(tangents, x, *, out):
    if not ad.is_complex(x):
        return lax.multiply(tangents[0], lax.sign(x))
    # d|z| = Re(conj(z) dz) / |z|
    return lax.divide(ad.real(lax.multiply(ad.conj(x), tangents[0])), out)


def _abs_vjp(ct, x, *, out):
    if not ad.is_complex(x):
        return (lax.multiply(ct, lax.sign(x)),)
    return (lax.multiply(ad.convert(ct, x.aval.dtype), lax.sign(x)),)  # sign(z) = z/|z|, 0 at 0


_ABS_RULES = {"jvp": _abs_jvp, "vjp": _abs_vjp}


add = _binary("add", "stablehlo.add", np.add, dt.NUMERIC_KINDS, source="{0} + {1}", rules=_ADD_RULES,
              emit=_additive_emit("stablehlo.add"))
subtract = _binary("subtract", "stablehlo.subtract", np.subtract, dt.NUMERIC_KINDS, source="{0} - {1}",
                   rules=_SUBTRACT_RULES, emit=_additive_emit("stablehlo.subtract"))
multiply = _binary("multiply", "stablehlo.multiply", np.multiply, dt.NUMERIC_KINDS, source="{0} * {1}", emit=_multiply_emit, rules=ad.elementwise_rules(
    lambda x, y, out: y, lambda x, y, out: x))


def _int_by_nonzero(ctx, hlo, x, y, at_zero):
    """Integer division or remainder with XLA's result where y == 0 (`at_zero`), computed
    without ever dividing by zero: XLA's constant folder divides constant operands on the
    host, and a zero divisor kills the process with SIGFPE there."""
    a = ctx.out_aval
    zero = ctx.compare(y, ctx.constant(0, a), a, "EQ")
    safe = ctx.select(zero, ctx.constant(1, a), y, a)
    return ctx.select(zero, at_zero, ctx.op(hlo, (x, safe), (a, a), a), a)


def _divide_emit(ctx, x, y):
    """XLA's simplifier rewrites float division by a constant, a broadcast, an exp, a sqrt,
    an rsqrt or a power into a multiplication by the reciprocal, which is not correctly
    rounded (the standard requires it for real floating division: -13.210486 / -1.5 gives
    8.806992 instead of 8.806991 in float32), and a / (b / c) or (a / b) / c into forms that
    overflow where the division as written does not. Every computed divisor, and a quotient
    as the dividend, is shielded."""
    kind = ctx.out_aval.dtype.kind
    if kind in dt.INTEGER_KINDS:
        all_bits = -1 if kind == "i" else (1 << ctx.out_aval.dtype.bits) - 1
        return _int_by_nonzero(ctx, "stablehlo.divide", x, y, ctx.constant(all_bits, ctx.out_aval))
    if kind in dt.FLOATING_KINDS:
        x = _shielded(ctx, x, 0, ctx.origin(x) == "stablehlo.divide")
        y = _shielded(ctx, y, 1, y in ctx.producer)
    return ctx.simple("stablehlo.divide", x, y)


def _remainder_emit(ctx, x, y):
    if ctx.out_aval.dtype.kind in dt.INTEGER_KINDS:
        return _int_by_nonzero(ctx, "stablehlo.remainder", x, y, x)
    return ctx.simple("stablehlo.remainder", x, y)


divide = _binary("divide", "stablehlo.divide", _divide, dt.NUMERIC_KINDS, emit=_divide_emit, formula=cm.divide, source=lambda ctx, x, y: (
    f"{x} / {y}" if ctx.out_aval.dtype.kind in dt.FLOATING_KINDS else None), rules=ad.elementwise_rules(
    lambda x, y, out: lax.divide(ad.const(y, 1), y), lambda x, y, out: lax.negate(lax.divide(out, y))))
remainder = _binary("remainder", "stablehlo.remainder", _remainder, dt.REAL_KINDS, source=False, emit=_remainder_emit, rules=ad.elementwise_rules(
    lambda x, y, out: ad.const(x, 1), lambda x, y, out: lax.negate(_trunc(lax.divide(x, y)))))
power = _binary("power", "stablehlo.power", _power, dt.NUMERIC_KINDS, source="{0} ** {1}", emit=_power_emit,
                formula=cm.power, rules=ad.elementwise_rules(
    lambda x, y, out: _dpow_dx(x, y), lambda x, y, out: _dpow_dy(x, out)))
def _signed_zeros(pick):
    """np.maximum/np.minimum with StableHLO's zeros (XLA:CPU): -0 < +0, so max(-0, +0) is +0
    and min(-0, +0) is -0 whatever the operands' order (NumPy returns one of them)."""
    def impl(x, y):
        out = pick(x, y)
        if out.dtype.kind in "fV":  # float, bfloat16
            both = (x == 0) & (y == 0)
            if both.any():
                neg = np.signbit(x) | np.signbit(y) if pick is np.minimum else np.signbit(x) & np.signbit(y)
                out = np.where(both, np.where(neg, -np.zeros_like(out), np.zeros_like(out)), out)
        return out
    return impl


maximum = _binary("maximum", "stablehlo.maximum", _signed_zeros(np.maximum), dt.REAL_OR_BOOL_KINDS, rules=ad.elementwise_rules(
    lambda x, y, out: _pick(x, y, "GT"), lambda x, y, out: _pick(y, x, "GT")))
minimum = _binary("minimum", "stablehlo.minimum", _signed_zeros(np.minimum), dt.REAL_OR_BOOL_KINDS, rules=ad.elementwise_rules(
    lambda x, y, out: _pick(x, y, "LT"), lambda x, y, out: _pick(y, x, "LT")))
atan2 = _binary("atan2", "stablehlo.atan2", _atan2, "f", emit=_atan2_emit, rules=ad.elementwise_rules(
    lambda x, y, out: lax.divide(y, _sumsq(x, y)), lambda x, y, out: lax.negate(lax.divide(x, _sumsq(x, y)))))


def _compared(x):
    """x as comparisons read it: bfloat16 as float32 (exact). ml_dtypes (0.7) compares
    bfloat16 without float instructions, so a subnormal is not read as zero (DAZ) as
    XLA:CPU reads it; as float32 it is, in the interpreter's flush-to-zero mode."""
    return x.astype(np.float32) if dt.numpy_is_bfloat16(x.dtype) else x


# x == y gives y (so nextafter(+0, -0) is -0), as in XLA and C99; NumPy's float16 gives x
nextafter = _binary("nextafter", "chlo.next_after",
                    lambda x, y: np.where(_compared(x) == _compared(y), y, np.nextafter(x, y)), "f")

bitwise_and = _binary("and", "stablehlo.and", np.bitwise_and, dt.INTEGER_OR_BOOL_KINDS, source="{0} & {1}")
bitwise_or = _binary("or", "stablehlo.or", np.bitwise_or, dt.INTEGER_OR_BOOL_KINDS, source="{0} | {1}")
bitwise_xor = _binary("xor", "stablehlo.xor", np.bitwise_xor, dt.INTEGER_OR_BOOL_KINDS, source="{0} ^ {1}")
shift_left = _binary("shift_left", "stablehlo.shift_left", _shift("left"), dt.INTEGER_KINDS, source="{0} << {1}")
shift_right_arithmetic = _binary("shift_right_arithmetic", "stablehlo.shift_right_arithmetic",
                                 _shift("arithmetic"), dt.INTEGER_KINDS, source="{0} >> {1}")
shift_right_logical = _binary("shift_right_logical", "stablehlo.shift_right_logical",
                              _shift("logical"), dt.INTEGER_KINDS, source=False)

negate = _unary("negate", "stablehlo.negate", np.negative, dt.NUMERIC_KINDS, source="-{0}", rules=ad.elementwise_rules(
    lambda x, out: ad.const(x, -1)))
bitwise_not = _unary("not", "stablehlo.not", np.invert, dt.INTEGER_OR_BOOL_KINDS, source="~{0}")
abs = _unary("abs", "stablehlo.abs", np.abs, dt.SIGNED_NUMERIC_KINDS, result=dt.real_of, rules=_ABS_RULES,
             formula=cm.abs, emit=_abs_emit)
sign = _unary("sign", "stablehlo.sign", _sign, dt.SIGNED_NUMERIC_KINDS, formula=cm.sign, formula_kinds=dt.FLOATING_KINDS)
exp = _unary("exp", "stablehlo.exponential", np.exp, dt.FLOATING_KINDS, formula=cm.exp,
             emit=_exp_emit, rules=ad.elementwise_rules(lambda x, out: out))


def _expm1(x):
    out = np.expm1(x)
    if x.dtype.kind == "c":
        # NumPy's expm1(-0 + 0j) is -0 + 0j; StableHLO's is 0 + 0j
        out = np.where(x == 0, np.zeros_like(out) + 1j * np.imag(x), out).astype(x.dtype)
    return out


expm1 = _unary("expm1", "stablehlo.exponential_minus_one", _expm1, dt.FLOATING_KINDS, formula=cm.expm1,
               rules=ad.elementwise_rules(lambda x, out: lax.add(out, ad.const(out, 1))))


log = _unary("log", "stablehlo.log", _log, dt.FLOATING_KINDS, emit=_log_emit, formula=cm.log,
             rules=ad.elementwise_rules(lambda x, out: _inv(x)))


def _log1p_emit(ctx, x):
    """XLA's float64 log1p is off by up to ~120 ulp for x in (-0.45, -0.35). On
    [-0.5, -0.29] use log(u) * x / (u - 1) with u = 1 + x instead (u - 1 is exact there, and
    the ratio corrects the rounding of u)."""
    out = ctx.simple("stablehlo.log_plus_one", x)
    a = ctx.in_avals[0]
    if a.dtype.kind != "f":
        return out
    one = ctx.constant(1.0, a)
    u = ctx.op("stablehlo.add", (x, one), (a, a), a)
    ratio = ctx.op("stablehlo.divide", (x, ctx.op("stablehlo.subtract", (u, one), (a, a), a)), (a, a), a)
    alt = ctx.op("stablehlo.multiply", (ctx.op("stablehlo.log", (u,), (a,), a), ratio), (a, a), a)
    b = aval(a.shape, dt.bool)
    cmp = "compare_type = #stablehlo<comparison_type FLOAT>"
    ge = ctx.op("stablehlo.compare", (x, ctx.constant(-0.5, a)), (a, a), b,
                attrs=f"comparison_direction = #stablehlo<comparison_direction GE>, {cmp}")
    le = ctx.op("stablehlo.compare", (x, ctx.constant(-0.29, a)), (a, a), b,
                attrs=f"comparison_direction = #stablehlo<comparison_direction LE>, {cmp}")
    inside = ctx.op("stablehlo.and", (ge, le), (b, b), b)
    return ctx.op("stablehlo.select", (inside, alt, out), (b, a, a), a)


log1p = _unary("log1p", "stablehlo.log_plus_one", np.log1p, dt.FLOATING_KINDS, emit=_log1p_emit,
               formula=cm.log1p, rules=ad.elementwise_rules(
                   lambda x, out: _inv(lax.add(x, ad.const(x, 1)))))
sqrt = _unary("sqrt", "stablehlo.sqrt", np.sqrt, dt.FLOATING_KINDS, emit=_sqrt_emit, formula=cm.sqrt, rules=ad.elementwise_rules(
    lambda x, out: lax.divide(ad.const(out, 0.5), out)))
rsqrt = _unary("rsqrt", "stablehlo.rsqrt", lambda x: 1 / np.sqrt(x), dt.FLOATING_KINDS, source="1 / xp.sqrt({0})", formula=cm.rsqrt,
              rules=ad.elementwise_rules(lambda x, out: lax.multiply(ad.const(x, -0.5), lax.divide(out, x))))
logistic = _unary("logistic", "stablehlo.logistic", lambda x: 1 / (1 + np.exp(-x)), dt.FLOATING_KINDS,
                 source="1 / (1 + xp.exp(-{0}))", formula=cm.logistic,
                 rules=ad.elementwise_rules(lambda x, out: lax.multiply(out, lax.subtract(ad.const(out, 1), out))))


def _trig_emit(which, hlo):
    """float32 sin/cos on the CPU as range reduction and polynomials
    (lowering/fast_trig.py: XLA's own ops are four times slower); XLA's op elsewhere."""
    def emit(ctx, x):
        if fast_trig.applies(ctx):
            return fast_trig.emit(ctx, x, which)
        return ctx.simple(hlo, x)
    return emit


sin = _unary("sin", "stablehlo.sine", np.sin, dt.FLOATING_KINDS, emit=_trig_emit("sin", "stablehlo.sine"),
             formula=cm.sin, rules=ad.elementwise_rules(lambda x, out: lax.cos(x)))
cos = _unary("cos", "stablehlo.cosine", np.cos, dt.FLOATING_KINDS, emit=_trig_emit("cos", "stablehlo.cosine"),
             formula=cm.cos, rules=ad.elementwise_rules(lambda x, out: lax.negate(lax.sin(x))))
tan = _unary("tan", "stablehlo.tan", np.tan, dt.FLOATING_KINDS, formula=cm.tan, rules=ad.elementwise_rules(
    lambda x, out: lax.add(ad.const(out, 1), ad.square(out))))
tanh = _unary("tanh", "stablehlo.tanh", np.tanh, dt.FLOATING_KINDS, formula=cm.tanh, rules=ad.elementwise_rules(
    lambda x, out: lax.subtract(ad.const(out, 1), ad.square(out))))
asin = _unary("asin", "chlo.asin", np.arcsin, dt.FLOATING_KINDS, formula=cm.asin, rules=ad.elementwise_rules(
    lambda x, out: lax.rsqrt(lax.subtract(ad.const(x, 1), ad.square(x)))))
acos = _unary("acos", "chlo.acos", np.arccos, dt.FLOATING_KINDS, formula=cm.acos, rules=ad.elementwise_rules(
    lambda x, out: lax.negate(lax.rsqrt(lax.subtract(ad.const(x, 1), ad.square(x))))))
atan = _unary("atan", "chlo.atan", np.arctan, dt.FLOATING_KINDS, formula=cm.atan, rules=ad.elementwise_rules(
    lambda x, out: _inv(lax.add(ad.const(x, 1), ad.square(x)))))
sinh = _unary("sinh", "chlo.sinh", np.sinh, dt.FLOATING_KINDS, formula=cm.sinh, rules=ad.elementwise_rules(
    lambda x, out: lax.cosh(x)))
cosh = _unary("cosh", "chlo.cosh", np.cosh, dt.FLOATING_KINDS, formula=cm.cosh, rules=ad.elementwise_rules(
    lambda x, out: lax.sinh(x)))
asinh = _unary("asinh", "chlo.asinh", np.arcsinh, dt.FLOATING_KINDS, formula=cm.asinh, rules=ad.elementwise_rules(
    lambda x, out: lax.rsqrt(lax.add(ad.square(x), ad.const(x, 1)))))
acosh = _unary("acosh", "chlo.acosh", np.arccosh, dt.FLOATING_KINDS, formula=cm.acosh, rules=ad.elementwise_rules(
    lambda x, out: lax.rsqrt(lax.multiply(lax.subtract(x, ad.const(x, 1)), lax.add(x, ad.const(x, 1))))))
atanh = _unary("atanh", "chlo.atanh", np.arctanh, dt.FLOATING_KINDS, formula=cm.atanh, rules=ad.elementwise_rules(
    lambda x, out: _inv(lax.subtract(ad.const(x, 1), ad.square(x)))))
floor = _unary("floor", "stablehlo.floor", np.floor, "f")
ceil = _unary("ceil", "stablehlo.ceil", np.ceil, "f")
round_even = _unary("round_even", "stablehlo.round_nearest_even", np.rint, "f", source="xp.round({0})")
is_finite = _unary("is_finite", "stablehlo.is_finite", np.isfinite, "f", result=lambda d: dt.bool,
                   source="xp.isfinite({0})")
real = _unary("real", "stablehlo.real", np.real, "c", result=dt.real_of, rules={
    "jvp": lambda tangents, x, *, out: lax.real(tangents[0]),
    "vjp": lambda ct, x, *, out: (lax.complex(ct, ad.zeros(ct)),)})
imag = _unary("imag", "stablehlo.imag", np.imag, "c", result=dt.real_of, rules={
    "jvp": lambda tangents, x, *, out: lax.imag(tangents[0]),
    "vjp": lambda ct, x, *, out: (lax.complex(ad.zeros(ct), ct),)})


def _complex_infer(re, im):
    shape = kinds_check("complex", "f")(re, im).shape
    if re.dtype not in (dt.float32, dt.float64):
        raise TypeError(f"complex: parts must be float32 or float64, got {re.dtype}")
    return aval(shape, dt.complex_of(re.dtype))


def _complex_impl(re, im):
    # not re + 1j * im: 1j * inf has a NaN real part, and -0.0 parts lose their sign
    out = np.empty(np.broadcast_shapes(re.shape, im.shape), dtype=np.result_type(re, im, np.complex64))
    out.real, out.imag = re, im
    return out


complex = declare("complex", infer=_complex_infer, elementwise=True,
                  emit=lambda ctx, re, im: ctx.simple("stablehlo.complex", re, im),
                  impl=lambda re, im: _complex_impl(re, im),
                  source=lambda ctx, re, im: f"xp.astype({re}, xp.{ctx.out_aval.dtype}) + 1j * {im}",
                  batch=bt.elementwise("complex"), padding=pd.ignore("complex"),
                  **ad.linear_rules(lambda ct, re, im, *, out: (lax.real(ct), lax.imag(ct))))


# ----------------------------------------------------------------------------- compare / select

_DIRECTIONS = ("EQ", "NE", "LT", "LE", "GT", "GE")
_PY_COMPARE = dict(zip(_DIRECTIONS, ("==", "!=", "<", "<=", ">", ">=")))
_NUMPY_COMPARE = dict(zip(_DIRECTIONS, (np.equal, np.not_equal, np.less, np.less_equal,
                                        np.greater, np.greater_equal)))


def _compare_infer(x, y, *, direction):
    if direction not in _DIRECTIONS:
        raise ValueError(f"compare: unknown direction {direction!r}")
    if x.dtype.kind == "c" and direction not in ("EQ", "NE"):
        raise TypeError("compare: complex numbers are not ordered")
    return aval(kinds_check("compare", dt.ALL_KINDS)(x, y).shape, dt.bool)


def _compare_emit(ctx, x, y, *, direction):
    kind = ctx.in_avals[0].dtype.kind
    ctype = {"b": "UNSIGNED", "u": "UNSIGNED", "i": "SIGNED"}.get(kind, "FLOAT")
    return ctx.simple("stablehlo.compare", x, y,
                      attrs=f"comparison_direction = #stablehlo<comparison_direction {direction}>, "
                            f"compare_type = #stablehlo<comparison_type {ctype}>")


def _compare_impl(x, y, *, direction):
    return _NUMPY_COMPARE[direction](_compared(x), _compared(y))


compare = declare("compare", infer=_compare_infer, emit=_compare_emit, elementwise=True,
                  impl=_compare_impl,
                  source=lambda ctx, x, y, *, direction: f"{x} {_PY_COMPARE[direction]} {y}",
                  batch=bt.elementwise("compare"), padding=pd.ignore("compare"),
                  **ad.no_derivative())


def _select_infer(pred, on_true, on_false):
    if pred.dtype is not dt.bool:
        raise TypeError("select: predicate must be a bool array")
    return aval(common_shape(pred, on_true, on_false),
                kinds_check("select", dt.ALL_KINDS)(on_true, on_false).dtype)


def _select_jvp(tangents, pred, a, b, *, out):
    _, ta, tb = tangents
    if ta is None and tb is None:
        return None
    return lax.select(pred, ad.zeros(a) if ta is None else ta, ad.zeros(b) if tb is None else tb)


def _select_vjp(ct, pred, a, b, *, out):
    zero = ad.zeros(ct)
    return (None, lax.select(pred, ct, zero), lax.select(pred, zero, ct))


select = declare("select", infer=_select_infer, elementwise=True,
                 emit=lambda ctx, p, a, b: ctx.simple("stablehlo.select", p, a, b),
                 impl=lambda p, a, b: np.where(p, a, b), jvp=_select_jvp, vjp=_select_vjp,
                 source="xp.where({0}, {1}, {2})", batch=bt.elementwise("select"),
                 padding=pd.ignore("select"))


# ----------------------------------------------------------------------------- convert

def _convert_infer(x, *, dtype):
    return aval(x.shape, dtype)


def _convert_impl(x, *, dtype):
    target = dtype.numpy
    if dtype.kind == "b":
        return x != 0
    if (x.dtype.kind in dt.FLOATING_KINDS or dt.numpy_is_bfloat16(x.dtype)) and dtype.kind in dt.INTEGER_KINDS:
        # XLA saturates out-of-range values and maps NaN to 0 (bfloat16 too: NumPy's kind
        # for it is "V", and its astype wraps)
        info = np.iinfo(target)
        v = np.real(x) if x.dtype.kind == "c" else x
        v = np.nan_to_num(v.astype(np.float64), nan=0.0, posinf=float(info.max), neginf=float(info.min))
        out = np.clip(np.trunc(v), info.min, info.max)
        big = out >= float(info.max)   # float64 cannot hold int64/uint64 max exactly
        return np.where(big, np.array(info.max, target), out.astype(target))
    if x.dtype.kind == "c" and dtype.kind == "f":
        return np.real(x).astype(target)
    return x.astype(target)


def _convert_jvp(tangents, x, *, out, dtype):
    if not (ad.differentiable(x) and ad.differentiable(out)):
        return None
    return ad.as_dtype_of(tangents[0], out)


def _convert_vjp(ct, x, *, out, dtype):
    if not (ad.differentiable(x) and ad.differentiable(out)):
        return (None,)
    return (ad.as_dtype_of(ct, x),)


def _convert_emit(ctx, x, *, dtype):
    src = ctx.in_avals[0]
    if src.dtype.kind == "b" and dtype.kind in dt.FLOATING_KINDS:
        # XLA's simplifier turns convert(pred) * y into select(pred, y, 0), which is wrong
        # when y is inf or nan (False * inf must be nan) or negative (False * -3 is -0.0);
        # converting through uint8 keeps the IEEE result
        u8 = ctx.op("stablehlo.convert", (x,), (src,), aval(src.shape, dt.uint8))
        return ctx.op("stablehlo.convert", (u8,), (aval(src.shape, dt.uint8),), ctx.out_aval)
    if src.dtype.kind == "c" and dtype.kind != "c":
        # XLA's constant folder crashes (SIGSEGV) converting a complex constant to a real
        # type; the real part, then a real conversion, is the same value
        if dtype.kind == "b":
            return ctx.compare(x, ctx.constant(0, src), src, "NE")
        part = aval(src.shape, dt.real_of(src.dtype))
        x = ctx.op("stablehlo.real", (x,), (src,), part)
        if part.dtype is dtype:
            return x
        return ctx.op("stablehlo.convert", (x,), (part,), ctx.out_aval)
    if src.dtype.kind == "i" and dtype.kind == "i" and dtype.bits < src.dtype.bits:
        # XLA's CPU fusion emitter crashes (SIGSEGV) on a narrowing signed conversion that
        # feeds `and` or `or`; truncating to the unsigned type of the same width and
        # reinterpreting the bits is the same conversion
        unsigned = aval(src.shape, dt.unsigned_of(dtype))
        u = ctx.op("stablehlo.convert", (x,), (src,), unsigned)
        return ctx.op("stablehlo.bitcast_convert", (u,), (unsigned,), ctx.out_aval)
    return ctx.simple("stablehlo.convert", x)


convert = declare("convert", infer=_convert_infer,
                  emit=_convert_emit,
                  impl=_convert_impl, jvp=_convert_jvp, vjp=_convert_vjp,
                  source=lambda ctx, x, *, dtype: f"xp.astype({x}, xp.{dtype})",
                  batch=bt.unary("convert"), padding=pd.ignore("convert"))


def _bitcast_infer(x, *, dtype):
    if dtype.bits != x.dtype.bits:
        raise TypeError(f"bitcast_convert: {x.dtype} and {dtype} differ in width")
    return aval(x.shape, dtype)


bitcast_convert = declare(
    "bitcast_convert", infer=_bitcast_infer,
    emit=lambda ctx, x, *, dtype: ctx.simple("stablehlo.bitcast_convert", x),
    impl=lambda x, *, dtype: np.ascontiguousarray(x).view(dtype.numpy).reshape(x.shape),
    batch=bt.unary("bitcast_convert"), padding=pd.ignore("bitcast_convert"), **ad.no_derivative())
