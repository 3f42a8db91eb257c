"""Keys and random bits: Threefry-2x32 (20 rounds).

A key is a uint32 array of shape (2,). The cipher is the threefry2x32 primitive
(tlaloc/_prims/threefry.py: its emit rule writes the rounds as StableHLO uint32 additions,
xors, shifts and ors, its interpreter rule runs them in NumPy), and the counters are iotas:
so draws lower to every backend, the interpreter gives the same bits, and they are
partitionable: element i of a draw depends only on the key and i (its counter), never on
how the output is laid out or split.

The construction is jax's default threefry implementation with
`jax_threefry_partitionable=True` (the default since jax 0.5; checked against jax 0.10.2):

- `key(seed)` holds `(seed >> 32, seed & 0xFFFFFFFF)`;
- `split(key, n)[i]` is the block `threefry2x32(key, (0, i))`;
- `fold_in(key, d)` is the block `threefry2x32(key, (0, d))`;
- `bits(key, shape, uint32)[i]` (i the row-major flat index) is `x0 ^ x1` of the block
  `threefry2x32(key, (i >> 32, i & 0xFFFFFFFF))`; uint64 is `x0 << 32 | x1`; uint8 and
  uint16 keep the low bits of the uint32 word.
"""
from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from .. import _dtypes as dt
from .._array import Array
from .._prims import lax
from .._prims import threefry as _threefry  # noqa: F401  (declares threefry2x32)

U32 = dt.uint32
U64 = dt.uint64
_MASK32 = 0xFFFFFFFF
BITS_DTYPES = (dt.uint8, dt.uint16, dt.uint32, dt.uint64)


# ----------------------------------------------------------------------------- node helpers

def const(value, dtype, device):
    """A 0-d constant (fixed by the algorithm); elementwise primitives take it beside
    operands of any shape."""
    return lax.constant(shape=(), dtype=dtype, value=value, device=device)


class V:
    """A node with arithmetic, for writing the samplers as formulas. Operands share one
    dtype; a 0-d operand may stand beside a full one (how elementwise primitives take
    Python scalars); Python numbers become 0-d constants of the node's dtype."""

    __slots__ = ("n",)

    def __init__(self, n):
        self.n = n

    @property
    def dtype(self):
        return self.n.aval.dtype

    @property
    def shape(self):
        return self.n.aval.shape

    def c(self, value):
        return V(const(value, self.n.aval.dtype, self.n.device))

    def _lift(self, o):
        return o.n if isinstance(o, V) else const(o, self.n.aval.dtype, self.n.device)

    def _bin(self, prim, o, swap=False):
        a, b = self.n, self._lift(o)
        return V(prim(b, a) if swap else prim(a, b))

    def __add__(self, o):
        return self._bin(lax.add, o)

    def __radd__(self, o):
        return self._bin(lax.add, o, True)

    def __sub__(self, o):
        return self._bin(lax.subtract, o)

    def __rsub__(self, o):
        return self._bin(lax.subtract, o, True)

    def __mul__(self, o):
        return self._bin(lax.multiply, o)

    def __rmul__(self, o):
        return self._bin(lax.multiply, o, True)

    def __truediv__(self, o):
        return self._bin(lax.divide, o)

    def __rtruediv__(self, o):
        return self._bin(lax.divide, o, True)

    def __mod__(self, o):
        return self._bin(lax.remainder, o)

    def __xor__(self, o):
        return self._bin(lax.bitwise_xor, o)

    def __or__(self, o):
        return self._bin(lax.bitwise_or, o)

    def __and__(self, o):
        return self._bin(lax.bitwise_and, o)

    def __lshift__(self, o):
        return self._bin(lax.shift_left, o)

    def __rshift__(self, o):   # logical (the samplers shift unsigned words only)
        return self._bin(lax.shift_right_logical, o)

    def __neg__(self):
        return V(lax.negate(self.n))

    def __invert__(self):
        return V(lax.bitwise_not(self.n))

    def cmp(self, o, direction):
        return V(lax.compare(self.n, self._lift(o), direction=direction))

    def __lt__(self, o):
        return self.cmp(o, "LT")

    def __le__(self, o):
        return self.cmp(o, "LE")

    def __gt__(self, o):
        return self.cmp(o, "GT")

    def __ge__(self, o):
        return self.cmp(o, "GE")

    def eq(self, o):
        return self.cmp(o, "EQ")

    def ap(self, prim, **params):
        return V(prim(self.n, **params))

    def astype(self, dtype):
        return self if self.dtype is dtype else V(lax.convert(self.n, dtype=dtype))

    def bitcast(self, dtype):
        return V(lax.bitcast_convert(self.n, dtype=dtype))

    def max(self, o):
        return self._bin(lax.maximum, o)

    def min(self, o):
        return self._bin(lax.minimum, o)


