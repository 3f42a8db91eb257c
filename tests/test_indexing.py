"""Indexing (`x[key]`) and functional updates (`x[key] = value`) against NumPy, on both tiers:
ints, slices, ellipsis, None, integer arrays, boolean masks, their combinations, and the
documented behaviour of pending (not yet computed) index arrays."""
import numpy as np
import pytest

import tlaloc as xp
from helpers import assert_matches, recorded

A = np.arange(60).reshape(3, 4, 5)


def _to_x(key, device):
    """The tlaloc version of a NumPy key: NumPy arrays become tlaloc arrays."""
    conv = lambda k: xp.asarray(k, device=device) if isinstance(k, np.ndarray) else k  # noqa: E731
    return tuple(conv(k) for k in key) if isinstance(key, tuple) else conv(key)


I = np.array
BASIC_KEYS = [
    0, -1, (1, 2), (1, 2, 3), (slice(None),), (slice(1, None), 0), (slice(None, None, -1),),
    (slice(None, None, 2), slice(3, 0, -2), slice(-2, None)), (Ellipsis, 1), (0, Ellipsis, 4),
    (None,), (None, 1, None, slice(None, 2)), (Ellipsis, None), (), (slice(5, 10),), (slice(2, 1),),
]
ARRAY_KEYS = [
    I([0, 2]), I([-1, 0, 0]), I([[0, 1], [2, 0]]), I(1),
    (I([0, 2]), slice(None), I([1, 3])),            # separated: broadcast dims first
    (slice(None), I([[0, 1], [2, 3]])),             # in place
    (0, slice(None), I([1, 3])),                    # int + array separated
    (I([-1, 0]), I([1])),                           # broadcast together, adjacent
    (Ellipsis, I([4, 0])), (slice(None), I([3]), I([[0], [4]])),
    (slice(1, None, -1), I([0, 3]), slice(None, None, 2)),
    (None, I([1]), None, 2), (I([], dtype=np.int64),), (1, 2, I([0, 4, -5])),
    (I([2, 1]), Ellipsis, I([0, 0])), (I(2), slice(1, 3), I(0)),
    (I([0, 1], dtype=np.uint8), I([3, 2], dtype=np.int8)),
    (slice(None), I([0]), Ellipsis, 0),            # an empty ellipsis still separates
    (slice(None), I([0]), 0, Ellipsis),
]
MASK_KEYS = [A % 3 == 0, (A[:, :, 0] > 10,), (slice(None), A[0] % 2 == 0),
             (A[:, 0, 0] > 100,), (Ellipsis, A[0, 0] > 2), (I(True),), (I(False), 0),
             (1, A[1] % 4 == 1)]


@pytest.fixture(params=["on the host", "recorded"])
def index_path(request, monkeypatch):
    """On the host devices a mask's coordinates, the wrapping of negative index values that
    are known, and basic indexing and writes of small computed arrays are computed with
    NumPy; elsewhere (an accelerator) they are recorded. Both run here: "recorded" takes the
    accelerators' path on the CPU."""
    if request.param == "recorded":
        from tlaloc._api import _core
        monkeypatch.setattr(_core, "HOST_PLATFORMS", ())
    return request.param


@pytest.mark.parametrize("group", ["basic", "arrays", "masks"])
def test_getitem(tier, group, index_path):
    keys = {"basic": BASIC_KEYS, "arrays": ARRAY_KEYS, "masks": MASK_KEYS}[group]
    x = xp.asarray(A, device=tier)
    got = [x[_to_x(k, tier)] for k in keys]
    xp.eval(*got)
    for g, k in zip(got, keys):
        assert_matches(g, np.asarray(A[k]))


