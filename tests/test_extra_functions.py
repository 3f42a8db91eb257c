"""cumulative_sum, cumulative_prod, diff, tile, repeat, roll, take and take_along_axis against
NumPy, on both tiers."""
import numpy as np
import pytest

import tlaloc as xp
from helpers import assert_matches


def check_all(pairs, **kw):
    xp.eval(*[a for a, _ in pairs])
    for a, e in pairs:
        assert_matches(a, e, **kw)


def _np_cumulative(fn, a, axis, dtype, include_initial):
    out = fn(a, axis=axis, dtype=dtype)
    if include_initial:
        shape = list(out.shape)
        shape[axis] = 1
        init = np.full(shape, 0 if fn is np.cumsum else 1, dtype=out.dtype)
        out = np.concatenate([init, out], axis=axis)
    return out


def _accumulator(dtype):
    """The standard's default accumulation dtype of sum/prod (tlaloc's defaults)."""
    if dtype == "bool" or (dtype.startswith("int") and dtype != "int64"):
        return np.int64
    if dtype.startswith("uint"):
        return np.uint64
    return np.dtype(dtype)


# ----------------------------------------------------------------------------- cumulative

@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int64", "float32", "float64", "complex64"])
def test_cumulative(tier, dtype):
    rng = np.random.default_rng(0)
    a = rng.integers(-3, 4, (3, 9)).astype(dtype)
    if dtype.startswith("float"):
        a[1, 3] = np.nan
        a[2, 0] = np.inf
    x = xp.asarray(a, device=tier)
    pairs = []
    for xfn, nfn in ((xp.cumulative_sum, np.cumsum), (xp.cumulative_prod, np.cumprod)):
        for axis in (0, 1, -1):
            for init in (False, True):
                pairs.append((xfn(x, axis=axis, include_initial=init),
                              _np_cumulative(nfn, a, axis % 2, _accumulator(dtype), init)))
        if dtype != "bool":
            pairs.append((xfn(x, axis=1, dtype=x.dtype), nfn(a, axis=1, dtype=a.dtype)))
        pairs.append((xfn(x[0]), nfn(a[0], dtype=_accumulator(dtype))))
    check_all(pairs)


def test_cumulative_long_and_empty(tier):
    rng = np.random.default_rng(1)
    a = rng.standard_normal(1000)
    i = rng.integers(-100, 100, (2, 777)).astype(np.int32)
    x, xi = xp.asarray(a, device=tier), xp.asarray(i, device=tier)
    check_all([(xp.cumulative_sum(x), np.cumsum(a)),
               (xp.cumulative_sum(xi, axis=1, dtype=xp.int32), np.cumsum(i, axis=1, dtype=np.int32)),
               (xp.cumulative_prod(xi % 3 - 1, axis=1), np.cumprod(i % 3 - 1, axis=1, dtype=np.int64)),
               (xp.cumulative_sum(xp.zeros((0, 3), device=tier), axis=0), np.zeros((0, 3))),
               (xp.cumulative_sum(xp.zeros((0,), device=tier), include_initial=True), np.zeros((1,))),
               (xp.cumulative_prod(xp.zeros((2, 0), device=tier), axis=1, include_initial=True), np.ones((2, 1)))],
              rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError):
        xp.cumulative_sum(xi)                 # axis needed for 2-d
    with pytest.raises(ValueError):
        xp.cumulative_sum(xp.asarray(1.0, device=tier))
    with pytest.raises(IndexError):
        xp.cumulative_prod(xi, axis=2)
    with pytest.raises(TypeError):
        xp.cumulative_sum(x, dtype=xp.bool)


# ----------------------------------------------------------------------------- diff

@pytest.mark.parametrize("dtype", ["bool", "uint8", "int32", "float32", "complex128"])
def test_diff(tier, dtype):
    rng = np.random.default_rng(2)
    a = rng.integers(0, 9, (3, 6)).astype(dtype)
    x = xp.asarray(a, device=tier)
    pairs = []
    for axis in (-1, 0):
        for n in (0, 1, 2, 4, 8):
            pairs.append((xp.diff(x, axis=axis, n=n), np.diff(a, axis=axis, n=n)))
    pre, app = a[:, :2], a[:, -1:]
    pairs.append((xp.diff(x, prepend=xp.asarray(pre, device=tier), append=xp.asarray(app, device=tier)),
                  np.diff(a, prepend=pre, append=app)))
    pairs.append((xp.diff(x, axis=0, n=2, append=xp.asarray(a[:1], device=tier)),
                  np.diff(a, axis=0, n=2, append=a[:1])))
    check_all(pairs)


