"""Creation functions on both tiers against NumPy: arange, asarray (Python scalars, nested
lists, NumPy arrays, buffers, tlaloc arrays; copy=), empty, eye, full, linspace, meshgrid,
ones, tril, triu, zeros and the *_like functions. Each test gathers its checks and evaluates
them together (one program per tier)."""
import array
import math

import ml_dtypes
import numpy as np
import pytest

import tlaloc as xp
from helpers import assert_all_match, assert_matches

BF16 = np.dtype(ml_dtypes.bfloat16)
ALL = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
       "float16", "bfloat16", "float32", "float64", "complex64", "complex128"]


def np_dtype(name):
    return BF16 if name == "bfloat16" else np.dtype(name)


# ----------------------------------------------------------------------------- arange

def test_arange(tier):
    cases = []
    for args, kwargs in [((5,), {}), ((2, 9), {}), ((10, 0, -3), {}), ((0,), {}), ((3, 3), {}),
                         ((5, 1), {}), ((-4, 4, 3), {}), ((1, 2, 0.1), {}), ((0.0, 1.0, 0.3), {}),
                         ((2.5,), {}), ((1, -1, -0.5), {}), ((5,), {"dtype": xp.float32}),
                         ((1, 7, 2), {"dtype": xp.int8}), ((10,), {"dtype": xp.uint16}),
                         ((0, 5), {"dtype": xp.complex64})]:
        out = xp.arange(*args, device=tier, **kwargs)
        assert out.device == tier
        npk = {"dtype": np.dtype(str(kwargs["dtype"]))} if "dtype" in kwargs else {}
        expected = np.arange(*args, **npk)
        assert out.shape == expected.shape, (args, kwargs)  # known before evaluation
        cases.append((f"arange{args}{kwargs}", out, expected))
    assert_all_match(cases)
    assert xp.arange(3).dtype == xp.int64 and xp.arange(3.0).dtype == xp.float64


def test_arange_errors():
    with pytest.raises(ValueError):
        xp.arange(0, 5, 0)
    for bad in (1j, "3", None, [3]):
        with pytest.raises(TypeError):
            xp.arange(bad)
    with pytest.raises(TypeError):
        xp.arange(3, dtype=xp.bool)
    with pytest.raises(OverflowError):
        xp.arange(-3, 3, dtype=xp.uint8)


# ----------------------------------------------------------------------------- asarray

def test_asarray_python_scalars(tier):
    cases = []
    for value, dtype in [(True, "bool"), (False, "bool"), (0, "int64"), (-7, "int64"),
                         (2 ** 62, "int64"), (1.5, "float64"), (-0.0, "float64"),
                         (math.inf, "float64"), (math.nan, "float64"), (1 - 2j, "complex128")]:
        out = xp.asarray(value, device=tier)
        assert out.shape == () and str(out.dtype) == dtype and out.device == tier
        cases.append((repr(value), out, np.asarray(value, dtype=dtype)))
    for value, dtype in [(3, "int8"), (255, "uint8"), (3, "float32"), (True, "int32"),
                         (2.5, "float16"), (2.5, "bfloat16"), (1.5, "complex64"), (7, "complex128"),
                         (-3.5, "float32"), (2 ** 64 - 1, "uint64")]:
        out = xp.asarray(value, dtype=dtype, device=tier)
        assert str(out.dtype) == dtype
        cases.append((f"{value!r} as {dtype}", out, np.asarray(value).astype(np_dtype(dtype))))
    assert_all_match(cases)


