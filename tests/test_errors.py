"""Bad input raises the exception the standard documents (TypeError, ValueError, IndexError,
and OverflowError for Python ints out of range) at the call, with a message naming the
function, before anything compiles or evaluates: the compile cache statistics do not move
and pending operands stay pending. Mixing arrays on the "cpu" and "interpreter" devices is a
ValueError."""
import numpy as np
import pytest

import tlaloc as xp
from helpers import recorded


class Operands:
    """Pending operands on the tier's device (and some on the other device)."""

    def __init__(self, tier):
        other = xp.device("interpreter") if tier.platform == "cpu" else xp.device("cpu")

        def pending(a, device=tier):
            with recorded():
                x = xp.asarray(np.asarray(a), device=device)
                return x & True if x.dtype == xp.bool else x * 1   # one op: pending

        self.f = pending(np.arange(6.0).reshape(2, 3))            # float64 (2, 3)
        self.g = pending(np.arange(4.0))                          # float64 (4,)
        self.i = pending(np.arange(6).reshape(2, 3))              # int64 (2, 3)
        self.u = pending(np.arange(3, dtype=np.uint64))           # uint64 (3,)
        self.b = pending(np.array([True, False, True]))           # bool (3,)
        self.c = pending(np.array([1 + 1j, 2j, 3.0]))             # complex128 (3,)
        self.s = pending(2.5)                                     # float64 ()
        self.o = pending(np.arange(6.0).reshape(2, 3), device=other)   # on the other device
        self.all = [self.f, self.g, self.i, self.u, self.b, self.c, self.s, self.o]


