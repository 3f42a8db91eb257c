"""Vocabulary for padding rules (tlaloc.jit(f, dynamic=...)): masks and rule factories.

A dynamic axis is a named axis whose size changes between calls. A call pads its arguments
along such axes to a bucket size, so one program serves every size of the bucket; the true
size enters the program as a 0-d int32 input (its *length*). Positions at and past the
length hold values nothing may depend on (not zeros: exp(0), 1 / 0, ... fill them).

The arguments' padded axes are those with dynamic names. Past them, the rewrite that applies
the rules (tlaloc/_dynamic.py) tracks which axes of each value are padded, and with which
length, positionally (as vmap tracks mapped axes): by the primitive's names rule applied to
the padded axes' names, so a namespace function that renames axes on the way (matmul) loses
nothing. A padding rule (`padding=` of a declaration, signature in _prims/core.py) records
its operation so that the data positions of the result equal the unpadded computation's. It
returns the result node, or `(node, lengths)` when the result's padded axes are not the ones
the names rule gives (a window of data positions is not padded). The factories here cover
the shapes of rule:

  * `ignore`: each result position reads the same positions of its operands along padded
    axes (elementwise operations, transposes, broadcasts, forward scans along the axis);
  * `keeps_axes(name)`: as `ignore`, for operations that could merge or split a padded axis
    (reshape): they may keep it, never lose it;
  * `reduction(name, identity)`: padded reduced axes are filled with the identity first;
  * `along(name, axes_of, why)`: harmless unless the operation works along a padded axis,
    where it cannot;
  * `trailing(name, core_rank, why)`: matrix functions, harmless along batch axes only;
  * `cannot(name, why)`: the operation cannot honour padding: PaddingError at trace time
    naming the primitive and the axis.

and the rules of single primitives follow: windows and indices kept inside the true length
(`slice_rule`, `dynamic_slice_rule`, `dynamic_update_slice_rule`, `gather_rule`,
`scatter_rule`), `reverse_rule`, `sort_rule` (padding sorts last), `dot_general_rule`
(contracted padding is zero), `renames`.
"""
from __future__ import annotations

import threading

from .. import _dtypes as dt
from .. import _graph
from .._graph import bind
from . import lax
from .core import REGISTRY as _P


class PaddingError(ValueError):
    """A primitive cannot honour padding along a dynamic axis (raised at trace time)."""


class DynamicAxes(threading.local):
    """The dynamic axes of the trace in progress on this thread: {name: (low, high)}, the
    true lengths as 0-d int32 nodes ({name: node}), empty outside a dynamic trace; and the
    region ops (cond) already rewritten, whose other results are found there."""
    ranges: dict = {}
    lengths: dict = {}
    regions: dict = {}


current = DynamicAxes()


def lengths_of(x):
    """By `x`'s axis names: one entry per axis, the true length (a node) of a dynamic axis
    or None; None when no axis is dynamic (the form of a rule's `lengths` entries). An axis
    no larger than its range's smallest size holds data only (its bucket serves that one
    size) and is not padded."""
    names = x.aval.names
    if names is None or not current.lengths:
        return None
    out = tuple(current.lengths.get(n) if n in current.lengths and size > current.ranges[n][0]
                else None for n, size in zip(names, x.aval.shape))
    return out if any(n is not None for n in out) else None


def padded(lengths) -> dict:
    """{axis: true length} of one operand's `lengths` entry."""
    return {a: n for a, n in enumerate(lengths or ()) if n is not None}


def name_of(length) -> str:
    """The dynamic axis whose true length is the node `length`."""
    return next((n for n, node in current.lengths.items() if node is length), "?")


def refuse(prim, x, axis, length, why):
    raise PaddingError(f"{prim}: cannot honour padding along dynamic axis {name_of(length)!r} "
                       f"(axis {axis} of a {x.aval.shape} operand): {why}")


# ----------------------------------------------------------------------------- the rewrite

