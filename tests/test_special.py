"""tlaloc.special against scipy.special, on both tiers (XLA-compiled and the interpreter).

Accuracy. Each function runs once per dtype and tier on a few hundred points (random samples
over its domain, the tails, and its special values: ±0, ±inf, nan, poles, domain edges) and
is compared with SciPy evaluated in float64 on the same (rounded) inputs. TOLERANCES gives
the allowed error as (relative, absolute) in units of the dtype's eps: the maxima measured
on XLA:CPU (jaxlib 0.10), rounded up about twofold. The interpreter evaluates the CHLO
primitives with scipy.special itself, so it is at least as accurate. Larger entries and
why:
  * erfc, ndtr (float32): XLA's float32 erfc near its underflow (ndtr(-12.7) ~ 3e-37);
  * gammaln, digamma: absolute, not relative, accuracy next to their zeros (the roots of
    gammaln at negative x, of digamma at 1.46 and between the negative integers); gammaln
    near 1 and 2 uses its own series, where SciPy itself loses accuracy (gammaln(1.9998)
    from SciPy is off by ~7e3 eps), so that window is compared with mpmath when present;
  * gamma: exp(gammaln(x)) carries the absolute error of gammaln, ~|gammaln(x)| eps
    relative (1e3 eps near x = 171);
  * log_ndtr (float32): the erfc in float32 for 5 < x < 10.
Inputs and results below the smallest normal number are left out: XLA on the CPU flushes
subnormals to zero.

Derivatives are compared with central differences of the SciPy function in float64 on
both tiers, forward mode with reverse mode, and second derivatives with differences of
the first.
"""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.special as sc

import tlaloc as xp

S = xp.special
RNG = np.random.default_rng(20251201)

SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 1.5, -2.5, 3.0, 7.25, 8.0,
                    np.inf, -np.inf, np.nan, 1e-30, -1e-30, 0.3, 0.65, 0.9, 0.95, 0.05, 1e10])


def _u(lo, hi, n=200):
    return RNG.uniform(lo, hi, n)


def _lu(lo, hi, n=100):
    return 10.0 ** RNG.uniform(lo, hi, n)


def _away_from_2(x):
    """SciPy's gammaln loses up to ~7e3 eps just below 2; [1.5, 2.5] is compared with
    mpmath instead (test_gammaln_near_its_zeros)."""
    return x[(x < 1.5) | (x > 2.5)]


# name: (sample domain, (rtol, atol) in eps for float64, the same for float32). SciPy's
# digamma is not accurate at x < 0 (up to ~1e3 eps next to the poles, where tlaloc's
# reflection is exact): test_negative_arguments compares there with mpmath.
UNARY = {
    "erf": (lambda: np.concatenate([_u(-6, 6), _lu(-30, 1), -_lu(-30, 1)]), (4, 0), (4, 0)),
    "erfc": (lambda: np.concatenate([_u(-6, 26), _lu(-30, 1)]), (12, 0), (64, 0)),
    "erfinv": (lambda: np.concatenate([_u(-1, 1), 1 - _lu(-15, -1), _lu(-30, -1)]), (32, 0), (8, 0)),
    "erfcinv": (lambda: np.concatenate([_u(0, 2), _lu(-300, 0), 2 - _lu(-15, -1)]), (32, 0), (8, 0)),
    "ndtr": (lambda: np.concatenate([_u(-37, 10), _u(-3, 3)]), (16, 0), (256, 0)),
    "ndtri": (lambda: np.concatenate([_u(0, 1), _lu(-300, 0), 1 - _lu(-15, -1)]), (32, 0), (8, 0)),
    "log_ndtr": (lambda: np.concatenate([_u(-1e5, 10), _u(-40, 10), _u(-3, 3)]), (16, 0), (100, 0)),
    "gammaln": (lambda: _away_from_2(np.concatenate([_u(0, 10), _lu(-30, 30), _u(-30, 0)])),
                (16, 16), (16, 16)),
    "gamma": (lambda: np.concatenate([_u(0, 10), _u(10, 171), _u(-30, 0), _lu(-30, 0)]),
              (3000, 0), (300, 0)),
    "digamma": (lambda: np.concatenate([_u(0, 10), _lu(-30, 30)]), (8, 8), (8, 8)),
    "psi": (lambda: _u(0, 5), (8, 8), (8, 8)),
    "expit": (lambda: np.concatenate([_u(-800, 800), _u(-5, 5)]), (4, 0), (4, 0)),
    "logit": (lambda: np.concatenate([_u(0, 1), _lu(-30, 0), 1 - _lu(-15, -1)]), (8, 0), (8, 0)),
    "log_expit": (lambda: np.concatenate([_u(-800, 800), _u(-5, 5)]), (4, 0), (4, 0)),
    "entr": (lambda: np.concatenate([_u(-1, 5), _lu(-30, 30)]), (4, 0), (4, 0)),
    "i0": (lambda: np.concatenate([_u(-700, 700), _u(-10, 10), _lu(-30, 0)]), (12, 0), (12, 0)),
    "i0e": (lambda: np.concatenate([_u(-700, 700), _u(-10, 10), _lu(-30, 5)]), (12, 0), (12, 0)),
    "i1": (lambda: np.concatenate([_u(-700, 700), _u(-10, 10), _lu(-30, 0)]), (24, 0), (24, 0)),
    "i1e": (lambda: np.concatenate([_u(-700, 700), _u(-10, 10), _lu(-30, 5)]), (24, 0), (24, 0)),
    "sinc": (lambda: np.concatenate([_u(-10, 10), _lu(-30, 3), _u(-1e-2, 1e-2)]), (4, 4), (4, 4)),
}
TOLERANCES = {name: {"float64": v[1], "float32": v[2]} for name, v in UNARY.items()}


