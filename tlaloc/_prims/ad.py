"""Vocabulary for derivative rules: node-level operations built from primitives.

Rules receive and return graph nodes. Operands of elementwise primitives share one aval, so
these helpers need no broadcasting or promotion; each is a single `bind`.

Rule signatures (the `jvp=` and `vjp=` of a declaration):
    jvp(tangents, *primals, out, **params) -> tangent of the result, or None for zero
        `tangents` has one entry per operand: a node, or None where the tangent is zero.
    vjp(ct, *primals, out, **params) -> tuple with one cotangent (node or None) per operand
`out` is the primitive's result node. Complex numbers follow the convention in
docs/derivatives.md: the gradient of a real function of z = x + iy is dL/dx + i dL/dy, so a
holomorphic g contributes ct * conj(g'(z)).
"""
from __future__ import annotations

from .._graph import bind


def p(prim, *nodes, **params):
    return bind(prim, nodes, params)


def const(like, value):
    """A constant of `like`'s shape and dtype."""
    return bind(sh.constant, (), {"shape": like.aval.shape, "dtype": like.aval.dtype, "value": value},
                like.device)


def scalar(value, dtype, device):
    """A 0-d constant (elementwise primitives take it beside operands of any shape)."""
    return bind(sh.constant, (), {"shape": (), "dtype": dtype, "value": value}, device)


def zeros(like):
    return const(like, 0)


def add(a, b):
    return p(ew.add, a, b)


def add_any(a, b):
    """Sum of two optional contributions (None is zero)."""
    if a is None:
        return b
    if b is None:
        return a
    return p(ew.add, a, b)


def sub(a, b):
    return p(ew.subtract, a, b)


def mul(a, b):
    return p(ew.multiply, a, b)


def div(a, b):
    return p(ew.divide, a, b)


def neg(a):
    return p(ew.negate, a)


def square(a):
    return p(ew.multiply, a, a)


def select(pred, a, b):
    return p(ew.select, pred, a, b)


def compare(a, b, direction):
    return p(ew.compare, a, b, direction=direction)


def convert(a, dtype):
    return a if a.aval.dtype is dtype else p(ew.convert, a, dtype=dtype)


def is_complex(node) -> bool:
    return node.aval.dtype.kind == "c"


def conj(a):
    if not is_complex(a):
        return a
    return p(ew.complex, p(ew.real, a), p(ew.negate, p(ew.imag, a)))


def real(a):
    return p(ew.real, a) if is_complex(a) else a


def as_dtype_of(node, like):
    """Bring a cotangent computed in `node`'s dtype to the dtype of the operand `like`
    (a real operand of a complex result takes the real part)."""
    target = like.aval.dtype
    if node.aval.dtype is target:
        return node
    if is_complex(node) and target.kind != "c":
        node = p(ew.real, node)
    return convert(node, target)


def differentiable(node) -> bool:
    return node.aval.dtype.kind in "fc"


def sum_axes(a, axes):
    return p(rd.reduce_sum, a, axes=tuple(axes)) if axes else a


def broadcast(a, shape, dims):
    return p(sh.broadcast_in_dim, a, shape=tuple(shape), dims=tuple(dims))


def reshape(a, shape):
    return a if a.aval.shape == tuple(shape) else p(sh.reshape, a, shape=tuple(shape))


def transpose(a, perm):
    return p(sh.transpose, a, perm=tuple(perm))


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
            total = add_any(total, mul(as_dtype_of(t, out), d))
        return total

    def vjp(ct, *primals, out):
        cts = []
        for x, partial in zip(primals, partials):
            if partial is None or not differentiable(x):
                cts.append(None)
                continue
            d = partial(*primals, out)
            cts.append(None if d is None else as_dtype_of(mul(ct, conj(d)), x))
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


# The primitive modules import this one for its rule factories, so these come last.
from . import elementwise as ew  # noqa: E402
from . import reduce as rd  # noqa: E402
from . import shape as sh  # noqa: E402
