"""Manipulation functions on both tiers against NumPy: reshape, permute_dims, broadcast_to,
broadcast_arrays, concat, stack, expand_dims, squeeze, flip, moveaxis, unstack; 0-d and
empty arrays, negative axes, every dtype for the data-movement primitives. Shapes are
checked before evaluation (they are known when the call is recorded)."""
import math

import ml_dtypes
import numpy as np
import pytest

import tlaloc as xp
from helpers import assert_all_match

ALL = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
       "float16", "bfloat16", "float32", "float64", "complex64", "complex128"]


def host(shape, dtype="float64", start=0):
    n = math.prod(shape)
    if dtype == "bool":
        return (np.arange(start, start + n) % 3 == 0).reshape(shape)
    d = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    v = np.arange(start, start + n).reshape(shape)
    if d.kind == "c":
        return (v + 1j * (v % 5)).astype(d)
    return v.astype(d)


def case(label, out, expected):
    assert out.shape == np.shape(expected), (label, out.shape, np.shape(expected))
    return (label, out, expected)


def test_reshape(tier):
    a = host((2, 3, 4))
    x = xp.asarray(a, device=tier)
    cases = []
    for shape in [(24,), (4, 6), (-1,), (2, -1), (-1, 3, 2), (1, 24, 1), (2, 3, 4), (4, 3, 2)]:
        cases.append(case(f"reshape {shape}", xp.reshape(x, shape), a.reshape(shape)))
    cases.append(case("list shape", xp.reshape(x, [6, 4]), a.reshape(6, 4)))
    z = xp.asarray(np.float32(2.5), device=tier)
    cases.append(case("0-d to (1, 1)", xp.reshape(z, (1, 1)), np.full((1, 1), 2.5, np.float32)))
    cases.append(case("(1,) to 0-d", xp.reshape(xp.reshape(z, (1,)), ()), np.asarray(np.float32(2.5))))
    e = xp.asarray(np.zeros((0, 3)), device=tier)
    cases.append(case("empty", xp.reshape(e, (3, 0, 5)), np.zeros((3, 0, 5))))
    cases.append(case("empty to flat", xp.reshape(e, (-1,)), np.zeros((0,))))
    cases.append(case("copy=True", xp.reshape(x, (2, 3, 4), copy=True), a))
    assert xp.reshape(x, (2, 3, 4))._node is x._node   # same shape: nothing recorded
    assert_all_match(cases)
    for bad in [(5, 5), (-1, -1), (-2, 12), (7, -1)]:
        with pytest.raises(ValueError):
            xp.reshape(x, bad)
    with pytest.raises(ValueError):
        xp.reshape(e, (-1, 0))     # -1 with a zero-size remainder is ambiguous
    with pytest.raises(TypeError):
        xp.reshape(x, (2.0, 12))
    with pytest.raises(TypeError):
        xp.reshape(a, (24,))


def test_permute_dims_and_moveaxis(tier):
    a = host((2, 3, 4), "int32")
    x = xp.asarray(a, device=tier)
    cases = []
    for axes in [(0, 1, 2), (2, 1, 0), (1, 2, 0), (-1, 0, 1)]:
        cases.append(case(f"permute {axes}", xp.permute_dims(x, axes), np.transpose(a, axes)))
    for src, dst in [(0, -1), (-1, 0), (1, 1), ((0, 1), (2, 0)), ((0, 2), (1, 0))]:
        cases.append(case(f"moveaxis {src} {dst}", xp.moveaxis(x, src, dst), np.moveaxis(a, src, dst)))
    z = xp.asarray(np.asarray(1.0), device=tier)
    cases.append(case("permute 0-d", xp.permute_dims(z, ()), np.asarray(1.0)))
    e = xp.asarray(np.zeros((0, 2, 3)), device=tier)
    cases.append(case("permute empty", xp.permute_dims(e, (2, 0, 1)), np.zeros((3, 0, 2))))
    assert_all_match(cases)
    for bad in [(0, 1), (0, 0, 1), (0, 1, 3)]:
        with pytest.raises((ValueError, IndexError)):
            xp.permute_dims(x, bad)
    with pytest.raises(ValueError):
        xp.moveaxis(x, (0, 1), 2)
    with pytest.raises(ValueError):
        xp.moveaxis(x, (0, 0), (1, 2))
    with pytest.raises(IndexError):
        xp.moveaxis(x, 3, 0)


