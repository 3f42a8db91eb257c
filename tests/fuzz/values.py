"""Input arrays and Python scalars for programs: every dtype, 0-d and empty shapes, special
values (+-0, +-inf, nan, the extremes of each dtype, huge and tiny normal numbers), and the
Python source that rebuilds them exactly.

No subnormal numbers: XLA:CPU flushes them (docs/precision.md), so they are kept out of the
inputs, and subnormal results are compared as ranges that contain zero (reference.py)."""
from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

BOOL = ["bool"]
INTS = ["int8", "int16", "int32", "int64"]
UINTS = ["uint8", "uint16", "uint32", "uint64"]
FLOATS = ["float32", "float64"]
COMPLEX = ["complex64", "complex128"]
DTYPES = BOOL + INTS + UINTS + FLOATS + COMPLEX
# new inputs favour floating dtypes, where compilers rewrite most
WEIGHTED_DTYPES = FLOATS * 4 + COMPLEX + DTYPES


def weighted(*pairs):
    """One of the strategies, drawn with the given integer weights (st.one_of would draw
    repeated strategies as one)."""
    table = [strategy for weight, strategy in pairs for _ in range(weight)]
    return st.integers(0, len(table) - 1).flatmap(lambda i: table[i])


def kind(dtype) -> str:
    return np.dtype(dtype).kind


def _float_specials(dtype):
    fi = np.finfo(dtype)
    huge = 1e30 if dtype == "float32" else 1e300
    tiny = 1e-30 if dtype == "float32" else 1e-300
    return [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, math.inf, -math.inf, math.nan, huge, -huge,
            tiny, -tiny, float(fi.max), -float(fi.max), float(fi.tiny), 2.0, -0.5, 1.5, 100.0]


def float_elements(dtype):
    """Special and hypothesis-drawn floats (arrays() mixes in random ones too)."""
    width = 32 if dtype == "float32" else 64
    ordinary = st.floats(-1e3, 1e3, width=width, allow_subnormal=False)
    wide = st.floats(width=width, allow_subnormal=False)
    return weighted((3, st.sampled_from(_float_specials(dtype))), (1, ordinary), (1, wide))


def int_elements(dtype):
    info = np.iinfo(dtype)
    small = st.integers(max(int(info.min), -9), min(int(info.max), 9))
    extremes = st.sampled_from(sorted({int(info.min), int(info.max), int(info.max) - 1,
                                       int(info.min) + 1, 0, 1}))
    return st.one_of(small, extremes, st.integers(int(info.min), int(info.max)))


def elements(dtype):
    k = kind(dtype)
    if k == "b":
        return st.booleans()
    if k in "iu":
        return int_elements(dtype)
    if k == "f":
        return float_elements(dtype)
    part = "float32" if dtype == "complex64" else "float64"
    return st.tuples(float_elements(part), float_elements(part)).map(lambda t: complex(*t))


def shapes(min_dims=0, max_dims=3, max_side=4):
    """Shapes of up to `max_dims` axes; an empty axis now and then."""
    # hypothesis favours (and shrinks towards) the first entry: a length of 3 rather than 1,
    # since a loop over one element is no loop (vectorized code paths need a few)
    sides = [s for s in (3, 4, 2, 1) if s <= max_side] + list(range(5, max_side + 1))
    side = st.sampled_from(sides * 3 + [0])
    ndims = [n for n in [1, 2, 1, 2, 3, 0] if min_dims <= n <= max_dims] or [min_dims]
    return st.sampled_from(ndims).flatmap(
        lambda n: st.lists(side, min_size=n, max_size=n).map(tuple))


@st.composite
def arrays(draw, dtype, shape):
    """An array of `dtype` and `shape`. Floating elements are a mix of special values and
    random numbers with a full significand (from a drawn seed: hypothesis's own numbers are
    mostly short, whose products and sums are exact, where a difference of rounding or a
    reassociation does not show)."""
    n = math.prod(shape)
    d = np.dtype(dtype)
    if d.kind not in "fc":
        items = draw(st.lists(elements(dtype), min_size=n, max_size=n))
        return np.array(items, dtype=d).reshape(shape)
    part = "float32" if d in (np.float32, np.complex64) else "float64"
    count = n * (2 if d.kind == "c" else 1)
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    scale = draw(st.sampled_from([1.0, 1e3, 1e-3, 1e12, 1e-12]))
    base = (rng.standard_normal(count) * scale).astype(part)
    picks = draw(st.lists(weighted((3, st.none()), (2, float_elements(part))),
                          min_size=count, max_size=count))
    flat = np.array([b if p is None else p for b, p in zip(base, picks)], dtype=part)
    if d.kind == "c":
        out = np.empty(n, d)
        out.real, out.imag = flat[:n], flat[n:]
    else:
        out = flat.astype(d)
    return out.reshape(shape)


def scalars(dtype_kind, dtype=None):
    """Python scalars that the standard lets meet an array of `dtype`'s kind."""
    if dtype_kind == "b":
        return st.booleans()
    if dtype_kind in "iu":
        info = np.iinfo(dtype)
        small = [v for v in (0, 1, 2, -1, 3, 7) if info.min <= v <= info.max]
        return st.one_of(st.sampled_from(small), st.integers(int(info.min), int(info.max)))
    if dtype_kind == "f":
        return st.one_of(st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.5, 2.0, math.inf, -math.inf,
                                          math.nan, 1e30, 3.0, 1e-30]),
                         st.integers(-5, 5),
                         st.floats(-100, 100, width=32, allow_subnormal=False))
    return st.one_of(scalars("f", dtype),
                     st.tuples(st.sampled_from([0.0, -0.0, 1.0, -2.0, 0.5, math.inf]),
                               st.sampled_from([0.0, -0.0, 1.0, 3.0, -0.5]))
                     .map(lambda t: complex(*t)))


# --------------------------------------------------------------------------- source text

def scalar_source(value) -> str:
    """Python source for a scalar that reads back to the same value (sign of zero, inf,
    nan, complex parts)."""
    if isinstance(value, (bool, np.bool_)):
        return repr(bool(value))
    if isinstance(value, (int, np.integer)):
        return repr(int(value))
    if isinstance(value, complex) or isinstance(value, np.complexfloating):
        return f"complex({scalar_source(float(value.real))}, {scalar_source(float(value.imag))})"
    f = float(value)
    if math.isnan(f):
        return "math.nan"
    if math.isinf(f):
        return "math.inf" if f > 0 else "-math.inf"
    return repr(f)


def array_source(a: np.ndarray) -> str:
    """`np.array(...)` source that rebuilds `a` exactly (float32 values are printed as the
    float64 that converts back to them)."""
    d = str(a.dtype)
    flat = a.reshape(-1)
    if a.dtype.kind == "c":
        body = (f"_complex([{', '.join(scalar_source(float(v.real)) for v in flat)}], "
                f"[{', '.join(scalar_source(float(v.imag)) for v in flat)}], np.{d})")
    else:
        body = f"np.array([{', '.join(scalar_source(v.item()) for v in flat)}], dtype=np.{d})"
    if a.ndim != 1:
        body += f".reshape({a.shape!r})"
    return body


# A helper the program source defines: complex arrays from parts (re + 1j * im would turn
# 1j * inf into nan + inf j).
COMPLEX_HELPER = '''def _complex(re, im, dtype):
    out = np.empty(len(re), dtype)
    out.real, out.imag = re, im
    return out
'''
