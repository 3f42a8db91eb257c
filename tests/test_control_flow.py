"""tlaloc.cond, switch, while_loop, fori_loop and scan: results against NumPy (and Python
loops) on both backends, eagerly and under jit; one region op per construct; the errors."""
import numpy as np
import pytest

import tlaloc as xp
from helpers import assert_matches, to_numpy


def _hlo(*arrays):
    return xp.stablehlo(*arrays)


# ----------------------------------------------------------------------------- scan

@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "complex64", "uint8"])
@pytest.mark.parametrize("shape", [(5,), (4, 3), (0,), (0, 2), (1,)])
def test_cumulative_sum_scan_matches_numpy(tier, dtype, shape):
    rng = np.random.default_rng(0)
    data = (rng.standard_normal(shape) * 10).astype(dtype) if dtype[0] in "fc" else \
        rng.integers(0, 50, shape).astype(dtype)
    xs = xp.asarray(data, device=tier)
    init = xp.zeros(shape[1:], dtype=xs.dtype, device=tier)
    total, ys = xp.scan(lambda c, x: (c + x, c + x), init, xs)
    want = np.cumsum(data, axis=0, dtype=data.dtype)
    assert ys.shape == data.shape and ys.dtype == xs.dtype
    assert_matches(ys, want)
    assert_matches(total, data.sum(axis=0, dtype=data.dtype))


