"""Reductions (sum, prod, max, min, mean, var, std, all, any) with axis, keepdims and dtype,
and the contractions (matmul, tensordot, vecdot, matrix_transpose), on both tiers against
NumPy: every dtype a reduction accepts, special values, 0-d and empty inputs, empty axes.
Each test evaluates its checks together (one program per tier)."""
import itertools
import math
import warnings

import array_api_strict as strict
import ml_dtypes
import numpy as np
import pytest

import tlaloc as xp
from helpers import assert_all_match, special_values

BF16 = np.dtype(ml_dtypes.bfloat16)
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]
COMPLEX = ["complex64", "complex128"]
ALL = ["bool"] + INTS + FLOATS + COMPLEX
AXES = [None, 0, 1, -1, (0, 2), (2, 0), (), (0, 1, 2), -3]


def np_dtype(name):
    return BF16 if name == "bfloat16" else np.dtype(name)


def sample(dtype, shape=(2, 3, 4), seed=0):
    """Small values (sums and products stay exact in every integer dtype)."""
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) < 0.6
    v = rng.integers(-2, 3, size=shape)
    if np.dtype(np_dtype(dtype)).kind == "u" or dtype.startswith("uint"):
        v = np.abs(v)
    if dtype in COMPLEX:
        return (v + 1j * rng.integers(-2, 3, size=shape)).astype(dtype)
    if dtype in FLOATS:
        return (v * 0.5).astype(np_dtype(dtype))
    return v.astype(dtype)


def accumulator(dtype):
    """The standard's dtype for sum and prod with dtype=None."""
    if dtype == "bool" or dtype in INTS[:4]:
        return "int64"
    if dtype in INTS[4:]:
        return "uint64"
    return dtype


def _np_reduce(fn, a, axis, keepdims, **kw):
    if axis == ():
        out = np.asarray(a)
        return out if not keepdims else out
    return fn(a, axis=axis, keepdims=keepdims, **kw)


def case(label, out, expected):
    expected = np.asarray(expected)
    assert out.shape == expected.shape, (label, out.shape, expected.shape)  # before evaluation
    return (label, out, expected)


# ----------------------------------------------------------------------------- sum / prod

@pytest.mark.parametrize("dtype", ALL)
def test_sum_prod(tier, dtype):
    a = sample(dtype)
    x = xp.asarray(a, device=tier)
    acc = accumulator(dtype)
    cases = []
    for axis, keepdims in itertools.product(AXES, (False, True)):
        for name, np_fn in (("sum", np.sum), ("prod", np.prod)):
            out = getattr(xp, name)(x, axis=axis, keepdims=keepdims)
            assert str(out.dtype) == acc, (name, dtype)
            exp = _np_reduce(np_fn, a.astype(np_dtype(acc)), axis, keepdims)
            cases.append(case(f"{name} axis={axis} keepdims={keepdims}", out, exp))
    for target in ("float64", "int32", "complex128") if dtype not in COMPLEX else ("complex64",):
        for name, np_fn in (("sum", np.sum), ("prod", np.prod)):
            out = getattr(xp, name)(x, axis=1, dtype=getattr(xp, target))
            assert str(out.dtype) == target
            cases.append(case(f"{name} dtype={target}", out, np_fn(a.astype(target), axis=1, dtype=target)))
    assert_all_match(cases, zero_signs=False)


