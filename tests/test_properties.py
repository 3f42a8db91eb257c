"""Property tests (hypothesis): random dtypes, shapes (0-d, empty, broadcast) and values
(with nan, +-inf and -0.0) for element-wise functions and reductions, on both tiers, against
NumPy. The number of examples comes from the hypothesis profile in conftest.py ("ci" by
default, TLALOC_HYPOTHESIS_PROFILE=deep for many more); each example compiles one small
program on the compiled tier, so an example draws a few functions rather than all."""
import math
import warnings

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tlaloc as xp
from helpers import assert_matches
from test_elementwise import BINARY, COMPLEX_FINITE_ONLY, UNARY, _binary_mask, check, finite

BF16 = np.dtype(ml_dtypes.bfloat16)
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]
COMPLEX = ["complex64", "complex128"]
DTYPES = ["bool"] + INTS + FLOATS + COMPLEX

# The tier fixture is function-scoped but only names a device, so sharing it across examples
# is safe. Keep the profile's other settings (max_examples, deadline, suppressions).
PROPERTY = settings(suppress_health_check=list(settings.default.suppress_health_check)
                    + [HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def np_dtype(name):
    return BF16 if name == "bfloat16" else np.dtype(name)


def kind(name):
    if name == "bool":
        return "b"
    return "f" if name in FLOATS else np.dtype(name).kind


_SPECIAL = [math.nan, math.inf, -math.inf, -0.0, 0.0, 1.0, -1.0, 0.5]


def elements(dtype):
    if dtype == "bool":
        return st.booleans()
    if dtype in INTS:
        info = np.iinfo(dtype)
        small = st.integers(max(info.min, -9), min(info.max, 9))
        return st.one_of(small, small, st.integers(int(info.min), int(info.max)))
    if dtype in FLOATS:
        width = {"float16": 16, "bfloat16": 32, "float32": 32, "float64": 64}[dtype]
        return st.one_of(st.floats(-100, 100, width=width, allow_subnormal=False),
                         st.sampled_from(_SPECIAL))
    width = 64 if dtype == "complex64" else 128
    # complex infinities and NaN parts are implementation-defined for most functions
    return st.complex_numbers(max_magnitude=30, allow_nan=False, allow_infinity=False,
                              allow_subnormal=False, width=width)


@st.composite
def arrays(draw, dtype, shape):
    base = np.float32 if dtype == "bfloat16" else np_dtype(dtype)
    a = draw(hnp.arrays(base, shape, elements=elements(dtype)))
    return a.astype(BF16) if dtype == "bfloat16" else a


shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)


def _applicable(table, dtype):
    return sorted(name for name, (kinds, _) in table.items() if kind(dtype) in kinds)


def _compare(results):
    xp.eval(*[r[1] for r in results])
    for label, out, expected, mask in results:
        try:
            check(out, expected, mask, zero_sign=not label.startswith(("sign", "maximum", "minimum")))
        except AssertionError as exc:
            raise AssertionError(f"{label}: {exc}") from None


def _full_shape(ref, *operands):
    """NumPy's `ref` of the operands broadcast into arrays of their own (at least 1-d, no
    zero strides): NumPy's fast path for a constant exponent (sqrt for 0.5), which a 0-d
    exponent or a broadcast one (stride 0) takes, differs from its own pow and from the
    standard at -0 and -inf (float32 pow(-inf, 0.5) is nan there, +inf in the standard)."""
    full = np.broadcast_arrays(*operands)
    return np.asarray(ref(*[np.array(np.atleast_1d(f)) for f in full])).reshape(full[0].shape)


@PROPERTY
@given(data=st.data(), dtype=st.sampled_from(DTYPES),
       shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=4))
def test_binary_elementwise(tier, data, dtype, shapes):
    names = data.draw(st.lists(st.sampled_from(_applicable(BINARY, dtype)), min_size=1, max_size=3,
                               unique=True), label="functions")
    a = data.draw(arrays(dtype, shapes.input_shapes[0]), label="x1")
    b = data.draw(arrays(dtype, shapes.input_shapes[1]), label="x2")
    x1, x2 = xp.asarray(a, device=tier), xp.asarray(b, device=tier)
    results = []
    with np.errstate(all="ignore"):
        for name in names:
            out = getattr(xp, name)(x1, x2)
            assert out.shape == shapes.result_shape
            ea, eb = np.broadcast_arrays(a, b)
            expected = np.asarray(BINARY[name][1](a, b))
            mask = _binary_mask(name, ea, eb)
            if dtype in COMPLEX and name == "pow":
                mask = mask & (np.abs(eb) < 3) if mask is not None else None
            results.append((name, out, expected, mask))
    _compare(results)


