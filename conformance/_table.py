"""The table of the differential suite: one Entry per function of the 2025.12 namespace (with
linalg and fft) and per Array operator/attribute: its argument strategy and its comparison.

Strategies draw (args, kwargs) with NumPy arrays as leaves (see _harness). Modes:
"exact" (integer, bool and exactly rounded float results, signed zeros and nan positions
included), "exact-real" (exact for real dtypes, per-dtype rtol for complex), "close"
(per-dtype rtol: transcendental functions), "accum" (rtol plus an absolute tolerance scaled
by the inputs' magnitude and size: reductions, linear algebra, FFT), or a property check.
"""
from __future__ import annotations

import functools
import math
import operator

import numpy as np
from hypothesis import strategies as st

import tlaloc as xp

from ._harness import (ALL, BOOL, COMPLEX, DEVICE, FLOATS, INT_OR_BOOL, INTS, NUMERIC, REAL,
                       REAL_NUMERIC, RTOL, SHAPES, SIGNED, UNSIGNED, Dt, Entry, Mismatch,
                       _same_specials, arrays, grid_pair, special_grid,
                       broadcastable, compare, kind, promote, same_category, scalar_for,
                       shapes, to_numpy, values)

ABSENT = object()  # a keyword left out of the call


def _kw(**items):
    return {k: v for k, v in items.items() if v is not ABSENT}


def maybe(strategy):
    """A keyword's value, or ABSENT (the default)."""
    return st.one_of(st.just(ABSENT), strategy)


@st.composite
def axis_arg(draw, ndim, *, allow_none=True, allow_tuple=True):
    options = []
    if allow_none:
        options.append(st.none())
    if ndim:
        options.append(st.integers(-ndim, ndim - 1))
        if allow_tuple:
            options.append(st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim)
                           .map(lambda ax: tuple(a - ndim if i % 2 else a for i, a in enumerate(ax))))
    elif allow_tuple:
        options.append(st.just(()))
    return draw(st.one_of(options))


# ------------------------------------------------------------------------------ elementwise

def unary(dtypes, *, values_="any", shp=None):
    @st.composite
    def strat(draw):
        if values_ == "any" and shp is None and draw(st.integers(0, 3)) == 0:
            # every special value of one dtype at once
            return (special_grid(draw(st.sampled_from(dtypes))),), {}
        return (draw(arrays(dtypes, shp, values=values_)),), {}
    return strat()


@st.composite
def _binary(draw, dtypes, v1, v2, scalars, dtypes2=None):
    d1 = draw(st.sampled_from(dtypes))
    pool = [d for d in same_category(d1) if d in (dtypes2 or dtypes)]
    d2 = draw(st.sampled_from(pool)) if draw(st.booleans()) else d1
    s1 = draw(shapes())
    s2 = draw(broadcastable(s1))
    if draw(st.booleans()):
        s1, s2 = s2, s1
    x1 = draw(values(d1, s1, values=v1))
    x2 = draw(values(d2, s2, values=v2))
    if v1 == v2 == "any" and draw(st.integers(0, 3)) == 0:
        # every pair of special values at once
        return grid_pair(d1, d2), {}
    if scalars:
        c = draw(st.integers(0, 5))
        if c == 0:
            x2 = scalar_for(draw, d1, v2)
        elif c == 1:
            x1 = scalar_for(draw, d2, v1)
    return (x1, x2), {}


def binary(dtypes, v1="any", v2="any", *, scalars=True, dtypes2=None):
    return _binary(dtypes, v1, v2, scalars, dtypes2)


def floor_divide_expect(args, kwargs, expected):
    """The standard prefers floor(x1 / x2) where x1 is infinite and x2 finite and nonzero
    (+-inf); NumPy gives Python's nan, which the standard allows too. tlaloc gives the
    preferred value."""
    x1, x2 = (np.asarray(a) for a in args[:2])
    if expected.dtype.kind != "f":
        return expected
    with np.errstate(all="ignore"):
        special = np.isinf(x1) & np.isfinite(x2) & (x2 != 0)
        return np.where(special, np.divide(x1, x2), expected).astype(expected.dtype)


def check_pow(actual, expected, args, kwargs):
    """pow is ill-conditioned: a relative error eps in the inputs becomes |x2 * log(x1)| * eps
    in the result, so the tolerance is scaled by it. Complex pow with an infinite or nan part
    in an operand, or an overflowing result, is left to the implementation (the standard:
    "as if exp(x2 * log(x1))", whose special cases depend on how the product is formed):
    only elements whose operands and expected result are finite are compared for complex
    results."""
    x1, x2 = (np.asarray(a) for a in args[:2])
    compare(actual, expected, mode="shape")
    if not expected.size or expected.dtype.kind not in "fc":
        compare(actual, expected)
        return
    with np.errstate(all="ignore"):
        raw = np.abs(np.asarray(x2, np.complex128) * np.log(np.asarray(x1, np.complex128)))
    raw = np.broadcast_to(raw, expected.shape)
    cond = np.where(np.isfinite(raw), np.maximum(raw, 1.0), 1.0)
    if expected.dtype.kind == "c":
        def finite(v):
            return np.isfinite(v.real) & np.isfinite(v.imag) if v.dtype.kind == "c" else np.isfinite(v)
        # (and where exp(x2 * log(x1)) neither overflows nor underflows, whose intermediate
        # infinities give inf or nan depending on the formula)
        limit = np.log(np.finfo(expected.dtype).max)
        # (0 ** z is fixed only for Re(z) > 0, where it is 0)
        zero_base = np.broadcast_to((x1 == 0) & (np.real(x2) > 0), expected.shape)
        ok = np.broadcast_to(finite(x1) & finite(x2), expected.shape) & ((raw < limit) | zero_base)
        actual, expected, cond = actual[ok], expected[ok], cond[ok]
    _same_specials(actual, expected, "pow")
    fin = np.isfinite(expected) & np.isfinite(actual)
    rtol = RTOL[str(expected.dtype)] * cond[fin]
    a, e = actual[fin].astype(np.complex128), expected[fin].astype(np.complex128)
    bad = ~(np.abs(a - e) <= rtol * np.abs(e) + np.finfo(expected.dtype).tiny * 4)
    if bad.any():
        raise Mismatch(f"pow: not within the scaled rtol: got {a[bad][:6]!r}, expected {e[bad][:6]!r}")


def _finite(v):
    v = np.asarray(v)
    return np.isfinite(v.real) & np.isfinite(v.imag) if v.dtype.kind == "c" else np.isfinite(v)


def _compare_where(actual, expected, ok, mode):
    compare(actual, expected, mode="shape")
    ok = np.broadcast_to(ok, expected.shape)
    compare(actual[ok], expected[ok], mode=mode)


def check_complex_quotient(actual, expected, args, kwargs):
    """Complex division (divide, /, reciprocal through it, sign as z / |z|): the standard
    leaves the result to the implementation when a part of an operand is infinite or nan
    (only "all four parts nan gives nan + nan j" is fixed), and a zero complex divisor gives
    nan by the textbook formula it prescribes but inf by NumPy's Smith algorithm: those
    elements are not compared for complex results."""
    if expected.dtype.kind != "c" or not expected.size:
        compare(actual, expected, mode="exact-real")
        return
    x = [np.asarray(a) for a in args[:2]]
    ok = _finite(x[0])
    if len(x) > 1:
        ok = ok & _finite(x[1]) & (x[1] != 0)
    _compare_where(actual, expected, ok, "close")


def check_complex_reciprocal(actual, expected, args, kwargs):
    """reciprocal is 1 / x: check_complex_quotient with x as the divisor."""
    check_complex_quotient(actual, expected, (np.ones((), np.asarray(args[0]).dtype), args[0]), kwargs)


def check_near_branch_points(points):
    """Complex functions with logarithmic singularities at `points` (atan at +-1j, atanh at
    +-1): within 1e-6 of one, XLA's float32 intermediates underflow (and are flushed to
    zero), giving inf where the value is large but finite. The standard leaves accuracy to
    the implementation; such elements are not compared for complex inputs."""
    def check(actual, expected, args, kwargs):
        x = np.asarray(args[0])
        if x.dtype.kind != "c":
            compare(actual, expected, mode="close")
            return
        near = np.zeros(x.shape, bool)
        for p in points:
            near |= np.abs(x.astype(np.complex128) - p) < 1e-6
        _compare_where(actual, expected, ~near, "close")
    return check


