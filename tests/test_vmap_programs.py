"""tlaloc.vmap on random programs: hypothesis draws a per-example program (elementwise,
reductions, cumulative sums, sorts, flips, transposes, slices, gathers, setitem, contractions,
concatenation, where) and where the mapped axis is; vmap of the program must equal the Python
loop over the examples, on the compiled CPU device and on the interpreter."""
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import tlaloc as xp

OPS = ("sin", "exp", "abs", "tanh", "add_x", "mul_y", "sub_w", "sum", "max", "mean",
       "cumsum", "sort", "flip", "permute", "stride", "take", "take_i", "setitem", "set_i",
       "gram", "concat", "where")


def apply(op, k, v, x, y, w, i):
    """One step of a program on the example's current value `v` (x, y and the integers i
    mapped, w shared)."""
    axis = k % v.ndim
    if op == "sin":
        return xp.sin(v)
    if op == "exp":
        return xp.exp(-v * v)
    if op == "abs":
        return xp.abs(v) - 0.5
    if op == "tanh":
        return xp.tanh(v * 2.0)
    if op in ("add_x", "mul_y", "sub_w"):
        other = {"add_x": x, "mul_y": y, "sub_w": w}[op]
        try:
            xp.broadcast_shapes(v.shape, other.shape)
        except ValueError:
            return v
        return {"add_x": xp.add, "mul_y": xp.multiply, "sub_w": xp.subtract}[op](v, other)
    if op in ("sum", "max", "mean"):
        return getattr(xp, op)(v, axis=axis, keepdims=True)
    if op == "cumsum":
        return xp.cumulative_sum(v, axis=axis)
    if op == "sort":
        return xp.sort(v, axis=axis, descending=bool(k % 2))
    if op == "flip":
        return xp.flip(v, axis=axis)
    if op == "permute":
        return xp.permute_dims(v, tuple(np.roll(np.arange(v.ndim), k)))
    if op == "stride":
        return v[(slice(None),) * axis + (slice(None, None, 2),)]
    if op == "take":
        n = v.shape[axis]
        return xp.take(v, xp.asarray([(k + 1) % n, 0, n - 1], device=v.device), axis=axis)
    if op == "take_i":          # indices that differ per example: a batched gather
        return xp.take(v, i % v.shape[axis], axis=axis)
    if op == "set_i":           # ... and a batched scatter
        v = v * 1.0
        v[i % v.shape[0]] = -0.75
        return v
    if op == "setitem":
        v = v * 1.0
        v[(slice(None),) * axis + (k % v.shape[axis],)] = 0.25
        return v
    if op == "gram":
        return v @ v.mT / 4.0 if v.ndim >= 2 else v * xp.sum(v * v)
    if op == "concat":
        return xp.concat([v, v[::-1] * 0.5], axis=axis)
    if op == "where":
        return xp.where(v > 0, v, xp.sin(v) * 0.5)
    raise AssertionError(op)


programs = st.fixed_dictionaries({
    "shape": st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple),
    "size": st.integers(1, 3),
    "position": st.integers(0, 3),
    "steps": st.lists(st.tuples(st.sampled_from(OPS), st.integers(0, 11)), min_size=1, max_size=6),
    "seed": st.integers(0, 2**16),
})


def run(program, device):
    shape, size, steps = program["shape"], program["size"], program["steps"]
    position = program["position"] % (len(shape) + 1)
    rng = np.random.default_rng(program["seed"])
    xs, ys = (np.moveaxis(rng.standard_normal((size,) + shape), 0, position) for _ in range(2))
    w = xp.asarray(rng.standard_normal(shape), device=device)
    xs, ys = xp.asarray(xs, device=device), xp.asarray(ys, device=device)
    ints = xp.asarray(rng.integers(-4, 8, size=(size, 3)), device=device)

    def f(x, y, w, i):
        v = x
        for op, k in steps:
            v = apply(op, k, v, x, y, w, i)
        return v

    got = xp.vmap(f, in_axes=(position, position, None, 0))(xs, ys, w, ints)
    pick = lambda a, i: a[(slice(None),) * position + (i,)]   # noqa: E731
    want = np.stack([np.asarray(f(pick(xs, i), pick(ys, i), w, ints[i])) for i in range(size)])
    assert got.shape == want.shape, (got.shape, want.shape, steps)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-9, atol=1e-12, equal_nan=True,
                               err_msg=f"program {steps}, mapped axis {position}")


@given(programs)
def test_random_programs_compiled(program):
    xp.config.update(execution="compiled")
    run(program, xp.device("cpu"))


@given(programs)
def test_random_programs_interpreted(program):
    run(program, xp.device("interpreter"))


@given(programs)
def test_per_example_gradients_of_random_programs(program):
    """vmap(grad(sum of the program)) against the loop of per-example gradients: the
    batching rules of every derivative rule's primitives (on the interpreter: the programs
    above run on both backends already)."""
    device = xp.device("interpreter")
    shape, size, steps = program["shape"], program["size"], program["steps"]
    position = program["position"] % (len(shape) + 1)
    rng = np.random.default_rng(program["seed"])
    xs = xp.asarray(np.moveaxis(rng.standard_normal((size,) + shape), 0, position), device=device)
    w = xp.asarray(rng.standard_normal(shape), device=device)
    ints = xp.asarray(rng.integers(-4, 8, size=(size, 3)), device=device)

    def loss(x, w, i):
        v = x
        for op, k in steps:
            v = apply(op, k, v, x, x * 0.5, w, i)
        return xp.sum(v * v)

    got = xp.vmap(xp.grad(loss), in_axes=(position, None, 0), out_axes=position)(xs, w, ints)
    pick = lambda a, i: a[(slice(None),) * position + (i,)]   # noqa: E731
    want = np.stack([np.asarray(xp.grad(loss)(pick(xs, i), w, ints[i])) for i in range(size)],
                    axis=position)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-8, atol=1e-10, equal_nan=True,
                               err_msg=f"program {steps}")
