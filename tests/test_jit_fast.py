"""tlaloc.jit's fast call (a signature of positional arrays whose program has run): every
call must still get its own signature's program, and everything the general path checks
must still be checked."""
import numpy as np
import pytest

import tlaloc as xp
from tlaloc._graph import DonatedArrayError


@pytest.fixture(autouse=True)
def _compiled():
    xp.config.update(execution="compiled")


def on_device(values, dtype=None, device=None):
    """An array whose value is already a device buffer (what the fast call takes)."""
    return xp.eval(xp.asarray(values, dtype=dtype, device=device) * 1)


def fast_calls(f):
    """The fast calls f has installed (those that run, not those that always decline)."""
    from tlaloc._jit import _declines
    return [c for c in f._fast.values() if c is not _declines]


def test_alternating_shapes_each_get_their_program():
    f = xp.jit(lambda x, w: xp.sum(x * w + 1.0, axis=0))
    inputs = [(np.arange(n * 3, dtype=np.float64).reshape(n, 3), np.full((n, 3), 0.5))
              for n in (1, 2, 3, 4)]
    arrays = [(on_device(a), on_device(b)) for a, b in inputs]
    for _ in range(4):
        for (a, b), (x, w) in zip(inputs, arrays):
            np.testing.assert_allclose(np.asarray(f(x, w)), np.sum(a * b + 1.0, axis=0))
    assert len(fast_calls(f)) == 4


def test_alternating_dtypes_each_get_their_program():
    f = xp.jit(lambda x: x * 3 + 1)
    values = [1, 2, 3]
    cases = [(dt, on_device(values, dtype=dt)) for dt in
             (xp.float64, xp.float32, xp.int32, xp.int64, xp.uint8, xp.float16)]
    for _ in range(3):
        for dt, x in cases:
            out = f(x)
            assert out.dtype == dt
            expected = (np.asarray(values, dtype=dt.numpy) * 3 + 1).astype(dt.numpy)
            np.testing.assert_array_equal(np.asarray(out), expected)
    assert len(fast_calls(f)) == len(cases)


def test_alternating_argument_counts():
    f = xp.jit(lambda x, y=None: x * 2 if y is None else x * y)
    x, y = on_device([1.0, 2.0]), on_device([3.0, 4.0])
    for _ in range(3):
        np.testing.assert_allclose(np.asarray(f(x)), [2.0, 4.0])
        np.testing.assert_allclose(np.asarray(f(x, y)), [3.0, 8.0])


def test_alternating_devices():
    f = xp.jit(lambda x: xp.exp(x) - 1)
    cpu = on_device([0.0, 1.0])
    interp = xp.asarray([1.0, 2.0], device=xp.device("interpreter"))
    for _ in range(3):
        a, b = f(cpu), f(interp)
        assert a.device == xp.device("cpu") and b.device == xp.device("interpreter")
        np.testing.assert_allclose(np.asarray(a), np.expm1([0.0, 1.0]))
        np.testing.assert_allclose(np.asarray(b), np.expm1([1.0, 2.0]))


def test_alternating_axis_names():
    f = xp.jit(lambda x: x + 1)
    plain = on_device(np.zeros((2, 3)))
    named = xp.rename(plain, ("a", "b"))
    xp.eval(named)
    other = xp.rename(plain, ("b", "a"))
    xp.eval(other)
    for _ in range(3):
        assert f(plain).names == (None, None)
        assert f(named).names == ("a", "b")
        assert f(other).names == ("b", "a")


def test_alternating_static_values():
    f = xp.jit(lambda x, k: x * k, static_argnums=1)
    x = on_device([1.0, 2.0])
    for _ in range(3):
        for k in (2, 3, 5):
            np.testing.assert_allclose(np.asarray(f(x, k)), [k, 2 * k])


def test_new_values_same_signature():
    f = xp.jit(lambda x, w: x * w)
    for k in range(6):
        x, w = on_device([k, k + 1.0]), on_device([2.0, 3.0])
        np.testing.assert_allclose(np.asarray(f(x, w)), [2.0 * k, 3.0 * (k + 1)])
    assert len(fast_calls(f)) == 1


def test_inputs_that_are_not_device_buffers_yet():
    f = xp.jit(lambda x: x * 2)
    x = on_device([1.0, 2.0])
    f(x), f(x)
    assert fast_calls(f)
    pending = x + 1                                   # pending: computed first
    np.testing.assert_allclose(np.asarray(f(pending)), [4.0, 6.0])
    host = xp.asarray(np.array([5.0, 6.0]))           # a host value: moved to the device
    np.testing.assert_allclose(np.asarray(f(host)), [10.0, 12.0])
    np.testing.assert_allclose(np.asarray(f(x)), [2.0, 4.0])


def test_hits_are_counted():
    f = xp.jit(lambda x: x - 1)
    x = on_device([1.0])
    f(x), f(x)
    before = xp.cache_info()["hits"]
    for _ in range(5):
        f(x)
    assert xp.cache_info()["hits"] - before == 5


