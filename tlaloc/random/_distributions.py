"""The samplers: each `(key, parameters..., shape=None, dtype=None)`, written with primitives.

Conventions:
- `shape=None` is the parameters' broadcast shape (() without array parameters); a given
  shape must be one the parameters broadcast to; a dict of axis names to sizes names the
  result's axes.
- `dtype=None` is the widest floating dtype among array parameters, else the default real
  floating dtype (float64). float16 and bfloat16 results are computed in float32 and rounded
  (except `uniform`, built on the dtype's own bits as jax builds it).
- Python-number parameters become program inputs (their values never enter the compiled
  program's structure), and are checked at the call; array parameters are not inspected.
"""
from __future__ import annotations

import builtins
import fractions
import math

import numpy as np

from .. import _dtypes as dt
from .._array import Array
from .._api import _ops
from .._api._core import axis_of, broadcast_to_shape, renamed
from ._core import U32, U64, V, bits_node, blocks, key_words, where
from ._params import Params, finish, float_dtype, parse_shape
from .._prims import lax

_MANT = {dt.float16: 10, dt.bfloat16: 7, dt.float32: 23, dt.float64: 52}
_UINT = {8: dt.uint8, 16: dt.uint16, 32: dt.uint32, 64: dt.uint64}
_ONE_BITS = {dt.float16: 0x3C00, dt.bfloat16: 0x3F80, dt.float32: 0x3F800000,
             dt.float64: 0x3FF0000000000000}
_SQRT2 = math.sqrt(2.0)

# Rejection samplers run a fixed number of proposal rounds (no data-dependent loop, so one
# program for every value) and keep the first accepted proposal; when every round of one
# sample rejects it takes the last proposal. That happens with probability below 4e-11 for
# gamma (Marsaglia-Tsang accepts at least 95.1% of proposals) and below 2e-9 for poisson
# (PTRS accepts at least 81% from lam = 30 on, 85% from 100). docs/random.md lists these.
GAMMA_ROUNDS = 8
POISSON_ROUNDS = 12
POISSON_SMALL = 30.0        # below: inverse CDF by sequential search; from it on: PTRS
POISSON_STEPS = 80          # terms of the search (P(X >= 80 | lam < 30) < 1e-13)


def _compute(d):
    return dt.float32 if d.bits < 32 else d


def _bc(x, shape):
    """A V broadcast to `shape` (0-d stays 0-d: elementwise primitives take it)."""
    if not x.shape or x.shape == tuple(shape):
        return x
    return V(broadcast_to_shape(x.n, tuple(shape)))


def _row(x, i):
    """Row i of a V of shape (R, *rest), as shape rest."""
    rest = x.shape[1:]
    s = lax.slice(x.n, start=(i,) + (0,) * len(rest), limit=(i + 1,) + rest,
                  strides=(1,) * (len(rest) + 1))
    return V(lax.reshape(s, shape=rest))


def subkeys(words, n):
    """n key word pairs from one (split's keys, as 0-d nodes)."""
    y0, y1 = blocks(words, (n,))
    out = []
    for i in range(n):
        out.append(tuple(lax.reshape(lax.slice(y, start=(i,), limit=(i + 1,), strides=(1,)),
                                     shape=()) for y in (y0, y1)))
    return out


# ----------------------------------------------------------------------------- uniform floats

def unit(words, shape, dtype):
    """Floats in [0, 1) of `dtype`: random mantissa bits under the exponent of 1.0, minus 1
    (jax.random.uniform's construction, bit for bit)."""
    nbits, nmant = dtype.bits, _MANT[dtype]
    rng_bits = 8 if nmant < 8 else nbits
    b = V(bits_node(words, shape, _UINT[rng_bits])).astype(_UINT[nbits])
    f = ((b >> (rng_bits - nmant)) | _ONE_BITS[dtype]).bitcast(dtype)
    return f - 1.0