def test_getitem_lists_dtypes_and_empty(tier, index_path):
    pairs = []
    for dtype in ("bool", "int8", "uint64", "float32", "complex128"):
        a = (A % 7).astype(dtype)
        x = xp.asarray(a, device=tier)
        pairs += [(x[[0, 2]], a[[0, 2]]), (x[(0, 2), 1], a[(0, 2), 1]), (x[:, [[1], [3]], 1:], a[:, [[1], [3]], 1:]),
                  (x[[True, False, True]], a[[True, False, True]]), (x[..., [-1]], a[..., [-1]])]
    e = np.zeros((0, 3))
    ex = xp.asarray(e, device=tier)
    pairs += [(ex[[]], e[np.array([], dtype=np.int64)]), (ex[:, [2, 0]], e[:, [2, 0]]),
              (ex[ex > 0], e[e > 0])]
    xp.eval(*[g for g, _ in pairs])
    for g, want in pairs:
        assert_matches(g, want)


def test_getitem_errors(tier, index_path):
    x = xp.asarray(A, device=tier)
    with pytest.raises(IndexError):
        x[3]
    with pytest.raises(IndexError):
        x[0, 0, 0, 0]
    with pytest.raises(IndexError):
        x[..., ...]
    with pytest.raises(IndexError):
        x[xp.asarray([0, 3], device=tier)]          # known values: checked
    with pytest.raises(IndexError):
        x[:, xp.asarray([-5], device=tier)]
    with pytest.raises(IndexError):
        x[xp.asarray([[0, 1]], device=tier), xp.asarray([0, 1, 2], device=tier)]   # no broadcast
    with pytest.raises(IndexError):
        x[xp.asarray([True, False], device=tier)]   # mask shape mismatch
    with pytest.raises(IndexError):
        x[xp.asarray([0.5], device=tier)]
    with pytest.raises(IndexError):
        x[1.0]
    with pytest.raises(IndexError):
        x[True]
    with pytest.raises(IndexError):
        xp.zeros((0, 2), device=tier)[xp.asarray([0], device=tier)]
    with pytest.raises(IndexError):
        x["a"]


def test_pending_index_arrays(lazy, tier):
    """Values of pending index arrays are unknown when recorded: negatives wrap, and
    out-of-bounds values clamp on reads and are dropped on writes (documented)."""
    a = np.arange(5) * 10
    x = xp.asarray(a, device=tier)

    def pending():
        return xp.asarray([-1, 0, 7, -8], device=tier) * 1

    assert_matches(x[pending()], a[[4, 0, 4, 0]])
    y = xp.asarray(a, device=tier)
    y[pending()] = xp.asarray([1, 2, 3, 4], device=tier)
    assert_matches(y, np.array([2, 10, 20, 30, 1]))


def test_zero_d_index_arrays_reuse_program(lazy, tier):
    """A 0-d integer array is an input, not a constant: indexing in a loop reuses one program."""
    a = np.arange(6.0)
    x = xp.asarray(a, device=tier)
    out = [x[xp.asarray(k, device=tier)] for k in range(6)]
    for k, v in enumerate(out):
        assert_matches(v, a[k])
    assert len({xp.stablehlo(x[xp.asarray(k, device=tier)] + 0) for k in range(3)}) == 1


def test_an_int_beside_an_index_array_is_an_input(lazy, tier):
    """`x[i, idx]`: the int is a program input, as x[i]'s position is, so a loop over i
    records one program structure, and each i reads its own row."""
    a = np.arange(24.0).reshape(4, 6)
    x = xp.asarray(a, device=tier) * 1.0          # pending: the gather is recorded
    idx = xp.asarray([5, 0, 2], device=tier)
    for i in (0, 3, -1):
        assert_matches(x[i, idx], a[i, [5, 0, 2]])
    assert len({xp.stablehlo(x[i, idx]) for i in range(3)}) == 1


# ----------------------------------------------------------------------------- setitem