def rewrite(targets, known=None):
    """The pending graph behind `targets`, padding-correct: ({node: its replacement},
    layout), where layout(node) gives a node's padded axes (a true length or None per axis,
    or None). Each operation with a padded operand is recorded again by its primitive's
    padding rule; operations downstream of a replaced one are recorded again on the
    replacements. Padded axes are tracked by position: the arguments' are their dynamic
    axes (or `known`: {leaf: its padded axes}, a sub-program's placeholders), a result's are
    what the primitive's names rule gives for its operands' padded axes (or what its padding
    rule says)."""
    order, seen, stack = [], set(), list(targets)
    while stack:
        n = stack.pop()
        if n in seen or n.prim is None or n.value is not None:
            continue
        seen.add(n)
        order.append(n)
        stack.extend(n.inputs)
    order.sort(key=lambda n: n.number)
    env, padded_by = {}, {}

    def layout(node):
        if known and node in known:
            return known[node]
        if node.prim is None or node.value is not None:
            return lengths_of(node)     # an argument: by its names
        return padded_by.get(node)

    for node in order:
        inputs = tuple(env.get(i, i) for i in node.inputs)
        lengths = tuple(layout(i) for i in inputs)
        if any(ls is not None for ls in lengths):
            new, out = _apply_rule(node, inputs, lengths)
            if out is not None:
                padded_by[new] = out
            if new.aval.names != node.aval.names:      # names as the function recorded them
                new = lax.rename(new, names=node.aval.names)
                if out is not None:
                    padded_by[new] = out
        elif any(a is not b for a, b in zip(inputs, node.inputs)):
            new = bind(node.prim, inputs, node.params, node.device)
        else:
            continue
        env[node] = new
    return env, layout


def _apply_rule(node, inputs, lengths):
    """(replacement, its padded axes) of `node` by its primitive's padding rule."""
    prim = node.prim
    if prim.padding is None:
        raise NotImplementedError(f"jit(dynamic=...): primitive {prim.name} has no padding rule, "
                                  "so it cannot run on an operand padded along a dynamic axis")
    result = prim.padding(lengths, *inputs, **node.params)
    new, said = result if isinstance(result, tuple) else (result, None)
    if new.aval.shape != node.aval.shape or new.aval.dtype is not node.aval.dtype:
        raise AssertionError(f"internal: {prim.name}'s padding rule changed {node.aval} into "
                             f"{new.aval}")
    if isinstance(result, tuple) and said is not KEEPS:
        return new, said                   # the rule knows the result's padded axes
    out = _by_names(prim, node.aval, inputs, lengths, node.params)
    if said is KEEPS:
        kept = {n for n in out or () if n is not None}
        for x, ls in zip(inputs, lengths):
            for axis, n in padded(ls).items():
                if n not in kept:
                    refuse(prim.name, x, axis, n, "the result no longer has this axis whole "
                              "(merged or split); keep dynamic axes as axes of their own")
    return new, out


def _by_names(prim, out_aval, inputs, lengths, params):
    """The result's padded axes by the primitive's names rule, applied to the operands'
    padded axes named by their dynamic names."""
    avals = [_graph.Aval(x.aval.shape, x.aval.dtype,
                  None if ls is None else tuple(None if n is None else name_of(n) for n in ls))
             for x, ls in zip(inputs, lengths)]
    names = prim.names(_graph.Aval(out_aval.shape, out_aval.dtype), *avals, **params)
    if names is None:
        return None
    out = tuple(current.lengths.get(n) for n in names)
    return out if any(n is not None for n in out) else None


# ----------------------------------------------------------------------------- masks

def mask(shape, device, lengths: dict):
    """A bool node of `shape`: True at data positions along each axis of `lengths` ({axis:
    true length}); None for no axis."""
    out = None
    for a, n in lengths.items():
        position = lax.iota(shape=shape, dtype=dt.int32, dim=a, device=device)
        inside = lax.compare(position, n, direction="LT")
        out = inside if out is None else lax.bitwise_and(out, inside)
    return out


def valid(x, lengths, axes=None):
    """A bool node of `x`'s shape: True at data positions along the padded axes among `axes`
    (all padded axes for None); None when none of them is padded."""
    return mask(x.aval.shape, x.device, {a: n for a, n in enumerate(lengths or ())
                                         if n is not None and (axes is None or a in axes)})


