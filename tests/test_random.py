"""tlaloc.random: the cipher against known answers and a NumPy reference, bit-compatibility
with jax.random (when jax is installed), the samplers against SciPy's distributions at fixed
seeds on both tiers, keys through jit / grad / export, the Generator under jit, and bad
input."""
import math

import numpy as np
import pytest
import scipy.special as sps
import scipy.stats as st

import tlaloc as xp
from tlaloc import random as xr
from tlaloc.random import _core

# ----------------------------------------------------------------------------- NumPy reference
#
# Threefry-2x32 (20 rounds) and jax's partitionable layout, written independently of
# tlaloc's graph: uint32 NumPy arithmetic wraps like the primitives do.

_ROT = ((13, 15, 26, 6), (17, 29, 16, 24))


def ref_threefry(k0, k1, x0, x1):
    u = np.uint32
    k0, k1 = u(k0), u(k1)
    x0, x1 = np.asarray(x0, np.uint32).copy(), np.asarray(x1, np.uint32).copy()
    ks = [k0, k1, k0 ^ k1 ^ u(0x1BD11BDA)]
    x0 = x0 + ks[0]
    x1 = x1 + ks[1]
    for g in range(5):
        for r in _ROT[g % 2]:
            x0 = x0 + x1
            x1 = (x1 << u(r)) | (x1 >> u(32 - r))
            x1 = x1 ^ x0
        x0 = x0 + ks[(g + 1) % 3]
        x1 = x1 + ks[(g + 2) % 3] + u(g + 1)
    return x0, x1


def ref_key(seed):
    return np.array([seed >> 32, seed & 0xFFFFFFFF], np.uint32)


def ref_blocks(key, shape):
    n = math.prod(shape)
    i = np.arange(n, dtype=np.uint64)
    y0, y1 = ref_threefry(key[0], key[1], (i >> np.uint64(32)).astype(np.uint32),
                          (i & np.uint64(0xFFFFFFFF)).astype(np.uint32))
    return y0.reshape(shape), y1.reshape(shape)


def ref_bits(key, shape, dtype):
    y0, y1 = ref_blocks(key, shape)
    if dtype == np.uint64:
        return (y0.astype(np.uint64) << np.uint64(32)) | y1.astype(np.uint64)
    return (y0 ^ y1).astype(dtype)


def ref_split(key, n):
    y0, y1 = ref_blocks(key, (n,))
    return np.stack([y0, y1], axis=1)


def ref_fold_in(key, d):
    y0, y1 = ref_threefry(key[0], key[1], np.uint32(0), np.uint32(d))
    return np.array([y0, y1], np.uint32)


_FLOAT = {"float16": (16, 10, np.uint16, 0x3C00), "bfloat16": (16, 7, np.uint16, 0x3F80),
          "float32": (32, 23, np.uint32, 0x3F800000), "float64": (64, 52, np.uint64, 0x3FF0000000000000)}


def ref_unit(key, shape, dtype):
    nbits, nmant, ut, one = _FLOAT[dtype]
    rng_bits = 8 if nmant < 8 else nbits
    b = ref_bits(key, shape, {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[rng_bits]).astype(ut)
    f = ((b >> ut(rng_bits - nmant)) | ut(one)).view(np.dtype(xp.bfloat16.numpy) if dtype == "bfloat16" else dtype)
    return (f.astype(np.float64) - 1.0).astype(f.dtype)


def ref_normal32(key, shape):
    f = ref_unit(key, shape, "float32")
    lo = np.nextafter(np.float32(-1), np.float32(0))
    u = np.maximum(lo, f * np.float32(2) + lo)
    return np.sqrt(2) * sps.erfinv(u.astype(np.float64))


def on(tier, seed):
    return xr.key(seed, device=tier)


def np_(x):
    return np.asarray(x)


# ----------------------------------------------------------------------------- the cipher

KNOWN = [  # Random123's known-answer vectors for threefry2x32_20: key, counter, output
    ((0x00000000, 0x00000000), (0x00000000, 0x00000000), (0x6B200159, 0x99BA4EFE)),
    ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
    ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0)),
]


def test_reference_cipher_known_answers():
    for k, x, y in KNOWN:
        out = ref_threefry(k[0], k[1], np.uint32(x[0]), np.uint32(x[1]))
        assert (int(out[0]), int(out[1])) == y


def test_cipher_known_answers(tier):
    counters = xp.asarray(np.array([x for _, x, _ in KNOWN], np.uint32), device=tier)
    for i, (k, _, y) in enumerate(KNOWN):
        w = _core.key_words("test", xp.asarray(np.array(k, np.uint32), device=tier))
        for output in ("pair", "xor", "wide"):
            got = np_(xp.Array._from_node(_core.threefry2x32(
                w[0], w[1], counters[:, 0]._node, counters[:, 1]._node, output)))[i]
            want = {"pair": list(y), "xor": y[0] ^ y[1], "wide": y[0] << 32 | y[1]}[output]
            assert np.array_equal(got, want), (output, got, want)


