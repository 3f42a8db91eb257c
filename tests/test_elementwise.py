"""Every element-wise function and operator of the namespace, on both tiers (XLA on PJRT CPU,
forced to compile, and the NumPy reference interpreter), against NumPy on the same inputs:
every dtype each function accepts, special values (nan, +-inf, -0.0, integer extremes), 0-d,
empty and broadcast shapes, and Python scalars on either side.

A compile costs ~50-100 ms, so each test records many functions over arrays of special
values and evaluates them together: one program per test and dtype. Failures are collected
per function and reported together.
"""
import math

import array_api_strict as strict
import ml_dtypes
import numpy as np
import pytest

import tlaloc as xp
from helpers import assert_matches, assert_zero_signs, expected_promotion, special_values

BF16 = np.dtype(ml_dtypes.bfloat16)
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]
COMPLEX = ["complex64", "complex128"]
DTYPES = ["bool"] + INTS + FLOATS + COMPLEX


def np_dtype(name):
    return BF16 if name == "bfloat16" else np.dtype(name)


def kind(name):
    if name == "bool":
        return "b"
    if name in FLOATS:
        return "f"
    return np.dtype(name).kind


def values(name):
    """Special values of dtype `name`, as a 1-d NumPy array."""
    if name in ("float16", "bfloat16"):
        return np.array([0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, np.inf, -np.inf, np.nan, 7.25,
                         0.75, -100.0], dtype=np_dtype(name))
    v = special_values(name)
    if name in ("float32", "float64"):
        v = np.concatenate([v, np.array([-0.5, 2.5, -3.5, 1e10, -1e10, 0.999, 100.0], dtype=name)])
    return v


def finite(v):
    """Mask of elements whose parts are all finite (complex) or that are finite (real)."""
    if v.dtype.kind == "c":
        return np.isfinite(v.real) & np.isfinite(v.imag)
    if v.dtype.kind in "biu":
        return np.ones(v.shape, bool)
    return np.isfinite(v.astype(np.float64))


def check(actual, expected, mask=None, exact=False, zero_sign=True):
    """assert_matches (dtype, shape, values with per-dtype tolerance) on the masked elements,
    and the sign of real zeros."""
    a = np.asarray(actual)
    e = np.asarray(expected)
    assert a.dtype == e.dtype, f"dtype {a.dtype} != {e.dtype}"
    assert a.shape == e.shape, f"shape {a.shape} != {e.shape}"
    if mask is not None:
        a, e = a[mask], e[mask]
    assert_matches(a, e, exact=exact)
    if zero_sign:
        assert_zero_signs(a, e)


# The standard leaves the sign of these zeros open: sign gives "0"; maximum and minimum
# (and so clip) may pick either of -0 and +0.
UNSIGNED_ZERO = ("sign", "maximum", "minimum", "clip")


def run_checks(cases):
    """`cases`: (label, actual tlaloc array, expected NumPy array, mask). Evaluates every
    actual array in one program, then compares each; reports all failures together."""
    xp.eval(*[c[1] for c in cases])
    failures = []
    for label, actual, expected, mask in cases:
        try:
            check(actual, expected, mask, zero_sign=not label.startswith(UNSIGNED_ZERO))
        except AssertionError as exc:
            failures.append(f"{label}: {str(exc).strip()[:600]}")
    assert not failures, "\n".join(failures)


# ----------------------------------------------------------------------------- references

def _on_float(f):
    """tlaloc computes these in the default float dtype (float64) for bool and integer input."""
    def ref(v):
        return f(v.astype(np.float64) if v.dtype.kind in "biu" else v)
    return ref


def _round_ref(v):
    if v.dtype.kind in "biu":
        return v.copy()
    return np.round(v) if v.dtype.kind == "c" else np.rint(v)  # half to even


def _log1p_ref(v):
    """NumPy's complex log1p is log(1 + z), which loses a small z's digits (log1p(1e-200+0j)
    gives 0); use mpmath for finite complex values."""
    out = np.array(np.log1p(v))   # an array even for 0-d input (flat views must write into it)
    if v.dtype.kind == "c":
        import mpmath
        with mpmath.workprec(120):
            flat = out.reshape(-1)
            for i, z in enumerate(v.reshape(-1)):
                if np.isfinite(z.real) and np.isfinite(z.imag) and z != -1:
                    # mpmath has no -0: evaluate above the cut and conjugate for a negative imag
                    w = complex(mpmath.log1p(mpmath.mpc(float(z.real), abs(float(z.imag)))))
                    flat[i] = w.conjugate() if np.signbit(z.imag) else w
    return out


def _integer_identity(f):
    return lambda v: v.copy() if v.dtype.kind in "biu" else f(v)


# name: (dtype kinds tlaloc accepts, NumPy reference)
UNARY = {
    "abs": ("uifc", np.abs),
    "acos": ("buifc", _on_float(np.arccos)),
    "acosh": ("buifc", _on_float(np.arccosh)),
    "asin": ("buifc", _on_float(np.arcsin)),
    "asinh": ("buifc", _on_float(np.arcsinh)),
    "atan": ("buifc", _on_float(np.arctan)),
    "atanh": ("buifc", _on_float(np.arctanh)),
    "bitwise_invert": ("biu", np.invert),
    "ceil": ("buif", _integer_identity(np.ceil)),
    "conj": ("buifc", lambda v: np.conj(v) if v.dtype.kind == "c" else v.copy()),
    "cos": ("buifc", _on_float(np.cos)),
    "cosh": ("buifc", _on_float(np.cosh)),
    "exp": ("buifc", _on_float(np.exp)),
    "expm1": ("buifc", _on_float(np.expm1)),
    "floor": ("buif", _integer_identity(np.floor)),
    "imag": ("buifc", lambda v: np.imag(v).copy() if v.dtype.kind == "c" else np.zeros_like(v)),
    "isfinite": ("buifc", np.isfinite),
    "isinf": ("buifc", np.isinf),
    "isnan": ("buifc", np.isnan),
    "log": ("buifc", _on_float(np.log)),
    "log1p": ("buifc", _on_float(_log1p_ref)),
    "log2": ("buifc", _on_float(np.log2)),
    "log10": ("buifc", _on_float(np.log10)),
    "logical_not": ("buifc", np.logical_not),
    "negative": ("uifc", np.negative),
    "positive": ("uifc", lambda v: v.copy()),
    "real": ("buifc", lambda v: np.real(v).copy()),
    "reciprocal": ("buifc", _on_float(lambda v: np.divide(np.ones_like(v), v))),
    "round": ("buifc", _round_ref),
    "sign": ("uifc", np.sign),
    "signbit": ("f", np.signbit),
    "sin": ("buifc", _on_float(np.sin)),
    "sinh": ("buifc", _on_float(np.sinh)),
    "sqrt": ("buifc", _on_float(np.sqrt)),
    "square": ("buifc", lambda v: v & v if v.dtype.kind == "b" else v * v),
    "tan": ("buifc", _on_float(np.tan)),
    "tanh": ("buifc", _on_float(np.tanh)),
    "trunc": ("buif", _integer_identity(np.trunc)),
}

