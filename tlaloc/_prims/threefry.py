"""threefry2x32: the Threefry-2x32 block cipher (20 rounds), the counter-based generator
behind tlaloc.random.

`threefry2x32(k0, k1, x0, x1, *, output)`: key words k0, k1 (0-d uint32) and counter words
x0, x1 (uint32, one shape; x0 may be 0-d), giving per counter
  * output="xor":  y0 ^ y1 (uint32, the counters' shape): jax's 32-bit random bits;
  * output="wide": y0 << 32 | y1 (uint64): jax's 64-bit random bits;
  * output="pair": y0 and y1 stacked on a new last axis (uint32, shape + (2,)): keys.

It is one primitive rather than a composition of the ~120 uint32 additions, xors, shifts and
ors it stands for, because that composition is ~70 operations deep: a Generator that draws a
few times without looking at its values would reach the pending-graph depth bound
(config.max_pending) and be cut into many small programs inside the cipher, and every draw
would record ~120 nodes. The rounds are written once (`_cipher`, over an `ops` vocabulary);
the emit rule writes them as StableHLO integer ops (so the cipher lowers to every backend
exactly as the composition would) and the interpreter runs them with NumPy uint32
arithmetic: the same bits on every backend and tier. It has no derivative (integer results).

Reference: Salmon, Moraes, Dror, Shaw, "Parallel random numbers: as easy as 1, 2, 3" (SC
2011); rotation constants and key schedule as Random123 and jax use them.
"""
from __future__ import annotations

import numpy as np

from .. import _dtypes as dt
from . import ad, lax
from . import batching as bt
from . import padding as pd
from .core import aval, declare

ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
PARITY = 0x1BD11BDA
OUTPUTS = ("xor", "wide", "pair")


def _cipher(ops, k0, k1, x0, x1):
    """The 20 rounds. `ops` gives key (an op on 0-d key words and a number), full (a 0-d
    value at every counter), and add, xor, rotl on values of the counters' shape."""
    ks = (k0, k1, ops.key("xor", ops.key("xor2", k0, k1), PARITY))
    x0 = ops.add(x0, ops.full(ks[0]))
    x1 = ops.add(x1, ops.full(ks[1]))
    for group in range(5):
        for r in ROTATIONS[group % 2]:
            x0 = ops.add(x0, x1)
            x1 = ops.xor(x0, ops.rotl(x1, r))
        # the key injection; its 0-d part (key word + round number) is computed once
        x0 = ops.add(x0, ops.full(ks[(group + 1) % 3]))
        x1 = ops.add(x1, ops.full(ops.key("add", ks[(group + 2) % 3], group + 1)))
    return x0, x1


class _NumPyOps:
    @staticmethod
    def key(op, a, b):
        b = np.uint32(b)
        return np.bitwise_xor(a, b) if op in ("xor", "xor2") else np.add(a, b)

    @staticmethod
    def full(a):
        return a

    add = staticmethod(np.add)
    xor = staticmethod(np.bitwise_xor)

    @staticmethod
    def rotl(x, r):
        return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


def _infer(k0, k1, x0, x1, *, output):
    for name, a in (("k0", k0), ("k1", k1), ("x0", x0), ("x1", x1)):
        if a.dtype is not dt.uint32:
            raise TypeError(f"threefry2x32: {name} must be uint32, got {a.dtype}")
    if k0.shape != () or k1.shape != ():
        raise ValueError("threefry2x32: the key words must be 0-d")
    if x0.shape not in ((), x1.shape):
        raise ValueError(f"threefry2x32: counter words of shapes {x0.shape} and {x1.shape}")
    if output not in OUTPUTS:
        raise ValueError(f"threefry2x32: output must be one of {OUTPUTS}, got {output!r}")
    if output == "pair":
        return aval(x1.shape + (2,), dt.uint32)
    return aval(x1.shape, dt.uint64 if output == "wide" else dt.uint32)


def _impl(k0, k1, x0, x1, *, output):
    k0, k1 = np.uint32(k0), np.uint32(k1)
    x1 = np.asarray(x1, np.uint32)
    y0, y1 = _cipher(_NumPyOps, k0, k1, np.broadcast_to(np.asarray(x0, np.uint32), x1.shape), x1)
    if output == "xor":
        return np.bitwise_xor(y0, y1)
    if output == "wide":
        return (y0.astype(np.uint64) << np.uint64(32)) | y1.astype(np.uint64)
    return np.stack([y0, y1], axis=-1)