@PROPERTY
@given(data=st.data(), dtype=st.sampled_from(DTYPES), shape=shapes)
def test_unary_elementwise(tier, data, dtype, shape):
    names = data.draw(st.lists(st.sampled_from(_applicable(UNARY, dtype)), min_size=1, max_size=4,
                               unique=True), label="functions")
    a = data.draw(arrays(dtype, shape), label="x")
    x = xp.asarray(a, device=tier)
    results = []
    with np.errstate(all="ignore"):
        for name in names:
            mask = None
            if dtype in COMPLEX and name in COMPLEX_FINITE_ONLY:
                mask = finite(a)
                if name in ("reciprocal", "sign"):
                    mask = mask & (a != 0)
            results.append((name, getattr(xp, name)(x), np.asarray(UNARY[name][1](a)), mask))
    _compare(results)


@PROPERTY
@given(data=st.data(), dtype=st.sampled_from(DTYPES), shape=shapes, scalar=st.sampled_from(
    [True, 0, 1, -2, 7, 0.5, -1.5, math.inf, 1.5 - 0.5j]))
def test_python_scalar_operands(tier, data, dtype, shape, scalar):
    """x op s and s op x for a random array and scalar agree with NumPy on the promoted
    dtype (scalars are weak)."""
    from test_elementwise import scalar_result
    rd = scalar_result(dtype, scalar)
    assume(rd is not OverflowError)
    a = data.draw(arrays(dtype, shape), label="x")
    name = data.draw(st.sampled_from(["add", "subtract", "multiply", "divide", "equal", "less",
                                      "maximum", "pow"]), label="function")
    assume(kind(rd) in BINARY[name][0])
    x = xp.asarray(a, device=tier)
    with np.errstate(all="ignore"):
        ea = a.astype(np_dtype(rd))
        es = np.asarray(scalar).astype(np_dtype(rd))
        fn, ref = getattr(xp, name), BINARY[name][1]
        results = [(f"{name}(x, {scalar!r})", fn(x, scalar), _full_shape(ref, ea, es),
                    _binary_mask(name, *np.broadcast_arrays(ea, es))),
                   (f"{name}({scalar!r}, x)", fn(scalar, x), _full_shape(ref, es, ea),
                    _binary_mask(name, *np.broadcast_arrays(es, ea)))]
    if rd in COMPLEX and name == "pow":
        results = [r[:3] + (np.zeros(r[2].shape, bool),) for r in results]  # implementation-defined
    _compare(results)


# ----------------------------------------------------------------------------- reductions

@st.composite
def axes(draw, ndim):
    if draw(st.booleans()):
        return None
    picked = draw(st.lists(st.integers(0, max(ndim - 1, 0)), unique=True, max_size=ndim)) if ndim else []
    picked = [a - ndim if draw(st.booleans()) else a for a in picked]   # negative spellings
    if len(picked) == 1 and draw(st.booleans()):
        return picked[0]
    return tuple(picked)


def _axis_tuple(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, int):
        return (axis % ndim,)
    return tuple(a % ndim for a in axis)


def _reduce_ref(fn, a, axis, keepdims, **kw):
    return np.asarray(fn(a, axis=_axis_tuple(axis, a.ndim), keepdims=keepdims, **kw))


def _accumulator(dtype):
    if dtype == "bool" or dtype in INTS[:4]:
        return "int64"
    if dtype in INTS[4:]:
        return "uint64"
    return dtype


