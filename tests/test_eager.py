"""Operations on small computed host arrays run as they are recorded (config.eager_max_size,
docs/execution.md "Small operations run at once"): the values equal the lazy path's on both
host devices, derivatives see through them, and everything that needs a graph (large
arrays, pending operands, device buffers, jit, control flow, profiles) still records one."""
import warnings
import weakref

import numpy as np
import pytest
from hypothesis import given, strategies as st

import tlaloc as xp
from helpers import assert_matches, recorded

HOSTS = ["cpu", "interpreter"]


def _computed(a):
    return a._node.value is not None


def _steps(xp_, x, w):
    """Every kind of operation the one-shot code makes: elementwise with arrays and Python
    scalars, broadcasting, reductions, keepdims, views, matmul, indexing, a write."""
    y = xp_.sin(x) * w + 0.5
    y = y / (xp_.abs(y) + 1.0)
    y = y - xp_.mean(y, axis=-1, keepdims=True)
    g = y @ xp_.matrix_transpose(y)
    z = xp_.where(xp_.abs(y) > 0.5, y, -y) ** 2
    z[..., :1] = 0.25
    return xp_.sum(g), xp_.prod(z, axis=0), xp_.cumulative_sum(z, axis=-1)[..., -1:], z[::-1]


@pytest.mark.parametrize("device", HOSTS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
@pytest.mark.parametrize("shape", [(3, 5), (1, 4), (2, 0), (4, 1)])
def test_values_equal_the_lazy_paths_and_numpys(device, dtype, shape):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shape).astype(dtype)
    b = rng.standard_normal(shape[-1:]).astype(dtype)        # broadcast against a
    if dtype == "complex64":
        a = a + 1j * rng.standard_normal(shape).astype(np.float32)
    dev = xp.device(device)
    xp.reset_cache_info()
    eager = _steps(xp, xp.asarray(a, device=dev), xp.asarray(b, device=dev))
    assert all(_computed(r) for r in eager)
    assert xp.cache_info()["immediate"] > 10 and xp.cache_info()["interpreted"] == 0
    with recorded():
        lazy = _steps(xp, xp.asarray(a, device=dev), xp.asarray(b, device=dev))
        assert not any(_computed(r) for r in lazy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # NumPy's mean of an empty row warns
        expected = _steps(np, a.copy(), b)
    for e, l, n in zip(eager, lazy, expected):
        assert_matches(e, np.asarray(l), exact=True)             # the same NumPy rules
        assert_matches(e, n, rtol=1e-5, atol=1e-5)


SPECIALS = [0.0, -0.0, 1e-40, -1e-310, np.inf, -np.inf, np.nan, 3.5, -2.0]
UNARY = ["exp", "log", "sqrt", "tanh", "negative", "square"]


@given(st.lists(st.sampled_from(UNARY), min_size=1, max_size=6), st.sampled_from(SPECIALS))
def test_chains_on_special_values_equal_the_lazy_interpreters(names, special):
    """Eager chains give the interpreter's values exactly, special values included, and
    raise no NumPy warnings (inf and nan are values, as in StableHLO)."""
    a = np.array([special, 1.0, -1.0, special], dtype=np.float64)

    def run():
        y = xp.asarray(a)
        for name in names:
            y = getattr(xp, name)(y)
        return y
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)   # NumPy's warnings fail the test
        eager = run()
    assert _computed(eager)
    previous = xp.config.update(execution="interpreted")   # (auto compiles repeats)
    try:
        with recorded():
            lazy = run()
            assert_matches(eager, np.asarray(lazy), exact=True)   # the same NumPy rules
    finally:
        xp.config.update(**previous)


@pytest.mark.parametrize("name", UNARY)
def test_special_values_match_the_compiled_tier(name):
    """One function on special values: what XLA computes, within the documented tolerance
    (XLA's transcendental functions differ from NumPy's by an ulp), with the special values
    (nan, infinities, signed zeros, flushed subnormals) in the same places."""
    a = np.array(SPECIALS, dtype=np.float64)
    eager = getattr(xp, name)(xp.asarray(a))
    assert _computed(eager)
    previous = xp.config.update(execution="compiled")
    try:
        compiled = getattr(xp, name)(xp.asarray(a))
        assert not _computed(compiled)
        assert_matches(eager, np.asarray(compiled), rtol=1e-15, atol=0)
    finally:
        xp.config.update(**previous)


def test_subnormals_flush_as_xla_does():
    tiny = xp.asarray(np.array([1e-310, -1e-310, 1.0]))
    assert np.asarray(tiny * 1.0).tolist() == [0.0, 0.0, 1.0]
    assert np.signbit(np.asarray(tiny * 1.0))[1]
    assert float(np.float64(1e-310) * 1.0) == 1e-310    # the mode does not leak to NumPy