def test_asarray_scalar_errors():
    with pytest.raises(OverflowError):
        xp.asarray(300, dtype=xp.int8)
    with pytest.raises(OverflowError):
        xp.asarray(-1, dtype=xp.uint8)
    with pytest.raises(OverflowError):
        xp.asarray(2 ** 64)
    with pytest.raises(TypeError):
        xp.asarray(1.5, dtype=xp.int32)
    with pytest.raises(TypeError):
        xp.asarray(1j, dtype=xp.float64)
    with pytest.raises(TypeError):
        xp.asarray(2, dtype=xp.bool)
    with pytest.raises(TypeError):
        xp.asarray(1.0, dtype="not a dtype")
    with pytest.raises(TypeError):
        xp.asarray(1.0, dtype=list)       # not a dtype
    with pytest.raises(ValueError):
        xp.asarray(1.0, copy=False)       # a Python float cannot be shared


def test_asarray_nested_sequences(tier):
    cases = []
    for obj, dtype in [([1, 2, 3], "int64"), ([[1.0, 2], [3, 4]], "float64"), ([True, False], "bool"),
                       ([[True, 2]], "int64"), ([1, 2.5], "float64"), ([1j, 2], "complex128"),
                       ([], "float64"), ([[]], "float64"), ([[[1], [2]], [[3], [4]]], "int64"),
                       ((1, 2), "int64"), ([-0.0, math.inf, math.nan], "float64")]:
        out = xp.asarray(obj, device=tier)
        expected = np.asarray(obj, dtype=dtype)
        assert str(out.dtype) == dtype and out.shape == expected.shape, obj
        cases.append((repr(obj), out, expected))
    for obj, dtype in [([1, 2], "float32"), ([[1, 0], [0, 1]], "bool"), ([1.5, 2.5], "float16"),
                       ([250, 3], "uint8"), ([1, 2], "complex64")]:
        out = xp.asarray(obj, dtype=dtype, device=tier)
        cases.append((f"{obj} as {dtype}", out, np.asarray(obj).astype(np_dtype(dtype))))
    assert_all_match(cases)


def test_asarray_sequence_errors():
    with pytest.raises((TypeError, ValueError)):
        xp.asarray([[1, 2], [3]])          # ragged
    with pytest.raises(TypeError):
        xp.asarray(["a", "b"])
    with pytest.raises(TypeError):
        xp.asarray([object()])
    with pytest.raises((OverflowError, TypeError)):
        xp.asarray([1, 2 ** 70])
    with pytest.raises(OverflowError):
        xp.asarray([300], dtype=xp.int8)


@pytest.mark.parametrize("copy", [None, True])
def test_asarray_numpy_arrays_every_dtype(tier, copy):
    """NumPy arrays keep their dtype and shape (0-d and empty too), and are copied: changing
    the NumPy array later does not change the tlaloc array."""
    cases = []
    sources = []
    for name in ALL:
        for shape in [(), (0,), (2, 3)]:
            host = np.asarray(np.arange(math.prod(shape)).reshape(shape) % 3).astype(np_dtype(name))
            out = xp.asarray(host, device=tier, copy=copy)
            assert str(out.dtype) == name and out.shape == shape and out.device == tier
            cases.append((f"{name}{shape}", out, host.copy()))
            sources.append(host)
    for host in sources:
        if host.size:
            host[...] = host.flat[-1] + 1 if host.dtype != bool else ~host
    assert_all_match(cases)
    # NumPy scalars and non-contiguous or read-only arrays
    base = np.arange(12.0).reshape(3, 4)
    ro = base.copy()
    ro.flags.writeable = False
    more = [("np.float32", xp.asarray(np.float32(1.5), device=tier), np.asarray(np.float32(1.5))),
            ("np.int16", xp.asarray(np.int16(-3), device=tier), np.asarray(np.int16(-3))),
            ("np.bool_", xp.asarray(np.bool_(True), device=tier), np.asarray(True)),
            ("strided", xp.asarray(base[::2, ::-1], device=tier), base[::2, ::-1].copy()),
            ("transposed", xp.asarray(base.T, device=tier), base.T.copy()),
            ("read-only", xp.asarray(ro, device=tier), ro.copy()),
            ("to float32", xp.asarray(base, dtype=xp.float32, device=tier), base.astype(np.float32)),
            ("big-endian", xp.asarray(base.astype(">f8"), device=tier), base)]
    assert_all_match(more)


