"""Reductions, scans, contractions and sorting on reference values.

Floating sums and products are never exact: XLA adds in its own order (and may fuse the
products of a contraction), so they are ranges: the interval sum widened by the error bound
of any summation order, 2 n eps sum|x| (plus n flushed subnormals). An order can matter
more than that only through overflow, so where sum|x| comes near the largest finite value
the result is FREE. NaN and infinities are exact where every order agrees: a NaN operand, or
+inf and -inf together, give NaN; an infinity alone gives itself.
"""
from __future__ import annotations

import numpy as np

from . import casts
from .elementwise import FUNCTIONS, apply
from .reference import (EXACT, FREE, RANGE, Ref, finfo, finish, from_parts, is_complex,
                        is_float, is_inexact, nan_like, parts, real_dtype)


def rows(ref: Ref, axes):
    """`ref` with the reduced `axes` moved last and flattened into one: (kept..., n)."""
    axes = tuple(sorted(a % ref.ndim for a in axes)) if ref.ndim else ()
    kept = [a for a in range(ref.ndim) if a not in axes]
    kept_shape = tuple(ref.shape[a] for a in kept)
    n = int(np.prod([ref.shape[a] for a in axes], dtype=np.int64)) if axes else 1

    def move(c):
        c = np.transpose(c, kept + list(axes))
        return c.reshape(kept_shape + (n,))
    return ref.map(move), kept_shape


def keep(out: Ref, shape, axes, keepdims):
    if not keepdims:
        return out
    full = tuple(1 if i in {a % len(shape) for a in axes} else s for i, s in enumerate(shape))
    return out.map(lambda c: np.reshape(c, full))


def all_axes(ndim, axis):
    if axis is None:
        return tuple(range(ndim))
    return (axis,) if isinstance(axis, int) else tuple(axis)


# ---------------------------------------------------------------- sums of real terms

def _real_sum(r: Ref, dtype, mean=False):
    """Sum (or mean) over the last axis of a real floating Ref of `dtype`."""
    n = r.shape[-1]
    fi = finfo(dtype)
    eps, tiny, top = float(fi.eps), float(fi.tiny), float(fi.max)
    v, st, lo, hi = r.v, r.st, r.lo, r.hi
    exact = st == EXACT
    with np.errstate(all="ignore"):
        exact_nan = (exact & np.isnan(v)).any(-1)
        pinf = (exact & (v == np.inf)).any(-1)
        ninf = (exact & (v == -np.inf)).any(-1)
        finite_part = (st == RANGE) | (exact & np.isfinite(v))
        unknown = ((st == FREE) | ((st == RANGE) & ~(np.isfinite(lo) & np.isfinite(hi)))).any(-1)
        mag = np.where(finite_part, np.maximum(np.abs(lo), np.abs(hi)), 0.0).sum(-1)
        s_lo = np.where(finite_part, lo, 0.0).sum(-1)
        s_hi = np.where(finite_part, hi, 0.0).sum(-1)
        slack = 2 * (n + 1) * eps * mag + (n + 1) * tiny
        risky = mag * (1 + 4 * (n + 1) * eps) >= top
        out_lo, out_hi = s_lo - slack, s_hi + slack
        if mean and n:
            out_lo, out_hi = out_lo / n, out_hi / n
            out_lo = out_lo - 2 * eps * np.abs(out_lo) - tiny
            out_hi = out_hi + 2 * eps * np.abs(out_hi) + tiny
    shape = v.shape[:-1]
    value = np.full(shape, np.nan)
    status = np.full(shape, FREE, np.uint8)
    ok = ~unknown & ~risky
    status[ok] = RANGE
    value = np.where(ok, (s_lo + s_hi) / 2, value)
    for mask, val in ((ok & pinf, np.inf), (ok & ninf, -np.inf), (ok & pinf & ninf, np.nan),
                      (exact_nan, np.nan)):
        status[mask] = EXACT
        value[mask] = val
    if n == 0:
        status[...] = EXACT
        value[...] = np.nan if mean else 0.0
    with np.errstate(all="ignore"):
        v_out = value.astype(dtype)
    return finish(v_out, status, np.where(status == RANGE, out_lo, np.nan),
                  np.where(status == RANGE, out_hi, np.nan))