def filled(x, lengths, axes, value):
    """`x` with `value` at the padding positions of its padded axes among `axes` (`lengths`
    as a rule receives it: a true length or None per axis)."""
    inside = valid(x, lengths, axes)
    if inside is None:
        return x
    fill = lax.constant(shape=(), dtype=x.aval.dtype, value=value, device=x.device)
    return lax.select(inside, x, fill)


def clamped(start, high):
    """A 0-d integer start clamped to [0, high] (`high` a 0-d int32 node)."""
    dtype = start.aval.dtype
    if high.aval.dtype is not dtype:
        high = lax.convert(high, dtype=dtype)
    zero = lax.constant(shape=(), dtype=dtype, value=0, device=start.device)
    return lax.maximum(lax.minimum(start, high), zero)


def minus(length, k):
    """length - k as a 0-d int32 node."""
    return lax.subtract(length, lax.constant(shape=(), dtype=dt.int32, value=k,
                                             device=length.device))


# ----------------------------------------------------------------------------- factories

def ignore(name):
    """Padding passes through: the operation on the padded operands."""
    def rule(lengths, *xs, **params):
        return bind(_P[name], xs, params)
    return rule


def keeps_axes(name):
    """The operation may move a padded axis but must keep it whole: one that would merge or
    split it cannot honour its padding. (The rewrite checks the result: `kept` below.)"""
    def rule(lengths, *xs, **params):
        out = bind(_P[name], xs, params)
        return out, KEEPS
    return rule


KEEPS = "keeps"    # a rule's answer: the result keeps every padded axis (checked by the rewrite)


def renames(lengths, x, *, names):
    """rename: the same positions stay padded, whatever the names become."""
    return lax.rename(x, names=names), lengths[0]


def reduction(name, identity):
    """A reduction over `axes`: padded reduced axes hold `identity(dtype)` first."""
    def rule(lengths, x, *, axes):
        fill = filled(x, lengths[0], axes, identity(x.aval.dtype))
        return bind(_P[name], (fill,), {"axes": axes})
    return rule


def along(name, axes_of, why):
    """An operation along the axes `axes_of(*xs, **params)` of operand 0: padding along the
    other axes passes through; along those, it cannot (PaddingError saying `why`)."""
    def rule(lengths, *xs, **params):
        inside = set(axes_of(*xs, **params))
        for axis, n in padded(lengths[0]).items():
            if axis in inside:
                refuse(name, xs[0], axis, n, why)
        return bind(_P[name], xs, params)
    return rule


def cannot(name, why):
    """The primitive cannot honour padding along any axis of its operands."""
    def rule(lengths, *xs, **params):
        for x, ls in zip(xs, lengths):
            for axis, n in padded(ls).items():
                refuse(name, x, axis, n, why)
        raise PaddingError(f"internal: {name}'s padding rule called without a padded operand")
    return rule


def trailing(name, core_rank, why):
    """A primitive over its operands' trailing `core_rank` axes (linalg): padding along the
    leading (batch) axes passes through, along the core axes it cannot."""
    def rule(lengths, *xs, **params):
        for x, ls in zip(xs, lengths):
            for axis, n in padded(ls).items():
                if axis >= len(x.aval.shape) - core_rank:
                    refuse(name, x, axis, n, why)
        return bind(_P[name], xs, params)
    return rule


# ----------------------------------------------------------------------------- indexing
#
# Positions are data positions: a window or an index along a padded axis must stay inside
# the true length, as it stays inside the size unpadded. A static window that starts past
# the data or reaches past the smallest size of the range (x[-1], x[1:]: the namespace has
# already made them positions from the bucket's end) cannot be honoured.

def _head(prim, x, axis, length, size, what):
    """PaddingError unless a window of `size` along a padded axis fits the smallest size of
    the range (then it holds data only)."""
    low = current.ranges[name_of(length)][0]
    if size > low:
        refuse(prim, x, axis, length, f"{what} of {size} position(s) does not fit the "
               f"smallest size {low}; take the whole axis, or use positions from "
               "tlaloc.dim_size")