def test_a_computed_operation_keeps_no_history():
    """Each result drops its inputs, so a long loop holds one value, not a graph."""
    y = xp.asarray(np.ones(8))
    first = y * 1.0
    ref = weakref.ref(first._node)
    y = first
    for _ in range(2000):
        y = y * 1.0001
    del first
    assert ref() is None and y._node.inputs == () and y._node.pending == 0
    np.testing.assert_allclose(np.asarray(y), 1.0001 ** 2000)


def test_the_bound_and_the_setting():
    n = xp.config.eager_max_size
    assert n == 16384
    assert _computed(xp.asarray(np.ones(n)) + 1.0)
    assert not _computed(xp.asarray(np.ones(n + 1)) + 1.0)            # the result's size
    assert not _computed(xp.sum(xp.asarray(np.ones(n + 1))))           # an operand's size
    xp.config.update(eager_max_size=0)
    assert not _computed(xp.asarray(np.ones(1)) + 1.0)
    for bad in (-1, 1.5, True, "8"):
        with pytest.raises(ValueError, match="eager_max_size"):
            xp.config.update(eager_max_size=bad)


def test_what_stays_lazy():
    x = xp.asarray(np.arange(6.0))
    pending = x + xp.asarray(np.ones(10**5))[:6]          # an operand pending: recorded
    assert not _computed(pending)
    assert not _computed(pending * 2.0)
    previous = xp.config.update(execution="compiled")     # every program compiled
    try:
        assert not _computed(x * 2.0)
        buffer = x * 2.0
        xp.eval(buffer)                                   # its value: a device buffer
    finally:
        xp.config.update(**previous)
    assert not _computed(buffer + 1.0)
    np.testing.assert_allclose(np.asarray(buffer + 1.0), np.arange(6.0) * 2 + 1)


def test_jit_traces_and_compiles_small_functions():
    x = xp.asarray(np.arange(4.0))
    f = xp.jit(lambda a: xp.sin(a) * 2.0 + xp.asarray(np.ones(4)) * 3.0)
    xp.reset_cache_info()
    for _ in range(3):
        np.testing.assert_allclose(np.asarray(f(x)), np.sin(np.arange(4.0)) * 2 + 3)
    info = xp.cache_info()
    assert info["compiles"] + info["disk_hits"] == 1 and info["hits"] >= 2, info


def test_control_flow_and_profiles_record():
    x = xp.asarray(np.arange(4.0))
    out = xp.cond(xp.sum(x) > 1, lambda v: v * 2.0, lambda v: v - 1.0, x)
    np.testing.assert_allclose(np.asarray(out), np.arange(4.0) * 2)
    with xp.profile() as prof:
        y = xp.exp(x) + 1.0
        assert not _computed(y)            # a profile sees the program
        xp.eval(y)
    assert prof is not None


@pytest.mark.parametrize("name", ["elementwise", "inv", "slogdet", "eigh", "indexing"])
def test_derivatives_see_through_eager_operations(name):
    rng = np.random.default_rng(1)
    m = rng.standard_normal((3, 3))
    m = m @ m.T + 3 * np.eye(3)
    fns = {
        "elementwise": lambda a: xp.sum(xp.sin(a) * a ** 2),
        "inv": lambda a: xp.sum(xp.linalg.inv(a)),
        "slogdet": lambda a: xp.linalg.slogdet(a)[1],
        "eigh": lambda a: xp.sum(xp.linalg.eigh(a).eigenvalues ** 2),
        "indexing": lambda a: xp.sum(a[xp.asarray([0, 2])] ** 3),
    }
    f = fns[name]
    eager = np.asarray(xp.grad(f)(xp.asarray(m)))
    with recorded():
        lazy = np.asarray(xp.grad(f)(xp.asarray(m)))
    np.testing.assert_allclose(eager, lazy, rtol=1e-12, atol=1e-12)
    assert np.abs(eager).max() > 0


def test_known_index_values_are_checked_as_numpy_does():
    """An index array computed at once has known values: out of range is an IndexError at
    the call, as in NumPy (a pending one clamps, as documented for pending indices)."""
    x = xp.asarray(np.arange(5.0))
    idx = xp.asarray(np.array([1, 2])) * 3
    with pytest.raises(IndexError, match="out of bounds"):
        xp.take(x, idx)


# ----------------------------------------------------------------------------- host shortcuts
# The namespace computes a few operations on small computed host arrays with NumPy at
# once (take, a boolean mask, a linalg result's parts): the values must be the recorded
# path's, and bad indices the same errors.