# Complex functions whose results at infinite or NaN parts are compared below only for
# finite inputs: the standard leaves sign/reciprocal/square there to complex division and
# multiplication rules (implementation-defined), and XLA does not implement C99's special
# cases for the transcendental functions (see test_complex_nonfinite_special_cases).
COMPLEX_TRANSCENDENTAL = ["acos", "acosh", "asin", "asinh", "atan", "atanh", "cos", "cosh", "exp",
                          "expm1", "log", "log1p", "log2", "log10", "sin", "sinh", "sqrt", "tan",
                          "tanh"]
COMPLEX_FINITE_ONLY = set(COMPLEX_TRANSCENDENTAL) | {"reciprocal", "sign", "square"}


def test_every_elementwise_function_is_covered():
    """The tables below name every element-wise function of the namespace."""
    import tlaloc._api.elementwise as module
    public = {name for name, fn in vars(module).items()
              if callable(fn) and not name.startswith("_") and getattr(fn, "__module__", "") == module.__name__}
    assert public == set(UNARY) | set(BINARY) | {"clip"}, public ^ (set(UNARY) | set(BINARY) | {"clip"})
    for name in public:
        assert getattr(xp, name) is getattr(module, name)


@pytest.mark.parametrize("dtype", DTYPES)
def test_unary_functions(tier, dtype):
    """Every unary function on every dtype (TypeError where tlaloc does not accept it). The
    complex values include the branch cuts' points with either sign of zero (-1.5 +- 0j,
    2 +- 0j, +-0 + 2j, +-0 - 1.5j): the sign picks the side of the cut."""
    v = values(dtype)
    x = xp.asarray(v, device=tier)
    cases = []
    for name, (kinds, ref) in UNARY.items():
        fn = getattr(xp, name)
        if kind(dtype) not in kinds:
            with pytest.raises(TypeError):
                fn(x)
            continue
        mask = None
        if dtype in COMPLEX and name in COMPLEX_FINITE_ONLY:
            mask = finite(v)
        if name == "reciprocal" and dtype in COMPLEX:
            mask = finite(v) & (v != 0)  # 1 / (0 + 0j): inf + nan j (XLA), nan + nan j (NumPy)
        cases.append((name, fn(x), ref(v), mask))
    run_checks(cases)
    if dtype in COMPLEX:
        _check_complex_nonfinite(tier, v, {c[0]: c[1] for c in cases})


@pytest.mark.parametrize("dtype", ["float64", "int32", "complex64"])
def test_unary_functions_0d(tier, dtype):
    cases = []
    for value in values(dtype)[:6]:
        v = np.asarray(value)
        x = xp.asarray(v, device=tier)
        for name, (kinds, ref) in UNARY.items():
            if kind(dtype) in kinds and not (dtype in COMPLEX and name in COMPLEX_FINITE_ONLY):
                out = getattr(xp, name)(x)
                assert out.shape == ()
                cases.append((f"{name}({value!r})", out, ref(v), None))
    run_checks(cases)


def _strict_dtype(dtype):
    return getattr(strict, dtype)


def _strict_name(d):
    return str(d).rsplit(".", 1)[-1]  # "array_api_strict.float32" -> "float32"


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_result_dtypes_match_array_api_strict(name):
    """Where array_api_strict accepts a dtype, tlaloc gives the same result dtype (no
    evaluation: dtypes are known when the call is recorded)."""
    compared = 0
    for dtype in DTYPES:
        if dtype in ("float16", "bfloat16"):
            continue
        try:
            expected = getattr(strict, name)(strict.asarray([1], dtype=_strict_dtype(dtype))).dtype
        except TypeError:
            continue
        x = xp.ones((1,), dtype=dtype)
        assert str(getattr(xp, name)(x).dtype) == _strict_name(expected), (name, dtype)
        compared += 1
    assert compared > 0


# ----------------------------------------------------------------------------- binary

def _f64(*vs):
    return [v.astype(np.float64) if v.dtype.kind in "biu" else v for v in vs]


def _floor_divide_ref(a, b):
    out = np.floor_divide(a, b)
    if a.dtype.kind == "f" or a.dtype == BF16:
        # the standard: +-inf // nonzero finite is +-inf (NumPy and Python give nan)
        af, bf = a.astype(np.float64), b.astype(np.float64)
        special = np.isinf(af) & np.isfinite(bf) & (bf != 0)
        out = np.where(special, np.divide(a, b), out).astype(out.dtype)
    return out


def _pow_ref(a, b):
    if a.dtype.kind not in "iu":
        return np.power(a, b)
    minus_one = np.array(-1).astype(a.dtype)           # all bits set, unsigned too
    unit = (a == 1) | (a == minus_one)
    negative = b < 0
    out = np.power(a, np.where(negative, 0, b).astype(b.dtype))  # wraps on overflow
    # negative exponents (unspecified by the standard): 1 and -1 keep their powers, else 0
    inverse = np.where(a == 1, 1, np.where(a == minus_one, np.where(b % 2 == 0, 1, minus_one), 0))
    out = np.where(negative, inverse.astype(a.dtype), out)
    # exponents from 64 on: exact for 0, 1 and -1; 0 where it overflows (tlaloc.pow)
    return np.where((b >= 64) & ~unit & (a != 0), np.zeros_like(a), out)