def _check(got, expected, dtype, rtol, atol, what=""):
    """got (tlaloc, `dtype`) against expected (float64): nan, inf and zero signs exactly,
    finite values within rtol * eps * |expected| + atol * eps."""
    got = np.asarray(got)
    assert got.dtype == np.dtype(dtype), f"{what}: dtype {got.dtype} != {dtype}"
    info = np.finfo(dtype)
    exp = np.asarray(expected, dtype=np.float64)
    with np.errstate(over="ignore"):
        rounded = exp.astype(dtype).astype(np.float64)   # overflow to inf as the dtype does
    g = got.astype(np.float64)
    sub = (np.abs(exp) < info.tiny) & (exp != 0)          # subnormal: flushed by XLA
    keep = ~sub
    nan_e, nan_g = np.isnan(rounded) & keep, np.isnan(g) & keep
    assert np.array_equal(nan_e, nan_g), f"{what}: nan at {np.argwhere(nan_e != nan_g).ravel()}"
    inf = np.isinf(rounded) & keep
    bad = inf & (g != rounded)
    assert not bad.any(), f"{what}: expected {rounded[bad][:5]}, got {g[bad][:5]}"
    fin = np.isfinite(rounded) & keep
    err = np.abs(g[fin] - exp[fin])
    allowed = (rtol * np.abs(exp[fin]) + atol) * info.eps
    worst = np.argmax(err - allowed) if err.size else 0
    assert (err <= allowed).all(), (
        f"{what}: {int((err > allowed).sum())} values out of tolerance; worst expected "
        f"{exp[fin][worst]!r} got {g[fin][worst]!r} (error {err[worst] / info.eps:.3g} eps)")
    zero = fin & (exp == 0)
    assert np.array_equal(np.signbit(g[zero]), np.signbit(exp[zero])), f"{what}: sign of zero"


def _inputs(values, dtype):
    x = np.asarray(values, dtype=dtype)
    tiny = np.finfo(dtype).tiny
    return x[~((np.abs(x) < tiny) & (x != 0))]            # no subnormal inputs (see above)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_matches_scipy(tier, name, dtype):
    domain, _, _ = UNARY[name]
    x = _inputs(np.concatenate([domain(), SPECIAL]), dtype)
    got = getattr(S, name)(xp.asarray(x, device=tier))
    ref = getattr(sc, name)(x.astype(np.float64))
    if name == "gammaln":
        ref = np.where(x == -np.inf, -np.inf, ref)
    _check(got, ref, dtype, *TOLERANCES[name][dtype], what=f"{name} {dtype}")