def test_broadcast_to_and_broadcast_arrays(tier):
    a = host((3, 1), "float32")
    b = host((4,), "float32", start=10)
    x, y = xp.asarray(a, device=tier), xp.asarray(b, device=tier)
    z = xp.asarray(np.asarray(np.float32(7)), device=tier)
    cases = []
    for shape in [(3, 1), (3, 5), (2, 3, 5), (0, 3, 1), (3, 0)]:
        cases.append(case(f"broadcast_to {shape}", xp.broadcast_to(x, shape), np.broadcast_to(a, shape)))
    cases.append(case("0-d to (2, 2)", xp.broadcast_to(z, (2, 2)), np.full((2, 2), 7, np.float32)))
    outs = xp.broadcast_arrays(x, y, z)
    assert isinstance(outs, tuple)                # a tuple in 2025.12
    expected = np.broadcast_arrays(a, b, np.asarray(np.float32(7)))
    for i, (o, e) in enumerate(zip(outs, expected)):
        cases.append(case(f"broadcast_arrays [{i}]", o, e))
    assert xp.broadcast_arrays(x)[0]._node is x._node
    assert xp.broadcast_arrays() == ()
    e0 = xp.asarray(np.zeros((0, 1)), device=tier)
    outs = xp.broadcast_arrays(e0, xp.asarray(np.ones(4), device=tier))
    assert [o.shape for o in outs] == [(0, 4), (0, 4)]
    assert_all_match(cases)
    assert xp.broadcast_shapes((3, 1), (4,), ()) == (3, 4)
    assert xp.broadcast_shapes() == ()
    for bad in [(2, 1), (3,), (1, 1)]:
        with pytest.raises(ValueError):
            xp.broadcast_to(x, bad)
    with pytest.raises(ValueError):
        xp.broadcast_arrays(x, xp.ones((2, 1), device=tier))
    with pytest.raises(ValueError):
        xp.broadcast_shapes((2,), (3,))


@pytest.mark.parametrize("dtype", ALL)
def test_data_movement_every_dtype(tier, dtype):
    """The primitives that move data (reshape, transpose, slice, reverse, concatenate,
    broadcast) carry every dtype's values exactly."""
    a = host((2, 3), dtype)
    b = host((2, 3), dtype, start=7)
    x, y = xp.asarray(a, device=tier), xp.asarray(b, device=tier)
    cases = [case("reshape", xp.reshape(x, (3, 2)), a.reshape(3, 2)),
             case("permute", xp.permute_dims(x, (1, 0)), a.T),
             case("flip", xp.flip(x), np.flip(a)),
             case("concat", xp.concat([x, y], axis=1), np.concatenate([a, b], axis=1)),
             case("stack", xp.stack([x, y]), np.stack([a, b])),
             case("broadcast", xp.broadcast_to(xp.reshape(x, (2, 1, 3)), (2, 2, 3)),
                  np.broadcast_to(a.reshape(2, 1, 3), (2, 2, 3))),
             case("slice", x[:, ::-2], a[:, ::-2]),
             case("expand+squeeze", xp.squeeze(xp.expand_dims(x, axis=1), axis=1), a)]
    assert_all_match(cases, exact=True)


