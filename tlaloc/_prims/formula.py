"""Formulas: a primitive's special-case numerics, written once in primitives.

Some primitives need more than their StableHLO op to be accurate or to follow the
standard's special cases (the complex functions near 0 and at infinite or NaN parts, the
complex modulus at infinities, the sign of zero). Their declaration names a formula:

    sinh = declare("sinh", ..., formula=complex_sinh, formula_kinds="c")

`formula(*operands, **params) -> node` composes primitives with the vocabulary of
`_prims/lax.py`, as any rule does. For operands whose dtype kind (of operand 0) is in
`formula_kinds`, the primitive's emit rule writes the formula's equations into the
program, and its impl runs the same equations with each primitive's NumPy implementation,
so both backends compute the same composition (and every derivative rule that uses the
primitive gets it). Inside its own formula, the primitive stands for its plain op (the
`emit`/`impl` given to `declare`, kept as `op_emit`/`op_impl`): `lax.sqrt(w)` in sqrt's
formula is StableHLO's sqrt.

A formula is traced once per (operand avals, params) on placeholder nodes; nothing is
recorded in the user's graph.
"""
from __future__ import annotations

import threading

import numpy as np

from .. import _dtypes as dt
from .._context import trace as _trace
from .._graph import Aval, Node
from ..lowering.stablehlo import emit_equations


class _FormulaDevice:
    """The device of a formula's placeholder nodes (they are never evaluated)."""
    platform = None
    index = 0

    def __repr__(self):
        return "<formula device>"


_DEVICE = _FormulaDevice()
_lock = threading.Lock()


def _trace_formula(prim, avals, params):
    """The formula's equations (prim, params, input slots, aval) and output slot, on inputs
    of `avals`; cached on the primitive."""
    key = (avals, tuple(params.items()))
    cache = prim.formula_cache
    hit = cache.get(key)
    if hit is not None:
        return hit
    inputs = [Node(None, (), None, a, _DEVICE) for a in avals]
    outer, _trace.on_bind = _trace.on_bind, None
    # the placeholders have no values: the pending-depth bound must not try to compute
    # them (a formula deeper than config.max_pending raised ConcretizationError)
    _trace.jit_depth += 1
    try:
        out = prim.formula(*inputs, **params)
    finally:
        _trace.jit_depth -= 1
        _trace.on_bind = outer
    # the nodes behind `out`, in recording order
    found, stack, seen = [], [out], set(inputs)
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        if n.prim is None:
            raise AssertionError(f"{prim.name}: its formula reads a node that is not an operand")
        found.append(n)
        stack += n.inputs
    found.sort(key=lambda n: n.number)
    slot = {n: i for i, n in enumerate(inputs)}
    eqns = []
    for n in found:
        eqns.append((n.prim, n.params, tuple([slot[x] for x in n.inputs]), n.aval))
        slot[n] = len(slot)
    result = (tuple(eqns), slot[out])
    with _lock:
        if len(cache) > 256:
            cache.clear()
        cache[key] = result
    return result


def emit_rule(prim):
    """`prim`'s emit rule: the formula's equations where it applies, else the plain op."""
    kinds, plain = prim.formula_kinds, prim.op_emit

    def emit_of(p):
        return p.op_emit if p is prim else p.emit

    def emit(ctx, *operands, **params):
        if ctx.in_avals[0].dtype.kind not in kinds:
            return plain(ctx, *operands, **params)
        avals = tuple([Aval(a.shape, a.dtype) for a in ctx.in_avals])
        eqns, out = _trace_formula(prim, avals, params)
        return emit_equations(ctx, eqns, operands, avals, emit_of)[out]

    emit.__name__ = f"{prim.name}_emit"
    return emit


def impl_rule(prim):
    """`prim`'s interpreter implementation: the same equations, run with NumPy."""
    kinds, plain = prim.formula_kinds, prim.op_impl

    def impl(*arrays, **params):
        if arrays[0].dtype.kind not in kinds:
            return plain(*arrays, **params)
        avals = tuple([Aval(a.shape, dt.from_numpy(a.dtype)) for a in arrays])
        eqns, out = _trace_formula(prim, avals, params)
        env = list(arrays)
        for p, ps, slots, aval in eqns:
            run = p.op_impl if p is prim else p.impl
            v = run(*[env[s] for s in slots], **ps)
            v = np.asarray(v)
            if v.dtype != aval.dtype.numpy:
                v = v.astype(aval.dtype.numpy)
            env.append(v)
        return env[out]

    impl.__name__ = f"{prim.name}_impl"
    return impl
