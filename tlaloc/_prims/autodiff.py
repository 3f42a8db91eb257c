"""Primitives that exist for differentiation. None of them computes anything: each returns
its first operand. They mark a point in the graph for the autodiff engine."""
from __future__ import annotations

from .core import declare
from . import ad
from . import batching as bt
from . import padding as pd


def _first(x, *rest, **params):
    return x


def _emit_first(ctx, x, *rest, **params):
    return x


# The variable a derivative is taken with respect to: identity, and linear.
variable = declare(
    "variable", infer=_first, emit=_emit_first, impl=_first, source="{0}", batch=bt.unary("variable"),
    padding=pd.ignore("variable"),
    jvp=lambda tangents, x, *, out: tangents[0],
    vjp=lambda ct, x, *, out: (ct,))

# Blocks derivatives: zero tangent, zero cotangent.
stop_gradient = declare(
    "stop_gradient", infer=_first, emit=_emit_first, impl=_first, source="{0}", batch=bt.unary("stop_gradient"),
    padding=pd.ignore("stop_gradient"),
    **ad.no_derivative())

# Keeps XLA from merging a recomputation (checkpoint) with the forward pass.
optimization_barrier = declare(
    "optimization_barrier", infer=_first, impl=_first, source="{0}",
    batch=bt.unary("optimization_barrier"), padding=pd.ignore("optimization_barrier"),
    emit=lambda ctx, x: ctx.simple("stablehlo.optimization_barrier", x),
    jvp=lambda tangents, x, *, out: tangents[0],
    vjp=lambda ct, x, *, out: (ct,))


def _custom_rules():
    def jvp(tangents, value, *args, out, rule, output=None):
        return rule._jvp_rule(out, tangents[1:], args, output)

    def vjp(ct, value, *args, out, rule, output=None):
        return (None,) + tuple(rule._vjp_rule(out, ct, args, output))

    return {"jvp": jvp, "vjp": vjp}


# The result of a function with user-defined derivatives (custom_vjp, custom_jvp,
# checkpoint). Operand 0 is the value the function computed; the rest are its array
# arguments, so the derivative flows to them through the rule (param `rule`), never through
# the function's own recorded operations. `output` says which result this is when the
# function returns several (None for one).
custom_call = declare("custom_derivative_call", infer=_first, emit=_emit_first, impl=_first,
                      source="{0}", batch=bt.custom_call,
                      padding=pd.ignore("custom_derivative_call"),
                      **_custom_rules())


def _refuse_vjp(ct, x, *, out, what):
    if x.prim is stop_gradient:     # the value was made a constant: no cotangent reaches it
        return (None,)
    raise NotImplementedError(
        f"{what}; apply tlaloc.stop_gradient to it to treat it as a constant")


def _refuse_jvp(tangents, x, *, out, what):
    _refuse_vjp(None, x, out=out, what=what)


# Identity, with no derivative: differentiating through it raises (stop_gradient would give
# a silent zero). `what` says which value has no derivative and why (tlaloc.random's gamma
# family marks its shape parameters with it).
nondifferentiable = declare(
    "nondifferentiable", infer=_first, emit=_emit_first, impl=_first, source="{0}",
    batch=bt.unary("nondifferentiable"), padding=pd.ignore("nondifferentiable"),
    jvp=_refuse_jvp, vjp=_refuse_vjp)
