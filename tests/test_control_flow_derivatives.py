"""Derivatives through cond, switch, while_loop, fori_loop and scan, on both backends:
against central finite differences, SciPy's solve_ivp (an RK4 integrator) and jax."""
import numpy as np
import pytest

import tlaloc as xp
from helpers import assert_matches, to_numpy


def _fd(f, x, eps=1e-6):
    """Central differences of a scalar function of a float64 NumPy vector."""
    x = np.asarray(x, dtype=np.float64)
    g = np.empty_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = eps
        g.flat[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


# ----------------------------------------------------------------------------- an ODE

def _rhs(y, theta):
    """A damped, driven oscillator: y = (position, velocity), theta = (stiffness, damping)."""
    return xp.stack([y[1], -theta[0] * y[0] - theta[1] * y[1] + 0.1])


def rk4(theta, y0, dt, steps):
    def step(y, _):
        k1 = _rhs(y, theta)
        k2 = _rhs(y + 0.5 * dt * k1, theta)
        k3 = _rhs(y + 0.5 * dt * k2, theta)
        k4 = _rhs(y + dt * k3, theta)
        y = y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return y, y
    return xp.scan(step, y0, None, length=steps)


def _loss(theta, y0, dt=0.05, steps=40):
    y, ys = rk4(theta, y0, dt, steps)
    return xp.sum(ys[:, 0] ** 2) + y[1]


def test_rk4_matches_solve_ivp_and_its_gradient_matches_finite_differences(tier):
    integrate = pytest.importorskip("scipy.integrate")
    theta0, y0 = np.array([4.0, 0.3]), np.array([1.0, 0.0])
    dt, steps = 0.05, 40
    theta = xp.asarray(theta0, device=tier)
    y, ys = rk4(theta, xp.asarray(y0, device=tier), dt, steps)
    times = dt * np.arange(1, steps + 1)

    def scipy_solution(th):
        sol = integrate.solve_ivp(lambda t, v: [v[1], -th[0] * v[0] - th[1] * v[1] + 0.1],
                                  (0, times[-1]), y0, t_eval=times, rtol=1e-11, atol=1e-12,
                                  method="DOP853")
        return sol.y.T

    ref = scipy_solution(theta0)
    np.testing.assert_allclose(to_numpy(ys), ref, atol=1e-5)     # RK4 error at dt = 0.05
    g = to_numpy(xp.grad(_loss)(theta, xp.asarray(y0, device=tier)))
    # the exact gradient of the discrete integrator: central differences of it
    fd = _fd(lambda th: float(_loss(xp.asarray(th, device=tier), xp.asarray(y0, device=tier))),
             theta0)
    np.testing.assert_allclose(g, fd, rtol=1e-7, atol=1e-9)
    # and the continuous problem's sensitivity, from SciPy's solutions
    def scipy_loss(th):
        sol = scipy_solution(th)
        return np.sum(sol[:, 0] ** 2) + sol[-1, 1]
    np.testing.assert_allclose(g, _fd(scipy_loss, theta0, eps=1e-5), rtol=1e-4)


def test_rk4_gradient_under_jit_and_forward_mode_agree(tier):
    theta = xp.asarray([4.0, 0.3], device=tier)
    y0 = xp.asarray([1.0, 0.0], device=tier)
    g = to_numpy(xp.grad(_loss)(theta, y0))
    assert_matches(xp.jit(xp.grad(_loss))(theta, y0), g)
    assert_matches(xp.jacfwd(_loss)(theta, y0), g)
    # with respect to the initial state as well (the scan's init)
    g0 = xp.grad(_loss, argnums=1)(theta, y0)
    fd = _fd(lambda v: float(_loss(theta, xp.asarray(v, device=tier))), [1.0, 0.0])
    np.testing.assert_allclose(to_numpy(g0), fd, rtol=1e-7, atol=1e-9)


# ----------------------------------------------------------------------------- scan

@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("unroll", [1, 3])
def test_scan_gradient_wrt_init_xs_and_closure(tier, reverse, unroll):
    data = np.linspace(-1.0, 1.0, 7)
    w0 = 0.7

    def f(init, xs, w):
        def step(c, x):
            c = xp.tanh(c * w + x)
            return c, c * x
        c, ys = xp.scan(step, init, xs, reverse=reverse, unroll=unroll)
        return c * 2 + xp.sum(ys ** 2)

    args = (xp.asarray(0.2, device=tier), xp.asarray(data, device=tier),
            xp.asarray(w0, device=tier))
    grads = xp.grad(f, argnums=(0, 1, 2))(*args)
    flat = np.concatenate([[0.2], data, [w0]])
    fd = _fd(lambda v: float(f(xp.asarray(v[0], device=tier), xp.asarray(v[1:-1], device=tier),
                               xp.asarray(v[-1], device=tier))), flat)
    got = np.concatenate([[float(grads[0])], to_numpy(grads[1]), [float(grads[2])]])
    np.testing.assert_allclose(got, fd, rtol=1e-7, atol=1e-9)
    # forward mode gives the same directional derivative
    _, t = xp.jvp(f, args, tuple(xp.ones_like(a) for a in args))
    np.testing.assert_allclose(float(t), fd.sum(), rtol=1e-7)


def test_scan_jacobians_and_second_order(tier):
    def f(x):
        c, ys = xp.scan(lambda c, a: (c * a + xp.sin(c), c + a * a), xp.asarray(0.5, device=tier), x)
        return xp.concat([ys, xp.reshape(c, (1,))])

    x = xp.asarray([0.3, -0.2, 0.9], device=tier)
    assert_matches(xp.jacrev(f)(x), to_numpy(xp.jacfwd(f)(x)))
    h = xp.hessian(lambda x: xp.sum(f(x) ** 2))(x)
    g = lambda v: to_numpy(xp.grad(lambda x: xp.sum(f(x) ** 2))(xp.asarray(v, device=tier)))
    fd = np.stack([(g(np.array([0.3, -0.2, 0.9]) + e) - g(np.array([0.3, -0.2, 0.9]) - e)) / 2e-6
                   for e in np.eye(3) * 1e-6])
    np.testing.assert_allclose(to_numpy(h), fd, rtol=1e-6, atol=1e-7)


def test_scan_with_integer_carry_and_float32(tier):
    def f(x):
        (n, c), ys = xp.scan(lambda c, a: ((c[0] + 1, c[1] * a), c[1] * xp.astype(c[0], xp.float32)),
                             (xp.asarray(0, device=tier), xp.asarray(1.0, dtype=xp.float32, device=tier)), x)
        return xp.sum(ys) + c

    data = np.array([1.5, 2.0, -0.5], dtype=np.float32)
    g = xp.grad(f)(xp.asarray(data, device=tier))
    assert g.dtype == xp.float32
    fd = _fd(lambda v: float(f(xp.asarray(v.astype(np.float32), device=tier))), data, eps=1e-2)
    np.testing.assert_allclose(to_numpy(g), fd, rtol=2e-3)


def test_checkpoint_inside_a_scan_body(tier):
    x = xp.asarray([0.5, 1.0, 1.5], device=tier)

    def loss(theta, checkpointed):
        inner = lambda c, xi, t: xp.sin(c * t) + xi * t
        if checkpointed:
            inner = xp.checkpoint(inner)
        c, ys = xp.scan(lambda c, xi: (inner(c, xi, theta), c * xi), xp.asarray(0.3, device=tier), x)
        return c + xp.sum(ys)

    th = xp.asarray(1.3, device=tier)
    plain = float(xp.grad(lambda t: loss(t, False))(th))
    assert float(xp.grad(lambda t: loss(t, True))(th)) == pytest.approx(plain, rel=1e-12)
    assert plain == pytest.approx(_fd(lambda v: float(loss(xp.asarray(v[0], device=tier), False)),
                                      [1.3])[0], rel=1e-7)


def test_one_forward_and_one_reverse_scan_under_grad():
    x = xp.asarray([0.5, 1.0, 1.5])

    def loss(theta):
        c, ys = xp.scan(lambda c, xi: (xp.sin(c * theta) + xi, c * xi), xp.asarray(0.3), x)
        return c + xp.sum(ys)

    value, g = xp.value_and_grad(loss)(xp.asarray(1.3))
    assert xp.stablehlo(value, g).count('"stablehlo.while"') == 2


def test_scan_gradient_matches_jax():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    data = np.random.default_rng(1).standard_normal((6, 3)).astype(np.float32)
    w = np.random.default_rng(2).standard_normal((3, 3)).astype(np.float32)

    def make(np_like, scan):
        def loss(w, xs):
            def step(h, x):
                h = np_like.tanh(h @ w + x)
                return h, np_like.sum(h * h)
            h, ys = scan(step, np_like.zeros(3, dtype=np.float32), xs)
            return np_like.sum(ys) + np_like.sum(h)
        return loss

    ours = xp.grad(make(xp, xp.scan), argnums=(0, 1))(xp.asarray(w), xp.asarray(data))
    theirs = jax.grad(make(jnp, jax.lax.scan), argnums=(0, 1))(w, data)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(to_numpy(a), np.asarray(b), rtol=2e-5, atol=2e-6)


# ----------------------------------------------------------------------------- cond / switch

@pytest.mark.parametrize("x0", [-0.7, 0.4])
def test_cond_derivatives_both_modes(tier, x0):
    w = xp.asarray(1.5, device=tier)

    def f(x):
        out = xp.cond(x > 0, lambda a: {"v": xp.sin(a) * w}, lambda a: {"v": a ** 3 - w}, x)
        return out["v"]

    x = xp.asarray(x0, device=tier)
    want = _fd(lambda v: float(f(xp.asarray(v[0], device=tier))), [x0])[0]
    assert float(xp.grad(f)(x)) == pytest.approx(want, rel=1e-7)
    assert float(xp.jvp(f, (x,), (xp.asarray(1.0, device=tier),))[1]) == pytest.approx(want, rel=1e-7)
    # the closed-over w gets its derivative through the branch that ran
    gw = xp.grad(lambda w_: xp.cond(x > 0, lambda a: xp.sin(a) * w_, lambda a: a ** 3 - w_, x))(w)
    assert float(gw) == pytest.approx(np.sin(x0) if x0 > 0 else -1.0)


@pytest.mark.parametrize("index", [0, 1, 2])
def test_switch_derivatives(tier, index):
    branches = [lambda a, b: a * b, lambda a, b: xp.exp(a) + b, lambda a, b: a / b]
    f = lambda a, b: xp.switch(index, branches, a, b)
    a, b = xp.asarray(0.5, device=tier), xp.asarray(2.0, device=tier)
    ga, gb = xp.grad(f, argnums=(0, 1))(a, b)
    fd = _fd(lambda v: float(f(xp.asarray(v[0], device=tier), xp.asarray(v[1], device=tier))),
             [0.5, 2.0])
    np.testing.assert_allclose([float(ga), float(gb)], fd, rtol=1e-7)


# ----------------------------------------------------------------------------- while / fori

def test_while_loop_forward_mode_and_reverse_mode_error(tier):
    def f(s):
        i, v = xp.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * s + 1.0),
                             (xp.asarray(0, device=tier), s))
        return v

    s = xp.asarray(1.1, device=tier)
    want = _fd(lambda v: float(f(xp.asarray(v[0], device=tier))), [1.1])[0]
    _, t = xp.jvp(f, (s,), (xp.asarray(1.0, device=tier),))
    assert float(t) == pytest.approx(want, rel=1e-7)
    assert float(xp.jacfwd(f)(s)) == pytest.approx(want, rel=1e-7)
    with pytest.raises(ValueError, match="while_loop.*tlaloc.scan.*fori_loop"):
        xp.grad(f)(s)
    # fori_loop with array bounds is a while loop: the same error
    with pytest.raises(ValueError, match="fori_loop"):
        xp.grad(lambda s: xp.fori_loop(xp.asarray(0, device=tier), xp.asarray(3, device=tier),
                                       lambda i, v: v * s, s))(s)


