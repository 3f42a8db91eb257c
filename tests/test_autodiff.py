"""Derivatives against central finite differences in float64, on both tiers."""
import numpy as np
import pytest

import tlaloc as xp

RNG = np.random.default_rng(0)


def numeric_grad(f, x, eps=1e-6):
    """Central differences of a scalar NumPy function (real or complex input; for complex
    input the convention is dL/dRe + i dL/dIm)."""
    x = np.array(x, dtype=x.dtype)
    g = np.zeros_like(x)
    flat, gflat = x.reshape(-1), g.reshape(-1)
    for i in range(flat.size):
        orig = flat[i]
        flat[i] = orig + eps
        up = f(x)
        flat[i] = orig - eps
        down = f(x)
        flat[i] = orig
        gflat[i] = (up - down) / (2 * eps)
        if x.dtype.kind == "c":
            flat[i] = orig + 1j * eps
            up = f(x)
            flat[i] = orig - 1j * eps
            down = f(x)
            flat[i] = orig
            gflat[i] += 1j * (up - down) / (2 * eps)
    return g


def check_grad(f, *args, argnums=0, rtol=1e-6, atol=1e-8, device=None):
    """grad(f) matches finite differences of f evaluated through tlaloc itself."""
    arrays = [xp.asarray(a, device=device) for a in args]
    g = xp.grad(f, argnums=argnums)(*arrays)
    nums = (argnums,) if isinstance(argnums, int) else argnums
    gs = (g,) if isinstance(argnums, int) else g
    for i, gi in zip(nums, gs):
        def f_np(v, i=i):
            full = list(arrays)
            full[i] = xp.asarray(v, device=device)
            return float(f(*full))
        expected = numeric_grad(f_np, np.asarray(arrays[i]))
        np.testing.assert_allclose(np.asarray(gi), expected, rtol=rtol, atol=atol)


UNARY = [
    ("exp", lambda x: xp.exp(x), (-2, 2)),
    ("expm1", xp.expm1, (-2, 2)),
    ("log", xp.log, (0.2, 3)),
    ("log1p", xp.log1p, (-0.5, 3)),
    ("log2", xp.log2, (0.2, 3)),
    ("log10", xp.log10, (0.2, 3)),
    ("sqrt", xp.sqrt, (0.2, 3)),
    ("sin", xp.sin, (-3, 3)),
    ("cos", xp.cos, (-3, 3)),
    ("tan", xp.tan, (-1.2, 1.2)),
    ("tanh", xp.tanh, (-3, 3)),
    ("asin", xp.asin, (-0.9, 0.9)),
    ("acos", xp.acos, (-0.9, 0.9)),
    ("atan", xp.atan, (-3, 3)),
    ("sinh", xp.sinh, (-2, 2)),
    ("cosh", xp.cosh, (-2, 2)),
    ("asinh", xp.asinh, (-3, 3)),
    ("acosh", xp.acosh, (1.2, 4)),
    ("atanh", xp.atanh, (-0.9, 0.9)),
    ("abs", xp.abs, (0.1, 2)),
    ("negative", xp.negative, (-2, 2)),
    ("square", xp.square, (-2, 2)),
    ("reciprocal", xp.reciprocal, (0.5, 2)),
    ("positive", xp.positive, (-2, 2)),
]


@pytest.mark.parametrize("name,fn,domain", UNARY, ids=[u[0] for u in UNARY])
def test_unary_grad(tier, name, fn, domain):
    x = RNG.uniform(*domain, size=(5,))
    check_grad(lambda a: xp.sum(fn(a) * xp.asarray([1.0, 2.0, -1.0, 0.5, 3.0], device=tier)), x, device=tier)


BINARY = [
    ("add", xp.add), ("subtract", xp.subtract), ("multiply", xp.multiply), ("divide", xp.divide),
    ("pow", xp.pow), ("atan2", xp.atan2), ("hypot", xp.hypot), ("logaddexp", xp.logaddexp),
    ("maximum", xp.maximum), ("minimum", xp.minimum), ("remainder", xp.remainder),
    ("copysign", xp.copysign),
]


@pytest.mark.parametrize("name,fn", BINARY, ids=[b[0] for b in BINARY])
def test_binary_grad(tier, name, fn):
    a = RNG.uniform(0.5, 2.0, size=(2, 3))
    b = RNG.uniform(0.6, 2.1, size=(3,)) * np.array([1, -1, 1])  # broadcast and mixed signs
    if name == "pow":
        b = np.abs(b)
    check_grad(lambda x, y: xp.sum(fn(x, y)), a, b, argnums=(0, 1), device=tier)


