"""The Array object on both tiers: attributes (shape, dtype, device, ndim, size, T, mT) known
without evaluating; conversions to Python and NumPy (__bool__, __int__, __float__,
__complex__, __index__, __array__ as a writeable copy, item, tolist, __dlpack__); __repr__;
basic indexing (integers, slices with any step, ellipsis, None) against NumPy."""
import math

import ml_dtypes
import numpy as np
import pytest

import tlaloc as xp
from helpers import assert_all_match, assert_matches

ALL = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
       "float16", "bfloat16", "float32", "float64", "complex64", "complex128"]


def np_dtype(name):
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


# ----------------------------------------------------------------------------- attributes

def test_attributes_need_no_evaluation(lazy, tier):
    a = np.arange(24.0).reshape(2, 3, 4)
    x = xp.asarray(a, device=tier)
    y = xp.sin(x) * 2.0 + 1.0                     # pending
    xp.reset_cache_info()
    assert y.shape == (2, 3, 4) and isinstance(y.shape, tuple)
    assert y.dtype == xp.float64 and y.device == tier
    assert y.ndim == 3 and y.size == 24 and len(y) == 2
    assert y.mT.shape == (2, 4, 3)
    m = y[0]
    assert m.T.shape == (4, 3) and m.mT.shape == (4, 3)
    z = xp.asarray(1.0, device=tier) + 1.0
    assert (z.shape, z.ndim, z.size) == ((), 0, 1)
    e = xp.zeros((3, 0, 2), device=tier)
    assert (e.shape, e.ndim, e.size) == ((3, 0, 2), 3, 0)
    info = xp.cache_info()
    assert info["misses"] == info["hits"] == info["interpreted"] == 0, info
    assert y._node.value is None                 # still pending: nothing evaluated
    assert_all_match([("T", m.T, (np.sin(a[0]) * 2 + 1).T), ("mT", y.mT, np.swapaxes(np.sin(a) * 2 + 1, -1, -2))])
    with pytest.raises(TypeError):
        len(z)
    with pytest.raises(ValueError):
        y.T                                      # T is only for 2-d arrays


def test_array_namespace_and_constructor():
    x = xp.ones((2,))
    assert x.__array_namespace__() is xp
    for version in ("2021.12", "2022.12", "2023.12", "2024.12", "2025.12", None):
        assert x.__array_namespace__(api_version=version) is xp
    with pytest.raises(ValueError):
        x.__array_namespace__(api_version="2020.01")
    with pytest.raises(TypeError):
        xp.Array()
    with pytest.raises(TypeError):
        hash(x)
    assert xp.__array_api_version__ == "2025.12"
    assert isinstance(xp.e, float) and isinstance(xp.pi, float) and xp.newaxis is None
    assert math.isinf(xp.inf) and math.isnan(xp.nan)


def test_to_device(tier):
    other = xp.device("interpreter") if tier.platform == "cpu" else xp.device("cpu")
    x = xp.asarray(np.array([1.0, -0.0, math.nan]), device=tier) * 2.0
    assert x.to_device(tier)._node is x._node
    y = x.to_device(other)
    assert y.device == other and y.shape == x.shape and y.dtype == x.dtype
    z = (y + 1.0).to_device(tier)
    assert_matches(y, np.array([2.0, -0.0, math.nan]), exact=True)
    assert_matches(z, np.array([3.0, 1.0, math.nan]))
    assert x.to_device("interpreter").device == xp.device("interpreter")
    with pytest.raises(ValueError):
        x.to_device(tier, stream=1)
    with pytest.raises(ValueError):
        x.to_device("no-such-device")


# ----------------------------------------------------------------------------- conversions

@pytest.mark.parametrize("dtype", ALL)
def test_python_conversions(tier, dtype):
    v = np.array([3]).astype(np_dtype(dtype)) if dtype != "bool" else np.array([True])
    x = xp.asarray(v[0] if dtype != "bfloat16" else v.reshape(()), device=tier)
    assert x.shape == ()
    kind = "b" if dtype == "bool" else ("f" if dtype == "bfloat16" else np.dtype(dtype).kind)
    assert bool(x) is True
    assert bool(xp.zeros((), dtype=getattr(xp, dtype), device=tier)) is False
    if kind != "c":
        assert type(int(x)) is int and int(x) == int(v[0])
        assert type(float(x)) is float and float(x) == float(v[0])
    else:
        with pytest.raises(TypeError):
            int(x)
        with pytest.raises(TypeError):
            float(x)
    assert type(complex(x)) is complex and complex(x) == complex(v[0])
    if kind in "iu":
        assert type(x.__index__()) is int and x.__index__() == 3
        assert [10, 11, 12, 13][x] == 13
        assert range(10)[x] == 3
    else:
        with pytest.raises(TypeError):
            x.__index__()
    item = x.item()
    assert item == v[0] and type(item) in (bool, int, float, complex)
    one = xp.reshape(x, (1, 1))                  # any single-element array converts
    assert bool(one) is True and complex(one) == complex(v[0])