def _mpmath_reference(fn, x):
    mp = pytest.importorskip("mpmath")
    with mp.workdps(30):
        return np.array([float(fn(mp, mp.mpf(float(v)))) for v in x])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_gammaln_near_its_zeros(tier, dtype):
    """On [1/2, 5/2] gammaln uses a series with full relative accuracy, also next to its
    zeros at 1 and 2 (where SciPy's does not reach it just below 2): against mpmath."""
    x = np.concatenate([_u(0.5, 2.5, 60), 1 + _lu(-9, -1, 10), 2 - _lu(-9, -1, 10),
                        [1.0, 2.0, 0.5, 2.5]]).astype(dtype)
    ref = _mpmath_reference(lambda mp, v: mp.loggamma(v), x)
    _check(S.gammaln(xp.asarray(x, device=tier)), ref, dtype, 4, 0, what="gammaln near 1, 2")


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_negative_arguments(tier, dtype):
    """gammaln, digamma and gamma at x < 0 go through reflection formulas that take sin and
    tan at the exact distance to the nearest integer: relative accuracy next to the poles,
    absolute next to the zeros. Against mpmath."""
    x = np.concatenate([_u(-30, 0, 60), -np.arange(1, 6) + 1e-3, -np.arange(1, 6) - 2e-5,
                        [-0.5, -1e-5, -2.4570247382208006]]).astype(dtype)
    cases = [("gammaln", lambda mp, v: mp.log(abs(mp.gamma(v))), (16, 16)),
             ("digamma", lambda mp, v: mp.digamma(v), (16, 16)),
             ("gamma", lambda mp, v: mp.gamma(v), (400, 0))]
    for name, fn, tol in cases:
        got = getattr(S, name)(xp.asarray(x, device=tier))
        _check(got, _mpmath_reference(fn, x), dtype, *tol, what=f"{name} {dtype} at x < 0")
    for n in (1, 2, 3):
        got = S.polygamma(n, xp.asarray(x, device=tier))
        ref = _mpmath_reference(lambda mp, v: mp.psi(n, v), x)
        _check(got, ref, dtype, 4096, 64, what=f"polygamma({n}) {dtype} at x < 0")


def test_integer_and_bool_input_promote_to_default_float(tier):
    n = xp.asarray([1, 2, 3, 10], device=tier)
    got = S.gammaln(n)
    assert got.dtype == xp.float64
    _check(got, sc.gammaln([1, 2, 3, 10]), "float64", 8, 0)
    assert S.expit(xp.asarray([True, False], device=tier)).dtype == xp.float64
    assert S.xlogy(n, 2).dtype == xp.float64
    assert S.polygamma(xp.asarray([1, 2], device=tier), xp.asarray([1.5, 2.5], dtype=xp.float32,
                                                                 device=tier)).dtype == xp.float32


def test_low_precision_floats_keep_their_dtype(tier):
    x = xp.asarray([0.25, 0.5, 2.0], dtype=xp.float16, device=tier)
    out = S.erf(x)
    assert out.dtype == xp.float16
    np.testing.assert_allclose(np.asarray(out).astype(float), sc.erf([0.25, 0.5, 2.0]), rtol=2e-3)


# ----------------------------------------------------------------------------- binary

GRID = np.array([0.0, -0.0, 1.0, -1.0, 2.0, 0.5, -0.5, -2.5, 3.0, 20.0, 1e10, np.inf, -np.inf,
                 np.nan])


def _binary_inputs(dtype, lo, hi, n=300):
    a = np.concatenate([RNG.uniform(lo, hi, n), np.repeat(GRID, len(GRID))]).astype(dtype)
    b = np.concatenate([RNG.uniform(lo, hi, n), np.tile(GRID, len(GRID))]).astype(dtype)
    return a, b


