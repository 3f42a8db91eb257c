"""float32 sin/cos on XLA:CPU are emitted as range reduction plus polynomials
(tlaloc/lowering/fast_trig.py), with XLA's own ops for arguments beyond its range. Both
branches are compared with NumPy's float64 results, rounded to float32."""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import tlaloc as xp
from tlaloc.lowering import fast_trig

from helpers import assert_matches

FUNCS = ["sin", "cos"]


@pytest.fixture(autouse=True)
def compiled():
    previous = xp.config.update(execution="compiled")
    yield
    xp.config.update(**previous)


def reference(name, x):
    return getattr(np, name)(x.astype(np.float64)).astype(np.float32)


def check(name, x):
    got = getattr(xp, name)(xp.asarray(x))
    assert_matches(got, reference(name, x))


@pytest.mark.parametrize("name", FUNCS)
@pytest.mark.parametrize("scale", [1e-3, 1.0, 10.0, 1000.0, fast_trig.LIMIT])
def test_within_range_matches_numpy(name, scale):
    x = np.random.default_rng(7).uniform(-scale, scale, 20_000).astype(np.float32)
    check(name, x)


@pytest.mark.parametrize("name", FUNCS)
def test_near_multiples_of_half_pi(name):
    """Where the result is tiny, the reduced argument's error is what shows."""
    k = np.arange(-3800, 3800, dtype=np.float64)
    centre = (k * np.pi / 2).astype(np.float32)
    x = np.concatenate([centre, np.nextafter(centre, np.inf), np.nextafter(centre, -np.inf)])
    check(name, x)


@pytest.mark.parametrize("name", FUNCS)
@pytest.mark.parametrize("extra", [fast_trig.LIMIT * 1.01, 1e30, np.inf, -np.inf, np.nan])
def test_one_argument_out_of_range_takes_the_general_op(name, extra):
    x = np.random.default_rng(3).uniform(-10, 10, 1000).astype(np.float32)
    x[17] = extra
    check(name, x)


@pytest.mark.parametrize("name", FUNCS)
def test_nan_beside_huge_arguments_takes_the_general_op(name):
    """A NaN with huge arguments: the range check is an and of comparisons. As a float max
    reduction, XLA:CPU's vectorised loop dropped the NaN together with values beside it, the
    check passed and the polynomial gave inf for cos(-4.6e21)."""
    x = np.full(4096, 1.0, np.float32)
    x[::7] = -4.6051702e21
    x[3::11] = np.nan
    x[5::13] = np.inf
    check(name, x)


@pytest.mark.parametrize("name", FUNCS)
def test_signed_zero_and_shapes(name):
    check(name, np.array([-0.0, 0.0], np.float32))
    check(name, np.zeros((0, 3), np.float32))
    check(name, np.float32(-0.0).reshape(()))
    check(name, np.linspace(-4, 4, 24, dtype=np.float32).reshape(2, 3, 4))


def test_emitted_only_for_float32():
    x32 = xp.ones((4,), dtype=xp.float32)
    x64 = xp.ones((4,), dtype=xp.float64)
    assert "stablehlo.if" in xp.stablehlo(xp.sin(x32))
    assert "stablehlo.if" not in xp.stablehlo(xp.sin(x64))


@pytest.mark.parametrize("name", FUNCS)
@given(x=hnp.arrays(np.float32, st.integers(1, 64),
                    elements=st.floats(-8000, 8000, width=32, allow_subnormal=False)))
def test_sweep(name, x):
    check(name, x)


@pytest.mark.parametrize("name", FUNCS)
def test_derivative_uses_the_same_functions(name):
    x = np.linspace(-3, 3, 11, dtype=np.float32)
    d = xp.grad(lambda v: xp.sum(getattr(xp, name)(v)))(xp.asarray(x))
    expected = np.cos(x) if name == "sin" else -np.sin(x)
    assert_matches(d, expected.astype(np.float32))


@pytest.mark.parametrize("name", FUNCS)
def test_xla_keeps_the_branch(name):
    """XLA rewrites a conditional of elementwise branches as a select of both, which
    computes its own sine for every element as well as the polynomial: the guard must
    survive XLA's passes for the polynomial to save anything."""
    x = xp.asarray(np.linspace(-3, 3, 1000, dtype=np.float32))    # an input, not folded
    text = xp.stablehlo(getattr(xp, name)(x))
    runtime = xp.device("cpu").backend.runtime
    optimized = "\n".join(m.to_string() for m in runtime.compile(text).hlo_modules())
    assert " conditional(" in optimized