REDUCTIONS = [
    ("sum", lambda x: xp.sum(x, axis=0)), ("prod", lambda x: xp.prod(x, axis=1)),
    ("max", lambda x: xp.max(x, axis=1)), ("min", lambda x: xp.min(x)),
    ("mean", lambda x: xp.mean(x, axis=(0, 1))), ("var", lambda x: xp.var(x, axis=0, correction=1)),
    ("std", lambda x: xp.std(x)),
]


@pytest.mark.parametrize("name,fn", REDUCTIONS, ids=[r[0] for r in REDUCTIONS])
def test_reduction_grad(tier, name, fn):
    x = RNG.uniform(0.5, 2.0, size=(3, 4))
    check_grad(lambda a: xp.sum(fn(a) ** 2), x, device=tier)


SHAPE_OPS = [
    ("reshape", lambda x: xp.reshape(x, (4, 3))),
    ("permute_dims", lambda x: xp.permute_dims(x, (1, 0))),
    ("broadcast_to", lambda x: xp.broadcast_to(x[:, :1], (3, 5))),
    ("concat", lambda x: xp.concat([x, 2 * x], axis=1)),
    ("stack", lambda x: xp.stack([x, x * x], axis=0)),
    ("flip", lambda x: xp.flip(x, axis=1)),
    ("slice", lambda x: x[1:, ::-2]),
    ("index", lambda x: x[2, 1:3]),
    ("expand_squeeze", lambda x: xp.squeeze(xp.expand_dims(x, axis=0), axis=0)),
    ("matmul", lambda x: x @ xp.matrix_transpose(x)),
    ("matmul_vec", lambda x: xp.matmul(x, x[0])),
    ("tensordot", lambda x: xp.tensordot(x, x, axes=([0], [0]))),
    ("vecdot", lambda x: xp.vecdot(x, x * 3)),
    ("where", lambda x: xp.where(x > 1.0, x * x, -x) if hasattr(xp, "where") else x),
    ("clip", lambda x: xp.clip(x, 0.8, 1.6)),
    ("astype", lambda x: xp.real(xp.astype(x, xp.complex128) * (1 + 2j))),
    ("tril", lambda x: xp.tril(x[:, :3])),
    ("gather", lambda x: x[xp.asarray([2, 0, 2], device=x.device), 1:]),
    ("take", lambda x: xp.take(x, xp.asarray([3, 0, 3], device=x.device), axis=1)),
    ("take_along_axis", lambda x: xp.take_along_axis(
        x, xp.asarray([[0, 3], [1, 1], [2, 0]], device=x.device), axis=1)),
    ("mask", lambda x: x[x > 1.0]),
    ("sort", lambda x: xp.sort(x, axis=1) * xp.asarray([1.0, 2.0, 3.0, 4.0], device=x.device)),
    ("sort_descending", lambda x: xp.sort(x, axis=0, descending=True) * xp.asarray([[1.0], [2.0], [3.0]], device=x.device)),
    ("cumulative_sum", lambda x: xp.cumulative_sum(x, axis=1)),
    ("cumulative_prod", lambda x: xp.cumulative_prod(x, axis=0, include_initial=True)),
    ("setitem", lambda x: _setitem_example(x)),
]


def _setitem_example(x):
    y = x * 1.0
    y[0, 1:3] = x[1, :2] ** 2
    y[xp.asarray([2], device=x.device), 0] = 5.0
    return y


@pytest.mark.parametrize("name,fn", SHAPE_OPS, ids=[s[0] for s in SHAPE_OPS])
def test_structural_grad(tier, name, fn):
    x = RNG.uniform(0.5, 2.0, size=(3, 4))
    check_grad(lambda a: xp.sum(xp.sin(fn(a))), x, device=tier, atol=1e-6)


def test_batched_matmul_grad(tier):
    a = RNG.normal(size=(2, 3, 4))
    b = RNG.normal(size=(4, 2))
    check_grad(lambda x, y: xp.sum(xp.tanh(x @ y)), a, b, argnums=(0, 1), device=tier)