BINARY = {
    "add": ("buifc", lambda a, b: np.logical_or(a, b) if a.dtype.kind == "b" else a + b),
    "subtract": ("uifc", np.subtract),
    "multiply": ("buifc", lambda a, b: np.logical_and(a, b) if a.dtype.kind == "b" else a * b),
    "divide": ("buifc", lambda a, b: np.divide(*_f64(a, b))),
    "floor_divide": ("uif", _floor_divide_ref),
    "remainder": ("uif", np.remainder),
    "pow": ("uifc", _pow_ref),
    "maximum": ("uif", np.maximum),
    "minimum": ("uif", np.minimum),
    "atan2": ("f", np.arctan2),
    "hypot": ("f", np.hypot),
    "logaddexp": ("f", np.logaddexp),
    "copysign": ("f", np.copysign),
    # C99 and the standard: nextafter(x, y) is y when x == y (NumPy's float16 gives x)
    "nextafter": ("f", lambda a, b: np.where(a == b, b, np.nextafter(a, b)).astype(a.dtype)),
    "equal": ("buifc", np.equal),
    "not_equal": ("buifc", np.not_equal),
    "less": ("buif", np.less),
    "less_equal": ("buif", np.less_equal),
    "greater": ("buif", np.greater),
    "greater_equal": ("buif", np.greater_equal),
    "logical_and": ("buifc", np.logical_and),
    "logical_or": ("buifc", np.logical_or),
    "logical_xor": ("buifc", np.logical_xor),
    "bitwise_and": ("biu", np.bitwise_and),
    "bitwise_or": ("biu", np.bitwise_or),
    "bitwise_xor": ("biu", np.bitwise_xor),
    "bitwise_left_shift": ("iu", np.left_shift),
    "bitwise_right_shift": ("iu", np.right_shift),
}


def _binary_mask(name, a, b):
    """Elements compared for complex operands (None: all)."""
    if a.dtype.kind != "c" or name not in ("multiply", "divide", "pow"):
        return None
    # complex products and quotients with infinite or NaN parts are implementation-defined
    # (the standard's divide/multiply notes); complex pow is exp(x2 * log(x1)), undefined at 0
    mask = finite(a) & finite(b)
    if name == "divide":
        mask &= b != 0
    if name == "pow":
        mask &= (a != 0) & (np.abs(a) < 3) & (np.abs(b) < 3)
    return mask


@pytest.mark.parametrize("dtype", DTYPES)
def test_binary_functions(tier, dtype):
    """Every pair of special values (an outer product by broadcasting (n, 1) with (1, n))."""
    v = values(dtype)
    a, b = v[:, None], v[None, :]
    x1, x2 = xp.asarray(a, device=tier), xp.asarray(b, device=tier)
    cases = []
    for name, (kinds, ref) in BINARY.items():
        fn = getattr(xp, name)
        if kind(dtype) not in kinds:
            with pytest.raises(TypeError):
                fn(x1, x2)
            continue
        expected = ref(a, b)
        cases.append((name, fn(x1, x2), expected, _binary_mask(name, *np.broadcast_arrays(a, b))))
    run_checks(cases)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_result_dtypes_match_array_api_strict(name):
    compared = 0
    for dtype in DTYPES:
        if dtype in ("float16", "bfloat16"):
            continue
        s = strict.asarray([1], dtype=_strict_dtype(dtype))
        try:
            expected = getattr(strict, name)(s, s).dtype
        except TypeError:
            continue
        x = xp.ones((1,), dtype=dtype)
        assert str(getattr(xp, name)(x, x).dtype) == _strict_name(expected), (name, dtype)
        compared += 1
    assert compared > 0


def test_clip(tier):
    v = values("float64")
    x = xp.asarray(v, device=tier)
    i = xp.asarray(np.arange(-5, 6, dtype=np.int16), device=tier)
    lo = xp.asarray(np.array([-1.0, 0.0, np.nan]), device=tier)
    cases = [
        ("clip(x, -1, 2)", xp.clip(x, -1.0, 2.0), np.clip(v, -1.0, 2.0), None),
        ("clip(x, min=0)", xp.clip(x, min=0.0), np.maximum(v, 0.0), None),
        ("clip(x, max=0)", xp.clip(x, max=0), np.minimum(v, 0.0), None),
        ("clip(i, -2, 3)", xp.clip(i, -2, 3), np.clip(np.arange(-5, 6, dtype=np.int16), -2, 3), None),
        ("clip(i, huge)", xp.clip(i, -10**6, 10**6), np.arange(-5, 6, dtype=np.int16), None),
        ("clip(col, arr)", xp.clip(xp.reshape(x, (-1, 1)), lo, 1.0),
         np.minimum(np.maximum(v[:, None], np.array([-1.0, 0.0, np.nan])), 1.0), None),
    ]
    assert xp.clip(x)._node is x._node   # no bounds: the same value, nothing recorded
    with pytest.raises(TypeError):
        xp.clip(i, 0.5)
    with pytest.raises(TypeError):
        xp.clip(xp.asarray(np.array([1 + 1j]), device=tier), 0.0)
    with pytest.raises(ValueError):
        xp.clip(x, xp.zeros((2,), device=tier))  # (19,) and (2,) do not broadcast
    wide = xp.clip(xp.reshape(x, (-1, 1)), lo)  # bounds broadcast with x, as in array_api_strict
    assert wide.shape == (v.size, 3)
    run_checks(cases)


# ----------------------------------------------------------------------------- shapes

SHAPE_PAIRS = [
    ((), ()), ((), (3,)), ((4,), ()), ((0,), ()), ((0,), (1,)), ((2, 0), (1, 0)), ((2, 0), (0,)),
    ((3, 1), (1, 4)), ((2, 1, 3), (4, 1)), ((1,), (5,)), ((2, 3), (2, 3)), ((1, 1, 1), ()),
]
SHAPE_BINARY = ["add", "subtract", "multiply", "divide", "pow", "maximum", "minimum", "atan2",
                "hypot", "copysign", "floor_divide", "remainder", "equal", "less", "logical_and"]
SHAPE_UNARY = ["sin", "abs", "isnan", "negative", "sqrt", "floor"]


def _random_with_specials(shape, rng):
    v = rng.standard_normal(shape) * 3
    flat = v.reshape(-1)
    specials = [np.nan, np.inf, -np.inf, -0.0, 0.0]
    flat[: min(len(specials), flat.size)] = specials[: flat.size]
    return v


@pytest.mark.parametrize("shapes", SHAPE_PAIRS, ids=str)
def test_shapes_broadcast_0d_empty(tier, shapes):
    rng = np.random.default_rng(len(str(shapes)))
    a, b = (_random_with_specials(s, rng) for s in shapes)
    x1, x2 = xp.asarray(a, device=tier), xp.asarray(b, device=tier)
    expected_shape = np.broadcast_shapes(a.shape, b.shape)
    cases = []
    for name in SHAPE_BINARY:
        out = getattr(xp, name)(x1, x2)
        assert out.shape == expected_shape  # known before evaluation
        cases.append((name, out, BINARY[name][1](a, b), None))
    for name in SHAPE_UNARY:
        cases.append((name, getattr(xp, name)(x1), UNARY[name][1](a), None))
    run_checks(cases)


