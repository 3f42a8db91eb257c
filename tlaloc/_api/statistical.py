"""The standard's statistical functions: sum, prod, max, min, mean, var, std and the
cumulative sums and products."""
from __future__ import annotations

import builtins
import math

from .. import _dtypes as dt
from .._prims import lax
from . import _ops as o
from ._core import (axes_of, axis_of, cast, check_bool, constant, eager_host_value, keep_dims,
                    node_of, reduction, scalar_node, true_count, wrap)


def _accumulator(name, x, dtype):
    """The dtype sum and prod accumulate in: the standard's rule for dtype=None."""
    d = x.aval.dtype
    if dtype is not None:
        acc = dt.canonicalize(dtype, name)
        if d.kind == "c" and acc.kind != "c":
            raise TypeError(f"{name}: cannot accumulate complex {d} in real {acc} (the standard "
                            "has no complex-to-real cast: it would drop the imaginary part); "
                            "take xp.real first")
        return acc
    if d.kind == "b" or (d.kind == "i" and d.bits < dt.DEFAULTS.integral.bits):
        return dt.DEFAULTS.integral
    if d.kind == "u" and d.bits < 64:
        return dt.uint64
    return d


def _sum_like(name, prim):
    def fn(x, /, *, axis=None, dtype=None, keepdims=False):
        node = node_of(name, x)
        axes = axes_of(name, x, axis)
        check_bool(name, keepdims, "keepdims")
        acc = _accumulator(name, node, dtype)
        if acc.kind == "b":
            raise TypeError(f"{name}: cannot accumulate in bool")
        return reduction(prim, cast(node, acc), axes, keepdims)
    fn.__name__ = name
    return fn


sum = _sum_like("sum", lax.reduce_sum)
prod = _sum_like("prod", lax.reduce_prod)


def _extremum(name, prim):
    def fn(x, /, *, axis=None, keepdims=False):
        node = node_of(name, x)
        if node.aval.dtype.kind == "c":
            raise TypeError(f"{name}: complex numbers are not ordered")
        axes = axes_of(name, x, axis)
        check_bool(name, keepdims, "keepdims")
        if builtins.any(x.shape[a] == 0 for a in axes):
            raise ValueError(f"{name}: zero-size reduction along axis {axis!r} has no identity")
        return reduction(prim, node, axes, keepdims)
    fn.__name__ = name
    return fn


max = _extremum("max", lax.reduce_max)
min = _extremum("min", lax.reduce_min)


def _inexact_node(name, x):
    node = node_of(name, x)
    if node.aval.dtype.kind in dt.INTEGER_OR_BOOL_KINDS:
        node = cast(node, dt.DEFAULTS.real_floating)
    return node


def mean(x, /, *, axis=None, keepdims=False):
    node = _inexact_node("mean", x)
    axes = axes_of("mean", x, axis)
    check_bool("mean", keepdims, "keepdims")
    count = math.prod([x.shape[a] for a in axes])
    total = lax.reduce_sum(node, axes=axes) if axes else node
    real = dt.real_of(total.aval.dtype) if total.aval.dtype.kind == "c" else total.aval.dtype
    n = true_count(node, axes, real)    # under jit(dynamic=): the true count
    if n is None:
        n = _count(float(count), total, real, ())
    if total.aval.dtype.kind == "c":
        # each part over the real count: a complex division by count + 0j makes inf * 0
        # terms ((a + inf j) / 2 would be nan + inf j)
        out = lax.complex(lax.divide(lax.real(total), n), lax.divide(lax.imag(total), n))
    else:
        out = lax.divide(total, n)
    return wrap(keep_dims(out, x.shape, axes, keepdims, node.aval.names))


def var(x, /, *, axis=None, correction=0.0, keepdims=False):
    return _variance("var", x, axis, correction, keepdims, root=False)


def std(x, /, *, axis=None, correction=0.0, keepdims=False):
    return _variance("std", x, axis, correction, keepdims, root=True)