def unit_words(words, shape, dtype, count):
    """`count` independent [0, 1) arrays of `shape` in float32 (both 32-bit words of each
    block) or float64 (64 bits a block)."""
    if dtype is dt.float32:
        nb = -(-count // 2)
        y0, y1 = blocks(words, (nb,) + tuple(shape))
        out = []
        for j in range(nb):
            for y in (y0, y1):
                w = _row(V(y), j)
                out.append(((w >> 9) | 0x3F800000).bitcast(dt.float32) - 1.0)
        return out[:count]
    y0, y1 = blocks(words, (count,) + tuple(shape))
    b = (V(y0).astype(U64) << 32) | V(y1).astype(U64)
    return [(((_row(b, j) >> 12) | _ONE_BITS[dt.float64]).bitcast(dt.float64) - 1.0)
            for j in range(count)]


def _normal_from_unit(f):
    """jax.random.normal from [0, 1) floats `f`: sqrt(2) * erf_inv(u), u uniform in
    (-1, 1) (as max(lo, 2 f + lo), lo = nextafter(-1, 0))."""
    d = f.dtype
    lo = np.nextafter(np.array(-1.0, d.numpy), np.array(0.0, d.numpy))
    span = np.array(1.0, d.numpy) - lo
    u = (f * builtins.float(span) + builtins.float(lo)).max(builtins.float(lo))
    return u.ap(lax.erf_inv) * builtins.float(np.array(_SQRT2, d.numpy))


def _check_key(name, key):
    words = key_words(name, key)
    return words, key.device


def _start(name, key, shape, **params):
    words, device = _check_key(name, key)
    sizes, names = parse_shape(name, shape)
    ps = Params(name, device, **params)
    return words, device, ps, ps.shape(sizes), names


def _affine(x, ps, shape, loc="loc", scale="scale"):
    """x * scale + loc, skipped for the default 0 and 1 (so the bits stay jax's)."""
    d = x.dtype
    if not (ps.is_static(scale) and ps.static(scale) == 1):
        x = x * V(ps.node(scale, d, shape))
    if not (ps.is_static(loc) and ps.static(loc) == 0):
        x = x + V(ps.node(loc, d, shape))
    return x


def _no_shape_as_param(name, **values):
    """A tuple, list or dict where a parameter belongs is most likely a shape given
    positionally (`uniform(key, (3, 4))`): say so."""
    for k, v in values.items():
        if isinstance(v, (tuple, list, dict)):
            raise TypeError(f"{name}: {k} must be a number or an array, got a "
                            f"{type(v).__name__}; give the shape as shape=...")


def uniform(key, minval=0.0, maxval=1.0, shape=None, dtype=None) -> Array:
    """Floats uniform in [minval, maxval). float32 (and float64, float16, bfloat16) values
    are jax.random.uniform's for the same key, bit for bit (`[0, 1)` on every backend;
    other bounds round `f * (maxval - minval) + minval` as the backend does, which XLA may
    contract to a fused multiply-add)."""
    _no_shape_as_param("uniform", minval=minval, maxval=maxval)
    words, device, ps, shape, names = _start("uniform", key, shape, minval=minval, maxval=maxval)
    d = float_dtype("uniform", dtype, minval, maxval)
    if ps.is_static("minval") and ps.is_static("maxval") and not ps.static("minval") < ps.static("maxval"):
        if not (math.isinf(ps.static("minval")) or math.isinf(ps.static("maxval"))):
            raise ValueError(f"uniform: minval ({ps.static('minval')}) must be below maxval "
                             f"({ps.static('maxval')})")
    f = unit(words, shape, d)
    if not (ps.is_static("minval") and ps.is_static("maxval") and ps.static("minval") == 0
            and ps.static("maxval") == 1):
        lo, hi = V(ps.node("minval", d, shape)), V(ps.node("maxval", d, shape))
        f = (f * (hi - lo) + lo).max(lo)
    return finish(f.n, names, ps.names)


def normal(key, shape=None, dtype=None, *, loc=0.0, scale=1.0) -> Array:
    """Standard normal floats (times `scale`, plus `loc`). float32 and float64 values are
    jax.random.normal's for the same key: bit for bit on the compiled CPU tier, within the
    erf_inv tolerance on the interpreter (docs/random.md)."""
    words, device, ps, shape, names = _start("normal", key, shape, loc=loc, scale=scale)
    d = float_dtype("normal", dtype, loc, scale)
    cd = _compute(d)
    z = _normal_from_unit(unit(words, shape, cd)).astype(d)
    return finish(_affine(z, ps, shape).n, names, ps.names)


def exponential(key, shape=None, dtype=None, *, scale=1.0) -> Array:
    """Exponential floats with mean `scale`: -log1p(-u), u uniform in [0, 1) (jax's)."""
    words, device, ps, shape, names = _start("exponential", key, shape, scale=scale, loc=0.0)
    _positive("exponential", ps, "scale")
    d = float_dtype("exponential", dtype, scale)
    cd = _compute(d)
    x = (-(-unit(words, shape, cd)).ap(lax.log1p)).astype(d)
    return finish(_affine(x, ps, shape).n, names, ps.names)


def gumbel(key, shape=None, dtype=None, *, loc=0.0, scale=1.0) -> Array:
    """Gumbel (maximum) floats: -log(-log(u)), u uniform in [tiny, 1) (jax's)."""
    words, device, ps, shape, names = _start("gumbel", key, shape, loc=loc, scale=scale)
    _positive("gumbel", ps, "scale")
    d = float_dtype("gumbel", dtype, loc, scale)
    x = _gumbel(words, shape, _compute(d)).astype(d)
    return finish(_affine(x, ps, shape).n, names, ps.names)


def _gumbel(words, shape, cd):
    tiny = builtins.float(np.finfo(cd.numpy).tiny)
    f = unit(words, shape, cd)
    u = (f * (1.0 - tiny) + tiny).max(tiny)
    return -(-u.ap(lax.log)).ap(lax.log)


def laplace(key, shape=None, dtype=None, *, loc=0.0, scale=1.0) -> Array:
    """Laplace floats: sign(u) log1p(-|u|), u uniform in (-1, 1) (jax's)."""
    words, device, ps, shape, names = _start("laplace", key, shape, loc=loc, scale=scale)
    _positive("laplace", ps, "scale")
    d = float_dtype("laplace", dtype, loc, scale)
    cd = _compute(d)
    lo = -1.0 + builtins.float(np.finfo(cd.numpy).epsneg)
    f = unit(words, shape, cd)
    u = (f * (1.0 - lo) + lo).max(lo)
    x = (u.ap(lax.sign) * (-u.ap(lax.abs)).ap(lax.log1p)).astype(d)
    return finish(_affine(x, ps, shape).n, names, ps.names)


def _positive(name, ps, k):
    if ps.is_static(k) and not ps.static(k) > 0:
        raise ValueError(f"{name}: {k} must be positive, got {ps.static(k)}")


def truncated_normal(key, lower, upper, shape=None, dtype=None) -> Array:
    """Standard normal floats conditioned on lower < x < upper, by the inverse CDF. The
    interval is reflected to the negative side when it lies above 0, where the CDF keeps its
    relative precision, so intervals far in a tail (|bound| up to ~37 in float64, ~13 in
    float32) are sampled accurately. Results lie strictly inside (lower, upper)."""
    import tlaloc as xp
    _no_shape_as_param("truncated_normal", lower=lower, upper=upper)
    words, device, ps, shape, names = _start("truncated_normal", key, shape, lower=lower, upper=upper)
    d = float_dtype("truncated_normal", dtype, lower, upper)
    if ps.is_static("lower") and ps.is_static("upper") and not ps.static("lower") < ps.static("upper"):
        raise ValueError(f"truncated_normal: lower ({ps.static('lower')}) must be below upper "
                         f"({ps.static('upper')})")
    cd = _compute(d)
    a, b = V(ps.node("lower", cd, shape)), V(ps.node("upper", cd, shape))
    flip = a > 0.0
    lo, hi = where(flip, -b, a), where(flip, -a, b)
    plo = V(xp.special.ndtr(Array._from_node(lo.n))._node)
    phi = V(xp.special.ndtr(Array._from_node(hi.n))._node)
    f = unit(words, shape, cd)
    u = plo + (phi - plo) * f
    z = V(xp.special.ndtri(Array._from_node(u.n))._node)
    z = where(flip, -z, z)
    inf = math.inf
    z = z.max(V(lax.nextafter(a.n, a.c(inf).n))).min(V(lax.nextafter(b.n, b.c(-inf).n)))
    return finish(z.astype(d).n, names, ps.names)


# ----------------------------------------------------------------------------- discrete

def bernoulli(key, p=0.5, shape=None) -> Array:
    """Booleans, True with probability p: 64 random bits below floor(p * 2**64), so a
    probability is resolved to 2**-64 (p a Python number must lie in [0, 1]; array values
    below 0 give False, above 1 True)."""
    _no_shape_as_param("bernoulli", p=p)
    words, device, ps, shape, names = _start("bernoulli", key, shape, p=p)
    b = V(bits_node(words, shape, U64))
    if ps.is_static("p"):
        pv = ps.static("p")
        if not 0.0 <= pv <= 1.0:
            raise ValueError(f"bernoulli: p must be in [0, 1], got {pv}")
        if pv == 1:     # certain: 2**64 does not fit the threshold
            return finish(lax.constant(shape=shape, dtype=dt.bool, value=True, device=device),
                          names)
        t = builtins.int(fractions.Fraction(pv) * (1 << 64))
        out = b < V(_scalar_input(t, U64, device))
        return finish(out.n, names)
    pa = V(ps.node("p", dt.float64, shape))
    t = (pa * 18446744073709551616.0).astype(U64)
    out = V(lax.bitwise_or((b < t).n, (pa >= 1.0).n))
    return finish(out.n, names, ps.names)


def _scalar_input(value, dtype, device):
    from .._api._core import scalar_node
    return scalar_node(value, dtype, device)


def _int_dtype(name, dtype):
    if dtype is None:
        return dt.DEFAULTS.integral
    d = dt.canonicalize(dtype, name)
    if d.kind not in dt.INTEGER_KINDS:
        raise TypeError(f"{name}: dtype must be an integer dtype, got {d}")
    return d


def _ordered_u64(x, kind):
    """An integer V mapped order-preservingly to uint64: v + 2**63 for signed values."""
    if kind == "u":
        return x.astype(U64)
    return x.astype(dt.int64).bitcast(U64) ^ (1 << 63)


def integers(key, low, high=None, shape=None, dtype=None) -> Array:
    """Integers uniform in [low, high) (`integers(key, n)`: [0, n)), of `dtype` (int64 by
    default). Python bounds may be any integers the dtype holds, `high` up to its maximum
    + 1 (the full range of uint64 is `integers(key, 0, 2**64, dtype=uint64)`); array bounds
    are converted to the dtype, and where low >= high the result is low. The offset is a
    64-bit random number modulo the span (bias below span / 2**64); for 64-bit dtypes whose
    span is not known to be at most 2**32 (or a power of two), up to 3 proposals are drawn
    and the first below the largest multiple of the span is kept (bias below
    (span / 2**64)**3)."""
    if high is None:
        low, high = 0, low
    _no_shape_as_param("integers", low=low, high=high)
    words, device, ps, shape, names = _start("integers", key, shape, low=low, high=high)
    d = _int_dtype("integers", dtype)
    lo_min, hi_max = dt.iinfo(d).min, dt.iinfo(d).max + 1
    for k in ("low", "high"):
        v = ps.values[k]
        if isinstance(v, Array):
            if v.dtype.kind not in dt.INTEGER_KINDS:
                raise TypeError(f"integers: {k} must be an integer array, got dtype {v.dtype}")
        elif not builtins.float(v).is_integer() or isinstance(v, (builtins.float, np.floating)):
            raise TypeError(f"integers: {k} must be an integer, got {v!r}")
    if ps.is_static("low") and not lo_min <= builtins.int(ps.static("low")) < hi_max:
        raise ValueError(f"integers: low {ps.static('low')} is outside the range of {d} "
                         f"[{lo_min}, {hi_max - 1}]")
    if ps.is_static("high") and not lo_min < builtins.int(ps.static("high")) <= hi_max:
        raise ValueError(f"integers: high {ps.static('high')} is outside the range of {d} "
                         f"and its maximum + 1 ({lo_min}, {hi_max}]")
    bias = (1 << 63) if d.kind == "i" else 0      # signed values map to uint64 in order

    def mapped(k):
        if ps.is_static(k):
            v = (builtins.int(ps.static(k)) + bias) % (1 << 64)
            return V(_scalar_input(v, U64, device))
        return _bc(_ordered_u64(V(lax.convert(ps.values[k]._node, dtype=d))
                                if ps.values[k].dtype is not d else V(ps.values[k]._node),
                                d.kind), shape)

    lo = mapped("low")
    if ps.is_static("low") and ps.is_static("high"):
        lv, hv = builtins.int(ps.static("low")), builtins.int(ps.static("high"))
        if not lv < hv:
            raise ValueError(f"integers: low ({lv}) must be below high ({hv})")
        n = hv - lv
        span = V(_scalar_input(n % (1 << 64), U64, device))
        rounds = 1 if n <= 1 << 32 or n & (n - 1) == 0 else 3
    else:
        hi = mapped("high")
        span = hi - lo                                # (mod 2**64: 0 is the full range)
        if not (ps.is_static("high") and builtins.int(ps.static("high")) == hi_max):
            span = where(hi <= lo, span.c(1), span)   # low >= high gives low
        rounds = 1 if d.bits < 64 else 3
    v = lo + _offset(words, shape, span, rounds)
    if d.kind == "i":
        out = (v ^ (1 << 63)).bitcast(dt.int64).astype(d)
    else:
        out = v.astype(d)
    return finish(out.n, names, ps.names)


def _offset(words, shape, span, rounds):
    """A uniform offset in [0, span) (span 0: the full 64-bit range) from 64-bit proposals."""
    if rounds == 1:
        x = V(bits_node(words, shape, U64))
    else:
        b = V(bits_node(words, (rounds,) + tuple(shape), U64))
        rem = (-span) % where(span.eq(0), span.c(1), span)   # 2**64 mod span
        limit = -rem                                            # 2**64 - rem (0: accept all)
        x = _row(b, rounds - 1)
        for r in reversed(range(rounds - 1)):
            c = _row(b, r)
            x = where(V(lax.bitwise_or(rem.eq(0).n, (c < limit).n)), c, x)
    safe = where(span.eq(0), span.c(1), span)
    return where(span.eq(0), x, x % safe)


def categorical(key, logits, axis=-1, shape=None) -> Array:
    """Indices (int64) drawn with probabilities softmax(logits) along `axis`, by the
    Gumbel-max trick (jax's). `shape` is the result's shape; it must end with the logits'
    batch shape (their shape without `axis`)."""
    import tlaloc as xp
    words, device = _check_key("categorical", key)
    if not isinstance(logits, Array):
        logits = xp.asarray(np.asarray(logits), device=device)
    if logits.dtype.kind != "f":
        raise TypeError(f"categorical: logits must be a real floating array, got {logits.dtype}")
    if logits.ndim == 0:
        raise ValueError("categorical: logits must have at least one dimension")
    ax = axis_of("categorical", logits, axis)
    batch = logits.shape[:ax] + logits.shape[ax + 1:]
    sizes, names = parse_shape("categorical", shape)
    if sizes is None:
        sizes = batch
    if tuple(sizes[len(sizes) - len(batch):]) != batch:
        raise ValueError(f"categorical: shape {sizes} must end with the logits' batch shape {batch}")
    prefix = tuple(sizes[:len(sizes) - len(batch)])
    cd = _compute(logits.dtype)
    full = prefix + batch[:ax] + (logits.shape[ax],) + batch[ax:]
    g = Array._from_node(_gumbel(words, full, cd).n)
    lg = xp.astype(logits, cd) if logits.dtype is not cd else logits
    lg = xp.reshape(lg, (1,) * len(prefix) + lg.shape) if prefix else lg
    out = xp.argmax(g + lg, axis=len(prefix) + ax)
    return finish(out._node, names)


def _rounds(n):
    """jax's number of sort rounds for shuffling n items: ceil(3 ln n / ln(2**32 - 1))."""
    return builtins.int(math.ceil(3 * math.log(max(1, n)) / math.log(2 ** 32 - 1)))


def _shuffled_iota(words, n, device):
    """A uniformly random permutation of 0..n-1 (int64): sort rounds by fresh 32-bit keys,
    stable (jax's _shuffle of arange(n), bit for bit)."""
    idx = None
    for _ in range(_rounds(n)):
        words, sub = subkeys(words, 2)
        order = _stable_argsort_u32(bits_node(sub, (n,), U32), device)
        idx = order if idx is None else _ops.take_axis(idx, order, 0)   # sorts the last round's
    return _ops.iota((n,), 0, device, dt.int64) if idx is None else idx


def _stable_argsort_u32(keys, device):
    """The stable ascending permutation of a 1-d uint32 node (int64)."""
    n = keys.aval.shape[0]
    pos = _ops.iota((n,), 0, device, dt.int64)
    if n >= 1 << 32:
        return lax.sort(keys, pos, dimension=0, num_keys=1, descending=False, output=1)
    # (key, position) packed in one uint64: sorting it is the stable sort by key
    packed = (V(keys).astype(U64) << 32) | V(pos).bitcast(U64)
    ordered = V(lax.sort(packed.n, dimension=0, num_keys=1, descending=False, output=0))
    return (ordered & 0xFFFFFFFF).bitcast(dt.int64).n


def permutation(key, x, axis=0) -> Array:
    """A random permutation of range(x) (x an int) or of x's entries along `axis` (the same
    reordering for every position of the other axes); jax.random.permutation's result for
    the same key."""
    words, device = _check_key("permutation", key)
    if isinstance(x, Array):
        if x.ndim == 0:
            raise ValueError("permutation: x must be an int or an array with at least one axis")
        ax = axis_of("permutation", x, axis)
        n = x.shape[ax]
        idx = _shuffled_iota(words, n, device)
        return Array._from_node(renamed(_ops.take_axis(x._node, idx, ax), x._names))
    if isinstance(x, (builtins.bool, np.bool_)) or not isinstance(x, (builtins.int, np.integer)):
        raise TypeError(f"permutation: x must be an int or a tlaloc array, got {type(x).__name__}")
    if x < 0:
        raise ValueError(f"permutation: x must be non-negative, got {x}")
    if axis not in (0, -1):
        raise IndexError(f"permutation: axis {axis} is out of range for range(x)")
    return Array._from_node(_shuffled_iota(words, builtins.int(x), device))


def choice(key, a, shape=None, replace=True, p=None, axis=0) -> Array:
    """Draws from range(a) (a an int) or from a's entries along `axis`: uniformly, or with
    probabilities `p` (1-d, one per entry; normalized by their sum). Without replacement
    the draws are distinct (shape's size at most the number of entries): a random
    permutation's prefix, or with `p` the Gumbel top-k trick. With replacement and `p`:
    inverse CDF by binary search."""
    import tlaloc as xp
    words, device = _check_key("choice", key)
    sizes, names = parse_shape("choice", shape)
    sizes = () if sizes is None else sizes
    if isinstance(a, Array):
        if a.ndim == 0:
            raise ValueError("choice: a must be an int or an array with at least one axis")
        ax = axis_of("choice", a, axis)
        n = a.shape[ax]
    else:
        if isinstance(a, (builtins.bool, np.bool_)) or not isinstance(a, (builtins.int, np.integer)):
            raise TypeError(f"choice: a must be an int or a tlaloc array, got {type(a).__name__}")
        n, ax = builtins.int(a), 0
        if n < 0:
            raise ValueError(f"choice: a must be non-negative, got {n}")
    m = math.prod(sizes)
    if n == 0 and m > 0:
        raise ValueError("choice: cannot draw from an empty population")
    if not replace and m > n:
        raise ValueError(f"choice: cannot draw {m} distinct items without replacement from "
                         f"{n}; pass replace=True or a shape of at most {n} elements")
    if p is not None:
        if not isinstance(p, Array):
            pv = np.asarray(p, dtype=np.float64)
            if pv.ndim == 1 and ((pv < 0).any() or not np.isfinite(pv).all()):
                raise ValueError("choice: p must hold non-negative finite probabilities")
            p = xp.asarray(pv, device=device)
        if p.shape != (n,):
            raise ValueError(f"choice: p must have shape ({n},), one probability per entry, got {p.shape}")
        if p.dtype.kind != "f":
            p = xp.astype(p, dt.float64)
    if p is None and replace:
        idx = integers(key, 0, max(n, 1), shape=sizes)
    elif p is None:
        perm = _shuffled_iota(words, n, device)
        idx = Array._from_node(_ops.reshape(
            lax.slice(perm, start=(0,), limit=(m,), strides=(1,)), sizes))
    elif replace:
        cdf = xp.cumulative_sum(p)
        total = cdf[-1]
        u = Array._from_node(unit(words, sizes, p.dtype).n)
        r = total * (1.0 - u)
        idx = xp.searchsorted(cdf, xp.reshape(r, (-1,)))
        idx = xp.reshape(xp.minimum(idx, n - 1), sizes)
    else:
        g = Array._from_node(_gumbel(words, (n,), _compute(p.dtype)).n)
        score = g + xp.log(xp.astype(p, _compute(p.dtype)))
        order = xp.argsort(score, descending=True)
        idx = xp.reshape(order[:m], sizes)
    if idx.dtype is not dt.int64:
        idx = xp.astype(idx, dt.int64)
    if not isinstance(a, Array):
        return finish(idx._node, names)
    out = _ops.take_axis(a._node, idx._node, ax)
    if names is not None or a._names is not None:
        an = a._names or (None,) * a.ndim
        bn = tuple(names) if names is not None else (None,) * len(sizes)
        out = renamed(out, an[:ax] + bn + an[ax + 1:])
    return Array._from_node(out)


# ----------------------------------------------------------------------------- gamma family

def _log_gamma_sample(words, a, shape, cd):
    """log of Gamma(a, 1) samples (a: V of shape `shape` or 0-d, in cd): Marsaglia and
    Tsang's method ("A simple method for generating gamma variables", 2000) with
    GAMMA_ROUNDS proposals, the first accepted kept; a < 1 through Gamma(a + 1) * U**(1/a),
    in logs (so tiny a keeps its tiny values). The proposals' uniforms come from one block
    array of GAMMA_ROUNDS + 1 rows; each round is elementwise on `shape` (XLA fuses the
    rounds into one vectorized loop)."""
    R = GAMMA_ROUNDS
    full = (R + 1,) + tuple(shape)      # row R: only its first uniform is used (the boost)
    boost = a < 1.0
    alpha = where(boost, a + 1.0, a)
    dd = alpha - 1.0 / 3.0
    c = (1.0 / 3.0) / dd.ap(lax.sqrt)
    log_d = dd.ap(lax.log)
    un_all, ua_all = unit_words(words, full, cd, 2)
    out = done = None
    for r in range(R):
        z = _normal_from_unit(_row(un_all, r))
        v = 1.0 + c * z
        v3 = v * v * v
        log_v3 = v3.ap(lax.log)
        u = 1.0 - _row(ua_all, r)                      # in (0, 1]
        ok = V(lax.bitwise_and((v3 > 0.0).n,
                  (u.ap(lax.log) < z * z * 0.5 + dd - dd * v3 + dd * log_v3).n))
        logx = log_d + log_v3
        if out is None:
            out, done = logx, ok
        else:
            out = where(done, out, logx)                # the last proposal if none is accepted
            done = V(lax.bitwise_or(done.n, ok.n))
    ub = _row(un_all, R)
    lb = (1.0 - ub).ap(lax.log) / where(boost, a, a.c(1.0))
    out = out + where(boost, lb, lb.c(0.0))
    return where(a > 0.0, out, out.c(math.nan))


def _first_accepted(ok, values, rounds):
    """values at the first row r < rounds of `ok` that holds (the last row r = rounds - 1
    when none does), for (rows, *shape) operands."""
    full = ok.shape
    r = V(_ops.iota(full, 0, ok.n.device, dt.int32))
    first = V(lax.reduce_min(where(ok, r, r.c(rounds - 1)).n, axes=(0,)))
    pick = r.eq(_bc_rows(first, full))
    return V(lax.reduce_sum(where(pick, values, values.c(0.0)).n, axes=(0,)))


def _bc_rows(x, full):
    """A V of shape full[1:] broadcast along a new leading axis to `full`."""
    return V(lax.broadcast_in_dim(x.n, shape=tuple(full), dims=tuple(range(1, len(full)))))


def _no_derivative(name, k, node):
    """`node`, marked: a derivative with respect to it raises (it has none here)."""
    return lax.nondifferentiable(
        node, what=f"tlaloc.random.{name}: the samples have no derivative with respect to {k} "
                   "(implicit reparameterization is not implemented)")


def _shape_parameter(name, k, ps, cd, shape):
    """Parameter k in cd, broadcast; an array is marked as having no derivative first."""
    v = ps.values[k]
    if isinstance(v, Array):
        ps.values[k] = Array._from_node(renamed(_no_derivative(name, k, v._node), v._names))
    return V(ps.node(k, cd, shape))


def _shape_param(name, ps, k):
    if ps.is_static(k):
        v = ps.static(k)
        if not v > 0:
            raise ValueError(f"{name}: {k} must be positive, got {v}")


def gamma(key, a, shape=None, dtype=None, *, scale=1.0) -> Array:
    """Gamma(a) floats (shape parameter a > 0, times `scale`). Exact up to the rejection
    cut (docs/random.md); a <= 0 or nan gives nan. No derivative flows to `a`."""
    _no_shape_as_param("gamma", a=a)
    words, device, ps, shape, names = _start("gamma", key, shape, a=a, scale=scale, loc=0.0)
    _shape_param("gamma", ps, "a")
    _positive("gamma", ps, "scale")
    d = float_dtype("gamma", dtype, a, scale)
    cd = _compute(d)
    an = _shape_parameter("gamma", "a", ps, cd, shape)
    x = _log_gamma_sample(words, an, shape, cd).ap(lax.exp).astype(d)
    return finish(_affine(x, ps, shape).n, names, ps.names)


def beta(key, a, b, shape=None, dtype=None) -> Array:
    """Beta(a, b) floats: Ga / (Ga + Gb) of two gamma samples, formed from their logs (so
    small a and b keep their mass near 0 and 1). No derivative flows to a or b."""
    _no_shape_as_param("beta", a=a, b=b)
    words, device, ps, shape, names = _start("beta", key, shape, a=a, b=b)
    _shape_param("beta", ps, "a")
    _shape_param("beta", ps, "b")
    d = float_dtype("beta", dtype, a, b)
    cd = _compute(d)
    both = (2,) + tuple(shape)      # one gamma sampler for a and b side by side
    rows = []
    for k in ("a", "b"):
        n = broadcast_to_shape(_shape_parameter("beta", k, ps, cd, shape).n, tuple(shape))
        rows.append(lax.reshape(n, shape=(1,) + tuple(shape)))
    lg = _log_gamma_sample(words, V(lax.concatenate(*rows, axis=0)), both, cd)
    la, lb = _row(lg, 0), _row(lg, 1)
    m = la.max(lb)
    ga, gb = (la - m).ap(lax.exp), (lb - m).ap(lax.exp)
    return finish((ga / (ga + gb)).astype(d).n, names, ps.names)


def dirichlet(key, alpha, shape=None, dtype=None) -> Array:
    """Dirichlet(alpha) vectors along the last axis: normalized gamma samples, from their
    logs. `alpha` has shape (..., k); `shape` is the batch shape (alpha's batch shape by
    default), and the result has shape shape + (k,). No derivative flows to alpha."""
    import tlaloc as xp
    words, device = _check_key("dirichlet", key)
    if not isinstance(alpha, Array):
        av = np.asarray(alpha, dtype=np.float64)
        if av.ndim >= 1 and (av <= 0).any():
            raise ValueError("dirichlet: alpha must be positive")
        alpha = xp.asarray(av, device=device)
    if alpha.ndim == 0:
        raise ValueError("dirichlet: alpha must have at least one axis (the categories)")
    sizes, names = parse_shape("dirichlet", shape)
    batch = alpha.shape[:-1]
    if sizes is None:
        sizes = batch
    from .._api._core import broadcast_shapes
    if broadcast_shapes(batch, sizes, name="dirichlet") != tuple(sizes):
        raise ValueError(f"dirichlet: alpha's batch shape {batch} does not broadcast to {sizes}")
    d = float_dtype("dirichlet", dtype, alpha)
    cd = _compute(d)
    full = tuple(sizes) + alpha.shape[-1:]
    an = _no_derivative("dirichlet", "alpha", alpha._node)
    an = V(broadcast_to_shape(lax.convert(an, dtype=cd) if alpha.dtype is not cd else an, full))
    lg = Array._from_node(_log_gamma_sample(words, an, full, cd).n)
    lg = lg - xp.max(lg, axis=-1, keepdims=True)
    e = xp.exp(lg)
    x = e / xp.sum(e, axis=-1, keepdims=True)
    return finish(xp.astype(x, d)._node if d is not cd else x._node, names)


def multivariate_normal(key, mean, cov, shape=None, dtype=None, *, method="cholesky") -> Array:
    """Normal vectors with mean `mean` (..., n) and covariance `cov` (..., n, n):
    mean + L z with L the Cholesky factor of cov (method="eigh": V sqrt(w), which admits
    semi-definite cov). `shape` is the batch shape (mean's and cov's broadcast batch shape
    by default); the result has shape shape + (n,). A cov that is already known (a host
    array, or an array holding its value) and not positive definite (semi-definite with
    "eigh") raises ValueError."""
    import tlaloc as xp
    words, device = _check_key("multivariate_normal", key)
    if method not in ("cholesky", "eigh"):
        raise ValueError(f"multivariate_normal: method must be 'cholesky' or 'eigh', got {method!r}")
    host_cov = not isinstance(cov, Array)
    mean = mean if isinstance(mean, Array) else xp.asarray(np.asarray(mean, dtype=np.float64), device=device)
    cov = cov if isinstance(cov, Array) else xp.asarray(np.asarray(cov, dtype=np.float64), device=device)
    if mean.ndim < 1 or cov.ndim < 2:
        raise ValueError(f"multivariate_normal: mean must have shape (..., n) and cov (..., n, n), "
                         f"got {mean.shape} and {cov.shape}")
    n = mean.shape[-1]
    if cov.shape[-2:] != (n, n):
        raise ValueError(f"multivariate_normal: cov must have shape (..., {n}, {n}) for a mean "
                         f"of {n} entries, got {cov.shape}")
    if mean.dtype.kind != "f" or cov.dtype.kind != "f":
        raise TypeError("multivariate_normal: mean and cov must be real floating arrays")
    d = float_dtype("multivariate_normal", dtype, mean, cov)
    cd = _compute(d)
    from .._api._core import broadcast_shapes
    batch = broadcast_shapes(mean.shape[:-1], cov.shape[:-2], name="multivariate_normal")
    sizes, names = parse_shape("multivariate_normal", shape)
    if sizes is None:
        sizes = batch
    if broadcast_shapes(batch, sizes, name="multivariate_normal") != tuple(sizes):
        raise ValueError(f"multivariate_normal: mean's and cov's batch shape {batch} does not "
                         f"broadcast to {sizes}")
    cv = xp.astype(cov, cd) if cov.dtype is not cd else cov
    if method == "cholesky":
        factor = xp.linalg.cholesky(cv)
        bad = ~xp.all(xp.isfinite(factor))
        what = "positive definite"
    else:
        w, vecs = xp.linalg.eigh(cv)
        tol = xp.max(xp.abs(w), axis=-1, keepdims=True) * (n * builtins.float(np.finfo(cd.numpy).eps) * 10)
        bad = xp.any(w < -tol)
        factor = vecs * xp.sqrt(xp.maximum(w, 0.0))[..., None, :]
        what = "positive semi-definite"
    if host_cov or cov._node.value is not None:
        (flag,) = _ops.concrete(bad._node, keep=(factor._node,))
        if flag:
            raise ValueError(f"multivariate_normal: cov is not {what}")
    z = Array._from_node(_normal_from_unit(unit(words, tuple(sizes) + (n,), cd)).n)
    mv = xp.astype(mean, cd) if mean.dtype is not cd else mean
    x = mv + xp.matmul(factor, z[..., None])[..., 0]
    x = xp.astype(x, d) if d is not cd else x
    return finish(x._node, names)


# ----------------------------------------------------------------------------- poisson

def poisson(key, lam, shape=None, dtype=None) -> Array:
    """Poisson(lam) integers (int64 by default), computed in float64: for lam < 30 the
    inverse CDF by sequential search (at most 80 terms; P(X >= 80) < 1e-13 there), from 30
    on Hormann's transformed rejection PTRS ("The transformed rejection method for
    generating Poisson random variables", 1993) with 12 proposals (all rejected: below 2e-9).
    Array lam below 0 or nan gives -1."""
    _no_shape_as_param("poisson", lam=lam)
    words, device, ps, shape, names = _start("poisson", key, shape, lam=lam)
    d = _int_dtype("poisson", dtype)
    if ps.is_static("lam"):
        lv = ps.static("lam")
        if not lv >= 0:
            raise ValueError(f"poisson: lam must be non-negative, got {lv}")
    f64 = dt.float64
    lamv = V(ps.node("lam", f64, shape))
    k_small, k_large = subkeys(words, 2)
    if ps.is_static("lam"):
        lv = ps.static("lam")
        # a Python lam needs fewer terms: P(X >= lam + 8 sqrt(lam) + 10) < 1e-13 below 30
        steps = min(POISSON_STEPS, math.ceil(lv + 8 * math.sqrt(lv) + 10))
        k = _poisson_small(k_small, lamv, shape, steps) if lv < POISSON_SMALL \
            else _poisson_large(k_large, lamv, shape)
    else:
        small = _poisson_small(k_small, V(lax.minimum(lamv.n, lamv.c(POISSON_SMALL).n)), shape)
        large = _poisson_large(k_large, lamv.max(POISSON_SMALL), shape)
        k = where(lamv < POISSON_SMALL, small, large)
        k = where(lamv >= 0.0, k, k.c(-1.0))
    return finish(k.astype(d).n, names, ps.names)


def _u32_unit(w):
    """[0, 1) float64 from a uint32 word (32 random bits)."""
    return w.astype(dt.float64) * (1.0 / 4294967296.0)


def _poisson_small(words, lam, shape, steps=POISSON_STEPS):
    """The inverse CDF by sequential search: the number of k < steps with F(k) <= u."""
    y0, _ = blocks(words, tuple(shape))
    u = _u32_unit(V(y0))
    term = (-lam).ap(lax.exp)
    cdf = term
    count = (u >= cdf).astype(dt.float64)
    for k in range(1, steps):
        term = term * (lam * (1.0 / k))
        cdf = cdf + term
        count = count + (u >= cdf).astype(dt.float64)
    return count


def _log_factorial(k):
    """log(k!) for integer-valued float64 k >= 0: Stirling's series at w = k + 7 (error
    below 1e-12), less log((k + 1) ... (k + 6))."""
    z = k + 1.0
    w = z + 6.0
    r = 1.0 / w
    r2 = r * r
    series = r * (1.0 / 12 + r2 * (-1.0 / 360 + r2 * (1.0 / 1260 + r2 * (-1.0 / 1680 + r2 * (1.0 / 1188)))))
    stirling = (w - 0.5) * w.ap(lax.log) - w + 0.5 * math.log(2 * math.pi) + series
    shift = (z * (z + 1.0) * (z + 2.0) * (z + 3.0) * (z + 4.0) * (z + 5.0)).ap(lax.log)
    return stirling - shift


def _poisson_large(words, lam, shape):
    """PTRS (NumPy's random_poisson_ptrs) with POISSON_ROUNDS proposals side by side (a
    leading axis of rounds), the first accepted kept."""
    R = POISSON_ROUNDS
    full = (R,) + tuple(shape)
    y0, y1 = blocks(words, full)
    U = _u32_unit(V(y0)) - 0.5
    Vv = _u32_unit(V(y1))
    slam = lam.ap(lax.sqrt)
    loglam = lam.ap(lax.log)
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    invalpha = 1.1239 + 1.1328 / (b - 3.4)
    vr = 0.9277 - 3.6224 / (b - 2.0)
    lam_f, loglam_f, a_f, b_f = (_bc(x, full) for x in (lam, loglam, a, b))
    inv_f, vr_f = _bc(invalpha, full), _bc(vr, full)
    us = 0.5 - U.ap(lax.abs)
    k = ((2.0 * a_f / us + b_f) * U + lam_f + 0.43).ap(lax.floor)
    quick = V(lax.bitwise_and((us >= 0.07).n, (Vv <= vr_f).n))
    reject = V(lax.bitwise_or((k < 0.0).n,
                  lax.bitwise_and((us < 0.013).n, (Vv > us).n)))
    lhs = (Vv * inv_f / (a_f / (us * us) + b_f)).ap(lax.log)
    rhs = -lam_f + k * loglam_f - _log_factorial(k.max(0.0))
    ok = V(lax.bitwise_or(quick.n,
              lax.bitwise_and(lax.bitwise_not(reject.n), (lhs <= rhs).n)))
    return _first_accepted(ok, k, R)
