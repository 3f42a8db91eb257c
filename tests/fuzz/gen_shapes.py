"""Generators of manipulation functions (reshape, permute_dims, concat, stack, flip, roll,
squeeze, expand_dims, tile, repeat, broadcasting, tril/triu, ...)."""
from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from . import values
from .gen_common import (any_value, MAX_ELEMENTS, name_of, size, promote, cast, operand,
                         partner_shape, broadcasts, draw_axis)


# ========================================================================== manipulation

def _factor_shape(b, n):
    """A random shape with `n` elements (one dimension may be -1)."""
    dims = []
    rest = n
    for _ in range(b.draw(st.integers(0, 3))):
        if rest == 0:
            d = b.draw(st.integers(0, 3))
        else:
            divisors = [d for d in range(1, rest + 1) if rest % d == 0]
            d = b.draw(st.sampled_from(divisors))
        dims.append(d)
        rest = rest // d if d else rest
    if n == 0 and 0 not in dims:
        dims.append(0)
    elif n and math.prod(dims) != n:
        dims.append(n // math.prod(dims))
    if n == 0:
        return tuple(dims), tuple(dims)
    shape = tuple(dims)
    if dims and b.draw(st.booleans()):
        i = b.draw(st.integers(0, len(dims) - 1))
        spelled = dims[:i] + [-1] + dims[i + 1:]
        return shape, tuple(spelled)
    return shape, shape


def gen_reshape(b):
    x = any_value(b)
    rx = b.refs[x]
    shape, spelled = _factor_shape(b, rx.size)
    b.define(f"xp.reshape(v{x}, {spelled!r})", rx.map(lambda c: np.reshape(c, shape)), [x],
             "reshape")


def gen_permute_dims(b):
    x = any_value(b)
    rx = b.refs[x]
    perm = tuple(b.draw(st.permutations(range(rx.ndim))))
    if rx.ndim == 2 and b.draw(st.booleans()):
        b.define(f"v{x}.T", rx.map(lambda c: c.T), [x], "T")
        return
    b.define(f"xp.permute_dims(v{x}, {perm!r})", rx.map(lambda c: np.transpose(c, perm)), [x],
             "permute_dims")


def gen_matrix_transpose(b):
    x = operand(b, lambda r: r.ndim >= 2, lambda: b.input(shape=b.draw(values.shapes(min_dims=2))))
    rx = b.refs[x]
    expr = f"v{x}.mT" if b.draw(st.booleans()) else f"xp.matrix_transpose(v{x})"
    b.define(expr, rx.map(lambda c: np.swapaxes(c, -1, -2)), [x], "matrix_transpose")


def gen_expand_dims(b):
    x = any_value(b)
    rx = b.refs[x]
    axis = b.draw(st.integers(-rx.ndim - 1, rx.ndim))
    b.define(f"xp.expand_dims(v{x}, axis={axis})", rx.map(lambda c: np.expand_dims(c, axis)), [x],
             "expand_dims")


def gen_squeeze(b):
    x = operand(b, lambda r: 1 in r.shape,
                lambda: b.input(shape=(1,) + b.draw(values.shapes(max_dims=2))))
    rx = b.refs[x]
    ones = [i for i, s in enumerate(rx.shape) if s == 1]
    axes = b.draw(st.lists(st.sampled_from(ones), min_size=1, unique=True))
    axis = axes[0] if len(axes) == 1 and b.draw(st.booleans()) else tuple(axes)
    b.define(f"xp.squeeze(v{x}, axis={axis!r})", rx.map(lambda c: np.squeeze(c, axis)), [x],
             "squeeze")


def gen_flip(b):
    x = any_value(b)
    rx = b.refs[x]
    axis = draw_axis(b, rx.ndim)
    kw = "" if axis is None else f", axis={axis!r}"
    b.define(f"xp.flip(v{x}{kw})", rx.map(lambda c: np.flip(c, axis)), [x], "flip")


def gen_roll(b):
    x = any_value(b)
    rx = b.refs[x]
    shift_s = st.integers(-6, 6)
    if rx.ndim and b.draw(st.booleans()):
        axes = b.draw(st.lists(st.integers(-rx.ndim, rx.ndim - 1), min_size=1, max_size=2))
        if len({a % rx.ndim for a in axes}) != len(axes):
            axes = axes[:1]
        shifts = [b.draw(shift_s) for _ in axes]
        if len(axes) == 1 and b.draw(st.booleans()):
            shift, axis = shifts[0], axes[0]
        else:
            shift, axis = tuple(shifts), tuple(axes)
        src = f"xp.roll(v{x}, {shift!r}, axis={axis!r})"
        ref = rx.map(lambda c: np.roll(c, shift, axis))
    else:
        shift = b.draw(shift_s)
        src = f"xp.roll(v{x}, {shift})"
        ref = rx.map(lambda c: np.roll(c, shift))
    b.define(src, ref, [x], "roll")


def _joined_partners(b, rx, shape_of):
    """1-2 more arrays for concat/stack: the same value, or new inputs of `shape_of()`
    (same dtype, or one that promotes)."""
    ids = []
    common = name_of(rx)
    for _ in range(b.draw(st.integers(1, 2))):
        shape = shape_of()
        if shape == rx.shape and b.draw(st.booleans()):
            ids.append(None)        # the first operand again
            continue
        dtype = name_of(rx) if b.draw(st.booleans()) else b.draw(st.sampled_from(values.DTYPES))
        if promote(common, dtype) is None:
            dtype = name_of(rx)
        common = promote(common, dtype)
        ids.append(b.input(dtype=dtype, shape=shape))
    return ids


def gen_concat(b):
    x = operand(b, lambda r: r.ndim >= 1, lambda: b.input(shape=b.draw(values.shapes(min_dims=1))))
    rx = b.refs[x]
    axis = b.draw(st.one_of(st.none(), st.integers(-rx.ndim, rx.ndim - 1)))

    def shape_of():
        if axis is None:
            return b.draw(values.shapes(min_dims=1, max_dims=2))
        s = list(rx.shape)
        s[axis] = b.draw(st.integers(0, 3))
        return tuple(s)
    others = [x if i is None else i for i in _joined_partners(b, rx, shape_of)]
    ids = [x] + others
    if b.draw(st.booleans()):
        ids = ids[::-1]
    common = promote(*[b.refs[i].dtype for i in ids])
    parts_ = [cast(b.refs[i], common) for i in ids]
    if axis is None:
        from .reference import combine
        ref = combine(lambda cs: np.concatenate([c.reshape(-1) for c in cs]), parts_)
    else:
        from .reference import combine
        ref = combine(lambda cs: np.concatenate(cs, axis=axis), parts_)
    kw = "axis=None" if axis is None else f"axis={axis}"
    b.define(f"xp.concat([{', '.join(f'v{i}' for i in ids)}], {kw})", ref, ids, "concat")


def gen_stack(b):
    from .reference import combine
    x = any_value(b)
    rx = b.refs[x]
    axis = b.draw(st.integers(-rx.ndim - 1, rx.ndim))
    others = [x if i is None else i for i in _joined_partners(b, rx, lambda: rx.shape)]
    ids = [x] + others
    common = promote(*[b.refs[i].dtype for i in ids])
    ref = combine(lambda cs: np.stack(cs, axis=axis), [cast(b.refs[i], common) for i in ids])
    b.define(f"xp.stack([{', '.join(f'v{i}' for i in ids)}], axis={axis})", ref, ids, "stack")


def gen_broadcast_to(b):
    x = any_value(b)
    rx = b.refs[x]
    shape = tuple(b.draw(st.integers(0, 3)) if s == 1 else s for s in rx.shape)
    lead = tuple(b.draw(st.lists(st.integers(0, 3), max_size=2)))
    shape = lead + shape
    if size(shape) > MAX_ELEMENTS:
        shape = rx.shape
    ref = rx.map(lambda c: np.broadcast_to(c, shape).copy())
    b.define(f"xp.broadcast_to(v{x}, {shape!r})", ref, [x], "broadcast_to")


def gen_broadcast_arrays(b):
    x = any_value(b)
    rx = b.refs[x]
    y = operand(b, lambda r: broadcasts(r.shape, rx.shape),
                lambda: b.input(shape=partner_shape(b, rx.shape)))
    shape = np.broadcast_shapes(rx.shape, b.refs[y].shape)
    which = b.draw(st.integers(0, 1))
    src = [x, y][which]
    ref = b.refs[src].map(lambda c: np.broadcast_to(c, shape).copy())
    b.define(f"xp.broadcast_arrays(v{x}, v{y})[{which}]", ref, [x, y], "broadcast_arrays")


def gen_tile(b):
    x = any_value(b)
    rx = b.refs[x]
    reps = tuple(b.draw(st.lists(st.integers(0, 3), max_size=rx.ndim + 1)))
    out_size = rx.size * size(reps)
    if out_size > MAX_ELEMENTS:
        reps = (1,) * len(reps)
    b.define(f"xp.tile(v{x}, {reps!r})", rx.map(lambda c: np.tile(c, reps)), [x], "tile")


def gen_repeat(b):
    x = any_value(b)
    rx = b.refs[x]
    repeats = b.draw(st.integers(0, 3))
    axis = b.draw(st.one_of(st.none(), st.integers(-rx.ndim, rx.ndim - 1))) if rx.ndim else None
    kw = "" if axis is None else f", axis={axis}"
    b.define(f"xp.repeat(v{x}, {repeats}{kw})", rx.map(lambda c: np.repeat(c, repeats, axis)), [x],
             "repeat")


def gen_moveaxis(b):
    x = operand(b, lambda r: r.ndim >= 1, lambda: b.input(shape=b.draw(values.shapes(min_dims=1))))
    rx = b.refs[x]
    src = b.draw(st.integers(-rx.ndim, rx.ndim - 1))
    dst = b.draw(st.integers(-rx.ndim, rx.ndim - 1))
    b.define(f"xp.moveaxis(v{x}, {src}, {dst})", rx.map(lambda c: np.moveaxis(c, src, dst)), [x],
             "moveaxis")


def gen_unstack(b):
    x = operand(b, lambda r: r.ndim >= 1 and r.size > 0,
                lambda: b.input(shape=(2,) + b.draw(values.shapes(max_dims=2))))
    rx = b.refs[x]
    axes = [a for a in range(rx.ndim) if rx.shape[a] > 0]
    axis = b.draw(st.sampled_from(axes))
    i = b.draw(st.integers(0, rx.shape[axis] - 1))
    b.define(f"xp.unstack(v{x}, axis={axis})[{i}]", rx.map(lambda c: np.take(c, i, axis=axis)), [x],
             "unstack")


def gen_tril(b):
    name = b.draw(st.sampled_from(["tril", "triu"]))
    x = operand(b, lambda r: r.ndim >= 2, lambda: b.input(shape=b.draw(values.shapes(min_dims=2))))
    rx = b.refs[x]
    k = b.draw(st.integers(-3, 3))
    f = np.tril if name == "tril" else np.triu
    # the zeros of tril/triu are exact +0 (status 0 is EXACT)
    b.define(f"xp.{name}(v{x}, k={k})", rx.map(lambda c: f(c, k)), [x], name)


