"""The points where other libraries meet tlaloc arrays (docs/interop.md): `x[key] = value` for
every index form (also under tlaloc.grad), `np.asarray` and DLPack export, NumPy dtypes,
exact basic arithmetic on XLA:CPU, and what happens when a NumPy array is an operand.

The libraries themselves (scikit-learn, SciPy, array-api-extra) run in tests/test_libraries.py.
"""
import numpy as np
import pytest

import tlaloc as xp
from helpers import assert_matches

BASE = np.arange(24.0).reshape(2, 3, 4)


def _as_tlaloc_key(key, device=None):
    """The key with every NumPy array in it made a tlaloc array (lists are kept as lists)."""
    if isinstance(key, tuple):
        return tuple(_as_tlaloc_key(k, device) for k in key)
    if isinstance(key, np.ndarray):
        return xp.asarray(key, device=device)
    return key


# Every index form of NumPy's basic and advanced indexing that the standard (and tlaloc)
# supports; none of them selects one element twice, so the derivatives below are unique.
KEYS = {
    "int": 1,
    "negative int": -1,
    "ints": (0, 1),
    "all ints": (1, 2, -1),
    "slice": slice(1, None),
    "full slice": slice(None),
    "empty slice": slice(1, 1),
    "negative step": (slice(None), slice(None, None, -1)),
    "step 2": (..., slice(None, None, 2)),
    "ellipsis": (..., 1),
    "ellipsis only": ...,
    "empty tuple": (),
    "int ellipsis slice": (0, ..., slice(1, 3)),
    "None": (None, 0),
    "None between": (slice(None), None, 1),
    "0-d int array": np.array(1),
    "0-d int arrays": (np.array(1), np.array(2)),
    "int array": np.array([1, 0]),
    "int array on axis 1": (slice(None), np.array([2, 0])),
    "list": (slice(None), [0, 2]),
    "int and list": (1, slice(None), [0, 3]),
    "arrays apart": (np.array([0, 1]), slice(None), np.array([3, 0])),
    "arrays together": (np.array([0, 1]), np.array([1, 2]), np.array([3, 0])),
    "broadcast arrays": (np.array([[0], [1]]), np.array([[0, 1, 2]])),
    "slice int array": (slice(None), 1, np.array([0, 2])),
    "array slice int": (np.array([0, 1]), slice(None), 1),
    "mask, all axes": BASE % 3 == 0,
    "mask, leading axes": BASE[:, :, 0] > 5,
    "mask after ints": (0, 0, BASE[0, 0] > 1),
    "mask on one axis": (np.array([False, True]),),
    "mask on axis 1": (slice(None), np.array([True, False, True])),
    "0-d mask true": np.array(True),
    "0-d mask false": np.array(False),
}


def _value_for(selected_shape, kind, rng):
    if kind == "scalar":
        return 7.5
    if kind == "0-d":
        return np.asarray(-2.25)
    if kind == "broadcast" and len(selected_shape) >= 1:
        return rng.standard_normal(selected_shape[-1:])   # broadcast over the leading axes
    return rng.standard_normal(selected_shape)


@pytest.mark.parametrize("kind", ["scalar", "0-d", "array", "broadcast"])
@pytest.mark.parametrize("name", list(KEYS))
def test_setitem_every_index_form(tier, name, kind):
    """`x[key] = value` matches NumPy; the tlaloc key may hold tlaloc arrays, NumPy arrays
    or lists, and copies of the old value keep it (a view, `x[...]`, would see the write)."""
    rng = np.random.default_rng(len(name))
    key = KEYS[name]
    expected = BASE.copy()
    value = _value_for(expected[key].shape, kind, rng)
    expected[key] = value
    v = xp.asarray(value, device=tier) if isinstance(value, np.ndarray) else value
    for k in (_as_tlaloc_key(key, tier), key):      # tlaloc arrays in the key, then NumPy arrays
        x = xp.asarray(BASE, device=tier)
        old = x
        before = xp.asarray(x, copy=True)
        x[k] = v
        assert x is old
        assert_matches(x, expected, exact=True)
        assert_matches(before, BASE, exact=True)


def test_setitem_keeps_dtype_and_rejects_numpy_values(tier):
    x = xp.zeros((2, 3), dtype=xp.float32, device=tier)
    x[0] = xp.ones(3, dtype=xp.float32, device=tier)
    x[1, 1:] = 2                            # a Python int into a float array
    assert x.dtype == xp.float32
    assert_matches(x, np.array([[1, 1, 1], [0, 2, 2]], dtype=np.float32), exact=True)
    with pytest.raises(TypeError):
        x[0] = xp.ones(3, dtype=xp.float64, device=tier)    # would change the dtype
    with pytest.raises(TypeError):
        x[0] = np.ones(3, dtype=np.float32)                  # NumPy values: convert first
    with pytest.raises(IndexError):
        x[2] = 1.0
    with pytest.raises(ValueError):
        x[0] = xp.ones(2, dtype=xp.float32, device=tier)