def test_structured_results():
    f = xp.jit(lambda x: {"a": x + 1, "b": (x * 2, x + 1)})
    g = xp.jit(lambda x: (x, x * 2))          # one result is the argument itself
    x = on_device([1.0, 2.0])
    for _ in range(3):
        out = f(x)
        np.testing.assert_allclose(np.asarray(out["a"]), [2.0, 3.0])
        np.testing.assert_allclose(np.asarray(out["b"][0]), [2.0, 4.0])
        np.testing.assert_allclose(np.asarray(out["b"][1]), [2.0, 3.0])
        same, doubled = g(x)
        assert same is x
        np.testing.assert_allclose(np.asarray(doubled), [2.0, 4.0])


def test_donated_argument_is_consumed_and_reuse_raises():
    f = xp.jit(lambda p, g: p - 0.5 * g, donate_argnums=0)
    g = on_device([1.0, 1.0])
    p = on_device([4.0, 4.0])
    for k in range(5):
        old = p
        p = f(p, g)
        np.testing.assert_allclose(np.asarray(p), [4.0 - 0.5 * (k + 1)] * 2)
        with pytest.raises(DonatedArrayError):
            np.asarray(old)
        with pytest.raises(DonatedArrayError):
            f(old, g)
    assert fast_calls(f)


def test_donated_argument_passed_twice_still_raises():
    f = xp.jit(lambda p, g: p + g, donate_argnums=0)
    p, g = on_device([1.0]), on_device([2.0])
    p = f(p, g)
    p = f(p, g)
    assert fast_calls(f)
    with pytest.raises(ValueError, match="donated argument is also passed"):
        f(p, p)
    np.testing.assert_allclose(np.asarray(f(p, g)), [7.0])


def test_donated_shared_buffer_is_copied_first():
    # two arrays that share one device buffer (the backend's table of scalars): donating
    # one must not delete the other's
    f = xp.jit(lambda a, b: a + b, donate_argnums=0)
    f(on_device(1.0), on_device(2.0)), f(on_device(1.0), on_device(2.0))
    s = xp.asarray(3.0)
    t = xp.asarray(3.0)
    xp.eval(s + t)            # both leaves get the shared device copy of 3.0
    np.testing.assert_allclose(np.asarray(f(s, t)), 6.0)
    np.testing.assert_allclose(np.asarray(t), 3.0)


def test_inside_grad_is_inlined():
    f = xp.jit(lambda x: xp.sum(xp.sin(x)))
    x = on_device([0.5, 1.0])
    f(x), f(x)
    assert fast_calls(f)
    g = xp.grad(lambda x: f(x) * 2)(x)
    np.testing.assert_allclose(np.asarray(g), 2 * np.cos([0.5, 1.0]))


def test_inside_another_jit_is_traced():
    inner = xp.jit(lambda x: x * 3)
    x = on_device([1.0, 2.0])
    inner(x), inner(x)
    calls = []

    @xp.jit
    def outer(x):
        calls.append(1)
        return inner(x) + 1

    for k in range(3):
        y = on_device([k, k + 1.0])
        np.testing.assert_allclose(np.asarray(outer(y)), [3.0 * k + 1, 3.0 * (k + 1) + 1])
    assert len(calls) == 1


def test_captured_constant_changes_are_not_seen_as_stale():
    # a captured array's value is an input of the program: rebinding the Python name does
    # not change the trace (as in the general path), but the captured array is read anew
    c = on_device([1.0, 2.0])
    f = xp.jit(lambda x: x + c)
    x = on_device([10.0, 10.0])
    for _ in range(3):
        np.testing.assert_allclose(np.asarray(f(x)), [11.0, 12.0])


def test_profile_sees_fast_calls():
    f = xp.jit(lambda x: x + 1)
    x = on_device([1.0])
    f(x), f(x)
    with xp.profile() as prof:
        f(x)
    triggers = [e.trigger for e in prof.evaluations]
    assert len(triggers) == 1 and triggers[0].startswith("jit call of"), triggers


def test_captured_constant_donated_elsewhere_raises():
    c = on_device([1.0, 2.0])
    f = xp.jit(lambda x: x + c)
    x = on_device([10.0, 10.0])
    f(x), f(x)
    assert fast_calls(f)
    consume = xp.jit(lambda a: a * 2, donate_argnums=0)
    np.testing.assert_allclose(np.asarray(consume(c)), [2.0, 4.0])
    with pytest.raises(DonatedArrayError):
        f(x)


def test_same_avals_new_device_after_fast_call():
    # the fast key holds the device: a call on another device with the same avals must not
    # run the first device's executable
    f = xp.jit(lambda x: x * 2)
    a = on_device([1.0, 2.0])
    f(a), f(a)
    b = xp.asarray([3.0, 4.0], device=xp.device("interpreter"))
    out = f(b)
    assert out.device == xp.device("interpreter")
    np.testing.assert_allclose(np.asarray(out), [6.0, 8.0])


def test_mixed_devices_still_raise():
    f = xp.jit(lambda x, y: x * 2)  # y unused: the general path still refuses two devices
    a = on_device([1.0])
    f(a, on_device([2.0])), f(a, on_device([2.0]))
    assert fast_calls(f)
    with pytest.raises(ValueError, match="different devices"):
        f(a, xp.asarray([2.0], device=xp.device("interpreter")))