def expm1_expect(args, kwargs, expected):
    """NumPy's complex expm1 at infinite or nan parts is not the standard's (expm1(inf + 0j)
    is inf + nan j, not inf + 0j); the standard's values there are exp(z)'s, real part minus
    1 (exp's agree with C99 in NumPy)."""
    z = np.asarray(args[0])
    if z.dtype.kind != "c":
        return expected
    with np.errstate(all="ignore"):
        e = np.exp(z)
    fixed = np.empty_like(expected)
    fixed.real, fixed.imag = e.real - 1, e.imag
    return np.where(_finite(z), expected, fixed)


def _overflowing_parts(z):
    """Complex inputs with a part past log(max float): XLA's complex exp, cos, sin, cosh and
    sinh form exp(|part|) on the way, which overflows although the result (cosh(89) in
    float32, or an infinite part times sin(0) = 0) may be finite or have a zero part; the
    standard leaves accuracy to the implementation."""
    limit = np.log(np.finfo(z.real.dtype).max) - 1
    with np.errstate(invalid="ignore"):
        return (np.abs(z.real) > limit) | (np.abs(z.imag) > limit)


def log1p_expect(args, kwargs, expected):
    """NumPy's complex log1p is log(1 + z), which loses the digits of the real part,
    log|1 + z| ~ |z|^2 / 2, for a small z (log1p(1e-30 + 0j) comes out 0; at |z| = 3e-3 in
    complex64 it is 1% off): for finite z with |z| < 0.5 the expected value is
    0.5 * log1p(2x + x^2 + y^2) + i atan2(y, 1 + x), computed in float64."""
    z = np.asarray(args[0])
    if z.dtype.kind != "c" or not expected.size:
        return expected
    w = z.astype(np.complex128)
    x, y = w.real, w.imag
    with np.errstate(all="ignore"):
        re = 0.5 * np.log1p(2 * x + x * x + y * y)
        im = np.arctan2(y, 1 + x)
    accurate = np.empty_like(expected)
    accurate.real, accurate.imag = re, im
    small = _finite(z) & (np.abs(w) < 0.5)
    return np.where(small, accurate, expected)


_COMPLEX_EXCLUDE = {"exp": _overflowing_parts, "expm1": _overflowing_parts,
                    "cos": _overflowing_parts, "sin": _overflowing_parts,
                    "cosh": _overflowing_parts, "sinh": _overflowing_parts}


def check_complex_unspecified_signs(actual, expected, args, kwargs, exclude=None):
    """Complex transcendental functions at inputs with an infinite or nan part: the standard
    leaves the sign of some infinite and zero parts unspecified (sinh(inf + inf j) is
    +-inf + nan j); there nan positions, infinities and zeros are compared without their
    signs, finite values as in "close". Finite inputs are compared as in "close"."""
    z = np.asarray(args[0])
    if expected.dtype.kind != "c" or not expected.size:
        compare(actual, expected, mode="close")
        return
    fin = np.broadcast_to(_finite(z), expected.shape)
    skip = np.zeros(z.shape, bool) if exclude is None else exclude(z)
    _compare_where(actual, expected, fin & ~skip, "close")
    for part in ("real", "imag"):
        a, e = getattr(actual[~fin], part), getattr(expected[~fin], part)
        same = (np.isnan(a) & np.isnan(e)) | (np.isinf(a) & np.isinf(e)) | (np.abs(a) == np.abs(e))
        finite = np.isfinite(a) & np.isfinite(e) & (a != 0)
        same |= finite & np.isclose(a, e, rtol=1e-5)
        if not same.all():
            raise Mismatch(f"{part} at non-finite inputs {z[~np.broadcast_to(_finite(z), z.shape)][~same][:5]}:"
                           f" got {a[~same][:5]}, expected {e[~same][:5]}")


def elementwise_entries():
    E = []
    for name, dtypes, mode, vals in [
        ("abs", NUMERIC, "exact-real", "any"),
        ("acos", FLOATS, "close", "any"), ("acosh", FLOATS, "close", "any"),
        ("asin", FLOATS, "close", "any"), ("asinh", FLOATS, "close", "any"),
        ("atan", FLOATS, "close", "any"), ("atanh", FLOATS, "close", "any"),
        ("bitwise_invert", INT_OR_BOOL, "exact", "any"),
        ("ceil", REAL_NUMERIC, "exact", "any"), ("floor", REAL_NUMERIC, "exact", "any"),
        ("trunc", REAL_NUMERIC, "exact", "any"),
        ("round", NUMERIC, "exact", "int-like"),
        ("conj", NUMERIC, "exact", "any"), ("real", NUMERIC, "exact", "any"),
        ("imag", COMPLEX, "exact", "any"),
        ("cos", FLOATS, "close", "any"), ("cosh", FLOATS, "close", "any"),
        ("sin", FLOATS, "close", "any"), ("sinh", FLOATS, "close", "any"),
        ("tan", FLOATS, "close", "any"), ("tanh", FLOATS, "close", "any"),
        ("exp", FLOATS, "close", "any"), ("expm1", FLOATS, "close", "any"),
        ("log", FLOATS, "close", "any"), ("log1p", FLOATS, "close", "any"),
        ("log2", FLOATS, "close", "any"), ("log10", FLOATS, "close", "any"),
        ("isfinite", NUMERIC, "exact", "any"), ("isinf", NUMERIC, "exact", "any"),
        ("isnan", NUMERIC, "exact", "any"),
        ("logical_not", BOOL, "exact", "any"),
        ("negative", NUMERIC, "exact", "any"), ("positive", NUMERIC, "exact", "any"),
        ("reciprocal", FLOATS, "exact-real", "any"),
        ("sign", NUMERIC, "exact-real", "any"),
        ("signbit", REAL, "exact", "any"),
        ("sqrt", FLOATS, "exact-real", "any"),
        ("square", NUMERIC, "exact-real", "any"),
    ]:
        expect = {"expm1": expm1_expect, "log1p": log1p_expect}.get(name)
        if mode == "close":
            mode = functools.partial(check_complex_unspecified_signs,
                                     exclude=_COMPLEX_EXCLUDE.get(name))
        if name == "sign":
            mode = check_complex_quotient
        elif name == "reciprocal":
            mode = check_complex_reciprocal
        elif name in ("atan", "atanh"):
            mode = check_near_branch_points([1j, -1j] if name == "atan" else [1, -1])
        E.append(Entry(name, unary(dtypes, values_=vals), mode, expect=expect))
    # round also on ordinary values (halfway cases are in "int-like")
    E.append(Entry("round", unary(FLOATS), "exact", covers=()))

    for name, dtypes, mode, v1, v2 in [
        ("add", NUMERIC, "exact", "any", "any"),
        ("subtract", NUMERIC, "exact", "any", "any"),
        ("multiply", NUMERIC, "exact-real", "any", "any"),
        ("divide", FLOATS, check_complex_quotient, "any", "any"),
        ("atan2", REAL, "close", "any", "any"),
        ("copysign", REAL, "exact", "any", "any"),
        ("hypot", REAL, "close", "any", "any"),
        ("logaddexp", REAL, "close", "any", "any"),
        ("nextafter", REAL, "exact", "any", "any"),
        ("equal", ALL, "exact", "any", "any"),
        ("not_equal", ALL, "exact", "any", "any"),
        ("greater", REAL_NUMERIC, "exact", "any", "any"),
        ("greater_equal", REAL_NUMERIC, "exact", "any", "any"),
        ("less", REAL_NUMERIC, "exact", "any", "any"),
        ("less_equal", REAL_NUMERIC, "exact", "any", "any"),
        ("maximum", REAL_NUMERIC, "exact-unsigned-zero", "any", "any"),
        ("minimum", REAL_NUMERIC, "exact-unsigned-zero", "any", "any"),
        ("floor_divide", INTS, "exact", "small", "nonzero"),
        ("remainder", REAL, "exact", "any", "any"),
        ("remainder", INTS, "exact", "small", "nonzero"),
        ("pow", INTS, "exact", "any", "exponent"),
        ("bitwise_and", INT_OR_BOOL, "exact", "any", "any"),
        ("bitwise_or", INT_OR_BOOL, "exact", "any", "any"),
        ("bitwise_xor", INT_OR_BOOL, "exact", "any", "any"),
        ("bitwise_left_shift", INTS, "exact", "any", "shift"),
        ("bitwise_right_shift", INTS, "exact", "any", "shift"),
        ("logical_and", BOOL, "exact", "any", "any"),
        ("logical_or", BOOL, "exact", "any", "any"),
        ("logical_xor", BOOL, "exact", "any", "any"),
    ]:
        E.append(Entry(name, binary(dtypes, v1, v2), mode))
    E.append(Entry("floor_divide", binary(REAL), "exact", expect=floor_divide_expect))
    E.append(Entry("pow", binary(FLOATS), check_pow))
    E.append(Entry("clip", clip_args(), "exact-unsigned-zero",
                   unspecified=((ValueError, "min must be less than or equal to max"),)))
    E.append(Entry("where", where_args(), "exact"))
    return E


