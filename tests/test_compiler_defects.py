"""Programs that XLA:CPU crashed on or rewrote into other values (docs/runtime-notes-cpu.md).

Each case is a small program compiled by XLA (execution="compiled") and compared with the
interpreter, which is the reference of every emitted program. The cases that once killed the
process run in a child process, so that a regression fails this test instead of ending the
run; the child reports the case it was working on before each step.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tlaloc as xp

# Each body computes `out` from the module `xp` and the device `dev`.
CRASHES = {
    # narrowing signed conversion feeding `and` / `or`: SIGSEGV in the CPU fusion emitter
    "cumsum_astype_and": """
        x = xp.asarray(np.ones(2, np.int32), device=dev)
        c = xp.cumulative_sum(x)
        out = [xp.astype(c, xp.int8) & xp.asarray(np.ones(2, np.int8), device=dev), c]""",
    "pad_astype_or_int64": """
        x = xp.asarray(np.arange(3, dtype=np.int64) + 200, device=dev)
        c = x + xp.concat([xp.zeros(1, dtype=xp.int64, device=dev), x[:-1]])
        out = [xp.astype(c, xp.int16) | xp.asarray(np.full(3, 3, np.int16), device=dev), c]""",
    "int32_to_int8_and": """
        x = xp.asarray(np.array([300, -129, 127, -1], np.int32), device=dev)
        out = [xp.astype(x, xp.int8) & xp.asarray(np.array([-1, 15, 7, 3], np.int8), device=dev)]""",
    # integer division of constants by zero: SIGFPE in XLA's constant folder
    **{f"constant_{op}_by_zero_{name}": f"""
        a = xp.asarray(np.array([0, 7, 5, 1], np.{name}), device=dev)
        out = [xp.zeros((4,), dtype=xp.{name}, device=dev) {sym} xp.zeros((1,), dtype=xp.{name}, device=dev),
               xp.full((4,), 7, dtype=xp.{name}, device=dev) {sym} xp.zeros((4,), dtype=xp.{name}, device=dev),
               a {sym} xp.zeros((4,), dtype=xp.{name}, device=dev)]"""
       for name in ("uint8", "uint64", "int8", "int32", "int64")
       for op, sym in (("floordiv", "//"), ("remainder", "%"))},
    # a complex constant converted to a real type: SIGSEGV in XLA's constant folder
    "constant_complex_to_real": """
        z = xp.full((5,), 1.5 - 2j, dtype=xp.complex128, device=dev)
        out = [xp.primitive("convert", z, dtype=xp.float64),
               xp.primitive("convert", z, dtype=xp.int32),
               xp.primitive("convert", z, dtype=xp.bool),
               xp.primitive("convert", xp.full((3,), 2.5j, dtype=xp.complex64, device=dev), dtype=xp.float32)]""",
}

_CHILD = """
import json, sys
import numpy as np
import tlaloc as xp
xp.config.update(execution="compiled")
cases = json.loads(sys.argv[1])
results = {}
for name, body in cases.items():
    print("running", name, flush=True)
    values = {}
    for dev in (xp.device("cpu"), xp.device("interpreter")):
        env = {"xp": xp, "np": np, "dev": dev}
        exec(body, env)
        values[dev.platform] = [np.asarray(o).tolist() for o in env["out"]]
    results[name] = values
