"""Writes through views (docs/indexing.md, "Views"): random chains of views of a base and
random writes through them, every live array compared with NumPy doing the same; the view
and copy rules one by one; and writes through views under grad, jit and export."""
import gc
import weakref

import numpy as np
import pytest
from hypothesis import HealthCheck, given, note, settings, strategies as st
from hypothesis.extra import numpy as npst

import tlaloc as xp

from helpers import assert_matches

DTYPES = ["float32", "float64", "int32", "uint8", "complex64", "complex128", "bool"]


def _values(shape, dtype):
    """Distinct, exactly representable values of `dtype`."""
    n = int(np.prod(shape))
    k = np.arange(n).reshape(shape)
    if dtype == "bool":
        return np.asarray(k % 3 == 0)
    if dtype.startswith("complex"):
        return np.asarray(k + 1j * (7 - 2 * k)).astype(dtype)
    return np.asarray(k * 3 + 1).astype(dtype)


def _scalar(data, dtype):
    """A Python scalar of the array's kind: an in-place operation keeps the dtype."""
    if dtype == "bool":
        return data.draw(st.booleans())
    if dtype.startswith("complex"):
        return complex(data.draw(st.integers(-3, 3)), data.draw(st.integers(-3, 3)))
    if dtype.startswith("float"):
        return float(data.draw(st.integers(-4, 4))) / 2
    return data.draw(st.integers(0, 5))


def _shape_of_size(data, size):
    """A shape with `size` elements, maybe with a -1 (reshape's inferred axis)."""
    if size == 0:
        return data.draw(st.sampled_from([(0,), (0, 2), (3, 0), (0, 1, 1)]))
    dims = []
    left = size
    for _ in range(data.draw(st.integers(0, 2))):
        d = data.draw(st.sampled_from([d for d in range(1, left + 1) if left % d == 0]))
        dims.append(d)
        left //= d
    dims.append(left)
    for _ in range(data.draw(st.integers(0, 1))):
        dims.insert(data.draw(st.integers(0, len(dims))), 1)
    dims = data.draw(st.permutations(dims))
    if data.draw(st.booleans()):
        dims[data.draw(st.integers(0, len(dims) - 1))] = -1
    return tuple(dims)


# ----------------------------------------------------------------------------- random programs
#
# Each operation takes one live array (by its index in the list) and does the same on the
# NumPy array and the tlaloc array: a view (appended), a copy (appended), a write, a read,
# or dropping the array (views of it stay live, its storage with them).