@st.composite
def clip_args(draw):
    d = draw(st.sampled_from(REAL_NUMERIC))
    s = draw(shapes())
    x = draw(values(d, s))
    def bound():
        c = draw(st.integers(0, 3))
        if c == 0:
            return None
        if c == 1:
            return scalar_for(draw, d, "small" if kind(d) in "iu" else "any")
        return draw(values(d, draw(broadcastable(s).filter(
            lambda b: len(b) <= len(s))), values="small" if kind(d) in "iu" else "any"))
    lo, hi = bound(), bound()
    form = draw(st.integers(0, 2))
    if form == 0:
        return (x,), _kw(min=lo, max=hi)
    if form == 1:
        return (x, lo, hi), {}
    return (x,), _kw(min=lo if lo is not None else ABSENT, max=hi if hi is not None else ABSENT)


@st.composite
def where_args(draw):
    s = draw(shapes())
    cond = draw(values("bool", draw(broadcastable(s))))
    (x1, x2), _ = draw(binary(ALL))
    if isinstance(x1, np.ndarray) and isinstance(x2, np.ndarray):
        x1 = draw(values(str(x1.dtype), s))
    elif not isinstance(x1, np.ndarray) and not isinstance(x2, np.ndarray):
        return (cond, x1, x2), {}
    return (cond, x1, x2), {}


# ------------------------------------------------------------------------------ reductions

@st.composite
def reduction_args(draw, dtypes, *, dtype_kw=False, correction=False, min_size=0, vals="any"):
    d = draw(st.sampled_from(dtypes))
    s = draw(shapes())
    x = draw(values(d, s, values=vals))
    kw = {}
    axis = draw(maybe(axis_arg(len(s))))
    kw = _kw(axis=axis, keepdims=draw(maybe(st.booleans())))
    if dtype_kw:
        k = kind(d)
        same = [e for e in (INTS if k in "iu" else FLOATS) if kind(e) == k or k == "f" and kind(e) == "c"]
        dk = draw(maybe(st.one_of(st.none(), st.sampled_from(same).map(Dt))))
        if dk is not ABSENT:
            kw["dtype"] = dk
    if correction:
        c = draw(maybe(st.sampled_from([0, 1, 0.5, 0.0, 1.0])))
        if c is not ABSENT:
            kw["correction"] = c
    return (x,), kw


@st.composite
def arg_reduction_args(draw, dtypes):
    d = draw(st.sampled_from(dtypes))
    s = draw(shapes())
    x = draw(values(d, s))
    kw = _kw(axis=draw(maybe(axis_arg(len(s), allow_tuple=False))),
             keepdims=draw(maybe(st.booleans())))
    return (x,), kw


@st.composite
def cumulative_args(draw, dtypes):
    d = draw(st.sampled_from(dtypes))
    s = draw(shapes(1, 3))  # 0-d: unspecified
    x = draw(values(d, s, values="small" if kind(d) in "iu" else "any"))
    kw = {}
    if len(s) > 1 or draw(st.booleans()):
        kw["axis"] = draw(axis_arg(len(s), allow_none=False, allow_tuple=False)) if s else None
        if kw["axis"] is None:
            del kw["axis"]
    inc = draw(maybe(st.booleans()))
    if inc is not ABSENT:
        kw["include_initial"] = inc
    k = kind(d)
    if draw(st.booleans()) and k != "b":
        same = [e for e in NUMERIC if kind(e) == k or (k == "f" and kind(e) == "c")]
        kw["dtype"] = Dt(draw(st.sampled_from(same)))
    return (x,), kw


@st.composite
def diff_args(draw):
    d = draw(st.sampled_from(NUMERIC))
    s = draw(shapes(1, 3))
    x = draw(values(d, s))
    kw = {}
    ax = draw(maybe(st.integers(-len(s), len(s) - 1)))
    if ax is not ABSENT:
        kw["axis"] = ax
    n = draw(maybe(st.integers(0, 3)))
    if n is not ABSENT:
        kw["n"] = n
    axis = kw.get("axis", -1) % len(s)
    for side in ("prepend", "append"):
        if draw(st.booleans()):
            shp = list(s)
            shp[axis] = draw(st.integers(0, 2))
            if draw(st.booleans()) and len(s) == 1 and False:
                pass
            kw[side] = draw(values(d, tuple(shp)))
    return (x,), kw


def _diff(ns, x, **kw):
    if ns is not xp and kw.get("n", 1) == 0:
        # NumPy (so array-api-strict) returns x for n=0 and ignores prepend/append; the
        # standard's result has M + N1 + N2 - n elements along the axis
        parts = [kw[k] for k in ("prepend",) if k in kw] + [x] + [kw[k] for k in ("append",) if k in kw]
        return ns.concat(parts, axis=kw.get("axis", -1))
    return ns.diff(x, **kw)


def _variance_expect(args, kwargs, expected):
    """The standard: N - correction <= 0 gives NaN (NumPy: inf, or -0 for no elements)."""
    x = args[0]
    axis = kwargs.get("axis")
    axes = range(x.ndim) if axis is None else ((axis,) if isinstance(axis, int) else axis)
    n = math.prod(x.shape[a] for a in axes)
    if n - kwargs.get("correction", 0) <= 0:
        return np.full_like(expected, np.nan)
    return expected


def statistical_entries():
    return [
        Entry("sum", reduction_args(NUMERIC, dtype_kw=True), "accum"),
        Entry("sum", reduction_args(INTS), "exact"),
        Entry("prod", reduction_args(NUMERIC, dtype_kw=True, vals="small"), "accum"),
        Entry("max", reduction_args(REAL_NUMERIC), "exact-unsigned-zero"),
        Entry("min", reduction_args(REAL_NUMERIC), "exact-unsigned-zero"),
        Entry("mean", reduction_args(FLOATS), "accum"),
        Entry("std", reduction_args(REAL, correction=True), "accum", expect=_variance_expect),
        Entry("var", reduction_args(REAL, correction=True), "accum", expect=_variance_expect),
        Entry("all", reduction_args(ALL), "exact"),
        Entry("any", reduction_args(ALL), "exact"),
        Entry("count_nonzero", reduction_args(ALL), "exact"),
        Entry("argmax", arg_reduction_args(REAL_NUMERIC), "exact"),
        Entry("argmin", arg_reduction_args(REAL_NUMERIC), "exact"),
        Entry("cumulative_sum", cumulative_args(NUMERIC), "accum"),
        Entry("cumulative_prod", cumulative_args(NUMERIC), "accum"),
        Entry("diff", diff_args(), "exact", fn=_diff),
    ]


# ------------------------------------------------------------------------------ searching, sorting, sets