BINARY = {
    "xlogy": ((-5, 5), (4, 0), (4, 0)),
    "xlog1py": ((-5, 5), (4, 0), (4, 0)),
    "rel_entr": ((0, 5), (8, 8), (8, 8)),
    "betaln": ((0, 40), (64, 8), (64, 8)),
}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_matches_scipy(tier, name, dtype):
    (lo, hi), t64, t32 = BINARY[name]
    a, b = _binary_inputs(dtype, lo, hi)
    ref = getattr(sc, name)(a.astype(np.float64), b.astype(np.float64))
    if name == "betaln":
        # SciPy's betaln at a non-positive integer with a nan, and at (-1, 1), is a case
        # of its own implementation; tlaloc gives nan and inf (as with the other poles)
        quirk = ((np.isnan(a) | np.isnan(b)) & ((a <= 0) & (a == np.floor(a))
                                                 | (b <= 0) & (b == np.floor(b))))
        quirk |= (a == -1) & (b == 1) | (a == 1) & (b == -1)
        keep = ~quirk
        a, b, ref = a[keep], b[keep], ref[keep]
        # and away from the poles, at negative arguments, log|B| has the absolute accuracy
        # of the gammaln values it combines
        t = t64 if dtype == "float64" else t32
        t = (t[0], t[1] * 4 if np.any((a < 0) | (b < 0)) else t[1])
        t64 = t32 = t
    got = getattr(S, name)(xp.asarray(a, device=tier), xp.asarray(b, device=tier))
    _check(got, ref, dtype, *(t64 if dtype == "float64" else t32), what=f"{name} {dtype}")


def test_betaln_large_arguments(tier):
    """Stirling corrections keep betaln relative for large and very unequal arguments,
    where lgamma(a) + lgamma(b) - lgamma(a + b) cancels (SciPy's asymptotic branch is off
    by ~5e5 eps at (1e5, 1e-3)): against mpmath."""
    a = np.array([1e6, 1e10, 50.0, 1e8, 300.0, 1e15, 12.0, 1e5, 1e10, 30.0])
    b = np.array([1.0, 1e10, 50.0, 3.5, 2000.0, 0.1, 9.0, 1e-3, -2.5, -7.5])
    got = S.betaln(xp.asarray(a, device=tier), xp.asarray(b, device=tier))
    ref = [_mpmath_reference(lambda mp, u, v=v: mp.log(abs(mp.beta(u, v))), [u])[0]
           for u, v in zip(a, b)]
    _check(got, ref, "float64", 64, 0, what="betaln large")


@pytest.mark.parametrize("name", ["xlogy", "xlog1py", "rel_entr", "betaln"])
def test_binary_broadcasting_and_scalars(tier, name):
    a = RNG.uniform(0.1, 3, (3, 1))
    b = RNG.uniform(0.1, 3, (1, 4))
    f, ref = getattr(S, name), getattr(sc, name)
    got = f(xp.asarray(a, device=tier), xp.asarray(b, device=tier))
    assert got.shape == (3, 4)
    _check(got, ref(a, b), "float64", 64, 8)
    if name == "betaln":
        return                                     # the rest is shared argument handling
    _check(f(2.5, xp.asarray(b, device=tier)), ref(2.5, b), "float64", 64, 8)
    b32 = b.astype(np.float32)
    got32 = f(xp.asarray(b32, device=tier), 0.75)
    _check(got32, ref(b32.astype(np.float64), 0.75), "float32", 64, 8)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_polygamma_matches_scipy(tier, dtype):
    """n = 0..4 broadcast against x (n other than a non-negative integer gives nan)."""
    n = np.array([0.0, 1.0, 2.0, 3.0, 4.0, -1.0, 1.5, np.nan, np.inf])[:, None]
    x = np.concatenate([_u(0.05, 30, 40), GRID, [-3.0, -1.5, 1e3]])[None, :].astype(dtype)
    got = S.polygamma(xp.asarray(n.astype(dtype), device=tier), xp.asarray(x, device=tier))
    valid = (n >= 0) & (n == np.floor(n)) & np.isfinite(n)
    ref = np.where(valid, sc.polygamma(np.where(valid, n, 0).astype(int), x.astype(np.float64)),
                   np.nan)
    # XLA's polygamma (a Hurwitz zeta sum) and SciPy's each lose up to ~2e3 eps for n >= 2
    # (polygamma(4, 3.5): XLA -0.0679959995067065, SciPy -0.0679959995067561, mpmath
    # -0.0679959995067314)
    _check(got, ref, dtype, 4096 if dtype == "float64" else 512, 8, what=f"polygamma {dtype}")


# ----------------------------------------------------------------------------- reductions