def test_sum_prod_special_values_and_empty(tier):
    v = special_values("float64")
    inf, nan = math.inf, math.nan
    rows = np.array([[1.0, inf, 2.0], [inf, -inf, 0.0], [nan, 1.0, 1.0], [0.0, inf, 3.0],
                     [-0.0, -0.0, -0.0], [1e308, 1e308, -1e308]])
    x = xp.asarray(rows, device=tier)
    e = xp.asarray(np.zeros((0, 3)), device=tier)
    z = xp.asarray(np.asarray(2.5), device=tier)
    i = xp.asarray(np.zeros((2, 0), dtype=np.int8), device=tier)
    cases = [case("sum rows", xp.sum(x, axis=1), np.sum(rows, axis=1)),
             case("prod rows", xp.prod(x, axis=1), np.prod(rows, axis=1)),
             case("sum specials", xp.sum(xp.asarray(v, device=tier)), np.sum(v)),
             case("sum empty", xp.sum(e), np.asarray(0.0)),
             case("prod empty", xp.prod(e), np.asarray(1.0)),
             case("sum empty axis 0", xp.sum(e, axis=0), np.zeros(3)),
             case("prod empty axis 0", xp.prod(e, axis=0), np.ones(3)),
             case("sum empty axis 1", xp.sum(e, axis=1), np.zeros(0)),
             case("sum empty int8", xp.sum(i, axis=1), np.zeros(2, np.int64)),
             case("prod empty int8", xp.prod(i, axis=1, keepdims=True), np.ones((2, 1), np.int64)),
             case("sum 0-d", xp.sum(z), np.asarray(2.5)),
             case("sum 0-d keepdims", xp.sum(z, keepdims=True), np.asarray(2.5)),
             case("prod 0-d axis=()", xp.prod(z, axis=()), np.asarray(2.5)),
             case("sum int8 0-d axis=()", xp.sum(xp.asarray(np.int8(-3), device=tier), axis=()),
                  np.asarray(-3, np.int64)),
             case("sum wraps int64", xp.sum(xp.asarray(np.array([2 ** 62, 2 ** 62]), device=tier)),
                  np.asarray(-(2 ** 63)))]
    assert_all_match(cases, zero_signs=False)


# ----------------------------------------------------------------------------- max / min

@pytest.mark.parametrize("dtype", ["bool"] + INTS + FLOATS)
def test_max_min(tier, dtype):
    a = sample(dtype)
    x = xp.asarray(a, device=tier)
    cases = []
    for axis, keepdims in itertools.product(AXES, (False, True)):
        for name, np_fn in (("max", np.max), ("min", np.min)):
            out = getattr(xp, name)(x, axis=axis, keepdims=keepdims)
            assert out.dtype == x.dtype
            cases.append(case(f"{name} axis={axis} keepdims={keepdims}", out,
                              _np_reduce(np_fn, a, axis, keepdims)))
    if dtype != "bool":
        v = special_values(dtype) if dtype not in ("float16", "bfloat16") else \
            np.array([0.0, -1.0, np.inf, -np.inf, 2.5], dtype=np_dtype(dtype))
        s = xp.asarray(v, device=tier)
        cases.append(case("max specials", xp.max(s), np.max(v)))
        cases.append(case("min specials", xp.min(s), np.min(v)))
        if dtype in INTS:  # extremes survive (the identities are the dtype's limits)
            info = np.iinfo(dtype)
            ext = np.array([info.min, info.max], dtype=dtype)
            e = xp.asarray(ext, device=tier)
            cases.append(case("max extremes", xp.max(e), np.asarray(info.max, dtype)))
            cases.append(case("min extremes", xp.min(e), np.asarray(info.min, dtype)))
    assert_all_match(cases, zero_signs=False)


def test_max_min_nan_and_errors(tier):
    nan, inf = math.nan, math.inf
    rows = np.array([[1.0, nan, 3.0], [-inf, -inf, -inf], [nan, nan, nan], [inf, 0.0, -0.0]])
    x = xp.asarray(rows, device=tier)
    assert_all_match([case("max rows", xp.max(x, axis=1), np.max(rows, axis=1)),
                      case("min rows", xp.min(x, axis=1), np.min(rows, axis=1)),
                      case("max cols", xp.max(x, axis=0), np.max(rows, axis=0)),
                      case("max 0-d", xp.max(xp.asarray(-0.5, device=tier)), np.asarray(-0.5))],
                     zero_signs=False)
    e = xp.asarray(np.zeros((0, 3)), device=tier)
    with pytest.raises(ValueError):
        xp.max(e)
    with pytest.raises(ValueError):
        xp.min(e, axis=0)
    assert xp.max(e, axis=1).shape == (0,)      # no zero-size reduction: fine
    with pytest.raises(TypeError):
        xp.max(xp.asarray(np.array([1j]), device=tier))