@pytest.mark.parametrize("dtype,shape", [("uint32", (7,)), ("uint32", ()), ("uint64", (3, 5)),
                                         ("uint16", (1001,)), ("uint8", (2, 0, 3)),
                                         ("uint32", (4, 1, 6))])
def test_bits_match_the_reference(tier, dtype, shape):
    for seed in (0, 42, 2**40 + 3):
        got = xr.bits(on(tier, seed), shape, dtype=getattr(xp, dtype))
        assert got.shape == shape and got.dtype == getattr(xp, dtype)
        np.testing.assert_array_equal(np_(got), ref_bits(ref_key(seed), shape, np.dtype(dtype)))


def test_keys_split_and_fold_in_match_the_reference(tier):
    for seed in (0, 1, 42, 2**32 + 7, 2**64 - 1):
        np.testing.assert_array_equal(np_(on(tier, seed)), ref_key(seed))
    k = on(tier, 42)
    np.testing.assert_array_equal(np_(xr.split(k)), ref_split(ref_key(42), 2))
    np.testing.assert_array_equal(np_(xr.split(k, 5)), ref_split(ref_key(42), 5))
    assert xr.split(k, (2, 3)).shape == (2, 3, 2)
    np.testing.assert_array_equal(np_(xr.split(k, (2, 3))).reshape(6, 2), ref_split(ref_key(42), 6))
    for d in (0, 3, 2**32 - 1):
        np.testing.assert_array_equal(np_(xr.fold_in(k, d)), ref_fold_in(ref_key(42), d))
    # split(key, n)[i] is fold_in(key, i): the partitionable construction
    np.testing.assert_array_equal(np_(xr.split(k, 4)[3]), np_(xr.fold_in(k, 3)))
    # an integer array as fold_in data, and as a seed (a traced seed in jit)
    np.testing.assert_array_equal(np_(xr.fold_in(k, xp.asarray(3, device=tier))), ref_fold_in(ref_key(42), 3))
    for seed in (5, 2**33 + 1):
        s = xp.asarray(seed, dtype=xp.uint64, device=tier)
        np.testing.assert_array_equal(np_(xr.key(s)), ref_key(seed))
    np.testing.assert_array_equal(np_(xr.key(xp.asarray(-1, dtype=xp.int32, device=tier))),
                                  np.array([0, 0xFFFFFFFF], np.uint32))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_uniform_is_the_reference_bit_for_bit(tier, dtype):
    d = getattr(xp, dtype)
    got = xr.uniform(on(tier, 11), shape=(3001,), dtype=d)
    assert got.dtype == d
    want = ref_unit(ref_key(11), (3001,), dtype)
    np.testing.assert_array_equal(np_(got).view(np.uint8), want.view(np.uint8))
    a = np_(got).astype(np.float64)
    assert a.min() >= 0 and a.max() < 1


def test_uniform_bounds_and_normal_match_the_reference(tier):
    k = on(tier, 5)
    f = ref_unit(ref_key(5), (4000,), "float32")
    got = np_(xr.uniform(k, -2.0, 3.0, (4000,), dtype=xp.float32))
    np.testing.assert_allclose(got, np.maximum(np.float32(-2), f * np.float32(5) - np.float32(2)),
                               rtol=0, atol=5e-7)
    assert got.min() >= -2 and got.max() < 3
    z = np_(xr.normal(k, (4000,), dtype=xp.float32))
    np.testing.assert_allclose(z, ref_normal32(ref_key(5), (4000,)), rtol=1e-5, atol=1e-6)
    z64 = np_(xr.normal(k, (4000,), dtype=xp.float64))
    f64 = ref_unit(ref_key(5), (4000,), "float64")
    lo = np.nextafter(-1.0, 0.0)
    np.testing.assert_allclose(z64, np.sqrt(2) * sps.erfinv(np.maximum(lo, f64 * 2 + lo)), rtol=1e-11)


