"""The standard's utility functions: all, any and diff."""
from __future__ import annotations

import builtins

from .. import _dtypes as dt
from .._array import Array
from . import _ops as o
from .._prims import lax
from ._core import (axes_of, axis_of, cast, check_bool, check_devices, constant, is_int, is_scalar,
                    node_of, reduction, result_dtype, scalar_node, wrap)


def _truth(name, prim):
    def fn(x, /, *, axis=None, keepdims=False):
        node = node_of(name, x)
        axes = axes_of(name, x, axis)
        check_bool(name, keepdims, "keepdims")
        if node.aval.dtype is not dt.bool:
            zero = constant(0, node.aval.shape, node.aval.dtype, node.device)
            node = lax.compare(node, zero, direction="NE")
        return reduction(prim, node, axes, keepdims)
    fn.__name__ = name
    return fn


all = _truth("all", lax.reduce_min)
any = _truth("any", lax.reduce_max)


def diff(x, /, *, axis=-1, n=1, prepend=None, append=None):
    """The n-th forward difference along `axis`, after joining `prepend` and `append` (arrays
    shaped like x except along axis, or Python scalars) to x. Boolean input gives the
    not-equal of neighbours, as in NumPy."""
    node = node_of("diff", x)
    shape = node.aval.shape
    if not shape:
        raise ValueError("diff: x must have at least one dimension")
    ax = axis_of("diff", node, axis)
    if not is_int(n):
        raise TypeError(f"diff: n must be an int, got {n!r}")
    if n < 0:
        raise ValueError(f"diff: n must be non-negative, got {n}")
    parts = [v for v in (prepend, x, append) if v is not None]
    for name, v in (("prepend", prepend), ("append", append)):
        if v is not None and not isinstance(v, Array) and not is_scalar(v):
            raise TypeError(f"diff: {name} must be a tlaloc array or a Python scalar, "
                            f"got {type(v).__name__}")
    d = result_dtype("diff", *parts)
    dev = check_devices("diff", *[v._node for v in parts if isinstance(v, Array)])
    nodes = []
    for v in parts:
        if isinstance(v, Array):
            m = cast(v._node, d)
            vs = m.aval.shape
            if len(vs) != len(shape) or builtins.any(
                    a != b for i, (a, b) in enumerate(zip(vs, shape)) if i != ax):
                raise ValueError(f"diff: prepend/append of shape {vs} does not match x's shape "
                                 f"{shape} off axis {ax}")
        else:
            one = tuple(1 if i == ax else s for i, s in enumerate(shape))
            m = o.broadcast(scalar_node(v, d, dev), one)
        nodes.append(m)
    cur = o.concat(nodes, ax) if len(nodes) > 1 else nodes[0]
    for _ in range(n):
        length = cur.aval.shape[ax]
        if length == 0:
            break
        hi = o.slice_axis(cur, ax, 1, length)
        lo = o.slice_axis(cur, ax, 0, length - 1)
        if d.kind == "b":
            cur = o.compare(hi, lo, "NE")
        else:
            cur = lax.subtract(hi, lo)
    return wrap(cur)


__all__ = ["all", "any", "diff"]