def test_diff_mixed_and_errors(tier):
    a = np.array([1, 4, 9], dtype=np.int16)
    x = xp.asarray(a, device=tier)
    check_all([(xp.diff(x, prepend=0, append=20), np.diff(a, prepend=np.int16(0), append=np.int16(20))),
               (xp.diff(x, append=xp.asarray([2.5], device=tier)),
                np.diff(np.array([1, 4, 9, 2.5]))),
               (xp.diff(xp.zeros((2, 0), device=tier)), np.zeros((2, 0)))])
    with pytest.raises(ValueError):
        xp.diff(xp.asarray(1, device=tier))
    with pytest.raises(ValueError):
        xp.diff(x, n=-1)
    with pytest.raises(TypeError):
        xp.diff(x, n=1.0)
    with pytest.raises(ValueError):
        xp.diff(x, prepend=xp.ones((2, 2), device=tier))


# ----------------------------------------------------------------------------- tile / repeat / roll

def test_tile(tier):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = xp.asarray(a, device=tier)
    reps = [(2,), (1, 1), (2, 3), (3, 1, 2), (0, 2), (1, 0)]
    check_all([(xp.tile(x, r), np.tile(a, r)) for r in reps]
              + [(xp.tile(x[0, 0], (3,)), np.tile(a[0, 0], 3)),
                 (xp.tile(xp.asarray([True, False], device=tier), (2, 2)), np.tile([True, False], (2, 2)))])
    with pytest.raises(ValueError):
        xp.tile(x, (-1, 2))
    with pytest.raises(TypeError):
        xp.tile(x, (1.5,))


def test_repeat(tier):
    a = np.arange(6, dtype=np.int8).reshape(2, 3)
    x = xp.asarray(a, device=tier)
    pairs = [(xp.repeat(x, 2), np.repeat(a, 2)), (xp.repeat(x, 3, axis=1), np.repeat(a, 3, axis=1)),
             (xp.repeat(x, 0, axis=0), np.repeat(a, 0, axis=0)), (xp.repeat(x, 1, axis=-1), a),
             (xp.repeat(xp.asarray(5.0, device=tier), 3), np.repeat(5.0, 3))]
    for r, axis in (([0, 3], 0), ([2, 0, 1], 1), ([1, 0, 2, 0, 0, 3], None), ([2], 1), ([0, 0], 0)):
        pairs.append((xp.repeat(x, xp.asarray(r, device=tier), axis=axis), np.repeat(a, r, axis=axis)))
    pairs.append((xp.repeat(x, xp.asarray(np.array([1, 2], np.uint8), device=tier) * 1, axis=0),
                  np.repeat(a, [1, 2], axis=0)))
    check_all(pairs)
    with pytest.raises(ValueError):
        xp.repeat(x, -1)
    with pytest.raises(ValueError):
        xp.repeat(x, xp.asarray([1, -1], device=tier), axis=0)
    with pytest.raises(ValueError):
        xp.repeat(x, xp.asarray([1, 2], device=tier), axis=1)
    with pytest.raises(TypeError):
        xp.repeat(x, xp.asarray([1.0, 2.0], device=tier), axis=0)
    with pytest.raises(TypeError):
        xp.repeat(x, 1.5)


def test_roll(tier):
    a = np.arange(24).reshape(2, 3, 4)
    x = xp.asarray(a, device=tier)
    cases = [(1, None), (-5, None), (1, 1), (7, -1), ((1, 2), (0, 2)), ((1, -1), (2, 2)), (2, (0, 1)), (0, 1)]
    check_all([(xp.roll(x, s, axis=ax), np.roll(a, s, axis=ax)) for s, ax in cases]
              + [(xp.roll(xp.zeros((0, 2), device=tier), 3, axis=0), np.zeros((0, 2)))])
    with pytest.raises(ValueError):
        xp.roll(x, (1, 2), axis=(0,))
    with pytest.raises(IndexError):
        xp.roll(x, 1, axis=3)


# ----------------------------------------------------------------------------- take / take_along_axis

