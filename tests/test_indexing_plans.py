"""The cache of basic-indexing plans (tlaloc/_api/indexing.py, `_plan`): a key repeated on a
shape is parsed once, and its step (slice parameters, result shape, NumPy layout, the
write's parameters) is shared by the views it makes. Each test makes the cache hold a plan
and then asks it something the plan must not answer wrongly: the same key on another
shape, keys that compare equal but mean something else, writes through views made from a
cached plan, layouts on parents of other strides."""
import numpy as np
import pytest

import tlaloc as xp
from tlaloc._api import indexing as _indexing

from helpers import assert_matches


def _pair(shape, dtype="float64", device=None):
    n = np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)
    return n, xp.asarray(n, device=device)


def test_plans_are_cached_and_shared():
    n, a = _pair((5, 6))
    v1, v2 = a[1:-1, ::2], a[1:-1, ::2]
    step = v1._view.steps[-1]
    assert v2._view.steps[-1] is step
    assert _indexing._PLANS[(_indexing._signature((slice(1, -1), slice(None, None, 2))),
                             (5, 6))] is step
    assert_matches(v1, n[1:-1, ::2], exact=True)


@pytest.mark.parametrize("shapes", [[(5, 6), (7, 3), (3, 9, 2), (2, 2)],
                                    [(4,), (9,), (1,), (0,)]])
def test_the_same_key_on_other_shapes(tier, shapes):
    keys = [(slice(1, -1),), (slice(None, None, -2),), (Ellipsis, slice(0, 1)),
            (None, slice(1, None)), (slice(-3, None, 2), Ellipsis), (0,), (-1, Ellipsis)]
    for key in keys:
        for shape in shapes:
            n, a = _pair(shape, device=tier)
            try:
                expected = n[key]
            except IndexError:
                with pytest.raises(IndexError):
                    a[key]
                with pytest.raises(IndexError):
                    a[key] = 1.0
                continue
            assert_matches(a[key], expected, exact=True)
            a[key] = -1.0
            n[key] = -1.0
            assert_matches(a, n, exact=True)


def test_bounds_are_checked_on_every_shape():
    _, a = _pair((5,))
    a[3]                      # cached on (5,)
    _, b = _pair((2,))
    with pytest.raises(IndexError, match="out of bounds"):
        b[3]
    with pytest.raises(IndexError, match="out of bounds"):
        b[3] = 1.0
    with pytest.raises(IndexError, match="too many indices"):
        b[0, 0]


def test_keys_that_compare_equal_are_told_apart():
    n, a = _pair((4, 5))
    assert_matches(a[1], n[1], exact=True)              # cached: the int 1
    with pytest.raises(IndexError):                     # True == 1, hash(True) == hash(1)
        a[True]
    with pytest.raises(IndexError):
        a[True] = 0.0
    assert_matches(a[np.int64(1)], n[1], exact=True)    # a NumPy integer: not cached, same
    a[1:3]
    with pytest.raises((TypeError, IndexError)):        # slice(1.0, 3) == slice(1, 3)
        a[1.0:3]
    assert_matches(a[(1,)], n[(1,)], exact=True)        # a 1-tuple, not the int
    assert_matches(a[None], n[None], exact=True)
    assert_matches(a[(None,)], n[(None,)], exact=True)
    assert_matches(a[...], n[...], exact=True)
    assert_matches(a[1, ...], n[1, ...], exact=True)
    assert_matches(a[1, 2], n[1, 2], exact=True)


def test_scalar_and_view_keys_on_one_shape(tier):
    """x[0] of a 1-d array is a copy (NumPy's scalar), x[0, ...] a 0-d view: their plans
    are told apart by the key, not by the shape they share."""
    n, a = _pair((4,), device=tier)
    for _ in range(2):                 # the second round takes the cached plans
        s = a[0]
        v = a[0, ...]
        w = a[(0,)]
        v[...] = 40.0
        assert float(a[0]) == 40.0
        assert float(v) == 40.0
        assert float(s) == 0.0          # a copy: not written
        assert float(w) == 0.0
        a[0] = 0.0
        assert float(v) == 0.0


def test_writes_through_views_made_from_a_cached_plan(tier):
    n, a = _pair((6, 5), device=tier)
    views = [(a[1:5, ::-2], n[1:5, ::-2]) for _ in range(3)]    # one plan, three views
    views[0][0][0] = 100.0
    views[0][1][0] = 100.0
    views[1][0][1:, 0] += 1.0
    views[1][1][1:, 0] += 1.0
    a[2:4] = -7.0
    n[2:4] = -7.0
    for t, m in views:
        assert_matches(t, m, exact=True)
    assert_matches(a, n, exact=True)
    # and a view of a view, through the same plan on the view's shape
    inner, m_inner = views[2][0][1:3], views[2][1][1:3]
    inner[...] = 5.0
    m_inner[...] = 5.0
    for t, m in views + [(a, n), (inner, m_inner)]:
        assert_matches(t, m, exact=True)


def test_layouts_follow_the_parents_strides():
    """A plan's layout is memoized per parent layout: the same key on a C-ordered array
    and on a strided view of the same shape gives each its own strides (which decide
    reshape's view-or-copy and which views a write reaches)."""
    n, a = _pair((8, 3))
    contiguous_n, contiguous = _pair((4, 3))
    strided, strided_n = a[::2], n[::2]                  # shape (4, 3), rows 48 bytes apart
    for t, m in [(contiguous, contiguous_n), (strided, strided_n), (contiguous, contiguous_n)]:
        v, mv = t[1:], m[1:]
        assert v._view.strides == mv.strides
        try:
            np.reshape(mv, (9,), copy=False)
        except ValueError:          # NumPy must copy: so must tlaloc
            with pytest.raises(ValueError, match="copy=False"):
                xp.reshape(v, (9,), copy=False)
        else:
            xp.reshape(v, (9,), copy=False)
    # writes through the strided parent's view reach only the rows it shows
    v = strided[1:]
    v[...] = -1.0
    strided_n[1:] = -1.0
    assert_matches(a, n, exact=True)


def test_names_with_a_cached_plan():
    _, plain = _pair((3, 4))
    named = xp.rename(xp.asarray(np.zeros((3, 4))), ("i", "j"))
    assert plain[1:, 0].names == (None,)
    assert named[1:, 0].names == ("i",)
    assert named[None, 1:].names == (None, "i", "j")
    assert plain[None, 1:].names == (None, None, None)
    named[1:, 0] = 2.0
    assert named.names == ("i", "j")


def test_the_cache_is_bounded():
    _, a = _pair((3000,))
    for i in range(_indexing._PLANS_MAX + 10):
        a[i % 3000]
    assert len(_indexing._PLANS) <= _indexing._PLANS_MAX
    assert float(a[17]) == 17.0


def test_the_stencil_step_matches_numpy_with_cached_plans(tier):
    def step(u):
        u[1:-1, 1:-1] = u[1:-1, 1:-1] + 0.2 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2]
                                               + u[1:-1, 2:] - 4 * u[1:-1, 1:-1])
    grid = np.random.default_rng(1).random((9, 7))
    for shape in [(9, 7), (7, 9)]:
        n = grid.reshape(shape).copy()
        u = xp.asarray(n, device=tier)
        for _ in range(5):
            step(n)
            step(u)
        np.testing.assert_allclose(np.asarray(u), n, rtol=1e-13, atol=0)