def _sum_rows(r: Ref, dtype, mean=False):
    d = np.dtype(dtype)
    if is_complex(d):
        re, im = parts(r)
        rd = real_dtype(d)
        out = from_parts(_real_sum(re, rd, mean), _real_sum(im, rd, mean), d)
        if mean:
            # a complex mean divides by n + 0j (as NumPy does): a complex quotient, whose
            # values at infinite and NaN parts are implementation-defined
            bad = ~(np.isfinite(out.v.real) & np.isfinite(out.v.imag))
            out = finish(out.v, np.where(bad, FREE, out.st), out.lo, out.hi)
        return out
    if is_float(d):
        return _real_sum(r, d, mean)
    # integers and booleans: exact, wrapping in the accumulator dtype
    st = np.where((r.st == FREE).any(-1), FREE, EXACT).astype(np.uint8)
    with np.errstate(all="ignore"):
        v = np.sum(r.v.astype(d), axis=-1, dtype=d)
    return Ref(v, st)


def accumulator_dtype(dtype):
    """The standard's sum/prod/cumulative dtype for dtype=None: the default integer for
    smaller signed integers and bool, uint64 for smaller unsigned, the dtype otherwise."""
    d = np.dtype(dtype)
    if d.kind == "b" or (d.kind == "i"):
        return np.dtype(np.int64)
    if d.kind == "u":
        return np.dtype(np.uint64)
    return d


def reduce_sum(ref, axis, keepdims=False, dtype=None, mean=False):
    axes = all_axes(ref.ndim, axis)
    if dtype is not None:
        d = np.dtype(dtype)
    else:
        d = ref.dtype if mean else accumulator_dtype(ref.dtype)
    src = casts.astype(ref, d) if ref.dtype != d else ref
    r, kept = rows(src, axes)
    return keep(_sum_rows(r, d, mean), ref.shape, axes, keepdims)


# ----------------------------------------------------------------------------- products

def _real_prod(r: Ref, dtype):
    n = r.shape[-1]
    fi = finfo(dtype)
    eps, tiny, top = float(fi.eps), float(fi.tiny), float(fi.max)
    v, st = r.v, r.st
    exact = st == EXACT
    any_free = (st != EXACT).any(-1)          # ranges of products: kept simple (FREE)
    with np.errstate(all="ignore"):
        a = np.abs(v.astype(np.float64))
        nan = (exact & np.isnan(v)).any(-1)
        zero = (a == 0).any(-1)
        inf = np.isinf(a).any(-1)
        finite_nonzero = np.isfinite(a) & (a != 0)
        # every partial product stays normal and finite, in any order
        up = np.where(finite_nonzero, np.log2(np.maximum(a, 1.0)), 0.0).sum(-1)
        down = np.where(finite_nonzero, np.log2(np.minimum(a, 1.0)), 0.0).sum(-1)
        safe = (up < np.log2(top) - 1) & (down > np.log2(tiny) + 1)
        negative = np.signbit(v).sum(-1) % 2 == 1
        p = np.prod(v.astype(np.float64), axis=-1)
    shape = v.shape[:-1]
    status = np.full(shape, FREE, np.uint8)
    value = np.full(shape, np.nan)
    lo, hi = nan_like(shape), nan_like(shape)
    ok = ~any_free & safe
    # products of normal numbers: within (n+1) roundings
    rng = ok & ~zero & ~inf & ~nan
    status[rng] = RANGE
    value[rng] = p[rng]
    pad = 2 * (n + 1) * eps * np.abs(p) + tiny
    lo, hi = np.where(rng, p - pad, lo), np.where(rng, p + pad, hi)
    signed_zero = np.where(negative, -0.0, 0.0)
    signed_inf = np.where(negative, -np.inf, np.inf)
    for mask, val in ((ok & zero & ~inf, signed_zero), (ok & inf & ~zero, signed_inf),
                      (ok & zero & inf, np.nan), (~any_free & nan, np.nan)):
        status[mask] = EXACT
        value = np.where(mask, val, value)
    if n == 0:
        status[...] = EXACT
        value[...] = 1.0
    with np.errstate(all="ignore"):
        return finish(value.astype(dtype), status, lo, hi)


