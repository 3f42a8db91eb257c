"""Readable reverse mode: the derivative tlaloc computes, written out as Python.

`grad_source(f, *args)` differentiates f at the example arguments, names every recorded
operation after the forward program (forward values `tanh1`, `dot2`; the gradient flowing
into a forward value `g_tanh1`; the gradient of argument `w`, `g_w`), and prints the graph
behind the gradients as one namespace call per line. Control flow is resolved at the
example arguments: the source is the derivative along the path those arguments took.
"""
from __future__ import annotations

import inspect
import keyword

import numpy as np

from .._context import trace
from .._array import Array
from .._prims import ad
from .engine import Tape, tracing, variable

_SHORT = {"dot_general": "dot", "broadcast_in_dim": "bcast", "reduce_sum": "sum",
          "reduce_max": "max", "reduce_min": "min", "reduce_prod": "prod", "multiply": "mul",
          "subtract": "sub", "divide": "div", "negate": "neg", "convert": "cast",
          "transpose": "perm", "concatenate": "concat", "constant": "const",
          "round_even": "round", "compare": "cmp", "dynamic_slice": "elem",
          "dynamic_update_slice": "update"}

_INLINE_LIMIT = 1000   # captured constant arrays up to this size are written inline


class _Literal:
    """A splat value rendered as a Python scalar where an elementwise operand allows it."""

    def __init__(self, value, aval):
        self.value = value
        self.aval = aval

    def scalar(self):
        return ad.py_literal(self.value)

    def materialized(self):
        return f"xp.full({self.aval.shape}, {self.scalar()}, dtype=xp.{self.aval.dtype})"


class _Namer:
    """Names nodes as they are recorded: after their primitive in the forward pass, after
    the forward node whose rule created them in the backward pass."""

    def __init__(self):
        self.names = {}
        self.counts = {}
        self.claimed = set()
        self.context = None     # the forward node whose rule is running (backward pass)

    def unique(self, base):
        k = self.counts.get(base, 0) + 1
        self.counts[base] = k
        return f"{base}{k}"

    def on_bind(self, node):
        if self.context is None:
            self.names[node] = self.unique(_SHORT.get(node.prim.name, node.prim.name))
        else:
            self.names[node] = self.unique(f"g_{self.names.get(self.context, 'v')}_")

    def on_cotangent(self, node, ct):
        """`ct` is the whole gradient flowing into forward `node`: call it g_<node>."""
        self.context = node
        owner = self.names.get(node)
        if owner is not None and ct not in self.claimed:
            self.names[ct] = f"g_{owner}"
            self.claimed.add(ct)