def test_exact_samplers_agree_across_tiers():
    """Samplers built from integer and exactly rounded operations give the same values on
    the interpreter and the compiled tier."""
    draws = {
        "bits": lambda k: xr.bits(k, (100,), dtype=xp.uint64),
        "uniform": lambda k: xr.uniform(k, shape=(100,), dtype=xp.float32),
        "uniform_bounds": lambda k: xr.uniform(k, -3.0, 2.5, (1001,), dtype=xp.float32),
        "integers": lambda k: xr.integers(k, -1000, 10**12, (100,)),
        "integers_int8": lambda k: xr.integers(k, -128, 128, (100,), dtype=xp.int8),
        "bernoulli": lambda k: xr.bernoulli(k, 0.3, (100,)),
        "permutation": lambda k: xr.permutation(k, 100),
        "choice": lambda k: xr.choice(k, 50, (10,), replace=False),
    }
    xp.config.update(execution="compiled")
    for name, draw in draws.items():
        a = np_(draw(xr.key(9, device=xp.device("interpreter"))))
        b = np_(draw(xr.key(9, device=xp.device("cpu"))))
        np.testing.assert_array_equal(a, b, err_msg=name)


# ----------------------------------------------------------------------------- jax

class TestJaxBits:
    """Bit-compatibility with jax.random (default threefry, jax_threefry_partitionable=True)
    on the compiled CPU tier: run when jax is installed (tlaloc never imports it)."""

    @pytest.fixture(autouse=True)
    def _jax(self):
        self.jax = pytest.importorskip("jax")
        if not self.jax.config.jax_threefry_partitionable:
            pytest.skip("jax_threefry_partitionable is off")
        xp.config.update(execution="compiled")

    def same(self, a, b):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape
        if a.dtype.kind == "f":
            np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))
        else:
            np.testing.assert_array_equal(a.astype(np.int64), b.astype(np.int64))

    def test_keys_bits_uniform_normal(self):
        jax = self.jax
        for seed in (0, 2**31 + 5):
            k, jk = xr.key(seed), jax.random.key(seed)
            self.same(k, jax.random.key_data(jk))
            self.same(xr.split(k, 3), jax.random.key_data(jax.random.split(jk, 3)))
            self.same(xr.fold_in(k, 7), jax.random.key_data(jax.random.fold_in(jk, 7)))
            for d in ("uint8", "uint16", "uint32"):
                self.same(xr.bits(k, (257, 3), getattr(xp, d)), jax.random.bits(jk, (257, 3), d))
            for d in ("float16", "bfloat16", "float32"):
                self.same(xr.uniform(k, shape=(1001,), dtype=getattr(xp, d)),
                          jax.random.uniform(jk, (1001,), d))
            # jax's XLA contracts f * (max - min) + min into an FMA; tlaloc rounds the
            # product as written: one rounding of the product (at most 5.5) apart
            np.testing.assert_allclose(
                np.asarray(xr.uniform(k, -3.0, 2.5, (1001,), xp.float32)),
                np.asarray(jax.random.uniform(jk, (1001,), minval=-3.0, maxval=2.5)),
                rtol=0, atol=float(np.spacing(np.float32(5.5))))
            self.same(xr.normal(k, (20001,), xp.float32), jax.random.normal(jk, (20001,)))
            self.same(xr.normal(k, (3, 7), xp.float32), jax.random.normal(jk, (3, 7)))

    def test_other_samplers_that_follow_jax(self):
        jax = self.jax
        k, jk = xr.key(3), jax.random.key(3)
        self.same(xr.gumbel(k, (5000,), xp.float32), jax.random.gumbel(jk, (5000,)))
        logits = np.log(np.array([0.1, 0.2, 0.3, 0.4], np.float32))
        self.same(xr.categorical(k, xp.asarray(logits), shape=(5000,)),
                  jax.random.categorical(jk, logits, shape=(5000,)))
        self.same(xr.permutation(k, 1000), jax.random.permutation(jk, 1000))
        x = np.arange(24.0, dtype=np.float32).reshape(4, 6)
        self.same(xr.permutation(k, xp.asarray(x), axis=1), jax.random.permutation(jk, x, axis=1))

    def test_64_bit(self):
        jax = self.jax
        previous = jax.config.jax_enable_x64
        jax.config.update("jax_enable_x64", True)
        try:
            k, jk = xr.key(2**40 + 9), jax.random.key(2**40 + 9)
            self.same(k, jax.random.key_data(jk))
            self.same(xr.bits(k, (999,), xp.uint64), jax.random.bits(jk, (999,), "uint64"))
            self.same(xr.uniform(k, shape=(999,), dtype=xp.float64), jax.random.uniform(jk, (999,), "float64"))
            self.same(xr.normal(k, (999,), xp.float64), jax.random.normal(jk, (999,), "float64"))
        finally:
            jax.config.update("jax_enable_x64", previous)


# ----------------------------------------------------------------------------- distributions

N = 20000


def ks(sample, cdf, *args):
    a = np.asarray(sample).astype(np.float64).ravel()
    assert np.isfinite(a).all()
    return st.kstest(a, cdf, args=args).pvalue