def _prod_rows(r: Ref, dtype):
    d = np.dtype(dtype)
    if is_float(d):
        return _real_prod(r, d)
    if is_complex(d):
        # products of exact finite complex numbers in a safe range: within the tolerance
        # relative to the product of moduli; anything else FREE
        from .elementwise import complex_range
        n = r.shape[-1]
        v128 = r.v.astype(np.complex128)
        finite = (np.isfinite(v128.real) & np.isfinite(v128.imag)).all(-1)
        exact = (r.st == EXACT).all(-1)
        fi = finfo(d)
        with np.errstate(all="ignore"):
            mags = np.abs(v128)
            up = np.log2(np.maximum(mags, 1.0)).sum(-1)
            down = np.log2(np.minimum(np.maximum(mags, 1e-300), 1.0)).sum(-1)
            p = np.prod(v128, axis=-1)
            scale = np.prod(mags, axis=-1)
        safe = (up < np.log2(float(fi.max)) - 1) & (down > np.log2(float(fi.tiny)) + 1)
        safe &= (mags != 0).all(-1)
        out = complex_range(p.astype(d), finite & exact & safe, p, scale * (n + 1), factor=4.0)
        if n == 0:
            return Ref(np.ones(out.shape, d))
        return out
    st = np.where((r.st == FREE).any(-1), FREE, EXACT).astype(np.uint8)
    with np.errstate(all="ignore"):
        v = np.prod(r.v.astype(d), axis=-1, dtype=d)
    return Ref(v, st)


def reduce_prod(ref, axis, keepdims=False, dtype=None):
    axes = all_axes(ref.ndim, axis)
    d = np.dtype(dtype) if dtype is not None else accumulator_dtype(ref.dtype)
    src = casts.astype(ref, d) if ref.dtype != d else ref
    r, kept = rows(src, axes)
    return keep(_prod_rows(r, d), ref.shape, axes, keepdims)


# ------------------------------------------------------------------------------ extrema

def reduce_extremum(ref, axis, keepdims=False, largest=True):
    axes = all_axes(ref.ndim, axis)
    r, kept = rows(ref, axes)
    f = np.max if largest else np.min
    with np.errstate(all="ignore"):
        v = f(r.v, axis=-1)
    any_free = (r.st == FREE).any(-1)
    if not is_inexact(ref.dtype):
        out = Ref(v, np.where(any_free, FREE, EXACT))
        return keep(out, ref.shape, axes, keepdims)
    exact = r.st == EXACT
    exact_nan = (exact & np.isnan(r.v)).any(-1)
    all_exact = exact.all(-1)
    st = np.where(any_free, FREE, np.where(all_exact, EXACT, RANGE)).astype(np.uint8)
    lo = f(r.lo, axis=-1)
    hi = f(r.hi, axis=-1)
    # both signs of zero among the winners: the sign is open
    winners = (r.v == v[..., None]) & exact
    both_zeros = ((v == 0) & (winners & np.signbit(r.v)).any(-1)
                  & (winners & ~np.signbit(r.v)).any(-1))
    st = np.where(all_exact & both_zeros, RANGE, st)
    st = np.where(exact_nan, EXACT, st)
    return keep(finish(v, st, lo, hi), ref.shape, axes, keepdims)


