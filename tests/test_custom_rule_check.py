"""custom_vjp and custom_jvp share one front end; `check=True` compares the user's rule with
central finite differences in float64 at the first differentiated call."""
import numpy as np
import pytest

import tlaloc as xp

X = np.array([0.3, -1.2, 2.0])


def _softplus_jvp(factor, check, calls):
    @xp.custom_jvp(check=check)
    def softplus(x):
        calls.append(1)
        return xp.log1p(xp.exp(x))

    @softplus.defjvp
    def _(primals, tangents):
        (x,), (t,) = primals, tangents
        return softplus(x), factor * t / (1 + xp.exp(-x))
    return softplus


def _softplus_vjp(factor, check, calls, decorator=False):
    def softplus(x):
        calls.append(1)
        return xp.log1p(xp.exp(x))
    f = xp.custom_vjp(check=check)(softplus) if decorator else xp.custom_vjp(softplus, check=check)

    def fwd(x):
        return f(x), x          # the fwd-calls-f idiom

    def bwd(x, ct):
        return (factor * ct / (1 + xp.exp(-x)),)
    f.defvjp(fwd, bwd)
    return f


def _expected():
    return 1 / (1 + np.exp(-X))


@pytest.mark.parametrize("make", [_softplus_jvp, _softplus_vjp,
                                  lambda f, c, calls: _softplus_vjp(f, c, calls, decorator=True)],
                         ids=["custom_jvp", "custom_vjp", "custom_vjp decorator"])
def test_a_right_rule_passes_the_check(make, tier):
    f = make(1.0, True, [])
    g = xp.grad(lambda v: xp.sum(f(v)))(xp.asarray(X, device=tier))
    np.testing.assert_allclose(np.asarray(g), _expected(), rtol=1e-6)
    # later calls are not checked again, and still right
    g = xp.grad(lambda v: xp.sum(f(v)))(xp.asarray(X, device=tier))
    np.testing.assert_allclose(np.asarray(g), _expected(), rtol=1e-6)


@pytest.mark.parametrize("make", [_softplus_jvp, _softplus_vjp], ids=["custom_jvp", "custom_vjp"])
def test_a_wrong_rule_raises_naming_the_function_and_the_discrepancy(make):
    f = make(1.5, True, [])
    with pytest.raises(ValueError, match=r"softplus.*finite differences.*largest discrepancy"):
        xp.grad(lambda v: xp.sum(f(v)))(xp.asarray(X))


def test_the_check_covers_forward_mode_and_float32_inputs():
    f = _softplus_jvp(2.0, True, [])
    with pytest.raises(ValueError, match="custom_jvp softplus"):
        xp.jvp(f, (xp.asarray(X, dtype=xp.float32),), (xp.ones(3, dtype=xp.float32),))


@pytest.mark.parametrize("make", [_softplus_jvp, _softplus_vjp], ids=["custom_jvp", "custom_vjp"])
def test_without_check_no_differences_are_evaluated(make, monkeypatch):
    from tlaloc.autodiff import api
    def fail(self, args):
        raise AssertionError("finite differences evaluated")
    calls = []
    f = make(1.5, False, calls)          # a wrong rule, unchecked: no error
    with monkeypatch.context() as m:
        m.setattr(api._Custom, "_check_rule", fail)
        xp.grad(lambda v: xp.sum(f(v)))(xp.asarray(X))
    unchecked = len(calls)
    calls.clear()
    f = make(1.0, True, calls)
    xp.grad(lambda v: xp.sum(f(v)))(xp.asarray(X))
    assert len(calls) >= unchecked + 2   # the check evaluated f at x + eps d and x - eps d


def test_check_must_be_a_bool():
    with pytest.raises(TypeError, match="check"):
        xp.custom_jvp(lambda x: x, check="yes")


def test_complex_rules_are_checked_in_the_gradient_convention():
    # L = |z|^2 summed: the gradient is dL/dx + i dL/dy = 2 z
    @xp.custom_vjp(check=True)
    def sq(z):
        return xp.real(z * xp.conj(z))
    sq.defvjp(lambda z: (sq(z), z), lambda z, ct: (2 * xp.astype(ct, z.dtype) * z,))
    z = xp.asarray(np.array([1 + 2j, -0.5 + 0.25j]))
    np.testing.assert_allclose(np.asarray(xp.grad(lambda v: xp.sum(sq(v)))(z)), 2 * np.asarray(z))