CONTINUOUS = {
    # name: (draw(key), scipy cdf, its args, mean, variance)
    "uniform": (lambda k: xr.uniform(k, -2.0, 3.0, (N,)), st.uniform.cdf, (-2, 5), 0.5, 25 / 12),
    "normal": (lambda k: xr.normal(k, (N,), loc=1.5, scale=2.0), st.norm.cdf, (1.5, 2.0), 1.5, 4.0),
    "exponential": (lambda k: xr.exponential(k, (N,), scale=2.0), st.expon.cdf, (0, 2.0), 2.0, 4.0),
    "gumbel": (lambda k: xr.gumbel(k, (N,)), st.gumbel_r.cdf, (), np.euler_gamma, np.pi ** 2 / 6),
    "laplace": (lambda k: xr.laplace(k, (N,), loc=-1.0), st.laplace.cdf, (-1.0,), -1.0, 2.0),
    "truncated_normal": (lambda k: xr.truncated_normal(k, -1.0, 2.0, (N,)), st.truncnorm.cdf, (-1.0, 2.0),
                         st.truncnorm.mean(-1, 2), st.truncnorm.var(-1, 2)),
    "truncated_normal_tail": (lambda k: xr.truncated_normal(k, 5.0, 7.0, (N,)), st.truncnorm.cdf, (5.0, 7.0),
                              st.truncnorm.mean(5, 7), st.truncnorm.var(5, 7)),
    "gamma_0.3": (lambda k: xr.gamma(k, 0.3, (N,)), st.gamma.cdf, (0.3,), 0.3, 0.3),
    "gamma_1": (lambda k: xr.gamma(k, 1.0, (N,), scale=3.0), st.gamma.cdf, (1.0, 0, 3.0), 3.0, 9.0),
    "gamma_4.5": (lambda k: xr.gamma(k, 4.5, (N,)), st.gamma.cdf, (4.5,), 4.5, 4.5),
    "beta_2_5": (lambda k: xr.beta(k, 2.0, 5.0, (N,)), st.beta.cdf, (2, 5), 2 / 7, st.beta.var(2, 5)),
    "beta_half": (lambda k: xr.beta(k, 0.5, 0.5, (N,)), st.beta.cdf, (0.5, 0.5), 0.5, 0.125),
}


def _moments_ok(a, mean, var, n):
    a = np.asarray(a).astype(np.float64).ravel()
    # the sample mean's standard error is sqrt(var / n); 5 of them at a fixed seed
    assert abs(a.mean() - mean) < 5 * math.sqrt(var / n), (a.mean(), mean)
    assert abs(a.var() / var - 1) < 0.08, (a.var(), var)


@pytest.mark.parametrize("name", sorted(CONTINUOUS))
def test_continuous_samplers_match_scipy(tier, name):
    draw, cdf, args, mean, var = CONTINUOUS[name]
    a = np_(draw(on(tier, 2024)))
    assert a.shape == (N,) and a.dtype == np.float64
    assert ks(a, cdf, *args) > 1e-3, name
    _moments_ok(a, mean, var, N)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_float_dtypes(tier, dtype):
    d = getattr(xp, dtype)
    k = on(tier, 77)
    for name, draw, cdf, args in [
            ("normal", lambda k: xr.normal(k, (N,), d), st.norm.cdf, ()),
            ("uniform", lambda k: xr.uniform(k, 0.0, 1.0, (N,), d), st.uniform.cdf, ()),
            ("exponential", lambda k: xr.exponential(k, (N,), d), st.expon.cdf, ()),
            ("gamma", lambda k: xr.gamma(k, 2.0, (N,), d), st.gamma.cdf, (2.0,)),
            ("truncated_normal", lambda k: xr.truncated_normal(k, -0.5, 1.5, (N,), d), st.truncnorm.cdf, (-0.5, 1.5))]:
        x = draw(k)
        assert x.dtype == d, name
        # the rounding to 16-bit floats moves the CDF by up to half a spacing
        p = ks(np_(x), cdf, *args)
        assert p > (1e-3 if d.bits > 16 else 1e-9), (name, p)


