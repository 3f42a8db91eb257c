"""Node-level building blocks shared by indexing, searching, sorting, set and extra functions.

Everything here records primitives on graph nodes (no Arrays, no argument checking). The one
exception is `concrete`, the evaluation trigger for functions whose output *shape* depends on
values (nonzero, unique_*, boolean masks, repeat with array repeats): it computes a few
scalars now and leaves the rest of the work recorded.
"""
from __future__ import annotations

import math

import numpy as np

from .. import _dtypes as dt
from .._context import trace
from .._graph import evaluate
from ._core import cast, constant, host_leaf, on_host
from .._prims import lax
from .._prims import padding


def index_dtype():
    return dt.DEFAULTS.indexing


def const(value, shape, dtype, device):
    return constant(value, tuple(shape), dtype, device)


def const_like(node, value):
    return constant(value, node.aval.shape, node.aval.dtype, node.device)


def iota(shape, dim, device, dtype=None):
    return lax.iota(shape=tuple(shape), dtype=dtype or index_dtype(), dim=dim, device=device)


def reshape(node, shape):
    shape = tuple(shape)
    if node.aval.shape == shape:
        return node
    return lax.reshape(node, shape=shape)


def flatten(node):
    return reshape(node, (math.prod(node.aval.shape),))


def transpose(node, perm):
    perm = tuple(perm)
    if perm == tuple(range(len(perm))):
        return node
    return lax.transpose(node, perm=perm)


def broadcast(node, shape, dims=None):
    """Broadcast `node` to `shape`; `dims` maps its dimensions (default: trailing)."""
    shape = tuple(shape)
    if dims is None:
        if node.aval.shape == shape:
            return node
        nd = len(node.aval.shape)
        dims = tuple(range(len(shape) - nd, len(shape)))
    return lax.broadcast_in_dim(node, shape=shape, dims=tuple(dims))


def slice_axis(node, axis, start, stop, step=1):
    shape = node.aval.shape
    lo = [0] * len(shape)
    hi = list(shape)
    st = [1] * len(shape)
    lo[axis], hi[axis], st[axis] = start, stop, step
    if (start, stop, step) == (0, shape[axis], 1):
        return node
    return lax.slice(node, start=tuple(lo), limit=tuple(hi), strides=tuple(st))


def concat(nodes, axis):
    nodes = [n for n in nodes if n.aval.shape[axis] != 0] or nodes[:1]
    if len(nodes) == 1:
        return nodes[0]
    return lax.concatenate(*nodes, axis=axis)


def compare(a, b, direction):
    return lax.compare(a, b, direction=direction)


def select(pred, a, b):
    return lax.select(pred, a, b)


def isnan(node):
    return compare(node, node, "NE")


def logical_not(node):
    return lax.bitwise_not(node)


def normalize_indices(idx, n, length=None):
    """int64 indices with negative values counted from the end (value + n, or + `length`,
    the true length of a dynamic axis: `dynamic_length`)."""
    idx = cast(idx, index_dtype())
    if idx.aval.dtype.kind == "u":
        return idx
    if length is None and on_host(idx.device):
        host = known_value(idx)
        if host is not None:
            # Computed, in host memory: wrapped there. Either way the result is a computed
            # array, which every program reads as an input, so no program's structure
            # depends on whether the values had negatives.
            if not host.size or host.min() >= 0:
                return idx
            return host_leaf(np.where(host < 0, host + n, host), idx.device, idx.aval.names)
    negative = compare(idx, const_like(idx, 0), "LT")
    end = const_like(idx, n) if length is None else lax.convert(length, dtype=idx.aval.dtype)
    return select(negative, lax.add(idx, end), idx)


def dynamic_length(x, axis):
    """The true length of node `x`'s `axis` (a 0-d int32 node) when it is a dynamic axis of
    the tlaloc.jit trace in progress (tlaloc/_prims/padding.py), else None."""
    lengths = padding.lengths_of(x)
    return None if lengths is None else lengths[axis]


def fixed_index_bound(x, axis, n):
    """The size that index values known at trace time are checked against: `n`, or along a
    dynamic axis the smallest size of its range (a fixed index must lie inside every size),
    with words for the message."""
    length = dynamic_length(x, axis)
    if length is None:
        return n, f"size {n}"
    name = padding.name_of(length)
    low = padding.current.ranges[name][0]
    return low, f"dynamic axis {name!r}, whose sizes go down to {low}"