def _count(value, like, dtype, shape):
    """The divisor `value` of node `like` (a count): a constant of `shape` in a recorded
    program, the cached 0-d value where `like` is computed on the host and the division
    runs at once (a constant would be one more operation run at once)."""
    if eager_host_value(like) is not None:
        return scalar_node(value, dtype, like.device)
    return constant(value, shape, dtype, like.device)


def _variance(name, x, axis, correction, keepdims, root):
    node = _inexact_node(name, x)
    if node.aval.dtype.kind == "c":
        raise TypeError(f"{name}: complex input is not supported")
    if isinstance(correction, bool) or not isinstance(correction, (int, float)):
        raise TypeError(f"{name}: correction must be a real number, got {correction!r}")
    axes = axes_of(name, x, axis)
    check_bool(name, keepdims, "keepdims")
    shape, d, dev = node.aval.shape, node.aval.dtype, node.device
    count = math.prod([shape[a] for a in axes])
    total = lax.reduce_sum(node, axes=axes) if axes else node
    n = true_count(node, axes, d)       # under jit(dynamic=): the true count
    mu = lax.divide(total, _count(float(count), total, d, total.aval.shape) if n is None else n)
    mu_full = lax.broadcast_in_dim(mu, shape=shape,
                                   dims=tuple([i for i in range(len(shape)) if i not in axes]))
    dev_sq = lax.subtract(node, mu_full)
    dev_sq = lax.multiply(dev_sq, dev_sq)
    ss = lax.reduce_sum(dev_sq, axes=axes) if axes else dev_sq
    # the standard: count - correction <= 0 gives NaN (NumPy gives inf, or -0 when empty)
    if n is None:
        denom = float(count - correction) if count - correction > 0 else math.nan
        denom = _count(denom, ss, d, ss.aval.shape)
    else:
        denom = lax.subtract(n, constant(float(correction), (), d, dev))
        positive = lax.compare(denom, constant(0.0, (), d, dev), direction="GT")
        denom = lax.select(positive, denom, constant(math.nan, (), d, dev))
    out = lax.divide(ss, denom)
    if root:
        out = lax.sqrt(out)
    return wrap(keep_dims(out, shape, axes, keepdims, node.aval.names))


# ----------------------------------------------------------------------------- cumulative

def _cumulative(name, kind, x, axis, dtype, include_initial):
    node = node_of(name, x)
    shape = node.aval.shape
    if not shape:
        raise ValueError(f"{name}: x must have at least one dimension")
    if axis is None:
        if len(shape) > 1:
            raise ValueError(f"{name}: axis must be given for a {len(shape)}-d array")
        axis = 0
    ax = axis_of(name, node, axis)
    if not isinstance(include_initial, builtins.bool):
        raise TypeError(f"{name}: include_initial must be a bool, got {include_initial!r}")
    acc = _accumulator(name, node, dtype)
    if acc.kind == "b":
        raise TypeError(f"{name}: cannot accumulate in bool")
    node = cast(node, acc)
    out = o.cumsum(node, ax, kind)
    if include_initial:
        identity = o.const(0 if kind == "sum" else 1, (), acc, node.device)
        nd = len(shape)
        low = tuple(1 if d == ax else 0 for d in range(nd))
        out = lax.pad(out, identity, low=low, high=(0,) * nd, interior=(0,) * nd)
    return wrap(out)


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """Cumulative sums along `axis` (optional for 1-d x), accumulated in `dtype` (default: as
    `sum`). include_initial=True prepends the zero of the sum."""
    return _cumulative("cumulative_sum", "sum", x, axis, dtype, include_initial)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """Cumulative products along `axis` (optional for 1-d x), accumulated in `dtype`
    (default: as `prod`). include_initial=True prepends the one of the product."""
    return _cumulative("cumulative_prod", "prod", x, axis, dtype, include_initial)