def test_dirichlet_and_multivariate_normal(tier):
    alpha = xp.asarray([0.5, 2.0, 3.5], device=tier)
    x = np_(xr.dirichlet(on(tier, 1), alpha, (N,)))
    assert x.shape == (N, 3)
    np.testing.assert_allclose(x.sum(axis=1), 1.0, rtol=1e-12)
    for i, ai in enumerate([0.5, 2.0, 3.5]):     # marginals are Beta(a_i, sum - a_i)
        assert ks(x[:, i], st.beta.cdf, ai, 6.0 - ai) > 1e-3
    mean = np.array([1.0, -2.0, 0.5])
    cov = np.array([[2.0, 0.6, 0.0], [0.6, 1.0, -0.3], [0.0, -0.3, 0.5]])
    y = np_(xr.multivariate_normal(on(tier, 2), xp.asarray(mean, device=tier),
                                   xp.asarray(cov, device=tier), (N,)))
    assert y.shape == (N, 3)
    np.testing.assert_allclose(y.mean(axis=0), mean, atol=5 * math.sqrt(2.0 / N))
    np.testing.assert_allclose(np.cov(y.T), cov, atol=0.06)
    for i in range(3):
        assert ks(y[:, i], st.norm.cdf, mean[i], math.sqrt(cov[i, i])) > 1e-3
    # eigh admits a semi-definite covariance
    semi = np.array([[1.0, 1.0], [1.0, 1.0]])
    z = np_(xr.multivariate_normal(on(tier, 3), xp.zeros(2, device=tier), semi, (2000,), method="eigh"))
    np.testing.assert_allclose(z[:, 0], z[:, 1], atol=1e-6)


def chi2_p(counts, probs):
    counts = np.asarray(counts, np.float64)
    expected = np.asarray(probs, np.float64) * counts.sum()
    return st.chisquare(counts, expected).pvalue


def test_integers(tier):
    k = on(tier, 8)
    a = np_(xr.integers(k, -128, 128, (256 * 200,), dtype=xp.int8))
    assert a.dtype == np.int8 and a.min() == -128 and a.max() == 127
    assert chi2_p(np.bincount(a.astype(np.int64) + 128, minlength=256), np.full(256, 1 / 256)) > 1e-3
    b = np_(xr.integers(k, 7, shape=(N,)))                # [0, 7), int64
    assert b.dtype == np.int64 and b.min() == 0 and b.max() == 6
    assert chi2_p(np.bincount(b, minlength=7), np.full(7, 1 / 7)) > 1e-3
    c = np_(xr.integers(k, 0, 2**64, (N,), dtype=xp.uint64))   # the full range of uint64
    assert c.dtype == np.uint64 and int(c.max()) > 2**63
    for shift in (0, 30, 60):   # low, middle and high bits are uniform
        assert chi2_p(np.bincount(((c >> np.uint64(shift)) & np.uint64(15)).astype(np.int64), minlength=16),
                      np.full(16, 1 / 16)) > 1e-3
    d = np_(xr.integers(k, -2**63, 2**63 - 1, (N,), dtype=xp.int64))   # span 2**64 - 1
    assert chi2_p(np.bincount((d >> 60) + 8, minlength=16), np.full(16, 1 / 16)) > 1e-3
    e = np_(xr.integers(k, 2**64 - 3, 2**64, (300,), dtype=xp.uint64))
    assert set(e.tolist()) == {2**64 - 3, 2**64 - 2, 2**64 - 1}
    # array bounds broadcast; low >= high gives low
    lo = xp.asarray([0, 10, 5], device=tier)
    hi = xp.asarray([3, 20, 5], device=tier)
    f = np_(xr.integers(k, lo, hi, (1000, 3)))
    assert (f[:, 0] >= 0).all() and (f[:, 0] < 3).all() and (f[:, 1] >= 10).all() and (f[:, 1] < 20).all()
    assert (f[:, 2] == 5).all() and set(f[:, 0].tolist()) == {0, 1, 2}
    g = np_(xr.integers(k, 250, 256, (600,), dtype=xp.uint8))
    assert set(g.tolist()) == {250, 251, 252, 253, 254, 255}


def test_bernoulli_categorical_choice(tier):
    k = on(tier, 12)
    b = np_(xr.bernoulli(k, 0.3, (N,)))
    assert b.dtype == np.bool_ and st.binomtest(int(b.sum()), N, 0.3).pvalue > 1e-3
    assert not np_(xr.bernoulli(k, 1e-12, (N,))).any() and np_(xr.bernoulli(k, 1.0, (5,))).all()
    assert not np_(xr.bernoulli(k, 0.0, (N,))).any()
    pa = np_(xr.bernoulli(k, xp.asarray([0.1, 0.9], device=tier), (N, 2)))
    assert st.binomtest(int(pa[:, 0].sum()), N, 0.1).pvalue > 1e-3
    assert st.binomtest(int(pa[:, 1].sum()), N, 0.9).pvalue > 1e-3
    probs = np.array([0.1, 0.2, 0.3, 0.4])
    c = np_(xr.categorical(k, xp.log(xp.asarray(probs, device=tier)), shape=(N,)))
    assert chi2_p(np.bincount(c, minlength=4), probs) > 1e-3
    batch = np_(xr.categorical(k, xp.log(xp.asarray(np.tile(probs, (2, 1)), device=tier)), axis=1, shape=(N, 2)))
    assert batch.shape == (N, 2) and chi2_p(np.bincount(batch[:, 1], minlength=4), probs) > 1e-3
    d = np_(xr.choice(k, 4, (N,), p=probs))
    assert chi2_p(np.bincount(d, minlength=4), probs) > 1e-3
    e = np_(xr.choice(k, xp.asarray([10.0, 20.0, 30.0], device=tier), (N,)))
    assert set(e.tolist()) == {10.0, 20.0, 30.0}
    assert chi2_p([(e == v).sum() for v in (10, 20, 30)], [1 / 3] * 3) > 1e-3
    f = np_(xr.choice(k, 100, (40,), replace=False))
    assert len(set(f.tolist())) == 40 and f.min() >= 0 and f.max() < 100
    g = np_(xr.choice(k, 10, (10,), replace=False, p=np.full(10, 0.1)))
    assert sorted(g.tolist()) == list(range(10))
    h = np_(xr.choice(k, 5, (N,), p=[0.5, 0.0, 0.25, 0.25, 0.0]))
    assert set(h.tolist()) == {0, 2, 3}