def where(cond, a, b):
    """select(cond, a, b); one branch may be a Python number."""
    like = a if isinstance(a, V) else b
    return V(lax.select(cond.n, like._lift(a), like._lift(b)))


# ----------------------------------------------------------------------------- the cipher

def threefry2x32(k0, k1, x0, x1, output="pair"):
    """The threefry2x32 primitive on nodes: key words k0, k1 (0-d uint32), counter words x0
    (None: zero high words), x1; output "xor", "wide" or "pair" (see _prims/threefry.py)."""
    if x0 is None:
        x0 = const(0, U32, x1.device)
    return lax.threefry2x32(k0, k1, x0, x1, output=output)


def pair_words(pair):
    """The two uint32 words of a "pair" node (shape + (2,)), each of shape."""
    shape = pair.aval.shape[:-1]
    nd = len(shape)
    out = []
    for i in (0, 1):
        s = lax.slice(pair, start=(0,) * nd + (i,), limit=shape + (i + 1,), strides=(1,) * (nd + 1))
        out.append(lax.reshape(s, shape=shape))
    return out


# ----------------------------------------------------------------------------- keys

def _seed_words(name, seed):
    if isinstance(seed, (builtins.bool, np.bool_)):
        raise TypeError(f"{name}: seed must be a non-negative integer, got {seed!r}")
    if isinstance(seed, (builtins.float, np.floating, builtins.complex)):
        raise TypeError(f"{name}: seed must be a non-negative integer, got the float {seed!r}; "
                        "pass an int")
    try:
        s = operator.index(seed)
    except TypeError:
        raise TypeError(f"{name}: seed must be a non-negative integer or a 0-d integer tlaloc "
                        f"array, got {type(seed).__name__}") from None
    if s < 0:
        raise ValueError(f"{name}: seed must be non-negative, got {s}")
    if s >= 1 << 64:
        raise ValueError(f"{name}: seed must be below 2**64, got {s}")
    return np.array([s >> 32, s & _MASK32], dtype=np.uint32)


def key(seed, *, device=None) -> Array:
    """A key (uint32, shape (2,)) from an integer seed in [0, 2**64): `(seed >> 32,
    seed & 0xFFFFFFFF)`, the key `jax.random.key(seed)` holds. `seed` may also be a 0-d
    integer tlaloc array (a traced seed inside tlaloc.jit)."""
    from .._api.creation import asarray
    if isinstance(seed, Array):
        if seed.ndim != 0 or seed.dtype.kind not in dt.INTEGER_KINDS:
            raise TypeError(f"key: a seed array must be a 0-d integer array, got shape "
                            f"{seed.shape} and dtype {seed.dtype}")
        s = V(seed._node)
        if s.dtype.bits == 64:
            s64 = s if s.dtype is U64 else s.bitcast(U64)
        else:   # a signed seed's bit pattern, widened (jax: convert, then mask)
            s64 = s.astype(dt.int64).bitcast(U64) if s.dtype.kind == "i" else s.astype(U64)
        hi = (s64 >> 32).astype(U32) if s.dtype.bits == 64 else s.c(0).astype(U32)
        lo = (s64 & _MASK32).astype(U32)
        return _stack_words(hi.n, lo.n)
    return asarray(_seed_words("key", seed), device=device)


def key_words(name, k, argname="key"):
    """The two 0-d uint32 nodes of a key; TypeError/ValueError for anything else."""
    if not isinstance(k, Array):
        raise TypeError(f"{name}: {argname} must be a key (a uint32 tlaloc array of shape (2,) "
                        f"from tlaloc.random.key), got {type(k).__name__}")
    if k.dtype is not U32:
        raise TypeError(f"{name}: {argname} must be a uint32 array of shape (2,) (from "
                        f"tlaloc.random.key), got dtype {k.dtype}")
    if k.shape != (2,):
        hint = "; index the result of split, keys[i], for one key" if k.shape[-1:] == (2,) else ""
        raise ValueError(f"{name}: {argname} must have shape (2,), got {k.shape}{hint}")
    n = k._node
    w0 = lax.reshape(lax.slice(n, start=(0,), limit=(1,), strides=(1,)), shape=())
    w1 = lax.reshape(lax.slice(n, start=(1,), limit=(2,), strides=(1,)), shape=())
    return w0, w1