# ----------------------------------------------------------------------------- mixed dtypes

def _as(v, dtype):
    with np.errstate(all="ignore"):
        return v.astype(np_dtype(dtype))


@pytest.mark.parametrize("left", DTYPES)
def test_mixed_dtype_promotion(tier, left):
    a = np.array([0, 1, 3, 7]).astype(np_dtype(left)) if left != "bool" else np.array([0, 1, 1, 0], bool)
    x1 = xp.asarray(a, device=tier)
    cases = []
    for right in DTYPES:
        b = np.array([1, 0, 2, 7]).astype(np_dtype(right)) if right != "bool" else np.array([1, 0, 1, 1], bool)
        x2 = xp.asarray(b, device=tier)
        rd = expected_promotion(left, right)
        if rd is None:
            for fn in (xp.add, xp.multiply, xp.equal):
                with pytest.raises(TypeError):
                    fn(x1, x2)
            with pytest.raises(TypeError):
                xp.result_type(x1, x2)
            continue
        assert str(xp.result_type(x1, x2)) == rd
        ea, eb = _as(a, rd), _as(b, rd)
        # one arithmetic and one comparison function: the conversions are what is tested
        for name in ("add", "less" if kind(rd) in "uif" else "equal"):
            cases.append((f"{name}({left}, {right})", getattr(xp, name)(x1, x2),
                          BINARY[name][1](ea, eb), None))
    run_checks(cases)


def test_promotion_matches_array_api_strict():
    """Within the standard's promotion table (no mixed kinds), tlaloc agrees with
    array_api_strict; across kinds strict refuses and tlaloc has its documented rules."""
    names = ["bool"] + INTS + ["float32", "float64"] + COMPLEX
    for d1 in names:
        for d2 in names:
            try:
                expected = strict.result_type(_strict_dtype(d1), _strict_dtype(d2))
            except TypeError:
                continue
            assert str(xp.result_type(getattr(xp, d1), getattr(xp, d2))) == _strict_name(expected), (d1, d2)
            assert expected_promotion(d1, d2) == _strict_name(expected), (d1, d2)


# ----------------------------------------------------------------------------- Python scalars

SCALARS = [True, 0, 1, -3, 2.5, -0.0, math.inf, math.nan, 1.5 - 2j]


def scalar_result(dtype, s):
    """The dtype of `array(dtype) op s` (scalars are weak), or an exception type."""
    k = kind(dtype)
    if isinstance(s, bool):
        return dtype
    if isinstance(s, int):
        if k == "b":
            return "int64"
        if k in "iu":
            info = np.iinfo(dtype)
            if not info.min <= s <= info.max:
                return OverflowError
        return dtype
    if isinstance(s, float):
        return "float64" if k in "biu" else dtype
    if k == "c":
        return dtype
    if k == "f":
        return "complex128" if dtype == "float64" else "complex64"
    return "complex128"