def reduce_arg_extremum(ref, axis, keepdims=False, largest=True):
    """argmax/argmin: first occurrence, a NaN wins (its first index). Known where every
    element is exact, or where one candidate's range clears every other."""
    if axis is None:
        flat = ref.map(lambda c: c.reshape(-1))
        out = reduce_arg_extremum(flat, 0, False, largest)
        if keepdims:
            out = out.map(lambda c: c.reshape((1,) * ref.ndim))
        return out
    r = ref.map(lambda c: np.moveaxis(c, axis, -1))
    vals = r.v
    if is_inexact(ref.dtype):
        nan = np.isnan(vals)
        key = np.where(nan, np.inf, vals.astype(np.float64)) if largest else \
            np.where(nan, -np.inf, vals.astype(np.float64))
        # a NaN beats inf: rank NaNs above everything
        first_nan = np.argmax(nan, axis=-1)
        arg = np.argmax(key, axis=-1) if largest else np.argmin(key, axis=-1)
        arg = np.where(nan.any(-1), first_nan, arg)
    else:
        arg = np.argmax(vals, axis=-1) if largest else np.argmin(vals, axis=-1)
    st = np.where((r.st != EXACT).any(-1), FREE, EXACT).astype(np.uint8)
    if is_float(ref.dtype):
        # ranges: known when the nominal winner's range clears every other element's
        idx = arg[..., None]
        w_lo = np.take_along_axis(r.lo, idx, -1)
        w_hi = np.take_along_axis(r.hi, idx, -1)
        others = np.ones(r.shape, bool)
        np.put_along_axis(others, idx, False, -1)
        clear = (r.lo > w_hi) if not largest else (r.hi < w_lo)
        clear = (clear | ~others).all(-1) & ~(r.st == FREE).any(-1) & ~np.isnan(r.v).any(-1)
        st = np.where(clear, EXACT, st)
    out = Ref(arg.astype(np.int64), st)
    if keepdims:
        out = out.map(lambda c: np.expand_dims(c, axis))
    return out


# ------------------------------------------------------------------------ truth values

def reduce_truth(ref, axis, keepdims=False, every=True):
    axes = all_axes(ref.ndim, axis)
    b = casts.astype(ref, np.bool_)
    r, kept = rows(b, axes)
    v = r.v.all(-1) if every else r.v.any(-1)
    known = r.st == EXACT
    # all: a known False decides; any: a known True decides
    decisive = (known & (~r.v if every else r.v)).any(-1)
    st = np.where(decisive | known.all(-1), EXACT, FREE).astype(np.uint8)
    return keep(Ref(v, st), ref.shape, axes, keepdims)


def count_nonzero(ref, axis, keepdims=False):
    axes = all_axes(ref.ndim, axis)
    b = casts.astype(ref, np.bool_)
    r, kept = rows(b, axes)
    v = r.v.sum(-1, dtype=np.int64)
    st = np.where((r.st != EXACT).any(-1), FREE, EXACT).astype(np.uint8)
    return keep(Ref(v, st), ref.shape, axes, keepdims)


# ------------------------------------------------------------------------- statistics

def variance(ref, axis, correction=0.0, keepdims=False, root=False):
    """var/std of a real floating Ref: exact operands only (FREE otherwise); the two-pass
    algorithm's error is within a few n eps of mean(x^2)."""
    axes = all_axes(ref.ndim, axis)
    r, kept = rows(ref, axes)
    n = r.shape[-1]
    d = ref.dtype
    fi = finfo(d)
    x = r.v.astype(np.float64)
    with np.errstate(all="ignore"):
        m = x.mean(-1, keepdims=True) if n else np.zeros(x.shape[:-1] + (1,))
        var = ((x - m) ** 2).sum(-1) / (n - correction)
        scale = (x ** 2).mean(-1) if n else np.zeros(x.shape[:-1])
        val = np.sqrt(var) if root else var
    exact = (r.st == EXACT).all(-1)
    finite = np.isfinite(x).all(-1)
    nonfinite = exact & ~finite
    safe = scale < float(fi.max) / 4
    tol = 8 * (n + 2) * float(fi.eps) * scale + float(fi.tiny)
    if root:
        # |sqrt(a) - sqrt(b)| <= sqrt(|a - b|)
        lo = np.sqrt(np.maximum(var - tol, 0.0)) - float(fi.tiny)
        hi = np.sqrt(var + tol) + float(fi.tiny)
    else:
        lo, hi = var - tol, var + tol
    st = np.where(exact & finite & safe & (n - correction > 0), RANGE, FREE).astype(np.uint8)
    st = np.where(nonfinite, EXACT, st)
    v = np.where(nonfinite, np.nan, val)
    with np.errstate(all="ignore"):
        out = finish(v.astype(d), st, lo, hi)
    return keep(out, ref.shape, axes, keepdims)