# ----------------------------------------------------------------------------- mean / var / std

@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex64", "complex128",
                                   "int16", "uint8", "bool"])
def test_mean(tier, dtype):
    a = sample(dtype)
    x = xp.asarray(a, device=tier)
    result = dtype if dtype in FLOATS + COMPLEX else "float64"
    cases = []
    for axis, keepdims in itertools.product(AXES, (False, True)):
        out = xp.mean(x, axis=axis, keepdims=keepdims)
        assert str(out.dtype) == result
        exp = _np_reduce(np.mean, a.astype(np.float64 if a.dtype.kind in "biu" else a.dtype), axis, keepdims)
        cases.append(case(f"mean axis={axis} keepdims={keepdims}", out, exp.astype(result)))
    assert_all_match(cases, zero_signs=False)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_var_std(tier, dtype):
    a = sample(dtype, seed=3) * 3 + sample(dtype, seed=4)
    x = xp.asarray(a, device=tier)
    result = dtype if dtype in FLOATS else "float64"
    base = a.astype(np.float64 if dtype == "int32" else a.dtype)
    cases = []
    for axis, keepdims, correction in [(None, False, 0), (0, True, 1), (-1, False, 0.5), ((0, 2), True, 0),
                                       ((0, 2), False, 1), ((), False, 0), (1, True, 2.5)]:
        for name, np_fn in (("var", np.var), ("std", np.std)):
            out = getattr(xp, name)(x, axis=axis, keepdims=keepdims, correction=correction)
            assert str(out.dtype) == result
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # ddof >= n: inf or nan
                exp = _np_reduce(np_fn, base, axis, keepdims, ddof=correction).astype(result)
                if axis == ():  # over no axes every deviation is 0: var is 0 / (1 - correction)
                    exp = np_fn(base[..., None], axis=-1, ddof=correction).astype(result)
            cases.append(case(f"{name} axis={axis} keepdims={keepdims} correction={correction}", out, exp))
    assert_all_match(cases, zero_signs=False)


def test_statistics_special_values(tier):
    nan, inf = math.nan, math.inf
    rows = np.array([[1.0, 2.0, 4.0], [1.0, nan, 2.0], [inf, 1.0, 2.0], [5.0, 5.0, 5.0]])
    x = xp.asarray(rows, device=tier)
    e = xp.asarray(np.zeros((0, 2)), device=tier)
    one = xp.asarray(np.array([3.0]), device=tier)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        cases = [case("mean rows", xp.mean(x, axis=1), np.mean(rows, axis=1)),
                 case("var rows", xp.var(x, axis=1), np.var(rows, axis=1)),
                 case("std rows", xp.std(x, axis=1), np.std(rows, axis=1)),
                 case("mean empty", xp.mean(e), np.asarray(nan)),
                 case("mean empty axis 0", xp.mean(e, axis=0), np.full(2, nan)),
                 case("var empty", xp.var(e, axis=0), np.full(2, nan)),
                 case("var of one, correction=1", xp.var(one, correction=1), np.var(np.array([3.0]), ddof=1)),
                 # the standard: N - correction <= 0 gives NaN (NumPy gives inf where the sum is not 0)
                 case("std correction past n", xp.std(x, axis=1, correction=3), np.full(4, nan)),
                 case("mean 0-d", xp.mean(xp.asarray(2.5, device=tier)), np.asarray(2.5))]
    assert_all_match(cases, zero_signs=False)
    with pytest.raises(TypeError):
        xp.var(xp.asarray(np.array([1j]), device=tier))
    with pytest.raises(TypeError):
        xp.std(x, correction="1")
    with pytest.raises(TypeError):
        xp.var(x, correction=True)


# ----------------------------------------------------------------------------- all / any

