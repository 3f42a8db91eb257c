"""The interpreter writes results into dying intermediates (backends/interpreter.py,
`Schedule`), as NumPy's temporary elision does: the memory a program needs, and what must
never happen (an overwritten value that something still reads)."""
import tracemalloc

import numpy as np
import pytest

import tlaloc as xp
from tlaloc._prims.core import REGISTRY

N = 200_000   # float64: 1.6 MB per array


@pytest.fixture(autouse=True)
def interpreted():
    xp.config.update(execution="interpreted")
    yield
    xp.config.update(execution="auto")


def _peak(fn):
    """Bytes allocated at the peak of fn() (NumPy reports its buffers to tracemalloc)."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        fn()
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


def test_a_chain_of_elementwise_operations_needs_one_intermediate_buffer():
    a = np.random.default_rng(0).random(N)
    x = xp.asarray(a)
    xp.eval(x)
    nbytes = a.nbytes

    def chain():
        y = x * 2.0
        for k in range(6):
            y = (y + 1.0) * 0.5 - float(k)
        xp.eval(y)
        return y

    want = a * 2.0
    for k in range(6):
        want = (want + 1.0) * 0.5 - float(k)
    np.testing.assert_array_equal(np.asarray(chain()), want)
    # The result, and nothing else of its size: without reuse each step allocates a new
    # array while its operand is still alive (two at a time).
    assert _peak(chain) < 1.5 * nbytes


def test_a_dying_operand_with_a_live_view_is_not_overwritten():
    a = np.arange(40_000.0)     # results of 320 KB: reused when nothing else refers to them
    x = xp.asarray(a)
    xp.eval(x)

    def pending():          # y and v held by nothing but the pending graph
        y = x * 2.0         # owns its memory
        v = y[2:39_998]     # a view of it (as large), read after y's last use
        return y + 1.0, v * 3.0   # the add is y's last use: it may not overwrite y
    z, w = pending()
    xp.eval(z, w)           # one program: y, v, z, w
    np.testing.assert_array_equal(np.asarray(z), a * 2.0 + 1.0)
    np.testing.assert_array_equal(np.asarray(w), (a * 2.0)[2:39_998] * 3.0)


def test_an_operand_read_twice_is_written_into_with_the_right_values(monkeypatch):
    mul = REGISTRY["multiply"]
    written = []
    into = mul.impl_into
    monkeypatch.setattr(mul, "impl_into", lambda out, *a: written.append(out.shape) or into(out, *a))
    a = np.linspace(-3.0, 3.0, 40_000)
    x = xp.asarray(a)
    xp.eval(x)

    def pending():
        y = x - 1.0
        return y * y        # y's last use reads it twice: written into y
    z = pending()
    xp.eval(z)
    np.testing.assert_array_equal(np.asarray(z), (a - 1.0) * (a - 1.0))
    assert written == [(40_000,)]


def test_inputs_and_returned_values_are_never_overwritten():
    a = np.random.default_rng(1).random((200, 200))
    x = xp.asarray(a)
    xp.eval(x)
    y = x + 1.0
    xp.eval(y)              # y is now an input of the next program
    z = (y * 2.0) + y
    np.testing.assert_array_equal(np.asarray(z), (a + 1.0) * 2.0 + (a + 1.0))
    np.testing.assert_array_equal(np.asarray(y), a + 1.0)
    np.testing.assert_array_equal(np.asarray(x), a)


def test_operands_of_another_dtype_or_a_broadcast_shape_are_not_written_into():
    a = np.arange(90_000, dtype=np.float32).reshape(300, 300)
    x = xp.asarray(a)
    row = xp.asarray(np.arange(300, dtype=np.float32)) * 1.0   # dies into a (300, 300) result
    z = row + x
    wide = xp.astype(x * 1.0, xp.float64) + xp.asarray(np.ones((300, 300)))
    np.testing.assert_array_equal(np.asarray(z), np.arange(300, dtype=np.float32) + a)
    np.testing.assert_array_equal(np.asarray(wide), a.astype(np.float64) + 1.0)


def test_a_loop_that_writes_into_an_array_updates_in_place_and_matches_numpy():
    u0 = np.random.default_rng(2).random((200, 200))
    want = u0.copy()
    u = xp.asarray(u0)
    for _ in range(40):
        want[1:-1, 1:-1] = want[1:-1, 1:-1] + 0.2 * (
            want[:-2, 1:-1] + want[2:, 1:-1] + want[1:-1, :-2] + want[1:-1, 2:] - 4 * want[1:-1, 1:-1])
        u[1:-1, 1:-1] = u[1:-1, 1:-1] + 0.2 * (
            u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * u[1:-1, 1:-1])
    np.testing.assert_allclose(np.asarray(u), want, rtol=1e-14, atol=0)
    np.testing.assert_array_equal(u0, np.random.default_rng(2).random((200, 200)))   # intact


def test_updates_write_into_their_array_when_it_dies(monkeypatch):
    dus = REGISTRY["dynamic_update_slice"]
    written = []
    into = dus.impl_into
    monkeypatch.setattr(dus, "impl_into", lambda out, *a: written.append(out.shape) or into(out, *a))
    u = xp.asarray(np.zeros((400, 400)))     # 1.25 MB: large enough to be reused
    for k in range(5):
        u[1:3, 2:4] = u[1:3, 2:4] + 1.0
    np.testing.assert_array_equal(np.asarray(u)[1:3, 2:4], np.full((2, 2), 5.0))
    # the first update copies its input (a program input is never written); later ones
    # write into the array the update before made
    assert written == [(400, 400)] * 4


def test_small_results_are_not_written_into(monkeypatch):
    add = REGISTRY["add"]
    written = []
    into = add.impl_into
    monkeypatch.setattr(add, "impl_into", lambda out, *a: written.append(out.shape) or into(out, *a))
    x = xp.asarray(np.ones(1000))
    np.testing.assert_array_equal(np.asarray((x * 2.0 + 1.0) + 1.0), np.full(1000, 4.0))
    assert written == []     # 8 KB: NumPy's allocator reuses its memory as cheaply