def test_jvp_matches_grad(tier):
    x = xp.asarray(RNG.normal(size=(4,)), device=tier)
    v = xp.asarray(RNG.normal(size=(4,)), device=tier)
    f = lambda a: xp.sum(xp.exp(a) * xp.sin(a))
    out, t = xp.jvp(f, (x,), (v,))
    g = xp.grad(f)(x)
    np.testing.assert_allclose(float(t), float(xp.sum(g * v)), rtol=1e-12)
    np.testing.assert_allclose(float(out), float(f(x)))


def test_second_order(tier):
    x = xp.asarray([0.3, -1.2, 2.0], device=tier)
    f = lambda a: xp.sum(xp.sin(a) * a ** 2)
    h = np.asarray(xp.hessian(f)(x))
    xn = np.asarray(x)
    diag = -np.sin(xn) * xn ** 2 + 4 * xn * np.cos(xn) + 2 * np.sin(xn)
    np.testing.assert_allclose(h, np.diag(diag), rtol=1e-10, atol=1e-12)
    gg = xp.grad(lambda a: xp.sum(xp.grad(f)(a)))(x)
    np.testing.assert_allclose(np.asarray(gg), diag, rtol=1e-10)


def test_jacobian_modes_agree(tier):
    x = xp.asarray(RNG.normal(size=(3,)), device=tier)
    f = lambda a: xp.stack([xp.sum(a ** 2), a[0] * a[1], xp.exp(a[2])])
    jr = np.asarray(xp.jacobian(f)(x))
    jf = np.asarray(xp.jacobian(f, mode="forward")(x))
    xn = np.asarray(x)
    expected = np.array([2 * xn, [xn[1], xn[0], 0], [0, 0, np.exp(xn[2])]])
    np.testing.assert_allclose(jr, expected, rtol=1e-12)
    np.testing.assert_allclose(jf, expected, rtol=1e-12)


def test_python_control_flow_on_values(tier):
    def f(x):
        s = xp.sum(x)
        if s > 0:       # evaluates s, keeps recording
            return xp.sum(x ** 3)
        return xp.sum(-x)
    x = xp.asarray([1.0, 2.0], device=tier)
    np.testing.assert_allclose(np.asarray(xp.grad(f)(x)), [3.0, 12.0])
    np.testing.assert_allclose(np.asarray(xp.grad(f)(-x)), [-1.0, -1.0])


def test_nested_arguments_and_aux(tier):
    params = {"w": xp.asarray([1.0, 2.0], device=tier), "b": (xp.asarray(0.5, device=tier),)}

    def loss(p, x):
        y = p["w"] * x + p["b"][0]
        return xp.sum(y ** 2), y

    (g, aux) = xp.grad(loss, has_aux=True)(params, xp.asarray([3.0, -1.0], device=tier))
    y = np.array([3.5, -1.5])
    np.testing.assert_allclose(np.asarray(g["w"]), 2 * y * np.array([3.0, -1.0]))
    np.testing.assert_allclose(np.asarray(g["b"][0]), 2 * y.sum())
    np.testing.assert_allclose(np.asarray(aux), y)


def test_stop_gradient(tier):
    x = xp.asarray([1.0, 2.0], device=tier)
    g = xp.grad(lambda a: xp.sum(a * xp.stop_gradient(a)))(x)
    np.testing.assert_allclose(np.asarray(g), [1.0, 2.0])


def test_custom_vjp(tier):
    @xp.custom_vjp
    def clipped_identity(x):
        return x

    def fwd(x):
        return x, None

    def bwd(res, ct):
        return (xp.clip(ct, -1.0, 1.0),)

    clipped_identity.defvjp(fwd, bwd)
    x = xp.asarray([1.0, 2.0], device=tier)
    g = xp.grad(lambda a: xp.sum(clipped_identity(a) * 5.0))(x)
    np.testing.assert_allclose(np.asarray(g), [1.0, 1.0])
    assert float(xp.sum(clipped_identity(x))) == 3.0


def test_custom_jvp_forward_and_reverse(tier):
    @xp.custom_jvp
    def softplus(x):
        return xp.log1p(xp.exp(x))

    @softplus.defjvp
    def _(primals, tangents):
        (x,), (t,) = primals, tangents
        return softplus(x), t / (1 + xp.exp(-x))

    x = xp.asarray([-1.0, 0.0, 3.0], device=tier)
    g = np.asarray(xp.grad(lambda a: xp.sum(softplus(a)))(x))
    np.testing.assert_allclose(g, 1 / (1 + np.exp(-np.asarray(x))), rtol=1e-12)
    _, t = xp.jvp(lambda a: xp.sum(softplus(a)), (x,), (xp.ones(3, device=tier),))
    np.testing.assert_allclose(float(t), g.sum(), rtol=1e-12)