@pytest.mark.parametrize("dtype", ["bool", "int8", "uint64", "float32", "float64", "complex64"])
def test_all_any(tier, dtype):
    a = sample(dtype, seed=5)
    if dtype == "float64":
        a.flat[:3] = [np.nan, -0.0, np.inf]  # nan and inf are true, -0.0 is false
    x = xp.asarray(a, device=tier)
    cases = []
    for axis, keepdims in itertools.product(AXES, (False, True)):
        for name, np_fn in (("all", np.all), ("any", np.any)):
            out = getattr(xp, name)(x, axis=axis, keepdims=keepdims)
            assert out.dtype == xp.bool
            exp = _np_reduce(np_fn, a, axis, keepdims)
            cases.append(case(f"{name} axis={axis} keepdims={keepdims}", out, np.asarray(exp).astype(bool)))
    e = xp.asarray(np.zeros((0, 2), dtype=a.dtype), device=tier)
    cases += [case("all empty", xp.all(e), np.asarray(True)), case("any empty", xp.any(e), np.asarray(False)),
              case("all empty axis 0", xp.all(e, axis=0), np.ones(2, bool)),
              case("any empty axis 0", xp.any(e, axis=0), np.zeros(2, bool))]
    assert_all_match(cases)


# ----------------------------------------------------------------------------- dtypes vs strict

@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "mean", "var", "std", "all", "any"])
def test_reduction_dtypes_match_array_api_strict(name):
    compared = 0
    for dtype in ["bool"] + INTS + ["float32", "float64"] + COMPLEX:
        s = strict.ones((2,), dtype=getattr(strict, dtype))
        try:
            expected = getattr(strict, name)(s).dtype
        except TypeError:
            continue
        got = getattr(xp, name)(xp.ones((2,), dtype=dtype)).dtype
        assert str(got) == str(expected).rsplit(".", 1)[-1], (name, dtype)
        compared += 1
    assert compared > 0


def test_axis_errors():
    x = xp.ones((2, 3))
    for fn in (xp.sum, xp.prod, xp.max, xp.min, xp.mean, xp.var, xp.std, xp.all, xp.any):
        with pytest.raises(IndexError):
            fn(x, axis=2)
        with pytest.raises(IndexError):
            fn(x, axis=(0, -3))
        with pytest.raises(ValueError):
            fn(x, axis=(1, -1))
        with pytest.raises(TypeError):
            fn(x, axis=1.0)
        with pytest.raises(TypeError):
            fn(np.ones((2, 3)))
    with pytest.raises(TypeError):
        xp.sum(x, dtype="not a dtype")


# ----------------------------------------------------------------------------- contractions

MATMUL_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)),
                 ((2, 1, 2, 3), (5, 3, 2)), ((0, 3), (3, 4)), ((2, 0), (0, 3)), ((1, 3), (3, 1)),
                 ((4, 0, 3), (3, 2))]


@pytest.mark.parametrize("dtype", ["int8", "int64", "uint16", "float16", "float32", "float64",
                                   "complex64", "complex128"])
def test_matmul(tier, dtype):
    cases = []
    for i, (s1, s2) in enumerate(MATMUL_SHAPES):
        a, b = sample(dtype, s1, seed=i), sample(dtype, s2, seed=i + 50)
        out = xp.asarray(a, device=tier) @ xp.asarray(b, device=tier)
        exp = np.matmul(a.astype(np.float64) if dtype == "float16" else a,
                        b.astype(np.float64) if dtype == "float16" else b).astype(np_dtype(dtype))
        cases.append(case(f"{s1} @ {s2}", out, exp))
        cases.append(case(f"matmul{s1, s2}", xp.matmul(xp.asarray(a, device=tier), xp.asarray(b, device=tier)), exp))
    assert_all_match(cases, zero_signs=False)