def test_conversion_special_values_and_errors(tier):
    z = xp.asarray(np.array([math.nan, -0.0, math.inf]), device=tier) * 1.0
    a, b, c = (z[i] for i in range(3))
    assert math.isnan(float(a)) and bool(a) is True     # nan is truthy
    assert math.copysign(1.0, float(b)) == -1.0 and bool(b) is False
    assert float(c) == math.inf
    with pytest.raises((OverflowError, ValueError)):
        int(c)
    with pytest.raises(ValueError):
        int(a)
    assert complex(xp.asarray(1 - 2j, device=tier)) == 1 - 2j
    x = xp.ones((2,), device=tier)
    with pytest.raises((TypeError, ValueError)):
        bool(x)
    for conv in (int, float, complex):
        with pytest.raises(TypeError):
            conv(x)
    with pytest.raises(TypeError):
        xp.ones((1,), dtype=xp.int64, device=tier).__index__()   # only 0-d arrays are indices
    with pytest.raises((TypeError, ValueError)):
        bool(xp.zeros((0,), device=tier))
    i = xp.asarray(2 ** 63 - 1, device=tier)
    assert int(i) == 2 ** 63 - 1
    u = xp.asarray(2 ** 64 - 1, dtype=xp.uint64, device=tier)
    assert int(u) == 2 ** 64 - 1 and u.__index__() == 2 ** 64 - 1


def test_dunder_array_is_a_writeable_copy(tier):
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    x = xp.asarray(a, device=tier) + 1
    h1 = np.asarray(x)
    h2 = x.__array__()
    assert h1.dtype == np.int32 and h1.shape == (2, 3) and h1.flags.writeable
    h1[0, 0] = 100                                # the caller owns its copy
    assert int(x[0, 0]) == 1 and h2[0, 0] == 1
    assert_matches(np.asarray(x), a + 1)
    f = np.asarray(x, dtype=np.float64)
    assert f.dtype == np.float64
    np.testing.assert_array_equal(f, a + 1.0)
    e = np.asarray(xp.zeros((0, 2), device=tier))
    assert e.shape == (0, 2) and e.dtype == np.float64
    assert np.asarray(xp.asarray(-0.0, device=tier)).shape == ()
    with pytest.raises(ValueError):
        x.__array__(dtype=np.float64, copy=False)
    # NumPy functions go through __array__. Operators with a NumPy array operand raise
    # TypeError either way round (no silent eager NumPy result); NumPy scalars act as the
    # Python scalars they hold
    assert np.sum(x) == 21
    with pytest.raises(TypeError):
        a + x
    with pytest.raises(TypeError):
        x + a
    with pytest.raises(TypeError):
        x < a
    s1, s2 = np.int64(2) + x, x * np.float32(0.5)
    assert isinstance(s1, xp.Array) and s1.dtype == xp.int32
    assert isinstance(s2, xp.Array) and s2.dtype == xp.float64
    assert_all_match([("np.int64 + x", s1, a + 3), ("x * np.float32", s2, (a + 1) * 0.5)])


def test_item_and_tolist(tier):
    a = np.array([[1.5, -0.0], [math.inf, 2.0]])
    x = xp.asarray(a, device=tier)
    assert x.tolist() == a.tolist()
    assert xp.asarray(np.int8(-3), device=tier).tolist() == -3
    assert xp.asarray(np.zeros((0, 2)), device=tier).tolist() == []
    assert x[1, 0].item() == math.inf
    with pytest.raises((TypeError, ValueError)):
        x.item()


def test_dlpack(tier):
    a = np.arange(6.0).reshape(2, 3)
    x = xp.asarray(a, device=tier) * 2.0
    assert x.__dlpack_device__() == (1, 0)
    h = np.from_dlpack(x)
    np.testing.assert_array_equal(h, a * 2)
    back = xp.from_dlpack(x)
    assert_matches(back, a * 2)


# ----------------------------------------------------------------------------- repr