def test_asarray_default_device_copies():
    """The short path (a NumPy array, no dtype or device given) copies and keeps the dtype."""
    host = np.arange(6, dtype=np.int16).reshape(2, 3)
    out = xp.asarray(host)
    host[0, 0] = 100
    assert out.device == xp.__array_namespace_info__().default_device()
    assert out.dtype == xp.int16 and out.shape == (2, 3)
    np.testing.assert_array_equal(np.asarray(out), np.arange(6).reshape(2, 3))


def test_asarray_numpy_errors():
    with pytest.raises(ValueError):
        xp.asarray(np.arange(3.0), copy=False)   # NumPy memory cannot be shared immutably
    for bad in (np.array(["a"]), np.array([object()]), np.array(["2020-01-01"], dtype="datetime64[D]"),
                np.zeros(2, dtype=np.float128) if hasattr(np, "float128") else np.array([1], dtype="V8")):
        with pytest.raises(TypeError):
            xp.asarray(bad)


def test_asarray_buffers(tier):
    """Objects with the buffer protocol: bytes and bytearray (uint8), memoryview and
    array.array (their item type)."""
    raw = bytearray(b"\x00\x01\xff\x7f")
    arr = array.array("i", [1, -2, 3])
    dbl = array.array("d", [0.5, -0.0, math.inf])
    view = memoryview(np.arange(6, dtype=np.int16).reshape(2, 3))
    cases = [("bytes", xp.asarray(bytes(raw), device=tier), np.frombuffer(bytes(raw), np.uint8)),
             ("bytearray", xp.asarray(raw, device=tier), np.frombuffer(bytes(raw), np.uint8)),
             ("array i", xp.asarray(arr, device=tier), np.array([1, -2, 3], dtype=np.int32)),
             ("array d", xp.asarray(dbl, device=tier), np.array([0.5, -0.0, math.inf])),
             ("memoryview 2-d", xp.asarray(view, device=tier), np.arange(6, dtype=np.int16).reshape(2, 3))]
    copied = xp.asarray(raw, copy=True, device=tier)
    raw[0] = 42        # the tlaloc arrays hold copies
    arr[0] = 42
    cases.append(("copy=True", copied, np.frombuffer(b"\x00\x01\xff\x7f", np.uint8)))
    assert_all_match(cases)
    with pytest.raises(ValueError):
        xp.asarray(bytearray(b"ab"), copy=False)


def test_asarray_of_arrays(tier):
    other = xp.device("interpreter") if tier.platform == "cpu" else xp.device("cpu")
    x = xp.asarray(np.array([1.5, -2.0, 3.25]), device=tier)
    for same in (xp.asarray(x), xp.asarray(x, copy=False), xp.asarray(x, dtype=xp.float64)):
        assert same._node is x._node                  # no copy: the same value
    copied = xp.asarray(x, copy=True)
    assert copied is not x and copied.dtype == x.dtype and copied.device == tier
    f32 = xp.asarray(x, dtype=xp.float32)
    i8 = xp.asarray(x, dtype=xp.int8)
    moved = xp.asarray(x, device=other)
    assert moved.device == other and moved.dtype == xp.float64
    with pytest.raises(ValueError):
        xp.asarray(x, dtype=xp.float32, copy=False)
    with pytest.raises(ValueError):
        xp.asarray(x, device=other, copy=False)
    copied += 1.0   # an in-place change of the copy leaves x alone
    assert_all_match([("copy", copied, np.array([2.5, -1.0, 4.25])), ("x", x, np.array([1.5, -2.0, 3.25])),
                      ("float32", f32, np.array([1.5, -2.0, 3.25], np.float32)),
                      ("int8", i8, np.array([1, -2, 3], np.int8))])
    assert_matches(moved, np.array([1.5, -2.0, 3.25]))


