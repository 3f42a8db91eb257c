"""float32 sine and cosine for XLA:CPU, written as StableHLO arithmetic.

XLA:CPU's own float32 `sine`/`cosine` run about four times slower than NumPy's vectorised
ones (measured with jaxlib 0.10.2: 8.5 ns against 2.2 ns per element on one core), and a
sine is often the most expensive op of a fused elementwise chain. This module emits the
classical scheme instead, which XLA vectorises like any other elementwise arithmetic:

  * reduction by pi/2 with a three-part (Cody-Waite) constant: k = round(x * 2/pi),
    r = x - k*P1 - k*P2 - k*P3 with |r| <= pi/4. P1 has 8 significant bits and P2 12, so
    k*P1 and k*P2 are exact while |k| < 2^12, which holds for |x| <= 6000: there the
    reduced argument is exact to about 1e-10 absolute, far inside float32's tolerance;
  * minimax polynomials for sin and cos on [-pi/4, pi/4] (Cephes' sinf/cosf coefficients,
    about one ulp);
  * the quadrant k mod 4 picks sin r, cos r, -sin r or -cos r.

Arguments outside that range (and inf/NaN) go to XLA's own op: the program checks
all(|x| <= 6000) once per evaluation and branches (`stablehlo.if`) between the two
computations, so large or non-finite inputs are exactly as accurate as before and the
common case pays one extra read of x.
"""
from __future__ import annotations

from .. import _dtypes as dt
from .._graph import Aval
from .stablehlo import tensor_type

LIMIT = 6000.0
_TWO_OVER_PI = 0.6366197723675814
_P1, _P2, _P3 = 1.5703125, 4.837512969970703125e-4, 7.549789954891882e-8
_SIN = (-1.6666654611e-1, 8.3321608736e-3, -1.9515295891e-4)
_COS = (4.166664568298827e-2, -1.388731625493765e-3, 2.443315711809948e-5)


def applies(ctx) -> bool:
    """Whether this equation's sin or cos takes the form below (float32 arrays on the CPU)."""
    return ctx.platform == "cpu" and ctx.out_aval.dtype is dt.float32 and ctx.out_aval.shape != ()


def emit(ctx, x, which):
    """`which` ("sin" or "cos") of x: the polynomial form when max|x| <= LIMIT, else XLA's."""
    a = ctx.out_aval
    pred = _in_range(ctx, x, a)
    fast = _region(ctx, a, lambda: _polynomial(ctx, x, a, which))
    # XLA turns a conditional whose branches are all elementwise into a select of both,
    # which computes its sine everywhere (slower than its sine alone: 5.0 -> 6.7 ns an
    # element); the barrier is not elementwise, so the branch stays a branch
    slow = _region(ctx, a, lambda: ctx.op(f"stablehlo.{'sine' if which == 'sin' else 'cosine'}",
                                          (ctx.barrier(x, a),), (a,), a))
    result = ctx.fresh()
    t = tensor_type(a)
    ctx.lines.append(f'{result} = "stablehlo.if"({pred}) ({fast}, {slow}) : '
                     f'(tensor<i1>) -> {t}')
    return result


def _in_range(ctx, x, a):
    """all(|x| <= LIMIT) as a tensor<i1> (false for NaN: it compares false). An and of the
    comparisons, not max|x| <= LIMIT: XLA:CPU's vectorised float max reduction can drop a
    NaN together with the values beside it (with a NaN in the array, max|x| came out below
    LIMIT although 4.6e21 was there, and the polynomial ran on it)."""
    ba, scalar = Aval(a.shape, dt.bool), Aval((), dt.bool)
    t = tensor_type(scalar)
    absx = ctx.op("stablehlo.abs", (x,), (a,), a)
    within = ctx.op("stablehlo.compare", (absx, ctx.constant(LIMIT, a)), (a, a), ba,
                    attrs="comparison_direction = #stablehlo<comparison_direction LE>, "
                          "compare_type = #stablehlo<comparison_type FLOAT>")
    p, q, r = ctx.fresh(), ctx.fresh(), ctx.fresh()
    region = (f'{{\n      ^bb0({p}: {t}, {q}: {t}):\n'
              f'        {r} = "stablehlo.and"({p}, {q}) : ({t}, {t}) -> {t}\n'
              f'        "stablehlo.return"({r}) : ({t}) -> ()\n    }}')
    dims = ", ".join(map(str, range(len(a.shape))))
    return ctx.op("stablehlo.reduce", (within, ctx.constant(True, scalar)), (ba, scalar), scalar,
                  attrs=f"dimensions = array<i64: {dims}>", regions=region)


def _region(ctx, a, build):
    """A one-block region whose ops `build` writes; it returns build's result."""
    outer, ctx.lines = ctx.lines, []
    try:
        value = build()
        ctx.lines.append(f'"stablehlo.return"({value}) : ({tensor_type(a)}) -> ()')
        inner = "\n".join("      " + line for line in ctx.lines)
    finally:
        ctx.lines = outer
    return f"{{\n{inner}\n    }}"


def _polynomial(ctx, x, a, which):
    ia = Aval(a.shape, dt.int32)
    ba = Aval(a.shape, dt.bool)

    def c(v):
        return ctx.constant(v, a)

    def f(name, *operands):
        return ctx.op(f"stablehlo.{name}", operands, (a,) * len(operands), a)

    k = f("round_nearest_even", f("multiply", x, c(_TWO_OVER_PI)))
    r = f("subtract", x, f("multiply", k, c(_P1)))
    r = f("subtract", r, f("multiply", k, c(_P2)))
    r = f("subtract", r, f("multiply", k, c(_P3)))
    z = f("multiply", r, r)
    s = f("add", c(_SIN[1]), f("multiply", z, c(_SIN[2])))
    s = f("add", c(_SIN[0]), f("multiply", z, s))
    sin_r = f("add", r, f("multiply", f("multiply", r, z), s))
    p = f("add", c(_COS[1]), f("multiply", z, c(_COS[2])))
    p = f("add", c(_COS[0]), f("multiply", z, p))
    cos_r = f("add", f("subtract", c(1.0), f("multiply", z, c(0.5))),
              f("multiply", f("multiply", z, z), p))

    q = ctx.op("stablehlo.convert", (k,), (a,), ia)
    if which == "cos":
        q = ctx.op("stablehlo.add", (q, ctx.constant(1, ia)), (ia, ia), ia)

    def bit_set(bit):
        masked = ctx.op("stablehlo.and", (q, ctx.constant(bit, ia)), (ia, ia), ia)
        return ctx.op("stablehlo.compare", (masked, ctx.constant(0, ia)), (ia, ia), ba,
                      attrs="comparison_direction = #stablehlo<comparison_direction NE>, "
                            "compare_type = #stablehlo<comparison_type SIGNED>")

    if which == "sin":
        # the reduction and r + r*z*s lose the sign of zero; sin(±0) is ±0
        is_zero = ctx.op("stablehlo.compare", (x, c(0.0)), (a, a), ba,
                         attrs="comparison_direction = #stablehlo<comparison_direction EQ>, "
                               "compare_type = #stablehlo<comparison_type FLOAT>")
        sin_r = ctx.op("stablehlo.select", (is_zero, x, sin_r), (ba, a, a), a)
    base = ctx.op("stablehlo.select", (bit_set(1), cos_r, sin_r), (ba, a, a), a)
    return ctx.op("stablehlo.select", (bit_set(2), f("negate", base), base), (ba, a, a), a)