IDENTITIES = {
    "positive": lambda x: +x,
    "round (int)": xp.round,
    "floor (int)": xp.floor,
    "ceil (int)": xp.ceil,
    "trunc (int)": xp.trunc,
    "abs (unsigned)": lambda x: xp.abs(xp.astype(x, xp.uint8, copy=False)),
    "real (real)": xp.real,
    "conj (real)": xp.conj,
    "clip (no bounds)": xp.clip,
    "x[...]": lambda x: x[...],
    "x[:]": lambda x: x[:],
    "x[()]": lambda x: x[()],
    "reshape (same shape)": lambda x: xp.reshape(x, x.shape),
    "permute_dims (identity)": lambda x: xp.permute_dims(x, (0, 1)),
    "broadcast_to (same shape)": lambda x: xp.broadcast_to(x, x.shape),
    "squeeze (no axes)": lambda x: xp.squeeze(x, axis=()),
    "flip (no axes)": lambda x: xp.flip(x, axis=()),
    "tile (ones)": lambda x: xp.tile(x, (1, 1)),
    "fftshift (no axes)": lambda x: xp.fft.fftshift(x, axes=()),
}


# the identities that are views of their argument in NumPy, as NumPy spells them
NUMPY_VIEWS = {
    "real (real)": np.real,
    "x[...]": lambda a: a[...],
    "x[:]": lambda a: a[:],
    "x[()]": lambda a: a[()],
    "reshape (same shape)": lambda a: a.reshape(a.shape),
    "permute_dims (identity)": lambda a: np.permute_dims(a, (0, 1)),
    "squeeze (no axes)": lambda a: np.squeeze(a, axis=()),
    "flip (no axes)": lambda a: np.flip(a, axis=()),
}


@pytest.mark.parametrize("name", list(IDENTITIES))
def test_results_equal_to_the_argument_alias_it_only_as_numpy_views(name):
    """A function whose result equals its argument still returns a new array. Where NumPy's
    result is a view, so is tlaloc's: writes through either are seen by both; otherwise
    assigning into either leaves the other alone (docs/indexing.md, "Views")."""
    a = np.arange(6, dtype=np.uint8).reshape(2, 3)
    x = xp.asarray(a)
    y = IDENTITIES[name](x)
    assert y is not x
    y[0, 0] = 9
    x[1, 1] += 5
    if name in NUMPY_VIEWS:
        assert np.shares_memory(a, NUMPY_VIEWS[name](a))
        assert int(x[0, 0]) == 9 and int(y[1, 1]) == 9
    else:
        assert int(x[0, 0]) == 0 and int(y[1, 1]) == 4
    assert int(y[0, 0]) == 9 and int(x[1, 1]) == 9


# ----------------------------------------------------------------------------- under grad

def _numpy_setitem_grad(key, value_shape, upstream):
    """d/dx and d/dv of sum(upstream * y) where y = x; y[key] = v (v broadcast)."""
    keep = np.ones_like(BASE)
    keep[key] = 0.0
    gx = upstream * keep
    sel = upstream[key]
    gv = sel.reshape(sel.shape) if sel.shape == value_shape else None
    if gv is None:   # the value was broadcast: sum the upstream over the broadcast axes
        lead = sel.ndim - len(value_shape)
        gv = sel.sum(axis=tuple(range(lead))) if lead else sel
        for ax, n in enumerate(value_shape):
            if n == 1 and gv.shape[ax] != 1:
                gv = gv.sum(axis=ax, keepdims=True)
    return gx, gv


@pytest.mark.parametrize("kind", ["0-d", "array", "broadcast"])
@pytest.mark.parametrize("name", list(KEYS))
def test_setitem_under_grad(name, kind):
    """tlaloc.grad through `y[key] = v`: the set positions stop the derivative of y's old
    value and route it to v (summed where v was broadcast)."""
    rng = np.random.default_rng(len(name) + 1)
    key = KEYS[name]
    value = np.asarray(_value_for(BASE[key].shape, kind, rng))
    upstream = rng.standard_normal(BASE.shape)
    tkey, up = _as_tlaloc_key(key), xp.asarray(upstream)

    def f(x, v):
        y = x * 1.0
        y[tkey] = v
        return xp.sum(up * y)

    gx, gv = xp.grad(f, argnums=(0, 1))(xp.asarray(BASE), xp.asarray(value))
    ex, ev = _numpy_setitem_grad(key, value.shape, upstream)
    assert_matches(gx, ex, rtol=1e-12, atol=1e-12)
    assert_matches(gv, ev, rtol=1e-12, atol=1e-12)


