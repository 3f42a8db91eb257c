"""Generators of indexing (basic keys, integer arrays, boolean masks, take,
take_along_axis), `__setitem__`, sorting and searching."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from . import reductions, values
from .gen_common import (any_value, name_of, kind, size, promote, cast, dtypes_of_kinds, operand,
                         scalar_for, scalar_ref)
from .reference import EXACT, FREE, RANGE, Ref, finish, is_complex, is_float


# ============================================================================== indexing

def _slice(b, n):
    bound = st.one_of(st.none(), st.integers(-n - 2, n + 2))
    step = b.draw(st.sampled_from([None, 1, 2, -1, -2, 3]))
    return slice(b.draw(bound), b.draw(bound), step)


def slice_source(s: slice) -> str:
    text = ("" if s.start is None else str(s.start)) + ":" + ("" if s.stop is None else str(s.stop))
    if s.step is not None:
        text += f":{s.step}"
    return text


def key_source(key) -> str:
    """Source of an index key whose items are ints, slices, None, Ellipsis or value ids
    (("v", i) for an index array). x[k] and x[(k,)] are the same key."""
    items = []
    for k in key:
        if isinstance(k, slice):
            items.append(slice_source(k))
        elif k is None:
            items.append("None")
        elif k is Ellipsis:
            items.append("...")
        elif isinstance(k, tuple):
            items.append(f"v{k[1]}")
        else:
            items.append(str(k))
    return ", ".join(items) if items else "()"


def basic_key(b, shape):
    """A key of ints, slices, None and at most one Ellipsis, valid for `shape`."""
    key = []
    axis = 0
    used_ellipsis = False
    while axis < len(shape):
        choice = b.draw(st.sampled_from(["int", "slice", "slice", "full", "none", "ellipsis",
                                         "stop"]))
        n = shape[axis]
        if choice == "stop":
            break
        if choice == "int" and n > 0:
            key.append(b.draw(st.integers(-n, n - 1)))
            axis += 1
        elif choice == "none":
            key.append(None)
        elif choice == "ellipsis" and not used_ellipsis:
            key.append(Ellipsis)
            used_ellipsis = True
            axis = len(shape) - b.draw(st.integers(0, len(shape) - axis))
        elif choice == "full":
            key.append(slice(None))
            axis += 1
        else:
            key.append(_slice(b, n))
            axis += 1
    return key


def numpy_key(b, key):
    return tuple(b.refs[k[1]].v if isinstance(k, tuple) else k for k in key)


def _index_array(b, n, shape, unique=False):
    """An integer index array for an axis of size n (n > 0): an exact in-bounds value of
    the program, or a new input."""
    def ok(r):
        return (kind(r) in "iu" and r.shape == shape and r.all_exact()
                and (r.size == 0 or (int(r.v.min()) >= -n and int(r.v.max()) < n))
                and (not unique or len(set(int(v) % n for v in r.v.reshape(-1))) == r.size))
    i = b.pick(ok) if b.draw(st.booleans()) else None
    if i is not None:
        return i
    dtype = b.draw(st.sampled_from(["int64", "int32", "int8", "uint8", "int16"]))
    info = np.iinfo(dtype)
    lo, hi = max(-n, int(info.min)), min(n - 1, int(info.max))
    count = size(shape)
    if unique:
        count = min(count, n)
        shape = (count,)
        vals = b.draw(st.lists(st.integers(0, n - 1), min_size=count, max_size=count, unique=True))
        vals = [v - n if (lo < 0 and b.draw(st.booleans())) else v for v in vals]
    else:
        vals = b.draw(st.lists(st.integers(lo, hi), min_size=count, max_size=count))
    arr = np.array(vals, dtype=dtype).reshape(shape)
    return b.define(f"xp.asarray({values.array_source(arr)}, device=dev)", Ref(arr), (), "input")


def advanced_key(b, shape, unique=False):
    """A key with integer arrays on some axes (slices elsewhere), NumPy's semantics; with
    `unique`, one index array whose entries name distinct elements (for writes)."""
    key = []
    idx_shape = b.draw(st.sampled_from([(), (2,), (3,), (2, 2), (0,)]))
    arrays_left = 1 if unique else b.draw(st.integers(1, 2))
    if unique:
        idx_shape = (b.draw(st.integers(0, 3)),)
    for axis, n in enumerate(shape):
        if arrays_left and n > 0 and b.draw(st.booleans()):
            key.append(("v", _index_array(b, n, idx_shape, unique)))
            arrays_left -= 1
        elif b.draw(st.booleans()) and n > 0 and not unique:
            key.append(b.draw(st.integers(-n, n - 1)))
        else:
            key.append(slice(None) if b.draw(st.booleans()) else _slice(b, n))
    if not any(isinstance(k, tuple) for k in key) and shape and shape[0] > 0:
        key[0] = ("v", _index_array(b, shape[0], idx_shape, unique))
    return key


def mask_for(b, shape):
    """A boolean mask value covering the leading axes of `shape` (all exact)."""
    k = b.draw(st.integers(1, len(shape))) if shape else 0
    mshape = tuple(shape[:k])
    i = b.pick(lambda r: kind(r) == "b" and r.shape == mshape and r.all_exact()) \
        if b.draw(st.booleans()) else None
    return i if i is not None else b.input(dtype="bool", shape=mshape)


def gen_getitem(b):
    style = b.draw(st.sampled_from(["basic", "basic", "advanced", "mask"]))
    x = any_value(b)
    rx = b.refs[x]
    if style == "mask" and rx.ndim >= 1:
        m = mask_for(b, rx.shape)
        mv = b.refs[m].v
        b.define(f"v{x}[v{m}]", rx.map(lambda c: c[mv]), [x, m], "getitem_mask")
        return
    if style == "advanced" and rx.ndim >= 1 and any(rx.shape):
        key = advanced_key(b, rx.shape)
    else:
        key = basic_key(b, rx.shape)
    uses = [x] + [k[1] for k in key if isinstance(k, tuple)]
    nk = numpy_key(b, key)
    text = key_source(key)
    b.define(f"v{x}[{text}]", rx.map(lambda c: np.asarray(c[nk])), uses,
             "getitem_" + ("advanced" if any(isinstance(k, tuple) for k in key) else "basic"))


def gen_take(b):
    x = operand(b, lambda r: r.ndim >= 1 and any(r.shape),
                lambda: b.input(shape=(b.draw(st.integers(1, 4)),)
                                + b.draw(values.shapes(max_dims=2))))
    rx = b.refs[x]
    axes = [a for a in range(rx.ndim) if rx.shape[a] > 0]
    axis = b.draw(st.sampled_from(axes))
    n = rx.shape[axis]
    idx = _index_array(b, n, (b.draw(st.integers(0, 4)),))
    iv = b.refs[idx].v
    spelled = axis - rx.ndim if b.draw(st.booleans()) else axis
    kw = f", axis={spelled}" if rx.ndim > 1 or b.draw(st.booleans()) else ""
    b.define(f"xp.take(v{x}, v{idx}{kw})", rx.map(lambda c: np.take(c, iv, axis=axis)), [x, idx],
             "take")


def gen_take_along_axis(b):
    x = operand(b, lambda r: r.ndim >= 1 and r.size > 0,
                lambda: b.input(shape=(b.draw(st.integers(1, 4)),)
                                + b.draw(values.shapes(max_dims=1, max_side=3))))
    rx = b.refs[x]
    axes = [a for a in range(rx.ndim) if rx.shape[a] > 0]
    axis = b.draw(st.sampled_from(axes))
    shape = list(rx.shape)
    shape[axis] = b.draw(st.integers(0, 4))
    idx = _index_array(b, rx.shape[axis], tuple(shape))
    iv = b.refs[idx].v
    b.define(f"xp.take_along_axis(v{x}, v{idx}, axis={axis})",
             rx.map(lambda c: np.take_along_axis(c, iv.astype(np.int64) % rx.shape[axis], axis)),
             [x, idx], "take_along_axis")


def gen_setitem(b):
    """x[key] = value, where value's dtype promotes into x's (or a Python scalar); x shares
    no memory with another value (Builder.writable)."""
    x = b.writable() if b.draw(st.integers(0, 3)) != 3 else None
    x = b.input() if x is None else x
    rx = b.refs[x]
    style = b.draw(st.sampled_from(["basic", "basic", "advanced", "mask"]))
    uses = [x]
    if style == "mask" and rx.ndim >= 1:
        m = mask_for(b, rx.shape)
        nk = b.refs[m].v
        text = f"v{m}"
        uses.append(m)
    elif style == "advanced" and rx.ndim >= 1 and any(rx.shape):
        key = advanced_key(b, rx.shape, unique=True)
        nk = numpy_key(b, key)
        text = key_source(key)
        uses += [k[1] for k in key if isinstance(k, tuple)]
    else:
        key = basic_key(b, rx.shape)
        nk = numpy_key(b, key)
        text = key_source(key)
    target_shape = np.asarray(rx.v[nk]).shape
    if style == "mask" or b.draw(st.booleans()):
        s = scalar_for(b, rx.dtype)
        value = scalar_ref(s, rx.dtype)
        vsrc = values.scalar_source(s)
    else:
        shape = target_shape[b.draw(st.integers(0, len(target_shape))):]
        shape = tuple(1 if b.draw(st.integers(0, 3)) == 0 else n for n in shape)
        options = [d for d in values.DTYPES if promote(d, rx.dtype) == name_of(rx)]
        y = operand(b, lambda r: name_of(r) in options and r.shape == shape,
                    lambda: b.input(dtype=b.draw(st.sampled_from(options)), shape=shape))
        value = cast(b.refs[y], rx.dtype)
        vsrc = f"v{y}"
        uses.append(y)
    new = rx.copy()
    for t, v in zip(new.components(), value.components()):
        t[nk] = v
    b.statement(f"v{x}[{text}] = {vsrc}", uses, "setitem_" + style, target=x, ref=new)


# ================================================================== sorting and searching

def gen_sort(b):
    name = b.draw(st.sampled_from(["sort", "argsort"]))
    x = operand(b, lambda r: kind(r) in "iuf" and r.ndim >= 1,
                lambda: b.input(dtype=b.draw(st.sampled_from(dtypes_of_kinds("iuf"))),
                                shape=b.draw(values.shapes(min_dims=1))))
    rx = b.refs[x]
    axis = b.draw(st.integers(-rx.ndim, rx.ndim - 1))
    descending = b.draw(st.booleans())
    kwargs = [f"axis={axis}"] + (["descending=True"] if descending else [])
    fn = reductions.sort if name == "sort" else reductions.argsort
    b.define(f"xp.{name}(v{x}, {', '.join(kwargs)})", fn(rx, axis % rx.ndim, descending), [x], name)


def gen_searchsorted(b):
    x1 = operand(b, lambda r: kind(r) in "iuf" and r.ndim == 1,
                 lambda: b.input(dtype=b.draw(st.sampled_from(dtypes_of_kinds("iuf"))),
                                 shape=(b.draw(st.integers(0, 6)),)))
    r1 = b.refs[x1]
    x2 = operand(b, lambda r: kind(r) in "iuf" and promote(r.dtype, r1.dtype) is not None,
                 lambda: b.input(dtype=name_of(r1)))
    r2 = b.refs[x2]
    side = b.draw(st.sampled_from(["left", "right"]))
    common = promote(r1.dtype, r2.dtype)
    a = reductions.sort(cast(r1, common), 0)
    v = cast(r2, common)
    out = np.searchsorted(a.v, v.v, side=side).astype(np.int64)
    st_ = np.where((v.st != EXACT) | (not a.all_exact()), FREE, EXACT)
    b.define(f'xp.searchsorted(xp.sort(v{x1}), v{x2}, side="{side}")', Ref(out, st_), [x1, x2],
             "searchsorted")


def gen_nonzero(b):
    x = operand(b, lambda r: r.ndim >= 1 and r.all_exact() and not is_complex(r.dtype),
                lambda: b.input(shape=b.draw(values.shapes(min_dims=1)),
                                dtype=b.draw(st.sampled_from(dtypes_of_kinds("biuf")))))
    rx = b.refs[x]
    i = b.draw(st.integers(0, rx.ndim - 1))
    b.define(f"xp.nonzero(v{x})[{i}]", Ref(np.nonzero(rx.v)[i].astype(np.int64)), [x], "nonzero")


def gen_unique_values(b):
    x = operand(b, lambda r: r.all_exact() and kind(r) in "biuf",
                lambda: b.input(dtype=b.draw(st.sampled_from(dtypes_of_kinds("biuf")))))
    rx = b.refs[x]
    flat = rx.v.reshape(-1)
    if is_float(rx.dtype):
        nan = np.isnan(flat)
        u = np.unique(flat[~nan])
        v = np.concatenate([u, flat[nan]]).astype(rx.dtype)
        zeros = flat[flat == 0]
        st_ = np.zeros(v.shape, np.uint8)
        lo, hi = v.astype(np.float64), v.astype(np.float64)
        if zeros.size and len(set(np.signbit(zeros))) == 2:
            st_[v == 0] = RANGE       # one zero stands for both signs: either sign
        ref = finish(v, st_, lo, hi)
    else:
        ref = Ref(np.unique(flat))
    b.define(f"xp.unique_values(v{x})", ref, [x], "unique_values")


