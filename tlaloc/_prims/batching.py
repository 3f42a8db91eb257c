"""Vocabulary for batching rules (tlaloc.vmap): node-level helpers and rule factories.

A batching rule (`batch=` of a declaration, signature in _prims/core.py) receives the
operands with their mapped axes (`bdims`: an int per mapped operand, None for the others) and
records the operation on the whole batch. The helpers here move a mapped axis where a rule
wants it (`moved`), give an unmapped operand the mapped axis (`moved` with dim None
broadcasts), renumber per-example axes and per-axis parameters (`shifted`, `inserted`), and
build the index vectors of batched gathers and scatters; the factories cover the common
shapes of rule: `unary` (every axis kept), `elementwise`, and `trailing` (an operation over
the trailing axes, whose leading axes are a batch). The last part batches custom derivative
rules (custom_vjp, custom_jvp, checkpoint).
"""
from __future__ import annotations

import threading

from .._graph import Node, bind
from . import lax
from .core import REGISTRY as _P


def size_of(bdims, operands) -> int:
    """The mapped axis' size (every mapped operand has it)."""
    for d, x in zip(bdims, operands):
        if d is not None:
            return x.aval.shape[d]
    raise ValueError("internal: a batching rule called without a mapped operand")


def moved(x, d, to, size):
    """`x` with its mapped axis at `to`: moved from `d`, or (d None) a new axis of `size`
    along which `x` is repeated."""
    shape = x.aval.shape
    if d is None:
        out = shape[:to] + (size,) + shape[to:]
        return lax.broadcast_in_dim(x, shape=out, dims=tuple(i + (i >= to) for i in range(len(shape))))
    if d == to:
        return x
    perm = [i for i in range(len(shape)) if i != d]
    perm.insert(to, d)
    return lax.transpose(x, perm=tuple(perm))


def transposed(x, perm):
    """lax.transpose, pushed into a product of broadcasts (an outer product, as the batched
    gradient of a matrix product is): XLA:CPU would compute the product in one layout and
    copy it into the other, where the broadcasts can write it in place."""
    if x.prim is _P["multiply"] and x.value is None and all(
            i.prim is _P["broadcast_in_dim"] and i.value is None for i in x.inputs):
        shape = tuple(x.aval.shape[p] for p in perm)
        return lax.multiply(*[lax.broadcast_in_dim(i.inputs[0], shape=shape, dims=tuple(
            perm.index(k) for k in i.params["dims"])) for i in x.inputs])
    return lax.transpose(x, perm=perm)


def shifted(axis, d):
    """A per-example axis' number in the batched operand whose mapped axis is `d`."""
    return axis + (axis >= d)


def shifted_all(axes, d):
    return tuple(shifted(a, d) for a in axes)


def inserted(values, d, value):
    """`values` (a tuple per axis) with `value` for the mapped axis at `d`."""
    return tuple(values[:d]) + (value,) + tuple(values[d:])


def first_dim(bdims) -> int:
    return next(d for d in bdims if d is not None)


def unary(name):
    """A primitive of one operand that keeps every axis where it is (convert, the autodiff
    markers, collectives that reduce across devices): the same operation on the batch, the
    mapped axis where it was."""
    def rule(bdims, x, **params):
        return bind(_P[name], (x,), params), bdims[0]
    return rule


def elementwise(name):
    """An elementwise primitive: operands of the example's shape (or 0-d) get the mapped
    axis at one position, the first mapped full-shape operand's, so that the common case
    (every operand mapped at the same axis) moves nothing."""
    def rule(bdims, *xs, **params):
        size = size_of(bdims, xs)
        example = _example_shape(xs, bdims)
        full = [d for x, d in zip(xs, bdims) if d is not None and len(x.aval.shape) > len(example)]
        to = full[0] if full else 0
        operands = []
        for x, d in zip(xs, bdims):
            if d is None and not x.aval.shape:
                operands.append(x)                  # a scalar beside full operands
            elif d is not None and len(x.aval.shape) == 1 and example:   # a mapped scalar
                operands.append(lax.broadcast_in_dim(x, shape=inserted(example, to, size), dims=(to,)))
            else:
                operands.append(moved(x, d, to, size))
        return bind(_P[name], tuple(operands), params), to
    return rule


def _example_shape(xs, dims) -> tuple:
    """The per-example shape of an elementwise operation: its largest operand's, less the
    mapped axis."""
    return max((x.aval.shape if d is None else x.aval.shape[:d] + x.aval.shape[d + 1:]
                for x, d in zip(xs, dims)), key=len)