class _EmitOps:
    """The rounds as StableHLO: key words are 0-d values, the rest have the counters' aval."""

    def __init__(self, ctx, shape):
        self.ctx = ctx
        self.scalar = aval((), dt.uint32)
        self.aval = aval(shape, dt.uint32)
        self.constants = {}

    def _const(self, value, a):
        k = (value, a.shape)
        if k not in self.constants:
            self.constants[k] = self.ctx.constant(value, a)
        return self.constants[k]

    def key(self, op, a, b):
        s = self.scalar
        if op == "xor2":      # two key words
            return self.ctx.op("stablehlo.xor", (a, b), (s, s), s)
        return self.ctx.op(f"stablehlo.{op}", (a, self._const(b, s)), (s, s), s)

    def full(self, a):
        if not self.aval.shape:
            return a
        return self.ctx.op("stablehlo.broadcast_in_dim", (a,), (self.scalar,), self.aval,
                           attrs="broadcast_dimensions = array<i64>")

    def add(self, a, b):
        return self.ctx.op("stablehlo.add", (a, b), (self.aval, self.aval), self.aval)

    def xor(self, a, b):
        return self.ctx.op("stablehlo.xor", (a, b), (self.aval, self.aval), self.aval)

    def rotl(self, x, r):
        a = self.aval
        left = self.ctx.op("stablehlo.shift_left", (x, self._const(r, a)), (a, a), a)
        right = self.ctx.op("stablehlo.shift_right_logical", (x, self._const(32 - r, a)), (a, a), a)
        return self.ctx.op("stablehlo.or", (left, right), (a, a), a)


def _emit(ctx, k0, k1, x0, x1, *, output):
    a_k0, a_k1, a_x0, a_x1 = ctx.in_avals
    ops = _EmitOps(ctx, a_x1.shape)
    if a_x0.shape != a_x1.shape:
        x0 = ops.full(x0)
    y0, y1 = _cipher(ops, k0, k1, x0, x1)
    a = ops.aval
    if output == "xor":
        return ctx.op("stablehlo.xor", (y0, y1), (a, a), a)
    if output == "wide":
        w = aval(a.shape, dt.uint64)
        h = ctx.op("stablehlo.convert", (y0,), (a,), w)
        lo = ctx.op("stablehlo.convert", (y1,), (a,), w)
        h = ctx.op("stablehlo.shift_left", (h, ctx.constant(32, w)), (w, w), w)
        return ctx.op("stablehlo.or", (h, lo), (w, w), w)
    col = aval(a.shape + (1,), dt.uint32)
    parts = [ctx.op("stablehlo.reshape", (y,), (a,), col) for y in (y0, y1)]
    return ctx.op("stablehlo.concatenate", tuple(parts), (col, col), ctx.out_aval,
                  attrs=f"dimension = {len(a.shape)} : i64")


class _NodeOps:
    """The rounds recorded as nodes, every word (key words too) of one shape: the batching
    rule's cipher when the key differs per example (the primitive takes one key)."""

    def __init__(self, device):
        self.device = device

    def _c(self, value):
        return lax.constant(shape=(), dtype=dt.uint32, value=value, device=self.device)

    def key(self, op, a, b):
        if op == "xor2":
            return lax.bitwise_xor(a, b)
        return lax.bitwise_xor(a, self._c(b)) if op == "xor" else lax.add(a, self._c(b))

    def full(self, a):
        return a

    add = staticmethod(lax.add)
    xor = staticmethod(lax.bitwise_xor)

    def rotl(self, x, r):
        return lax.bitwise_or(lax.shift_left(x, self._c(r)), lax.shift_right_logical(x, self._c(32 - r)))


def _batch(bdims, k0, k1, x0, x1, *, output):
    size = bt.size_of(bdims, (k0, k1, x0, x1))
    dk0, dk1, d0, d1 = bdims
    to = 0 if d1 is None else d1
    x1 = bt.moved(x1, d1, to, size)
    full = x1.aval.shape

    def spread(x, d):      # a 0-d word per example (shape (size,)) or one for all, at every counter
        return lax.broadcast_in_dim(x, shape=full, dims=() if d is None else (to,))

    if d0 is None and not x0.aval.shape:
        pass                                # one 0-d word for all: the primitive takes it
    elif len(x0.aval.shape) == (d0 is not None):
        x0 = spread(x0, d0)                 # a 0-d word per example
    else:
        x0 = bt.moved(x0, d0, to, size)
    if dk0 is None and dk1 is None:       # one key: the primitive itself
        return lax.threefry2x32(k0, k1, x0, x1, output=output), to
    if x0.aval.shape != full:
        x0 = spread(x0, None)
    y0, y1 = _cipher(_NodeOps(x1.device), spread(k0, dk0), spread(k1, dk1), x0, x1)
    if output == "xor":
        return lax.bitwise_xor(y0, y1), to
    if output == "wide":
        wide = [lax.convert(y, dtype=dt.uint64) for y in (y0, y1)]
        shift = lax.constant(shape=(), dtype=dt.uint64, value=32, device=x1.device)
        return lax.bitwise_or(lax.shift_left(wide[0], shift), wide[1]), to
    return lax.concatenate(*[lax.reshape(y, shape=full + (1,)) for y in (y0, y1)],
                           axis=len(full)), to


threefry2x32 = declare("threefry2x32", infer=_infer, emit=_emit, impl=_impl, batch=_batch,
                       padding=pd.ignore("threefry2x32"),
                       source=lambda ctx, k0, k1, x0, x1, *, output:
                       f"xp.primitive('threefry2x32', {k0}, {k1}, {x0}, {x1}, output={output!r})",
                       **ad.no_derivative())