def _lse_cases():
    a = RNG.normal(size=(3, 4, 5)) * 3
    a[0, 0, :2] = [-np.inf, 700.0]
    b = RNG.uniform(-1, 2, size=(4, 5))
    b[1, 1] = 0.0
    return a, b


@pytest.mark.parametrize("axis,keepdims", [(None, False), (0, True), (-1, False),
                                           ((0, 2), False), ((1,), True)])
def test_logsumexp_matches_scipy(tier, axis, keepdims):
    a, b = _lse_cases()
    A, B = xp.asarray(a, device=tier), xp.asarray(b, device=tier)
    got = S.logsumexp(A, axis=axis, keepdims=keepdims)
    out, sgn = S.logsumexp(A, axis=axis, b=B, keepdims=keepdims, return_sign=True)
    nosign = S.logsumexp(A, axis=axis, b=B, keepdims=keepdims)
    xp.eval(got, out, sgn, nosign)                 # one program
    ref = sc.logsumexp(a, axis=axis, keepdims=keepdims)
    assert got.shape == np.shape(ref)
    _check(got, ref, "float64", 8, 4)
    r_out, r_sgn = sc.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=True)
    _check(out, r_out, "float64", 64, 4)
    _check(sgn, r_sgn, "float64", 0, 0)
    _check(nosign, sc.logsumexp(a, axis=axis, b=b, keepdims=keepdims), "float64", 64, 4)


def test_logsumexp_special_cases(tier):
    rows = np.array([[1.0, 2.0, 3.0], [-np.inf, -np.inf, -np.inf], [np.inf, 1.0, 2.0],
                     [np.inf, -np.inf, 0.0], [np.nan, 1.0, 2.0], [1e308, 1e308, 0.0],
                     [-1000.0, -1000.0, -1001.0]])
    w = np.array([[1.0, -1.0, 0.5], [1.0, 1.0, 1.0], [0.0, 1.0, 1.0], [1.0, 1.0, 0.0],
                  [0.0, 2.0, 1.0], [1.0, -1.0, 1.0], [1.0, -1.0, 0.0]])
    A = xp.asarray(rows, device=tier)
    _check(S.logsumexp(A, axis=1), sc.logsumexp(rows, axis=1), "float64", 8, 0)
    for rs in (False, True):
        got = S.logsumexp(A, axis=1, b=xp.asarray(w, device=tier), return_sign=rs)
        ref = sc.logsumexp(rows, axis=1, b=w, return_sign=rs)
        for g, r in zip(got if rs else (got,), ref if rs else (ref,)):
            _check(g, r, "float64", 8, 0)
    # scalar weights and 0-d input
    _check(S.logsumexp(A[0], b=2.0), sc.logsumexp(rows[0], b=2.0), "float64", 8, 0)
    z = S.logsumexp(xp.asarray(1.5, device=tier))
    assert z.shape == () and float(z) == 1.5
    assert S.logsumexp(xp.asarray(1.5, device=tier), keepdims=True).shape == (1,)
    # empty
    e = S.logsumexp(xp.zeros((0, 3), device=tier), axis=0)
    assert e.shape == (3,) and (np.asarray(e) == -np.inf).all()
    out, sgn = S.logsumexp(xp.zeros((2, 0), device=tier), axis=1, return_sign=True)
    assert np.asarray(out).tolist() == [-np.inf, -np.inf] and np.asarray(sgn).tolist() == [-1, -1]
    # float32 stays float32
    r32 = S.logsumexp(xp.asarray(rows[:1].astype(np.float32), device=tier), axis=1)
    assert r32.dtype == xp.float32


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
def test_softmax_matches_scipy(tier, fn, axis):
    x = RNG.normal(size=(4, 6)) * 5
    x[0, 0] = 1000.0
    x[1, :] = -np.inf
    x[2, 1] = np.inf
    got = getattr(S, fn)(xp.asarray(x, device=tier), axis=axis)
    _check(got, getattr(sc, fn)(x, axis=axis), "float64", 8, 2)
    x32 = x.astype(np.float32)
    got32 = getattr(S, fn)(xp.asarray(x32, device=tier), axis=axis)
    _check(got32, getattr(sc, fn)(x32.astype(np.float64), axis=axis), "float32", 8, 2)