# ------------------------------------------------------------------------------- scans

def cumulative(ref, axis, kind, dtype=None, include_initial=False):
    """cumulative_sum / cumulative_prod: each output is the reduction of a prefix."""
    if kind == "sum":
        d = np.dtype(dtype) if dtype is not None else accumulator_dtype(ref.dtype)
    else:
        d = np.dtype(dtype) if dtype is not None else accumulator_dtype(ref.dtype)
    src = casts.astype(ref, d) if ref.dtype != d else ref
    if ref.ndim == 0:
        raise ValueError("cumulative of a 0-d array")
    moved = src.map(lambda c: np.moveaxis(c, axis, -1))
    n = moved.shape[-1]
    pieces = []
    start = 0 if include_initial else 1
    for k in range(start, n + 1):
        prefix = moved.map(lambda c: c[..., :k])
        pieces.append(_sum_rows(prefix, d) if kind == "sum" else _prod_rows(prefix, d))
    if not pieces:
        out = moved.map(lambda c: c[..., :0])
    else:
        out = Ref(*[np.stack(cols, axis=-1) for cols in zip(*[p.components() for p in pieces])])
    return out.map(lambda c: np.moveaxis(c, -1, axis))


# ------------------------------------------------------------------------ contractions

def contract_terms(terms: Ref, dtype, operands):
    """Sum of products over the last axis: the products are the element-wise multiply's
    references (exact where rounded once), then a sum in any order. A product of finite
    numbers that overflows is FREE: a contraction may fuse it into the addition (an FMA
    never rounds it to infinity), so -inf + (huge * huge) may be -inf rather than nan."""
    if is_inexact(dtype):
        finite = np.ones(terms.shape, bool)
        for r in operands:
            rv = np.broadcast_to(r.v, terms.shape)
            finite &= np.isfinite(rv.real) & np.isfinite(rv.imag)
        overflow = finite & ~(np.isfinite(terms.v.real) & np.isfinite(terms.v.imag))
        if overflow.any():
            terms = finish(terms.v, np.where(overflow, FREE, terms.st), terms.lo, terms.hi)
    return _sum_rows(terms, dtype)


def matmul(a: Ref, b: Ref, out_dtype):
    a = casts.astype(a, out_dtype)
    b = casts.astype(b, out_dtype)
    a2 = a.map(lambda c: c[..., None, :] if a.ndim == 1 else c)
    b2 = b.map(lambda c: c[:, None] if b.ndim == 1 else c)
    # (..., m, k, 1) * (..., 1, k, n) -> (..., m, n, k)
    left = a2.map(lambda c: np.swapaxes(c[..., :, :, None], -1, -2))   # (..., m, 1, k)
    right = b2.map(lambda c: np.swapaxes(c, -1, -2)[..., None, :, :])  # (..., 1, n, k)
    terms = apply(FUNCTIONS["multiply"], [left, right], out_dtype)
    out = contract_terms(terms, out_dtype, [left, right])
    if a.ndim == 1:
        out = out.map(lambda c: c[..., 0, :])
    if b.ndim == 1:
        out = out.map(lambda c: c[..., 0])
    return out


def vecdot(a: Ref, b: Ref, axis, out_dtype):
    a = casts.astype(a, out_dtype)
    b = casts.astype(b, out_dtype)
    if is_complex(out_dtype):
        a = apply(FUNCTIONS["conj"], [a], out_dtype)
    shape = np.broadcast_shapes(a.shape, b.shape)
    a = a.map(lambda c: np.moveaxis(np.broadcast_to(c, shape), axis, -1))
    b = b.map(lambda c: np.moveaxis(np.broadcast_to(c, shape), axis, -1))
    terms = apply(FUNCTIONS["multiply"], [a, b], out_dtype)
    return contract_terms(terms, out_dtype, [a, b])