@st.composite
def sort_args(draw):
    d = draw(st.sampled_from(REAL_NUMERIC))
    s = draw(shapes(1, 3))  # 0-d: axis=-1 is out of range (array-api-strict's argsort accepts it)
    x = draw(values(d, s, values="small" if draw(st.booleans()) else "any"))
    kw = _kw(descending=draw(maybe(st.booleans())), stable=draw(maybe(st.just(True))))
    if s:
        ax = draw(maybe(st.integers(-len(s), len(s) - 1)))
        if ax is not ABSENT:
            kw["axis"] = ax
    return (x,), kw


@st.composite
def searchsorted_args(draw):
    d = draw(st.sampled_from(REAL_NUMERIC))
    n = draw(st.sampled_from([0, 1, 5]))
    x1 = np.sort(draw(values(d, (n,), values="small" if draw(st.booleans()) else "any")))
    d2 = draw(st.sampled_from([e for e in same_category(d) if e in REAL_NUMERIC]))
    x2 = draw(values(d2, draw(shapes()), values="small"))
    kw = _kw(side=draw(maybe(st.sampled_from(["left", "right"]))))
    if draw(st.booleans()) and n:
        perm = np.random.default_rng(n).permutation(n)
        x1 = x1[np.argsort(perm)]
        kw["sorter"] = perm.astype(np.int64)
        x1 = np.empty_like(x1)
        x1[perm] = np.sort(draw(values(d, (n,), values="small")))
    if draw(st.integers(0, 4)) == 0:
        x2 = scalar_for(draw, d, "small")
    return (x1, x2), kw


@st.composite
def isin_args(draw):
    (x1, x2), _ = draw(binary(INTS, "small", "small", scalars=False))
    kw = _kw(invert=draw(maybe(st.booleans())))
    if draw(st.integers(0, 4)) == 0:
        x1 = scalar_for(draw, str(x2.dtype), "small")
    return (x1, x2), kw


def _canonical_unique(res):
    """The standard leaves the order of unique values unspecified: reorder a unique_*
    result (NumPy form from to_numpy) by value (nan last, per component for complex), then
    by first index, remapping inverse_indices."""
    if isinstance(res, np.ndarray):
        fields, parts = ("values",), (res,)
    else:
        fields, parts = res[1], list(res[2])
    d = dict(zip(fields, parts))
    v = d["values"]
    if v.dtype.kind in "fc":
        # 0.0 and -0.0 are one value; which of them represents it is unspecified
        v = v + np.zeros((), v.dtype)
        d["values"] = v
    if v.dtype.kind == "c":
        keys = [np.nan_to_num(v.imag, nan=np.inf), np.isnan(v.imag),
                np.nan_to_num(v.real, nan=np.inf), np.isnan(v.real)]
    elif v.dtype.kind == "f":
        keys = [np.nan_to_num(v, nan=np.inf), np.isnan(v)]
    else:
        keys = [v]
    if "indices" in d:
        keys = [d["indices"]] + keys
    order = np.lexsort(keys) if v.size else np.arange(0)
    out = {k: (a[order] if k in ("values", "indices", "counts") else a) for k, a in d.items()}
    if "inverse_indices" in d and v.size:
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        out["inverse_indices"] = rank[d["inverse_indices"]].astype(d["inverse_indices"].dtype)
    if isinstance(res, np.ndarray):
        return out["values"]
    return ("namedtuple", fields, tuple(out[f] for f in fields))


def _check_unique(actual, expected, args, kwargs):
    compare(_canonical_unique(actual), _canonical_unique(expected))


def _isin(ns, x1, x2, **kw):
    if ns is not xp and kw.pop("invert", False):
        # array-api-strict 2.6 ignores invert= (docs/conformance.md): negate its result
        return ns.logical_not(ns.isin(x1, x2, **kw))
    return ns.isin(x1, x2, **kw)


def searching_entries():
    return [
        Entry("sort", sort_args(), "exact"),
        Entry("argsort", sort_args(), "exact"),
        Entry("argsort", _unstable_sort_args(), _check_unstable_argsort, covers=()),
        Entry("searchsorted", searchsorted_args(), "exact"),
        Entry("nonzero", unary(ALL), "exact"),
        Entry("unique_values", unary(ALL, values_="small"), _check_unique),
        Entry("unique_counts", unary(ALL, values_="small"), _check_unique),
        Entry("unique_inverse", unary(ALL, values_="small"), _check_unique),
        Entry("unique_all", unary(ALL, values_="small"), _check_unique),
        Entry("isin", isin_args(), "exact", fn=_isin),
    ]


@st.composite
def _unstable_sort_args(draw):
    (x,), kw = draw(sort_args())
    kw["stable"] = False
    return (x,), kw


def _check_unstable_argsort(actual, expected, args, kwargs):
    """An unstable argsort may order ties either way: the permutation must sort x."""
    x = args[0]
    if x.ndim == 0:
        compare(actual, expected)
        return
    ax = kwargs.get("axis", -1)
    compare_shape = actual.shape == expected.shape and actual.dtype == expected.dtype
    if not compare_shape:
        raise Mismatch(f"shape/dtype {actual.shape} {actual.dtype} != {expected.shape} {expected.dtype}")
    got = np.take_along_axis(x, actual, axis=ax)
    want = np.take_along_axis(x, expected, axis=ax)
    compare(got, want)
    srt = np.sort(actual, axis=ax)
    if not np.array_equal(srt, np.sort(expected, axis=ax)):
        raise Mismatch("argsort result is not a permutation")


# ------------------------------------------------------------------------------ manipulation

@st.composite
def broadcast_arrays_args(draw):
    s = draw(shapes())
    n = draw(st.integers(1, 3))
    xs_ = [draw(arrays(ALL, broadcastable(s))) for _ in range(n)]
    return tuple(xs_), {}


@st.composite
def broadcast_to_args(draw):
    s = draw(shapes())
    small = draw(broadcastable(s).filter(lambda b: len(b) <= len(s)))
    # a broadcastable shape's 1s may become anything; the larger shape stays as it is
    return (draw(arrays(ALL, small)), s), {}


@st.composite
def broadcast_shapes_args(draw):
    s = draw(shapes())
    n = draw(st.integers(0, 3))
    return tuple(draw(broadcastable(s)) for _ in range(n)), {}


@st.composite
def concat_args(draw, stack=False):
    s = draw(shapes(0 if stack else 1, 3))
    n = draw(st.integers(1, 3))
    d = draw(st.sampled_from(ALL))
    if stack:
        ax = draw(maybe(st.integers(-len(s) - 1, len(s))))
        parts = [draw(values(draw(st.sampled_from([d] + same_category(d))), s)) for _ in range(n)]
        return ([parts] if draw(st.booleans()) else [tuple(parts)]), _kw(axis=ax)
    ax = draw(maybe(st.one_of(st.none(), st.integers(-len(s), len(s) - 1))))
    parts = []
    for _ in range(n):
        shp = list(s)
        if ax is not ABSENT and ax is not None:
            shp[ax] = draw(st.integers(0, 3))
        elif ax is None:
            shp = list(draw(shapes(1, 3)))
        parts.append(draw(values(draw(st.sampled_from([d] + same_category(d))), tuple(shp))))
    return ([parts] if draw(st.booleans()) else [tuple(parts)]), _kw(axis=ax)


@st.composite
def expand_dims_args(draw):
    x = draw(arrays(ALL))
    nd = x.ndim
    if draw(st.booleans()):
        ax = draw(st.integers(-nd - 1, nd))
    else:
        k = draw(st.integers(1, 2))
        ax = tuple(draw(st.lists(st.integers(-nd - k, nd + k - 1), min_size=k, max_size=k,
                                 unique_by=lambda a: a % (nd + k))))
    return (x,), {"axis": ax}


@st.composite
def flip_args(draw):
    x = draw(arrays(ALL))
    return (x,), _kw(axis=draw(maybe(axis_arg(x.ndim))))