def trailing(name, core_rank):
    """A primitive over the trailing `core_rank` axes whose leading axes are a batch (the
    linalg factorisations and solves): a mapped axis among the leading ones stays, one among
    the core axes moves to the front. Operands share their leading axes: all get the mapped
    axis at one place."""
    def rule(bdims, *xs, **params):
        size = size_of(bdims, xs)
        to = first_dim(bdims)
        if any(d is not None and d >= len(x.aval.shape) - core_rank for x, d in zip(xs, bdims)) \
                or any(d is None and len(x.aval.shape) - core_rank < to for x, d in zip(xs, bdims)):
            to = 0
        operands = [moved(x, d, to, size) for x, d in zip(xs, bdims)]
        return bind(_P[name], tuple(operands), params), to
    return rule


# ----------------------------------------------------------------------------- coordinates

def with_batch_coordinate(idx):
    """Index vectors (mapped axis first) with the example's number as a new first
    coordinate, so a gather or scatter on an operand with the mapped axis in front reads or
    writes each example's own slice."""
    shape = idx.aval.shape
    number = lax.iota(shape=shape[:-1] + (1,), dtype=idx.aval.dtype, dim=0, device=idx.device)
    return lax.concatenate(number, idx, axis=len(shape) - 1)


def window_coordinates(starts, sdims, shape, sizes, size, dtype):
    """The coordinates of every element of a `sizes` window of an operand of `shape` per
    example, from 0-d starts (mapped ones of shape (size,)) clamped as dynamic_slice clamps
    them: an int array of shape (size, *sizes, len(shape))."""
    full = (size,) + tuple(sizes)
    device = starts[0].device
    cols = []
    for i, (s, d, n, k) in enumerate(zip(starts, sdims, shape, sizes)):
        s = lax.convert(s, dtype=dtype) if s.aval.dtype is not dtype else s
        low = lax.constant(shape=(), dtype=dtype, value=0, device=device)
        high = lax.constant(shape=(), dtype=dtype, value=n - k, device=device)
        s = lax.minimum(lax.maximum(s, low), high)
        s = lax.broadcast_in_dim(s, shape=full, dims=() if d is None else (0,))
        step = lax.iota(shape=full, dtype=dtype, dim=i + 1, device=device)
        cols.append(lax.reshape(lax.add(s, step), shape=full + (1,)))
    return lax.concatenate(*cols, axis=len(full))


# ----------------------------------------------------------------------------- custom rules
#
# A custom derivative call (custom_vjp, custom_jvp, checkpoint) holds a rule object whose
# methods work on one example: the nodes the function recorded for that example. Batched, its
# rule becomes a `BatchedCustomRule`: each derivative runs the example's rule on
# placeholders and batches what it records with the same rewrite that batched the function
# (the rewrite in progress is on this thread's `rewriting`; tlaloc/_vmap.py sets it).

rewriting = threading.local()
rewriting.frame = None


class BatchedCustomRule:
    def __init__(self, rule, original, dims, out_dim, frame):
        self.rule = rule              # the example's rule object
        self.original = original      # the example's custom_derivative_call node
        self.dims = dims              # the batched call's operands' mapped axes
        self.out_dim = out_dim
        self.frame = frame            # the rewrite: .env {example node: (node, dim)}, .batch

    def _placeholder(self, like):
        return Node(None, (), None, like.aval, like.device)

    def _vjp_rule(self, out, ct, arg_nodes, output):
        ct0 = self._placeholder(self.original)
        cts = self.rule._vjp_rule(self.original, ct0, self.original.inputs[1:], output)
        found = self.frame.batch(list(cts), {ct0: (ct, self.out_dim)})
        size = out.aval.shape[self.out_dim] if self.out_dim is not None else None
        result = []
        for (c, d), want, arg in zip(found, self.dims[1:], arg_nodes):
            if c is None:
                result.append(None)
            elif want is None:      # an unmapped argument: the examples' cotangents add up
                result.append(c if d is None else lax.reduce_sum(c, axes=(d,)))
            else:
                result.append(moved(c, d, want, arg.aval.shape[want] if size is None else size))
        return result

    def _jvp_rule(self, out, tangents, arg_nodes, output):
        args0 = self.original.inputs[1:]
        ts0 = [None if t is None else self._placeholder(a) for t, a in zip(tangents, args0)]
        extra = {p: (t, d) for p, t, d in zip(ts0, tangents, self.dims[1:]) if p is not None}
        t0 = self.rule._jvp_rule(self.original, ts0, args0, output)
        ((t, d),) = self.frame.batch([t0], extra)
        if self.out_dim is None:
            if d is not None:
                raise NotImplementedError("vmap: a custom rule's tangent varies along the mapped "
                                          "axis but its value does not")
            return t
        return moved(t, d, self.out_dim, out.aval.shape[self.out_dim])


def custom_call(bdims, value, *args, rule, output):
    """custom_derivative_call: the value is batched with the function; the derivative rule
    is batched when a derivative asks for it."""
    frame = rewriting.frame
    batched = BatchedCustomRule(rule, frame.node, bdims, bdims[0], frame)
    return lax.custom_derivative_call(value, *args, rule=batched, output=output), bdims[0]