SET_CASES = [
    ((0,), 7), ((slice(None, None, -2), 1), I([[100], [200]])), (I([0, 2]), -1),
    ((slice(None), I([0, 3])), I([[[1]], [[2]], [[3]]])), (A % 7 == 0, 0), (A % 7 == 0, "count"),
    ((1, slice(1, 3), I([0, 4])), I([[1, 2], [3, 4]])), ((Ellipsis, slice(1, 5, 3)), I([9, 8])),
    ((A[..., 0] > 20,), I([1, 2, 3, 4, 5])), ((A[..., 0] > 20,), I([[1, 2, 3, 4, 5]])),
    ((slice(None), slice(None), slice(None)), I(5)), ((2, -1, -1), 99), ((slice(4, 9),), 1),
    ((slice(None), 1, slice(None, None, -1)), I([0, 1, 2, 3, 4])), ((I([2, 0]), I([1]), I([4, 0])), I([7, 8])),
    ((None, 0), 3), ((0, None, slice(1, 3)), I([[[5]]])),
    ((slice(None, None, -1), I([0, 2]), slice(1, None, 2)), I([[1, 2], [3, 4]])),
    ((slice(None), I([1, 0]), Ellipsis, 0), I([[1], [2]])),
    ((slice(None), A[0] > 5), 0), ((A[:, :, 0] > 5,), 0), ((1, A[0] % 3 == 0), I(-4)), ((I([0, 2]), 0, I([4, 0])), I([1, 2])),
]


def test_setitem(tier, index_path):
    outs, wants = [], []
    for key, val in SET_CASES:
        if isinstance(val, str):
            val = np.arange(int(np.count_nonzero(key)))
        want = A.copy()
        want[key] = val
        x = xp.asarray(A, device=tier)
        x[_to_x(key, tier)] = xp.asarray(val, device=tier) if isinstance(val, np.ndarray) else val
        outs.append(x)
        wants.append(want)
    xp.eval(*outs)
    for x, want in zip(outs, wants):
        assert_matches(x, want)


def test_setitem_duplicate_indices(tier, index_path):
    """Which of several updates of one element lands is unspecified (XLA's scatter does not
    promise an order; NumPy and the interpreter keep the last)."""
    x = xp.asarray(np.zeros(4), device=tier)
    x[xp.asarray([1, 3, 1], device=tier)] = xp.asarray([5.0, 6.0, 7.0], device=tier)
    got = np.asarray(x)
    assert got[1] in (5.0, 7.0) and (got[[0, 2, 3]] == [0, 0, 6]).all()


def test_setitem_dtypes_and_values(tier, index_path):
    a = np.linspace(-1, 1, 12).reshape(3, 4).astype(np.float32)
    x = xp.asarray(a, device=tier)
    x[0] = 2                       # Python int into float32
    x[1, 1:3] = xp.asarray([5, 6], dtype=xp.int8, device=tier)   # int array: promotes to float32
    x[2] = xp.asarray(1.5, dtype=xp.float16, device=tier)
    x[x < 0] = -1.0
    want = a.copy()
    want[0] = 2
    want[1, 1:3] = [5, 6]
    want[2] = 1.5
    want[want < 0] = -1
    assert_matches(x, want)
    assert x.dtype == xp.float32

    b = xp.asarray([True, False, True], device=tier)
    b[1] = True
    b[xp.asarray([0], device=tier)] = False
    assert_matches(b, np.array([False, True, True]))

    i = xp.asarray(np.arange(4, dtype=np.uint8), device=tier)
    i[::2] = 255
    assert_matches(i, np.array([255, 1, 255, 3], dtype=np.uint8))
    c = xp.asarray(np.zeros(3, np.complex64), device=tier)
    c[1] = 1 + 2j
    c[2] = 3.0
    assert_matches(c, np.array([0, 1 + 2j, 3], dtype=np.complex64))

    with pytest.raises(TypeError):
        i[0] = 1.5                 # float into an integer array
    with pytest.raises(TypeError):
        x[0] = xp.asarray([1.0, 2.0, 3.0, 4.0], dtype=xp.float64, device=tier)
    with pytest.raises(TypeError):
        x[0] = 1j
    with pytest.raises(TypeError):
        b[0] = 2                   # int into bool
    with pytest.raises(OverflowError):
        i[0] = 256
    with pytest.raises(ValueError):
        x[0] = xp.asarray([1.0, 2.0], dtype=xp.float32, device=tier)   # does not broadcast
    with pytest.raises(IndexError):
        x[3] = 0
    with pytest.raises(IndexError):
        x[xp.asarray([0, 5], device=tier)] = 0
    with pytest.raises(TypeError):
        x[0] = "a"
    assert x.dtype == xp.float32 and x.shape == (3, 4)


