"""Searching (argmax, argmin, nonzero, count_nonzero, searchsorted, where) and sorting (sort,
argsort) against NumPy, on both tiers. Many results are evaluated together (`xp.eval`) so one
compiled program covers many cases."""
import numpy as np
import pytest

import tlaloc as xp
from helpers import assert_matches, recorded

REAL_DTYPES = ["bool", "int8", "uint8", "int32", "int64", "uint64", "float32", "float64"]


def _data(dtype, shape=(4, 6), seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.startswith(("int", "uint")):
        return rng.integers(0, 5, shape).astype(dtype)   # small range: many ties
    a = rng.integers(-3, 4, shape).astype(dtype)
    a.flat[[1, 7, 8]] = [np.nan, -0.0, np.inf]
    a.flat[-1] = -np.inf
    a[-1] = np.nan
    return a


def check_all(pairs):
    xp.eval(*[a for a, _ in pairs])
    for a, e in pairs:
        assert_matches(a, e)


def _desc_argsort(a, axis):
    """The standard's stable descending argsort (array_api_strict's formulation)."""
    res = np.flip(np.argsort(np.flip(a, axis=axis), axis=axis, kind="stable"), axis=axis)
    return a.shape[axis] - 1 - res


@pytest.fixture(params=["on the host", "recorded"])
def host_path(request, monkeypatch):
    """On the host devices a computed array is sorted, and its argmax found, by NumPy;
    elsewhere (an accelerator, or while derivatives are recorded) the operations are
    recorded. The tests run both: "recorded" takes the accelerators' path on the CPU."""
    if request.param == "recorded":
        from tlaloc._api import _core
        monkeypatch.setattr(_core, "HOST_PLATFORMS", ())
    return request.param


# ----------------------------------------------------------------------------- argmax / argmin

@pytest.mark.parametrize("dtype", REAL_DTYPES)
def test_argmax_argmin(tier, dtype, host_path):
    a = _data(dtype)
    a[0] = a[0, 0]  # a row of ties: the first occurrence wins
    x = xp.asarray(a, device=tier)
    pairs = []
    for fn, ref in ((xp.argmax, np.argmax), (xp.argmin, np.argmin)):
        for axis in (None, 0, 1, -1):
            for keepdims in (False, True):
                pairs.append((fn(x, axis=axis, keepdims=keepdims),
                              ref(a, axis=axis, keepdims=keepdims)))
    check_all(pairs)


def test_argmax_special_cases(tier, host_path):
    a = np.array([[1.0, np.nan, 3.0, np.nan], [-0.0, 0.0, -np.inf, -np.inf], [2.0, 2.0, 1.0, np.inf]])
    x = xp.asarray(a, device=tier)
    check_all([(xp.argmax(x, axis=1), np.argmax(a, axis=1)), (xp.argmin(x, axis=1), np.argmin(a, axis=1)),
               (xp.argmax(x), np.argmax(a)), (xp.argmin(x[1:]), np.argmin(a[1:])),
               (xp.argmax(xp.asarray(5.0, device=tier)), np.argmax(np.array(5.0)))])
    with pytest.raises(ValueError):
        xp.argmax(xp.zeros((0, 3), device=tier), axis=0)
    with pytest.raises(TypeError):
        xp.argmin(xp.asarray([1j], device=tier))
    with pytest.raises(IndexError):
        xp.argmax(x, axis=2)
    with pytest.raises(TypeError):
        xp.argmax(a)
    assert xp.argmax(xp.zeros((0, 3), device=tier), axis=1).shape == (0,)


# ----------------------------------------------------------------------------- nonzero / count_nonzero

@pytest.mark.parametrize("dtype", ["bool", "int16", "uint32", "float32", "complex64"])
def test_nonzero(tier, dtype):
    rng = np.random.default_rng(1)
    for shape in [(7,), (3, 5), (2, 3, 4), (0,), (2, 0)]:
        a = (rng.integers(0, 3, shape) * (rng.integers(0, 2, shape))).astype(dtype)
        if dtype == "float32" and a.size:
            a.flat[0] = np.nan   # NaN is non-zero
            a.flat[-1] = -0.0    # -0.0 is zero
        x = xp.asarray(a, device=tier)
        got = xp.nonzero(x)
        want = np.nonzero(a)
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            assert_matches(g, w.astype(np.int64))


def test_nonzero_all_and_none(tier):
    for a in (np.ones((3, 4)), np.zeros((3, 4)), np.array([0, 0, 5])):
        got = xp.nonzero(xp.asarray(a, device=tier) * 2)   # a pending input
        for g, w in zip(got, np.nonzero(a)):
            assert_matches(g, w.astype(np.int64))
    with pytest.raises(ValueError):
        xp.nonzero(xp.asarray(1.0, device=tier))


@pytest.mark.parametrize("dtype", ["bool", "int8", "float64", "complex128"])
def test_count_nonzero(tier, dtype):
    a = _data("int8" if dtype == "complex128" else dtype, (3, 4, 5)).astype(dtype)
    x = xp.asarray(a, device=tier)
    pairs = []
    for axis in (None, 0, (0, 2), -1, ()):
        for keepdims in (False, True):
            want = np.count_nonzero(a, axis=axis, keepdims=keepdims)
            pairs.append((xp.count_nonzero(x, axis=axis, keepdims=keepdims), np.asarray(want, dtype=np.int64)))
    check_all(pairs)


# ----------------------------------------------------------------------------- searchsorted

@pytest.mark.parametrize("dtype", ["int8", "uint16", "int64", "float32", "float64"])
def test_searchsorted(tier, dtype):
    rng = np.random.default_rng(2)
    base = np.sort(rng.integers(0, 20, 33)).astype(dtype)
    queries = rng.integers(-2, 23, (4, 5)).astype(dtype)
    if dtype.startswith("float"):
        base[-3:] = np.nan
        base[0] = -np.inf
        queries.flat[:4] = [np.nan, -np.inf, np.inf, -0.0]
    pairs = []
    for n in (0, 1, 2, 5, 33):
        b = base[:n] if n < 33 else base
        xb = xp.asarray(b, device=tier)
        for side in ("left", "right"):
            pairs.append((xp.searchsorted(xb, xp.asarray(queries, device=tier), side=side),
                          np.searchsorted(b, queries, side=side).astype(np.int64)))
    check_all(pairs)


def test_searchsorted_sorter_and_scalars(tier):
    a = np.array([5.0, 1.0, np.nan, 3.0, 3.0, -1.0])
    sorter = np.argsort(a, kind="stable")
    x = xp.asarray(a, device=tier)
    s = xp.asarray(sorter, device=tier)
    v = np.array([3.0, 0.0, np.nan, 10.0])
    pairs = [(xp.searchsorted(x, xp.asarray(v, device=tier), sorter=s, side=side),
              np.searchsorted(a, v, sorter=sorter, side=side)) for side in ("left", "right")]
    pairs.append((xp.searchsorted(xp.asarray([1, 2, 3], device=tier), 2, side="right"),
                  np.asarray(np.searchsorted([1, 2, 3], 2, side="right"))))
    pairs.append((xp.searchsorted(xp.asarray([1.0, 2.0], device=tier), 1.5),
                  np.asarray(np.searchsorted([1.0, 2.0], 1.5))))
    check_all(pairs)
    with pytest.raises(ValueError):
        xp.searchsorted(xp.ones((2, 2), device=tier), x)
    with pytest.raises(ValueError):
        xp.searchsorted(x, x, side="middle")
    with pytest.raises(TypeError):
        xp.searchsorted(xp.asarray([1j], device=tier), 1j)
    with pytest.raises(TypeError):
        xp.searchsorted(x, x, sorter=xp.asarray(a, device=tier))
    with pytest.raises(ValueError):
        xp.searchsorted(x, x, sorter=xp.asarray([0, 1], device=tier))


# ----------------------------------------------------------------------------- where

def test_where(tier):
    rng = np.random.default_rng(3)
    c = rng.integers(0, 2, (3, 4)).astype(bool)
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = np.arange(4, dtype=np.int16)
    C, A, B = (xp.asarray(v, device=tier) for v in (c, a, b))
    check_all([
        (xp.where(C, A, B), np.where(c, a, b.astype(np.float32))),
        (xp.where(C, B, 7), np.where(c, b, np.int16(7))),
        (xp.where(C, 2.5, A), np.where(c, np.float32(2.5), a)),
        (xp.where(C[:, :1], A, -A), np.where(c[:, :1], a, -a)),
        (xp.where(xp.asarray(True, device=tier), B, B + 1), b),
        (xp.where(C, xp.asarray(1j, device=tier), A), np.where(c, 1j, a).astype(np.complex128)),
    ])
    with pytest.raises(TypeError):
        xp.where(A, A, A)          # condition must be bool
    with pytest.raises(TypeError):
        xp.where(C, 1, 2)          # two scalars
    with pytest.raises(TypeError):
        xp.where(c, A, A)          # a NumPy condition
    with pytest.raises(ValueError):
        xp.where(C, A, xp.ones(5, device=tier))


def test_where_keeps_a_python_scalar_0d_through_every_rule(tier):
    """A Python scalar operand of where is a 0-d operand of select (no broadcast is
    recorded), and derivatives, vmap, named axes and the compiled lowering see it so."""
    rng = np.random.default_rng(4)
    a = rng.standard_normal((3, 4))
    x = xp.asarray(a, device=tier)
    with recorded():
        y = xp.where(x > 0.25, x, -1.5)
    node = y._node
    assert node.prim.name == "select" and node.inputs[2].aval.shape == ()
    assert_matches(y, np.where(a > 0.25, a, -1.5))
    assert_matches(xp.where(x > 0.25, 2.0, x), np.where(a > 0.25, 2.0, a))
    g = xp.grad(lambda v: xp.sum(xp.where(v > 0.25, v * v, 0.5)))(x)
    assert_matches(g, np.where(a > 0.25, 2 * a, 0.0))
    v = xp.vmap(lambda row: xp.where(row > 0.25, row, 3.0))(x)
    assert_matches(v, np.where(a > 0.25, a, 3.0))
    named = xp.asarray(a, device=tier, names=("rows", "cols"))
    assert xp.where(named > 0.25, named, 0.0).names == ("rows", "cols")
    f = xp.jit(lambda v: xp.where(v > 0.25, v, -1.5))
    assert_matches(f(x), np.where(a > 0.25, a, -1.5))


# ----------------------------------------------------------------------------- sort / argsort


@pytest.mark.parametrize("dtype", REAL_DTYPES + ["float16"])
def test_sort_argsort(tier, dtype, host_path):
    a = _data(dtype, (5, 7))
    x = xp.asarray(a, device=tier)
    pairs = []
    for axis in (-1, 0):
        pairs.append((xp.argsort(x, axis=axis), np.argsort(a, axis=axis, kind="stable")))
        pairs.append((xp.argsort(x, axis=axis, descending=True), _desc_argsort(a, axis)))
        pairs.append((xp.sort(x, axis=axis), np.sort(a, axis=axis, kind="stable")))
        pairs.append((xp.sort(x, axis=axis, descending=True),
                      np.flip(np.sort(a, axis=axis, kind="stable"), axis=axis)))
    pairs.append((xp.argsort(x, stable=False), np.argsort(a, kind="stable")))
    check_all(pairs)


def test_sort_special_values_and_shapes(tier, host_path):
    v = np.array([3.0, np.nan, -0.0, 0.0, 1.0, -np.nan, -np.inf, 1.0, np.inf, 0.0, -0.0])
    x = xp.asarray(v, device=tier)
    check_all([
        (xp.argsort(x), np.argsort(v, kind="stable")),     # -0.0 == 0.0: stable among zeros
        (xp.argsort(x, descending=True), _desc_argsort(v, 0)),
        (xp.argsort(xp.asarray(np.zeros((3, 0)), device=tier)), np.zeros((3, 0), np.int64)),
        (xp.sort(xp.asarray(np.zeros((0, 2)), device=tier), axis=0), np.zeros((0, 2))),
        (xp.argsort(xp.asarray([4], device=tier)), np.array([0])),
    ])
    s = np.asarray(xp.sort(x))
    assert np.isnan(s[-2:]).all() and (s[:-2] == np.sort(v)[:-2]).all()
    # -0.0 before +0.0 (after it, descending), on both paths
    assert np.signbit(s[1:5]).tolist() == [True, True, False, False]
    d = np.asarray(xp.sort(x, descending=True))
    assert np.signbit(d[6:10]).tolist() == [False, False, True, True]
    z = np.asarray(xp.sort(xp.asarray(np.array([[0.0, -0.0, -1.0], [-0.0, 2.0, 0.0]]),
                                      device=tier), axis=1))
    assert np.signbit(z).tolist() == [[True, True, False], [True, False, False]]
    with pytest.raises(TypeError):
        xp.sort(xp.asarray([1j, 2j], device=tier))
    with pytest.raises(IndexError):
        xp.sort(x, axis=1)
    with pytest.raises(ValueError):
        xp.argsort(xp.asarray(1.0, device=tier))


def test_sort_long_rows(tier, host_path):
    """A larger sort (many comparator calls) and a permutation check."""
    rng = np.random.default_rng(4)
    a = rng.integers(0, 50, (3, 500)).astype(np.int32)
    x = xp.asarray(a, device=tier)
    check_all([(xp.argsort(x, axis=1), np.argsort(a, axis=1, kind="stable")),
               (xp.argsort(x, axis=1, descending=True), _desc_argsort(a, 1))])


def test_bfloat16_order(tier, host_path):
    """bfloat16 keys sort like their float32 values (NaN last, zeros equal)."""
    v = np.array([3.0, np.nan, 1.0, -0.0, 0.0, -np.inf, 1.0, -np.nan], dtype=np.float32)
    x = xp.asarray(v, device=tier)
    xb = xp.astype(x, xp.bfloat16)
    check_all([(xp.argsort(xb), np.argsort(v, kind="stable")),
               (xp.argsort(xb, descending=True), _desc_argsort(v, 0)),
               (xp.astype(xp.sort(xb), xp.float32), np.sort(v)),
               (xp.argmax(xb), np.argmax(v)), (xp.argmin(xb[2:-1]), np.argmin(v[2:-1])),
               (xp.searchsorted(xp.sort(xb), xb), np.searchsorted(np.sort(v), v))])


def test_sort_primitive_float_keys(tier):
    """The sort primitive's own NaN-aware float comparator (the namespace sorts integer
    images of floats instead): both tiers agree with NumPy's stable order."""
    from tlaloc._api._core import wrap
    from tlaloc._graph import bind
    from tlaloc._prims import sort as so
    v = np.array([3.0, np.nan, -0.0, 0.0, 1.0, -np.nan, -np.inf, 1.0, np.inf, 0.0], np.float32)
    w = np.array([1, 0, 1, 0, 2, 2, 0, 1, 2, 0], np.int8)
    order = np.arange(v.size)
    x, y, i = (xp.asarray(a, device=tier)._node for a in (v, w, order))
    pairs = []
    for desc in (False, True):
        params = dict(dimension=0, descending=desc)
        pairs.append((wrap(bind(so.sort, (x, i), dict(params, num_keys=1, output=1))),
                      _desc_argsort(v, 0) if desc else np.argsort(v, kind="stable")))
        if not desc:   # w is the primary key, then v
            pairs.append((wrap(bind(so.sort, (y, x, i), dict(params, num_keys=2, output=2))),
                          np.lexsort((v, w))))
    check_all(pairs)
