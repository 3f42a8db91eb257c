"""Stable sort of several operands along one dimension.

`sort(*operands, dimension, num_keys, descending, output)` sorts all operands (one shape) by
the lexicographic order of the first `num_keys` of them and returns the sorted operand number
`output`. The graph has single-result nodes, so a caller who wants several sorted operands
usually asks for the permutation (sort the keys together with an iota, `output=last`) and
gathers the rest with it.

The order is NumPy's: ascending, NaN after everything else (every NaN equal to every other,
whatever its sign or payload), -0.0 equal to +0.0; the sort is stable. `descending=True` is
the reverse order (NaN first), still stable: equal keys keep their original order. Keys are
real (bool, integer or real floating); complex numbers are sorted as two keys (real, imag).
"""
from __future__ import annotations

import numpy as np

from .. import _dtypes as dt
from ..lowering.stablehlo import tensor_type
from . import ad, lax
from . import batching as bt
from . import padding as pd
from .core import aval, declare


def _infer(*operands, dimension, num_keys, descending, output):
    if not operands:
        raise ValueError("internal: sort needs an operand")
    shape = operands[0].shape
    if any(o.shape != shape for o in operands):
        raise ValueError("internal: sort operands must share one shape")
    if not 0 <= dimension < len(shape):
        raise ValueError(f"internal: sort dimension {dimension} of a {len(shape)}-d operand")
    if not 1 <= num_keys <= len(operands) or not 0 <= output < len(operands):
        raise ValueError("internal: sort num_keys/output out of range")
    for o in operands[:num_keys]:
        if o.dtype.kind not in dt.REAL_OR_BOOL_KINDS:
            raise TypeError(f"internal: sort keys must be real, got {o.dtype}")
    return operands[output]


class _Region:
    """Writes the comparator's body lines."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.lines = []
        self.bool_t = tensor_type(aval((), dt.bool))

    def compare(self, a, b, direction, ctype, t):
        r = self.ctx.fresh()
        self.lines.append(
            f'{r} = "stablehlo.compare"({a}, {b}) {{comparison_direction = '
            f"#stablehlo<comparison_direction {direction}>, compare_type = "
            f"#stablehlo<comparison_type {ctype}>}} : ({t}, {t}) -> {self.bool_t}")
        return r

    def logic(self, op, *args):
        r = self.ctx.fresh()
        ts = ", ".join([self.bool_t] * len(args))
        self.lines.append(f'{r} = "stablehlo.{op}"({", ".join(args)}) : ({ts}) -> {self.bool_t}')
        return r


def _before(reg, a, b, dtype, descending):
    """An SSA i1: does element `a` go strictly before `b` on this key?"""
    t = tensor_type(aval((), dtype))
    if dtype.kind != "f":
        ctype = "SIGNED" if dtype.kind == "i" else "UNSIGNED"
        return reg.compare(a, b, "GT" if descending else "LT", ctype, t)
    # NaN is the largest value: ascending puts it last, descending first
    strict = reg.compare(a, b, "GT" if descending else "LT", "FLOAT", t)
    a_nan = reg.compare(a, a, "NE", "FLOAT", t)
    b_nan = reg.compare(b, b, "NE", "FLOAT", t)
    if descending:
        nan_first = reg.logic("and", a_nan, reg.logic("not", b_nan))
    else:
        nan_first = reg.logic("and", b_nan, reg.logic("not", a_nan))
    return reg.logic("or", strict, nan_first)


def _emit(ctx, *operands, dimension, num_keys, descending, output):
    avals = ctx.in_avals
    reg = _Region(ctx)
    args = []
    pairs = []
    for o in avals:
        a, b = ctx.fresh(), ctx.fresh()
        t = tensor_type(aval((), o.dtype))
        args += [f"{a}: {t}", f"{b}: {t}"]
        pairs.append((a, b))
    # lexicographic: before_0 or (not after_0 and (before_1 or (...)))
    result = None
    for k in reversed(range(num_keys)):
        a, b = pairs[k]
        d = avals[k].dtype
        lt = _before(reg, a, b, d, descending)
        if result is None:
            result = lt
        else:
            gt = _before(reg, b, a, d, descending)
            tie = reg.logic("not", reg.logic("or", lt, gt))
            result = reg.logic("or", lt, reg.logic("and", tie, result))
    body = "".join(f"        {line}\n" for line in reg.lines)
    region = (f"{{\n      ^bb0({', '.join(args)}):\n{body}"
              f'        "stablehlo.return"({result}) : ({reg.bool_t}) -> ()\n    }}')
    types = ", ".join(tensor_type(a) for a in avals)
    name = ctx.fresh()
    n = len(avals)
    head = f"{name}:{n}" if n > 1 else name
    ctx.lines.append(f'{head} = "stablehlo.sort"({", ".join(operands)}) ({region}) '
                     f"{{dimension = {dimension} : i64, is_stable = true}} : "
                     f"({types}) -> ({types})")
    return f"{name}#{output}" if n > 1 else name


def _rank(key):
    """Dense ranks in NumPy's order: NaNs share the top rank, -0.0 == +0.0."""
    if key.size == 0:
        return np.zeros(key.shape, dtype=np.int64)
    if key.dtype.kind not in dt.REAL_OR_BOOL_KINDS:   # bfloat16: NumPy's sort is not NaN-aware for it
        key = key.astype(np.float32)
    _, inverse = np.unique(key.reshape(-1), return_inverse=True)
    return inverse.reshape(key.shape).astype(np.int64)