def _view_or_copy(data, a, t):
    """(description, NumPy result, tlaloc result) for a function that views or copies."""
    dtype = a.dtype.name
    kind = data.draw(st.sampled_from(
        ["index", "index", "reshape", "permute", "T", "mT", "expand", "squeeze", "flip",
         "real", "imag", "moveaxis", "unstack", "take", "astype", "arith"]))
    nd = a.ndim
    if kind == "index":
        key = data.draw(npst.basic_indices(a.shape, min_dims=0, allow_newaxis=True,
                                           allow_ellipsis=True))
        return f"x[{key!r}]", a[key], t[key]
    if kind == "reshape":
        shape = _shape_of_size(data, a.size)
        copy = data.draw(st.sampled_from([None, None, False, True]))
        try:
            r = np.reshape(a, shape, copy=copy)
        except ValueError:
            with pytest.raises(ValueError, match="copy=False"):
                xp.reshape(t, shape, copy=copy)
            return None
        return f"reshape(x, {shape}, copy={copy})", r, xp.reshape(t, shape, copy=copy)
    if kind == "permute":
        perm = tuple(data.draw(st.permutations(range(nd))))
        return f"permute_dims(x, {perm})", np.permute_dims(a, perm), xp.permute_dims(t, perm)
    if kind == "T" and nd == 2:
        return "x.T", a.T, t.T
    if kind == "mT" and nd >= 2:
        return "x.mT", a.mT, t.mT
    if kind == "expand":
        ax = data.draw(st.integers(-nd - 1, nd))
        return f"expand_dims(x, axis={ax})", np.expand_dims(a, ax), xp.expand_dims(t, axis=ax)
    if kind == "squeeze":
        ones = tuple(i for i, n in enumerate(a.shape) if n == 1)
        axes = tuple(data.draw(st.lists(st.sampled_from(ones), unique=True))) if ones else ()
        return f"squeeze(x, {axes})", np.squeeze(a, axes), xp.squeeze(t, axes)
    if kind == "flip":
        axes = None if nd == 0 or data.draw(st.booleans()) else tuple(
            data.draw(st.lists(st.integers(0, nd - 1), unique=True)))
        return f"flip(x, axis={axes})", np.flip(a, axes), xp.flip(t, axis=axes)
    if kind == "real" and dtype != "bool":
        return "real(x)", np.real(a), xp.real(t)
    if kind == "imag" and dtype.startswith("complex"):
        return "imag(x)", np.imag(a), xp.imag(t)
    if kind == "moveaxis" and nd >= 1:
        src, dst = data.draw(st.integers(-nd, nd - 1)), data.draw(st.integers(-nd, nd - 1))
        return f"moveaxis(x, {src}, {dst})", np.moveaxis(a, src, dst), xp.moveaxis(t, src, dst)
    if kind == "unstack" and nd >= 1 and a.shape[0] > 0:
        i = data.draw(st.integers(0, a.shape[0] - 1))
        return f"unstack(x)[{i}]", np.unstack(a)[i], xp.unstack(t)[i]
    if kind == "take" and nd >= 1 and a.shape[0] > 0:
        idx = data.draw(st.lists(st.integers(0, a.shape[0] - 1), min_size=1, max_size=3))
        return f"x[{idx}]", a[idx], t[xp.asarray(idx, device=t.device)]       # integer arrays copy
    if kind == "astype":
        return "astype(x, x.dtype)", a.astype(a.dtype), xp.astype(t, t.dtype)
    if kind == "arith" and dtype != "bool":
        return "x * 1", a * a.dtype.type(1), t * 1
    return None


def _write(data, a, t, others):
    """A write through (a, t): __setitem__ or an in-place operator, with a scalar or another
    live array (possibly overlapping this one) as the value."""
    dtype = a.dtype.name
    kind = data.draw(st.sampled_from(["setitem", "setitem", "inplace", "ints", "mask"]))
    if kind == "ints" and a.ndim >= 1 and a.shape[0] > 0:   # integer-array keys write too
        idx = data.draw(st.lists(st.integers(-a.shape[0], a.shape[0] - 1), min_size=1,
                                 max_size=3, unique_by=lambda i: i % a.shape[0]))
        v = _scalar(data, dtype)
        a[idx] = v
        t[xp.asarray(idx, device=t.device)] = v
        return f"x[{idx}] = {v!r}"
    if kind == "mask" and a.ndim >= 1:
        mask = _values(a.shape, "bool")
        v = _scalar(data, dtype)
        a[mask] = v
        t[xp.asarray(mask, device=t.device)] = v
        return f"x[mask] = {v!r}"
    if kind in ("setitem", "ints", "mask"):
        key = data.draw(npst.basic_indices(a.shape, min_dims=0, allow_newaxis=True,
                                           allow_ellipsis=True))
        region = a[key]
        fits = [(i, o) for i, o in enumerate(others)
                if o[0].dtype == a.dtype and _broadcasts(o[0].shape, np.shape(region))]
        if fits and data.draw(st.booleans()):
            i, (ov, ot) = data.draw(st.sampled_from(fits))
            a[key] = ov
            t[key] = ot
            return f"x[{key!r}] = array {i}"
        v = _scalar(data, dtype)
        a[key] = v
        t[key] = v
        return f"x[{key!r}] = {v!r}"
    ops = {"bool": ["|=", "&=", "^="], "int32": ["+=", "*=", "-="], "uint8": ["+=", "*="]}
    op = data.draw(st.sampled_from(ops.get(dtype, ["+=", "-=", "*="])))
    fits = [(i, o) for i, o in enumerate(others)
            if o[0].dtype == a.dtype and _broadcasts(o[0].shape, a.shape)]
    if fits and data.draw(st.booleans()):
        i, (ov, ot) = data.draw(st.sampled_from(fits))
        _inplace(op, a, ov)
        _inplace(op, t, ot)
        return f"x {op} array {i}"
    v = _scalar(data, dtype)
    _inplace(op, a, a.dtype.type(v))
    _inplace(op, t, v)
    return f"x {op} {v!r}"