def gather_axes(x, indices, axes):
    """x[indices[..., 0], indices[..., 1], ...] over `axes`; result: batch + other dims."""
    return lax.gather(x, indices, axes=tuple(axes))


def take_axis(x, idx, axis):
    """x indexed by the (normalised) integer array `idx` along `axis`:
    shape x.shape[:axis] + idx.shape + x.shape[axis+1:]. Clamps out-of-bounds values."""
    ishape = idx.aval.shape
    col = reshape(idx, ishape + (1,))
    g = gather_axes(x, col, (axis,))            # ishape + rest
    ni, nd = len(ishape), len(x.aval.shape)
    perm = list(range(ni, ni + axis)) + list(range(ni)) + list(range(ni + axis, ni + nd - 1))
    return transpose(g, perm)


def cumsum(node, axis, kind="sum"):
    if node.aval.shape[axis] <= 1:
        return node
    return lax.cumulative(node, axis=axis, kind=kind)


def reduce(prim, node, axes):
    axes = tuple(axes)
    return prim(node, axes=axes) if axes else node


def count_true(mask, axes=None):
    ints = cast(mask, index_dtype())
    axes = tuple(range(len(mask.aval.shape))) if axes is None else axes
    return reduce(lax.reduce_sum, ints, axes)


# XLA:CPU sorts one operand with a plain integer comparison several times faster than it
# sorts several operands, or floats with a NaN-aware comparator. So keys are turned into
# integers that compare like the floats in NumPy's order, values are sorted as such integers
# and turned back, and a permutation of keys of at most 32 bits is sorted as one int64 that
# packs the key above the index (which also makes the sort stable).

_INT_OF_BITS = {8: dt.int8, 16: dt.int16, 32: dt.int32, 64: dt.int64}


def ordered_int(node, zeros_equal=True):
    """An integer node that sorts like `node` (bool, integer or real floating) in NumPy's
    order: every NaN is the largest value, and -0.0 equals +0.0 when `zeros_equal` (else
    -0.0 sorts just before +0.0). Integers are returned as they are."""
    d = node.aval.dtype
    if d.kind == "b":
        return cast(node, dt.int8)
    if d.kind in dt.INTEGER_KINDS:
        return node
    x = node
    if zeros_equal:
        x = select(compare(x, const_like(x, 0), "EQ"), const_like(x, 0.0), x)
    x = select(isnan(x), const_like(x, float("nan")), x)
    it = _INT_OF_BITS[d.bits]
    bits = lax.bitcast_convert(x, dtype=it)
    return _flip_negative(bits)


def _flip_negative(bits):
    """Negative floats' bit patterns order backwards; flipping all but the sign bit of the
    negative ones makes signed integer order match float order (an involution)."""
    it = bits.aval.dtype
    negative = compare(bits, const_like(bits, 0), "LT")
    flipped = lax.bitwise_xor(bits, const_like(bits, int(np.iinfo(it.numpy).max)))
    return select(negative, flipped, bits)


def _sort_one(node, dimension, descending):
    return lax.sort(node, dimension=dimension, num_keys=1, descending=descending, output=0)


def sort_values(node, dimension, descending=False):
    """`node` (real) sorted along `dimension` in NumPy's order (NaN last ascending, first
    descending; the sign of a NaN's bit pattern is not kept, and -0.0 sorts before +0.0)."""
    if node.aval.shape[dimension] <= 1:
        return node
    d = node.aval.dtype
    if d.kind != "f":
        return _sort_one(node, dimension, descending)
    if trace.retain_graph:
        # derivatives are being recorded: sort the values along with their integer keys,
        # so the result is the sort primitive's own operand (which has derivative rules)
        return lax.sort(ordered_int(node, zeros_equal=False), node, dimension=dimension,
                        num_keys=1, descending=descending, output=1)
    ordered = _sort_one(ordered_int(node, zeros_equal=False), dimension, descending)
    return lax.bitcast_convert(_flip_negative(ordered), dtype=d)