def _param_names(f, n):
    try:
        params = [p.name for p in inspect.signature(f).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    names = params[:n] + [f"arg{i}" for i in range(len(params), n)]
    return [f"{x}_" if keyword.iskeyword(x) else x for x in names]


def grad_source(f, *args, argnums=0, name=None) -> str:
    """Python source of the gradient of scalar `f` at `args` (see module docstring).

    The returned text defines a function taking the same array arguments as f and
    returning the gradient (a tuple when argnums is a tuple); it imports only tlaloc."""
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    params = _param_names(f, len(args))
    arrays = [a if isinstance(a, Array) else None for a in args]
    for i in nums:
        if arrays[i] is None:
            raise TypeError(f"grad_source: argument {i} must be a tlaloc array to differentiate it")
    namer = _Namer()
    # this thread's recorded nodes go to this call's namer (the hook is per thread, so
    # other threads' nodes never do); a grad_source called inside f installs its own
    outer, trace.on_bind = trace.on_bind, namer.on_bind
    try:
        with tracing():
            full = list(args)
            variables = {}
            for i in nums:
                v = variable(arrays[i]._node)
                variables[i] = v
                full[i] = Array._from_node(v)
            out = f(*full)
            if not isinstance(out, Array) or out.ndim != 0 or out.dtype.kind != "f":
                raise TypeError("grad_source: f must return a real floating-point scalar array")
            tape = Tape([out._node], list(variables.values()))
            seed = ad.const(out._node, 1.0)
            namer.names[seed] = "g_out"
            cts = tape.backward({out._node: seed}, observer=namer.on_cotangent)
    finally:
        trace.on_bind = outer
    results = []
    for i in nums:
        ct = cts[variables[i]]
        if ct is None:
            ct = ad.zeros(variables[i])
        namer.names[ct] = f"g_{params[i]}"
        results.append(ct)
    inputs = {a._node: params[i] for i, a in enumerate(arrays) if a is not None}
    body, returned = _render(results, inputs, namer.names)
    fname = name or f"grad_{getattr(f, '__name__', 'f')}".replace("<lambda>", "lambda")
    signature = ", ".join(params[i] for i, a in enumerate(arrays) if a is not None)
    shapes = ", ".join(f"{params[i]}: {a.shape} {a.dtype}" for i, a in enumerate(arrays) if a is not None)
    lines = ["import tlaloc as xp", "", "",
             f"def {fname}({signature}):",
             f'    """Gradient of {getattr(f, "__name__", "f")} with respect to '
             f'{", ".join(params[i] for i in nums)}, recorded at {shapes}."""']
    lines += [f"    {line}" for line in body]
    ret = returned[0] if isinstance(argnums, int) else "(" + ", ".join(returned) + (",)" if len(returned) == 1 else ")")
    lines.append(f"    return {ret}")
    return "\n".join(lines) + "\n"


def _render(outputs, inputs, names):
    """Lines computing `outputs` from `inputs` (node -> parameter name)."""
    order, seen = [], set()
    stack = [(o, False) for o in reversed(outputs)]
    while stack:
        node, expanded = stack.pop()
        if node in seen and not expanded:
            continue
        if expanded:
            order.append(node)
            continue
        seen.add(node)
        stack.append((node, True))
        if node not in inputs and node.prim is not None:
            for i in reversed(node.inputs):
                if i not in seen:
                    stack.append((i, False))
    expr = {}      # node -> name (str) or _Literal
    lines = []
    used = set(names.values()) | set(inputs.values())
    fresh = iter(f"t{k}" for k in range(1, 10 ** 6))

    def name_of(node):
        n = names.get(node)
        if n is None or n in inputs.values() and node not in inputs:
            n = next(x for x in fresh if x not in used)
        names[node] = n
        return n

    for node in order:
        if node in inputs:
            expr[node] = inputs[node]
            continue
        if node.prim is None:
            expr[node] = _constant(node, name_of, lines)
            continue
        ops = [expr[i] for i in node.inputs]
        if node.prim.source == "{0}":
            expr[node] = ops[0]
            continue
        literal = _literal_of(node, ops)
        if literal is None:
            literal = _simplified(node, ops)
        if literal is not None:
            expr[node] = literal
            continue
        text = _expression(node, ops)
        name = name_of(node)
        lines.append(f"{name} = {text}")
        expr[node] = name
    returned = []
    for o in outputs:
        e = expr[o]
        if isinstance(e, _Literal):
            name = name_of(o)
            lines.append(f"{name} = {e.materialized()}")
            e = name
        returned.append(e)
    return lines, returned


_FOLD_LIMIT = 10_000


def _literal_of(node, ops):
    """The operation's result when it is a splat value known from the program alone."""
    prim = node.prim.name
    if prim == "constant":
        return _Literal(node.params["value"], node.aval)
    if prim == "broadcast_in_dim" and isinstance(ops[0], _Literal):
        return _Literal(ops[0].value, node.aval)
    if ops and all(isinstance(o, _Literal) for o in ops) and node.aval.shape == ops[0].aval.shape \
            and int(np.prod(node.aval.shape)) <= _FOLD_LIMIT:
        # fold: run the primitive's reference implementation on the splat operands
        arrays = [np.full(o.aval.shape, o.value, dtype=o.aval.dtype.numpy) for o in ops]
        with np.errstate(all="ignore"):   # impls compute with StableHLO's inf/nan semantics
            result = np.asarray(node.prim.impl(*arrays, **node.params))
        flat = result.reshape(-1)
        if flat.size and (flat == flat[0]).all():
            return _Literal(flat[0].item(), node.aval)
    return None


def _simplified(node, ops):
    """An operand the operation reduces to (x * 1, x / 1, x ** 1, where(True, a, b))."""
    prim = node.prim.name

    def is_one(o):
        return isinstance(o, _Literal) and o.value == 1

    def kept(i):   # operand i can stand for the result (not a literal, not a 0-d operand)
        return not isinstance(ops[i], _Literal) and node.inputs[i].aval.shape == node.aval.shape
    if prim == "multiply":
        if is_one(ops[0]) and kept(1):
            return ops[1]
        if is_one(ops[1]) and kept(0):
            return ops[0]
    if prim in ("divide", "power") and is_one(ops[1]) and kept(0):
        return ops[0]
    if prim == "select" and isinstance(ops[0], _Literal):
        chosen = ops[1] if ops[0].value else ops[2]
        return _Literal(chosen.value, node.aval) if isinstance(chosen, _Literal) else chosen
    return None


def _constant(node, name_of, lines):
    value = node.device.backend.to_numpy(node.value) if node.value is not None else None
    if value is None:
        raise ValueError("grad_source: the function uses an array without a value")
    if value.ndim == 0:
        return _Literal(value.item(), node.aval)
    if value.size > _INLINE_LIMIT:
        raise ValueError(f"grad_source: the function captures an array of {value.size} "
                         "elements; pass it as an argument instead")
    name = name_of(node)
    lines.append(f"{name} = xp.asarray({np.asarray(value).tolist()!r}, dtype=xp.{node.aval.dtype})")
    return name


class _SourceContext:
    def __init__(self, node):
        self.in_avals = tuple(i.aval for i in node.inputs)
        self.out_aval = node.aval


def _expression(node, ops):
    prim = node.prim
    elementwise = len(ops) >= 2 and all(i.aval.shape == node.aval.shape for i in node.inputs)
    has_array = any(not isinstance(o, _Literal) for o in ops)
    positions = prim.name in ("dynamic_slice", "dynamic_update_slice")  # start indices
    texts, full = [], []
    for o in ops:
        if isinstance(o, _Literal):
            scalar = (elementwise and has_array) or (positions and o.aval.shape == ())
            texts.append(o.scalar() if scalar else o.materialized())
            full.append(o.materialized())
        else:
            texts.append(o)
            full.append(o)
    rule = prim.source
    text = None
    if isinstance(rule, str):
        text = rule.format(*texts)
    elif callable(rule):
        text = rule(_SourceContext(node), *texts, **node.params)
    if text:
        return text
    args = ", ".join(full + [f"{k}={_param_literal(v)}" for k, v in node.params.items()])
    return f"xp.primitive({prim.name!r}, {args})"


def _param_literal(value):
    from .._dtypes import DType
    if isinstance(value, DType):
        return f"xp.{value.name}"
    if isinstance(value, tuple):
        inner = ", ".join(_param_literal(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    return ad.py_literal(value) if isinstance(value, float) else repr(value)