print("RESULTS " + json.dumps(results), flush=True)
"""


def test_programs_that_crashed_the_compiler_run():
    cases = {name: textwrap.dedent(body) for name, body in CRASHES.items()}
    env = dict(os.environ, TLALOC_CACHE_DIR="")   # compile each program, do not load it
    proc = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(cases)], env=env,
                          capture_output=True, text=True, timeout=600)
    lines = proc.stdout.splitlines()
    if proc.returncode != 0:
        running = [line for line in lines if line.startswith("running")]
        pytest.fail(f"the child process ended with status {proc.returncode} while "
                    f"{running[-1] if running else 'starting'}:\n{proc.stderr[-3000:]}")
    results = json.loads(lines[-1].removeprefix("RESULTS "))
    assert set(results) == set(cases)
    for name, values in results.items():
        assert values["cpu"] == values["interpreter"], name


@pytest.mark.parametrize("name", sorted(CRASHES))
def test_crash_cases_match_numpy_on_the_interpreter(name):
    """The reference side of the comparison above: the interpreter agrees with NumPy's
    integer arithmetic where NumPy defines it (XLA's x // 0 is -1 and x % 0 is x)."""
    env = {"xp": xp, "np": np, "dev": xp.device("interpreter")}
    exec(textwrap.dedent(CRASHES[name]), env)
    outs = [np.asarray(o) for o in env["out"]]
    if name.startswith("cumsum_astype_and"):
        np.testing.assert_array_equal(outs[0], np.array([1, 0], np.int8))
    if name == "int32_to_int8_and":
        np.testing.assert_array_equal(
            outs[0], np.array([300, -129, 127, -1], np.int32).astype(np.int8)
            & np.array([-1, 15, 7, 3], np.int8))
    if name.startswith("constant_floordiv"):
        np.testing.assert_array_equal(outs[0], np.zeros(4))   # the standard leaves x // 0 open
    if name == "constant_complex_to_real":
        np.testing.assert_array_equal(outs[0], np.full(5, 1.5))
        np.testing.assert_array_equal(outs[1], np.full(5, 1))
        np.testing.assert_array_equal(outs[2], np.full(5, True))
        np.testing.assert_array_equal(outs[3], np.zeros(3, np.float32))


def _both(f, *values):
    """f's result compiled on the CPU and on the interpreter, as NumPy arrays."""
    xp.config.update(execution="compiled")
    return [np.asarray(f(*[xp.asarray(v, device=d) for v in values]))
            for d in (xp.device("cpu"), xp.device("interpreter"))]


f32 = np.float32

# A complex64 A with a -0.0 imaginary part, and a B with inf and nan parts
_CANCELLING = (np.array([1 + 2j, complex(3.0, -0.0), 5 + 1j], np.complex64),
               np.array([complex(np.inf, 1.0), 2 + 0j, complex(1.0, np.nan)], np.complex64))
_CANCELLING_EXPECTED = np.array([complex(np.nan, 2.0), 3 + 0j, complex(5.0, np.nan)],
                                np.complex64)

_INF_PART = np.array([0.25 + 0.5j, complex(0.75, np.inf)], np.complex64).reshape(2, 1)
_F32_MAX = float(np.finfo(np.float32).max)
_F64_MAX = float(np.finfo(np.float64).max)

# (name, function, inputs, the IEEE result of the operations as written)
REWRITES = [
    # c / (a / b) -> (c * b) / a overflows
    ("floordiv_by_quotient", lambda a, b: -4.0 // (a / b), (f32(1e38), f32(1e38)), f32(-4.0)),
    ("divide_by_quotient", lambda a, b, c: c / (a / b), (f32(1e38), f32(1e38), f32(3.0)), f32(3.0)),
    # (a / b) / c -> a / (b * c) overflows
    ("quotient_divided", lambda a, b, c: (a / b) / c, (f32(1.0), f32(1e30), f32(1e30)), f32(1e-30) / f32(1e30)),
    # log(a ** b) -> b * log(|a|) is not nan for a < 0
    ("log_of_power", lambda a, b: xp.log(a ** b), (-1.02, -2.5), np.nan),
    # log(exp(a)) -> a ignores the overflow of exp
    ("log_of_exp", lambda a: xp.log(xp.exp(a)), (f32(100.0),), f32(np.inf)),
    # exp(a) * exp(b) -> exp(a + b) ignores overflow: inf * 0 (exp(-104) flushes) is nan
    ("product_of_exps", lambda a, b: xp.exp(a) * xp.exp(b), (f32(100.0), f32(-104.0)), f32(np.nan)),
    # x + 0 -> x keeps -0.0, IEEE gives +0.0
    ("plus_zeros", lambda x: x + xp.zeros(2, device=x.device), (np.array([-0.0, 1.0]),),
     np.array([0.0, 1.0])),
    ("plus_integer_zeros", lambda x: x + xp.zeros(2, dtype=xp.int32, device=x.device),
     (np.array([-0.0, 1.0]),), np.array([0.0, 1.0])),
    ("minus_negative_zeros", lambda x: x - xp.full(2, -0.0, device=x.device),
     (np.array([-0.0, 1.0]),), np.array([0.0, 1.0])),
    # ... and the CPU fusion emitters fold it again once the barriers are gone (tests/fuzz,
    # seed 20261205): the loop emitter's complex add/sub, the tiled emitter's add of one
    # element (a Python scalar beside a one-element constant)
    ("plus_complex_zeros", lambda x: x + xp.zeros(3, dtype=xp.complex128, device=x.device),
     (np.full(3, complex(-0.0, -0.0)),), np.zeros(3, np.complex128)),
    ("scalar_plus_complex_zeros_like", lambda x: complex(np.inf, -0.0) + xp.zeros_like(x),
     (np.array([1 + 2j, 3, 4]),), np.full(3, complex(np.inf, 0.0))),
    ("minus_negative_complex_zeros",
     lambda x: x - xp.full((2, 2), complex(-0.0, -0.0), dtype=xp.complex64, device=x.device),
     (np.full((2, 2), complex(-0.0, -0.0), np.complex64),), np.zeros((2, 2), np.complex64)),
    ("scalar_plus_one_zero", lambda x: -0.0 + xp.zeros_like(x), (np.full(1, 5.0, f32),),
     np.zeros(1, f32)),
    ("one_element_plus_zero", lambda x: (-x) + xp.zeros((1, 1), dtype=xp.float64, device=x.device),
     (np.zeros((1, 1)),), np.zeros((1, 1))),
    # a / constant -> a * (1 / constant) is not correctly rounded
    ("divide_by_constant", lambda a: a / xp.full(a.shape, 3.0, dtype=xp.float32, device=a.device),
     (np.arange(1, 8, dtype=f32) * f32(7.1),), (np.arange(1, 8, dtype=f32) * f32(7.1)) / f32(3.0)),
    # a / sqrt(b) -> a * rsqrt(b) is not correctly rounded
    ("divide_by_sqrt", lambda a, b: a / xp.sqrt(b), (np.arange(1, 40, dtype=f32), np.arange(2, 41, dtype=f32)),
     np.arange(1, 40, dtype=f32) / np.sqrt(np.arange(2, 41, dtype=f32))),
    # sqrt(a * a) -> |a| ignores the overflow of a * a
    ("sqrt_of_square", lambda a: xp.sqrt(a * a), (np.array([1e30, 3.0, -1e30], f32),),
     np.array([np.inf, 3.0, np.inf], f32)),
    # exp(a) ** b -> exp(a * b) ignores the overflow of exp(a)
    ("power_of_exp", lambda a, b: xp.exp(a) ** b, (f32(100.0), f32(0.5)), f32(np.inf)),
    # a signed integer x * x is taken to be non-negative, which wrapping breaks (tests/fuzz):
    # abs(x * x) -> x * x, and x * x < 0 -> false inside floor_divide and remainder
    ("abs_of_integer_square", lambda a: xp.abs(a * a), (np.array([-306783379, 3, 46341], np.int32),),
     np.abs(np.array([-306783379, 3, 46341], np.int32) ** 2)),
    ("floordiv_by_integer_square", lambda a, b: b // xp.square(a),
     (np.array([-306783379, 3, 46341], np.int32), np.full(3, -9, np.int32)),
     np.full(3, -9, np.int32) // np.array([-306783379, 3, 46341], np.int32) ** 2),
    ("remainder_by_integer_square", lambda a, b: b % (a * a),
     (np.array([-306783379, 3, 46341], np.int64) * 30269, np.full(3, -9, np.int64)),
     np.full(3, -9, np.int64) % (np.array([-306783379, 3, 46341], np.int64) * 30269) ** 2),
    ("integer_square_below_zero", lambda a: (a * a) < xp.zeros(a.shape, dtype=a.dtype, device=a.device),
     (np.array([-306783379, 3, 46341], np.int32),), np.array([-306783379, 3, 46341], np.int32) ** 2 < 0),
    # ... and abs(x) too, which wraps at the minimum value (tests/fuzz, seed 20261211:
    # 1 // abs(int32 -2147483648) gave 0, not -1)
    ("floordiv_by_integer_abs", lambda a, b: b // xp.abs(a),
     (np.array([-2147483648, -5, 7, 0], np.int32), np.array([1, 1, -1, 3], np.int32)),
     np.array([1, 1, -1, 3], np.int32) // np.abs(np.array([-2147483648, -5, 7, 0], np.int32))),
    ("remainder_by_integer_abs", lambda a, b: b % xp.abs(a),
     (np.array([-128, -5, 7, 1], np.int8), np.array([1, 1, -1, 3], np.int8)),
     np.array([1, 1, -1, 3], np.int8) % np.abs(np.array([-128, -5, 7, 1], np.int8))),
    ("floordiv_by_int64_abs", lambda a, b: b // xp.abs(a),
     (np.array([np.iinfo(np.int64).min, 3], np.int64), np.array([5, -7], np.int64)),
     np.array([5, -7], np.int64) // np.abs(np.array([np.iinfo(np.int64).min, 3], np.int64))),
    # float32 exp fused into an add or subtract gives a large finite number where it
    # overflows (tests/fuzz, seed 20261208: (v1 + v2) - exp(v1) was inf at v1 = inf)
    ("minus_exp_of_inf", lambda a, b: (a + b) - xp.exp(a),
     (np.array([np.inf, 1.0, -np.inf, 100.0], f32), f32(499.4)),
     np.array([np.nan, f32(500.4) - np.exp(f32(1.0)), -np.inf, -np.inf], f32)),
    ("exp_overflow_minus", lambda a, b: xp.exp(a) - b,
     (np.array([np.inf, 89.0, 88.72283, 1.0], f32), np.full(4, np.inf, f32)),
     np.array([np.nan, np.nan, -np.inf, -np.inf], f32)),
    ("plus_negated_exp", lambda a: a + (-xp.exp(a)), (np.array([np.inf, 0.0], f32),),
     np.array([np.nan, -1.0], f32)),
    # complex addition taken to be exact: (A - B) + B, B + (A - B), (A + B) - B -> A in the
    # CPU emitters' complex dialect, behind barriers too (tests/fuzz, seed 20261210:
    # (v1 - v1) + v1 kept a -0.0 imaginary part)
    ("complex_minus_plus", lambda a, b: (a - b) + b, _CANCELLING, _CANCELLING_EXPECTED),
    ("complex_plus_difference", lambda a, b: b + (a - b), _CANCELLING, _CANCELLING_EXPECTED),
    ("complex_plus_minus", lambda a, b: (a + b) - b, _CANCELLING, _CANCELLING_EXPECTED),
    ("complex_self_difference_plus", lambda a: (a - a) + a, (_CANCELLING[0],),
     np.array([1 + 2j, 3 + 0j, 5 + 1j], np.complex64)),
    ("complex128_broadcast_minus_plus", lambda a, b: (a - b) + b,
     (np.full((3, 4), complex(1.0, -0.0)), np.array(complex(np.inf, 0.0))),
     np.full((3, 4), complex(np.nan, 0.0))),
    # XLA:CPU's LLVM backend contracts a product into the add or subtract it feeds (an FMA,
    # product never rounded, so never overflowing alone; tests/fuzz, seed 20261211:
    # (a + a) - a * a at float32's largest a was inf, not inf - inf = nan)
    ("product_overflow_in_a_difference", lambda a: (a + a) - a * a,
     (np.array([_F32_MAX, -_F32_MAX, 3.0], f32),), np.array([np.nan, -np.inf, -3.0], f32)),
    ("difference_of_overflowing_products", lambda a, b: a * a - b * b,
     (np.array([_F32_MAX, 3.0], f32), np.array([_F32_MAX, 2.0], f32)), np.array([np.nan, 5.0], f32)),
    ("overflowing_product_minus_constant",
     lambda a: a * a - xp.full(a.shape, _F64_MAX, device=a.device),
     (np.array([np.sqrt(_F64_MAX) * 1.2, 2.0]),), np.array([np.inf, -_F64_MAX])),
    ("negated_overflowing_product_plus", lambda a, b: b + (-(a * a)),
     (np.array([_F32_MAX], f32), np.array([np.inf], f32)), np.array([np.nan], f32)),
    ("sum_of_overflowing_products", lambda a, b: xp.sum(a * b),
     (np.array([_F32_MAX, _F32_MAX], f32), np.array([_F32_MAX, -_F32_MAX], f32)), f32(np.nan)),
    ("cumulative_sum_of_overflowing_products", lambda a, b: xp.cumulative_sum(a * b),
     (np.array([_F32_MAX, _F32_MAX, 1.0], f32), np.array([_F32_MAX, -_F32_MAX, 1.0], f32)),
     np.array([np.inf, np.nan, np.nan], f32)),
    # a sum over broadcast axes -> a multiply by the count: for complex values a complex
    # product, whose 0 * inf makes a nan real part (tests/fuzz, seed 20261213: the sum over
    # a tile of 0.1 + inf j was nan + inf j)
    ("complex_sum_of_a_broadcast", lambda a: xp.sum(xp.broadcast_to(a, (2, 4)), axis=1),
     (_INF_PART,), np.array([1 + 2j, complex(3.0, np.inf)], np.complex64)),
    ("complex_mean_of_a_tile", lambda a: xp.mean(xp.tile(a, (3,)), axis=1),
     (_INF_PART,), np.array([0.25 + 0.5j, complex(0.75, np.inf)], np.complex64)),
    ("complex_sum_of_a_difference_of_tiles",
     lambda a: xp.sum(xp.diff(xp.tile(xp.concat([a, a + a]), (2,)), axis=0), axis=1),
     (_INF_PART,), np.array([complex(1.0, np.inf), complex(-0.5, -np.inf), complex(2.0, np.inf)],
                            np.complex64)),
    # XLA's vectorized log reads a subnormal's exponent bits in flush-to-zero mode
    ("log_of_subnormals", lambda a: xp.log(a), (np.array([1e-40, 3e-39, 1.5, 1e-45, -1e-40], f32),),
     np.array([-np.inf, -np.inf, np.log(f32(1.5)), -np.inf, -np.inf], f32)),
]


@pytest.mark.parametrize("name, f, inputs, expected", REWRITES, ids=[r[0] for r in REWRITES])
def test_simplifier_rewrites_do_not_change_results(name, f, inputs, expected):
    compiled, interpreted = _both(f, *inputs)
    expected = np.asarray(expected, dtype=compiled.dtype)
    for got in (compiled, interpreted):
        np.testing.assert_array_equal(got, expected)
        parts = [(got.real, expected.real), (got.imag, expected.imag)] \
            if np.iscomplexobj(expected) else [(got, expected)]
        for g, e in parts:
            signed = ~np.isnan(e)   # the sign of a nan is not specified
            np.testing.assert_array_equal(np.signbit(g)[signed], np.signbit(e)[signed])


# atan2 of two zeros XLA:CPU can compute while compiling (constants behind the barriers
# that keep them out of its simplifier) was folded to NaN, for every float type (tests/fuzz,
# seed 20261202: atan2(0 + 0, |0|)); runtime zeros were right
_ATAN2_OF_ZEROS = [
    ("zeros", lambda z: xp.atan2(z + z, z), 0.0),
    ("sums", lambda z: xp.atan2(z + z, z + z), 0.0),
    ("negative_numerator", lambda z: xp.atan2(-(z + z), z + z), -0.0),
    ("negative_denominator", lambda z: xp.atan2(z + z, -(z + z)), np.pi),
    ("both_negative", lambda z: xp.atan2(-(z + z), -(z + z)), -np.pi),
    ("absolute", lambda z: xp.atan2(z + z, xp.abs(z)), 0.0),
]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("name, f, expected", _ATAN2_OF_ZEROS, ids=[c[0] for c in _ATAN2_OF_ZEROS])
def test_atan2_of_zeros_known_while_compiling(dtype, name, f, expected):
    xp.config.update(execution="compiled")
    for device in (xp.device("cpu"), xp.device("interpreter")):
        z = xp.zeros((3,), dtype=getattr(xp, dtype), device=device)
        got = np.asarray(xp.astype(f(z), xp.float64))
        np.testing.assert_allclose(got, np.full(3, expected), atol=1e-2)
        assert (np.signbit(got) == np.signbit(expected)).all(), (device, got)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("form", ["a * b + c", "c - a * b", "a * b - c * a", "c + 0.2 * (a + b)",
                                  "sum(a * b, axis=1)"])
def test_sums_of_products_are_rounded_as_written(form, dtype):
    # an FMA rounds once where the operations as written round twice: on random normal
    # operands, a * b + c differed from NumPy's in about a quarter of the elements
    rng = np.random.default_rng(7)
    a, b, c = (rng.standard_normal((300, 7)).astype(dtype) for _ in range(3))
    def f(a, b, c):
        if form.startswith("sum"):
            return xp.sum(a * b, axis=1)
        return eval(form, {}, {"a": a, "b": b, "c": c})
    compiled, interpreted = _both(f, a, b, c)
    np.testing.assert_array_equal(compiled, interpreted)
    if not form.startswith("sum"):       # a sum's order of additions is the compiler's
        np.testing.assert_array_equal(compiled, f(a, b, c))


def test_interpreter_flushes_subnormals_as_xla_does():
    from tlaloc.backends._fpenv import FLUSHES
    if not FLUSHES:
        pytest.skip("this platform's floating-point environment is not known to tlaloc")
    v = np.array([1e-40, -1e-40, 1.5, 3e-39] * 5, f32)
    for f in (lambda a: a * 1.5, lambda a: a + a, lambda a: a - a * 0.5, lambda a: xp.sqrt(xp.abs(a))):
        compiled, interpreted = _both(f, v)
        np.testing.assert_array_equal(compiled, interpreted)
        np.testing.assert_array_equal(np.signbit(compiled), np.signbit(interpreted))
    # subnormal values that no arithmetic touches are kept bit for bit
    compiled, interpreted = _both(lambda a: xp.flip(a), v)
    np.testing.assert_array_equal(compiled, v[::-1])
    np.testing.assert_array_equal(interpreted, v[::-1])


def test_the_flush_mode_is_the_blocks_own_nested_and_per_thread():
    """Only the outermost block changes and restores the mode; it never leaks to the code
    around it, nor to another thread (each keeps its own saved environment)."""
    import threading
    from tlaloc.backends._fpenv import FLUSHES, flush_subnormals
    if not FLUSHES:
        pytest.skip("this platform's floating-point environment is not known to tlaloc")
    tiny = np.array([1e-310])
    seen, other = [], []
    go = threading.Event()

    def computes_when_told():      # started before the block (a thread inherits its
        go.wait(30)                # creator's environment as it is at the start)
        other.append(float((tiny * 1.0)[0]))
    t = threading.Thread(target=computes_when_told)
    t.start()
    with flush_subnormals():
        with flush_subnormals():
            seen.append(float((tiny * 1.0)[0]))
        seen.append(float((tiny * 1.0)[0]))        # still flushing after the inner block
        go.set()
        t.join()
    assert seen == [0.0, 0.0]
    assert other == [1e-310]                        # the other thread was not flushing
    assert float((tiny * 1.0)[0]) == 1e-310         # restored after the outer block
    errors = []

    def worker():
        try:
            for _ in range(200):
                with flush_subnormals():
                    assert float((tiny * 1.0)[0]) == 0.0
                assert float((tiny * 1.0)[0]) == 1e-310
        except AssertionError as e:
            errors.append(e)
    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


@pytest.mark.parametrize("case", ["outer", "inf_times_zero", "batched_k1", "k0"])
def test_contractions_agree_at_special_values(case):
    """NumPy's BLAS may skip zero factors (inf * 0 must be nan) and sums a single product
    onto +0 (losing -0.0); the interpreter computes these as XLA does."""
    lhs, rhs, f = {
        "outer": (np.array([np.inf, 0.0]), np.array(-0.0), lambda a, b: xp.tensordot(a, b, axes=0)),
        "inf_times_zero": (np.array([[np.inf, 1.0], [0.0, -np.inf]]), np.array([[0.0], [-0.0]]),
                           lambda a, b: a @ b),
        "batched_k1": (np.ones((2, 3, 1)), np.full((2, 1, 2), -0.0), lambda a, b: a @ b),
        "k0": (np.ones((2, 0)), np.ones((0, 3)), lambda a, b: a @ b),
    }[case]
    compiled, interpreted = _both(f, lhs, rhs)
    expected = {"outer": np.array([np.nan, -0.0]), "inf_times_zero": np.array([[np.nan], [np.nan]]),
                "batched_k1": np.full((2, 3, 2), -0.0), "k0": np.zeros((2, 3))}[case]
    for got in (compiled, interpreted):
        np.testing.assert_array_equal(got, expected)
        np.testing.assert_array_equal(np.signbit(got)[~np.isnan(expected)],
                                      np.signbit(expected)[~np.isnan(expected)])


# A 300-step chain of rounded products on a 3-element array: XLA's AVX-512 code for it made
# LLVM's machine scheduler take over 24 GB (the kernel killed the process). The child's
# address space is capped, so a regression fails here (bad_alloc) instead of taking the
# machine's memory.
_LONG_CHAIN = """
import resource, sys
import numpy as np
import tlaloc as xp
resource.setrlimit(resource.RLIMIT_AS, (8 << 30, resource.RLIM_INFINITY))
xp.config.update(execution="compiled")
steps = int(sys.argv[1])
def chain(x):
    for _ in range(steps):
        x = x * 1.0001 + 0.5
    return x
x = np.array([1.0, 2.0, 3.0])
expected = x.copy()
for _ in range(steps):
    expected = expected * 1.0001 + 0.5
got = np.asarray(xp.jit(chain)(xp.asarray(x)))
np.testing.assert_array_equal(got, expected)
print("OK", flush=True)
"""


def test_a_long_chain_of_products_on_a_small_array_compiles():
    env = dict(os.environ, TLALOC_CACHE_DIR="")   # compile it, do not load it
    try:
        proc = subprocess.run([sys.executable, "-c", _LONG_CHAIN, "300"], env=env,
                              capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        pytest.fail("compiling a 300-step chain on 3 elements did not finish in 300 s")
    assert proc.returncode == 0 and proc.stdout.strip() == "OK", proc.stderr[-3000:]


@pytest.mark.parametrize("flags, cpu, expected", [
    ("", {"avx2", "avx512f"}, "--xla_cpu_max_isa=AVX2"),
    ("--xla_dump_to=/tmp/d", {"avx512f"}, "--xla_dump_to=/tmp/d --xla_cpu_max_isa=AVX2"),
    ("--xla_cpu_max_isa=AVX512", {"avx512f"}, "--xla_cpu_max_isa=AVX512"),   # the user's
    ("", {"avx2", "fma"}, ""),                                                # no AVX-512
])
def test_xla_code_is_capped_at_avx2_on_avx512_hosts_unless_the_user_chose(flags, cpu, expected):
    from tlaloc.backends import _jaxlib
    assert _jaxlib._capped_isa_flags(flags, frozenset(cpu)) == expected
