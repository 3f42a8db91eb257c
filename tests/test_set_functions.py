"""unique_all / unique_counts / unique_inverse / unique_values and isin against NumPy
(np.unique with equal_nan=False: every NaN is its own unique value), on both tiers."""
import numpy as np
import pytest

import tlaloc as xp
from helpers import assert_matches


def _np_unique_all(a):
    v, i, inv, c = np.unique(a, return_index=True, return_inverse=True, return_counts=True,
                             equal_nan=False)
    return v, i.astype(np.int64), inv.reshape(a.shape).astype(np.int64), c.astype(np.int64)


def _cases(dtype):
    rng = np.random.default_rng(0)
    if dtype == "bool":
        return [np.array([True, False, True]), np.array([[True], [True]])]
    if dtype.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        a = rng.integers(0, 6, (4, 5)).astype(dtype)
        a.flat[:2] = [info.max, info.min]
        return [a, np.array([3], dtype=dtype), np.arange(6, dtype=dtype)[::-1].copy()]
    a = rng.integers(-3, 3, (3, 7)).astype(dtype)
    a.flat[:6] = [np.nan, -0.0, 0.0, np.inf, np.nan, -np.inf]
    return [a, np.array([np.nan, np.nan], dtype=dtype), np.array([-0.0, 0.0, -0.0], dtype=dtype)]


@pytest.fixture(params=["host sort", "recorded sort"])
def unique_path(request, monkeypatch):
    """On the host devices the unique functions sort with NumPy; elsewhere (an accelerator)
    they record the sort. Both run here: "recorded sort" takes the accelerators' path on
    the CPU."""
    if request.param == "recorded sort":
        from tlaloc._api import _core
        monkeypatch.setattr(_core, "HOST_PLATFORMS", ())
    return request.param


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int64", "float32", "float64"])
def test_unique(tier, dtype, unique_path):
    for a in _cases(dtype):
        x = xp.asarray(a, device=tier)
        v, i, inv, c = _np_unique_all(a)
        got = xp.unique_all(x)
        assert got._fields == ("values", "indices", "inverse_indices", "counts")
        assert_matches(got.values, v)
        assert_matches(got.indices, i)
        assert_matches(got.inverse_indices, inv)
        assert_matches(got.counts, c)
        uc = xp.unique_counts(x)
        assert_matches(uc.values, v)
        assert_matches(uc.counts, c)
        ui = xp.unique_inverse(x)
        assert_matches(ui.values, v)
        assert_matches(ui.inverse_indices, inv)
        assert_matches(xp.unique_values(x), v)
        if dtype.startswith("float"):
            # reconstructing x from the inverse indices gives x back (NaN included)
            assert_matches(xp.take(got.values, xp.reshape(got.inverse_indices, (-1,))), a.ravel())


def test_unique_empty_0d_and_pending(tier, unique_path):
    e = xp.asarray(np.zeros((2, 0), np.float32), device=tier)
    r = xp.unique_all(e)
    assert r.values.shape == (0,) and r.values.dtype == xp.float32
    assert r.indices.shape == (0,) and r.counts.shape == (0,)
    assert r.inverse_indices.shape == (2, 0) and r.inverse_indices.dtype == xp.int64
    r = xp.unique_all(xp.asarray(7, device=tier))
    assert_matches(r.values, np.array([7]))
    assert_matches(r.inverse_indices, np.array(0))
    # a pending input (its graph is computed for the count, then the values are recorded)
    x = xp.asarray(np.array([3, 1, 3, 2]), device=tier)
    y = x * 2 + 1
    assert_matches(xp.unique_values(y), np.array([3, 5, 7]))


def test_unique_complex(tier):
    a = np.array([1 + 1j, 1 - 1j, 0j, 1 + 1j, -1j, 0j], dtype=np.complex64)
    v, i, inv, c = _np_unique_all(a)
    got = xp.unique_all(xp.asarray(a, device=tier))
    assert_matches(got.values, v)
    assert_matches(got.indices, i)
    assert_matches(got.inverse_indices, inv)
    assert_matches(got.counts, c)