SCALAR_OPS = {
    "+": (lambda x, s: x + s, lambda x, s: s + x, "add"),
    "-": (lambda x, s: x - s, lambda x, s: s - x, "subtract"),
    "*": (lambda x, s: x * s, lambda x, s: s * x, "multiply"),
    "/": (lambda x, s: x / s, lambda x, s: s / x, "divide"),
    "**": (lambda x, s: x ** s, lambda x, s: s ** x, "pow"),
    "//": (lambda x, s: x // s, lambda x, s: s // x, "floor_divide"),
    "%": (lambda x, s: x % s, lambda x, s: s % x, "remainder"),
    "==": (lambda x, s: x == s, lambda x, s: s == x, "equal"),
    "!=": (lambda x, s: x != s, lambda x, s: s != x, "not_equal"),
    "<": (lambda x, s: x < s, lambda x, s: s > x, "less"),
    "<=": (lambda x, s: x <= s, lambda x, s: s >= x, "less_equal"),
    ">": (lambda x, s: x > s, lambda x, s: s < x, "greater"),
    ">=": (lambda x, s: x >= s, lambda x, s: s <= x, "greater_equal"),
    "&": (lambda x, s: x & s, lambda x, s: s & x, "bitwise_and"),
    "|": (lambda x, s: x | s, lambda x, s: s | x, "bitwise_or"),
    "^": (lambda x, s: x ^ s, lambda x, s: s ^ x, "bitwise_xor"),
    "<<": (lambda x, s: x << s, lambda x, s: s << x, "bitwise_left_shift"),
    ">>": (lambda x, s: x >> s, lambda x, s: s >> x, "bitwise_right_shift"),
}
# the reflected comparison is the mirrored operator
_MIRROR = {"less": "greater", "less_equal": "greater_equal", "greater": "less",
           "greater_equal": "less_equal"}


@pytest.mark.parametrize("dtype", ["bool", "int8", "int64", "uint8", "uint64", "float16", "float32",
                                   "float64", "complex64", "complex128"])
def test_python_scalars_either_side(lazy, tier, dtype):
    """Operators and namespace functions with a Python scalar on the left or the right: the
    scalar takes the array's dtype when its kind fits (it is weak). Its value is a program
    input, so every scalar promoted to the same dtype shares one program (one compile)."""
    v = values(dtype)
    if kind(dtype) in "iu":
        v = v[(v.astype(np.float64) > -100) & (v.astype(np.float64) < 100)]  # keep powers small
    x = xp.asarray(v, device=tier)
    xp.reset_cache_info()
    types = set()
    for s in SCALARS:
        rd = scalar_result(dtype, s)
        if rd is OverflowError:
            with pytest.raises(OverflowError):
                x + s
            continue
        types.add(rd)
        ev = _as(v, rd)
        es = np.asarray(s).astype(np_dtype(rd)) if not (isinstance(s, complex) and kind(rd) != "c") else None
        cases = []
        for op, (left, right, name) in SCALAR_OPS.items():
            kinds = BINARY[name][0]
            if kind(rd) not in kinds:
                with pytest.raises(TypeError):
                    left(x, s)
                with pytest.raises(TypeError):
                    getattr(xp, name)(s, x)
                continue
            ref = BINARY[name][1]
            fn = getattr(xp, name)
            mirrored = BINARY[_MIRROR.get(name, name)][1]
            for label, out, expected, operands in (
                    (f"x {op} {s!r}", left(x, s), ref(ev, es), (ev, es)),
                    (f"{s!r} {op} x (reflected)", right(x, s), mirrored(es, ev) if name in _MIRROR
                     else ref(es, ev), (es, ev)),
                    (f"{name}(x, {s!r})", fn(x, s), ref(ev, es), (ev, es)),
                    (f"{name}({s!r}, x)", fn(s, x), ref(es, ev), (es, ev))):
                assert str(out.dtype) == str(np.asarray(expected).dtype), label
                a1, a2 = np.broadcast_arrays(*operands)
                cases.append((label, out, np.asarray(expected), _binary_mask(name, a1, a2)))
        run_checks(cases)
    info = xp.cache_info()
    assert info["misses"] == len(types), info   # one program per result dtype, not per value


def test_scalar_values_are_program_inputs(lazy, tier):
    """A different Python scalar reuses the program: scalars are inputs, not constants."""
    x = xp.asarray(np.linspace(-1, 1, 5), device=tier)
    xp.eval(x * 2.0 + 1.0)
    xp.reset_cache_info()
    outs = [x * float(s) + float(-s) for s in range(1, 6)]
    for o, s in zip(outs, range(1, 6)):
        np.testing.assert_allclose(np.asarray(o), np.linspace(-1, 1, 5) * s - s)
    info = xp.cache_info()
    assert info["misses"] == 0 and info["compiles"] == 0 and info["hits"] == 5


# ----------------------------------------------------------------------------- operators

def test_unary_operators(tier):
    for dtype in ("int16", "float32", "bool", "complex64"):
        v = values(dtype)
        x = xp.asarray(v, device=tier)
        cases = []
        if kind(dtype) != "b":
            cases += [("-x", -x, np.negative(v), None), ("+x", +x, v, None),
                      ("abs(x)", abs(x), np.abs(v), None)]
        else:
            for op in (lambda x: -x, lambda x: +x, lambda x: abs(x)):
                with pytest.raises(TypeError):
                    op(x)
        if kind(dtype) in "biu":
            cases.append(("~x", ~x, np.invert(v), None))
        else:
            with pytest.raises(TypeError):
                ~x
        run_checks(cases)


def test_matmul_operators(tier):
    a = np.arange(6.0).reshape(2, 3)
    b = np.arange(12.0).reshape(3, 4) - 5
    x, y = xp.asarray(a, device=tier), xp.asarray(b, device=tier)
    m = xp.asarray(np.eye(3) * 2, device=tier)
    z = xp.asarray(x, copy=True)
    z @= m
    run_checks([("x @ y", x @ y, a @ b, None), ("x @= m", z, a @ (np.eye(3) * 2), None),
                ("x unchanged", x, a, None)])
    assert x.__matmul__(2.0) is NotImplemented
    with pytest.raises(TypeError):
        x @ 2.0
    with pytest.raises(ValueError):
        z @= y  # (2, 3) @ (3, 4) changes the shape


def test_inplace_operators(tier):
    i = np.array([3, -7, 12, 0, 5], dtype=np.int64)
    f = np.array([1.5, -2.25, 0.0, 7.0, -0.5])
    b = np.array([True, False, True, False])
    x = xp.asarray(i, device=tier)
    y = xp.asarray(f, device=tier)
    t = xp.asarray(b, device=tier)
    # Copies keep the old values, a view (a slice) sees the writes, and the same Python
    # object seen under another name changes, as in NumPy.
    x0, y0, t0 = xp.asarray(x, copy=True), y[1:], xp.asarray(t, copy=True)
    alias = x
    ei, ef, eb = i.copy(), f.copy(), b.copy()
    x += 4; ei += 4
    x -= 1; ei -= 1
    x *= 3; ei *= 3
    x //= 2; ei //= 2
    x %= 7; ei %= 7
    x **= 2; ei **= 2
    x &= 13; ei &= 13
    x |= 2; ei |= 2
    x ^= 5; ei ^= 5
    x <<= 2; ei <<= 2
    x >>= 1; ei >>= 1
    x += xp.asarray(np.int8(3), device=tier); ei += 3   # int8 array joins int64: stays int64
    y += 1.5; ef += 1.5
    y -= 0.25; ef -= 0.25
    y *= 2; ef *= 2
    y /= 4; ef /= 4
    y //= 0.5; ef //= 0.5
    y %= 3.0; ef %= 3.0
    y **= 2; ef **= 2
    y += xp.asarray(np.arange(5, dtype=np.int32), device=tier); ef += np.arange(5)
    t &= xp.asarray(np.array([True, True, False, False]), device=tier); eb &= [True, True, False, False]
    t |= True; eb |= True
    t ^= xp.asarray(np.array([True, False, True, False]), device=tier); eb ^= [True, False, True, False]
    assert (x.dtype, y.dtype, t.dtype) == (xp.int64, xp.float64, xp.bool)
    assert alias is x
    run_checks([("int64 in-place", x, ei, None), ("float64 in-place", y, ef, None),
                ("bool in-place", t, eb, None), ("old int", x0, i, None), ("view float", y0, ef[1:], None),
                ("old bool", t0, b, None)])


def test_inplace_keeps_dtype_and_shape(tier):
    """In-place operators cannot change dtype or shape; the error comes at the call, before
    anything is computed, and the array is left as it was."""
    x = xp.asarray(np.array([1, 2, 3], dtype=np.int64), device=tier)
    f32 = xp.asarray(np.array([1.0, 2.0, 3.0], dtype=np.float32), device=tier)
    t = xp.asarray(np.array([True, False, True]), device=tier)
    node = x._node
    xp.reset_cache_info()
    with pytest.raises(TypeError):
        x += 1.5
    with pytest.raises(TypeError):
        x /= 2                     # true division of integers gives float64
    with pytest.raises(TypeError):
        f32 += xp.asarray(np.ones(3), device=tier)  # float32 + float64 -> float64
    with pytest.raises(TypeError):
        t += 1                     # bool + int -> int64
    with pytest.raises(TypeError):
        x += 1j
    with pytest.raises(ValueError):
        x += xp.ones((2, 3), dtype=xp.int64, device=tier)  # broadcasts to a new shape
    with pytest.raises(OverflowError):
        x += 2 ** 70
    assert xp.cache_info()["misses"] == 0 and xp.cache_info()["compiles"] == 0
    assert x._node is node and x.dtype == xp.int64 and x.shape == (3,)
    f32 += 2.5                     # a float scalar is weak: stays float32
    assert f32.dtype == xp.float32
    assert_matches(f32, np.array([3.5, 4.5, 5.5], dtype=np.float32))
    assert_matches(x, np.array([1, 2, 3]))


def test_operators_return_notimplemented_for_foreign_types(tier):
    x = xp.asarray(np.array([1.0, 2.0]), device=tier)
    for other in ("a", [1, 2], None, object()):
        assert x.__add__(other) is NotImplemented
        assert x.__radd__(other) is NotImplemented
        with pytest.raises(TypeError):
            x + other
    with pytest.raises(TypeError):
        x += "a"
    with pytest.raises(TypeError):
        xp.add(x, [1.0, 2.0])
    with pytest.raises(TypeError):
        xp.add(1.0, 2.0)  # at least one array


# ----------------------------------------------------------------------------- XLA semantics

def test_integer_division_and_remainder_by_zero(tier):
    """XLA's integer divide by zero gives -1 and its remainder the dividend (notes §8); the
    standard leaves x // 0 unspecified and tlaloc gives 0 for both, like NumPy; INT_MIN // -1
    wraps to INT_MIN."""
    cases = []
    for dtype in INTS:
        info = np.iinfo(dtype)
        a = np.array([7, 0, info.max, info.min, 1], dtype=dtype)
        x = xp.asarray(a, device=tier)
        zero = xp.zeros((5,), dtype=dtype, device=tier)
        cases.append((f"{dtype} // 0", x // zero, np.zeros(5, dtype), None))
        cases.append((f"{dtype} % 0", x % zero, np.zeros(5, dtype), None))
        cases.append((f"{dtype} // 0 scalar", x // 0, np.zeros(5, dtype), None))
        if info.min < 0:
            d = np.array([-1, -1, 2, -7, -3], dtype=dtype)
            y = xp.asarray(d, device=tier)
            cases.append((f"{dtype} // -1", xp.floor_divide(xp.asarray(np.array([info.min, 7], dtype), device=tier), -1),
                          np.array([info.min, -7], dtype), None))
            cases.append((f"{dtype} % -1", xp.remainder(xp.asarray(np.array([info.min, 7], dtype), device=tier), -1),
                          np.array([0, 0], dtype), None))
            cases.append((f"{dtype} // signs", x // y, np.floor_divide(a, d), None))
            cases.append((f"{dtype} % signs", x % y, np.remainder(a, d), None))
    run_checks(cases)


def test_integer_pow(tier):
    """Negative exponents (unspecified by the standard; NumPy raises): 1 ** -n == 1,
    (-1) ** -n == +-1, otherwise 0. Exponents >= 64 (XLA reads 6 bits): exact for 0, 1, -1."""
    cases = []
    for dtype in INTS:
        signed = np.iinfo(dtype).min < 0
        base = np.array([0, 1, 2, 3, -1, -2] if signed else [0, 1, 2, 3, np.iinfo(dtype).max], dtype=dtype)
        exps = np.array([0, 1, 2, 5, 64, 65, 100, 127] + ([-1, -2, -3] if signed else [200 if dtype == "uint8" else 1000]),
                        dtype=dtype)
        a, b = base[:, None], exps[None, :]
        cases.append((f"{dtype} pow", xp.pow(xp.asarray(a, device=tier), xp.asarray(b, device=tier)),
                      _pow_ref(a, b), None))
        got = xp.asarray(np.array([0, 1], dtype), device=tier) ** 64
        cases.append((f"{dtype} [0, 1] ** 64", got, np.array([0, 1], dtype), None))
    run_checks(cases)
    one = xp.asarray(np.array([-1, 1, 2], dtype=np.int32), device=tier)
    assert_matches(one ** -1, np.array([-1, 1, 0], dtype=np.int32))
    assert_matches(one ** -2, np.array([1, 1, 0], dtype=np.int32))


def test_shifts_past_the_bit_width(tier):
    """Shifts by >= the bit width give 0, or the sign fill for >> of negative values."""
    cases = []
    for dtype in INTS:
        bits = np.iinfo(dtype).bits
        signed = np.iinfo(dtype).min < 0
        a = np.array([1, 5, -3 if signed else 200, np.iinfo(dtype).max], dtype=dtype)[:, None]
        s = np.array([0, 1, bits - 1, bits, bits + 1, min(2 * bits, 127)], dtype=dtype)[None, :]
        x, y = xp.asarray(a, device=tier), xp.asarray(s, device=tier)
        too_far = s >= bits
        left = np.where(too_far, 0, np.left_shift(a, np.where(too_far, 0, s))).astype(dtype)
        fill = np.where(a < 0, -1, 0) if signed else np.zeros_like(a)
        right = np.where(too_far, fill, np.right_shift(a, np.where(too_far, 0, s))).astype(dtype)
        cases.append((f"{dtype} <<", x << y, left, None))
        cases.append((f"{dtype} >>", x >> y, right, None))
    run_checks(cases)


def test_round_half_to_even_and_signed_zero(tier):
    v = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999999999999994, -0.0, 1e300, np.nan])
    x = xp.asarray(v, device=tier)
    out = xp.round(x)
    assert_matches(out, np.array([0.0, 2.0, 2.0, -0.0, -2.0, -2.0, 0.0, -0.0, 1e300, np.nan]), exact=True)
    c = xp.asarray(v[:6] + 1j * v[:6][::-1], device=tier)
    assert_matches(xp.round(c), np.round(v[:6] + 1j * v[:6][::-1]))


def test_floor_divide_and_remainder_special_cases(tier):
    """The standard's special cases where NumPy differs (inf // finite) and where it agrees."""
    inf, nan = math.inf, math.nan
    a = np.array([inf, inf, -inf, -inf, 5.0, -5.0, 5.0, -5.0, 0.0, -0.0, 0.0, 7.5, -7.5, nan, inf])
    b = np.array([2.0, -2.0, 2.0, -2.0, inf, inf, -inf, -inf, 3.0, 3.0, -3.0, 2.0, 2.0, 1.0, inf])
    x, y = xp.asarray(a, device=tier), xp.asarray(b, device=tier)
    fd = np.array([inf, -inf, -inf, inf, 0.0, -1.0, -1.0, 0.0, 0.0, -0.0, -0.0, 3.0, -4.0, nan, nan])
    rem = np.array([nan, nan, nan, nan, 5.0, inf, -inf, -5.0, 0.0, 0.0, -0.0, 1.5, 0.5, nan, nan])
    run_checks([("floor_divide", x // y, fd, None), ("remainder", x % y, rem, None)])


# ----------------------------------------------------------------------------- complex

@pytest.mark.parametrize("dtype", COMPLEX)
def test_complex_nonfinite_components(tier, dtype):
    """Functions whose complex special cases hold componentwise or by the standard's tables,
    on every combination of 0, -0, 1, -1.5, inf, nan and 2 as real and imaginary parts."""
    v = values(dtype)
    x = xp.asarray(v, device=tier)
    cases = []
    for name in ("abs", "conj", "real", "imag", "isfinite", "isinf", "isnan", "negative",
                 "positive", "round", "logical_not"):
        cases.append((name, getattr(xp, name)(x), UNARY[name][1](v), None))
    a, b = v[:, None], v[None, :]
    x1, x2 = xp.asarray(a, device=tier), xp.asarray(b, device=tier)
    for name in ("add", "subtract", "equal", "not_equal", "logical_and"):
        cases.append((name, getattr(xp, name)(x1, x2), BINARY[name][1](a, b), None))
    run_checks(cases)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_complex_division_matches_numpy(tier, dtype):
    """z / w by Smith's method on both backends, as NumPy: every pair of parts from 0, -0, 1,
    -2.5, 1e-30, 3.4e38, 1e300, +-inf, nan (XLA's c^2 + d^2 denominator made
    (0.947 + 3.4e38j) / itself 0 in complex64). Pairs whose divisor has a subnormal ratio
    of parts are left out: tlaloc flushes that intermediate (docs/precision.md)."""
    np_dtype = np.dtype(dtype)
    real = np.float32 if np_dtype == np.complex64 else np.float64
    info = np.finfo(real)
    with np.errstate(all="ignore"):
        parts = np.array([0.0, -0.0, 1.0, -2.5, 1e-30, 3.4e38, 1e300, np.inf, -np.inf, np.nan,
                          0.947], dtype=real)
    grid = np.array([complex(a, b) for a in parts for b in parts], dtype=np_dtype)
    z, w = (g.ravel() for g in np.meshgrid(grid, grid))
    with np.errstate(all="ignore"):
        hi = np.maximum(np.abs(w.real), np.abs(w.imag))
        ratio = np.minimum(np.abs(w.real), np.abs(w.imag)) / hi
        keep = ~((ratio > 0) & (ratio < info.tiny))
        z, w = z[keep], w[keep]
        expected = z / w
    got = np.asarray(xp.asarray(z, device=tier) / xp.asarray(w, device=tier))
    for part in (np.real, np.imag):
        e, g = part(expected), part(got)
        assert np.array_equal(np.isnan(e), np.isnan(g)), (z[np.isnan(e) != np.isnan(g)][:5],
                                                          w[np.isnan(e) != np.isnan(g)][:5])
        finite = np.isfinite(e)
        assert np.array_equal(e[~finite & ~np.isnan(e)], g[~finite & ~np.isnan(e)])
        close = np.abs(e - g) <= 4 * info.eps * np.abs(e) + 4 * info.tiny
        assert close[finite].all(), list(zip(z[finite][~close[finite]][:5],
                                             w[finite][~close[finite]][:5]))

@pytest.mark.parametrize("name", ["cos", "sin", "cosh", "sinh"])
@pytest.mark.parametrize("dtype", COMPLEX)
def test_complex_trig_stays_finite_where_only_its_hyperbolic_factor_overflows(tier, dtype, name):
    """cos(x + iy) = cosh(y) cos(x) - i sinh(y) sin(x): with y past cosh's overflow and a small
    x, the imaginary part is finite (cos(-6.6e-13 + 100j) is inf - 4.7e30j in complex64, not
    inf - inf j; tests/fuzz, seed 20261211), and likewise for sin, cosh and sinh. Both parts
    as NumPy's, infinities where NumPy's are."""
    real = np.float32 if np.dtype(dtype) == np.complex64 else np.float64
    big = 100.0 if real is np.float32 else 720.0        # cosh(big) overflows, e^(big/2) not
    parts = [(-6.6e-13, big), (1e-20, -big), (0.3, big - 5), (2.0, 0.5), (0.0, big),
             (np.pi / 2, big), (3.0, 30.0)]
    z = np.array([complex(a, b) for a, b in parts], dtype=dtype)
    if name in ("cosh", "sinh"):
        z = z * np.asarray(1j, dtype)                    # the large part real
    with np.errstate(all="ignore"):
        expected = getattr(np, name)(z)
    got = np.asarray(getattr(xp, name)(xp.asarray(z, device=tier)))
    for part in (np.real, np.imag):
        e, g = part(expected), part(got)
        assert np.array_equal(np.isinf(e), np.isinf(g)), (z, g, e)
        assert np.array_equal(np.isnan(e), np.isnan(g)), (z, g, e)
        finite = np.isfinite(e)
        np.testing.assert_allclose(g[finite], e[finite], rtol=8 * np.finfo(real).eps,
                                   atol=8 * np.finfo(real).tiny)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_complex_log_near_the_unit_circle(tier, dtype):
    """log|z| near |z| = 1, where it is far smaller than |z|: each part within a few ulp of
    mpmath on both backends (XLA's complex log was ~200 ulp off in the real part there)."""
    mpmath = pytest.importorskip("mpmath")
    rng = np.random.default_rng(3)
    angle = rng.uniform(-np.pi, np.pi, 400)
    radius = 1 + rng.normal(0, 1e-3, 400) * 10.0 ** rng.integers(-6, 0, 400)
    z = (radius * np.cos(angle) + 1j * radius * np.sin(angle)).astype(dtype)
    mpmath.mp.prec = 120
    ref = np.array([complex(mpmath.log(mpmath.mpc(complex(v)))) for v in z])
    got = np.asarray(xp.log(xp.asarray(z, device=tier)))
    eps = np.finfo(got.real.dtype).eps
    for part in (np.real, np.imag):
        rel = np.abs(part(got) - part(ref)) / np.abs(part(ref))
        assert rel.max() < 4 * eps, (z[np.argmax(rel)], rel.max() / eps)

# Both backends give the standard's (C99's) special values at infinite and NaN parts
# (the formulas of tlaloc/_prims/complex_math.py). NumPy's expm1 does not: it is exp(z) - 1 there
# (expm1(inf + 0j) is inf + nan j, not inf + 0j), so it is the one deviation from NumPy.
NUMPY_COMPLEX_NONFINITE_GAPS = {"expm1"}


def _check_complex_nonfinite(tier, v, outs):
    """C99 Annex G special cases (which NumPy follows) of the complex transcendental
    functions at infinite and NaN parts, on the outputs of test_unary_functions: every
    function but those of NUMPY_COMPLEX_NONFINITE_GAPS agrees with NumPy there, on both
    backends."""
    keep = ~finite(v)
    deviating = set()
    for name in COMPLEX_TRANSCENDENTAL:
        o, e = np.asarray(outs[name])[keep], UNARY[name][1](v)[keep]
        # NaN signs and the sign of zero parts are unspecified here; compare the rest
        for part in (np.real, np.imag):
            po, pe = part(o).astype(np.float64), part(e).astype(np.float64)
            same_nan = np.array_equal(np.isnan(po), np.isnan(pe))
            ok = ~np.isnan(pe)
            if not (same_nan and np.allclose(po[ok], pe[ok], rtol=1e-5, atol=0)):
                deviating.add(name)
    expected = NUMPY_COMPLEX_NONFINITE_GAPS
    assert deviating == expected, (sorted(deviating - expected), sorted(expected - deviating))


# ----------------------------------------------------------------------------- bare primitives

def test_primitives_without_a_namespace_function(tier):
    """rsqrt and logistic (used by tlaloc.special and derivative rules) on every floating
    dtype, real and complex, bound directly."""
    from tlaloc._graph import bind
    from tlaloc._prims import elementwise as ew
    cases = []
    for dtype in FLOATS + COMPLEX:
        v = values(dtype)
        if dtype in COMPLEX:
            v = v[finite(v) & (v != 0)]
        x = xp.asarray(v, device=tier)
        wide = v.astype(np.complex128 if dtype in COMPLEX else np.float64)
        for prim, ref in ((ew.rsqrt, lambda w: 1 / np.sqrt(w)), (ew.logistic, lambda w: 1 / (1 + np.exp(-w)))):
            out = xp.Array._from_node(bind(prim, (x._node,), {}))
            with np.errstate(all="ignore"):
                expected = ref(wide).astype(np_dtype(dtype))
            cases.append((f"{prim.name} {dtype}", out, expected, None))   # rsqrt(-0.0) is -inf
    run_checks(cases)


# ----------------------------------------------------------------------------- recording

def _live_nodes():
    import gc
    from tlaloc._graph import Node
    gc.collect()
    return sum(1 for o in gc.get_objects() if isinstance(o, Node))


def _loop(n, device):
    x = xp.asarray(np.linspace(0.0, 1.0, 8), device=device)
    for i in range(n):
        x = x * 1.5 + (0.001 * i - 0.25)   # a different Python float each iteration
        if i % 10 == 9:
            xp.eval(x)
    return x


def test_loop_compiles_once_and_memory_stays_flat(lazy, tier):
    """1,000 iterations of x = x * 1.5 + step, evaluated every 10: every chunk has the same
    structure (scalars are inputs), so a handful of programs serve them all, and computed
    values drop the graph behind them, so memory does not grow with the iteration count."""
    import tracemalloc
    xp.reset_cache_info()
    _loop(20, tier)                                # warm up: the chunk's program exists now
    warm = xp.cache_info()
    assert warm["misses"] <= 2
    xp.reset_cache_info()
    base_nodes = _live_nodes()
    # Bounded structures hold dead entries between their prunes, by design: jaxlib parks a
    # traceback per execution until tlaloc empties its list (every 1,024 executions), and the
    # list of pending arrays keeps up to 1,024+ weakrefs between prunes. Each measurement
    # empties both and runs the cycle collector, so it sees live memory only.
    import gc

    from tlaloc import _graph
    from tlaloc.backends._jaxlib import Runtime

    def settle():
        Runtime.release_deferred()
        _graph.prune_pending_owners()
        gc.collect()

    tracemalloc.start()
    x200 = _loop(200, tier)
    settle()
    nodes200 = _live_nodes() - base_nodes
    mem200 = tracemalloc.get_traced_memory()[0]
    del x200
    x1000 = _loop(1000, tier)
    settle()
    nodes1000 = _live_nodes() - base_nodes
    mem1000 = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    info = xp.cache_info()
    assert info["misses"] == 0 and info["compiles"] == 0, info  # the warm-up's program serves all
    assert info["hits"] == 120, info                             # one run per 10 iterations
    assert nodes1000 <= nodes200 + 2, (nodes200, nodes1000)
    assert mem1000 < mem200 + 64 * 1024, (mem200, mem1000)
    expected = np.linspace(0.0, 1.0, 8)
    for i in range(1000):
        expected = expected * 1.5 + (0.001 * i - 0.25)
    np.testing.assert_allclose(np.asarray(x1000), expected, rtol=1e-12)


def test_loop_compiles_a_handful_cold():
    """The same loop from a cold cache in execution="compiled": at most a handful of
    compiles for 1,000 iterations."""
    xp.config.update(execution="compiled")
    xp.reset_cache_info()
    # a shape no other test uses, so the programs are new to this process
    x = xp.asarray(np.linspace(0.0, 1.0, 13))
    for i in range(1000):
        x = x * 1.5 + (1e-4 * i)
        if i % 10 == 9:
            xp.eval(x)
    info = xp.cache_info()
    assert 1 <= info["misses"] <= 3, info
    assert info["compiles"] + info["disk_hits"] == info["misses"], info
    assert info["hits"] + info["misses"] == 100, info


@pytest.mark.parametrize("dtypes", [("int8", "int16"), ("bool", "bool"), ("uint8", "int64")])
def test_true_division_of_integers_is_in_the_default_float(tier, dtypes):
    a = np.array([[7, 3, 0], [1, 2, 5]]).astype(dtypes[0])
    b = np.array([2, 0, 3]).astype(dtypes[1])       # a zero divisor: inf and nan
    x, y = xp.asarray(a, device=tier), xp.asarray(b, device=tier)
    expected = (a.astype(np.float64) / b.astype(np.float64))
    with np.errstate(all="ignore"):
        for got in (x / y, xp.divide(x, y)):
            assert_matches(got, expected)
        assert_matches(x / 2, a.astype(np.float64) / 2.0)
        assert_matches(7 / y, 7.0 / b.astype(np.float64))