def test_setitem_rebinds_only_this_array(tier):
    x = xp.asarray(np.arange(4.0), device=tier)
    y = x
    z = x[1:]                      # a view; x[0] lies outside it
    x[0] = 9.0
    assert y is x
    assert_matches(x, np.array([9.0, 1, 2, 3]))
    assert_matches(z, np.array([1.0, 2, 3]))
    w = xp.asarray(np.arange(4.0), device=tier) + 1
    before = w
    w[w > 2] = 0.0
    assert before is w
    assert_matches(w, np.array([1.0, 2, 0, 0]))


def test_long_masks(tier, index_path):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((40, 130))
    x = xp.asarray(a, device=tier)
    assert_matches(x[x > 0.5], a[a > 0.5])
    assert_matches(x[:, a[0] > 0], a[:, a[0] > 0])
    for g, w in zip(xp.nonzero(x > 1.0), np.nonzero(a > 1.0)):
        assert_matches(g, w.astype(np.int64))
    y = xp.asarray(a, device=tier)
    y[x > 0.5] = xp.arange(int(np.count_nonzero(a > 0.5)), dtype=xp.float64, device=tier)
    want = a.copy()
    want[a > 0.5] = np.arange(np.count_nonzero(a > 0.5))
    assert_matches(y, want)


def test_named_index_arrays_keep_their_names(tier, index_path):
    """An index array's names name the result's batch axes, whether its negative values
    are wrapped on the host or recorded."""
    x = xp.asarray(A[0], device=tier)
    for values in ([[1, -1], [0, 2]], [[1, 3], [0, 2]]):
        idx = xp.asarray(np.array(values), device=tier, names=("i", "j"))
        got = x[idx]
        assert got.names == ("i", "j", None)
        assert_matches(got, A[0][np.array(values)])


def test_small_computed_arrays_are_indexed_by_numpy_without_recording():
    """Where bind would run the operations at once (a small computed host array, nothing
    keeping the graph), NumPy indexes, writes and finds argmax and unique values itself:
    no operation runs through the interpreter, and the results are NumPy's."""
    a = np.arange(24.0).reshape(4, 6)
    x = xp.asarray(a, device="cpu")
    mask, rows = xp.asarray(a[:, 0] > 5, device="cpu"), xp.asarray([3, 0, -1], device="cpu")
    labels = xp.asarray(a[0] // 2, device="cpu")
    xp.reset_cache_info()
    got = [x[2], x[:, 1:4], x[1, 2], x[mask], x[rows], x[rows, 1:3], xp.argmax(x, axis=1),
           xp.unique_values(labels)]
    y = xp.asarray(a, device="cpu")
    y[1] = 5.0
    y[mask, 2] = -1.0
    assert xp.cache_info()["immediate"] == 0
    want = a.copy()
    want[1] = 5.0
    want[a[:, 0] > 5, 2] = -1.0
    for g, w in zip(got + [y], [a[2], a[:, 1:4], a[1, 2], a[a[:, 0] > 5], a[[3, 0, -1]],
                              a[[3, 0, -1], 1:3], np.argmax(a, axis=1),
                              np.unique(a[0] // 2), want]):
        assert_matches(g, w)
    with recorded():      # larger than eager_max_size: recorded as before
        z = x[mask]
    assert z._node.value is None or xp.cache_info()["immediate"] > 0