@pytest.mark.parametrize("dtype", ["int16", "uint8", "float32", "float64", "bool"])
def test_isin(tier, dtype):
    rng = np.random.default_rng(1)
    a = rng.integers(0, 10, (3, 4)).astype(dtype)
    b = rng.integers(0, 10, 6).astype(dtype)
    if dtype.startswith("float"):
        a.flat[:3] = [np.nan, -0.0, np.inf]
        b[:3] = [np.nan, 0.0, 2.5]
    A, B = xp.asarray(a, device=tier), xp.asarray(b, device=tier)
    pairs = []
    for x2 in (b, b[:1], b[:0], b.reshape(2, 3)):
        X2 = xp.asarray(x2, device=tier)
        for invert in (False, True):
            pairs.append((xp.isin(A, X2, invert=invert), np.isin(a, x2, invert=invert)))
    pairs.append((xp.isin(B, A), np.isin(b, a)))
    xp.eval(*[p for p, _ in pairs])
    for got, want in pairs:
        assert_matches(got, want)


def test_isin_scalars_promotion_and_errors(tier):
    a = np.array([1, 2, 3], dtype=np.int8)
    A = xp.asarray(a, device=tier)
    assert_matches(xp.isin(A, 2), np.isin(a, 2))
    assert_matches(xp.isin(2, A), np.asarray(True))
    assert_matches(xp.isin(5, A, invert=True), np.asarray(True))
    f = xp.asarray([1.5, 2.0], device=tier)
    assert_matches(xp.isin(A, f), np.isin(a, [1.5, 2.0]))    # int8 with float64: compared as floats
    c = xp.asarray([1 + 1j, 2 + 0j], device=tier)
    assert_matches(xp.isin(A, c), np.isin(a, [1 + 1j, 2 + 0j]))
    with pytest.raises(TypeError):
        xp.isin(1, 2)
    with pytest.raises(TypeError):
        xp.isin(A, [1, 2])
    with pytest.raises(TypeError):
        xp.unique_values(np.array([1, 2]))


def test_long_inputs(tier, unique_path):
    """Inputs long enough that the internal prefix sums take the blocked path."""
    rng = np.random.default_rng(2)
    a = rng.integers(0, 300, 5000).astype(np.int32)
    x = xp.asarray(a, device=tier)
    v, i, inv, c = _np_unique_all(a)
    got = xp.unique_all(x)
    for g, w in zip(got, (v, i, inv, c)):
        assert_matches(g, w)
    assert_matches(xp.isin(x, xp.asarray(a[:100], device=tier)), np.isin(a, a[:100]))


def test_unique_values_derivative_reaches_the_first_occurrences(tier, unique_path):
    v = np.array([1.0, 2.0, 1.0, 3.0, -0.0, 0.0, 2.0])
    g = xp.grad(lambda x: xp.sum(xp.unique_values(x) ** 3))(xp.asarray(v, device=tier))
    expected = np.zeros_like(v)
    for i in (0, 1, 3, 4):          # each value's first occurrence (-0.0 before 0.0)
        expected[i] = 3 * v[i] ** 2
    assert_matches(g, expected)


def test_unique_inside_jit_asks_for_a_value(unique_path):
    with pytest.raises(xp.ConcretizationError):
        xp.jit(xp.unique_values)(xp.asarray([1.0, 2.0]))


def test_unique_bfloat16_matches_float32(tier, unique_path):
    """bfloat16 in NumPy's order (NaN last, each NaN its own value, -0.0 == +0.0), as the
    same exactly representable values in float32 (NumPy's argsort of ml_dtypes' bfloat16
    puts NaNs among the numbers, so the host path must not take it)."""
    a = np.array([3, 1, np.nan, -0.0, 0.0, 1, np.nan, -2], dtype=np.float32)
    want = xp.unique_all(xp.asarray(a, device=tier))
    got = xp.unique_all(xp.astype(xp.asarray(a, device=tier), xp.bfloat16))
    assert got.values.dtype == xp.bfloat16
    assert_matches(xp.astype(got.values, xp.float32), np.asarray(want.values))
    for g, w in zip(got[1:], want[1:]):
        assert_matches(g, np.asarray(w))