def _fits(prim, x, axis, length, size, known, what):
    """PaddingError unless a window of `size` at a run-time start (clamped to the data), or
    at the fixed position `known`, lies inside every size of the range."""
    if known is None:
        _head(prim, x, axis, length, size, what)
        return
    low = current.ranges[name_of(length)][0]
    if known + size > low:
        refuse(prim, x, axis, length, f"the fixed position {known} may lie past the data "
               f"(sizes go down to {low}; a negative index counts from the bucket's end); "
               "index with positions computed from tlaloc.dim_size")


def _known(start):
    """The value of a start position fixed when the function was traced (a constant, or a
    Python int captured as an input), else None. A fixed position may be a negative index
    the namespace counted from the bucket's end (x[-1]): it must lie inside every size."""
    if start.prim is None and start.value is not None and not start.aval.shape:
        try:
            return int(start.value)
        except (TypeError, ValueError):
            return None
    if start.prim is _P.get("constant") and not start.aval.shape:
        return int(start.params["value"])
    return None


def _without(lengths, axes):
    """`lengths` with `axes` no longer padded (a window of data positions)."""
    out = tuple(None if a in axes else n for a, n in enumerate(lengths))
    return out if any(n is not None for n in out) else None


def slice_rule(lengths, x, *, start, limit, strides):
    head = []
    for axis, n in padded(lengths[0]).items():
        lo, hi, st, size = start[axis], limit[axis], strides[axis], x.aval.shape[axis]
        if (lo, hi, st) == (0, size, 1):
            continue                       # the whole axis
        if lo > 0 and hi == size:
            refuse("slice", x, axis, n, "a slice to the end of a dynamic axis has a length "
                   "that depends on the size (x[1:], x[-k:]); mask with tlaloc.dim_size instead")
        _head("slice", x, axis, n, hi, "a static slice")
        head.append(axis)
    out = lax.slice(x, start=start, limit=limit, strides=strides)
    return out, _without(lengths[0], head)


def dynamic_slice_rule(lengths, x, *starts, sizes):
    starts = list(starts)
    head = []
    for axis, n in padded(lengths[0]).items():
        k = sizes[axis]
        if k == x.aval.shape[axis]:
            continue                       # the whole axis (its start clamps to 0)
        _fits("dynamic_slice", x, axis, n, k, _known(starts[axis]), "a window")
        starts[axis] = clamped(starts[axis], minus(n, k))
        head.append(axis)
    return lax.dynamic_slice(x, *starts, sizes=sizes), _without(lengths[0], head)


def dynamic_update_slice_rule(lengths, x, update, *starts):
    starts = list(starts)
    into = padded(lengths[0])
    for axis, n in padded(lengths[1]).items():
        if into.get(axis) is not n:
            refuse("dynamic_update_slice", update, axis, n, "the updated array's axis is not "
                   "this dynamic axis")
    for axis, n in into.items():
        k = update.aval.shape[axis]
        if k == x.aval.shape[axis]:
            continue
        _fits("dynamic_update_slice", x, axis, n, k, _known(starts[axis]), "an update")
        starts[axis] = clamped(starts[axis], minus(n, k))
    return lax.dynamic_update_slice(x, update, *starts)


def _coordinate_bounds(x, idx, axes, lengths):
    """idx's coordinates clamped to the true lengths of x's padded indexed axes."""
    dtype = idx.aval.dtype
    if not any(lengths[a] is not None for a in axes):
        return idx
    parts = []
    for a in axes:
        if lengths[a] is not None:
            top = lax.convert(minus(lengths[a], 1), dtype=dtype)
            parts.append(lax.reshape(top, shape=(1,)))
        else:
            parts.append(lax.constant(shape=(1,), dtype=dtype, value=x.aval.shape[a] - 1,
                                      device=x.device))
    top = lax.concatenate(*parts, axis=0) if len(parts) > 1 else parts[0]
    n = len(idx.aval.shape)
    return lax.minimum(idx, lax.broadcast_in_dim(top, shape=idx.aval.shape, dims=(n - 1,)))