def test_errors():
    x = xp.asarray([1.0, 2.0])
    with pytest.raises(TypeError, match="erf"):
        S.erf([1.0, 2.0])
    with pytest.raises(TypeError, match="real"):
        S.gammaln(xp.asarray([1 + 2j]))
    with pytest.raises(TypeError, match="xlogy"):
        S.xlogy("a", x)
    with pytest.raises(TypeError, match="at least one"):
        S.betaln(1.0, 2.0)
    with pytest.raises(ValueError, match="broadcast"):
        S.rel_entr(x, xp.ones(3))
    with pytest.raises(IndexError):
        S.logsumexp(x, axis=1)
    with pytest.raises(IndexError):
        S.softmax(x, axis=2)
    with pytest.raises(TypeError, match="real"):
        S.logsumexp(xp.asarray([1j]))


# ----------------------------------------------------------------------------- derivatives

def _central(f, x, h=1e-6, scale=None):
    """Central differences with steps h * scale(x) (default max(1, |x|)); inverse
    functions scale by the distance to the edge of their domain."""
    step = h * (np.maximum(1.0, np.abs(x)) if scale is None else scale(x))
    up, down = x + step, x - step
    return (f(up) - f(down)) / (up - down)         # the steps as rounded


def _edge(lo, hi):
    return lambda x: np.minimum(1.0, np.minimum(x - lo, hi - x))


# name: (points, reference function, rtol[, step scale]); points avoid poles
GRAD = {
    "erf": (_u(-3, 3, 8), sc.erf, 1e-7),
    "erfc": (_u(-3, 3, 8), sc.erfc, 1e-7),
    "erfinv": (np.r_[_u(-0.95, 0.95, 6), 0.999, -0.9999], sc.erfinv, 1e-6, _edge(-1, 1)),
    "erfcinv": (np.r_[_u(0.05, 1.95, 6), 1e-8, 1.9999], sc.erfcinv, 1e-6, _edge(0, 2)),
    "ndtr": (_u(-6, 6, 8), sc.ndtr, 1e-7),
    "ndtri": (np.r_[_u(0.02, 0.98, 6), 1e-12, 0.999999], sc.ndtri, 1e-6, _edge(0, 1)),
    "log_ndtr": (np.r_[_u(-8, 8, 6), -25.0, -50.0], sc.log_ndtr, 1e-7),
    "gammaln": (np.r_[_u(0.1, 10, 6), 1.1, 1.95, -0.5, -2.7], sc.gammaln, 1e-7),
    "gamma": (np.r_[_u(0.1, 6, 6), -0.5, -2.7], sc.gamma, 1e-7),
    "digamma": (np.r_[_u(0.1, 10, 6), -0.5, -2.7], sc.digamma, 1e-6),
    "expit": (_u(-8, 8, 8), sc.expit, 1e-7),
    "logit": (_u(0.01, 0.99, 8), sc.logit, 1e-7),
    "log_expit": (_u(-30, 30, 8), sc.log_expit, 1e-7),
    "entr": (_u(0.05, 5, 8), sc.entr, 1e-7),
    "i0": (_u(-12, 12, 8), sc.i0, 1e-7),
    "i0e": (np.r_[_u(-12, 12, 6), 30.0, -0.01], sc.i0e, 1e-7),
    "i1": (_u(-12, 12, 8), sc.i1, 1e-7),
    "i1e": (np.r_[_u(-12, 12, 5), 30.0, 1e-4, 0.0], sc.i1e, 2e-6),     # a kink at 0
    "sinc": (np.r_[_u(-4, 4, 6), 0.0, 1e-4], sc.sinc, 1e-7),
}


@pytest.mark.parametrize("name", sorted(GRAD))
def test_unary_gradient(tier, name):
    x, ref, rtol, *scale = GRAD[name]
    f = getattr(S, name)
    g = xp.grad(lambda a: xp.sum(f(a)))(xp.asarray(x, device=tier))
    expected = _central(ref, x, scale=scale[0] if scale else None)
    np.testing.assert_allclose(np.asarray(g), expected, rtol=rtol, atol=1e-9, err_msg=name)


