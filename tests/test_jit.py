"""tlaloc.jit: capture, signatures, recompilation causes, donation, composition with grad."""
import numpy as np
import pytest

import tlaloc as xp


def test_replays_without_calling_python(tier):
    calls = []

    @xp.jit
    def f(x, y):
        calls.append(1)
        return xp.sin(x) * y + 1.0

    a = xp.asarray([1.0, 2.0], device=tier)
    b = xp.asarray(3.0, device=tier)
    for k in range(4):
        out = f(a * (k + 1), b)
        np.testing.assert_allclose(np.asarray(out), np.sin(np.array([1.0, 2.0]) * (k + 1)) * 3 + 1)
    assert len(calls) == 1


def test_recompile_causes_are_reported():
    @xp.jit
    def f(x, scale):
        return x * scale

    before = len(xp.compile_log())
    f(xp.ones(3), 2.0)
    f(xp.ones(3), 2.0)
    f(xp.ones(4), 2.0)
    f(xp.ones(4, dtype=xp.float32), 2.0)
    log = xp.compile_log()[before:]
    causes = [r["cause"] for r in log]
    assert causes[0] == "first call"
    assert "argument `x` shape (3,) -> (4,)" in causes
    assert "argument `x` dtype float64 -> float32" in causes
    assert all(r["function"].endswith("f") and r["seconds"] >= 0 for r in log)


def test_explain_log_env(caplog):
    xp.config.update(explain_compiles=True)

    @xp.jit
    def g(x):
        return x + 1

    with caplog.at_level("WARNING", logger="tlaloc.compile"):
        g(xp.ones(7))
    assert any("first call" in r.message for r in caplog.records)


def test_static_arguments():
    @xp.jit
    def power_sum(x, n):
        return xp.sum(x ** n)

    f = xp.jit(lambda x, axis: xp.sum(x, axis=axis), static_argnames=("axis",))
    x = xp.reshape(xp.arange(6.0), (2, 3))
    np.testing.assert_allclose(np.asarray(f(x, axis=0)), [3, 5, 7])
    np.testing.assert_allclose(np.asarray(f(x, axis=1)), [3, 12])
    h = xp.jit(lambda x, shape: xp.reshape(x, shape), static_argnums=1)
    assert h(x, (3, 2)).shape == (3, 2)
    assert h(x, (6,)).shape == (6,)


def test_control_flow_on_traced_value_names_the_line():
    @xp.jit
    def bad(x):
        if xp.sum(x) > 0:
            return x
        return -x

    with pytest.raises(xp.ConcretizationError, match=r"test_jit.py:\d+.*if xp.sum\(x\) > 0.*xp.where"):
        bad(xp.ones(2))


def test_jit_of_grad_and_grad_of_jit(tier):
    loss = lambda w, x: xp.sum(xp.tanh(x @ w) ** 2)
    w = xp.asarray(np.linspace(-1, 1, 6).reshape(3, 2), device=tier)
    x = xp.asarray(np.linspace(0, 1, 12).reshape(4, 3), device=tier)
    expected = np.asarray(xp.grad(loss)(w, x))
    np.testing.assert_allclose(np.asarray(xp.jit(xp.grad(loss))(w, x)), expected, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(xp.grad(xp.jit(loss))(w, x)), expected, rtol=1e-12)


def test_cached_signature_still_inlines_under_grad_and_other_traces():
    """Calls with array leaves only take a shorter cache lookup once traced; grad and an
    enclosing jit must still see through them."""
    calls = []

    @xp.jit
    def loss(w, x):
        calls.append(1)
        return xp.sum(xp.tanh(x * w) ** 2)

    w, x = xp.asarray([0.5, -1.0]), xp.asarray([2.0, 3.0])
    value = float(loss(w, x))
    assert float(loss(w, x)) == value and len(calls) == 1
    expected = 2 * np.tanh([1.0, -3.0]) * (1 - np.tanh([1.0, -3.0]) ** 2) * [2.0, 3.0]
    np.testing.assert_allclose(np.asarray(xp.grad(loss)(w, x)), expected, rtol=1e-12)
    outer = xp.jit(lambda w, x: loss(w, x) * 2.0)
    np.testing.assert_allclose(float(outer(w, x)), 2 * value, rtol=1e-12)
    shifted = xp.asarray([1.5, 0.0])
    np.testing.assert_allclose(float(loss(shifted, x)), np.sum(np.tanh([3.0, 0.0]) ** 2))
    assert len(calls) == 3     # the first call, and the inlined calls under grad and jit