def argsort_keys(keys, dimension, descending=False):
    """The stable permutation (int64) that sorts the lexicographic keys (real nodes) along
    `dimension` in NumPy's order."""
    shape = keys[0].aval.shape
    n = shape[dimension]
    order = iota(shape, dimension, keys[0].device)
    if n <= 1:
        return order
    ints = [ordered_int(k) for k in keys]
    if len(ints) == 1 and ints[0].aval.dtype.bits <= 32 and n < 2 ** 31:
        k = cast(ints[0], dt.int64)
        if ints[0].aval.dtype is dt.uint32:
            k = lax.subtract(k, const_like(k, 2 ** 31))
        if descending:     # reverse the key order, keep the index order: stable
            k = lax.subtract(const_like(k, -1), k)
        packed = lax.add(lax.shift_left(k, const_like(k, 32)), order)
        ordered = _sort_one(packed, dimension, False)
        return lax.bitwise_and(ordered, const_like(ordered, 0xFFFFFFFF))
    return lax.sort(*ints, order, dimension=dimension, num_keys=len(ints), descending=descending,
                    output=len(ints))


def sort_keys(keys, dimension, descending=False):
    """`keys[0]` sorted by the lexicographic keys."""
    if len(keys) == 1:
        return sort_values(keys[0], dimension, descending)
    if keys[0].aval.shape[dimension] <= 1:
        return keys[0]
    return lax.sort(*keys, dimension=dimension, num_keys=len(keys), descending=descending, output=0)


def sort_key_parts(node):
    """The keys that sort `node` in NumPy's order: complex numbers by (real, imag)."""
    if node.aval.dtype.kind == "c":
        return [lax.real(node), lax.imag(node)]
    return [node]


def concrete(*nodes, keep=()):
    """Evaluate `nodes` (and the pending intermediates `keep`, so the next program reads
    them instead of recomputing them); returns the values of `nodes` as NumPy arrays."""
    evaluate(list(nodes) + list(keep))
    return [n.device.backend.to_numpy(n.value) for n in nodes]


def known_value(node):
    """The host value of `node` if it is already computed, else None (computes nothing)."""
    if node.value is None:
        return None
    return node.device.backend.to_numpy(node.value)


def compact_positions(mask, count):
    """For a 1-d bool `mask` with `count` true elements: the int64 array (count,) of the
    positions of the true elements, in order (a cumulative sum and a scatter)."""
    n = mask.aval.shape[0]
    dev = mask.device
    if count == n:
        return iota((n,), 0, dev)
    ones = cast(mask, index_dtype())
    slot = lax.subtract(cumsum(ones, 0), const_like(ones, 1))
    slot = select(mask, slot, const_like(slot, count))        # out of bounds: dropped
    return lax.scatter(const(0, (count,), index_dtype(), dev), reshape(slot, (n, 1)),
                       iota((n,), 0, dev), axes=(0,), mode="set")


def unravel(flat_idx, shape):
    """Per-dimension coordinates of flat (C-order) indices in [0, prod(shape))."""
    out = []
    stride = math.prod(shape)
    for d, n in enumerate(shape):
        stride //= n
        c = flat_idx
        if stride != 1:
            c = lax.divide(c, const_like(c, stride))
        if d > 0:
            c = lax.remainder(c, const_like(c, n))
        out.append(c)
    return out


def nonzero_nodes(mask):
    """The coordinates of the true elements of a bool node, one int64 (k,) node per
    dimension (evaluates the count k)."""
    shape = mask.aval.shape
    dev = mask.device
    if shape and on_host(dev):
        # The count needs the mask's value, which is host memory here: NumPy finds the
        # coordinates, in place of the dozen operations that count, compact and unravel
        # (integers: a derivative through what they index is recorded as before).
        (host,) = concrete(mask)
        idx = index_dtype().numpy
        return [host_leaf(np.asarray(c, dtype=idx), dev) for c in np.nonzero(host)]
    n = math.prod(shape)
    flat = flatten(mask)
    k = 0
    if n:
        (k,) = concrete(count_true(flat), keep=(flat,))
        k = int(k)
    if k == 0:
        return [const(0, (0,), index_dtype(), dev) for _ in shape]
    positions = compact_positions(flat, k)
    return unravel(positions, shape)