def _close(label, out, expected, a, ax, keepdims):
    """Sums in another order: the error is up to ~ n * eps * sum |x| (cancellation included)."""
    o = np.asarray(out)
    assert o.dtype == expected.dtype and o.shape == expected.shape, (label, o.dtype, o.shape, expected.shape)
    if o.dtype.kind in "biu":
        np.testing.assert_array_equal(o, expected, err_msg=label)
        return
    wide = np.complex128 if o.dtype.kind == "c" else np.float64
    real = {"complex64": np.float32, "complex128": np.float64}.get(str(o.dtype), o.dtype)
    eps = float(ml_dtypes.finfo(real).eps)
    n = max(1, math.prod(a.shape[i] for i in ax))
    mag = np.sum(np.abs(a.astype(wide)), axis=ax, keepdims=keepdims)
    mag = np.where(np.isfinite(mag), mag, 0.0)
    ov, ev = o.astype(wide), expected.astype(wide)
    same = (ov == ev) | (np.isnan(ov) & np.isnan(ev)) | (np.abs(ov - ev) <= 4 * eps * (n * mag + np.abs(ev)))
    assert same.all(), f"{label}: {ov[~same]} != {ev[~same]}"


@PROPERTY
@given(data=st.data(), dtype=st.sampled_from(DTYPES), shape=shapes, keepdims=st.booleans())
def test_reductions(tier, data, dtype, shape, keepdims):
    a = data.draw(arrays(dtype, shape), label="x")
    axis = data.draw(axes(len(shape)), label="axis")
    ax = _axis_tuple(axis, len(shape))
    x = xp.asarray(a, device=tier)
    acc = _accumulator(dtype)
    names = ["sum", "prod", "all", "any"]
    if dtype not in COMPLEX:
        names += ["max", "min"]
    if dtype in FLOATS + COMPLEX:
        names += ["mean"]
    if dtype in FLOATS:
        names += ["var", "std"]
    names = data.draw(st.lists(st.sampled_from(names), min_size=1, max_size=3, unique=True), label="functions")
    empty = any(shape[i] == 0 for i in ax)
    results = []
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # NumPy on empty slices
        wide = a.astype(np.float32) if dtype in ("float16", "bfloat16") else a
        for name in names:
            fn = getattr(xp, name)
            if name in ("max", "min") and empty:
                with pytest.raises(ValueError):
                    fn(x, axis=axis, keepdims=keepdims)
                continue
            out = fn(x, axis=axis, keepdims=keepdims)
            if name in ("sum", "prod"):
                exp = _reduce_ref(getattr(np, name), a.astype(np_dtype(acc)), axis, keepdims)
            elif name in ("all", "any"):
                exp = _reduce_ref(getattr(np, name), a, axis, keepdims).astype(bool)
            elif name in ("max", "min"):
                exp = _reduce_ref(getattr(np, name), a, axis, keepdims)
            else:
                exp = _reduce_ref(getattr(np, name), wide, axis, keepdims).astype(np_dtype(dtype))
            results.append((name, out, exp.astype(out.dtype.numpy if name in ("max", "min") else exp.dtype)))
        xp.eval(*[r[1] for r in results])
        for name, out, exp in results:
            if name in ("var", "std"):
                # a different summation order, and the deviations feed a square
                o = np.asarray(out).astype(np.float64)
                e = exp.astype(np.float64)
                tol = 64 * float(ml_dtypes.finfo(np_dtype(dtype)).eps)
                assert np.asarray(out).dtype == exp.dtype
                np.testing.assert_allclose(o, e, rtol=tol, atol=tol * (1 + np.nanmax(np.abs(np.where(np.isfinite(wide), wide, 0)), initial=0)),
                                           equal_nan=True, err_msg=name)
            else:
                _close(name, out, exp, a, ax, keepdims)


@PROPERTY
@given(data=st.data(), dtype=st.sampled_from(DTYPES), shape=shapes)
def test_astype_roundtrip_and_cross_tier(tier, data, dtype, shape):
    """astype to a random dtype gives the same values on this tier and the interpreter, and
    a widening cast followed by the inverse cast is the identity."""
    a = data.draw(arrays(dtype, shape), label="x")
    target = data.draw(st.sampled_from(DTYPES), label="target")
    assume(not (kind(dtype) == "c" and kind(target) != "c"))
    x = xp.asarray(a, device=tier)
    out = xp.astype(x, getattr(xp, target))
    ref = xp.astype(xp.asarray(a, device="interpreter"), getattr(xp, target))
    assert_matches(out, np.asarray(ref), exact=True)
    if xp.can_cast(getattr(xp, dtype), getattr(xp, target)) and not (kind(target) == "c" and kind(dtype) != "c"):
        back = xp.astype(out, getattr(xp, dtype))
        assert_matches(back, a, exact=True)