def _inplace(op, target, value):
    if op == "+=":
        target += value
    elif op == "-=":
        target -= value
    elif op == "*=":
        target *= value
    elif op == "|=":
        target |= value
    elif op == "&=":
        target &= value
    else:
        target ^= value


def _broadcasts(src, dst):
    if len(src) > len(dst):
        return False
    return all(s in (1, d) for s, d in zip(src[::-1], dst[::-1]))


def _check(pairs):
    """Every live array against NumPy's (computed in one program)."""
    xp.eval(*[t for _, t in pairs])
    for i, (a, t) in enumerate(pairs):
        try:
            assert_matches(t, a, exact=True)
        except AssertionError as e:
            raise AssertionError(f"array {i}: {e}") from None


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
          deadline=None)
@given(data=st.data())
def test_random_views_and_writes_match_numpy(tier, data):
    dtype = data.draw(st.sampled_from(DTYPES))
    shape = data.draw(npst.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
    base = _values(shape, dtype)
    live = [(base.copy(), xp.asarray(base, device=tier))]
    note(f"array 0 = {dtype} base of shape {shape}")
    for _ in range(data.draw(st.integers(1, 10))):
        i = data.draw(st.integers(0, len(live) - 1))
        a, t = live[i]
        what = data.draw(st.sampled_from(["view", "view", "write", "write", "read", "drop"]))
        if what == "view":
            made = _view_or_copy(data, a, t)
            if made is not None:
                text, r, rt = made
                live.append((np.asarray(r), rt))    # NumPy's scalars: 0-d copies
                note(f"array {len(live) - 1} = {text} of array {i}")
        elif what == "write":
            note(_write(data, a, t, live) + f" (x is array {i})")
        elif what == "read":
            assert_matches(t, a, exact=True)
            note(f"read array {i}")
        elif len(live) > 1:
            live.pop(i)
            note(f"drop array {i}")
    _check(live)


@settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(data=st.data())
def test_views_have_numpys_layout(data):
    """Each view's byte strides and the bytes of the base it spans are NumPy's (what decides
    reshape's view-or-copy and which views a write can reach)."""
    from numpy.lib.array_utils import byte_bounds
    dtype = data.draw(st.sampled_from(["float64", "complex64", "uint8"]))
    shape = data.draw(npst.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    base = _values(shape, dtype)
    t0 = xp.asarray(base)
    live = [(base, t0)]
    start = byte_bounds(base)[0]
    for _ in range(data.draw(st.integers(1, 5))):
        a, t = live[data.draw(st.integers(0, len(live) - 1))]
        made = _view_or_copy(data, a, t)
        if made is None:
            continue
        text, r, rt = made
        note(text)
        r = np.asarray(r)
        v = getattr(rt, "_view", None)
        if r.size == 0:
            continue       # NumPy's empty arrays share no memory, views or not
        assert (v is not None) == np.shares_memory(r, base), text
        if v is None:
            continue
        assert [s for s, n in zip(v.strides, r.shape) if n > 1] == \
            [s for s, n in zip(r.strides, r.shape) if n > 1], text
        low, high = byte_bounds(r)
        assert v.extent == (low - start, high - start), text
        live.append((r, rt))


# ----------------------------------------------------------------------------- the rules, one by one

def test_issue_examples(tier):
    a = xp.reshape(xp.arange(12.0, device=tier), (3, 4))
    a[1:3][:, 1] = 50.0
    row = a[0]
    row += 1
    n = np.arange(12.0).reshape(3, 4)
    n[1:3][:, 1] = 50.0
    n[0] += 1
    assert_matches(a, n, exact=True)
    assert_matches(row, n[0], exact=True)


def test_views_of_views_see_each_others_writes(tier):
    a = xp.zeros((4, 6), device=tier)
    n = np.zeros((4, 6))
    v1, m1 = a[1:, ::2], n[1:, ::2]              # (3, 3)
    v2, m2 = xp.matrix_transpose(v1), m1.mT
    v3, m3 = xp.reshape(a, (24,)), n.reshape(24)
    v2[0] = 7.0
    m2[0] = 7.0
    v3[::5] += 1.0
    m3[::5] += 1.0
    a[..., -1] = -3.0
    n[..., -1] = -3.0
    for t, m in [(a, n), (v1, m1), (v2, m2), (v3, m3)]:
        assert_matches(t, m, exact=True)


def test_copies_do_not_see_writes(tier):
    a = xp.reshape(xp.arange(6.0, device=tier), (2, 3))
    copies = [a[xp.asarray([0, 1], device=tier)], a[a > 2], xp.astype(a, xp.float64), a + 0,
              xp.reshape(a.T, (6,)), xp.reshape(a, (3, 2), copy=True), a[0, 1]]
    before = [np.asarray(c).copy() for c in copies]
    a[...] = -1.0
    for c, b in zip(copies, before):
        assert_matches(c, b, exact=True)
    for c in copies:       # and writes to them stay theirs
        c[...] = 9.0
    assert_matches(a, np.full((2, 3), -1.0), exact=True)


def test_reshape_follows_numpys_layout_rule():
    base = xp.zeros((4, 6))
    n = np.zeros((4, 6))
    cases = [lambda x: x[:, 1:3], lambda x: x[1:3], lambda x: x.T, lambda x: x[::2],
             lambda x: x[:, ::-1], lambda x: x[None, :, None]]
    shapes = [(-1,), (2, -1), (-1, 2), (1, -1, 1)]
    for make in cases:
        for shape in shapes:
            src = make(n)
            try:
                r = np.reshape(src, shape)
            except ValueError:
                continue
            view = np.shares_memory(r, n)
            t = xp.reshape(make(base), shape)
            t[...] = 1.0                 # seen by base exactly when NumPy's is a view
            assert bool(xp.any(base == 1.0)) == view, (make, shape)
            base[...] = 0.0
            with pytest.raises(ValueError, match="copy=False") if not view else _nothing():
                xp.reshape(make(base), shape, copy=False)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_complex_parts_are_views(tier):
    z = xp.asarray([1 + 2j, 3 - 4j, -5j], device=tier)
    n = np.array([1 + 2j, 3 - 4j, -5j])
    re, im = xp.real(z), xp.imag(z)
    re[1:] = 10.0
    im *= 2.0
    np.real(n)[1:] = 10.0
    np.imag(n)[...] *= 2.0
    assert_matches(z, n, exact=True)
    assert_matches(re, n.real, exact=True)
    assert_matches(im, n.imag, exact=True)
    x = xp.asarray([1.0, 2.0], device=tier)
    r = xp.real(x)          # a real array's real part is the array, viewed
    r += 1.0
    assert_matches(x, np.array([2.0, 3.0]), exact=True)


def test_write_errors_name_the_problem():
    a = xp.zeros((2, 3), dtype=xp.float32)
    v = a[0]
    with pytest.raises(TypeError, match="dtype"):
        v += xp.ones(3, dtype=xp.float64)
    with pytest.raises(ValueError, match="shape"):
        v += xp.ones((2, 3), dtype=xp.float32)
    with pytest.raises(ValueError, match="broadcast"):
        v[...] = xp.ones(2, dtype=xp.float32)
    assert_matches(a, np.zeros((2, 3), np.float32), exact=True)   # nothing was written


def test_named_views_keep_names():
    a = xp.zeros((2, 3), names=("batch", "feature"))
    row = a[0]
    col = a[:, 1]
    t = a.T
    row += 1.0
    t[2] = 5.0
    assert a.names == ("batch", "feature") and row.names == ("feature",)
    assert col.names == ("batch",) and t.names == ("feature", "batch")
    assert_matches(a, np.array([[1.0, 1, 5], [0, 0, 5]]), exact=True)
    assert_matches(col, np.array([1.0, 0.0]), exact=True)


# ----------------------------------------------------------------------------- memory

def test_base_does_not_keep_dead_views_alive():
    a = xp.zeros((100, 4))
    refs = []
    for i in range(100):
        v = a[i]
        refs.append(weakref.ref(v))
        v += 1.0
    del v
    gc.collect()
    assert sum(r() is not None for r in refs) == 0
    assert_matches(a, np.ones((100, 4)), exact=True)
    assert len(a._view.family.members) < 20     # dead views are dropped as it goes



@pytest.mark.parametrize("take", [lambda a: a.T, lambda a: a[1:], lambda a: a[0][::2],
                                  lambda a: xp.reshape(a, (-1,))])
def test_a_family_goes_with_its_last_member_without_the_cycle_collector(take):
    """A family and the graph behind it are freed by reference counting when the last array
    of the family goes, as a NumPy base and its views are: nothing in a family refers back
    to itself, so nothing (the values of large intermediates included) waits for Python's
    cycle collector. `xp.sum(y @ y.T)` once left a cycle per evaluation."""
    gc.collect()
    gc.disable()
    try:
        a = xp.asarray(np.arange(12.0).reshape(3, 4)) * 2.0
        v = take(a)
        v += 1.0
        storage = weakref.ref(a._view.family.storage)
        node = weakref.ref(a._node)
        float(xp.sum(a))
        del a, v
        assert storage() is None and node() is None
    finally:
        gc.enable()

def test_writes_through_disjoint_views_leave_the_others_alone():
    """A write rebinds only the views whose bytes it reaches: writing through each of many
    rows costs one rebinding per write, not one per live row."""
    a = xp.zeros((50, 3))
    rows = xp.unstack(a)
    col = a[:, 1]
    before = [r._node for r in rows]
    seventh = rows[7]
    seventh += 1.0
    assert [r._node is b for r, b in zip(rows, before)].count(False) == 1
    assert col._node is not before[0]          # a column crosses every row
    for r in rows:
        r *= 2.0
        r += 1.0
    expected = np.ones((50, 3))
    expected[7] = 3.0
    assert_matches(a, expected, exact=True)
    assert_matches(col, expected[:, 1], exact=True)
    assert_matches(rows[7], expected[7], exact=True)


def test_a_view_keeps_its_storage_alive():
    a = xp.reshape(xp.arange(6.0), (2, 3))
    v = a[1]
    w = a[:, 0]
    del a
    gc.collect()
    v += 10.0               # seen by w through the storage the dead base left
    assert_matches(w, np.array([0.0, 13.0]), exact=True)


# ----------------------------------------------------------------------------- grad, jit, export

def _writes(x):
    """A function that writes through views of a copy of its argument."""
    y = x * 1.0
    y[1:3][:, 0] = x[0, 1:3] ** 2
    row = y[0]
    row *= 3.0
    flat = xp.reshape(y, (-1,))
    flat[::4] += 1.0
    xp.matrix_transpose(y)[1] -= x[:, 1]
    return xp.sum(y * y)


def _writes_np(x):
    y = x * 1.0
    y[1:3][:, 0] = x[0, 1:3] ** 2
    y[0] *= 3.0
    y.reshape(-1)[::4] += 1.0
    y.mT[1] -= x[:, 1]
    return np.sum(y * y)


X = np.linspace(-1.0, 1.5, 12).reshape(3, 4)


@pytest.fixture
def jax64():
    """jax with float64 enabled for the test (restored after)."""
    jax = pytest.importorskip("jax")
    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield jax
    jax.config.update("jax_enable_x64", previous)


def test_grad_flows_through_writes(tier, jax64):
    jax, jnp = jax64, jax64.numpy

    def ref(x):
        y = x * 1.0
        y = y.at[1:3, 0].set(x[0, 1:3] ** 2)
        y = y.at[0].multiply(3.0)
        flat = y.reshape(-1).at[::4].add(1.0)
        y = flat.reshape(3, 4)
        y = y.at[:, 1].add(-x[:, 1])
        return jnp.sum(y * y)

    x = xp.asarray(X, device=tier)
    assert_matches(_writes(x), _writes_np(X.copy()))
    assert_matches(xp.grad(_writes)(x), np.asarray(jax.grad(ref)(jnp.asarray(X))))


def test_grad_through_writes_into_the_differentiated_argument(tier, jax64):
    """Writes into x itself, through views, inside the function: the derivative is that of
    the written value (jax's .at updates as the reference); the caller's x is unchanged."""
    jax, jnp = jax64, jax64.numpy

    def f(x):
        top = x[0]
        top *= x[1]                     # x[0] = x[0] * x[1]
        xp.flip(x, axis=1)[:, 0] += 2.0   # the last column
        return xp.sum(xp.sin(x) * x)

    def ref(x):
        x = x.at[0].set(x[0] * x[1])
        x = x.at[:, -1].add(2.0)
        return jnp.sum(jnp.sin(x) * x)

    x = xp.asarray(X, device=tier)
    assert_matches(xp.grad(f)(x), np.asarray(jax.grad(ref)(jnp.asarray(X))))
    assert_matches(x, X, exact=True)


def test_grad_through_writes_matches_finite_differences(tier):
    x = xp.asarray(X, device=tier)
    g = np.asarray(xp.grad(_writes)(x))
    h = 1e-6
    fd = np.zeros_like(X)
    for i in np.ndindex(X.shape):
        e = np.zeros_like(X)
        e[i] = h
        fd[i] = (_writes_np(X + e) - _writes_np(X - e)) / (2 * h)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-6)


def test_writes_through_views_under_vmap(tier):
    batch = np.stack([X, X * 2.0, X - 1.0])
    got = xp.vmap(_writes)(xp.asarray(batch, device=tier))
    assert_matches(got, np.array([_writes_np(b.copy()) for b in batch]))


def test_writes_through_views_under_jit(tier):
    x = xp.asarray(X, device=tier)
    f = xp.jit(_writes)
    assert_matches(f(x), _writes_np(X.copy()))
    assert_matches(f(x + 1.0), _writes_np(X + 1.0))     # the replayed program


def _writes_into_arguments(x, y):
    """Writes into both arguments, one through a view, one from the other's old value."""
    row = x[1]
    row += y[0]
    y[...] = x[0]
    x.mT[0] *= 2.0
    return xp.sum(x)


def _writes_into_arguments_np(x, y):
    x[1] += y[0]
    y[...] = x[0]
    x.mT[0] *= 2.0
    return np.sum(x)


def test_jit_writes_into_arguments_reach_the_caller(tier):
    """As after a plain call: the caller's arrays, and their views, see the writes; each
    call of the compiled program writes again."""
    f = xp.jit(_writes_into_arguments)
    x, y = xp.asarray(X[:3, :3], device=tier), xp.asarray(X[:, :3] + 1.0, device=tier)
    col = x[:, 0]
    nx, ny = X[:3, :3].copy(), X[:, :3] + 1.0
    for _ in range(3):             # the trace, then the replays
        assert_matches(f(x, y), _writes_into_arguments_np(nx, ny))
        assert_matches(x, nx)
        assert_matches(y, ny)
        assert_matches(col, nx[:, 0])


def test_exported_writes_into_arguments_reach_the_caller():
    exported = xp.deserialize(xp.export(_writes_into_arguments)(
        xp.asarray(X[:3, :3]), xp.asarray(X[:, :3])).serialize())
    x, y = xp.asarray(X[:3, :3]), xp.asarray(X[:, :3] + 1.0)
    col = x[:, 0]
    nx, ny = X[:3, :3].copy(), X[:, :3] + 1.0
    for _ in range(2):
        assert_matches(exported.call(x, y), _writes_into_arguments_np(nx, ny))
        assert_matches(x, nx)
        assert_matches(y, ny)
        assert_matches(col, nx[:, 0])


def test_writes_through_views_in_an_exported_program():
    x = xp.asarray(X)
    exported = xp.export(_writes)(x)
    restored = xp.deserialize(exported.serialize())
    assert_matches(restored.call(x + 2.0), _writes_np(X + 2.0))