def test_poisson(tier):
    k = on(tier, 31)
    for lam in (0.7, 4.0, 29.0, 2000.0):
        a = np_(xr.poisson(k, lam, (N,)))
        assert a.dtype == np.int64 and a.min() >= 0
        lo, hi = st.poisson.ppf(1e-4, lam), st.poisson.ppf(1 - 1e-4, lam)
        edges = np.unique(np.linspace(lo, hi, 25).astype(np.int64))
        counts = np.histogram(np.clip(a, edges[0], edges[-1]), bins=edges)[0]
        cdf = st.poisson.cdf(edges - 1, lam)
        probs = np.diff(cdf)
        probs[0] += cdf[0]
        probs[-1] += 1 - st.poisson.cdf(edges[-1] - 1, lam)
        assert chi2_p(counts, probs / probs.sum()) > 1e-3, lam
        _moments_ok(a, lam, lam, N)
    assert (np_(xr.poisson(k, 0.0, (100,))) == 0).all()
    lam = xp.asarray([0.5, 29.99, 30.0, 250.0], device=tier)
    m = np_(xr.poisson(k, lam, (N, 4))).mean(axis=0)
    np.testing.assert_allclose(m, [0.5, 29.99, 30.0, 250.0], rtol=0.03)


def test_permutation(tier):
    k = on(tier, 4)
    p = np_(xr.permutation(k, 10**5))
    np.testing.assert_array_equal(np.sort(p), np.arange(10**5))
    assert abs(np.corrcoef(p, np.arange(10**5))[0, 1]) < 0.02
    x = xp.reshape(xp.arange(12, device=tier), (3, 4))
    y = np_(xr.permutation(k, x, axis=1))
    np.testing.assert_array_equal(np.sort(y, axis=1), np_(x))
    np.testing.assert_array_equal(y[1] - y[0], np.full(4, 4))   # one reordering for every row
    # every ordering equally likely: the relative order of 4 consecutive entries takes each
    # of its 24 patterns alike
    patterns = np.argsort(p.reshape(-1, 4), axis=1) @ np.array([64, 16, 4, 1])
    counts = np.unique(patterns, return_counts=True)[1]
    assert len(counts) == 24 and chi2_p(counts, [1 / 24] * 24) > 1e-3
    # many keys through one compiled program
    f = xp.jit(lambda key: xr.permutation(key, 3))
    orders = {tuple(np_(f(key)).tolist()) for key in xr.split(k, 60)}
    assert len(orders) == 6


# ----------------------------------------------------------------------------- transformations

def test_new_keys_never_recompile():
    xp.config.update(execution="compiled")
    f = xp.jit(lambda key, x: x + xr.normal(key, x.shape))
    x = xp.zeros(5)
    before = len(xp.compile_log())
    outs = [np_(f(xr.key(s), x)) for s in range(4)]
    assert len(xp.compile_log()) - before == 1
    assert len({o.tobytes() for o in outs}) == 4
    # eager draws with new keys reuse the compiled program too
    xp.eval(xr.uniform(xr.key(0), shape=(64,)))
    xp.reset_cache_info()
    for s in range(1, 4):
        xp.eval(xr.uniform(xr.key(s), shape=(64,)))
    assert xp.cache_info()["compiles"] == 0
    # and fold_in with a Python int in a loop
    k = xr.key(1)
    xp.eval(xr.fold_in(k, 0))
    xp.reset_cache_info()
    for i in range(1, 4):
        xp.eval(xr.fold_in(k, i))
    assert xp.cache_info()["compiles"] == 0