def test_fori_loop_with_static_bounds_in_reverse_mode(tier):
    def f(s):
        return xp.fori_loop(0, 6, lambda i, v: v * s + xp.astype(i, xp.float64) * 0.1, s)

    s = xp.asarray(1.05, device=tier)
    want = _fd(lambda v: float(f(xp.asarray(v[0], device=tier))), [1.05])[0]
    assert float(xp.grad(f)(s)) == pytest.approx(want, rel=1e-7)
    assert float(xp.jit(xp.grad(f))(s)) == pytest.approx(want, rel=1e-7)
    # an empty trip count: the identity
    assert float(xp.grad(lambda s: xp.fori_loop(3, 3, lambda i, v: v * s, s))(s)) == 1.0


# ----------------------------------------------------------------------------- nesting

def _nested_cases(dev):
    def scan_of_cond(th):
        def step(c, x):
            c = xp.cond(x > 0, lambda a: xp.sin(a * th), lambda a: a * th * th, c + x)
            return c, c
        c, ys = xp.scan(step, xp.asarray(0.3, device=dev),
                        xp.asarray([0.5, -1.0, 2.0, -0.2], device=dev))
        return c + xp.sum(ys)

    def scan_of_scan(th):
        def outer(c, x):
            inner, _ = xp.scan(lambda d, y: (d * th + y, None), c, x)
            return inner, inner * inner
        c, ys = xp.scan(outer, xp.asarray(0.1, device=dev),
                        xp.asarray(np.arange(6.0).reshape(3, 2) / 5, device=dev))
        return xp.sum(ys) + c

    def fori_of_switch(th):
        return xp.fori_loop(0, 5, lambda i, v: xp.switch(
            i % 3, [lambda a: a * th, lambda a: xp.sin(a), lambda a: a + th], v), th)

    return {"scan_of_cond": scan_of_cond, "scan_of_scan": scan_of_scan,
            "fori_of_switch": fori_of_switch}