def test_checkpoint_same_gradient(tier):
    def block(x):
        return xp.tanh(x) * xp.sin(x)

    x = xp.asarray(RNG.normal(size=(4,)), device=tier)
    g1 = xp.grad(lambda a: xp.sum(block(block(a))))(x)
    g2 = xp.grad(lambda a: xp.sum(xp.checkpoint(block)(xp.checkpoint(block)(a))))(x)
    np.testing.assert_allclose(np.asarray(g1), np.asarray(g2), rtol=1e-12)


def test_complex_convention(tier):
    # L = |z|^2 = x^2 + y^2: gradient dL/dx + i dL/dy = 2 z
    z = xp.asarray([1.0 + 2.0j, -0.5 + 0.25j], device=tier)
    g = xp.grad(lambda a: xp.sum(xp.real(a * xp.conj(a))))(z)
    np.testing.assert_allclose(np.asarray(g), 2 * np.asarray(z))
    g = xp.grad(lambda a: xp.sum(xp.abs(xp.exp(a))))(z)
    expected = numeric_grad(lambda v: float(np.sum(np.abs(np.exp(v)))), np.asarray(z))
    np.testing.assert_allclose(np.asarray(g), expected, rtol=1e-6)


def test_grad_errors():
    x = xp.asarray([1.0, 2.0])
    with pytest.raises(TypeError, match="scalar"):
        xp.grad(lambda a: a * 2)(x)
    with pytest.raises(TypeError, match="floating-point"):
        xp.grad(lambda a: xp.sum(a))(xp.asarray([1, 2]))
    with pytest.raises(ValueError, match="argnums"):
        xp.grad(lambda a: xp.sum(a), argnums=3)(x)


def test_forward_and_backward_fuse_into_one_program():
    xp.config.update(execution="compiled")
    xp.reset_cache_info()
    w = xp.asarray(RNG.normal(size=(8, 8)))
    x = xp.asarray(RNG.normal(size=(4, 8)))
    loss = lambda w: xp.mean(xp.tanh(x @ w) ** 2)
    for _ in range(3):
        g = xp.grad(loss)(w)
        xp.eval(g)
    info = xp.cache_info()
    assert info["misses"] == 1 and info["hits"] == 2, info


@pytest.mark.parametrize("kind", ["max", "min"])
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_cumulative_max_min_derivatives(kind, axis):
    """The running extremum's derivative flows to the element it came from (distinct values,
    so finite differences are well defined)."""
    x = RNG.permutation(24).astype(np.float64).reshape(2, 3, 4) * 0.5
    w = xp.asarray(RNG.standard_normal((2, 3, 4)))

    def f(v):
        return xp.sum(xp.primitive("cumulative", v, axis=axis, kind=kind) * w)
    check_grad(f, x)
    # forward mode agrees with reverse mode
    t = RNG.standard_normal(x.shape)
    _, jv = xp.jvp(lambda v: f(v), (xp.asarray(x),), (xp.asarray(t),))
    np.testing.assert_allclose(float(jv), float(xp.sum(xp.grad(f)(xp.asarray(x)) * xp.asarray(t))),
                               rtol=1e-12)


def test_cumulative_max_ties_go_to_the_latest_element():
    x = xp.asarray(np.array([1.0, 3.0, 3.0, 2.0]))
    g = xp.grad(lambda v: xp.sum(xp.primitive("cumulative", v, axis=0, kind="max")))(x)
    np.testing.assert_array_equal(np.asarray(g), [1.0, 1.0, 2.0, 0.0])


SCATTER_IDX = np.array([[1], [3], [1], [7], [0], [-2]])   # a duplicate and two dropped updates