def _impl(*operands, dimension, num_keys, descending, output):
    ranks = [_rank(k) for k in operands[:num_keys]]
    if descending:
        ranks = [-r for r in ranks]
    # lexsort: the last key is the primary one; it is stable
    perm = np.lexsort(ranks[::-1], axis=dimension) if operands[0].size else \
        np.zeros(operands[0].shape, dtype=np.int64)
    return np.take_along_axis(operands[output], perm, axis=dimension)


# Derivatives: sorting permutes; the keys decide the permutation, which is piecewise
# constant, so only the returned operand's own values carry a derivative.

def _sort_jvp(tangents, *operands, out, dimension, num_keys, descending, output):
    t = tangents[output]
    if t is None or not ad.differentiable(out):
        return None
    # the tangent rides along as one more operand, permuted like the others
    return lax.sort(*operands, t, dimension=dimension, num_keys=num_keys,
                descending=descending, output=len(operands))


def _sort_vjp(ct, *operands, out, dimension, num_keys, descending, output):
    cts = [None] * len(operands)
    if not ad.differentiable(operands[output]):
        return tuple(cts)
    position = lax.iota(shape=out.aval.shape, dtype=dt.int64, dim=dimension, device=out.device)
    perm = lax.sort(*operands[:num_keys], position, dimension=dimension, num_keys=num_keys,
                descending=descending, output=num_keys)
    # un-permute: sorting (perm, ct) by perm puts each cotangent back at its origin
    cts[output] = lax.sort(perm, ct, dimension=dimension, num_keys=1, descending=False,
                       output=1)
    return tuple(cts)


def _sort_batch(bdims, *operands, dimension, num_keys, descending, output):
    size, d = bt.size_of(bdims, operands), bt.first_dim(bdims)
    operands = [bt.moved(x, xd, d, size) for x, xd in zip(operands, bdims)]
    return lax.sort(*operands, dimension=bt.shifted(dimension, d), num_keys=num_keys,
                    descending=descending, output=output), d


sort = declare("sort", infer=_infer, emit=_emit, impl=_impl, jvp=_sort_jvp, vjp=_sort_vjp,
               batch=_sort_batch,
               padding=pd.sort_rule)

__all__ = ["sort"]