def test_from_dlpack(tier):
    host = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = xp.from_dlpack(host, device=tier)
    assert out.device == tier
    back = xp.from_dlpack(out)  # a tlaloc array is a DLPack producer too
    assert_all_match([("from numpy", out, host), ("from tlaloc", back, host)])
    with pytest.raises(TypeError):
        xp.from_dlpack([1, 2])
    with pytest.raises(ValueError):
        xp.from_dlpack(host, copy=False)


# ----------------------------------------------------------------------------- filled arrays

def test_zeros_ones_empty_full(tier):
    cases = []
    for name in ALL:
        d = getattr(xp, name)
        for shape in [(), (0,), (3,), (2, 0, 4), (2, 3)]:
            for fn, np_fn in ((xp.zeros, np.zeros), (xp.ones, np.ones), (xp.empty, np.zeros)):
                out = fn(shape, dtype=d, device=tier)
                assert out.shape == shape and out.dtype == d and out.device == tier
                if shape == (2, 3) or shape == ():
                    cases.append((f"{fn.__name__}({shape}, {name})", out, np_fn(shape, dtype=np_dtype(name))))
    for fill, dtype, np_fill in [(True, None, np.bool_(True)), (7, None, np.int64(7)),
                                 (-2.5, None, np.float64(-2.5)), (1 + 2j, None, np.complex128(1 + 2j)),
                                 (-0.0, None, np.float64(-0.0)), (math.nan, None, np.float64(math.nan)),
                                 (math.inf, "float32", np.float32(math.inf)), (3, "uint8", np.uint8(3)),
                                 (True, "int16", np.int16(1)), (5, "float16", np.float16(5)),
                                 (1.5, "complex64", np.complex64(1.5))]:
        for shape in [(), (4,), (2, 0), (2, 3)]:
            out = xp.full(shape, fill, dtype=dtype, device=tier)
            assert out.shape == shape and out.dtype == xp.asarray(np_fill).dtype
            cases.append((f"full({shape}, {fill!r}, {dtype})", out, np.full(shape, np_fill)))
    zero_d = xp.asarray(np.float32(2.5), device=tier)
    cases.append(("full with 0-d array", xp.full((2, 2), zero_d), np.full((2, 2), 2.5, np.float32)))
    cases.append(("full with 0-d array as int", xp.full((2,), zero_d, dtype=xp.int32),
                  np.full((2,), 2, np.int32)))
    cases.append(("shape as int", xp.ones(3, device=tier), np.ones(3)))
    cases.append(("default dtype", xp.zeros((2,), device=tier), np.zeros(2)))
    assert_all_match(cases)


def test_filled_arrays_errors():
    for fn in (xp.zeros, xp.ones, xp.empty):
        with pytest.raises(ValueError):
            fn((2, -1))
        with pytest.raises(TypeError):
            fn((2.0, 3))
        with pytest.raises(TypeError):
            fn("3")
        with pytest.raises(TypeError):
            fn((2,), dtype="float4")
    with pytest.raises(TypeError):
        xp.full((2,), 1.5, dtype=xp.int32)
    with pytest.raises(TypeError):
        xp.full((2,), "a")
    with pytest.raises(ValueError):
        xp.full((2,), xp.ones((2,)))
    with pytest.raises(OverflowError):
        xp.full((2,), 256, dtype=xp.uint8)