@st.composite
def moveaxis_args(draw):
    x = draw(arrays(ALL, shapes(1, 3)))
    nd = x.ndim
    if draw(st.booleans()):
        return (x, draw(st.integers(-nd, nd - 1)), draw(st.integers(-nd, nd - 1))), {}
    k = draw(st.integers(0, nd))
    src = draw(st.permutations(range(nd)))[:k]
    dst = draw(st.permutations(range(nd)))[:k]
    return (x, tuple(src), tuple(d - nd if draw(st.booleans()) else d for d in dst)), {}


@st.composite
def permute_dims_args(draw):
    x = draw(arrays(ALL))
    return (x, tuple(draw(st.permutations(range(x.ndim))))), {}


@st.composite
def reshape_args(draw):
    x = draw(arrays(ALL))
    n = x.size
    options = [(n,), (1, n), (n, 1), (-1,), ()] if n == 1 else [(n,), (-1,), (1, n), (n, -1)]
    if n == 6:
        options += [(3, 2), (2, -1, 3), (6, 1, 1)]
    if n == 12:
        options += [(3, 4), (2, 2, 3), (-1, 6)]
    if n == 0:
        options = [(0,), (0, 5), (2, 0), (-1,), (0, -1)]
    shape = draw(st.sampled_from(options))
    return (x, shape), _kw(copy=draw(maybe(st.sampled_from([None, True]))))


@st.composite
def repeat_args(draw):
    x = draw(arrays(ALL))
    ax = draw(maybe(st.integers(-x.ndim, x.ndim - 1) if x.ndim else st.none()))
    if ax is ABSENT or ax is None:
        n = x.size
    else:
        n = x.shape[ax]
    if draw(st.booleans()):
        reps = draw(st.integers(0, 3))
    else:
        reps = np.asarray(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)), dtype=np.int64)
        if x.ndim == 0 and (ax is ABSENT or ax is None) and draw(st.booleans()):
            reps = np.asarray(reps.reshape(-1)[0] if reps.size else 1, dtype=np.int64)
    return (x, reps), _kw(axis=ax)


@st.composite
def roll_args(draw):
    x = draw(arrays(ALL))
    nd = x.ndim
    if nd and draw(st.booleans()):
        k = draw(st.integers(1, nd))
        axes = tuple(draw(st.lists(st.integers(-nd, nd - 1), min_size=k, max_size=k)))
        shift = tuple(draw(st.lists(st.integers(-7, 7), min_size=k, max_size=k)))
        if draw(st.booleans()) and k == 1:
            return (x, shift[0]), {"axis": axes[0]}
        return (x, shift), {"axis": axes}
    return (x, draw(st.integers(-7, 7))), {}


@st.composite
def squeeze_args(draw):
    x = draw(arrays(ALL, st.sampled_from([(1,), (3, 1), (1, 4), (2, 1, 3), (1, 1, 2), (1, 1)])))
    ones = [i for i, n in enumerate(x.shape) if n == 1]
    k = draw(st.integers(1, len(ones)))
    ax = tuple(a - x.ndim if draw(st.booleans()) else a for a in draw(st.permutations(ones))[:k])
    return (x, ax[0] if len(ax) == 1 and draw(st.booleans()) else ax), {}


@st.composite
def tile_args(draw):
    x = draw(arrays(ALL))
    reps = tuple(draw(st.lists(st.integers(0, 3), min_size=0, max_size=4)))
    return (x, reps), {}


@st.composite
def unstack_args(draw):
    x = draw(arrays(ALL, shapes(1, 3)))
    return (x,), _kw(axis=draw(maybe(st.integers(-x.ndim, x.ndim - 1))))


def manipulation_entries():
    return [
        Entry("broadcast_arrays", broadcast_arrays_args(), "exact"),
        Entry("broadcast_to", broadcast_to_args(), "exact"),
        Entry("broadcast_shapes", broadcast_shapes_args(), "exact"),
        Entry("concat", concat_args(), "exact"),
        Entry("stack", concat_args(stack=True), "exact"),
        Entry("expand_dims", expand_dims_args(), "exact"),
        Entry("flip", flip_args(), "exact"),
        Entry("moveaxis", moveaxis_args(), "exact"),
        Entry("permute_dims", permute_dims_args(), "exact"),
        Entry("reshape", reshape_args(), "exact"),
        Entry("repeat", repeat_args(), "exact"),
        Entry("roll", roll_args(), "exact"),
        Entry("squeeze", squeeze_args(), "exact"),
        Entry("tile", tile_args(), "exact"),
        Entry("unstack", unstack_args(), "exact"),
    ]


# ------------------------------------------------------------------------------ indexing functions

@st.composite
def take_args(draw):
    x = draw(arrays(ALL, shapes(1, 3, nonempty=True)))
    ax = draw(st.integers(-x.ndim, x.ndim - 1)) if x.ndim > 1 else draw(maybe(st.integers(-1, 0)))
    n = x.shape[ax] if ax is not ABSENT else x.size
    m = draw(st.integers(0, 4))
    idx = np.asarray(draw(st.lists(st.integers(-n, n - 1), min_size=m, max_size=m)), dtype=np.int64)
    itype = draw(st.sampled_from(["int64", "int32", "int8", "uint8"]))
    if itype == "uint8":
        idx = idx % n
    idx = idx.astype(itype)
    return (x, idx), _kw(axis=ax)


@st.composite
def take_along_axis_args(draw):
    x = draw(arrays(ALL, shapes(1, 3, nonempty=True)))
    ax = draw(maybe(st.integers(-x.ndim, x.ndim - 1)))
    a = -1 if ax is ABSENT else ax
    shp = list(x.shape)
    n = shp[a]
    shp[a] = draw(st.integers(0, 4))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    idx = rng.integers(-n, n, size=tuple(shp)).astype(np.int64)
    return (x, idx), _kw(axis=ax)


# ------------------------------------------------------------------------------ linear algebra (main namespace)

@st.composite
def matmul_args(draw, vec=False):
    d1 = draw(st.sampled_from(NUMERIC))
    d2 = draw(st.sampled_from([d for d in same_category(d1)]))
    m, n, k = draw(st.sampled_from([(2, 3, 4), (1, 3, 2), (3, 0, 2), (2, 2, 2)]))
    form = draw(st.integers(0, 5))
    batch = draw(st.sampled_from([(), (2,), (1,)]))
    s1, s2 = [(n,), (m, n) if form % 2 else (n,), batch + (m, n), (n,), batch + (m, n), (m, n)][form], \
        [(n,), (n,), (n,), batch + (n, k), (2,) + (n, k) if batch else (n, k), batch + (n, k)][form]
    vals = "small" if kind(d1) in "iu" else "any"
    return (draw(values(d1, s1, values=vals, special=False)),
            draw(values(d2, s2, values=vals, special=False))), {}


@st.composite
def vecdot_args(draw):
    d1 = draw(st.sampled_from(NUMERIC))
    d2 = draw(st.sampled_from(same_category(d1)))
    s = draw(shapes(1, 3))
    ax = draw(maybe(st.integers(-len(s), -1)))
    s2 = draw(broadcastable(s).filter(lambda b: len(b) >= (-ax if ax is not ABSENT else 1)
                                      and (b[ax if ax is not ABSENT else -1] ==
                                           s[ax if ax is not ABSENT else -1])))
    vals = "small" if kind(d1) in "iu" else "any"
    return (draw(values(d1, s, values=vals, special=False)),
            draw(values(d2, s2, values=vals, special=False))), _kw(axis=ax)


@st.composite
def tensordot_args(draw):
    d1 = draw(st.sampled_from(NUMERIC))
    d2 = draw(st.sampled_from(same_category(d1)))
    vals = "small" if kind(d1) in "iu" else "any"
    form = draw(st.integers(0, 3))
    if form == 0:
        s1, s2, axes = (2, 3), (3, 4), 1
    elif form == 1:
        s1, s2, axes = (2, 3, 2), (3, 2), 2
    elif form == 2:
        s1, s2, axes = (2, 3), (4,), 0
    else:
        s1, s2, axes = (2, 3, 4), (4, 2, 3), ((1, 2), (2, 0))
    kw = {"axes": axes} if (axes != 2 or draw(st.booleans())) else {}
    return (draw(values(d1, s1, values=vals, special=False)),
            draw(values(d2, s2, values=vals, special=False))), kw


