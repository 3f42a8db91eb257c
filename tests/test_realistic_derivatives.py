"""Existing array-API code differentiates under tlaloc.grad, and grad_source reproduces it.

Each function gets its namespace from array_api_compat, as library code does, and uses only
standard calls."""
import numpy as np
import pytest
from array_api_compat import array_namespace

import tlaloc as xp

RNG = np.random.default_rng(42)


def logsumexp(x):
    ns = array_namespace(x)
    m = ns.max(x)
    return m + ns.log(ns.sum(ns.exp(x - m)))


def softmax_cross_entropy(logits, labels_onehot):
    ns = array_namespace(logits)
    shifted = logits - ns.max(logits, axis=-1, keepdims=True)
    log_probs = shifted - ns.log(ns.sum(ns.exp(shifted), axis=-1, keepdims=True))
    return -ns.mean(ns.sum(labels_onehot * log_probs, axis=-1))


def mlp_loss(w1, b1, w2, b2, x, y):
    ns = array_namespace(x)
    h = ns.tanh(x @ w1 + b1)
    out = h @ w2 + b2
    return ns.mean((out - y) ** 2)


def gaussian_loglik(cov_factor, x):
    ns = array_namespace(x)
    n = cov_factor.shape[0]
    cov = cov_factor @ ns.matrix_transpose(cov_factor) + ns.eye(n, dtype=x.dtype, device=x.device)
    chol = ns.linalg.cholesky(cov)
    alpha = ns.linalg.solve(cov, x)
    logdet = 2.0 * ns.sum(ns.log(ns.linalg.diagonal(chol)))
    return -0.5 * (ns.vecdot(x, alpha) + logdet + n * float(np.log(2 * np.pi)))


def piecewise(x):
    ns = array_namespace(x)
    total = ns.sum(x)
    if total > 0:            # Python control flow on a value
        return ns.sum(ns.sin(x) * x)
    return ns.sum(x ** 2)


def numeric_grad(f, args, i, eps=1e-6):
    base = [np.asarray(a) for a in args]
    g = np.zeros_like(base[i])
    for idx in np.ndindex(base[i].shape):
        for sign in (1, -1):
            moved = [b.copy() for b in base]
            moved[i][idx] += sign * eps
            g[idx] += sign * float(f(*[xp.asarray(m) for m in moved])) / (2 * eps)
    return g


CASES = {
    "logsumexp": (logsumexp, lambda: [RNG.normal(size=(6,))], 0),
    "softmax_cross_entropy": (softmax_cross_entropy,
                              lambda: [RNG.normal(size=(4, 3)), np.eye(3)[[0, 2, 1, 1]]], 0),
    "mlp_loss": (mlp_loss, lambda: [RNG.normal(size=(3, 5)) * 0.5, RNG.normal(size=(5,)) * 0.1,
                                    RNG.normal(size=(5, 2)) * 0.5, RNG.normal(size=(2,)) * 0.1,
                                    RNG.normal(size=(8, 3)), RNG.normal(size=(8, 2))], 0),
    "gaussian_loglik": (gaussian_loglik, lambda: [RNG.normal(size=(3, 3)) * 0.5, RNG.normal(size=(3,))], 0),
    "piecewise_positive": (piecewise, lambda: [np.abs(RNG.normal(size=(4,)))], 0),
    "piecewise_negative": (piecewise, lambda: [-np.abs(RNG.normal(size=(4,)))], 0),
}


def _needs(fn):
    if fn is gaussian_loglik and not hasattr(xp, "linalg"):
        pytest.skip("linalg not available")


@pytest.mark.parametrize("name", list(CASES))
def test_grad_matches_finite_differences(tier, name):
    fn, make, argnum = CASES[name]
    _needs(fn)
    args = [xp.asarray(a, device=tier) for a in make()]
    g = xp.grad(fn, argnums=argnum)(*args)
    expected = numeric_grad(fn, args, argnum)
    np.testing.assert_allclose(np.asarray(g), expected, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("name", list(CASES))
def test_grad_source_reproduces_grad(name):
    fn, make, argnum = CASES[name]
    _needs(fn)
    args = [xp.asarray(a) for a in make()]
    src = xp.grad_source(fn, *args, argnums=argnum)
    assert src.startswith("import tlaloc as xp")
    namespace = {}
    exec(compile(src, f"<grad_source {name}>", "exec"), namespace)
    generated = namespace[f"grad_{fn.__name__}"]
    np.testing.assert_allclose(np.asarray(generated(*args)), np.asarray(xp.grad(fn, argnums=argnum)(*args)),
                               rtol=1e-12, atol=1e-14)
    body = [line for line in src.splitlines() if line.startswith("    ") and "=" in line]
    assert all(line.count(" = ") == 1 for line in body)   # one operation a line


def test_grad_source_names_follow_the_forward_program():
    fn, make, _ = CASES["mlp_loss"]
    args = [xp.asarray(a) for a in make()]
    src = xp.grad_source(fn, *args, argnums=(0, 2))
    assert "def grad_mlp_loss(w1, b1, w2, b2, x, y):" in src
    assert "tanh1 = xp.tanh(" in src and "g_tanh1 = " in src
    assert "return (g_w1, g_w2)" in src


def test_forward_backward_stablehlo_is_printable(lazy):
    fn, make, _ = CASES["mlp_loss"]
    args = [xp.asarray(a) for a in make()]
    text = xp.stablehlo(xp.grad(fn)(*args))
    assert "stablehlo.tanh" in text and "stablehlo.dot_general" in text