def test_like_functions(tier):
    other = xp.device("interpreter") if tier.platform == "cpu" else xp.device("cpu")
    cases = []
    for name in ("int16", "float32", "complex64", "bool"):
        x = xp.asarray(np.zeros((2, 3), dtype=name), device=tier)
        for fn, np_fn in ((xp.zeros_like, np.zeros_like), (xp.ones_like, np.ones_like),
                          (xp.empty_like, np.zeros_like)):
            out = fn(x)
            assert out.shape == x.shape and out.dtype == x.dtype and out.device == tier
            cases.append((f"{fn.__name__}({name})", out, np_fn(np.zeros((2, 3), dtype=name))))
            as64 = fn(x, dtype=xp.float64)
            assert as64.dtype == xp.float64
            cases.append((f"{fn.__name__}({name}, float64)", as64, np_fn(np.zeros((2, 3)))))
            assert fn(x, device=other).device == other
        fill = True if name == "bool" else 3
        out = xp.full_like(x, fill)
        cases.append((f"full_like({name})", out, np.full((2, 3), fill, dtype=name)))
        assert xp.full_like(x, fill, device=other).device == other
    x = xp.asarray(np.zeros((0, 4)), device=tier)
    cases.append(("empty like", xp.ones_like(x), np.ones((0, 4))))
    cases.append(("0-d like", xp.full_like(xp.asarray(1.0, device=tier), -0.0), np.asarray(-0.0)))
    cases.append(("full_like float into float32", xp.full_like(xp.zeros(2, dtype=xp.float32, device=tier), 0.1),
                  np.full(2, 0.1, np.float32)))
    assert_all_match(cases)
    with pytest.raises(TypeError):
        xp.full_like(xp.zeros(2, dtype=xp.int8), 1.5)
    with pytest.raises(TypeError):
        xp.zeros_like(np.zeros(2))


# ----------------------------------------------------------------------------- eye, linspace

def test_eye(tier):
    cases = []
    for args, k, dtype in [((3,), 0, None), ((3, 4), 1, None), ((4, 3), -1, None), ((3,), 5, None),
                           ((3,), -5, None), ((0,), 0, None), ((2, 0), 0, None), ((1,), 0, "int8"),
                           ((3,), 0, "bool"), ((3, 5), 2, "complex64"), ((4,), -2, "uint32")]:
        out = xp.eye(*args, k=k, dtype=dtype, device=tier)
        expected = np.eye(*args, k=k, dtype=np.dtype(dtype) if dtype else None)
        assert out.shape == expected.shape and out.device == tier
        cases.append((f"eye{args} k={k} {dtype}", out, expected))
    assert_all_match(cases)
    with pytest.raises(TypeError):
        xp.eye(3, k=1.0)
    with pytest.raises(ValueError):
        xp.eye(-1)
    with pytest.raises(TypeError):
        xp.eye(2.5)


def test_linspace(tier):
    cases = []
    for start, stop, num, kw in [(0, 1, 5, {}), (0, 1, 5, {"endpoint": False}), (2, 3, 1, {}),
                                 (2, 3, 1, {"endpoint": False}), (0, 1, 0, {}), (5, -5, 11, {}),
                                 (-1.5, 2.5, 7, {"dtype": xp.float32}), (0, 1, 2, {}),
                                 (1e10, 1e10 + 1, 3, {}), (0, 1, 4, {"dtype": xp.float16})]:
        out = xp.linspace(start, stop, num, device=tier, **kw)
        npkw = dict(kw)
        if "dtype" in npkw:
            npkw["dtype"] = np.dtype(str(npkw["dtype"]))
        expected = np.linspace(start, stop, num, **npkw)
        assert out.shape == expected.shape and out.device == tier
        cases.append((f"linspace({start}, {stop}, {num}, {kw})", out, expected))
        if num > 1 and kw.get("endpoint", True):
            # the endpoint is exact, whatever rounding the steps had
            cases.append((f"last of linspace({start}, {stop})", out[-1], np.asarray(stop, dtype=expected.dtype)))
    cases.append(("complex", xp.linspace(0j, 1 + 2j, 5, device=tier), np.linspace(0j, 1 + 2j, 5)))
    cases.append(("complex64", xp.linspace(1, 2j, 3, dtype=xp.complex64, device=tier),
                  np.linspace(1, 2j, 3).astype(np.complex64)))
    assert_all_match(cases)
    with pytest.raises(ValueError):
        xp.linspace(0, 1, -1)
    with pytest.raises((TypeError, ValueError)):
        xp.linspace(0, 1, 2.5)
    with pytest.raises(TypeError):
        xp.linspace(0, 1, 5, dtype=xp.int32)
    with pytest.raises(TypeError):
        xp.linspace(0, 1j, 5, dtype=xp.float64)