BINARY_GRAD = {
    "xlogy": ((_u(-2, 2, 6), _u(0.1, 3, 6)), 1e-7),
    "xlog1py": ((_u(-2, 2, 6), _u(-0.9, 3, 6)), 1e-7),
    "rel_entr": ((_u(0.1, 3, 6), _u(0.1, 3, 6)), 1e-7),
    "betaln": ((np.r_[_u(0.2, 5, 3), 20.0, 1e3, 9.0], np.r_[_u(0.2, 5, 3), 30.0, 2.5, 1e4]), 1e-6),
}


@pytest.mark.parametrize("name", sorted(BINARY_GRAD))
def test_binary_gradient(tier, name):
    (a, b), rtol = BINARY_GRAD[name]
    f, ref = getattr(S, name), getattr(sc, name)
    ga, gb = xp.grad(lambda u, v: xp.sum(f(u, v)), argnums=(0, 1))(
        xp.asarray(a, device=tier), xp.asarray(b, device=tier))
    np.testing.assert_allclose(np.asarray(ga), _central(lambda t: ref(t, b), a), rtol=rtol, atol=1e-9)
    np.testing.assert_allclose(np.asarray(gb), _central(lambda t: ref(a, t), b), rtol=rtol, atol=1e-9)


def test_xlogy_derivative_at_zero(tier):
    """d/dx x log(y) is log(y) at x = 0 too; d/dy is 0 there, even where log(y) is -inf."""
    x = xp.asarray([0.0, 0.0, 0.0], device=tier)
    y = xp.asarray([0.5, 2.0, 0.0], device=tier)
    gx, gy = xp.grad(lambda u, v: xp.sum(S.xlogy(u, v)), argnums=(0, 1))(x, y)
    np.testing.assert_allclose(np.asarray(gx)[:2], np.log([0.5, 2.0]), rtol=1e-15)
    assert np.asarray(gy).tolist() == [0.0, 0.0, 0.0]


def test_polygamma_gradient(tier):
    n = np.array([0.0, 1.0, 2.0, 1.0, 3.0])
    x = np.array([0.7, 2.5, 1.3, -0.4, -1.6])
    g = xp.grad(lambda v: xp.sum(S.polygamma(xp.asarray(n, device=tier), v)))(
        xp.asarray(x, device=tier))
    np.testing.assert_allclose(np.asarray(g), sc.polygamma(n.astype(int) + 1, x), rtol=1e-10)


@pytest.mark.parametrize("name", ["logsumexp", "softmax", "log_softmax"])
def test_reduction_gradient(tier, name):
    x = RNG.normal(size=(3, 4)) * 2
    w = RNG.normal(size=(3, 4))
    f, ref = getattr(S, name), getattr(sc, name)
    g = xp.grad(lambda a: xp.sum(f(a, axis=1) * (xp.asarray(w, device=tier) if name != "logsumexp"
                                                 else 1.0)))(xp.asarray(x, device=tier))

    def scalar(v):
        r = ref(v, axis=1)
        return np.sum(r * w) if name != "logsumexp" else np.sum(r)

    expected = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = 1e-6
        expected[i] = (scalar(x + e) - scalar(x - e)) / 2e-6
    np.testing.assert_allclose(np.asarray(g), expected, rtol=1e-6, atol=1e-9)


def test_logsumexp_gradient_with_weights_and_large_values(tier):
    a = np.array([[1000.0, 999.0, -5.0], [0.5, 0.25, 3.0]])
    b = np.array([[1.0, 2.0, 0.5], [1.0, 0.0, 2.0]])
    g = xp.grad(lambda u: xp.sum(S.logsumexp(u, axis=1, b=xp.asarray(b, device=tier))))(
        xp.asarray(a, device=tier))
    e = b * np.exp(a - a.max(axis=1, keepdims=True))
    np.testing.assert_allclose(np.asarray(g), e / e.sum(axis=1, keepdims=True), rtol=1e-12)