def test_keys_through_grad(tier):
    def loss(w, key):
        return xp.sum(w * xr.normal(key, w.shape))

    w = xp.ones(6, device=tier)
    key = on(tier, 3)
    g = xp.grad(loss)(w, key)
    np.testing.assert_allclose(np_(g), np_(xr.normal(key, (6,))), rtol=1e-12)
    with pytest.raises(TypeError):
        xp.grad(loss, argnums=1)(w, key)     # a key has no derivative

    # reparameterized location and scale carry derivatives
    def mean_of(loc):
        return xp.mean(xr.normal(key, (1000,), loc=loc, scale=2.0))
    assert abs(float(xp.grad(mean_of)(xp.asarray(0.5, device=tier))) - 1.0) < 1e-12
    # the gamma family's shape parameters have no derivative: an error, not a silent zero
    a = xp.asarray(2.0, device=tier)
    with pytest.raises(NotImplementedError, match="gamma: the samples have no derivative"):
        xp.grad(lambda a: xp.sum(xr.gamma(key, a, (4,))))(a)
    with pytest.raises(NotImplementedError, match="dirichlet"):
        xp.grad(lambda a: xr.dirichlet(key, xp.stack([a, a]))[0])(a)
    g = xp.grad(lambda a: xp.sum(a * xr.gamma(key, xp.stop_gradient(a), (4,), scale=a)))(a)
    np.testing.assert_allclose(np_(g), 2 * np_(xp.sum(xr.gamma(key, 2.0, (4,)))) * 2, rtol=1e-12)


def test_keys_through_export():
    def f(key, x):
        return x * xr.uniform(key, shape=x.shape, dtype=xp.float32)

    x = xp.ones(4, dtype=xp.float32)
    g = xp.deserialize(xp.export(f)(xr.key(0), x).serialize())
    for s in (0, 7):
        np.testing.assert_array_equal(np_(g.call(xr.key(s), x)), np_(f(xr.key(s), x)))


def test_generator_sequence(tier):
    rng = xr.Generator(5, device=tier)
    k = on(tier, 5)
    for _ in range(3):
        k, sub = xr.split(k)
        np.testing.assert_array_equal(np_(rng.uniform(shape=(4,))), np_(xr.uniform(sub, shape=(4,))))
    np.testing.assert_array_equal(np_(rng.key), np_(k))
    assert rng.integers(0, 10, shape=5).shape == (5,)
    assert rng.normal((3, 4)).shape == (3, 4)
    assert rng.random((2,)).shape == (2,)
    a, b = rng.spawn(2)
    assert not np.array_equal(np_(a.uniform(shape=(3,))), np_(b.uniform(shape=(3,))))
    assert not np.array_equal(np_(xr.Generator().key), np_(xr.Generator().key))


def test_generator_inside_jit_compiles_once(tier):
    rng = xr.Generator(0, device=tier)
    reference = xr.Generator(0, device=tier)
    calls = []

    @xp.jit
    def step(x):
        calls.append(1)
        return x + rng.uniform(shape=x.shape, dtype=xp.float32), rng.integers(0, 100, shape=(3,))

    x = xp.zeros(4, dtype=xp.float32, device=tier)
    before = len(xp.compile_log())
    seen = set()
    for _ in range(4):
        u, i = step(x)
        np.testing.assert_array_equal(np_(u), np_(reference.uniform(shape=(4,), dtype=xp.float32)))
        np.testing.assert_array_equal(np_(i), np_(reference.integers(0, 100, shape=(3,))))
        seen.add(np_(u).tobytes())
    assert len(calls) == 1 and len(seen) == 4
    assert len(xp.compile_log()) - before <= 1
    np.testing.assert_array_equal(np_(rng.key), np_(reference.key))
    # a generator made inside the function is the function's own: same numbers each call
    g = xp.jit(lambda x: x + xr.Generator(3, device=tier).normal((4,), dtype=xp.float32))
    np.testing.assert_array_equal(np_(g(x)), np_(g(x)))
    with pytest.raises(ValueError, match="Generator"):
        xp.export(lambda x: x + rng.normal(x.shape))(x)


def test_named_shapes(tier):
    x = xr.normal(on(tier, 0), {"batch": 3, "feature": 2})
    assert x.shape == (3, 2) and x.names == ("batch", "feature")
    y = xr.integers(on(tier, 0), 0, 5, {"sample": 4})
    assert y.names == ("sample",)
    z = xr.dirichlet(on(tier, 0), xp.ones(3, device=tier), {"draw": 5})
    assert z.shape == (5, 3) and z.names == ("draw", None)
    loc = xp.zeros(3, device=tier, names=("feature",))
    w = xr.normal(on(tier, 0), (2, 3), loc=loc)
    assert w.names == (None, "feature")
    assert xp.sum(x, axis="batch").shape == (2,)