@pytest.mark.parametrize("mode", ["set", "add", "mul", "min", "max"])
def test_scatter_derivatives_every_mode(mode):
    """Against finite differences, with a duplicate slot (except for "set", whose winner
    among duplicates XLA leaves unspecified) and out-of-bounds (dropped) updates, distinct
    values so min/max have no ties; both operands."""
    x = RNG.permutation(20).astype(np.float64).reshape(5, 4) * 0.25 - 2
    u = RNG.permutation(24).astype(np.float64).reshape(6, 4) * 0.3 - 3.1
    idx = xp.asarray(SCATTER_IDX if mode != "set" else SCATTER_IDX * [[1], [1], [2], [1], [1], [1]])
    w = xp.asarray(RNG.standard_normal((5, 4)))

    def f(a, b):
        return xp.sum(xp.primitive("scatter", a, idx, b, axes=(0,), mode=mode) * w)
    check_grad(f, x, u, argnums=(0, 1))
    tx, tu = RNG.standard_normal(x.shape), RNG.standard_normal(u.shape)
    _, jv = xp.jvp(f, (xp.asarray(x), xp.asarray(u)), (xp.asarray(tx), xp.asarray(tu)))
    gx, gu = xp.grad(f, argnums=(0, 1))(xp.asarray(x), xp.asarray(u))
    np.testing.assert_allclose(float(jv), float(xp.sum(gx * xp.asarray(tx)) + xp.sum(gu * xp.asarray(tu))),
                               rtol=1e-10)


def test_scatter_mul_derivative_with_zero_factors():
    """A slot with one zero factor passes the product of the others to that factor; a slot
    with two zeros passes nothing (no 0/0)."""
    x = np.array([2.0, 0.0, 3.0])
    u = np.array([0.0, 5.0, 0.0, 4.0])
    idx = xp.asarray(np.array([[0], [0], [1], [2]]))
    gx, gu = xp.grad(lambda a, b: xp.sum(xp.primitive("scatter", a, idx, b, axes=(0,), mode="mul")),
                     argnums=(0, 1))(xp.asarray(x), xp.asarray(u))
    np.testing.assert_array_equal(np.asarray(gx), [0.0, 0.0, 4.0])
    np.testing.assert_array_equal(np.asarray(gu), [10.0, 0.0, 0.0, 3.0])


def test_scatter_max_ties_share_the_derivative():
    x = xp.asarray(np.array([1.0, 2.0]))
    u = xp.asarray(np.array([2.0, 2.0]))
    idx = xp.asarray(np.array([[1], [1]]))
    gx, gu = xp.grad(lambda a, b: xp.sum(xp.primitive("scatter", a, idx, b, axes=(0,), mode="max")),
                     argnums=(0, 1))(x, u)
    np.testing.assert_allclose(np.asarray(gx), [1.0, 1 / 3])
    np.testing.assert_allclose(np.asarray(gu), [1 / 3, 1 / 3])


def test_setitem_gradient_skips_dropped_updates(lazy):
    """x[idx] = v with a pending out-of-bounds index drops that element of v: it gets no
    gradient (gather's clamping must not hand it its neighbour's)."""
    def f(v):
        y = xp.zeros(4)
        idx = xp.asarray(np.array([1, 9])) * xp.asarray(1)   # pending: not checked at record time
        y[idx] = v
        return xp.sum(y * xp.arange(4.0))
    g = xp.grad(f)(xp.asarray(np.array([1.0, 1.0])))
    np.testing.assert_array_equal(np.asarray(g), [1.0, 0.0])


def test_custom_vjp_fwd_may_call_the_function_itself():
    """The usual idiom: fwd calls the decorated function for its value (it recursed until
    RecursionError). The rule is used: bwd is deliberately 10x the true derivative."""
    @xp.custom_vjp
    def f(x):
        return xp.sin(x) * 2.0

    def fwd(x):
        return f(x), (x,)

    def bwd(res, ct):
        (x,) = res
        return (ct * 20.0 * xp.cos(x),)

    f.defvjp(fwd, bwd)

    @xp.custom_vjp
    def g(x):              # a custom_vjp whose fwd goes through another one's
        return f(x) + x

    g.defvjp(lambda x: (g(x), None), lambda res, ct: (ct * 3.0,))

    v = np.array([0.1, 0.5, -2.0])
    x = xp.asarray(v)
    np.testing.assert_allclose(np.asarray(f(x)), 2 * np.sin(v))
    np.testing.assert_allclose(np.asarray(xp.grad(lambda x: xp.sum(f(x)))(x)), 20 * np.cos(v))
    np.testing.assert_allclose(np.asarray(xp.grad(lambda x: xp.sum(g(x)))(x)), np.full(3, 3.0))
    np.testing.assert_allclose(np.asarray(g(x)), 2 * np.sin(v) + v)