def test_setitem_under_grad_nonlinear():
    """Several assignments, an in-place update and a mask in one differentiated function,
    against central differences."""
    def f(w):
        y = xp.zeros((3, 4))
        y[0] = w[:4] * 2
        y[1:, ::2] = xp.reshape(w[4:8], (2, 2))
        y[y > 100] = 0.0
        y[xp.asarray([2, 2]), xp.asarray([1, 3])] = w[8:10] ** 2
        y[..., -1] += w[0]
        return xp.sum(xp.sin(y) * y)

    w0 = np.linspace(-1.0, 1.0, 10)
    g = np.asarray(xp.grad(f)(xp.asarray(w0)))
    eps = 1e-6
    num = np.array([(float(f(xp.asarray(w0 + eps * e))) - float(f(xp.asarray(w0 - eps * e))))
                    / (2 * eps) for e in np.eye(10)])
    np.testing.assert_allclose(g, num, rtol=1e-6, atol=1e-8)


def test_setitem_under_jit():
    @xp.jit
    def f(x, v):
        y = x * 1.0
        y[:, 1] = v
        y[y < 0] = 0.0
        return y

    x = np.array([[-1.0, 2.0, 3.0], [4.0, -5.0, 6.0]])
    expected = x.copy()
    expected[:, 1] = -7.0
    expected[expected < 0] = 0.0
    for _ in range(2):
        assert_matches(f(xp.asarray(x), xp.asarray(-7.0)), expected, exact=True)


# ----------------------------------------------------------------------------- to NumPy

def test_np_asarray_is_writeable_and_owned(tier):
    x = xp.asarray(np.arange(4.0), device=tier) * 2.0     # a computed value
    a = np.asarray(x)
    assert a.flags.writeable and a.flags.owndata
    a[0] = 100.0
    assert float(x[0]) == 0.0
    b = np.array(x)
    assert b.flags.writeable


def test_np_asarray_copy_false_cannot_change_the_array(tier):
    """copy=False gives the value without a copy, read-only: tlaloc arrays are immutable."""
    for x in (xp.asarray(np.arange(4.0), device=tier), xp.asarray(np.arange(4.0), device=tier) + 1):
        view = np.asarray(x, copy=False)
        assert not view.flags.writeable
        with pytest.raises(ValueError):
            view[0] = 9.0
        assert x.tolist()[0] in (0.0, 1.0)


def test_numpy_reads_tlaloc_dtypes():
    """NumPy takes a tlaloc dtype wherever it takes a dtype (it reads its `dtype` attribute);
    scikit-learn relies on this with array API dispatch off."""
    for name in ("bool", "int8", "int32", "uint16", "float32", "float64", "complex64", "bfloat16"):
        d = getattr(xp, name)
        assert np.dtype(d) == d.numpy
    x = xp.ones((2,), dtype=xp.float32)
    assert np.zeros(3, dtype=x.dtype).dtype == np.float32
    assert np.asarray(x, dtype=xp.float64).dtype == np.float64
    assert np.arange(3).astype(xp.int8).dtype == np.int8


# ----------------------------------------------------------------------------- DLPack

def test_from_dlpack_into_numpy(tier):
    a = np.arange(6.0).reshape(2, 3)
    for x in (xp.asarray(a, device=tier), xp.asarray(a, device=tier) * 1.5):
        expected = np.asarray(x)
        assert x.__dlpack_device__() == (1, 0)
        for kwargs in ({}, {"device": "cpu"}, {"copy": True}, {"device": "cpu", "copy": True}):
            h = np.from_dlpack(x, **kwargs)
            np.testing.assert_array_equal(h, expected)
            assert h.flags.writeable            # a copy the consumer owns
            h[0, 0] = -1.0
            assert float(x[0, 0]) == expected[0, 0]
        # copy=False: the value itself, zero-copy and read-only (DLPack 1.0 read-only flag)
        h = np.from_dlpack(x, copy=False)
        np.testing.assert_array_equal(h, expected)
        assert not h.flags.writeable
        with pytest.raises(ValueError):
            h[0, 0] = -1.0