# (label, function name expected in the message or None, callable, exception type)
SHAPE = [
    ("add (2,3)+(4,)", "add", lambda o: xp.add(o.f, o.g), ValueError),
    ("operator (2,3)*(4,)", "multiply", lambda o: o.f * o.g, ValueError),
    ("equal (2,3)==(4,)", "equal", lambda o: o.f == o.g, ValueError),
    ("atan2", "atan2", lambda o: xp.atan2(o.f, o.g), ValueError),
    ("matmul inner", "matmul", lambda o: o.f @ o.f, ValueError),
    ("matmul 0-d", "matmul", lambda o: xp.matmul(o.s, o.f), ValueError),
    ("vecdot", "vecdot", lambda o: xp.vecdot(o.f, o.g), ValueError),
    ("tensordot", "tensordot", lambda o: xp.tensordot(o.f, o.g, axes=1), ValueError),
    ("concat", "concat", lambda o: xp.concat([o.f, o.g]), ValueError),
    ("stack", "stack", lambda o: xp.stack([o.f, o.i[0]]), ValueError),
    ("broadcast_to", "broadcast_to", lambda o: xp.broadcast_to(o.f, (3, 3)), ValueError),
    ("broadcast_arrays", "broadcast_arrays", lambda o: xp.broadcast_arrays(o.f, o.g), ValueError),
    ("reshape", "reshape", lambda o: xp.reshape(o.f, (4, 2)), ValueError),
    ("squeeze size 2", "squeeze", lambda o: xp.squeeze(o.f, 0), ValueError),
    ("clip bound", "clip", lambda o: xp.clip(o.f, o.g), ValueError),
    ("tril 0-d", "tril", lambda o: xp.tril(o.s), ValueError),
    ("matrix_transpose 1-d", "matrix_transpose", lambda o: xp.matrix_transpose(o.g), ValueError),
    ("unstack 0-d", "unstack", lambda o: xp.unstack(o.s), ValueError),
    ("in-place shape", None, lambda o: o.s.__iadd__(o.g), ValueError),
    ("max of empty", "max", lambda o: xp.max(o.g[:0]), ValueError),
]
DTYPE = [
    ("bitwise_and float", "bitwise_and", lambda o: xp.bitwise_and(o.f, o.f), TypeError),
    ("shift float", "bitwise_left_shift", lambda o: o.f << 1, TypeError),
    ("invert float", "bitwise_invert", lambda o: ~o.f, TypeError),
    ("atan2 int", "atan2", lambda o: xp.atan2(o.i, o.i), TypeError),
    ("subtract bool", "subtract", lambda o: o.b - o.b, TypeError),
    ("negative bool", "negative", lambda o: -o.b, TypeError),
    ("remainder complex", "remainder", lambda o: o.c % o.c, TypeError),
    ("floor_divide complex", "floor_divide", lambda o: o.c // 2, TypeError),
    ("less complex", "less", lambda o: o.c < o.c, TypeError),
    ("maximum complex", "maximum", lambda o: xp.maximum(o.c, o.c), TypeError),
    ("signbit int", "signbit", lambda o: xp.signbit(o.i), TypeError),
    ("uint64 + int64", None, lambda o: o.u + o.i[0], TypeError),
    ("matmul bool", "matmul", lambda o: xp.matmul(xp.reshape(o.b, (3, 1)), xp.reshape(o.b, (1, 3))), TypeError),
    ("astype complex to real", "astype", lambda o: xp.astype(o.c, xp.float64), TypeError),
    ("max complex", "max", lambda o: xp.max(o.c), TypeError),
    ("var complex", "var", lambda o: xp.var(o.c), TypeError),
    ("sum into bool", "sum", lambda o: xp.sum(o.f, dtype=xp.bool), TypeError),
    ("in-place int += float", None, lambda o: o.i.__iadd__(1.5), TypeError),
    ("in-place float /= complex", None, lambda o: o.f.__itruediv__(1j), TypeError),
    ("clip float bound on ints", "clip", lambda o: xp.clip(o.i, 0.5), TypeError),
    ("meshgrid dtypes", "meshgrid", lambda o: xp.meshgrid(o.g, xp.astype(o.g, xp.float32)), TypeError),
    ("non-array argument", "sin", lambda o: xp.sin([1.0, 2.0]), TypeError),
    ("NumPy operand", None, lambda o: o.f + np.ones((2, 3)), TypeError),
    ("two scalars", None, lambda o: xp.add(1, 2), TypeError),
    ("bad dtype", None, lambda o: xp.astype(o.f, "float4"), TypeError),
    ("Python int overflows int64", None, lambda o: o.i + 2 ** 64, OverflowError),
    ("negative int with uint64", None, lambda o: o.u * -1, OverflowError),
]
AXIS = [
    ("sum axis 2", "sum", lambda o: xp.sum(o.f, axis=2), IndexError),
    ("mean axis -3", "mean", lambda o: xp.mean(o.f, axis=-3), IndexError),
    ("any axes repeated", "any", lambda o: xp.any(o.f, axis=(0, -2)), ValueError),
    ("prod axis float", "prod", lambda o: xp.prod(o.f, axis=1.0), TypeError),
    ("flip axis", "flip", lambda o: xp.flip(o.f, axis=2), IndexError),
    ("squeeze axis", "squeeze", lambda o: xp.squeeze(o.f, 5), IndexError),
    ("expand_dims axis", "expand_dims", lambda o: xp.expand_dims(o.f, axis=3), IndexError),
    ("stack axis", "stack", lambda o: xp.stack([o.f, o.f], axis=3), IndexError),
    ("concat axis", "concat", lambda o: xp.concat([o.f, o.f], axis=-3), IndexError),
    ("moveaxis", "moveaxis", lambda o: xp.moveaxis(o.f, 0, 2), IndexError),
    ("permute_dims", "permute_dims", lambda o: xp.permute_dims(o.f, (0, 2)), IndexError),
    ("permute_dims repeated", "permute_dims", lambda o: xp.permute_dims(o.f, (0, 0)), ValueError),
    ("vecdot axis", "vecdot", lambda o: xp.vecdot(o.f, o.f, axis=2), IndexError),
    ("unstack axis", "unstack", lambda o: xp.unstack(o.f, axis=-3), IndexError),
    ("index out of range", None, lambda o: o.f[2], IndexError),
    ("negative index out of range", None, lambda o: o.f[0, -4], IndexError),
    ("too many indices", None, lambda o: o.f[0, 0, 0], IndexError),
]
DEVICE = [
    ("add", "add", lambda o: o.f + o.o, ValueError),
    ("reflected", "add", lambda o: o.o.__radd__(o.f), ValueError),
    ("in-place", None, lambda o: o.f.__imul__(o.o), ValueError),
    ("equal", "equal", lambda o: xp.equal(o.f, o.o), ValueError),
    ("matmul", "matmul", lambda o: xp.matmul(o.f, xp.matrix_transpose(o.o)), ValueError),
    ("tensordot", "tensordot", lambda o: xp.tensordot(o.f, o.o), ValueError),
    ("vecdot", "vecdot", lambda o: xp.vecdot(o.f, o.o), ValueError),
    ("concat", "concat", lambda o: xp.concat([o.f, o.o]), ValueError),
    ("stack", "stack", lambda o: xp.stack([o.f, o.o]), ValueError),
    ("broadcast_arrays", "broadcast_arrays", lambda o: xp.broadcast_arrays(o.f, o.o), ValueError),
    ("meshgrid", "meshgrid", lambda o: xp.meshgrid(o.g, xp.reshape(o.o, (-1,))), ValueError),
    ("clip", "clip", lambda o: xp.clip(o.f, o.o), ValueError),
    ("logaddexp", "logaddexp", lambda o: xp.logaddexp(o.o, o.f), ValueError),
]
CASES = ([("shape: " + c[0],) + c[1:] for c in SHAPE] + [("dtype: " + c[0],) + c[1:] for c in DTYPE]
         + [("axis: " + c[0],) + c[1:] for c in AXIS] + [("device: " + c[0],) + c[1:] for c in DEVICE])


@pytest.mark.parametrize("label, name, call, exc", CASES, ids=[c[0] for c in CASES])
def test_error_at_the_call_before_compiling(tier, label, name, call, exc):
    o = Operands(tier)
    xp.reset_cache_info()
    with pytest.raises(exc) as info:
        call(o)
    if name is not None:
        assert name in str(info.value), str(info.value)
    stats = xp.cache_info()
    assert stats["misses"] == stats["hits"] == stats["compiles"] == stats["interpreted"] == 0, stats
    assert all(a._node.value is None for a in o.all)   # nothing was evaluated


def test_metadata_of_pending_arrays_does_not_evaluate(tier):
    o = Operands(tier)
    xp.reset_cache_info()
    y = xp.sum(xp.exp(o.f) @ xp.matrix_transpose(o.f), axis=0, keepdims=True)
    assert (y.shape, y.dtype, y.device, y.ndim, y.size) == ((1, 2), xp.float64, tier, 2, 2)
    assert o.f.mT.shape == (3, 2) and len(o.f) == 2
    assert xp.result_type(y, o.i) == xp.float64 and xp.can_cast(y, xp.complex128)
    assert xp.finfo(y).bits == 64
    stats = xp.cache_info()
    assert stats["misses"] == stats["hits"] == stats["interpreted"] == 0, stats
    assert y._node.value is None and o.f._node.value is None


def test_devices_mix_only_through_to_device(tier):
    o = Operands(tier)
    moved = o.o.to_device(tier)
    out = o.f + moved                          # fine once on one device
    assert out.device == tier
    np.testing.assert_array_equal(np.asarray(out), 2 * np.arange(6.0).reshape(2, 3))
    with pytest.raises(ValueError, match="different devices"):
        o.f - o.o


def test_errors_leave_usable_state(tier):
    """After a failed call the operands are intact and the next program runs normally."""
    o = Operands(tier)
    with pytest.raises(ValueError):
        o.f + o.g
    with pytest.raises(TypeError):
        o.i.__iadd__(1.5)
    assert o.i.dtype == xp.int64
    np.testing.assert_array_equal(np.asarray(o.f + 1.0), np.arange(6.0).reshape(2, 3) + 1)
    np.testing.assert_array_equal(np.asarray(o.i), np.arange(6).reshape(2, 3))