@pytest.mark.parametrize("leave", [
    lambda v: np.asarray(v),
    lambda v: np.array(v.tolist()),
    lambda v: np.from_dlpack(v),
    lambda v: np.asarray(xp.sin(v) * 2.0),       # an intermediate that depends on v
])
def test_values_leaving_the_graph_under_grad_raise(leave):
    """A value that leaves as data carries no derivative: the gradient would be silently
    zero (it was), so it raises and suggests stop_gradient."""
    v = xp.asarray(np.array([0.1, 0.5]))
    with pytest.raises(xp.DerivativeLostError, match="stop_gradient"):
        xp.grad(lambda v: xp.sum(xp.asarray(np.sin(leave(v)))))(v)
    with pytest.raises(TypeError):            # it is a TypeError, as the standard's misuse is
        xp.grad(lambda v: xp.sum(xp.asarray(leave(v))))(v)


def test_values_that_carry_no_derivative_may_leave():
    v = xp.asarray(np.array([0.1, 0.5]))
    # stop_gradient says so; Python scalars drive control flow (documented: no derivative)
    g = xp.grad(lambda v: xp.sum(v * xp.asarray(np.asarray(xp.stop_gradient(v)))))(v)
    np.testing.assert_allclose(np.asarray(g), [0.1, 0.5])
    g = xp.grad(lambda v: xp.sum(v * 3.0) if float(v[0]) > 0 else xp.sum(v))(v)
    np.testing.assert_allclose(np.asarray(g), [3.0, 3.0])
    c = xp.asarray(np.array([2.0, 4.0]))        # arrays that do not depend on v
    g = xp.grad(lambda v: xp.sum(v * xp.asarray(np.asarray(c) + 1)))(v)
    np.testing.assert_allclose(np.asarray(g), [3.0, 5.0])
    np.testing.assert_allclose(np.asarray(v), [0.1, 0.5])   # and after grad, as before


# ----------------------------------------------------------------------------- closures

def _closure_losses(w):
    """Functions of x whose custom rule or checkpoint reads x as a closure."""
    def checkpointed(x):
        return xp.checkpoint(lambda v: xp.sum(xp.sin(v * x)))(w)

    def custom_jvp(x):
        @xp.custom_jvp
        def f(v):
            return xp.sum(xp.sin(v * x))

        @f.defjvp
        def f_jvp(primals, tangents):
            (v,), (t,) = primals, tangents
            return f(v), xp.sum(xp.cos(v * x) * x * t)
        return f(w)

    def custom_vjp(x):
        @xp.custom_vjp
        def f(v):
            return xp.sum(xp.sin(v * x))
        f.defvjp(lambda v: (f(v), v), lambda v, ct: (ct * xp.cos(v * x) * x,))
        return f(w)
    return {"checkpoint": checkpointed, "custom_jvp": custom_jvp, "custom_vjp": custom_vjp}


@pytest.mark.parametrize("kind", ["checkpoint", "custom_jvp", "custom_vjp"])
def test_a_rule_that_closes_over_a_differentiated_array_raises(kind):
    """The derivative of a custom rule or a checkpoint flows to its array arguments only: a
    closure over the differentiated input would get a zero gradient, so it raises."""
    w = xp.asarray(np.array([1.0, 2.0, 3.0]))
    x = xp.asarray(np.array([0.5, 0.25, 2.0]))
    with pytest.raises(xp.DerivativeLostError, match=f"{kind} .*closure"):
        xp.grad(_closure_losses(w)[kind])(x)


def test_checkpoint_may_close_over_constants_and_take_the_input_as_an_argument():
    w = xp.asarray(np.array([1.0, 2.0, 3.0]))
    x = xp.asarray(np.array([0.5, 0.25, 2.0]))
    expected = np.cos(np.asarray(w) * np.asarray(x)) * np.asarray(w)
    closes_over_w = xp.grad(lambda x: xp.checkpoint(lambda v: xp.sum(xp.sin(v * w)))(x))(x)
    takes_both = xp.grad(lambda x: xp.checkpoint(lambda v, y: xp.sum(xp.sin(v * y)))(w, x))(x)
    np.testing.assert_allclose(np.asarray(closes_over_w), expected, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(takes_both), expected, rtol=1e-12)
