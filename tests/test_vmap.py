"""tlaloc.vmap: every primitive's batching rule, against the Python loop it replaces.

Each check runs `vmap(f)(xs)` and `stack([f(x) for x in xs])` on the same device (compiled
CPU and the interpreter), with the mapped axis first, in the middle and last, so a rule that
mixes up where the mapped axis is gives a wrong value (not only a wrong shape)."""
import numpy as np
import pytest

import tlaloc as xp
from tlaloc._api._core import node_of, wrap
from tlaloc._prims import lax
from tlaloc._prims.core import REGISTRY

# Primitives without operands are never batched: a value made inside the function without
# any mapped input is the same for every example.
OPERANDLESS = {"iota", "constant", "axis_index"}

RTOL = {"float32": 2e-5, "float64": 1e-12, "complex64": 2e-5, "complex128": 1e-12}


def example(x, axis, i):
    return x[(slice(None),) * axis + (i,)]


def looped(f, args, in_axes, size):
    """stack([f(x) for x in xs]) along axis 0, results as NumPy arrays (a tuple for several)."""
    outs = [f(*[a if ax is None else example(a, ax, i) for a, ax in zip(args, in_axes)])
            for i in range(size)]
    if isinstance(outs[0], (tuple, list)):
        return tuple(np.stack([np.asarray(o[k]) for o in outs]) for k in range(len(outs[0])))
    return np.stack([np.asarray(o) for o in outs])


def assert_close(got, want):
    got = np.asarray(got)
    assert got.shape == want.shape, f"shape {got.shape} != {want.shape}"
    assert got.dtype == want.dtype, f"dtype {got.dtype} != {want.dtype}"
    rtol = RTOL.get(str(got.dtype))
    if rtol is None:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol, equal_nan=True)


def check(f, *args, in_axes=0, size=None):
    """vmap(f, in_axes)(*args) equals the loop over the examples."""
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    axes = tuple(None if ax is None else ax % a.ndim for a, ax in zip(args, axes))
    size = size or next(a.shape[ax] for a, ax in zip(args, axes) if ax is not None)
    got = xp.vmap(f, in_axes=in_axes)(*args)
    want = looped(f, args, axes, size)
    if isinstance(want, tuple):
        for g, w in zip(got, want):
            assert_close(g, w)
    else:
        assert_close(got, want)


