"""Vocabulary for derivative rules: node-level operations built from primitives.

Rules receive and return graph nodes and record operations with the vocabulary of
`_prims/lax.py` (one function per primitive); this module adds the few helpers rules share
(constants like an operand, optional contributions, conjugation, dtype adjustments) and the
rule factories.

Rule signatures (the `jvp=` and `vjp=` of a declaration):
    jvp(tangents, *primals, out, **params) -> tangent of the result, or None for zero
        `tangents` has one entry per operand: a node, or None where the tangent is zero.
    vjp(ct, *primals, out, **params) -> tuple with one cotangent (node or None) per operand
`out` is the primitive's result node. Complex numbers follow the convention in
docs/derivatives.md: the gradient of a real function of z = x + iy is dL/dx + i dL/dy, so a
holomorphic g contributes ct * conj(g'(z)).
"""
from __future__ import annotations

from .. import _dtypes as dt
from .._context import trace
from .._graph import bind
from . import lax


def const(like, value):
    """A constant of `like`'s shape and dtype."""
    return lax.constant(shape=like.aval.shape, dtype=like.aval.dtype, value=value,
                        device=like.device)


def scalar(value, dtype, device):
    """A 0-d constant (elementwise primitives take it beside operands of any shape)."""
    return lax.constant(shape=(), dtype=dtype, value=value, device=device)


def zeros(like):
    return const(like, 0)


def add_any(a, b):
    """Sum of two optional contributions (None is zero)."""
    if a is None:
        return b
    if b is None:
        return a
    return lax.add(a, b)


def square(a):
    return lax.multiply(a, a)


def convert(a, dtype):
    return a if a.aval.dtype is dtype else lax.convert(a, dtype=dtype)


def is_complex(node) -> bool:
    return node.aval.dtype.kind == "c"


def conj(a):
    if not is_complex(a):
        return a
    return lax.complex(lax.real(a), lax.negate(lax.imag(a)))


def real(a):
    return lax.real(a) if is_complex(a) else a


def as_dtype_of(node, like):
    """Bring a cotangent computed in `node`'s dtype to the dtype of the operand `like`
    (a real operand of a complex result takes the real part)."""
    target = like.aval.dtype
    if node.aval.dtype is target:
        return node
    if is_complex(node) and target.kind != "c":
        node = lax.real(node)
    return convert(node, target)


def differentiable(node) -> bool:
    return node.aval.dtype.kind in dt.FLOATING_KINDS


def sum_axes(a, axes):
    return lax.reduce_sum(a, axes=tuple(axes)) if axes else a


def broadcast(a, shape, dims):
    return lax.broadcast_in_dim(a, shape=tuple(shape), dims=tuple(dims))


def reshape(a, shape):
    return a if a.aval.shape == tuple(shape) else lax.reshape(a, shape=tuple(shape))


def transpose(a, perm):
    return lax.transpose(a, perm=tuple(perm))


def py_literal(value) -> str:
    """A Python expression for a scalar, as grad_source writes it."""
    if isinstance(value, float):
        if value != value:
            return "xp.nan"
        if value in (float("inf"), float("-inf")):
            return "xp.inf" if value > 0 else "-xp.inf"
    return repr(value)


# ----------------------------------------------------------------------------- rule factories

def elementwise_rules(*partials):
    """jvp and vjp of an elementwise primitive from its partial derivatives.

    Each partial is `fn(*primals, out) -> node` giving d out / d operand_i (None: zero), as
    for a holomorphic function; the vjp conjugates it.
    """
    def jvp(tangents, *primals, out):
        total = None
        for t, partial in zip(tangents, partials):
            if t is None or partial is None:
                continue
            d = partial(*primals, out)
            if d is None:
                continue
            total = add_any(total, lax.multiply(as_dtype_of(t, out), d))
        return total

    def vjp(ct, *primals, out):
        cts = []
        for x, partial in zip(primals, partials):
            if partial is None or not differentiable(x):
                cts.append(None)
                continue
            d = partial(*primals, out)
            cts.append(None if d is None else as_dtype_of(lax.multiply(ct, conj(d)), x))
        return tuple(cts)

    return {"jvp": jvp, "vjp": vjp}


def linear_rules(apply_transpose):
    """Rules of a primitive that is linear in all its operands.

    jvp applies the primitive to the tangents (zeros for None); `apply_transpose(ct, *primals,
    out, **params)` returns the cotangents.
    """
    def jvp(tangents, *primals, out, **params):
        if all(t is None for t in tangents):
            return None
        filled = tuple(zeros(x) if t is None else t for t, x in zip(tangents, primals))
        return bind(out_prim(out), filled, params)

    return {"jvp": jvp, "vjp": apply_transpose}


def out_prim(out):
    """The primitive that produced `out` (rules are called before the node is evaluated or
    while its graph is retained)."""
    return out.prim


def no_derivative():
    """Rules of a primitive whose result is piecewise constant or not differentiable
    (comparisons, integer results, floor): zero tangent, zero cotangents."""
    return {"jvp": lambda tangents, *primals, out, **params: None,
            "vjp": lambda ct, *primals, out, **params: (None,) * len(primals)}



# ----------------------------------------------------------------------------- transposition

def transposed(jvp):
    """A vjp rule from a jvp rule that is linear in the tangents (a factorisation's
    classical formulas): the jvp is recorded on seed variables and its graph walked back
    with each primitive's own vjp rule, so the reverse mode is exact and differentiable
    again."""
    def vjp(ct, *primals, out, **params):
        # the jvp's graph is walked below: operations on small host values, run as they
        # are recorded, keep their inputs while it is recorded (as derivatives' do)
        trace.retain_graph += 1
        try:
            seeds = tuple(lax.variable(zeros(x)) if differentiable(x) else None
                          for x in primals)
            t = jvp(seeds, *primals, out=out, **params)
        finally:
            trace.retain_graph -= 1
        if t is None:
            return (None,) * len(primals)
        live = [s for s in seeds if s is not None]
        cts = _linear_backward(t, as_dtype_of(ct, t), live)
        return tuple(None if s is None else cts.get(s) for s in seeds)
    return vjp


def _linear_backward(out, ct, seeds):
    """Cotangents of `seeds` given the cotangent `ct` of `out`, a function of them recorded
    after them (nodes older than the first seed cannot depend on one and are not walked)."""
    first = min(s.number for s in seeds)
    seedset = set(seeds)
    nodes, stack, seen = [], [out], set()
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        nodes.append(n)
        if n not in seedset and n.prim is not None:
            stack += [i for i in n.inputs if i.number >= first]
    nodes.sort(key=lambda n: n.number)
    depends = {}
    for n in nodes:
        depends[n] = n in seedset or (n.prim is not None and
                                       any(depends.get(i, False) for i in n.inputs))
    cts = {out: ct}
    for n in reversed(nodes):
        if n in seedset or not depends[n]:
            continue
        c = cts.pop(n, None)
        if c is None:
            continue
        for inp, ci in zip(n.inputs, n.prim.vjp(c, *n.inputs, out=n, **n.params)):
            if ci is not None and depends.get(inp, False):
                cts[inp] = add_any(cts.get(inp), ci)
    return {s: cts.get(s) for s in seeds}