def linear_algebra_entries():
    return [
        Entry("matmul", matmul_args(), "accum"),
        Entry("matrix_transpose", unary(ALL, shp=shapes(2, 3)), "exact"),
        Entry("tensordot", tensordot_args(), "accum"),
        Entry("vecdot", vecdot_args(), "accum"),
        Entry("take", take_args(), "exact"),
        Entry("take_along_axis", take_along_axis_args(), "exact"),
    ]


# ------------------------------------------------------------------------------ creation

@st.composite
def arange_args(draw):
    if draw(st.booleans()):
        start = draw(st.integers(-5, 5))
        stop = draw(maybe(st.integers(-5, 8)))
        step = draw(maybe(st.sampled_from([1, 2, -1, 3])))
        d = draw(maybe(st.sampled_from(["int8", "int32", "int64", "float32", "float64"]).map(Dt)))
    else:
        start = draw(st.sampled_from([0.0, -1.5, 2.25]))
        stop = draw(maybe(st.sampled_from([3.0, 5.5, -2.0])))
        step = draw(maybe(st.sampled_from([0.5, 1.0, -0.75])))
        d = draw(maybe(st.sampled_from(REAL).map(Dt)))
    args = (start,) if stop is ABSENT else (start, stop)
    kw = _kw(dtype=d, device=draw(maybe(st.just(DEVICE))))
    if step is not ABSENT:
        if stop is ABSENT:
            args = (start, None)
        kw["step"] = step
    return args, kw


@st.composite
def shape_creation_args(draw, fill=False):
    shape = draw(st.sampled_from([(), (0,), (3,), (2, 3), 4, 0, (1, 0, 2)]))
    kw = _kw(dtype=draw(maybe(st.sampled_from(ALL).map(Dt))), device=draw(maybe(st.just(DEVICE))))
    if fill:
        d = kw.get("dtype")
        k = kind(d.name) if d is not None else draw(st.sampled_from("bifc"))
        v = scalar_for(draw, {"b": "bool", "i": "int64", "u": "uint8", "f": "float64",
                              "c": "complex128"}[k])
        return (shape, v), kw
    return (shape,), kw


@st.composite
def like_args(draw, fill=False):
    x = draw(arrays(ALL))
    kw = _kw(dtype=draw(maybe(st.sampled_from(ALL).map(Dt))), device=draw(maybe(st.just(DEVICE))))
    if fill:
        d = kw["dtype"].name if "dtype" in kw else str(x.dtype)
        return (x, scalar_for(draw, d)), kw
    return (x,), kw


@st.composite
def eye_args(draw):
    n = draw(st.integers(0, 4))
    m = draw(maybe(st.one_of(st.none(), st.integers(0, 4))))
    args = (n,) if m is ABSENT else (n, m)
    return args, _kw(k=draw(maybe(st.integers(-4, 4))), dtype=draw(maybe(st.sampled_from(ALL).map(Dt))),
                     device=draw(maybe(st.just(DEVICE))))


@st.composite
def linspace_args(draw):
    if draw(st.integers(0, 3)) == 0:
        start = complex(draw(st.sampled_from([0.0, -1.0])), draw(st.sampled_from([0.0, 2.0])))
        stop = complex(draw(st.sampled_from([1.0, 3.0])), draw(st.sampled_from([0.5, -1.0])))
        d = draw(maybe(st.sampled_from(COMPLEX).map(Dt)))
    else:
        start = draw(st.sampled_from([0.0, -1.0, 2.5, 0, 3]))
        stop = draw(st.sampled_from([1.0, 10.0, -4.5, 7]))
        d = draw(maybe(st.sampled_from(REAL).map(Dt)))
    num = draw(st.sampled_from([0, 1, 2, 5, 7]))
    return (start, stop, num), _kw(dtype=d, endpoint=draw(maybe(st.booleans())),
                                   device=draw(maybe(st.just(DEVICE))))


@st.composite
def meshgrid_args(draw):
    n = draw(st.integers(0, 3))
    d = draw(st.sampled_from(ALL))
    arrs = tuple(draw(values(d, draw(st.sampled_from([(0,), (1,), (2,), (3,)])))) for _ in range(n))
    return arrs, _kw(indexing=draw(maybe(st.sampled_from(["xy", "ij"]))))


@st.composite
def tri_args(draw):
    x = draw(arrays(ALL, shapes(2, 3)))
    return (x,), _kw(k=draw(maybe(st.integers(-3, 3))))


@st.composite
def asarray_args(draw):
    c = draw(st.integers(0, 4))
    if c == 0:
        obj = draw(arrays(ALL))
    elif c == 1:
        obj = draw(st.sampled_from([True, 3, -2.5, 1 + 2j, 0.0, -0.0]))
    elif c == 2:
        obj = draw(st.sampled_from([[1, 2, 3], [[1.5, 2.0], [3.0, -0.0]], [True, False],
                                    [[1, 2], [3, 4]], [1j, 2.0]]))
    elif c == 3:
        obj = draw(st.sampled_from([[], [[]], [[1.0], [2.0]]]))
    else:
        obj = draw(arrays(ALL)).tolist()
        if isinstance(obj, list) and not obj:
            obj = [0]
    dt = draw(maybe(st.sampled_from(ALL).map(Dt)))
    if dt is not ABSENT:
        # only casts the standard defines from a Python value or array: same kind or wider
        src = _kind_of(obj)
        if src is not None and not _castable_kind(src, kind(dt.name)):
            dt = ABSENT
    return (obj,), _kw(dtype=dt, device=draw(maybe(st.just(DEVICE))),
                       copy=draw(maybe(st.sampled_from([None, True]))))


def _kind_of(obj):
    if isinstance(obj, np.ndarray):
        return obj.dtype.kind if obj.dtype != bool else "b"
    flat = list(_flatten(obj))
    if not flat:
        return None
    if any(isinstance(v, complex) for v in flat):
        return "c"
    if any(isinstance(v, float) for v in flat):
        return "f"
    if all(isinstance(v, bool) for v in flat):
        return "b"
    return "i"


def _flatten(obj):
    if isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _flatten(o)
    else:
        yield obj


def _castable_kind(src, dst):
    order = {"b": 0, "i": 1, "u": 1, "f": 2, "c": 3}
    return src == dst or (src in "iu" and dst in "iu") or order[src] < order[dst] and src != "b"


@st.composite
def from_dlpack_args(draw):
    return (draw(arrays(ALL)),), _kw(copy=draw(maybe(st.sampled_from([None, True]))))


def _from_dlpack(ns, x, **kw):
    # the source is an array of the same namespace (its __dlpack__ is what is exercised)
    return ns.from_dlpack(x, **kw)


def _empty_check(actual, expected, args, kwargs):
    compare(actual, expected, mode="shape")


def check_linspace(actual, expected, args, kwargs):
    """linspace: the standard does not fix the formula (start + i * step, or a blend of
    start and stop), so values near zero differ by a rounding of the endpoints' magnitude:
    atol = 4 eps max(|start|, |stop|)."""
    compare(actual, expected, mode="shape")
    if not expected.size:
        return
    eps = np.finfo(expected.dtype).eps
    atol = 4 * eps * max(abs(complex(args[0])), abs(complex(args[1])))
    ok = np.abs(actual.astype(np.complex128) - expected) <= atol + RTOL[str(expected.dtype)] * np.abs(expected)
    if not ok.all():
        raise Mismatch(f"linspace: got {actual[~ok][:6]!r}, expected {expected[~ok][:6]!r}")


def creation_entries():
    return [
        Entry("arange", arange_args(), "close"),
        Entry("asarray", asarray_args(), "exact"),
        Entry("empty", shape_creation_args(), _empty_check),
        Entry("empty_like", like_args(), _empty_check),
        Entry("eye", eye_args(), "exact"),
        Entry("from_dlpack", from_dlpack_args(), "exact", fn=_from_dlpack),
        Entry("full", shape_creation_args(fill=True), "exact"),
        Entry("full_like", like_args(fill=True), "exact"),
        Entry("linspace", linspace_args(), check_linspace),
        Entry("meshgrid", meshgrid_args(), "exact"),
        Entry("ones", shape_creation_args(), "exact"),
        Entry("ones_like", like_args(), "exact"),
        Entry("zeros", shape_creation_args(), "exact"),
        Entry("zeros_like", like_args(), "exact"),
        Entry("tril", tri_args(), "exact"),
        Entry("triu", tri_args(), "exact"),
    ]