@pytest.mark.parametrize("dtype", ["bool", "int16", "float64", "complex64"])
def test_take(tier, dtype):
    a = (np.arange(24).reshape(2, 3, 4) % 5).astype(dtype)
    x = xp.asarray(a, device=tier)
    pairs = []
    for idx, axis in (([2, 0, -1], 1), ([1], 0), ([3, 3, -4, 0], 2), ([], 1), ([[0, 1], [-1, 0]], 2)):
        i = np.array(idx, dtype=np.int64)
        pairs.append((xp.take(x, xp.asarray(i, device=tier), axis=axis), np.take(a, i, axis=axis)))
    flat = a.ravel()
    for idt in ("int8", "uint32"):
        i = np.array([0, 5, 23, 7], dtype=idt)
        pairs.append((xp.take(xp.asarray(flat, device=tier), xp.asarray(i, device=tier)), np.take(flat, i)))
    check_all(pairs)


def test_take_errors_and_pending_indices(lazy, tier):
    x = xp.asarray(np.arange(12).reshape(3, 4), device=tier)
    with pytest.raises(IndexError):
        xp.take(x, xp.asarray([0, 4], device=tier), axis=1)       # known out of bounds
    with pytest.raises(IndexError):
        xp.take(x, xp.asarray([-4], device=tier), axis=0)
    with pytest.raises(ValueError):
        xp.take(x, xp.asarray([0], device=tier))                  # axis needed for 2-d
    with pytest.raises(TypeError):
        xp.take(x, xp.asarray([0.0], device=tier), axis=0)
    with pytest.raises(TypeError):
        xp.take(x, [0, 1], axis=0)
    # pending indices: negatives count from the end, out-of-bounds values are clamped
    i = xp.asarray([1, -1, 9, -9], device=tier) + 0   # pending: its values are not checked
    assert_matches(xp.take(x, i, axis=1), np.arange(12).reshape(3, 4)[:, [1, 3, 3, 0]])


def test_take_along_axis(tier):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 5)).astype(np.float32)
    x = xp.asarray(a, device=tier)
    order = np.argsort(a, axis=1)
    pairs = [(xp.take_along_axis(x, xp.argsort(x, axis=1), axis=1), np.take_along_axis(a, order, axis=1)),
             (xp.take_along_axis(x, xp.argsort(x, axis=0), axis=0), np.sort(a, axis=0)),
             (xp.take_along_axis(x, xp.asarray([[0, -1]], device=tier), axis=1),
              np.take_along_axis(a, np.array([[0, 4]] * 3), axis=1)),      # broadcasts along axis 0
             (xp.take_along_axis(x, xp.asarray([[2], [0], [1]], device=tier), axis=-1),
              np.take_along_axis(a, np.array([[2], [0], [1]]), axis=-1)),
             (xp.take_along_axis(x, xp.asarray(np.zeros((3, 0), np.int64), device=tier), axis=1),
              np.zeros((3, 0), np.float32)),
             (xp.take_along_axis(x[0], xp.asarray([4, 0, 0], device=tier)), a[0, [4, 0, 0]])]
    check_all(pairs)
    with pytest.raises(ValueError):
        xp.take_along_axis(x, xp.asarray([0, 1], device=tier), axis=1)
    with pytest.raises(IndexError):
        xp.take_along_axis(x, xp.asarray([[5]], device=tier), axis=1)
    with pytest.raises(ValueError):
        xp.take_along_axis(x, xp.asarray(np.zeros((2, 2), np.int64), device=tier), axis=1)


def test_cumulative_primitive_kinds_long_axes(tier):
    """The cumulative primitive (every kind; axes long enough for the blocked scan) agrees
    with NumPy's accumulations on both tiers."""
    from tlaloc._api._core import wrap
    from tlaloc._graph import bind
    from tlaloc._prims import scan
    rng = np.random.default_rng(5)
    a = rng.integers(-4, 5, (131, 67)).astype(np.float64)
    a[5, 3] = np.nan
    b = rng.integers(0, 2, (2, 300)).astype(bool)
    refs = {"sum": np.cumsum, "prod": np.cumprod, "max": np.maximum.accumulate,
            "min": np.minimum.accumulate}
    x, xb = xp.asarray(a, device=tier), xp.asarray(b, device=tier)
    pairs = []
    for kind, ref in refs.items():
        for axis in (0, 1):
            pairs.append((wrap(bind(scan.cumulative, (x._node,), {"axis": axis, "kind": kind})),
                          ref(a, axis=axis)))
    for kind, ref in (("max", np.logical_or.accumulate), ("min", np.logical_and.accumulate)):
        pairs.append((wrap(bind(scan.cumulative, (xb._node,), {"axis": 1, "kind": kind})), ref(b, axis=1)))
    check_all(pairs, rtol=1e-12, atol=1e-9)