def batched(rng, shape, position, device, dtype="float64", size=3):
    """`size` examples of `shape`, stacked along axis `position` ("first", "middle", "last")."""
    values = rng.standard_normal((size,) + shape)
    if dtype.startswith("complex"):
        values = values + 1j * rng.standard_normal((size,) + shape)
    values = values.astype(dtype)
    axis = {"first": 0, "middle": (len(shape) + 1) // 2, "last": len(shape)}[position]
    return xp.asarray(np.moveaxis(values, 0, axis), device=device), axis


def test_every_primitive_with_operands_has_a_batching_rule():
    # the modules that declare primitives on first use
    import tlaloc.fft, tlaloc.linalg, tlaloc.random, tlaloc.special  # noqa: F401, E401
    missing = sorted(n for n, p in REGISTRY.items() if p.batch is None and n not in OPERANDLESS)
    assert missing == [], f"primitives without a batching rule: {missing}"
    assert all(REGISTRY[n].batch is None for n in OPERANDLESS)


# ----------------------------------------------------------------------------- the rules

def _spd(a):
    return a @ a.mT + 4.0 * xp.eye(a.shape[-1], dtype=a.dtype, device=a.device)


def _set_rows(a):
    b = a * 1.0
    b[1] = 0.0
    b[:, 0] = b[:, 1] + 1.0
    return b


def _cumulative(kind):
    return lambda a: wrap(lax.cumulative(node_of("cumulative", a), axis=1, kind=kind))


# name: (function of one example, the example's shape[, dtype])
CASES = {
    "sum": (lambda a: xp.sum(a, axis=0), (4, 3)),
    "max_keepdims": (lambda a: xp.max(a, axis=1, keepdims=True), (4, 3)),
    "min_all": (lambda a: xp.min(a), (4, 3)),
    "prod_middle": (lambda a: xp.prod(a, axis=1), (2, 4, 3)),
    "mean_var": (lambda a: xp.var(a, axis=(0, 2)) + xp.mean(a), (2, 4, 3)),
    "cumulative_sum": (lambda a: xp.cumulative_sum(a, axis=1), (4, 3)),
    "cumulative_prod": (lambda a: xp.cumulative_prod(a, axis=0), (4, 3)),
    "cumulative_max": (_cumulative("max"), (4, 3)),
    "cumulative_min": (_cumulative("min"), (4, 3)),
    "sort": (lambda a: xp.sort(a, axis=0), (4, 3)),
    "sort_descending": (lambda a: xp.sort(a, axis=-1, descending=True), (4, 3)),
    "argsort": (lambda a: xp.argsort(a, axis=1), (4, 3)),
    "matmul_shared": (lambda a: a @ xp.reshape(xp.arange(6.0, dtype=a.dtype, device=a.device), (3, 2)), (4, 3)),
    "matmul_self": (lambda a: a @ a.mT, (4, 3)),
    "vector_matrix": (lambda a: a[0] @ a.mT, (4, 3)),
    "tensordot": (lambda a: xp.tensordot(a, a, axes=([0, 2], [0, 2])), (2, 4, 3)),
    "vecdot": (lambda a: xp.vecdot(a, a[::-1], axis=0), (4, 3)),
    "take": (lambda a: xp.take(a, xp.asarray([2, 0, 2], device=a.device), axis=1), (4, 3)),
    "getitem_ints": (lambda a: a[xp.asarray([3, 0], device=a.device), 1:], (4, 3)),
    "take_along_axis": (lambda a: xp.take_along_axis(a, xp.argsort(a, axis=0), axis=0), (4, 3)),
    "setitem": (_set_rows, (4, 3)),
    "grad_of_take": (xp.grad(lambda a: xp.sum(xp.take(a, xp.asarray([1, 1, 2], device=a.device), axis=0) ** 2)), (4, 3)),
    "slice_steps": (lambda a: a[1:, ::2], (4, 3)),
    "flip_roll": (lambda a: xp.roll(xp.flip(a, axis=0), 1, axis=1), (4, 3)),
    "concat_stack": (lambda a: xp.concat([a, xp.stack([a[0], a[1]])], axis=0), (4, 3)),
    "reshape": (lambda a: xp.reshape(a, (3, 2, 2)), (4, 3)),
    "permute_dims": (lambda a: xp.permute_dims(a, (2, 0, 1)), (2, 4, 3)),
    "broadcast_to": (lambda a: xp.broadcast_to(a[:, None, :], (4, 2, 3)), (4, 3)),
    "expand_squeeze": (lambda a: xp.squeeze(xp.expand_dims(a, axis=1), axis=1) * a, (4, 3)),
    "where_scalar": (lambda a: xp.where(a > 0, a, 0.5), (4, 3)),
    "elementwise": (lambda a: xp.exp(-a * a) + xp.atan2(a, 1.0 + a * a), (4, 3)),
    "tile_repeat": (lambda a: xp.repeat(xp.tile(a, (1, 2)), 2, axis=0), (2, 3)),
    "inv": (lambda a: xp.linalg.inv(_spd(a)), (3, 3)),
    "solve": (lambda a: xp.linalg.solve(_spd(a), a[:, :1]), (3, 3)),
    "cholesky": (lambda a: xp.linalg.cholesky(_spd(a)), (3, 3)),
    "eigvalsh": (lambda a: xp.linalg.eigvalsh(_spd(a)), (3, 3)),
    "eigh_vectors": (lambda a: xp.abs(xp.linalg.eigh(_spd(a)).eigenvectors), (3, 3)),
    "svdvals": (lambda a: xp.linalg.svdvals(a), (4, 3)),
    "qr": (lambda a: xp.abs(xp.linalg.qr(a).R), (4, 3)),
    "det_slogdet": (lambda a: xp.linalg.det(_spd(a)) + xp.linalg.slogdet(_spd(a)).logabsdet, (3, 3)),
    "eigvals": (lambda a: xp.sort(xp.real(xp.linalg.eigvals(_spd(a)))), (3, 3)),
    "fft": (lambda a: xp.fft.fft(a, axis=0), (4, 3), "complex128"),
    "fft_last": (lambda a: xp.fft.ifft(a), (4, 3), "complex64"),
    "fftn": (lambda a: xp.fft.fftn(a, axes=(0, 1)), (4, 3), "complex128"),
    "rfft": (lambda a: xp.fft.rfft(a, axis=0), (4, 3)),
    "irfft": (lambda a: xp.fft.irfft(xp.fft.rfft(a, axis=-1), n=3, axis=-1), (4, 3)),
}


@pytest.mark.parametrize("position", ["first", "middle", "last"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_rule_with_the_mapped_axis_anywhere(case, position, tier):
    f, shape, *dtype = CASES[case]
    xs, axis = batched(np.random.default_rng(len(case)), shape, position, tier, *dtype)
    check(f, xs, in_axes=axis)


@pytest.mark.parametrize("position", ["first", "last"])
def test_gather_and_scatter_with_mapped_indices(lazy, position, tier):
    rng = np.random.default_rng(1)
    xs, axis = batched(rng, (4, 3), position, tier)
    idx = xp.asarray(rng.integers(0, 4, size=(3, 2)), device=tier)
    one = xs[(slice(None),) * axis + (0,)]

    def scatter(a, i):
        b = a * 1.0
        b[i] = -1.0
        return b

    def scatter_rows(a, i, v):
        b = a * 1.0
        b[i[0], :] = v[0]
        return b

    check(lambda a, i: xp.take(a, i, axis=0), xs, idx, in_axes=(axis, 0))
    check(lambda a, i: xp.take(a, i, axis=1), one, idx, in_axes=(None, 0))
    check(lambda a, i: a[i[1]], xs, idx, in_axes=(axis, 0))        # a mapped integer index
    check(lambda a, i: a[i[0], 1:], one, idx, in_axes=(None, 0))
    check(scatter, xs, idx, in_axes=(axis, 0))
    check(scatter, one, idx, in_axes=(None, 0))
    check(scatter_rows, xs, idx, xs, in_axes=(axis, 0, axis))
    check(xp.grad(lambda a, i: xp.sum(xp.take(a, i, axis=0) ** 3)), xs, idx, in_axes=(axis, 0))


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint32", "int64", "float32", "complex64"])
def test_dtypes(dtype, tier):
    rng = np.random.default_rng(2)
    values = (rng.standard_normal((3, 4, 2)) * 5).astype(dtype)
    xs = xp.asarray(values, device=tier)
    check(lambda a: a == a[::-1], xs, in_axes=1)
    if dtype != "bool":
        check(lambda a: xp.sum(a * a, axis=0), xs, in_axes=2)
    if dtype not in ("bool", "complex64"):
        check(lambda a: xp.sort(a, axis=0), xs, in_axes=1)
        check(lambda a: xp.cumulative_sum(a, axis=0), xs, in_axes=0)


def test_special_values_zero_size_and_scalars(tier):
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-310, -2.5, 1.0])
    xs = xp.asarray(special.reshape(4, 2), device=tier)
    check(lambda a: xp.sqrt(a) * xp.sign(a), xs, in_axes=1)
    check(lambda a: xp.max(a) + xp.min(a), xs)
    check(lambda a: xp.sort(a), xs, in_axes=0)
    scalars = xp.asarray(special, device=tier)
    check(lambda s: xp.sin(s) + xp.asarray([1.0, 2.0], device=tier), scalars)   # 0-d examples
    check(lambda s, v: s * v, scalars, xp.asarray([[1.0, 2.0]] * 8, device=tier))
    empty = xp.zeros((3, 0, 2), device=tier)
    check(lambda a: xp.sum(a, axis=0) + 1.0, empty)
    no_examples = xp.vmap(lambda a: xp.sum(a, axis=0) @ xp.ones((2, 5), device=tier))(
        xp.zeros((0, 4, 2), device=tier))
    assert no_examples.shape == (0, 5)


# ----------------------------------------------------------------------------- the API

def test_in_axes_trees_none_and_out_axes(tier):
    rng = np.random.default_rng(3)
    a = xp.asarray(rng.standard_normal((4, 3)), device=tier)
    b = xp.asarray(rng.standard_normal((3, 4)), device=tier)
    w = xp.asarray(rng.standard_normal((3,)), device=tier)

    def f(pair, scale, *, offset=0.0):
        x, y = pair["x"], pair["y"]
        return {"sum": x * scale + y + offset, "dot": xp.vecdot(x, scale)}

    out = xp.vmap(f, in_axes=({"x": 0, "y": 1}, None))({"x": a, "y": b}, w, offset=1.0)
    an, bn, wn = np.asarray(a), np.asarray(b), np.asarray(w)
    np.testing.assert_allclose(out["sum"], an * wn + bn.T + 1.0, rtol=1e-12)
    np.testing.assert_allclose(out["dot"], an @ wn, rtol=1e-12)
    moved = xp.vmap(lambda x: (x * 2, xp.sum(x)), out_axes=(1, 0))(a)
    np.testing.assert_allclose(moved[0], 2 * an.T, rtol=1e-12)
    np.testing.assert_allclose(moved[1], an.sum(1), rtol=1e-12)
    shared = xp.vmap(lambda x: (x, w * 2), out_axes=(0, None))(a)
    np.testing.assert_allclose(shared[1], 2 * wn)
    broadcast = xp.vmap(lambda x: w, in_axes=0)(a)         # an unmapped result gets the axis
    assert broadcast.shape == (4, 3)
    counted = xp.vmap(lambda: xp.arange(3, device=tier), axis_size=2)()
    np.testing.assert_array_equal(counted, [[0, 1, 2], [0, 1, 2]])
    negative = xp.vmap(lambda x: x, in_axes=-1, out_axes=-1)(a)
    np.testing.assert_array_equal(negative, an)


def test_named_axis(tier):
    rng = np.random.default_rng(4)
    values = rng.standard_normal((4, 3))
    xs = xp.rename(xp.asarray(values, device=tier), ("batch", "feature"))
    w = xp.rename(xp.asarray(rng.standard_normal(3), device=tier), ("feature",))

    def f(x, w):
        assert x.names == ("feature",)
        return xp.sum(x * w, axis="feature"), x * 2

    total, doubled = xp.vmap(f, axis="batch")(xs, w)
    assert total.names == ("batch",) and doubled.names == ("batch", "feature")
    np.testing.assert_allclose(total, values @ np.asarray(w), rtol=1e-12)
    last = xp.rename(xp.asarray(values.T, device=tier), ("feature", "batch"))
    again = xp.vmap(lambda x: x + 1, axis="batch")(last)
    assert again.names == ("batch", "feature")
    np.testing.assert_allclose(again, values + 1)
    # under positional vmap named arrays keep their names, the mapped axis' too
    kept = xp.vmap(lambda x: x * w)(xs)
    assert kept.names == ("batch", "feature")
    moved = xp.vmap(lambda x: x * w, out_axes=1)(xs)
    assert moved.names == ("feature", "batch")
    mixed = xp.vmap(lambda x, y: x + y)(xs, xp.asarray(values, device=tier))
    assert mixed.names == ("batch", "feature")
    unnamed = xp.vmap(lambda x, y: x * y, in_axes=(0, 1))(xs, xp.rename(xs.T, (None, "other")))
    assert unnamed.names == (None, "feature")     # the mapped axes disagree: no name
    with pytest.raises(ValueError, match="no argument is mapped"):
        xp.vmap(lambda x: x, axis="time")(xs)


def test_bad_arguments():
    a = xp.ones((4, 3))
    with pytest.raises(TypeError, match="expected a function"):
        xp.vmap(3)
    with pytest.raises(TypeError, match="ints or None"):
        xp.vmap(lambda x: x, in_axes="0")
    with pytest.raises(TypeError, match="either axis"):
        xp.vmap(lambda x: x, in_axes=1, axis="batch")
    with pytest.raises(TypeError, match="axis_size must be an int"):
        xp.vmap(lambda x: x, axis_size=2.0)
    with pytest.raises(ValueError, match="non-negative"):
        xp.vmap(lambda x: x, axis_size=-1)
    with pytest.raises(ValueError, match="different sizes"):
        xp.vmap(lambda x, y: x + y)(a, xp.ones((5, 3)))
    with pytest.raises(ValueError, match="out of range"):
        xp.vmap(lambda x: x, in_axes=2)(a)
    with pytest.raises(ValueError, match="2 entries"):
        xp.vmap(lambda x: x, in_axes=(0, 0))(a)
    with pytest.raises(ValueError, match="does not match"):
        xp.vmap(lambda p: p, in_axes=({"x": 0},))({"y": a})
    with pytest.raises(TypeError, match="NumPy array"):
        xp.vmap(lambda x: x)(np.ones((4, 3)))
    with pytest.raises(ValueError, match="out_axes is None"):
        xp.vmap(lambda x: x, out_axes=None)(a)
    with pytest.raises(ValueError, match="give axis_size"):
        xp.vmap(lambda x: x, in_axes=None)(a)
    with pytest.raises(ValueError, match="axis_size=3"):
        xp.vmap(lambda x: x, axis_size=3)(a)


@pytest.mark.parametrize("body, call", [
    (lambda x: x[x > 0], "x[...]"),
    (lambda x: xp.nonzero(x)[0], "nonzero()"),
    (lambda x: x if x[0] > 0 else -x, "bool()"),
    (lambda x: float(xp.sum(x)), "float()"),
])
def test_data_dependent_functions_raise_naming_the_call(body, call):
    with pytest.raises(xp.ConcretizationError) as info:
        xp.vmap(body)(xp.ones((4, 3)))
    message = str(info.value)
    assert call in message and "xp.where" in message and "test_vmap.py" in message


# ----------------------------------------------------------------------------- compositions

def _mlp_loss(params, x, y):
    h = xp.tanh(x @ params["w1"] + params["b1"])
    logits = h @ params["w2"] + params["b2"]
    shifted = logits - xp.max(logits, axis=-1, keepdims=True)
    log_probs = shifted - xp.log(xp.sum(xp.exp(shifted), axis=-1, keepdims=True))
    return -xp.sum(y * log_probs)


def test_per_example_gradients_of_an_mlp(tier):
    rng = np.random.default_rng(5)
    params = {"w1": rng.standard_normal((4, 8)) * 0.5, "b1": np.zeros(8),
              "w2": rng.standard_normal((8, 3)) * 0.5, "b2": np.zeros(3)}
    params = {k: xp.asarray(v, device=tier) for k, v in params.items()}
    x = xp.asarray(rng.standard_normal((6, 4)), device=tier)
    y = xp.asarray(np.eye(3)[rng.integers(0, 3, 6)], device=tier)
    per_example = xp.vmap(xp.grad(_mlp_loss), in_axes=(None, 0, 0))(params, x, y)
    jitted = xp.jit(xp.vmap(xp.grad(_mlp_loss), in_axes=(None, 0, 0)))(params, x, y)
    for k in params:
        want = np.stack([np.asarray(xp.grad(_mlp_loss)(params, x[i], y[i])[k]) for i in range(6)])
        np.testing.assert_allclose(per_example[k], want, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(jitted[k], want, rtol=1e-12, atol=1e-14)
    # the batch gradient is the sum of the per-example ones, through grad of vmap
    total = xp.grad(lambda p: xp.sum(xp.vmap(_mlp_loss, in_axes=(None, 0, 0))(p, x, y)))(params)
    for k in params:
        np.testing.assert_allclose(total[k], np.asarray(per_example[k]).sum(0), rtol=1e-11, atol=1e-13)


def test_composes_with_jvp_jit_and_itself(tier):
    rng = np.random.default_rng(6)
    xs = xp.asarray(rng.standard_normal((4, 3)), device=tier)
    ts = xp.asarray(rng.standard_normal((4, 3)), device=tier)

    def tangent(x, t):
        return xp.jvp(lambda x: xp.sin(x) * xp.sum(x), (x,), (t,))[1]

    check(tangent, xs, ts)
    outer = xp.jvp(xp.vmap(lambda x: xp.sin(x) * xp.sum(x)), (xs,), (ts,))[1]
    assert_close(outer, looped(tangent, (xs, ts), (0, 0), 4))
    check(xp.jit(lambda x: xp.cumulative_sum(x, axis=0) * 2), xs)
    f = xp.jit(xp.vmap(lambda x: xp.sort(x) * x[0]))
    assert_close(f(xs), looped(lambda x: xp.sort(x) * x[0], (xs,), (0,), 4))
    outer_product = xp.vmap(xp.vmap(lambda a, b: a * b, in_axes=(0, None)), in_axes=(None, 0))
    np.testing.assert_allclose(outer_product(xs[0], xs[1]),
                               np.asarray(xs[0])[None, :] * np.asarray(xs[1])[:, None])
    nested = xp.vmap(xp.vmap(lambda x: xp.sum(x * x)), in_axes=1)(xp.reshape(xs, (2, 2, 3)))
    np.testing.assert_allclose(nested, (np.asarray(xs).reshape(2, 2, 3) ** 2).sum(-1).T)


def test_composes_with_custom_rules_and_checkpoint(tier):
    xs = xp.asarray(np.random.default_rng(7).standard_normal((4, 3)), device=tier)

    @xp.custom_vjp
    def cube(x):
        return x * x * x

    cube.defvjp(lambda x: (cube(x), x), lambda x, g: (30.0 * x * x * g,))   # 10x: the rule is used

    @xp.custom_jvp
    def square(x):
        return x * x

    @square.defjvp
    def square_jvp(primals, tangents):
        return square(primals[0]), 20.0 * primals[0] * tangents[0]

    smooth = xp.checkpoint(lambda x: xp.sin(x) * x)
    for fn, factor in [(cube, 30.0 * np.asarray(xs) ** 2), (square, 20.0 * np.asarray(xs)),
                       (smooth, np.sin(np.asarray(xs)) + np.asarray(xs) * np.cos(np.asarray(xs)))]:
        inner = xp.vmap(xp.grad(lambda x: xp.sum(fn(x))))(xs)
        outer = xp.grad(lambda x: xp.sum(xp.vmap(fn)(x)))(xs)
        np.testing.assert_allclose(inner, factor, rtol=1e-12)
        np.testing.assert_allclose(outer, factor, rtol=1e-12)
    # a shared argument's cotangent adds up over the examples
    shared = xp.grad(lambda w: xp.sum(xp.vmap(lambda w, x: cube(w * x), in_axes=(None, 0))(w, xs)))(xs[0])
    want = sum(30.0 * (np.asarray(xs[0]) * np.asarray(xs[i])) ** 2 * np.asarray(xs[i]) for i in range(4))
    np.testing.assert_allclose(shared, want, rtol=1e-12)
    tangent = xp.jvp(xp.vmap(square), (xs,), (xs,))[1]
    np.testing.assert_allclose(tangent, 20.0 * np.asarray(xs) ** 2, rtol=1e-12)


def test_random_keys_per_example(tier):
    random = xp.random
    keys = random.split(random.key(0, device=tier), 4)
    for f in [lambda k: random.bits(k, (3,)), lambda k: random.normal(k, (2, 3)),
              lambda k: random.split(k, 3), lambda k: random.uniform(k, shape=(2,))]:
        check(f, keys)
    check(lambda d: random.fold_in(random.key(1, device=tier), d),
          xp.arange(4, dtype=xp.uint32, device=tier))


def test_against_jax_vmap():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        _compare_with_jax_vmap(jax, jnp)
    finally:   # later tests compare with jax's default (32-bit) types
        jax.config.update("jax_enable_x64", previous)


def _compare_with_jax_vmap(jax, jnp):
    rng = np.random.default_rng(8)
    xs = rng.standard_normal((5, 4, 3))
    idx = rng.integers(0, 4, size=(5, 2))

    def ours(x, i):
        y = x * 1.0
        y[i] = 0.0
        return xp.cumulative_sum(xp.sort(y, axis=0), axis=1) @ x.mT

    def theirs(x, i):
        y = x.at[i].set(0.0)
        return jnp.cumsum(jnp.sort(y, axis=0), axis=1) @ x.T

    got = xp.vmap(ours, in_axes=(2, 0))(xp.asarray(xs.transpose(1, 2, 0)), xp.asarray(idx))
    want = jax.vmap(theirs, in_axes=(2, 0))(jnp.asarray(xs.transpose(1, 2, 0)), jnp.asarray(idx))
    np.testing.assert_allclose(got, np.asarray(want), rtol=1e-12)


# ----------------------------------------------------------------------------- rules the namespace reaches rarely

def _on_nodes(fn):
    """A function of arrays from a function of graph nodes (to call a primitive directly)."""
    return lambda *arrays: wrap(fn(*[node_of("test", a) for a in arrays]))


def test_window_rules_with_a_start_per_example(tier):
    rng = np.random.default_rng(9)
    xs = xp.asarray(rng.standard_normal((4, 5, 3)), device=tier)
    starts = xp.asarray(np.array([-2, 0, 2, 7]), device=tier)      # clamped as StableHLO does
    zero = xp.asarray(np.int64(0), device=tier)
    window = _on_nodes(lambda x, s, z: lax.dynamic_slice(x, s, z, sizes=(2, 3)))
    check(window, xs, starts, zero, in_axes=(0, 0, None))
    check(window, xs[0], starts, zero, in_axes=(None, 0, None))
    check(window, xs, zero, zero, in_axes=(1, None, None))
    zero32 = xp.asarray(np.int32(1), device=tier)                   # another index dtype
    check(window, xs, zero32, zero32, in_axes=(2, None, None))
    update = xp.asarray(rng.standard_normal((4, 2, 3)), device=tier)
    write = _on_nodes(lambda x, u, s, z: lax.dynamic_update_slice(x, u, s, z))
    check(write, xs, update, starts, zero, in_axes=(0, 0, 0, None))
    check(write, xs[0], xp.moveaxis(update, 0, 2), starts, zero, in_axes=(None, 2, 0, None))
    check(write, xs, update[0], zero, zero, in_axes=(2, None, None, None))


def test_pad_with_a_value_per_example(tier):
    xs = xp.asarray(np.random.default_rng(10).standard_normal((2, 3, 4)), device=tier)
    values = xp.asarray(np.array([1.5, -2.0, np.nan]), device=tier)
    padded = _on_nodes(lambda x, v: lax.pad(x, v, low=(1, -1), high=(0, 2), interior=(1, 0)))
    check(padded, xs, values, in_axes=(1, 0))
    check(padded, xs, values[0], in_axes=(1, None))
    check(padded, xs[:, 0], values, in_axes=(None, 0))


def test_a_missing_rule_is_named(monkeypatch):
    monkeypatch.setattr(REGISTRY["sin"], "batch", None)
    with pytest.raises(NotImplementedError, match="'sin' has no batching rule"):
        xp.vmap(xp.sin)(xp.ones((2, 3)))


def test_nested_named_axes(tier):
    values = np.random.default_rng(11).standard_normal((2, 3, 4))
    xs = xp.rename(xp.asarray(values, device=tier), ("model", "batch", None))
    out = xp.vmap(xp.vmap(lambda x: xp.sum(x * x), axis="batch"), axis="model")(xs)
    assert out.names == ("model", "batch")
    np.testing.assert_allclose(out, (values ** 2).sum(-1), rtol=1e-12)
