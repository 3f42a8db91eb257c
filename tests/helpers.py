"""Shared test utilities: tolerances per dtype (documented in docs/precision.md) and
comparison with NumPy."""
import contextlib

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


@contextlib.contextmanager
def recorded():
    """Every operation inside the block is recorded (pending), none run as it is recorded:
    operations on small computed host arrays otherwise do (config.eager_max_size)."""
    previous = xp.config.update(eager_max_size=0)
    try:
        yield
    finally:
        xp.config.update(**previous)


def to_numpy(x):
    return np.asarray(x)


def assert_matches(actual, expected, *, exact=False, rtol=None, atol=None):
    """`actual` (tlaloc) equals `expected` (NumPy): shape, dtype and values, with nan == nan
    and the sign of zero checked where exact."""
    a = np.asarray(actual)
    e = np.asarray(expected)
    assert a.shape == e.shape, f"shape {a.shape} != {e.shape}"
    assert a.dtype == e.dtype, f"dtype {a.dtype} != {e.dtype}"
    name = str(a.dtype)
    if a.dtype.kind == "V":  # bfloat16: NumPy's testing does not know its NaN
        a, e = a.astype(np.float32), e.astype(np.float32)
    if exact or a.dtype.kind in "biu":
        np.testing.assert_array_equal(a, e)
        if a.dtype.kind == "f":
            np.testing.assert_array_equal(np.signbit(a), np.signbit(e))
        return
    r, t = TOLERANCE.get(name, (1e-6, 1e-7))
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
        out = np.empty((len(re), len(re)), dtype=dtype)  # not re + 1j * im: 1j * inf has a nan real part
        out.real, out.imag = re[:, None], re[None, :]
        return out.ravel()
    if dtype == "bool":
        return np.array([True, False, True])
    info = np.iinfo(dtype)
    vals = [0, 1, 2, 7, info.max, info.min, info.max - 1]
    if info.min < 0:
        vals += [-1, -7, info.min + 1]
    return np.array(vals, dtype=dtype)


def assert_zero_signs(actual, expected):
    """Where a real floating `expected` is zero, `actual` is a zero of the same sign."""
    a = np.asarray(actual)
    e = np.asarray(expected)
    if e.dtype.kind in "biuc" or a.shape != e.shape:
        return
    a, e = a.astype(np.float64), e.astype(np.float64)
    zero = e == 0
    bad = zero & (np.signbit(a) != np.signbit(e))
    assert not bad.any(), f"sign of zero differs at {np.argwhere(bad).tolist()}: {a[bad]} != {e[bad]}"


def assert_all_match(cases, *, exact=False, zero_signs=True):
    """`cases`: (label, tlaloc array, expected NumPy array) triples. Evaluates every array at
    once (one program per device, so one compile covers many checks), then compares each with
    assert_matches (and assert_zero_signs); reports every failure together."""
    cases = list(cases)
    xp.eval(*[c[1] for c in cases])
    failures = []
    for label, actual, expected in cases:
        try:
            assert_matches(actual, expected, exact=exact)
            if zero_signs:
                assert_zero_signs(actual, expected)
        except AssertionError as exc:
            failures.append(f"{label}: {str(exc).strip()[:600]}")
    assert not failures, "\n".join(failures)


_BITS = {"bool": 8, "int8": 8, "int16": 16, "int32": 32, "int64": 64, "uint8": 8, "uint16": 16,
         "uint32": 32, "uint64": 64, "float16": 16, "bfloat16": 16, "float32": 32, "float64": 64,
         "complex64": 64, "complex128": 128}


def dtype_kind(name):
    """'b', 'i', 'u', 'f' or 'c' for a dtype name (bfloat16 included)."""
    if name == "bool":
        return "b"
    if name.startswith("complex"):
        return "c"
    if "float" in name:
        return "f"
    return "u" if name.startswith("uint") else "i"


def expected_promotion(d1, d2):
    """tlaloc's promotion of two dtype names (docs/dtypes.md), written out independently of
    tlaloc._dtypes: the standard's table within a kind; bool joins anything; integer with
    floating gives the floating dtype; real with complex gives complex at the wider
    precision. None where no dtype holds both (uint64 with a signed integer)."""
    if d1 == d2:
        return d1
    k1, k2 = dtype_kind(d1), dtype_kind(d2)
    if k1 == "b":
        return d2
    if k2 == "b":
        return d1
    if k1 == k2:
        if {d1, d2} == {"float16", "bfloat16"}:
            return "float32"
        return d1 if _BITS[d1] >= _BITS[d2] else d2
    if {k1, k2} == {"i", "u"}:
        s, u = (d1, d2) if k1 == "i" else (d2, d1)
        if _BITS[u] < _BITS[s]:
            return s
        return None if _BITS[u] == 64 else f"int{2 * _BITS[u]}"
    if k1 in "iu":
        return d2
    if k2 in "iu":
        return d1
    f, c = (d1, d2) if k1 == "f" else (d2, d1)
    return "complex128" if c == "complex128" or f == "float64" else "complex64"


def random_normal(shape, dtype, seed=0):
    """Standard normal values of `dtype` (complex dtypes get a random imaginary part)."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def rerun_with_cpu_devices(test_file, count, timeout=300):
    """Run the pytest module `test_file` in a subprocess with `count` CPU devices (the count
    is fixed when the CPU client is made, and the suite runs on one): its tests that need the
    devices run there, and this asserts that they passed."""
    import os
    import subprocess
    import sys
    env = dict(os.environ, TLALOC_CPU_DEVICES=str(count))
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                           os.path.abspath(test_file)], env=env, cwd=os.path.dirname(test_file),
                          capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    assert " passed" in done.stdout