def test_forward_mode_matches_reverse(tier):
    """jvp against grad through each kind of derivative rule (one program each way): the
    CHLO primitives' rules (erf, digamma, i1e), the formulas of compositions (erfinv,
    gamma, log_ndtr, logit, i0e) and of a two-argument one (xlogy)."""
    names = ["erf", "digamma", "i1e", "erfinv", "gamma", "log_ndtr", "logit", "i0e", "xlogy"]
    x = xp.asarray(np.tile([0.15, 0.4, 0.85], (len(names), 1)), device=tier)

    def f(a):
        return xp.stack([S.xlogy(a[i], a[i] + 1.0) if n == "xlogy" else getattr(S, n)(a[i])
                         for i, n in enumerate(names)])

    _, t = xp.jvp(f, (x,), (xp.ones_like(x),))
    g = xp.grad(lambda a: xp.sum(f(a)))(x)
    np.testing.assert_allclose(np.asarray(t), np.asarray(g), rtol=1e-12, err_msg=str(names))


@pytest.mark.parametrize("name,x", [("ndtri", [0.001, 0.3, 0.9]), ("erfinv", [-0.95, 0.2, 0.99]),
                                    ("i0e", [-3.0, 0.5, 12.0]), ("i1e", [-3.0, 0.5, 12.0]),
                                    ("gammaln", [0.3, 1.5, -0.5]), ("digamma", [0.3, 2.5, -0.5]),
                                    ("log_ndtr", [-30.0, -2.0, 3.0])])
def test_second_derivative(tier, name, x):
    """grad of grad against central differences of grad."""
    f = getattr(S, name)
    d1 = xp.grad(lambda a: xp.sum(f(a)))
    d2 = xp.grad(lambda a: xp.sum(d1(a)))
    x = np.array(x)
    second = np.asarray(d2(xp.asarray(x, device=tier)))
    near = {"ndtri": _edge(0, 1), "erfinv": _edge(-1, 1)}.get(name, lambda v: 1.0)
    h = 1e-5 * np.maximum(1.0, np.abs(x)) * near(x)
    up = np.asarray(d1(xp.asarray(x + h, device=tier)))
    down = np.asarray(d1(xp.asarray(x - h, device=tier)))
    np.testing.assert_allclose(second, (up - down) / (2 * h), rtol=1e-5, atol=1e-8)


# ----------------------------------------------------------------------------- SciPy dispatch

def test_scipy_dispatches_to_tlaloc():
    """With SCIPY_ARRAY_API=1, scipy.special finds tlaloc.special through
    x.__array_namespace__().special. At SciPy 1.17, erf & co (the functions SciPy lists for
    alternative backends) return tlaloc arrays computed by tlaloc; logsumexp, softmax and
    log_softmax are SciPy's own array-API code running on tlaloc's namespace; erfcinv and
    log_expit are not in SciPy's list and convert to NumPy."""
    code = textwrap.dedent("""
        import json
        import numpy as np
        import scipy.special as sc
        import tlaloc as xp
        x = xp.asarray([0.1, 0.5, 2.0])
        out = {}
        for name in ["erf", "gammaln", "ndtri", "i0e", "digamma", "sinc"]:
            r = getattr(sc, name)(x)
            out[name] = [type(r).__module__, np.asarray(r).tolist()]
        r = sc.xlogy(x, x)
        out["xlogy"] = [type(r).__module__, np.asarray(r).tolist()]
        r = sc.logsumexp(x)
        out["logsumexp"] = [type(r).__module__, float(r)]
        r = sc.erfcinv(x)
        out["erfcinv"] = [type(r).__module__, np.asarray(r).tolist()]
        print(json.dumps(out))
    """)
    env = dict(os.environ, SCIPY_ARRAY_API="1")
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    import json
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    x = np.array([0.1, 0.5, 2.0])
    for name in ["erf", "gammaln", "ndtri", "i0e", "digamma", "sinc"]:
        module, values = out[name]
        assert module.startswith("tlaloc"), (name, module)
        np.testing.assert_allclose(values, getattr(sc, name)(x), rtol=1e-13, equal_nan=True)
    assert out["xlogy"][0].startswith("tlaloc")
    np.testing.assert_allclose(out["xlogy"][1], sc.xlogy(x, x), rtol=1e-14)
    assert out["logsumexp"][0].startswith("tlaloc")
    np.testing.assert_allclose(out["logsumexp"][1], sc.logsumexp(x), rtol=1e-14)
    assert out["erfcinv"][0] == "numpy"