# ----------------------------------------------------------------------------- bad input

def test_bad_input():
    k = xr.key(0)
    with pytest.raises(TypeError, match="float"):
        xr.key(1.5)
    with pytest.raises(ValueError, match="non-negative"):
        xr.key(-1)
    with pytest.raises(ValueError, match="2\\*\\*64"):
        xr.key(2**64)
    with pytest.raises(TypeError):
        xr.key(True)
    with pytest.raises(TypeError, match="uint32"):
        xr.normal(xp.asarray([0, 1]), (3,))
    with pytest.raises(ValueError, match="shape \\(2,\\)"):
        xr.normal(xr.split(k, 3), (3,))
    with pytest.raises(TypeError, match="key"):
        xr.uniform(np.array([0, 1], np.uint32))
    with pytest.raises(ValueError, match="below high"):
        xr.integers(k, 5, 5)
    with pytest.raises(ValueError, match="outside"):
        xr.integers(k, 0, 300, dtype=xp.uint8)
    with pytest.raises(ValueError, match="outside"):
        xr.integers(k, -1, 3, dtype=xp.uint32)
    with pytest.raises(TypeError, match="integer"):
        xr.integers(k, 0, 3, dtype=xp.float32)
    for p in (-0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="\\[0, 1\\]"):
            xr.bernoulli(k, p)
    with pytest.raises(ValueError, match="positive definite"):
        xr.multivariate_normal(k, np.zeros(2), np.array([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(ValueError, match="positive definite"):
        xr.multivariate_normal(k, xp.zeros(2), xp.asarray([[1.0, 0.0], [0.0, -1.0]]))
    with pytest.raises(ValueError, match="semi-definite"):
        xr.multivariate_normal(k, xp.zeros(2), xp.asarray([[1.0, 0.0], [0.0, -1.0]]), method="eigh")
    with pytest.raises(ValueError, match="without replacement"):
        xr.choice(k, 5, (6,), replace=False)
    with pytest.raises(ValueError, match="p must have shape"):
        xr.choice(k, 5, (2,), p=[0.5, 0.5])
    with pytest.raises(ValueError, match="non-negative"):
        xr.choice(k, 2, p=[1.5, -0.5])
    for shape in ((3, -1), {"a": -2}, -4):
        with pytest.raises(ValueError, match="non-negative"):
            xr.normal(k, shape)
    with pytest.raises(TypeError, match="ints"):
        xr.normal(k, (2.0, 3))
    with pytest.raises(TypeError, match="shape="):
        xr.uniform(k, (3, 4))
    with pytest.raises(ValueError, match="broadcast"):
        xr.normal(k, (3,), loc=xp.zeros(4))
    with pytest.raises(ValueError, match="positive"):
        xr.gamma(k, 0.0)
    with pytest.raises(ValueError, match="positive"):
        xr.beta(k, 1.0, -2.0)
    with pytest.raises(ValueError, match="non-negative"):
        xr.poisson(k, -1.0)
    with pytest.raises(ValueError, match="below"):
        xr.truncated_normal(k, 2.0, 1.0)
    with pytest.raises(ValueError, match="below"):
        xr.uniform(k, 1.0, 0.0)
    with pytest.raises(TypeError, match="floating"):
        xr.normal(k, (2,), dtype=xp.int32)
    with pytest.raises(TypeError, match="uint"):
        xr.bits(k, (2,), dtype=xp.int32)
    with pytest.raises(ValueError, match="2\\*\\*32"):
        xr.fold_in(k, 2**32)
    with pytest.raises(TypeError):
        xr.fold_in(k, 1.0)
    with pytest.raises(ValueError):
        xr.split(k, -1)
    with pytest.raises(ValueError, match="batch shape"):
        xr.categorical(k, xp.zeros((2, 3)), shape=(4,))
    with pytest.raises(ValueError):
        xr.permutation(k, -3)
    with pytest.raises(TypeError):
        xr.permutation(k, 2.5)


def test_import_tlaloc_does_not_import_random():
    import subprocess
    import sys
    code = ("import sys, tlaloc; before = 'tlaloc.random' in sys.modules; "
            "tlaloc.random.key(0); print(before, 'tlaloc.random' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["False", "True"]


@pytest.mark.parametrize("draw", [
    lambda k: xp.random.normal(k, (10**12,)),
    lambda k: xp.random.bits(k, (10**6, 10**6)),
    lambda k: xp.random.uniform(k, shape={"a": 10**7, "b": 10**6}),
    lambda k: xp.random.integers(k, 0, 5, shape=(10**13,)),
])
def test_huge_draws_raise_at_the_call(draw):
    with pytest.raises(xp.ArrayTooLargeError):
        draw(xp.random.key(0))
