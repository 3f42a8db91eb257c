"""The fuzzer's own machinery can fail: the comparison flags what it must, the worker
reports crashes and hangs (and recovers), and the derivative check flags a wrong gradient."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tlaloc as xp

from .compare import problems
from .derivatives import _derivative_problems, one_sided_agree
from .elementwise import FUNCTIONS, apply
from .reductions import reduce_sum
from .reference import EXACT, FREE, RANGE, Ref
from .worker import Worker


def test_exact_elements_compare_bit_for_bit():
    ref = Ref(np.array([-0.0, np.nan, 1.5], np.float32))
    assert problems(np.array([-0.0, np.nan, 1.5], np.float32), ref) == []
    assert problems(np.array([0.0, np.nan, 1.5], np.float32), ref)        # sign of zero
    assert problems(np.array([-0.0, 1.0, 1.5], np.float32), ref)          # nan pattern
    assert problems(np.array([-0.0, np.nan, np.nextafter(np.float32(1.5), 2)]), ref)  # dtype
    assert problems(np.array([-0.0, np.nan], np.float32), ref)            # shape


def test_correctly_rounded_operations_are_exact_and_transcendental_ones_ranges():
    a = Ref(np.array([0.1, 3.0], np.float32))
    b = Ref(np.array([0.2, -0.0], np.float32))
    s = apply(FUNCTIONS["add"], [a, b], np.float32)
    assert (s.st == EXACT).all() and s.v[1] == 3.0
    e = apply(FUNCTIONS["exp"], [a], np.float32)
    assert (e.st == RANGE).all()
    assert problems(np.exp(a.v), e) == []
    assert problems(np.exp(a.v) * np.float32(1.001), e)
    # a range through a correctly rounded operation stays a range, and cancels properly
    d = apply(FUNCTIONS["subtract"], [e, e], np.float32)
    assert (d.st == RANGE).all() and problems(np.zeros(2, np.float32), d) == []


def test_order_dependent_overflow_is_free_and_special_sums_exact():
    big = float(np.finfo(np.float32).max)
    r = reduce_sum(Ref(np.array([big, big, -big], np.float32)), None)
    assert r.st == FREE
    r = reduce_sum(Ref(np.array([np.inf, 1.0, -np.inf], np.float32)), None)
    assert r.st == EXACT and math.isnan(r.v)
    assert problems(np.float32(0.0), r)


def test_subnormal_results_are_ranges_containing_zero():
    r = apply(FUNCTIONS["multiply"], [Ref(np.array([1e-30], np.float32)),
                                      Ref(np.array([1e-10], np.float32))], np.float32)
    assert r.st[0] == RANGE
    assert problems(np.array([0.0], np.float32), r) == []


def test_worker_reports_crash_hang_and_recovers():
    crash = ("import os, signal\n\ndef program(dev):\n"
             "    os.kill(os.getpid(), signal.SIGSEGV)\n")
    hang = "import time\n\ndef program(dev):\n    time.sleep(60)\n"
    ok = ("import numpy as np\nimport tlaloc as xp\n\ndef program(dev):\n"
          "    return [xp.asarray(np.arange(3.0), device=dev) + 1]\n")
    with Worker() as w:
        status, detail = w.request({"kind": "program", "source": crash, "mode": "interpreter"})
        assert status == "crash" and "SIGSEGV" in detail
        status, detail = w.request({"kind": "program", "source": hang, "mode": "interpreter"},
                                   timeout=3)
        assert status == "hang"
        status, reply = w.request({"kind": "program", "source": ok, "mode": "compiled"})
        assert status == "reply"
        np.testing.assert_array_equal(reply["runs"][0][0], [1.0, 2.0, 3.0])
        assert w.started == 3
        proc = w.proc
    assert proc.poll() is not None     # reaped


def test_a_wrong_derivative_is_flagged():
    grads = [np.array([1.0, 2.0])]
    good = {"value": 3.0, "grad": [np.array([1.0, 2.0])], "jvp": 0.5}
    assert _derivative_problems(good, 3.0, grads, 0.5) == []
    bad = dict(good, grad=[np.array([1.0, 2.001])])
    assert _derivative_problems(bad, 3.0, grads, 0.5)
    assert _derivative_problems(dict(good, jvp=0.6), 3.0, grads, 0.5)


@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_a_nonfinite_derivative_is_flagged(value):
    grads = [np.array([1.0])]
    assert _derivative_problems({"grad": [np.array([value])]}, 0.0, grads, 0.0)


def test_infinity_times_a_range_around_zero_may_be_nan():
    # inf times a range [-tiny, tiny] around zero (a rounded result near zero, seed
    # 20261205) is nan where the range's value is zero: no range excludes nan
    inf = Ref(np.array([np.inf, -np.inf], np.float32))
    tiny = float(np.finfo(np.float32).tiny)
    near_zero = Ref(np.zeros(2, np.float32), np.full(2, RANGE, np.uint8),
                    np.full(2, -tiny), np.full(2, tiny))
    p = apply(FUNCTIONS["multiply"], [inf, near_zero], np.float32)
    assert problems(np.array([np.nan, np.nan], np.float32), p) == []
    assert (p.st == FREE).all()


def test_a_sum_of_products_is_exact_as_written():
    # tlaloc keeps every product rounded (no FMA contraction), so (a + a) - a * a at
    # float32's largest a is inf - inf = nan exactly, and a finite sum of products is the
    # separately rounded one (seed 20261211)
    big = np.float32(np.finfo(np.float32).max)
    a = Ref(np.array([big, 0.1], np.float32))
    r = apply(FUNCTIONS["subtract"], [apply(FUNCTIONS["add"], [a, a], np.float32),
                                      apply(FUNCTIONS["multiply"], [a, a], np.float32)],
              np.float32)
    assert r.all_exact()
    assert problems(np.array([np.inf, 0.19], np.float32), r) != []
    with np.errstate(over="ignore", invalid="ignore"):
        written = (a.v + a.v) - a.v * a.v
    assert problems(written, r) == []


def test_a_zero_of_open_sign_is_not_a_point_for_sign_sensitive_functions():
    # minimum(-0, +0) may be either zero (the standard leaves it open), and atan2 and
    # copysign tell them apart: atan2(z, z) is 0 or -pi (seed 20261222: clip(-0.0,
    # max=0.0) was -0.0, as NumPy's own minimum gives for (0.0, -0.0), and atan2 -pi)
    z = apply(FUNCTIONS["minimum"], [Ref(np.array([-0.0, 1.0])), Ref(np.array([0.0, 0.0]))],
              np.float64)
    assert z.st[0] == RANGE
    for sign in (-0.0, 0.0):
        for name, value in (("atan2", np.arctan2(sign, sign)), ("copysign", math.copysign(2.0, sign))):
            ref = apply(FUNCTIONS[name], [Ref(np.array([2.0, 2.0])) if name == "copysign" else z, z],
                        np.float64)
            assert problems(np.array([value, ref.v[1]]), ref) == [], (name, sign)
    exact = Ref(np.array([-0.0]))      # an exact zero's sign still counts
    assert problems(np.array([0.0]), apply(FUNCTIONS["atan2"], [exact, exact], np.float64))


def test_hypot_of_an_infinity_is_inf_whatever_the_other_operand():
    # hypot(+-inf, y) = +inf for every y, NaN and unknown ones included (IEEE 754, C99),
    # so zeros_like(a) * hypot(-inf, b) is exactly nan
    inf = Ref(np.array([-np.inf, np.inf, -np.inf], np.float32))
    y = apply(FUNCTIONS["sin"], [Ref(np.array([np.inf, 1.0, 1e30], np.float32))], np.float32)
    free = Ref(y.v, np.full(3, FREE), y.lo, y.hi)
    for other in (y, free, Ref(np.full(3, np.nan, np.float32))):
        for args in ([inf, other], [other, inf]):
            h = apply(FUNCTIONS["hypot"], args, np.float32)
            assert (h.st == EXACT).all() and (h.v == np.inf).all()
            p = apply(FUNCTIONS["multiply"], [Ref(np.zeros(3, np.float32)), h], np.float32)
            assert (p.st == EXACT).all() and np.isnan(p.v).all()
            assert problems(np.full(3, np.nan, np.float32), p) == []
            assert problems(np.zeros(3, np.float32), p)


# op name (as the generators record it) -> (operand kind, the call as the generator spells it)
_SPELLINGS = {
    "getitem_basic": ("m", lambda x: x[0:2]),
    "reshape": ("m", lambda x: xp.reshape(x, (4,))),
    "permute_dims": ("m", lambda x: xp.permute_dims(x, (1, 0))),
    "T": ("m", lambda x: x.T),
    "matrix_transpose": ("m", lambda x: x.mT),
    "moveaxis": ("m", lambda x: xp.moveaxis(x, 0, 1)),
    "unstack": ("m", lambda x: xp.unstack(x, axis=0)[0]),
    "expand_dims": ("m", lambda x: xp.expand_dims(x, axis=0)),
    "squeeze": ("m", lambda x: xp.squeeze(xp.expand_dims(x, axis=0), axis=0)),
    "flip": ("m", lambda x: xp.flip(x)),
    "real": ("c", lambda x: xp.real(x)),
    "imag": ("c", lambda x: xp.imag(x)),
    "broadcast_arrays": ("m", lambda x: xp.broadcast_arrays(x, x)[0]),
    "broadcast_to": ("m", lambda x: xp.broadcast_to(x, (2, 2))),
    "astype": ("m", lambda x: xp.astype(x, xp.float64)),
    "tile": ("m", lambda x: xp.tile(x, (1, 1))),
    "roll": ("m", lambda x: xp.roll(x, 0)),
    "repeat": ("m", lambda x: xp.repeat(x, 1, axis=0)),
    "getitem_mask": ("m", lambda x: x[xp.asarray(np.ones(2, bool), device=x.device)]),
    "take": ("m", lambda x: xp.take(x, xp.asarray(np.arange(2), device=x.device), axis=0)),
    "meshgrid": ("v", lambda x: xp.meshgrid(x, x)[0]),
    "concat": ("m", lambda x: xp.concat([x])),
    "stack": ("m", lambda x: xp.stack([x])[0]),
    "clip": ("m", lambda x: xp.clip(x)),
    "tril": ("m", lambda x: xp.tril(x, k=3)),
    "conj": ("c", lambda x: xp.conj(x)),
    "expression": ("m", lambda x: x * 1),
}


@pytest.mark.parametrize("op", sorted(_SPELLINGS))
def test_view_ops_lists_every_operation_that_shares_memory(op):
    # a write through a result that reaches its operand (or the reverse) must be known to
    # the program builder, or its references go stale (the seed 20261205 "unstack"
    # mismatches: a write through `x.T`, `real(z)` or `broadcast_arrays(x, y)[0]` reached x)
    from .programs import VIEW_OPS
    kind, f = _SPELLINGS[op]
    dev = xp.device("interpreter")
    base = {"m": np.arange(4.0).reshape(2, 2), "v": np.arange(2.0),
            "c": np.arange(4.0).reshape(2, 2) * (1 + 1j)}[kind]
    shares = False
    for through_result in (True, False):
        x = xp.asarray(base, device=dev)
        y = f(x)
        before = (np.array(x), np.array(y))
        if through_result:
            y[(0,) * y.ndim] = 99
        else:
            x[(0,) * x.ndim] = 99
        other = np.asarray(x) if through_result else np.asarray(y)
        shares |= not np.array_equal(other, before[0] if through_result else before[1])
    assert shares == (op in VIEW_OPS), (op, shares)


def test_a_point_where_partials_exist_but_no_gradient_is_skipped():
    # seed 4242: the middle of sort(x) at x = [0.25, 0.25, 0.25] has partial derivatives
    # (0: one element moved alone leaves the middle where it is) but no gradient (all moved
    # together move it); tlaloc's grad picks one element's slope (1): not comparable
    from hypothesis.errors import UnsatisfiedAssumption
    from .derivatives import DerivativeProgram, expectations
    body = ["v1 = xp.sort(v0, axis=-1)",
            "return xp.sum(v1 * xp.asarray(np.array([0.0, 1.0, 0.0]), device=v0.device))"]
    tie = DerivativeProgram(body, [(3,)], [np.full(3, 0.25)], [np.zeros(3)], False, ["sort"])

    @settings(max_examples=1, database=None)   # expectations rejects as the fuzzer's test does
    @given(st.just(tie))
    def rejected(program):
        with pytest.raises(UnsatisfiedAssumption):
            expectations(program)

    rejected()
    apart = DerivativeProgram(body, [(3,)], [np.array([0.3, 0.1, 0.2])], [np.ones(3)], False,
                              ["sort"])
    value, grads, jvp = expectations(apart)
    np.testing.assert_allclose(grads[0], [0.0, 0.0, 1.0], atol=1e-6)   # the middle is x[2]
    assert abs(value - 0.2) < 1e-12 and abs(jvp - 1.0) < 1e-6


def test_a_generator_error_is_counted_and_the_run_goes_on():
    """A long run must not end at its harness's own bug (a generator drawing a key its
    reference cannot index with): the error is counted under "harness", its traceback kept,
    and the rounds after it run."""
    import collections
    import time
    from hypothesis import strategies as st
    from tests.fuzz.__main__ import fuzz_loop
    from tests.fuzz.runner import Stats

    checked = []

    def check(example, stats, modes):
        if example == 3:
            raise IndexError("index 1 is out of bounds for axis 1 with size 1")
        checked.append(example)
        return []
    found, counts, log = {}, collections.Counter(), []
    fuzz_loop(st.integers(0, 5), check, Stats(), 600, 1, time.monotonic() + 60, False, found,
              counts, log.append)
    sig = ("harness", "-", "IndexError")
    assert counts[sig] >= 1 and "out of bounds" in found[sig]
    assert len(checked) > 200          # rounds after the failing one ran


def test_the_harness_promotes_several_dtypes_as_tlaloc_does_in_any_order():
    """gen_concat reverses its operands: the harness's promotion must not depend on their
    order (a pairwise left-to-right promotion met uint64 beside int8 first and gave up,
    and the reference then cast a complex array to float64; tests/fuzz, seed 20261210)."""
    import itertools
    import tlaloc as xp
    from tests.fuzz.gen_common import promote
    names = ["bool", "int8", "uint64", "int64", "float32", "complex64", "float64"]
    for triple in itertools.product(names, repeat=3):
        try:
            want = str(xp.result_type(*[getattr(xp, d) for d in triple]))
        except TypeError:
            want = None
        assert promote(*triple) == want, triple


def test_a_small_kink_on_the_point_is_seen_and_a_smooth_point_passes():
    # 0.0073 * max(x0, x1) at x0 == x1: moving x0 alone, the slope is 0.0073 on one side and
    # 0 on the other (seed 3533164169's sort tie); the raw differences' tolerance let it by
    def kinked(arrays):
        return 0.0073 * float(np.max(arrays[0]))

    def smooth(arrays):
        return float(np.sum(np.sin(arrays[0]) * np.exp(arrays[0])))

    x = [np.array([0.25, 0.25])]
    e = [np.array([1.0, 0.0])]
    assert not one_sided_agree(kinked, x, e, kinked(x))
    assert one_sided_agree(smooth, x, e, smooth(x))
    assert one_sided_agree(kinked, [np.array([0.25, 0.5])], e, 0.0073 * 0.5)