@pytest.mark.parametrize("case", ["scan_of_cond", "scan_of_scan", "fori_of_switch"])
def test_derivatives_through_nested_constructs(tier, case):
    """A closed-over parameter read by an inner construct gets its derivative through the
    outer one (first and second order, both modes)."""
    f = _nested_cases(tier)[case]
    th = xp.asarray(0.9, device=tier)
    fd = _fd(lambda v: float(f(xp.asarray(v[0], device=tier))), [0.9])[0]
    assert float(xp.grad(f)(th)) == pytest.approx(fd, rel=1e-7)
    assert float(xp.jacfwd(f)(th)) == pytest.approx(fd, rel=1e-7)
    g = lambda v: float(xp.grad(f)(xp.asarray(v, device=tier)))
    assert float(xp.hessian(f)(th)) == pytest.approx((g(0.9 + 1e-5) - g(0.9 - 1e-5)) / 2e-5,
                                                     rel=1e-5, abs=1e-7)


# ----------------------------------------------------------------------------- random bodies

from hypothesis import given, strategies as st  # noqa: E402

# bounded operations (values stay moderate, where central differences are meaningful)
_OPS = {"sin": (xp.sin, np.sin), "tanh": (xp.tanh, np.tanh),
        "half": (lambda a: a * 0.5, lambda a: a * 0.5),
        "rational": (lambda a: a / (1 + a * a), lambda a: a / (1 + a * a))}