def tensordot(a: Ref, b: Ref, axes_a, axes_b, out_dtype):
    a = casts.astype(a, out_dtype)
    b = casts.astype(b, out_dtype)
    free_a = [i for i in range(a.ndim) if i not in axes_a]
    free_b = [i for i in range(b.ndim) if i not in axes_b]
    ka = int(np.prod([a.shape[i] for i in axes_a], dtype=np.int64))
    fa = [a.shape[i] for i in free_a]
    fb = [b.shape[i] for i in free_b]
    left = a.map(lambda c: np.transpose(c, free_a + list(axes_a)).reshape(
        (int(np.prod(fa, dtype=np.int64)), 1, ka)))
    right = b.map(lambda c: np.transpose(c, list(axes_b) + free_b).reshape(
        (ka, int(np.prod(fb, dtype=np.int64)))).T[None, :, :])
    terms = apply(FUNCTIONS["multiply"], [left, right], out_dtype)
    out = contract_terms(terms, out_dtype, [left, right])
    return out.map(lambda c: c.reshape(tuple(fa) + tuple(fb)))


# ----------------------------------------------------------------------------- sorting

def _rank(v):
    """Ranks in tlaloc's order: numbers ascending, -0 equal to +0, every NaN last."""
    if is_inexact(v.dtype) and not is_complex(v.dtype):
        key = np.where(np.isnan(v), np.inf, v.astype(np.float64))
        nan = np.isnan(v)
        _, inv = np.unique(key, return_inverse=True)
        return np.where(nan, inv.max(initial=0) + 1, inv.reshape(v.shape))
    _, inv = np.unique(v, return_inverse=True)
    return inv.reshape(v.shape)


def argsort(ref, axis, descending=False):
    """Stable; known only where every element of the slice is exact."""
    r = ref.map(lambda c: np.moveaxis(c, axis, -1))
    out = np.zeros(r.shape, np.int64)
    rows_ = int(np.prod(r.shape[:-1], dtype=np.int64))
    flat_v = r.v.reshape(rows_, r.shape[-1])
    res = out.reshape(rows_, r.shape[-1])
    for i, row in enumerate(flat_v):
        rank = _rank(row)
        res[i] = np.argsort(-rank if descending else rank, kind="stable")
    st = np.broadcast_to(np.where((r.st != EXACT).any(-1, keepdims=True), FREE, EXACT),
                         r.shape).astype(np.uint8)
    return Ref(np.moveaxis(res.reshape(r.shape), -1, axis), np.moveaxis(st, -1, axis))


def sort(ref, axis, descending=False):
    """Values in order. Exact slices sort exactly (zeros of both signs: the sign is open);
    ranges sort by bounds (the k-th smallest of values in ranges lies between the k-th
    smallest lower and upper bounds)."""
    if is_complex(ref.dtype):
        raise TypeError("sort of complex")
    idx = argsort(ref, axis, descending).v
    m = ref.map(lambda c: np.moveaxis(c, axis, -1))
    v = np.take_along_axis(m.v, np.moveaxis(idx, axis, -1), -1)
    any_free = np.broadcast_to((m.st == FREE).any(-1, keepdims=True), m.shape)
    if not is_float(ref.dtype):
        return Ref(np.moveaxis(v, -1, axis), np.moveaxis(np.where(any_free, FREE, EXACT), -1, axis))
    all_exact = np.broadcast_to((m.st == EXACT).all(-1, keepdims=True), m.shape)
    nan = np.isnan(m.v)
    lo = np.sort(np.where(nan, np.inf, m.lo), axis=-1)   # NaN last, as the order puts it
    hi = np.sort(np.where(nan, np.inf, m.hi), axis=-1)
    if descending:
        lo, hi = lo[..., ::-1], hi[..., ::-1]
    st = np.where(any_free, FREE, np.where(all_exact, EXACT, RANGE)).astype(np.uint8)
    st[np.isnan(v) & ~any_free] = EXACT
    signed = (m.v == 0) & np.signbit(m.v)
    unsigned = (m.v == 0) & ~np.signbit(m.v)
    both = np.broadcast_to(signed.any(-1, keepdims=True) & unsigned.any(-1, keepdims=True), m.shape)
    st[(st == EXACT) & (v == 0) & both] = RANGE
    out = finish(v, st, lo, hi)
    return out.map(lambda c: np.moveaxis(c, -1, axis))