@pytest.mark.parametrize("unroll", [1, 2, 3, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_scan_reverse_and_unroll(tier, reverse, unroll):
    data = np.arange(1.0, 8.0)
    xs = xp.asarray(data, device=tier)
    carry, ys = xp.scan(lambda c, x: (c * 0.5 + x, c - x), 1.0, xs, reverse=reverse,
                        unroll=unroll)
    c, want = 1.0, np.empty_like(data)
    for t in (range(len(data) - 1, -1, -1) if reverse else range(len(data))):
        want[t] = c - data[t]
        c = c * 0.5 + data[t]
    assert_matches(carry, c)
    assert_matches(ys, want)


def test_scan_trees_length_and_no_xs(tier):
    init = {"a": xp.zeros(2, device=tier), "n": xp.asarray(0, device=tier)}

    def f(c, x):
        return {"a": c["a"] + x["v"], "n": c["n"] + 1}, (c["n"], x["w"] * 2)

    xs = {"v": xp.ones((3, 2), device=tier), "w": xp.asarray([1, 2, 3], device=tier)}
    carry, (ns, ws) = xp.scan(f, init, xs)
    assert_matches(carry["a"], np.full(2, 3.0))
    assert int(carry["n"]) == 3
    assert_matches(ns, np.arange(3))
    assert_matches(ws, np.array([2, 4, 6]))
    c, ys = xp.scan(lambda c, _: (c * 2, None), xp.asarray(1.0, device=tier), None, length=4)
    assert float(c) == 16.0 and ys is None


def test_scan_empty_trip_count(tier):
    c, ys = xp.scan(lambda c, x: (c + x, c * x), xp.asarray(2.0, device=tier),
                    xp.zeros((0,), device=tier))
    assert float(c) == 2.0 and ys.shape == (0,)
    c, ys = xp.scan(lambda c, _: (c + 1, c), xp.ones(3, device=tier), None, length=0)
    assert_matches(c, np.ones(3))
    assert ys.shape == (0, 3)


def test_scan_under_jit_is_one_while_op(tier):
    f = xp.jit(lambda xs: xp.scan(lambda c, x: (c + x, c), 0.0, xs))
    xs = xp.asarray(np.arange(100.0), device=tier)
    c, ys = f(xs)
    assert float(c) == 4950.0
    assert_matches(ys, np.concatenate([[0.0], np.cumsum(np.arange(99.0))]))
    c, ys = xp.scan(lambda c, x: (c + x, c), 0.0, xs)
    text = _hlo(c, ys)
    assert text.count('"stablehlo.while"') == 1


# ----------------------------------------------------------------------------- cond / switch

@pytest.mark.parametrize("value", [-2.0, 0.0, 3.0])
def test_cond_eager_and_jit(tier, value):
    x = xp.asarray([value, 1.0], device=tier)
    true_fn = lambda a, b: {"s": a * b, "d": a - b}
    false_fn = lambda a, b: {"s": a + b, "d": -a}
    want = true_fn(value, 2.0) if value > 0 else false_fn(value, 2.0)
    for fn in (lambda x: xp.cond(x[0] > 0, true_fn, false_fn, x[0], 2.0), xp.jit(
            lambda x: xp.cond(x[0] > 0, true_fn, false_fn, x[0], 2.0))):
        out = fn(x)
        assert float(out["s"]) == want["s"] and float(out["d"]) == want["d"]


def test_cond_numeric_predicate_and_python_bool(tier):
    x = xp.asarray(3, device=tier)
    assert int(xp.cond(x - 3, lambda v: v + 1, lambda v: v - 1, x)) == 2
    assert int(xp.cond(True, lambda v: v + 1, lambda v: v - 1, x)) == 4


def test_cond_is_one_if_op(tier):
    x = xp.asarray([1.0, 2.0], device=tier)
    r = xp.cond(x[0] > 0, lambda a: xp.sin(a), lambda a: xp.cos(a), x)
    text = _hlo(r)
    assert text.count('"stablehlo.if"') == 1


@pytest.mark.parametrize("index", [-5, 0, 1, 2, 7])
def test_switch_three_branches(tier, index):
    branches = [lambda a: a * 10, lambda a: a + 1, lambda a: xp.sqrt(a)]
    refs = [lambda a: a * 10, lambda a: a + 1, np.sqrt]
    data = np.array([4.0, 9.0])
    x = xp.asarray(data, device=tier)
    want = refs[min(max(index, 0), 2)](data)
    assert_matches(xp.switch(index, branches, x), want)
    f = xp.jit(lambda i, x: xp.switch(i, branches, x))
    assert_matches(f(xp.asarray(index, device=tier), x), want)


def test_switch_lowers_to_case(tier):
    i = xp.asarray(1, device=tier)
    r = xp.switch(i, [lambda: xp.asarray(1.0, device=tier), lambda: xp.asarray(2.0, device=tier),
                      lambda: xp.asarray(3.0, device=tier)])
    assert '"stablehlo.case"' in _hlo(r)
    assert float(r) == 2.0


# ----------------------------------------------------------------------------- while / fori

def _newton_sqrt(a, tol):
    def cond_fun(c):
        x, step = c
        return xp.any(xp.abs(step) > tol)

    def body_fun(c):
        x, _ = c
        new = 0.5 * (x + a / x)
        return new, new - x

    x, _ = xp.while_loop(cond_fun, body_fun, (a, xp.ones_like(a)))
    return x


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_newton_iteration_with_a_tolerance(tier, dtype):
    data = np.array([2.0, 9.0, 1e-3, 1e4], dtype=dtype)
    a = xp.asarray(data, device=tier)
    tol = float(np.finfo(dtype).eps) * 1e4
    for fn in (_newton_sqrt, xp.jit(_newton_sqrt, static_argnums=1)):
        out = fn(a, tol)
        assert out.dtype == a.dtype
        np.testing.assert_allclose(to_numpy(out), np.sqrt(data), rtol=1e3 * np.finfo(dtype).eps)


def test_while_counts_steps_exactly(tier):
    i, v = xp.while_loop(lambda c: c[0] < 7, lambda c: (c[0] + 1, c[1] * 2),
                         (xp.asarray(0, device=tier), xp.asarray(1, device=tier)))
    assert int(i) == 7 and int(v) == 128
    # a condition false at the start runs no step
    i, v = xp.while_loop(lambda c: c[0] < 0, lambda c: (c[0] + 1, c[1] * 2),
                         (xp.asarray(0, device=tier), xp.asarray(1, device=tier)))
    assert int(i) == 0 and int(v) == 1


@pytest.mark.parametrize("lower,upper", [(0, 10), (3, 7), (5, 5), (6, 2)])
def test_fori_loop_static_and_dynamic_bounds(tier, lower, upper):
    want = sum(i * i for i in range(lower, upper)) + 1.0
    body = lambda i, v: v + i * i
    init = xp.asarray(1.0, device=tier)
    assert float(xp.fori_loop(lower, upper, body, init)) == want
    dyn = xp.jit(lambda lo, hi, v: xp.fori_loop(lo, hi, body, v))
    assert float(dyn(xp.asarray(lower, device=tier), xp.asarray(upper, device=tier), init)) == want


def test_nested_loops(tier):
    # sum_{i<4} sum_{j<i} (i * j), a fori_loop inside a scan inside a cond
    def inner(i, acc):
        return xp.fori_loop(0, i, lambda j, a: a + i * j, acc)

    def outer(x):
        def step(c, i):
            return inner(i, c), c
        return xp.cond(x > 0, lambda: xp.scan(step, xp.asarray(0, device=tier),
                                                 xp.arange(4, device=tier))[0],
                       lambda: xp.asarray(-1, device=tier))

    want = sum(i * j for i in range(4) for j in range(i))
    x = xp.asarray(1.0, device=tier)
    assert int(outer(x)) == want
    assert int(xp.jit(outer)(x)) == want
    # a while loop whose body runs a while loop
    def collatz_steps(n):
        def steps_of(m):
            return xp.while_loop(
                lambda c: c[0] != 1,
                lambda c: (xp.where(c[0] % 2 == 0, c[0] // 2, 3 * c[0] + 1), c[1] + 1),
                (m, xp.asarray(0, device=tier)))[1]
        return xp.while_loop(lambda c: c[0] <= n, lambda c: (c[0] + 1, c[1] + steps_of(c[0])),
                             (xp.asarray(1, device=tier), xp.asarray(0, device=tier)))[1]

    def py_steps(m):
        k = 0
        while m != 1:
            m, k = (m // 2 if m % 2 == 0 else 3 * m + 1), k + 1
        return k
    assert int(collatz_steps(xp.asarray(10, device=tier))) == sum(py_steps(m) for m in range(1, 11))


def test_loop_outside_jit_records_one_operation(tier):
    x = xp.asarray(1.0, device=tier)
    r = xp.fori_loop(0, 1000, lambda i, v: v * 1.001 + 1.0, x)
    text = _hlo(r)
    assert text.count('"stablehlo.while"') == 1 and len(text) < 6000
    assert_matches(r, _py_loop(1000))


def _py_loop(n):
    v = 1.0
    for _ in range(n):
        v = v * 1.001 + 1.0
    return v


def test_program_size_is_constant_in_trip_count():
    lengths = {}
    for n in (10, 1000):
        f = xp.jit(lambda v: xp.fori_loop(0, n, lambda i, v: v * 1.001 + 1.0, v))
        out = f(xp.asarray(1.0))
        assert_matches(out, _py_loop(n))
        lengths[n] = len(_hlo(xp.fori_loop(0, n, lambda i, v: v * 1.001 + 1.0,
                                           xp.asarray(1.0))))
    assert abs(lengths[10] - lengths[1000]) < 20


def test_closed_over_values_are_operands(tier):
    w = xp.asarray([1.0, 2.0], device=tier)
    f = xp.jit(lambda x, w: xp.fori_loop(0, 3, lambda i, v: v * w, x))
    assert_matches(f(xp.ones(2, device=tier), w), np.array([1.0, 8.0]))
    assert_matches(f(xp.ones(2, device=tier), w + 1), np.array([8.0, 27.0]))


def test_axis_names_are_carried(tier):
    x = xp.rename(xp.ones((2, 3), device=tier), ("batch", "feature"))
    out = xp.fori_loop(0, 3, lambda i, v: v * 2, x)
    assert out.names == ("batch", "feature")
    c, ys = xp.scan(lambda c, r: (c + r, r * 2), xp.rename(xp.zeros(3, device=tier), ("feature",)),
                    x)
    assert ys.names == (None, "feature") and c.names == ("feature",)
    with pytest.raises(TypeError, match=r"carry element \(the only one\).*named \('feature',\)"):
        xp.scan(lambda c, r: (c + r, r), xp.zeros(3, device=tier), x)
    with pytest.raises(TypeError, match=r"body_fun changed carry element \(the only one\).*named"):
        xp.fori_loop(0, 3, lambda i, v: xp.rename(v, (None, None)), x)


# ----------------------------------------------------------------------------- errors

def test_body_changing_its_carry_is_named():
    init = {"w": xp.zeros(3), "n": xp.asarray(0)}
    with pytest.raises(TypeError, match=r"body_fun changed carry element \['w'\]: shape \(3,\) float64 -> shape \(3,\) float32"):
        xp.while_loop(lambda c: c["n"] < 3, lambda c: {"w": xp.astype(c["w"], xp.float32),
                                                       "n": c["n"] + 1}, init)
    with pytest.raises(TypeError, match=r"changed carry element \[1\]: shape \(\) float64 -> shape \(2,\)"):
        xp.scan(lambda c, x: ((c[0], c[1] + x), None), (0.0, 0.0), xp.ones((3, 2)))
    with pytest.raises(TypeError, match="structure"):
        xp.fori_loop(0, 2, lambda i, v: (v, v), xp.ones(2))
    with pytest.raises(TypeError, match="0-d bool"):
        xp.while_loop(lambda c: c, lambda c: c + 1, xp.zeros(2))
    with pytest.raises(TypeError, match="different types"):
        xp.cond(True, lambda: xp.zeros(2), lambda: xp.zeros(3))
    with pytest.raises(TypeError, match="pair"):
        xp.scan(lambda c, x: c, 0.0, xp.ones(3))


def test_bad_arguments():
    with pytest.raises(ValueError, match="leading sizes"):
        xp.scan(lambda c, x: (c, None), 0.0, (xp.ones(3), xp.ones(4)))
    with pytest.raises(ValueError, match="length"):
        xp.scan(lambda c, x: (c, None), 0.0, None)
    with pytest.raises(ValueError, match="length=2"):
        xp.scan(lambda c, x: (c, None), 0.0, xp.ones(3), length=2)
    with pytest.raises(ValueError, match="unroll"):
        xp.scan(lambda c, x: (c, None), 0.0, xp.ones(3), unroll=0)
    with pytest.raises(ValueError, match="0-d"):
        xp.scan(lambda c, x: (c, None), 0.0, xp.asarray(1.0))
    with pytest.raises(TypeError, match="callable"):
        xp.while_loop(None, lambda c: c, 0)
    with pytest.raises(ValueError, match="empty"):
        xp.switch(0, [])
    with pytest.raises(TypeError, match="integer"):
        xp.switch(1.5, [lambda: xp.zeros(1)])
    with pytest.raises(TypeError, match="0-d"):
        xp.cond(xp.ones(2) > 0, lambda: 1.0, lambda: 2.0)
    with pytest.raises(TypeError, match="not an array"):
        xp.fori_loop(0, 2, lambda i, v: v, object())


def test_bodies_that_raise_leave_no_trace_state():
    class Boom(Exception):
        pass

    def body(i, v):
        raise Boom("inside")

    with pytest.raises(Boom):
        xp.fori_loop(0, 3, body, xp.ones(2))
    with pytest.raises(Boom):
        xp.jit(lambda v: xp.while_loop(lambda c: c[0] > 0, lambda c: body(0, c), (v,)))(xp.ones(()))
    # the value-needing Python `if` inside a body is refused, naming the body
    with pytest.raises(xp.ConcretizationError, match="body_fun"):
        xp.fori_loop(0, 3, lambda i, v: v + 1 if v > 0 else v, xp.ones(()))
    # after all that, eager code still computes (no trace state left set)
    assert float(xp.sum(xp.ones(3) * 2)) == 6.0
    assert float(xp.fori_loop(0, 3, lambda i, v: v + 1, xp.ones(()))) == 4.0


# ----------------------------------------------------------------------------- export

def test_export_of_a_while_loop():
    f = xp.jit(lambda a: _newton_sqrt(a, 1e-12))
    a = xp.asarray([2.0, 16.0])
    blob = xp.export(f)(a).serialize()
    g = xp.deserialize(blob)
    np.testing.assert_allclose(to_numpy(g.call(a)), np.sqrt([2.0, 16.0]), rtol=1e-12)


# ----------------------------------------------------------------------------- vmap

def _vmap_cases(tier):
    dev = tier
    return {
        # a batched predicate: cond becomes a select of both branches
        "cond_mapped_pred": (lambda v: xp.cond(v[0] > 2, lambda a: a * 10, lambda a: -a, v),
                             np.array([[1.0, 2, 3], [4, 5, 6]])),
        "cond_shared_pred": (lambda v: xp.cond(True, lambda a: a * 10, lambda a: -a, v),
                             np.array([[1.0, 2], [3, 4]])),
        # a batched index over three branches (clamped per example)
        "switch": (lambda v: xp.switch(xp.astype(v[0], xp.int32),
                                       [lambda a: a, lambda a: a * 2, lambda a: xp.sin(a)], v),
                   np.array([[0.0, 1], [1, 2], [2, 3], [7, 4], [-3, 5]])),
        # a batched predicate: the loop runs until every example's condition is false
        "newton": (lambda a: xp.while_loop(
            lambda c: xp.abs(c[1]) > 1e-12,
            lambda c: (0.5 * (c[0] + a / c[0]), 0.5 * (c[0] + a / c[0]) - c[0]),
            (a, xp.asarray(1.0, device=dev)))[0], np.array([2.0, 9.0, 1e4, 0.25])),
        "fori_static": (lambda v: xp.fori_loop(0, 3, lambda i, c: c * v + i, v),
                        np.array([1.0, 2.0, -0.5])),
        "fori_mapped_trip_count": (lambda v: xp.fori_loop(0, xp.astype(v, xp.int64),
                                                          lambda i, c: c + 1.5, 0.0),
                                   np.array([1.0, 3.0, 0.0, 5.0])),
        "scan": (lambda row: xp.scan(lambda c, a: (c + a, c * a), 0.0, row),
                 np.array([[1.0, 2, 3], [4, 5, 6]])),
        "scan_reverse_unrolled": (lambda row: xp.scan(lambda c, a: (c * 0.5 + a, xp.stack([c, a])),
                                                      xp.zeros((), device=dev), row,
                                                      reverse=True, unroll=2)[1],
                                  np.array([[1.0, 2, 3, 4, 5], [6, 7, 8, 9, 10]])),
        "grad_of_scan": (xp.grad(lambda th: xp.sum(xp.scan(
            lambda c, a: (c * th + a, c), 1.0, xp.asarray([1.0, 2, 3], device=dev))[1])),
            np.array([0.5, 1.0, -2.0])),
    }


@pytest.mark.parametrize("case", ["cond_mapped_pred", "cond_shared_pred", "switch", "newton",
                                  "fori_static", "fori_mapped_trip_count", "scan",
                                  "scan_reverse_unrolled", "grad_of_scan"])
def test_vmap_matches_a_loop_over_examples(tier, case):
    fn, data = _vmap_cases(tier)[case]
    batch = xp.asarray(data, device=tier)
    got = xp.vmap(fn)(batch)
    per_example = [fn(xp.asarray(row, device=tier)) for row in data]
    got_leaves = xp.tree.leaves(got)
    for k, leaf in enumerate(got_leaves):
        want = np.stack([to_numpy(xp.tree.leaves(e)[k]) for e in per_example])
        assert_matches(leaf, want)
    assert_matches(xp.tree.leaves(xp.jit(xp.vmap(fn))(batch))[0], to_numpy(got_leaves[0]))


def test_the_compile_cache_tells_bodies_apart(tier):
    """Loops that differ only in their bodies (or in a static parameter) are different
    programs: the sub-program is part of the structural key."""
    x = xp.asarray([0.5, 1.0], device=tier)
    got = {}
    for name, fn in (("sin", xp.sin), ("cos", xp.cos), ("exp", xp.exp)):
        got[name] = to_numpy(xp.fori_loop(0, 3, lambda i, v: fn(v), x))
    want = {"sin": np.sin, "cos": np.cos, "exp": np.exp}
    for name, f in want.items():
        assert_matches(got[name], f(f(f(np.array([0.5, 1.0])))))
    # Python int indices inside a body are constants of its program: each index its own
    zero = xp.zeros((), device=tier)
    picked = [float(xp.fori_loop(0, 2, lambda i, v: v + x[k], zero)) for k in (0, 1, -1)]
    assert picked == [1.0, 2.0, 2.0]
    fwd = xp.scan(lambda c, r: (c * 2 + r, c), 0.0, x)[1]
    rev = xp.scan(lambda c, r: (c * 2 + r, c), 0.0, x, reverse=True)[1]
    assert_matches(fwd, np.array([0.0, 0.5]))
    assert_matches(rev, np.array([1.0, 0.0]))


# ----------------------------------------------------------------------------- random keys

def test_a_generator_advances_through_loops_and_branches():
    """A tlaloc.random.Generator used in a body draws new numbers at every step (its key is
    carried), and the generator continues after the loop: the same stream as drawing one
    number at a time outside any loop."""
    import tlaloc.random as xr
    stream = xr.Generator(7)
    want = to_numpy(xp.stack([stream.normal(()) for _ in range(6)]))

    g = xr.Generator(7)
    _, ys = xp.scan(lambda c, _: (c, g.normal(())), 0.0, None, length=4)
    assert_matches(ys, want[:4])
    assert_matches(g.normal(()), want[4])

    g = xr.Generator(7)
    total = xp.fori_loop(0, 3, lambda i, v: v + g.normal(()), 0.0)
    assert_matches(total, want[:3].sum())
    _, acc = xp.while_loop(lambda c: c[0] < 2, lambda c: (c[0] + 1, c[1] + g.normal(())),
                           (0, 0.0))
    assert_matches(acc, want[3:5].sum())
    assert_matches(xp.cond(True, lambda a: a + g.normal(()), lambda a: a, 0.0), want[5])

    g = xr.Generator(7)
    f = xp.jit(lambda: xp.scan(lambda c, _: (c, g.normal(())), 0.0, None, length=3)[1])
    assert_matches(f(), want[:3])
    assert_matches(f(), want[3:6])     # the next call continues the stream