def test_captured_pending_arrays_are_computed_once():
    """A pending array read from outside the function becomes a program input, computed at
    trace time; the program returns the results only, and constants made inside stay in it."""
    weights = xp.asarray(np.ones((3, 3))) * 0.5       # pending when the function is traced

    def f(x):
        return x @ weights + xp.ones(3) * 2.0

    jitted = xp.jit(f)
    x = xp.asarray(np.arange(6.0).reshape(2, 3))
    np.testing.assert_allclose(np.asarray(jitted(x)), np.arange(6.0).reshape(2, 3) @ np.full((3, 3), 0.5) + 2.0)
    assert weights._node.value is not None
    traced = next(iter(jitted._cache.values()))
    program = traced.plan.program()
    assert len(program.outputs) == 1
    assert [a.shape for a in program.in_avals if a.shape == (3,)] == []   # ones(3) * 2 is fused
    np.testing.assert_allclose(np.asarray(jitted(x + 1.0)), (np.arange(6.0).reshape(2, 3) + 1) @ np.full((3, 3), 0.5) + 2.0)


def test_nested_structures_and_passthrough():
    @xp.jit
    def f(params, x):
        return {"y": params["w"] * x + params["b"], "x": x, "n": 3}

    out = f({"w": xp.asarray(2.0), "b": xp.asarray(1.0)}, xp.asarray([1.0, 2.0]))
    np.testing.assert_allclose(np.asarray(out["y"]), [3.0, 5.0])
    np.testing.assert_allclose(np.asarray(out["x"]), [1.0, 2.0])
    assert out["n"] == 3


def test_donation_updates_in_place_and_blocks_reuse(lazy):
    step = xp.jit(lambda w, g: w - 0.5 * g, donate_argnums=0)
    w = xp.ones((4,))
    g = xp.full((4,), 2.0)
    w2 = step(w, g)
    np.testing.assert_allclose(np.asarray(w2), np.zeros(4))
    with pytest.raises(xp.DonatedArrayError):
        np.asarray(w)
    with pytest.raises(xp.DonatedArrayError):
        step(w, g)
    with pytest.raises(ValueError, match="donated"):
        step(g, g)
    text = xp.stablehlo(xp.ones(2) + 1)   # ordinary programs carry no donation
    assert "buffer_donor" not in text


def test_donation_is_in_the_module():
    from tlaloc._graph import _Plan
    from tlaloc.lowering import lower_program
    from tlaloc._jit import _FixedPlan
    x = xp.ones(3) * 2
    plan = _FixedPlan(_Plan([x._node], x.device), (0,))
    assert "jax.buffer_donor = true" in lower_program(plan.program())


def test_data_dependent_shapes_cannot_be_captured():
    if not hasattr(xp, "nonzero"):
        pytest.skip("nonzero not available")
    f = xp.jit(lambda x: xp.nonzero(x)[0])
    with pytest.raises(xp.ConcretizationError, match="output shape depends on values"):
        f(xp.asarray([0.0, 1.0]))


def test_named_tuples_are_trees_for_jit_and_grad():
    """A named tuple of arrays (a parameter record) goes through jit and grad as a tree and
    comes back as the same named tuple type."""
    from typing import NamedTuple

    class Params(NamedTuple):
        w: xp.Array
        b: xp.Array

    p = Params(xp.asarray(np.array([1.0, 2.0])), xp.asarray(np.array(0.5)))
    x = xp.asarray(np.array([3.0, -1.0]))

    def loss(p, x):
        return xp.sum((p.w * x + p.b) ** 2)

    g = xp.grad(loss)(p, x)
    assert type(g) is Params
    np.testing.assert_allclose(np.asarray(g.w), 2 * (np.array([1.0, 2.0]) * [3.0, -1.0] + 0.5) * [3.0, -1.0])
    step = xp.jit(lambda p, x: Params(*(a - 0.1 * d for a, d in zip(p, xp.grad(loss)(p, x)))))
    out = step(p, x)
    assert type(out) is Params
    np.testing.assert_allclose(np.asarray(out.b), 0.5 - 0.1 * float(g.b))


def test_results_that_depend_on_no_argument(tier):
    """A result computed from captured values only is a constant of the trace (it raised
    IndexError when it was the only pending result)."""
    c = xp.asarray(3.0, device=tier)
    f = xp.jit(lambda: xp.sin(c))
    np.testing.assert_allclose(np.asarray(f()), np.sin(3.0))
    np.testing.assert_allclose(np.asarray(f()), np.sin(3.0))
    g = xp.jit(lambda x: (x * 2, xp.cos(c)))
    a, b = g(xp.asarray(2.0, device=tier))
    np.testing.assert_allclose([float(a), float(b)], [4.0, np.cos(3.0)])