# ------------------------------------------------------------------------------ data type functions

@st.composite
def astype_args(draw):
    x = draw(arrays(ALL, values="small" if draw(st.booleans()) else "any"))
    target = draw(st.sampled_from(ALL))
    src = "b" if x.dtype == bool else x.dtype.kind
    if src == "c" and kind(target) != "c":
        target = draw(st.sampled_from(COMPLEX + BOOL))
    if src == "f" and kind(target) in "iu":
        # float -> int of non-finite or out-of-range values is undefined: use small finite
        # ones (non-negative for unsigned targets)
        x = draw(values(str(x.dtype), x.shape, values="nonneg" if kind(target) == "u" else "small",
                        special=False))
    return (x, Dt(target)), _kw(copy=draw(maybe(st.booleans())), device=draw(maybe(st.just(DEVICE))))


@st.composite
def can_cast_args(draw):
    # within the standard's promotion lattice; tlaloc's extensions across kinds (bool to
    # numeric, integer to floating) are listed in docs/conformance.md
    a = draw(st.sampled_from(ALL))
    b = draw(st.sampled_from([d for d in ALL if kind(d) == kind(a) or
                              {kind(a), kind(d)} <= {"i", "u"} or {kind(a), kind(d)} <= {"f", "c"}]))
    src = Dt(a) if draw(st.booleans()) else draw(values(a, (2,)))
    return (src, Dt(b)), {}


@st.composite
def info_args(draw, dtypes):
    d = draw(st.sampled_from(dtypes))
    return ((Dt(d) if draw(st.booleans()) else draw(values(d, (1,)))),), {}


def _finfo(ns, t):
    f = ns.finfo(t)
    return (f.bits, f.eps, f.max, f.min, f.smallest_normal, f.dtype)


def _iinfo(ns, t):
    f = ns.iinfo(t)
    return (f.bits, f.max, f.min, f.dtype)


KINDS = ["bool", "signed integer", "unsigned integer", "integral", "real floating",
         "complex floating", "numeric"]


@st.composite
def isdtype_args(draw):
    d = Dt(draw(st.sampled_from(ALL)))
    k = draw(st.one_of(st.sampled_from(KINDS), st.sampled_from(ALL).map(Dt),
                       st.lists(st.one_of(st.sampled_from(KINDS), st.sampled_from(ALL).map(Dt)),
                                min_size=1, max_size=3).map(tuple)))
    return (d, k), {}


@st.composite
def result_type_args(draw):
    d0 = draw(st.sampled_from(ALL))
    n = draw(st.integers(1, 3))
    items = []
    for _ in range(n):
        d = draw(st.sampled_from(same_category(d0)))
        c = draw(st.integers(0, 3))
        items.append(Dt(d) if c < 2 else draw(values(d, (1,))))
    if draw(st.booleans()):
        items.append(scalar_for(draw, d0))
    return tuple(items), {}


def data_type_entries():
    return [
        Entry("astype", astype_args(), "exact"),
        Entry("can_cast", can_cast_args(), "exact"),
        Entry("finfo", info_args(FLOATS), "exact", fn=_finfo),
        Entry("iinfo", info_args(INTS), "exact", fn=_iinfo),
        Entry("isdtype", isdtype_args(), "exact"),
        Entry("result_type", result_type_args(), "exact"),
    ]


# ------------------------------------------------------------------------------ inspection, constants

def _info(ns):
    info = ns.__array_namespace_info__()
    caps = info.capabilities()
    out = {"capability keys": tuple(sorted(k for k in caps if k != "max dimensions")),
           "default dtypes": tuple(sorted((k, v) for k, v in
                                          ((k, str(v).rsplit(".", 1)[-1]) for k, v in
                                           info.default_dtypes().items()))),
           "default dtypes (device)": tuple(sorted(
               (k, str(v).rsplit(".", 1)[-1]) for k, v in
               info.default_dtypes(device=info.default_device()).items())),
           "has devices": len(info.devices()) > 0}
    for k in [None] + KINDS + [("real floating", "complex floating")]:
        out[f"dtypes kind={k}"] = tuple(sorted(info.dtypes(kind=k)))
    return (tuple(sorted(out.items())),)


def _constants(ns):
    return (ns.e, ns.pi, ns.inf, ns.nan, ns.newaxis)


def info_entries():
    return [
        Entry("__array_namespace_info__", st.just(((), {})), "exact", fn=_info,
              covers=("__array_namespace_info__.capabilities", "__array_namespace_info__.default_device",
                      "__array_namespace_info__.default_dtypes", "__array_namespace_info__.devices",
                      "__array_namespace_info__.dtypes")),
        Entry("constants", st.just(((), {})), "exact", fn=_constants,
              covers=("e", "pi", "inf", "nan", "newaxis")),
    ]


# ------------------------------------------------------------------------------ the Array object

_BINOPS = {
    "__add__": (operator.add, NUMERIC, "exact", "any", "any"),
    "__sub__": (operator.sub, NUMERIC, "exact", "any", "any"),
    "__mul__": (operator.mul, NUMERIC, "exact-real", "any", "any"),
    "__truediv__": (operator.truediv, FLOATS, check_complex_quotient, "any", "any"),
    "__floordiv__": (operator.floordiv, INTS, "exact", "small", "nonzero"),
    "__mod__": (operator.mod, INTS, "exact", "small", "nonzero"),
    "__pow__": (operator.pow, FLOATS, check_pow, "any", "any"),
    "__and__": (operator.and_, INT_OR_BOOL, "exact", "any", "any"),
    "__or__": (operator.or_, INT_OR_BOOL, "exact", "any", "any"),
    "__xor__": (operator.xor, INT_OR_BOOL, "exact", "any", "any"),
    "__lshift__": (operator.lshift, INTS, "exact", "any", "shift"),
    "__rshift__": (operator.rshift, INTS, "exact", "any", "shift"),
    "__eq__": (operator.eq, ALL, "exact", "any", "any"),
    "__ne__": (operator.ne, ALL, "exact", "any", "any"),
    "__lt__": (operator.lt, REAL_NUMERIC, "exact", "any", "any"),
    "__le__": (operator.le, REAL_NUMERIC, "exact", "any", "any"),
    "__gt__": (operator.gt, REAL_NUMERIC, "exact", "any", "any"),
    "__ge__": (operator.ge, REAL_NUMERIC, "exact", "any", "any"),
}
_INPLACE = {"__add__": operator.iadd, "__sub__": operator.isub, "__mul__": operator.imul,
            "__truediv__": operator.itruediv, "__floordiv__": operator.ifloordiv,
            "__mod__": operator.imod, "__pow__": operator.ipow, "__and__": operator.iand,
            "__or__": operator.ior, "__xor__": operator.ixor, "__lshift__": operator.ilshift,
            "__rshift__": operator.irshift}


def _binop_fn(op):
    def fn(ns, a, b):
        return op(a, b)
    return fn


def _inplace_fn(op):
    def fn(ns, a, b):
        if not hasattr(a, "__array_namespace__"):
            a, b = b, a
        before = a
        out = op(a, b)
        if ns is xp and out is not before:
            raise Mismatch("in-place operator returned a new object")
        return out
    return fn


@st.composite
def inplace_args(draw, dtypes, v1, v2):
    (a, b), _ = draw(binary(dtypes, v1, v2))
    if not isinstance(a, np.ndarray):
        a, b = b, a  # the left operand of x op= y is an array
    return (a, b), {}


@st.composite
def unary_op_args(draw, dtypes):
    return (draw(arrays(dtypes)),), {}


def _to_scalar(conv):
    def fn(ns, x):
        return conv(x)
    return fn