def test_matmul_promotion_and_errors(tier):
    a = sample("int32", (2, 3))
    b = sample("float32", (3, 2), seed=1)
    x, y = xp.asarray(a, device=tier), xp.asarray(b, device=tier)
    out = x @ y
    assert out.dtype == xp.float32
    assert_all_match([case("int32 @ float32", out, (a.astype(np.float32) @ b))], zero_signs=False)
    with pytest.raises(ValueError):
        x @ x                                   # (2, 3) @ (2, 3)
    with pytest.raises(ValueError):
        xp.matmul(xp.asarray(1.0, device=tier), y)   # 0-d
    with pytest.raises(ValueError):
        xp.matmul(xp.ones((2, 2, 3), device=tier), xp.ones((3, 3, 2), device=tier))  # batch 2 vs 3
    with pytest.raises(TypeError):
        xp.matmul(xp.ones((2, 2), dtype=xp.bool, device=tier), xp.ones((2, 2), dtype=xp.bool, device=tier))
    with pytest.raises(TypeError):
        xp.matmul(x, b)


def test_matmul_with_vectors_contracts_them_directly(tier):
    # a vector operand (with a vector or a matrix) is one contraction; with a stack of
    # matrices it is promoted to a matrix; mismatched lengths are errors either way
    v, w, m = sample("float64", (3,)), sample("float64", (4,), seed=1), sample("float64", (3, 4), seed=2)
    x, y, z = (xp.asarray(a, device=tier) for a in (v, w, m))
    stack = sample("float64", (2, 4, 3), seed=3)
    assert_all_match([case("v @ M", x @ z, v @ m), case("M.T @ v", xp.matrix_transpose(z) @ x, m.T @ v),
                      case("w @ w", y @ y, w @ w),
                      case("stack @ v", xp.asarray(stack, device=tier) @ x, stack @ v)],
                     zero_signs=False)
    for bad in ((x, y), (y, z), (z, x)):
        with pytest.raises(ValueError, match="contracted dimensions differ"):
            bad[0] @ bad[1]
    g = xp.grad(lambda a, b: xp.sum(a @ b), argnums=(0, 1))(x, z)
    np.testing.assert_allclose(np.asarray(g[0]), m.sum(axis=1))
    np.testing.assert_allclose(np.asarray(g[1]), np.outer(v, np.ones(4)))


def test_tensordot(tier):
    a = sample("float64", (2, 3, 4), seed=1)
    b = sample("float64", (3, 4, 5), seed=2)
    c = sample("float64", (4, 2), seed=3)
    x, y, z = (xp.asarray(v, device=tier) for v in (a, b, c))
    cases = [case("axes=2", xp.tensordot(x, y), np.tensordot(a, b)),
             case("axes=1", xp.tensordot(x, z, axes=1), np.tensordot(a, c, axes=1)),
             case("axes=0", xp.tensordot(z, z, axes=0), np.tensordot(c, c, axes=0)),
             case("pairs", xp.tensordot(x, y, axes=((1, 2), (0, 1))), np.tensordot(a, b, axes=((1, 2), (0, 1)))),
             case("pairs reordered", xp.tensordot(x, z, axes=([2, 0], [0, 1])), np.tensordot(a, c, axes=([2, 0], [0, 1]))),
             case("negative axes", xp.tensordot(x, y, axes=((-2,), (-3,))), np.tensordot(a, b, axes=((-2,), (-3,)))),
             case("0-d", xp.tensordot(xp.asarray(2.0, device=tier), x, axes=0), np.tensordot(2.0, a, axes=0))]
    cplx = sample("complex64", (3, 2), seed=4)
    cases.append(case("complex (no conjugation)", xp.tensordot(xp.asarray(cplx, device=tier), xp.asarray(cplx, device=tier),
                                                               axes=((0,), (0,))),
                      np.tensordot(cplx, cplx, axes=((0,), (0,)))))
    assert_all_match(cases, zero_signs=False)
    with pytest.raises(ValueError):
        xp.tensordot(x, z, axes=2)        # (3, 4) vs (4, 2)
    with pytest.raises(ValueError):
        xp.tensordot(x, y, axes=4)
    with pytest.raises(ValueError):
        xp.tensordot(x, y, axes=((0, 1), (0,)))
    with pytest.raises(TypeError):
        xp.tensordot(x, y, axes=1.5)