def test_concat(tier):
    a, b, c = host((2, 3)), host((1, 3), start=20), host((4, 3), start=40)
    x, y, z = (xp.asarray(v, device=tier) for v in (a, b, c))
    i32 = xp.asarray(host((2, 3), "int32"), device=tier)
    f32 = xp.asarray(host((1, 3), "float32"), device=tier)
    cases = [case("axis 0", xp.concat([x, y, z]), np.concatenate([a, b, c])),
             case("axis -2", xp.concat((x, y), axis=-2), np.concatenate([a, b], axis=-2)),
             case("axis 1", xp.concat([x, x], axis=1), np.concatenate([a, a], axis=1)),
             case("axis None", xp.concat([x, y], axis=None), np.concatenate([a.ravel(), b.ravel()])),
             case("single", xp.concat([x]), a),
             case("with empty", xp.concat([x, xp.asarray(np.zeros((0, 3)), device=tier)]), a),
             case("int32 + float32 -> float32", xp.concat([i32, f32]),
                  np.concatenate([host((2, 3), "int32"), host((1, 3), "float32")]).astype(np.float32)),
             case("int32 + float64", xp.concat([i32, y]), np.concatenate([host((2, 3), "int32"), b]))]
    assert_all_match(cases)
    with pytest.raises(ValueError):
        xp.concat([x, xp.asarray(host((2, 4)), device=tier)])
    with pytest.raises(ValueError):
        xp.concat([x, xp.asarray(host((3,)), device=tier)])
    with pytest.raises(ValueError):
        xp.concat([xp.asarray(1.0, device=tier), xp.asarray(2.0, device=tier)])
    with pytest.raises(ValueError):
        xp.concat([])
    with pytest.raises(IndexError):
        xp.concat([x, x], axis=2)
    with pytest.raises(TypeError):
        xp.concat([x, a])
    with pytest.raises(TypeError):
        xp.concat([xp.asarray(np.array([1], np.uint64)), xp.asarray(np.array([1], np.int64))])


def test_stack_and_unstack(tier):
    a, b = host((2, 3)), host((2, 3), start=10)
    x, y = xp.asarray(a, device=tier), xp.asarray(b, device=tier)
    cases = []
    for axis in (0, 1, 2, -1, -3):
        cases.append(case(f"stack axis {axis}", xp.stack([x, y, x], axis=axis), np.stack([a, b, a], axis=axis)))
    z = [xp.asarray(np.asarray(float(i)), device=tier) for i in range(3)]
    cases.append(case("stack 0-d", xp.stack(z), np.array([0.0, 1.0, 2.0])))
    cases.append(case("stack one", xp.stack([x]), a[None]))
    e = xp.asarray(np.zeros((0, 2)), device=tier)
    cases.append(case("stack empty", xp.stack([e, e], axis=1), np.zeros((0, 2, 2))))
    for axis in (0, 1, -1):
        parts = xp.unstack(x, axis=axis)
        assert isinstance(parts, tuple) and len(parts) == a.shape[axis]
        for i, p in enumerate(parts):
            cases.append(case(f"unstack axis {axis} [{i}]", p, np.take(a, i, axis=axis)))
    assert xp.unstack(xp.asarray(np.zeros((0, 3)), device=tier)) == ()
    assert_all_match(cases)
    with pytest.raises(ValueError):
        xp.stack([x, xp.asarray(host((3, 2)), device=tier)])
    with pytest.raises(IndexError):
        xp.stack([x, y], axis=3)
    with pytest.raises(ValueError):
        xp.unstack(z[0])
    with pytest.raises(IndexError):
        xp.unstack(x, axis=2)


def test_expand_dims_squeeze_flip(tier):
    a = host((2, 1, 3))
    x = xp.asarray(a, device=tier)
    cases = []
    for axis in (0, 1, 3, -1, -4, (0, 2), (-1, 0)):
        cases.append(case(f"expand_dims {axis}", xp.expand_dims(x, axis=axis), np.expand_dims(a, axis)))
    for axis in (1, -2, (1,)):
        cases.append(case(f"squeeze {axis}", xp.squeeze(x, axis), np.squeeze(a, axis)))
    one = xp.asarray(np.ones((1, 1)), device=tier)
    cases.append(case("squeeze to 0-d", xp.squeeze(one, (0, 1)), np.asarray(1.0)))
    cases.append(case("squeeze ()", xp.squeeze(x, ()), a))
    z = xp.asarray(np.asarray(3.0), device=tier)
    cases.append(case("expand 0-d", xp.expand_dims(z, axis=0), np.array([3.0])))
    for axis in (None, 0, 2, -1, (0, 2), ()):
        cases.append(case(f"flip {axis}", xp.flip(x, axis=axis), np.flip(a, axis)))
    cases.append(case("flip 0-d", xp.flip(z), np.asarray(3.0)))
    cases.append(case("flip empty", xp.flip(xp.asarray(np.zeros((0, 2)), device=tier), axis=0), np.zeros((0, 2))))
    assert_all_match(cases)
    with pytest.raises(ValueError):
        xp.squeeze(x, 0)              # size 2
    with pytest.raises(IndexError):
        xp.squeeze(x, 3)
    with pytest.raises(IndexError):
        xp.expand_dims(x, axis=4)
    with pytest.raises(ValueError):
        xp.expand_dims(x, axis=(1, 1))
    with pytest.raises(IndexError):
        xp.flip(x, axis=3)
    with pytest.raises(ValueError):
        xp.flip(x, axis=(0, 0))


