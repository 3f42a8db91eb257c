"""Generators of reductions, cumulative sums and products, diff, and contractions
(matmul, tensordot, vecdot)."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from . import reductions, values
from .elementwise import apply_named
from .gen_common import (MAX_ELEMENTS, name_of, kind, size, dtype_src, promote, dtypes_of_kinds,
                         operand, partner_shape, broadcasts, draw_axis, axis_src, reduced_size)


# ============================================================================ reductions

REDUCTIONS = {  # name: (kinds, needs a non-empty reduction)
    "sum": ("iufc", False), "prod": ("iufc", False), "mean": ("fc", False),
    "var": ("f", False), "std": ("f", False), "max": ("iuf", True), "min": ("iuf", True),
    "all": ("biufc", False), "any": ("biufc", False), "count_nonzero": ("biufc", False),
    "argmax": ("iuf", True), "argmin": ("iuf", True),
}


def gen_reduction(b):
    name = b.draw(st.sampled_from(sorted(REDUCTIONS)))
    kinds, nonempty = REDUCTIONS[name]
    x = operand(b, lambda r: kind(r) in kinds,
                lambda: b.input(dtype=b.draw(st.sampled_from(dtypes_of_kinds(kinds)))))
    rx = b.refs[x]
    single = name in ("argmax", "argmin")
    axis = draw_axis(b, rx.ndim, allow_tuple=not single)
    if nonempty and reduced_size(rx.shape, axis) == 0:
        axis = None
        if rx.size == 0:
            b.define(f"v{x}", rx, [x], "copy")   # nothing valid to reduce
            return
    keepdims = b.draw(st.booleans())
    kwargs = []
    if axis is not None:
        kwargs.append(f"axis={axis_src(axis)}")
    if keepdims:
        kwargs.append("keepdims=True")
    dtype = None
    if name in ("sum", "prod") and b.draw(st.integers(0, 3)) == 0:
        # a dtype of the same kind, at least as wide
        same_kind = [d for d in dtypes_of_kinds(kind(rx))
                     if np.dtype(d).itemsize >= rx.dtype.itemsize]
        dtype = b.draw(st.sampled_from(same_kind))
        kwargs.append(f"dtype={dtype_src(dtype)}")
    correction = 0.0
    if name in ("var", "std") and b.draw(st.booleans()):
        correction = 1.0
        kwargs.append("correction=1.0")
    if name in ("sum", "prod"):
        fn = reductions.reduce_sum if name == "sum" else reductions.reduce_prod
        ref = fn(rx, axis, keepdims, dtype)
    elif name == "mean":
        ref = reductions.reduce_sum(rx, axis, keepdims, mean=True)
    elif name in ("var", "std"):
        ref = reductions.variance(rx, axis, correction, keepdims, root=name == "std")
    elif name in ("max", "min"):
        ref = reductions.reduce_extremum(rx, axis, keepdims, largest=name == "max")
    elif name in ("all", "any"):
        ref = reductions.reduce_truth(rx, axis, keepdims, every=name == "all")
    elif name == "count_nonzero":
        ref = reductions.count_nonzero(rx, axis, keepdims)
    else:
        ref = reductions.reduce_arg_extremum(rx, axis, keepdims, largest=name == "argmax")
    b.define(f"xp.{name}({', '.join([f'v{x}'] + kwargs)})", ref, [x], name)


def gen_cumulative(b):
    name = b.draw(st.sampled_from(["cumulative_sum", "cumulative_prod"]))
    x = operand(b, lambda r: kind(r) in "iufc" and r.ndim >= 1,
                lambda: b.input(dtype=b.draw(st.sampled_from(dtypes_of_kinds("iufc"))),
                                shape=b.draw(values.shapes(min_dims=1))))
    rx = b.refs[x]
    kwargs = []
    if rx.ndim > 1 or b.draw(st.booleans()):
        axis = b.draw(st.integers(-rx.ndim, rx.ndim - 1))
        kwargs.append(f"axis={axis}")
    else:
        axis = 0
    include = b.draw(st.booleans())
    if include:
        kwargs.append("include_initial=True")
    dtype = None
    if b.draw(st.integers(0, 3)) == 0:
        same_kind = [d for d in dtypes_of_kinds(kind(rx))
                     if np.dtype(d).itemsize >= rx.dtype.itemsize]
        dtype = b.draw(st.sampled_from(same_kind))
        kwargs.append(f"dtype={dtype_src(dtype)}")
    ref = reductions.cumulative(rx, axis % rx.ndim, "sum" if name == "cumulative_sum" else "prod",
                                dtype, include)
    b.define(f"xp.{name}({', '.join([f'v{x}'] + kwargs)})", ref, [x], name)


def gen_diff(b):
    x = operand(b, lambda r: kind(r) in "iufc" and r.ndim >= 1,
                lambda: b.input(dtype=b.draw(st.sampled_from(dtypes_of_kinds("iufc"))),
                                shape=b.draw(values.shapes(min_dims=1))))
    rx = b.refs[x]
    axis = b.draw(st.integers(-rx.ndim, rx.ndim - 1))
    n = b.draw(st.integers(1, 2))
    ref = rx
    for _ in range(n):
        ax = axis % rx.ndim
        hi = ref.map(lambda c: np.take(c, range(1, c.shape[ax]), axis=ax))
        lo = ref.map(lambda c: np.take(c, range(0, max(c.shape[ax] - 1, 0)), axis=ax))
        ref = apply_named("subtract", [hi, lo], rx.dtype)
    b.define(f"xp.diff(v{x}, axis={axis}, n={n})", ref, [x], "diff")


# ========================================================================== contractions

def _numeric(b):
    return b.draw(st.sampled_from(dtypes_of_kinds("iufc")))


def gen_matmul(b):
    x = operand(b, lambda r: kind(r) in "iufc" and r.ndim >= 1,
                lambda: b.input(dtype=_numeric(b), shape=b.draw(values.shapes(min_dims=1))))
    rx = b.refs[x]
    k = rx.shape[-1]
    if rx.ndim == 1:
        shape = b.draw(st.sampled_from([(k,), (k, b.draw(st.integers(0, 3)))]))
    else:
        n = b.draw(st.integers(0, 3))
        batch = partner_shape(b, rx.shape[:-2]) if b.draw(st.booleans()) else ()
        shape = b.draw(st.sampled_from([(k,), batch + (k, n)]))
    y = operand(b, lambda r: r.shape == shape and promote(r.dtype, rx.dtype) is not None
                and values.kind(promote(r.dtype, rx.dtype)) in "iufc",
                lambda: b.input(dtype=name_of(rx), shape=shape))
    ry = b.refs[y]
    if rx.ndim > 1 and ry.ndim > 1 and size(np.broadcast_shapes(rx.shape[:-2], ry.shape[:-2])) > 16:
        return
    common = promote(rx.dtype, ry.dtype)
    expr = f"v{x} @ v{y}" if b.draw(st.booleans()) else f"xp.matmul(v{x}, v{y})"
    b.define(expr, reductions.matmul(rx, ry, common), [x, y], "matmul")


def gen_tensordot(b):
    x = operand(b, lambda r: kind(r) in "iufc", lambda: b.input(dtype=_numeric(b)))
    rx = b.refs[x]
    if b.draw(st.booleans()):
        n = b.draw(st.integers(0, min(rx.ndim, 2)))
        axes_a = list(range(rx.ndim - n, rx.ndim))
        extra = b.draw(values.shapes(max_dims=2, max_side=3))
        shape = tuple(rx.shape[rx.ndim - n:]) + extra
        axes_b = list(range(n))
        axes_src = str(n)
    else:
        axes_a = []
        if rx.ndim:
            axes_a = b.draw(st.lists(st.integers(0, rx.ndim - 1), unique=True,
                                     max_size=min(rx.ndim, 2)))
        extra = list(b.draw(values.shapes(max_dims=2, max_side=3)))
        # put the contracted sizes at drawn positions of the second operand
        positions = []
        shape = list(extra)
        for a in axes_a:
            p = b.draw(st.integers(0, len(shape)))
            shape.insert(p, rx.shape[a])
            positions = [q + 1 if q >= p else q for q in positions] + [p]
        shape = tuple(shape)
        axes_b = positions
        axes_src = f"({tuple(axes_a)!r}, {tuple(axes_b)!r})"
    if size(rx.shape) * size(shape) > 4 * MAX_ELEMENTS:
        return
    y = operand(b, lambda r: r.shape == shape and promote(r.dtype, rx.dtype) is not None
                and values.kind(promote(r.dtype, rx.dtype)) in "iufc",
                lambda: b.input(dtype=name_of(rx), shape=shape))
    ry = b.refs[y]
    common = promote(rx.dtype, ry.dtype)
    ref = reductions.tensordot(rx, ry, axes_a, axes_b, common)
    b.define(f"xp.tensordot(v{x}, v{y}, axes={axes_src})", ref, [x, y], "tensordot")


def gen_vecdot(b):
    x = operand(b, lambda r: kind(r) in "iufc" and r.ndim >= 1,
                lambda: b.input(dtype=_numeric(b), shape=b.draw(values.shapes(min_dims=1))))
    rx = b.refs[x]
    shape = partner_shape(b, rx.shape)
    shape = shape[:-1] + rx.shape[-1:] if shape else rx.shape[-1:]
    if not broadcasts(shape, rx.shape):
        shape = rx.shape
    y = operand(b, lambda r: r.shape == shape and promote(r.dtype, rx.dtype) is not None
                and values.kind(promote(r.dtype, rx.dtype)) in "iufc",
                lambda: b.input(dtype=name_of(rx), shape=shape))
    ry = b.refs[y]
    nd = min(rx.ndim, ry.ndim)
    axis = b.draw(st.integers(-nd, -1))
    if rx.shape[axis] != ry.shape[axis]:
        axis = -1
    common = promote(rx.dtype, ry.dtype)
    full = np.broadcast_shapes(rx.shape, ry.shape)
    ref = reductions.vecdot(rx, ry, len(full) + axis, common)
    b.define(f"xp.vecdot(v{x}, v{y}, axis={axis})", ref, [x, y], "vecdot")