def test_dunder_dlpack_keywords(tier):
    x = xp.asarray(np.arange(3.0), device=tier) + 1
    # the keywords NumPy (and the standard) pass
    x.__dlpack__(stream=None, max_version=(1, 0), dl_device=(1, 0), copy=None)
    x.__dlpack__(max_version=(1, 0), copy=False)
    x.__dlpack__()                                      # a DLPack 0.x consumer
    with pytest.raises(BufferError):
        x.__dlpack__(copy=False)                        # 0.x capsules cannot be read-only
    with pytest.raises(BufferError):
        x.__dlpack__(max_version=(1, 0), dl_device=(2, 0))   # tlaloc exports host memory
    for dtype in (xp.int8, xp.uint32, xp.bool, xp.float32, xp.complex128):
        y = xp.ones((2, 2), dtype=dtype, device=tier)
        h = np.from_dlpack(y)
        assert h.dtype == dtype.numpy and h.shape == (2, 2)


def test_tlaloc_from_dlpack_round_trip(tier):
    a = np.arange(6, dtype=np.int32).reshape(3, 2)
    x = xp.from_dlpack(a, device=tier)
    assert_matches(x, a, exact=True)
    a[0, 0] = 99                                         # the tlaloc array has its own copy
    assert int(x[0, 0]) == 0
    assert xp.from_dlpack(x) is x
    y = xp.from_dlpack(np.from_dlpack(x * 2))
    assert_matches(y, np.arange(6, dtype=np.int32).reshape(3, 2) * 2, exact=True)


# ----------------------------------------------------------------------------- exactness

def test_xla_compile_options_do_not_enable_fast_math():
    from tlaloc.backends import _jaxlib
    options = _jaxlib.xc.CompileOptions().executable_build_options.debug_options
    assert not options.xla_cpu_enable_fast_math
    assert options.xla_cpu_fast_math_honor_division
    assert options.xla_cpu_fast_math_honor_nans and options.xla_cpu_fast_math_honor_infs


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_basic_arithmetic_is_exact(tier, dtype):
    """+ - * / sqrt are correctly rounded (IEEE 754) on every backend: bit-equal to NumPy
    for normal numbers. (XLA:CPU flushes subnormal inputs and results to zero; see
    docs/interop.md.)"""
    rng = np.random.default_rng(0)
    info = np.finfo(dtype)
    a = rng.standard_normal(4096).astype(dtype) * np.exp2(rng.integers(-30, 30, 4096)).astype(dtype)
    b = rng.standard_normal(4096).astype(dtype)
    b[b == 0] = 1
    b[:8] = [3, 7, 10, 0.1, -3, 1e-3, 49, 1.0]
    a[:8] = 1
    x, y = xp.asarray(a, device=tier), xp.asarray(b, device=tier)
    for name, got, want in [("divide", x / y, a / b), ("multiply", x * y, a * b),
                            ("add", x + y, a + b), ("subtract", x - y, a - b),
                            ("sqrt", xp.sqrt(xp.abs(x)), np.sqrt(np.abs(a))),
                            ("scalar divide", x / 3.0, a / np.asarray(3.0, dtype)),
                            ("reciprocal", 1.0 / y, np.asarray(1.0, dtype) / b)]:
        got = np.asarray(got)
        normal = (np.abs(want) >= info.tiny) | (want == 0)
        assert normal.sum() > 4000
        np.testing.assert_array_equal(got[normal], want[normal], err_msg=name)
    one, three = xp.asarray(1.0, dtype=getattr(xp, dtype), device=tier), 3.0
    assert np.asarray(one / three).tobytes() == (np.asarray(1.0, dtype) / np.asarray(3.0, dtype)).tobytes()


def test_float64_one_third_compiled():
    xp.config.update(execution="compiled")
    one = xp.asarray(1.0)
    assert float(one / 3.0) == 1 / 3
    assert float(one / xp.asarray(3.0)) == 1 / 3
    assert float(xp.asarray(0.1) + xp.asarray(0.2)) == 0.1 + 0.2


# ----------------------------------------------------------------------------- NumPy operands

def test_numpy_array_operands_raise_numpy_scalars_do_not(tier):
    """A NumPy array operand is a TypeError (SciPy, scikit-learn and array-api-extra never
    mix namespaces in an operator: they move arrays explicitly, and array-api-strict, their
    reference, raises too); a NumPy scalar acts as the Python scalar it holds."""
    x = xp.asarray(np.arange(3.0), device=tier)
    a = np.ones(3)
    for op in (lambda: x + a, lambda: a + x, lambda: x * a, lambda: a < x, lambda: x == a,
               lambda: x @ a, lambda: a @ x):
        with pytest.raises(TypeError, match="NumPy array"):
            op()
    assert_matches(x + np.float32(1.5), np.arange(3.0) + 1.5, exact=True)
    assert_matches(np.int64(2) * x, np.arange(3.0) * 2, exact=True)
    assert_matches(x + xp.asarray(a, device=tier), np.arange(3.0) + 1, exact=True)