def test_manipulation_records_without_computing(lazy, tier):
    """Shapes come from the recording; nothing evaluates or compiles."""
    x = xp.asarray(host((2, 3, 4)), device=tier) * 2.0
    xp.reset_cache_info()
    outs = [xp.reshape(x, (6, 4)), xp.permute_dims(x, (2, 0, 1)), xp.broadcast_to(x, (5, 2, 3, 4)),
            xp.concat([x, x], axis=2), xp.stack([x, x], axis=-1), xp.expand_dims(x, axis=1),
            xp.squeeze(xp.expand_dims(x, axis=0), 0), xp.flip(x), xp.moveaxis(x, 0, -1), *xp.unstack(x)]
    assert [o.shape for o in outs] == [(6, 4), (4, 2, 3), (5, 2, 3, 4), (2, 3, 8), (2, 3, 4, 2), (2, 1, 3, 4),
                                       (2, 3, 4), (2, 3, 4), (3, 4, 2), (3, 4), (3, 4)]
    info = xp.cache_info()
    assert info["misses"] == info["hits"] == info["interpreted"] == 0, info
    assert x._node.value is None


def _pad_ref(a, value, low, high, interior):
    """stablehlo.pad: interior padding between elements, then edge padding (negative crops)."""
    dilated = np.full([n + max(n - 1, 0) * it for n, it in zip(a.shape, interior)], value, a.dtype)
    dilated[tuple(slice(None, None, it + 1) for it in interior)] = a
    out = dilated
    for axis, (lo, hi) in enumerate(zip(low, high)):
        widths = [(0, 0)] * a.ndim
        widths[axis] = (max(lo, 0), max(hi, 0))
        out = np.pad(out, widths, constant_values=value)
        start = max(-lo, 0)
        stop = out.shape[axis] - max(-hi, 0)
        out = np.take(out, np.arange(start, stop), axis=axis)
    return out


def test_pad_primitive(tier):
    """pad (used by indexing, fft, linalg): edge, interior and negative (cropping) padding."""
    from tlaloc._graph import bind
    from tlaloc._prims import shape as sh
    cases = []
    for dtype in ("float64", "int8", "bool", "complex64"):
        a = host((3, 4), dtype)
        x = xp.asarray(a, device=tier)
        value = np.asarray(a.flat[1])
        v = xp.asarray(value, device=tier)
        for low, high, interior in [((1, 0), (0, 2), (0, 0)), ((0, 0), (0, 0), (1, 2)), ((-1, 2), (1, -2), (0, 1)),
                                    ((2, -4), (0, 0), (0, 0)), ((0, 0), (0, 0), (0, 0))]:
            out = xp.Array._from_node(bind(sh.pad, (x._node, v._node), {"low": low, "high": high, "interior": interior}))
            cases.append(case(f"pad {dtype} {low} {high} {interior}", out, _pad_ref(a, value, low, high, interior)))
    e = xp.asarray(np.zeros((0, 2)), device=tier)
    out = xp.Array._from_node(bind(sh.pad, (e._node, xp.asarray(1.5, device=tier)._node),
                                   {"low": (1, 0), "high": (1, 1), "interior": (3, 0)}))
    cases.append(case("pad empty", out, np.full((2, 3), 1.5)))
    assert_all_match(cases, exact=True)