def gather_rule(lengths, x, idx, *, axes):
    # clamped to the data (gather clamps to the bucket); padded index batch axes pass through
    if lengths[0] is not None:
        idx = _coordinate_bounds(x, idx, axes, lengths[0])
    return lax.gather(x, idx, axes=axes)


def scatter_rule(lengths, x, idx, updates, *, axes, mode):
    # updates at padding positions of the index batch axes go out of bounds (dropped), so
    # they write nothing; coordinates past the data of a padded indexed axis write padding
    nb = len(idx.aval.shape) - 1
    batch = {}
    for ls in (lengths[1], lengths[2]):
        batch.update({a: n for a, n in enumerate((ls or ())[:nb]) if n is not None})
    keep = mask(idx.aval.shape[:nb], idx.device, batch)
    window = [d for d in range(len(x.aval.shape)) if d not in axes]
    into = padded(lengths[0])
    for axis, n in padded(lengths[2]).items():
        if axis >= nb and into.get(window[axis - nb]) is not n:
            refuse("scatter", updates, axis, n, "the updated array's axis is not this dynamic axis")
    if keep is not None:
        outside = lax.constant(shape=(), dtype=idx.aval.dtype, value=-1, device=idx.device)
        idx = lax.select(lax.broadcast_in_dim(keep, shape=idx.aval.shape, dims=tuple(range(nb))),
                         idx, outside)
    return lax.scatter(x, idx, updates, axes=axes, mode=mode)


def reverse_rule(lengths, x, *, dims):
    # reversed, a padded axis has its data at the end: shifted back to the front by a
    # window of the axis doubled (its start, bucket - length, is a run-time value)
    out = lax.reverse(x, dims=dims)
    shape = x.aval.shape
    for axis, n in padded(lengths[0]).items():
        if axis not in dims:
            continue
        zero = lax.constant(shape=(), dtype=x.aval.dtype, value=0, device=x.device)
        high = tuple(shape[a] if a == axis else 0 for a in range(len(shape)))
        doubled = lax.pad(out, zero, low=(0,) * len(shape), high=high, interior=(0,) * len(shape))
        start = lax.convert(lax.subtract(lax.constant(shape=(), dtype=dt.int32, value=shape[axis],
                                                      device=x.device), n), dtype=dt.int64)
        starts = [start if a == axis else lax.constant(shape=(), dtype=dt.int64, value=0,
                                                       device=x.device) for a in range(len(shape))]
        out = lax.dynamic_slice(doubled, *starts, sizes=shape)
    return out


def sort_rule(lengths, *operands, dimension, num_keys, descending, output):
    # a first key that sorts the padding after the data, in either direction
    n = next((ls[dimension] for ls in lengths if ls is not None and ls[dimension] is not None), None)
    if n is None:
        return lax.sort(*operands, dimension=dimension, num_keys=num_keys,
                        descending=descending, output=output)
    x = operands[0]
    position = lax.iota(shape=x.aval.shape, dtype=dt.int32, dim=dimension, device=x.device)
    position = lax.rename(position, names=x.aval.names)   # the result's names are operand 0's
    last = lax.compare(position, n, direction="LT" if descending else "GE")
    return lax.sort(last, *operands, dimension=dimension, num_keys=num_keys + 1,
                    descending=descending, output=output + 1)


def dot_general_rule(lengths, lhs, rhs, *, contract, batch):
    # contracted padded axes are zero on both sides (garbage times zero could be nan)
    (lc, rc) = contract
    ll = list(lengths[0] or (None,) * len(lhs.aval.shape))
    rl = list(lengths[1] or (None,) * len(rhs.aval.shape))
    lz, rz = [None] * len(ll), [None] * len(rl)
    for a, b in zip(lc, rc):
        n = ll[a] if ll[a] is not None else rl[b]
        lz[a], rz[b] = n, n
    lhs = filled(lhs, tuple(lz), lc, 0)
    rhs = filled(rhs, tuple(rz), rc, 0)
    return lax.dot_general(lhs, rhs, contract=contract, batch=batch)
