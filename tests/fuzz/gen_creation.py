"""Generators of creation functions (constants of the compiled program), meshgrid and
astype."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from . import casts, values
from .gen_common import (any_value, name_of, dtype_src, operand, scalar_ref)
from .reference import RANGE, Ref, finish, is_complex, widen


# ============================================================================== creation

def _fill(b, dtype):
    return b.draw(values.scalars(values.kind(dtype), dtype))


def gen_creation(b):
    name = b.draw(st.sampled_from(["zeros", "ones", "full", "zeros_like", "ones_like", "full_like",
                                   "arange", "linspace", "eye"]))
    dtype = b.draw(st.sampled_from(values.DTYPES))
    d = np.dtype(dtype)
    if name in ("zeros", "ones", "full"):
        shape = b.draw(values.shapes())
        args = [repr(shape)]
        if name == "full":
            fill = _fill(b, dtype)
            args.append(values.scalar_source(fill))
            v = np.full(shape, scalar_ref(fill, d).v, d)
        else:
            v = (np.zeros if name == "zeros" else np.ones)(shape, d)
        args.append(f"dtype={dtype_src(d)}")
        b.define(f"xp.{name}({', '.join(args)}, device=dev)", Ref(v), (), name)
        return
    if name.endswith("_like"):
        x = any_value(b)
        rx = b.refs[x]
        if b.draw(st.booleans()):
            dtype, d = name_of(rx), rx.dtype
        args = [f"v{x}"]
        if name == "full_like":
            fill = _fill(b, dtype)
            args.append(values.scalar_source(fill))
            v = np.full(rx.shape, scalar_ref(fill, d).v, d)
        else:
            v = (np.zeros if name == "zeros_like" else np.ones)(rx.shape, d)
        b.define(f"xp.{name}({', '.join(args)}, dtype={dtype_src(d)})", Ref(v), [x], name)
        return
    if name == "arange":
        if d.kind in "bc":
            d = np.dtype(np.int64)
        unsigned = d.kind == "u"       # a negative bound is no uint value (OverflowError)
        start = b.draw(st.integers(0 if unsigned else -5, 5))
        stop = b.draw(st.integers(0 if unsigned else -5, 8))
        step = b.draw(st.sampled_from([1, 2, 3] if unsigned else [1, 2, -1, 3, -2]))
        v = np.arange(start, stop, step).astype(d)
        b.define(f"xp.arange({start}, {stop}, {step}, dtype={dtype_src(d)}, device=dev)",
                 Ref(v), (), "arange")
        return
    if name == "linspace":
        d = np.dtype(b.draw(st.sampled_from(values.FLOATS)))
        start = b.draw(st.integers(-4, 4))
        stop = b.draw(st.integers(-4, 8))
        num = b.draw(st.integers(0, 6))
        endpoint = b.draw(st.booleans())
        center = np.linspace(start, stop, num, endpoint=endpoint)
        fi = np.finfo(d)
        pad = 4 * float(fi.eps) * max(abs(start), abs(stop)) + float(fi.tiny)
        lo, hi = widen(center - pad, center + pad, d)
        ref = finish(center.astype(d), np.full(center.shape, RANGE, np.uint8), lo, hi)
        b.define(f"xp.linspace({start}, {stop}, {num}, dtype={dtype_src(d)}, "
                 f"endpoint={endpoint}, device=dev)", ref, (), "linspace")
        return
    n = b.draw(st.integers(0, 4))
    m = b.draw(st.one_of(st.none(), st.integers(0, 4)))
    k = b.draw(st.integers(-3, 3))
    v = np.eye(n, m, k, dtype=d)
    margs = "" if m is None else f", {m}"
    b.define(f"xp.eye({n}{margs}, k={k}, dtype={dtype_src(d)}, device=dev)", Ref(v), (), "eye")


def gen_meshgrid(b):
    x = operand(b, lambda r: r.ndim == 1, lambda: b.input(shape=(b.draw(st.integers(0, 4)),)))
    rx = b.refs[x]
    y = operand(b, lambda r: r.ndim == 1 and r.dtype == rx.dtype,
                lambda: b.input(dtype=name_of(rx), shape=(b.draw(st.integers(0, 4)),)))
    indexing = b.draw(st.sampled_from(["xy", "ij"]))
    which = b.draw(st.integers(0, 1))
    ry = b.refs[y]
    comps = [np.meshgrid(cx, cy, indexing=indexing)[which].copy()
             for cx, cy in zip(rx.components(), ry.components())]
    b.define(f'xp.meshgrid(v{x}, v{y}, indexing="{indexing}")[{which}]', Ref(*comps), [x, y],
             "meshgrid")


def gen_astype(b):
    x = any_value(b)
    rx = b.refs[x]
    # the standard has no cast from complex to a real dtype (bool included)
    options = [d for d in values.DTYPES if not (is_complex(rx.dtype) and values.kind(d) != "c")]
    dtype = b.draw(st.sampled_from(options))
    b.define(f"xp.astype(v{x}, {dtype_src(dtype)})", casts.astype(rx, dtype), [x], "astype")


# Generators with weights (repeats): element-wise arithmetic most, since compilers rewrite
# chains of it; hypothesis also favours the first entries a little, and shrinks towards
# them, so the simplest come first.