def _stack_words(y0, y1):
    """Two uint32 nodes of one shape -> an Array of that shape + (2,)."""
    shape = y0.aval.shape
    parts = [lax.reshape(y, shape=shape + (1,)) for y in (y0, y1)]
    return Array._from_node(lax.concatenate(*parts, axis=len(shape)))


def counters(size, device):
    """The counter words (hi or None, lo) of flat indices 0..size-1 (shape (size,))."""
    if size < 1 << 32:
        return None, lax.iota(shape=(size,), dtype=U32, dim=0, device=device)
    i = V(lax.iota(shape=(size,), dtype=U64, dim=0, device=device))
    return (i >> 32).astype(U32).n, (i & _MASK32).astype(U32).n


def cipher(words, shape, output):
    """threefry2x32 of the counters 0..prod(shape)-1 (row-major), in `shape` (plus the
    word axis for output="pair")."""
    k0, k1 = words
    shape = tuple(shape)
    if shape == ():
        return threefry2x32(k0, k1, None, const(0, U32, k0.device), output)
    hi, lo = counters(math.prod(shape), k0.device)
    out = threefry2x32(k0, k1, hi, lo, output)
    full = shape + ((2,) if output == "pair" else ())
    return out if out.aval.shape == full else lax.reshape(out, shape=full)


def blocks(words, shape):
    """Both output words of the blocks with counters 0..prod(shape)-1, each of `shape`."""
    return pair_words(cipher(words, shape, "pair"))


def bits_node(words, shape, dtype):
    """Random bits of `dtype` (uint8/16/32/64) and `shape`: jax's partitionable bits."""
    if dtype is U64:
        return cipher(words, shape, "wide")
    x = cipher(words, shape, "xor")
    return x if dtype is U32 else lax.convert(x, dtype=dtype)


def split(key, num=2) -> Array:
    """`num` new keys (shape (num, 2)) from `key`; `num` may be a shape tuple (result
    shape num + (2,)). `split(key, n)[i]` equals `fold_in(key, i)`."""
    words = key_words("split", key)
    shape = (num,) if not isinstance(num, (tuple, list)) else tuple(num)
    for n in shape:
        if isinstance(n, (builtins.bool, np.bool_)) or not isinstance(n, (builtins.int, np.integer)):
            raise TypeError(f"split: num must be an int or a tuple of ints, got {num!r}")
        if n < 0:
            raise ValueError(f"split: num must be non-negative, got {num!r}")
    shape = tuple(builtins.int(n) for n in shape)
    return Array._from_node(cipher(words, shape, "pair"))


def fold_in(key, data) -> Array:
    """A new key from `key` and an integer `data` in [0, 2**32) (a Python int, or a 0-d
    integer array whose low 32 bits are used): the block threefry(key, (0, data))."""
    from .._api._core import scalar_node
    k0, k1 = key_words("fold_in", key)
    if isinstance(data, Array):
        if data.ndim != 0 or data.dtype.kind not in dt.INTEGER_KINDS:
            raise TypeError(f"fold_in: data must be an int or a 0-d integer array, got shape "
                            f"{data.shape} and dtype {data.dtype}")
        d = V(data._node)
        if d.dtype.kind == "i":
            d = d.astype(dt.int64).bitcast(U64)
        d = (d.astype(U64) & _MASK32).astype(U32).n
    else:
        if isinstance(data, (builtins.bool, np.bool_)) or isinstance(data, (builtins.float, np.floating)):
            raise TypeError(f"fold_in: data must be an integer, got {data!r}")
        try:
            v = operator.index(data)
        except TypeError:
            raise TypeError(f"fold_in: data must be an integer, got {type(data).__name__}") from None
        if not 0 <= v < 1 << 32:
            raise ValueError(f"fold_in: data must be in [0, 2**32), got {v}")
        d = scalar_node(v, U32, k0.device)    # a program input: loops reuse one program
    return Array._from_node(threefry2x32(k0, k1, None, d, "pair"))


def bits(key, shape=(), dtype=dt.uint32) -> Array:
    """Uniformly random bits: an array of `shape` and `dtype` (uint8, uint16, uint32 or
    uint64), jax.random.bits' values for the same key."""
    from ._params import finish, parse_shape
    words = key_words("bits", key)
    d = dt.canonicalize(dtype, "bits")
    if d not in BITS_DTYPES:
        raise TypeError(f"bits: dtype must be uint8, uint16, uint32 or uint64, got {d}")
    shape, names = parse_shape("bits", shape)
    return finish(bits_node(words, shape or (), d), names)