@given(length=st.integers(0, 4), ops=st.lists(st.sampled_from(sorted(_OPS)), min_size=1, max_size=3),
       reverse=st.booleans(), unroll=st.integers(1, 3), interpreter=st.booleans())
def test_random_scan_bodies_match_a_python_loop_and_both_modes_agree(length, ops, reverse,
                                                                    unroll, interpreter):
    dev = xp.device("interpreter") if interpreter else xp.device("cpu")
    xp.config.update(execution="auto" if interpreter else "compiled")
    rng = np.random.default_rng(length * 31 + len(ops))
    data = rng.standard_normal((length, 3))
    w0 = rng.standard_normal(3)

    def body(ns_ops, c, x, w):
        for name in ops:
            c = ns_ops[name](c * w + x)
        return c, c * x

    def ours(w, xs):
        c, ys = xp.scan(lambda c, x: body({k: v[0] for k, v in _OPS.items()}, c, x, w),
                        xp.zeros(3, device=dev), xs, reverse=reverse, unroll=unroll)
        return xp.sum(c) + xp.sum(ys * ys)

    c, ys = np.zeros(3), np.zeros((length, 3))
    for t in (range(length - 1, -1, -1) if reverse else range(length)):
        c, ys[t] = body({k: v[1] for k, v in _OPS.items()}, c, data[t], w0)
    want = np.sum(c) + np.sum(ys * ys)
    w, xs = xp.asarray(w0, device=dev), xp.asarray(data, device=dev)
    assert float(ours(w, xs)) == pytest.approx(want, rel=1e-12, abs=1e-12)
    g_rev = to_numpy(xp.grad(ours)(w, xs))
    g_fwd = to_numpy(xp.jacfwd(ours)(w, xs))
    np.testing.assert_allclose(g_rev, g_fwd, rtol=1e-10, atol=1e-12)
    fd = _fd(lambda v: float(ours(xp.asarray(v, device=dev), xs)), w0)
    # central differences lose ~1e-16 * |f| / eps absolutely: scale atol by the largest entry
    np.testing.assert_allclose(g_rev, fd, rtol=1e-6, atol=1e-7 * max(1.0, np.abs(fd).max()))


def test_one_derived_loop_per_loop_whatever_the_carry_count():
    """The derivative and batching rules run once per op, not once per result node: the
    forward mode of a three-carry while_loop is one more loop, vmap of a two-carry scan one
    loop."""
    def w(s):
        out = xp.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + s, c[1] * s, c[2] + c[1]),
                            (s, s, s))
        return xp.sum(xp.stack(out))

    primal, tangent = xp.jvp(w, (xp.asarray(1.1),), (xp.asarray(1.0),))
    assert xp.stablehlo(primal, tangent).count('"stablehlo.while"') == 2
    batched = xp.vmap(lambda v: xp.scan(lambda c, a: ((c[0] + a, c[1] * a), c[0]),
                                        (0.0, 1.0), v))(xp.ones((3, 4)))
    assert xp.stablehlo(*xp.tree.leaves(batched)).count('"stablehlo.while"') == 1