def test_vecdot(tier):
    a = sample("float64", (2, 3, 4), seed=5)
    b = sample("float64", (3, 4), seed=6)
    c1 = sample("complex128", (3, 2), seed=7)
    c2 = sample("complex128", (3, 2), seed=8)
    x, y = xp.asarray(a, device=tier), xp.asarray(b, device=tier)
    i = sample("int16", (5,), seed=9)
    cases = [case("last axis, broadcast", xp.vecdot(x, y), np.sum(a * b, axis=-1)),
             case("axis=-2", xp.vecdot(x, y, axis=-2), np.sum(a * b, axis=-2)),
             case("axis=1", xp.vecdot(x, x, axis=1), np.sum(a * a, axis=1)),
             case("complex conjugates x1", xp.vecdot(xp.asarray(c1, device=tier), xp.asarray(c2, device=tier), axis=0),
                  np.sum(np.conj(c1) * c2, axis=0)),
             case("int16 1-d", xp.vecdot(xp.asarray(i, device=tier), xp.asarray(i, device=tier)), np.asarray(np.sum(i * i), np.int16)),
             case("empty", xp.vecdot(xp.asarray(np.zeros((2, 0)), device=tier), xp.asarray(np.zeros((2, 0)), device=tier)),
                  np.zeros(2))]
    assert_all_match(cases, zero_signs=False)
    with pytest.raises(ValueError):
        xp.vecdot(x, xp.ones((3, 5), device=tier))
    with pytest.raises(ValueError):
        xp.vecdot(xp.asarray(1.0, device=tier), xp.asarray(1.0, device=tier))
    with pytest.raises(IndexError):
        xp.vecdot(x, y, axis=-4)


def test_matrix_transpose_and_mT(tier):
    a = sample("float32", (2, 3, 4), seed=10)
    m = sample("int8", (3, 5), seed=11)
    x, y = xp.asarray(a, device=tier), xp.asarray(m, device=tier)
    cases = [case("matrix_transpose 3-d", xp.matrix_transpose(x), np.swapaxes(a, -1, -2)),
             case("mT", x.mT, np.swapaxes(a, -1, -2)),
             case("2-d", xp.matrix_transpose(y), m.T),
             case("T", y.T, m.T),
             case("empty", xp.matrix_transpose(xp.asarray(np.zeros((0, 2)), device=tier)), np.zeros((2, 0)))]
    assert_all_match(cases)
    with pytest.raises(ValueError):
        xp.matrix_transpose(xp.ones((3,), device=tier))
    with pytest.raises(ValueError):
        x.T                                   # T is for 2-d arrays only


def test_complex_mean_with_an_infinite_part(tier):
    """The mean divides each part by the count: a complex division by count + 0j made
    nan real parts ((a + inf j) / 2 is a/2 + inf j). Found by the fuzzer."""
    z = np.empty(2, np.complex64)
    z.real, z.imag = [0.125, -0.25], [np.inf, 0.5]   # (not 0.125 + 1j * inf: that is nan + inf j)
    got = np.asarray(xp.mean(xp.asarray(z, device=tier)))
    assert got.real == np.float32(-0.0625) and got.imag == np.inf
    got = np.asarray(xp.mean(xp.asarray(z[:1].reshape(1, 1), device=tier), axis=0))
    assert got.shape == (1,) and got[0].real == np.float32(0.125) and got[0].imag == np.inf


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,axis", [((4096,), None), ((100_000,), None), ((1000, 100), 1),
                                        ((100, 1000), 0)])
def test_max_and_min_of_large_arrays_propagate_nan(tier, dtype, shape, axis):
    """XLA:CPU's vectorised max/min reductions drop NaN from about 4,096 elements (jax 0.10.2
    too: jnp.max of 4,096 ones and a NaN is 1.0); tlaloc's are NumPy's."""
    x = np.full(shape, 1.0, dtype)
    x.reshape(-1)[3::11] = np.nan
    x.reshape(-1)[5::13] = 1e30
    for name in ("max", "min"):
        got = np.asarray(getattr(xp, name)(xp.asarray(x, device=tier), axis=axis))
        np.testing.assert_array_equal(got, getattr(np, name)(x, axis=axis))