def test_repr(lazy, tier):
    x = xp.asarray(np.array([[1.0, 2.5], [-0.0, math.nan]]), device=tier)
    r = repr(x)
    assert r.startswith("Array(") and "dtype=float64" in r and "nan" in r and "2.5" in r
    assert ("device=" in r) == (tier != xp.device(xp.config.default_device))
    assert str(x) == r
    assert repr(xp.zeros((0, 3), device=tier)).startswith("Array([], shape=(0, 3), dtype=float64")
    assert repr(xp.asarray(np.int8(5), device=tier)).startswith("Array(5, dtype=int8")
    assert "dtype=bfloat16" in repr(xp.ones((2,), dtype=xp.bfloat16, device=tier))
    assert "dtype=complex64" in repr(xp.asarray(np.array([1 + 2j], np.complex64), device=tier))
    big = repr(xp.arange(5000, device=tier))
    assert "..." in big and len(big) < 500     # long arrays are summarized
    y = xp.sin(x)                               # repr evaluates a pending array
    assert y._node.value is None
    assert "0.5984" in repr(y)
    assert y._node.value is not None


# ----------------------------------------------------------------------------- indexing

KEYS = [0, -1, 2, (1, 2), (-2, -3, -4), (slice(None),), slice(1, 3), slice(None, None, -1),
        slice(3, 0, -2), slice(-1, -5, -1), slice(10, None, -3), slice(None, None, 2),
        slice(5, 1), slice(0, 0), slice(-100, 100), (Ellipsis, 1), (0, Ellipsis), (Ellipsis,),
        (None,), (None, 0, None), (Ellipsis, None), (slice(None), None, slice(None, None, -1)),
        (1, slice(None, None, -1), Ellipsis, -1), (slice(1, None), 2, slice(None, 3, 2)),
        (np.int64(1),), ()]


def test_basic_indexing(tier):
    a = np.arange(4 * 5 * 6).reshape(4, 5, 6).astype(np.float32)
    x = xp.asarray(a, device=tier)
    cases = []
    for key in KEYS:
        out = x[key]
        exp = a[key]
        assert out.shape == exp.shape, (key, out.shape, exp.shape)   # known before evaluation
        cases.append((f"x[{key!r}]", out, np.asarray(exp)))
    idx = xp.asarray(np.int32(3), device=tier)
    cases.append(("0-d integer array index", x[idx], a[3]))
    cases.append(("0-d integer array in tuple", x[1, idx], a[1, 3]))
    z = xp.asarray(np.float64(2.5), device=tier)
    cases += [("0-d [()]", z[()], np.asarray(2.5)), ("0-d [...]", z[...], np.asarray(2.5)),
              ("0-d [None]", z[None], np.array([2.5])), ("0-d [None, ..., None]", z[None, ..., None], np.array([[2.5]]))]
    e = xp.asarray(np.zeros((0, 3)), device=tier)
    cases += [("empty [:, 1]", e[:, 1], np.zeros((0,))), ("empty [::-1]", e[::-1], np.zeros((0, 3)))]
    assert_all_match(cases)


def test_indexing_every_dtype(tier):
    cases = []
    for name in ALL:
        a = (np.arange(12).reshape(3, 4) % 5).astype(np_dtype(name)) if name != "bool" else np.arange(12).reshape(3, 4) % 3 == 0
        x = xp.asarray(a, device=tier)
        cases.append((f"{name} [::-1, 1::2]", x[::-1, 1::2], a[::-1, 1::2]))
        cases.append((f"{name} [2]", x[2], a[2]))
    assert_all_match(cases, exact=True)


def test_indexing_errors(tier):
    x = xp.asarray(np.arange(24.0).reshape(2, 3, 4), device=tier)
    xp.reset_cache_info()
    for key in (2, -3, (0, 3), (0, 0, 4), (0, 0, -5)):
        with pytest.raises(IndexError):
            x[key]
    with pytest.raises(IndexError):
        x[0, 0, 0, 0]                   # too many indices
    with pytest.raises(IndexError):
        x[..., 0, ...]                  # two ellipses
    with pytest.raises(IndexError):
        x[1.5]
    with pytest.raises(IndexError):
        x["a"]
    with pytest.raises((IndexError, ValueError)):
        x[::0]
    with pytest.raises(IndexError):
        xp.asarray(1.0, device=tier)[0]
    info = xp.cache_info()
    assert info["misses"] == info["hits"] == info["interpreted"] == 0, info


def test_iteration(tier):
    a = np.arange(6).reshape(3, 2)
    x = xp.asarray(a, device=tier)
    rows = list(x)
    assert len(rows) == 3 and all(r.shape == (2,) for r in rows)
    assert_all_match([(f"row {i}", r, a[i]) for i, r in enumerate(rows)])
    with pytest.raises(TypeError):
        iter(xp.asarray(1, device=tier)).__next__()
