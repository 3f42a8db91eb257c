"""Shared test utilities: tolerances per dtype (documented in docs/precision.md) and
comparison with NumPy."""
import numpy as np

import tlaloc as xp

# rtol/atol by dtype for transcendental results; exact ops are compared exactly.
TOLERANCE = {
    "float16": (2e-3, 1e-4),
    "bfloat16": (2e-2, 1e-3),
    "float32": (2e-6, 1e-7),
    "float64": (1e-13, 1e-300),
    "complex64": (2e-6, 1e-7),
    "complex128": (1e-13, 1e-300),
}

FLOAT_DTYPES = ["float32", "float64"]
COMPLEX_DTYPES = ["complex64", "complex128"]
INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
ALL_DTYPES = ["bool"] + INT_DTYPES + FLOAT_DTYPES + COMPLEX_DTYPES


def to_numpy(x):
    return np.asarray(x)


def assert_matches(actual, expected, *, exact=False, rtol=None, atol=None):
    """`actual` (tlaloc) equals `expected` (NumPy): shape, dtype and values, with nan == nan
    and the sign of zero checked where exact."""
    a = np.asarray(actual)
    e = np.asarray(expected)
    assert a.shape == e.shape, f"shape {a.shape} != {e.shape}"
    assert a.dtype == e.dtype, f"dtype {a.dtype} != {e.dtype}"
    if exact or a.dtype.kind in "biu":
        np.testing.assert_array_equal(a, e)
        if a.dtype.kind == "f":
            np.testing.assert_array_equal(np.signbit(a), np.signbit(e))
        return
    r, t = TOLERANCE.get(str(a.dtype), (1e-6, 1e-7))
    np.testing.assert_allclose(a.astype(np.complex128 if a.dtype.kind == "c" else np.float64),
                               e.astype(np.complex128 if e.dtype.kind == "c" else np.float64),
                               rtol=rtol if rtol is not None else r,
                               atol=atol if atol is not None else t, equal_nan=True)


def special_values(dtype):
    """Values that exercise special cases for `dtype` (a name)."""
    if dtype.startswith("float"):
        return np.array([0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, np.inf, -np.inf, np.nan, 1e-30, 7.25],
                        dtype=dtype)
    if dtype.startswith("complex"):
        re = np.array([0.0, -0.0, 1.0, -1.5, np.inf, np.nan, 2.0], dtype=np.float64)
        return (re[:, None] + 1j * re[None, :]).ravel().astype(dtype)
    if dtype == "bool":
        return np.array([True, False, True])
    info = np.iinfo(dtype)
    vals = [0, 1, 2, 7, info.max, info.min, info.max - 1]
    if info.min < 0:
        vals += [-1, -7, info.min + 1]
    return np.array(vals, dtype=dtype)