# ----------------------------------------------------------------------------- grids, triangles

def test_meshgrid(tier):
    a = np.array([1.0, 2.0, 3.0])
    b = np.array([-1.0, 0.5])
    c = np.array([7.0, 8.0, 9.0, 10.0])
    x, y, z = (xp.asarray(v, device=tier) for v in (a, b, c))
    e = xp.asarray(np.zeros(0), device=tier)
    cases = []
    for arrays, np_arrays in (((x,), (a,)), ((x, y), (a, b)), ((x, y, z), (a, b, c)),
                              ((x, e), (a, np.zeros(0)))):
        for indexing in ("xy", "ij"):
            outs = xp.meshgrid(*arrays, indexing=indexing)
            expected = np.meshgrid(*np_arrays, indexing=indexing)
            assert isinstance(outs, tuple) and len(outs) == len(expected)  # a tuple in 2025.12
            for i, (o, ex) in enumerate(zip(outs, expected)):
                assert o.shape == ex.shape
                cases.append((f"meshgrid {len(arrays)} {indexing} [{i}]", o, ex))
    assert xp.meshgrid() == ()
    assert_all_match(cases)
    with pytest.raises(ValueError):
        xp.meshgrid(x, indexing="yx")
    with pytest.raises(ValueError):
        xp.meshgrid(xp.ones((2, 2), device=tier))
    with pytest.raises(TypeError):
        xp.meshgrid(x, xp.asarray(np.arange(3), device=tier))


def test_tril_triu(tier):
    cases = []
    for shape, dtype in [((4, 4), "float64"), ((3, 5), "int32"), ((5, 2), "bool"), ((2, 3, 4), "float64"),
                         ((0, 3), "float64"), ((1, 1), "uint8")]:
        v = np.arange(1, math.prod(shape) + 1).reshape(shape)
        host = v.astype(dtype) if dtype != "bool" else v % 2 == 0
        x = xp.asarray(host, device=tier)
        for k in (0, 1, -1, 3, -7):
            cases.append((f"tril {shape} {dtype} k={k}", xp.tril(x, k=k), np.tril(host, k=k)))
            cases.append((f"triu {shape} {dtype} k={k}", xp.triu(x, k=k), np.triu(host, k=k)))
    assert_all_match(cases)
    with pytest.raises(ValueError):
        xp.tril(xp.ones((3,), device=tier))
    with pytest.raises(TypeError):
        xp.triu(xp.ones((3, 3), device=tier), k=0.5)
    with pytest.raises(TypeError):
        xp.tril(np.ones((3, 3)))


def test_creation_is_lazy_and_compiles_nothing(tier):
    """Creation records; it neither evaluates nor compiles."""
    xp.reset_cache_info()
    made = [xp.zeros((3,), device=tier), xp.ones((2, 2), device=tier), xp.eye(3, device=tier),
            xp.arange(5, device=tier), xp.linspace(0, 1, 4, device=tier), xp.full((2,), 7, device=tier),
            xp.tril(xp.ones((3, 3), device=tier)), *xp.meshgrid(xp.arange(2, device=tier), xp.arange(3, device=tier))]
    info = xp.cache_info()
    assert info["misses"] == info["hits"] == info["interpreted"] == 0, info
    assert [m.shape for m in made] == [(3,), (2, 2), (3, 3), (5,), (4,), (2,), (3, 3), (3, 2), (3, 2)]