@st.composite
def scalar_conv_args(draw, dtypes, vals="any"):
    d = draw(st.sampled_from(dtypes))
    return (draw(values(d, draw(st.sampled_from([(), (1,), (1, 1)])) if False else (), values=vals)),), {}


def _attrs(ns, x):
    out = [tuple(x.shape), x.ndim, x.size, x.dtype, x.mT if x.ndim >= 2 else None]
    if x.ndim == 2:
        out.append(x.T)
    out.append(x.__array_namespace__() is ns)
    out.append(x.to_device(x.device))
    return tuple(out)


def _dlpack(ns, x):
    import numpy as _np
    dev = x.__dlpack_device__()
    host = _np.from_dlpack(x)
    return (tuple(int(v) for v in dev), ns.asarray(host.copy()) if host.size else ns.asarray(host))


# -- indexing keys

def _slice(draw, n):
    # out-of-bounds starts and stops are not specified by the standard
    start = draw(st.one_of(st.none(), st.integers(-n, n)))
    stop = draw(st.one_of(st.none(), st.integers(-n, n)))
    step = draw(st.one_of(st.none(), st.sampled_from([1, 2, -1, -2, 3])))
    return slice(start, stop, step)


@st.composite
def basic_key(draw, shape, *, allow_newaxis=True, allow_int=True):
    """A basic index the standard defines: one item per axis (ints, slices), where an
    Ellipsis may stand for a run of axes and None may add axes."""
    nd = len(shape)
    per_axis = []
    for n in shape:
        c = draw(st.integers(0, 2))
        if c == 0 and n > 0 and allow_int:
            per_axis.append(draw(st.integers(-n, n - 1)))
        elif c == 1:
            per_axis.append(_slice(draw, n))
        else:
            per_axis.append(slice(None))
    if draw(st.booleans()):
        i = draw(st.integers(0, nd))
        j = draw(st.integers(i, nd))
        per_axis[i:j] = [Ellipsis]
    items = []
    for it in per_axis:
        if allow_newaxis and draw(st.integers(0, 5)) == 0:
            items.append(None)
        items.append(it)
    if len(items) == 1 and draw(st.booleans()):
        return items[0]
    return tuple(items)


@st.composite
def getitem_args(draw):
    x = draw(arrays(ALL))
    c = draw(st.integers(0, 3))
    if c <= 1:
        key = draw(basic_key(x.shape))
    elif c == 2:
        # integer arrays (and ints) over leading axes
        if x.ndim == 0 or 0 in x.shape:
            key = draw(basic_key(x.shape))
        else:
            k = x.ndim  # the standard: an index for every axis
            m = draw(st.sampled_from([(), (2,), (1, 3)]))
            rng = np.random.default_rng(draw(st.integers(0, 2**16)))
            key = tuple(rng.integers(-n, n, size=m).astype(np.int64) if draw(st.booleans()) or i == 0
                        else int(rng.integers(-n, n)) for i, n in enumerate(x.shape[:k]))
            if len(key) == 1 and draw(st.booleans()):
                key = key[0]
    else:
        # a boolean mask over the leading axes (or the whole array)
        k = draw(st.integers(0, x.ndim))
        key = draw(values("bool", x.shape[:k]))  # the standard: a mask is the sole index
    return (x, key), {}


def _getitem(ns, x, key):
    return x[key]


@st.composite
def setitem_args(draw):
    x = draw(arrays(ALL))
    c = draw(st.integers(0, 2))
    if c < 2:
        key = draw(basic_key(x.shape, allow_newaxis=False))
    else:
        k = draw(st.integers(0, x.ndim))
        key = draw(values("bool", x.shape[:k]))
    # the value: a scalar or an array of the same dtype broadcasting to x[key]
    sel = x[key]
    if draw(st.booleans()):
        v = scalar_for(draw, str(x.dtype))
    else:
        v = draw(values(str(x.dtype), draw(broadcastable(sel.shape).filter(lambda b: len(b) <= sel.ndim
                                                                             and all(p in (1, q) for p, q in zip(b[::-1], sel.shape[::-1]))))))
    return (x, key, v), {}


def _setitem(ns, x, key, v):
    x[key] = v
    return x


def array_entries():
    E = []
    for dunder, (op, dtypes, mode, v1, v2) in _BINOPS.items():
        E.append(Entry(f"Array.{dunder}", binary(dtypes, v1, v2), mode, fn=_binop_fn(op),
                       covers=(f"Array.__r{dunder[2:]}",) if dunder not in
                       ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__") else ()))
        if dunder in _INPLACE:
            E.append(Entry(f"Array.__i{dunder[2:]}", inplace_args(dtypes, v1, v2), mode,
                           fn=_inplace_fn(_INPLACE[dunder])))
    E += [
        Entry("Array.__floordiv__", binary(REAL), "exact", fn=_binop_fn(operator.floordiv),
              expect=floor_divide_expect),
        Entry("Array.__ifloordiv__", inplace_args(REAL, "any", "any"), "exact",
              fn=_inplace_fn(operator.ifloordiv), expect=floor_divide_expect),
        Entry("Array.__mod__", binary(REAL), "exact", fn=_binop_fn(operator.mod)),
        Entry("Array.__pow__", binary(INTS, "any", "exponent"), "exact", fn=_binop_fn(operator.pow)),
        Entry("Array.__matmul__", matmul_args(), "accum", fn=_binop_fn(operator.matmul),
              covers=("Array.__rmatmul__",)),
        Entry("Array.__imatmul__", _imatmul_args(), "accum", fn=_inplace_fn(operator.imatmul)),
        Entry("Array.__abs__", unary_op_args(NUMERIC), "exact-real", fn=lambda ns, x: abs(x)),
        Entry("Array.__neg__", unary_op_args(NUMERIC), "exact", fn=lambda ns, x: -x),
        Entry("Array.__pos__", unary_op_args(NUMERIC), "exact", fn=lambda ns, x: +x),
        Entry("Array.__invert__", unary_op_args(INT_OR_BOOL), "exact", fn=lambda ns, x: ~x),
        Entry("Array.__bool__", scalar_conv_args(ALL), "exact", fn=_to_scalar(bool)),
        Entry("Array.__int__", scalar_conv_args(BOOL + INTS + REAL, "small"), "exact", fn=_to_scalar(int)),
        Entry("Array.__float__", scalar_conv_args(BOOL + INTS + REAL), "exact", fn=_to_scalar(float)),
        Entry("Array.__complex__", scalar_conv_args(ALL), "exact", fn=_to_scalar(complex)),
        Entry("Array.__index__", scalar_conv_args(BOOL + INTS), "exact", fn=_to_scalar(operator.index)),
        Entry("Array.__getitem__", getitem_args(), "exact", fn=_getitem),
        Entry("Array.__setitem__", setitem_args(), "exact", fn=_setitem),
        Entry("Array.attributes", unary_op_args(ALL), "exact", fn=_attrs,
              covers=("Array.shape", "Array.ndim", "Array.size", "Array.dtype", "Array.mT",
                      "Array.T", "Array.device", "Array.__array_namespace__", "Array.to_device")),
        Entry("Array.__dlpack__", unary_op_args(ALL), "exact", fn=_dlpack,
              covers=("Array.__dlpack_device__",)),
    ]
    return E


@st.composite
def _imatmul_args(draw):
    d1 = draw(st.sampled_from(NUMERIC))
    d2 = draw(st.sampled_from([d for d in same_category(d1) if promote(d1, d) == d1]))
    vals = "small" if kind(d1) in "iu" else "any"
    s1 = draw(st.sampled_from([(2, 3), (1, 3), (2, 2, 3)]))
    return (draw(values(d1, s1, values=vals, special=False)),
            draw(values(d2, (3, 3), values=vals, special=False))), {}


# ------------------------------------------------------------------------------ assembly

def all_entries():
    from ._table_ext import fft_entries, linalg_entries
    return (elementwise_entries() + statistical_entries() + searching_entries()
            + manipulation_entries() + linear_algebra_entries() + creation_entries()
            + data_type_entries() + info_entries() + array_entries() + linalg_entries()
            + fft_entries())