def _both(fn, *arrays):
    """fn's results on computed arrays, and with every operation recorded."""
    eager = fn(*[xp.asarray(a) for a in arrays])
    with recorded():
        lazy = fn(*[xp.asarray(a) for a in arrays])
    return eager, lazy


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_take_on_host_values_equals_the_recorded_gather(axis):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((6, 5))
    idx = np.array([0, -1, 3, 2, -5, 4])
    eager, lazy = _both(lambda x, i: xp.take(x, i, axis=axis), a, idx[: a.shape[axis]])
    assert _computed(eager) and not _computed(lazy)
    assert_matches(eager, np.asarray(lazy), exact=True)
    assert_matches(eager, np.take(a, idx[: a.shape[axis]], axis=axis), exact=True)
    for bad in ([6], [-7]):
        with pytest.raises(IndexError, match="out of bounds"):
            xp.take(xp.asarray(a), xp.asarray(np.array(bad)), axis=0)


@pytest.mark.parametrize("shape,mask_ndim", [((7, 3), 1), ((7, 3), 2), ((4, 2, 3), 2), ((5,), 1)])
def test_a_boolean_mask_on_host_values_equals_the_recorded_path(shape, mask_ndim):
    rng = np.random.default_rng(2)
    a = rng.standard_normal(shape)
    m = rng.random(shape[:mask_ndim]) > 0.4
    eager, lazy = _both(lambda x, k: x[k], a, m)
    assert _computed(eager)
    assert_matches(eager, np.asarray(lazy), exact=True)
    assert_matches(eager, a[m], exact=True)
    with pytest.raises(IndexError):
        xp.asarray(a)[xp.asarray(np.ones(shape[0] + 1, bool))]


def test_slice_bounds_given_as_numpy_ints_or_0d_arrays_index_as_python_ints():
    a = np.arange(30.0).reshape(5, 6)
    x = xp.asarray(a)
    for key, want in [((slice(None, np.int64(3)),), a[:3]),
                      ((slice(None), slice(xp.asarray(1), xp.asarray(np.int32(5)))), a[:, 1:5]),
                      ((np.int64(2), slice(None, None, np.int8(-2))), a[2, ::-2]),
                      (np.int16(-1), a[-1])]:
        assert_matches(x[key], want, exact=True)
    with pytest.raises(IndexError):
        x[np.int64(5)]
    with pytest.raises(TypeError):
        x[: xp.asarray(2.0)]       # a float bound is no index


@pytest.mark.parametrize("batch", [(), (3,)])
@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128"])
def test_svd_and_eigh_parts_on_host_values_equal_the_recorded_path(batch, dtype):
    rng = np.random.default_rng(3)
    a = rng.standard_normal(batch + (6, 4)).astype(dtype)
    if dtype == "complex128":
        a = a + 1j * rng.standard_normal(a.shape)
    h = a.swapaxes(-1, -2).conj() @ a
    eager, lazy = _both(lambda x: xp.linalg.svd(x, full_matrices=False), a)
    for e, l in zip(eager, lazy):
        assert _computed(e)
        assert_matches(e, np.asarray(l), exact=True)
    eager, lazy = _both(xp.linalg.eigh, h)
    for e, l in zip(eager, lazy):
        assert_matches(e, np.asarray(l), exact=True)
    assert_matches(xp.linalg.svdvals(xp.asarray(a)), np.linalg.svd(a, compute_uv=False),
                   rtol=1e-5, atol=1e-5)


def test_a_matrix_svd_cannot_converge_on_is_nan_and_the_others_are_computed():
    a = np.random.default_rng(4).standard_normal((3, 4, 4))
    a[1, 0, 0] = np.nan
    u, s, vh = xp.linalg.svd(xp.asarray(a))
    s = np.asarray(s)
    assert np.isnan(s[1]).all()
    np.testing.assert_allclose(s[[0, 2]], np.linalg.svd(a[[0, 2]], compute_uv=False))


@pytest.mark.parametrize("values", [[-0.0, 0.0, 1.0], [0.0, -0.0, np.nan, 1.0, np.nan],
                                    [3, 1, 3, 2, 1], [True, False, True]])
def test_unique_values_on_host_values_equal_the_recorded_path(values):
    a = np.array(values)
    eager, lazy = _both(xp.unique_values, a)
    assert_matches(eager, np.asarray(lazy), exact=True)
    if a.dtype.kind == "f":
        np.testing.assert_array_equal(np.signbit(np.asarray(eager)), np.signbit(np.asarray(lazy)))
