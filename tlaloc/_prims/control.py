"""Structured control flow: `cond` (cond and switch), `while` and `scan`.

Each is one primitive whose parameters hold traced sub-programs (`SubProgram`: equations over
their inputs, compared and hashed by structure, so they take part in the compile-cache key)
and that lowers to one StableHLO region op: `stablehlo.if` / `stablehlo.case`, and
`stablehlo.while` (scan too: a counter, dynamic slices of its inputs and updates of its
stacked outputs). The graph has one result per node, so an op with several results is one
node per result, the nodes differing only in the `output` parameter; the lowering writes the
op once for all of them (`EmitContext.once`) and the interpreter runs it once
(`shared_value`).

Operands: a function's arguments, then the values it read from outside ("captured"), so
derivatives reach closed-over parameters. Derivative rules replay a sub-program on nodes
(`replay`) and apply each inner primitive's own rules; the derivative is again one region op.
"""
from __future__ import annotations

import os
import threading
import weakref
from typing import NamedTuple

import numpy as np

from .. import _dtypes as dt
from .. import _graph
from .._context import trace as _trace
from .._graph import Aval, ConcretizationError, Equation, Node, bind, unnamed
from ..lowering.stablehlo import emit_equations
from . import ad, lax
from .autodiff import custom_call
from .batching import moved, size_of
from .core import REGISTRY, Primitive
from . import padding as pd

_CONSTANT = REGISTRY["constant"]
_I64 = Aval((), dt.int64)
_PRED = Aval((), dt.bool)


# ----------------------------------------------------------------------------- sub-programs

class SubProgram:
    """A traced function: equations (prim, params, input slots, aval) over `in_avals`
    (slots 0..n-1; equation i writes slot n + i) and the slots it returns."""

    __slots__ = ("in_avals", "eqns", "outputs", "out_avals", "origins", "_key", "_hash",
                 "_runs")

    def __init__(self, in_avals, eqns, outputs, origins):
        self.in_avals = tuple(in_avals)
        self.eqns = tuple(eqns)
        self.outputs = tuple(outputs)
        n = len(self.in_avals)
        self.out_avals = tuple(self.in_avals[s] if s < n else self.eqns[s - n].aval
                               for s in self.outputs)
        # {equation index: recorded node} of custom-rule calls (checkpoint, custom_vjp):
        # their rules find the call's arguments by the node recorded first
        self.origins = origins
        rename = _graph.RENAME
        self._key = (tuple(unnamed(a) for a in self.in_avals),
                     tuple((p, () if p is rename else tuple(params.items()), slots, unnamed(a))
                           for p, params, slots, a in self.eqns),
                     self.outputs)
        self._hash = hash(self._key)
        self._runs = None

    def runs(self) -> dict:
        """{equation index: the indices of its run} for region equations: consecutive
        equations of one region op (same primitive, parameters but `output`, and operands)
        are the nodes of its results (one `results` call), read together by the rules."""
        if self._runs is None:
            runs, last, current = {}, None, None
            for i, (prim, params, slots, _) in enumerate(self.eqns):
                key = (prim, tuple(_without_output(params).items()), slots) \
                    if type(prim) is Region else None
                if key is None or key != last:
                    current = []
                if key is not None:
                    current.append(i)
                    runs[i] = current
                last = key
            self._runs = runs
        return self._runs

    def __eq__(self, other):
        return isinstance(other, SubProgram) and self._key == other._key

    def __hash__(self):
        return self._hash

    def __repr__(self):
        return f"<sub-program: {len(self.in_avals)} inputs, {len(self.eqns)} equations, " \
               f"{len(self.outputs)} outputs>"


# Replayed custom-rule calls -> the call recorded first (see SubProgram.origins)
_ORIGIN = weakref.WeakKeyDictionary()


class Traced(NamedTuple):
    inputs: list     # the placeholders the function ran on
    outputs: list    # the nodes it returned
    nodes: list      # the operations it recorded, in order
    captured: list   # values from outside the function that it read
    constants: list = []   # integer scalars it read, written into it as constants


def _foldable(node) -> bool:
    """An integer scalar with a value that a traced function reads: an index written as a
    Python int (`y[1]` is a dynamic slice at a 0-d input) or a bound. It becomes a constant
    of the sub-program, not an operand, so XLA sees static slices, which it fuses: an RK4
    step of `y[0]`/`y[1]` runs ~10x faster in its forward pass, and its gradient ~1.5x.
    (Under jit a Python int is part of the signature anyway; floats stay operands.)"""
    return node.prim is None and node.aval.shape == () and isinstance(node.value, np.ndarray) \
        and node.aval.dtype.kind in dt.INTEGER_KINDS


def trace(fn, in_avals, device, what) -> Traced:
    """Run `fn(*placeholders) -> list of nodes` on placeholder nodes (no values: nothing is
    computed while tracing) and collect what it recorded."""
    start = _graph._numbering()
    placeholders = [Node(None, (), None, a, device) for a in in_avals]
    _trace.jit_depth += 1
    try:
        outputs = list(fn(*placeholders))
    except ConcretizationError as e:
        raise ConcretizationError(
            f"{_user_line(e.__traceback__)}{what} is traced without values, so a Python "
            "`if`/`while` on an array, bool(), int() or float() inside it has no value to "
            "read; choose with tlaloc.cond or xp.where, or carry the value through the loop"
        ) from None
    finally:
        _trace.jit_depth -= 1
    known = set(placeholders)
    nodes, captured, constants, seen = [], [], [], set()
    stack = list(reversed(outputs))
    while stack:
        n = stack.pop()
        if n in seen or n in known:
            continue
        seen.add(n)
        if n.prim is None or n.value is not None or n.number < start:
            (constants if _foldable(n) else captured).append(n)
        else:
            nodes.append(n)
            stack.extend(reversed(n.inputs))
    nodes.sort(key=lambda n: n.number)
    return Traced(placeholders, outputs, nodes, captured, constants)


def _user_line(tb) -> str:
    """'file:line: `code`: ' of the innermost frame of `tb` outside tlaloc (the user's
    line that needed a value), or ''."""
    import traceback   # only when an error is reported
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    found = ""
    for frame in traceback.extract_tb(tb):
        if not os.path.abspath(frame.filename).startswith(package):
            found = f"{frame.filename}:{frame.lineno}: `{(frame.line or '').strip()}`: "
    return found


def union(captured_lists) -> list:
    """The captured values of several traces, each once, in order of first appearance."""
    return list(dict.fromkeys(n for c in captured_lists for n in c))


def build(traced: Traced, captured) -> SubProgram:
    """`traced` as a SubProgram over its placeholders then `captured` (a superset of what it
    captured: branches and loop parts share one operand list)."""
    slot = {}
    for n in list(traced.inputs) + list(captured):
        slot.setdefault(n, len(slot))
    n_in = len(slot)
    eqns, origins = [], {}
    for n in traced.constants:
        eqns.append(Equation(_CONSTANT, {"shape": (), "dtype": n.aval.dtype,
                                         "value": n.value.item()}, (), n.aval))
        slot[n] = n_in + len(eqns) - 1
    for n in traced.nodes:
        eqns.append(Equation(n.prim, n.params, tuple(slot[i] for i in n.inputs), n.aval))
        if n.prim is custom_call:
            origins[len(eqns) - 1] = _ORIGIN.get(n, n)
        slot[n] = n_in + len(eqns) - 1
    in_avals = [n.aval for n in traced.inputs] + [n.aval for n in captured]
    return SubProgram(in_avals, eqns, [slot[o] for o in traced.outputs], origins)


def programs(fns, in_avals, device, what):
    """Derived sub-programs (derivatives, restrictions) of node functions over `in_avals`:
    (SubPrograms, the values they capture: extra operands after `in_avals`)."""
    traces = [trace(f, in_avals, device, what) for f in fns]
    captured = union(t.captured for t in traces)
    return [build(t, captured) for t in traces], captured


# ----------------------------------------------------------------------------- replay

def replay(sub, inputs, device, tangents=None):
    """Record `sub`'s equations on the nodes `inputs`: the node of every slot, and with
    `tangents` (a node or None per input) the tangent of every slot (forward mode)."""
    env = list(inputs)
    tan = None if tangents is None else list(tangents)
    runs = sub.runs()
    region_tangents = {}   # first equation of a region op's run -> {output: tangent}
    for i, (prim, params, slots, _) in enumerate(sub.eqns):
        args = tuple(env[s] for s in slots)
        node = bind(prim, args, params, device)
        origin = sub.origins.get(i)
        if origin is not None:
            _ORIGIN[node] = origin
        env.append(node)
        if tan is None:
            continue
        ts = tuple(tan[s] for s in slots)
        t = None
        if any(x is not None for x in ts):
            run_ = runs.get(i)
            if run_ is not None:
                found = region_tangents.get(run_[0])
                if found is None:
                    wanted = [sub.eqns[j].params["output"] for j in run_]
                    found = region_tangents[run_[0]] = prim.jvp_all(
                        ts, *args, out=node, wanted=wanted, **_without_output(params))
                t = found.get(params["output"])
            else:
                if prim.jvp is None:
                    raise NotImplementedError(f"no forward-mode rule for primitive '{prim.name}'")
                t = prim.jvp(ts, *args, out=origin or node, **params)
        tan.append(t)
    return env, tan


def backward(sub, env, out_cts) -> list:
    """Cotangents of `sub`'s inputs (node or None each) given cotangents of its outputs,
    walking the replayed nodes `env` back with each primitive's vjp rule (a region op's
    rule once, with the cotangents of all its results)."""
    n_in = len(sub.in_avals)
    runs = sub.runs()
    cts = {}
    for s, c in zip(sub.outputs, out_cts):
        if c is not None:
            cts[s] = ad.add_any(cts.get(s), c)
    for i in range(len(sub.eqns) - 1, -1, -1):
        prim, params, slots, _ = sub.eqns[i]
        run_ = runs.get(i)
        if run_ is not None:
            if i != run_[-1]:
                continue      # read with the run's last equation, whose turn came first
            got = {sub.eqns[j].params["output"]: cts.pop(n_in + j) for j in run_
                   if n_in + j in cts}
            if not got:
                continue
            in_cts = prim.vjp_all(got, *[env[s] for s in slots], out=env[n_in + i],
                                  **_without_output(params))
        else:
            c = cts.pop(n_in + i, None)
            if c is None:
                continue
            if prim.vjp is None:
                raise NotImplementedError(f"no reverse-mode rule for primitive '{prim.name}'")
            node = env[n_in + i]
            in_cts = prim.vjp(c, *[env[s] for s in slots], out=sub.origins.get(i) or node,
                              **params)
        for s, ci in zip(slots, in_cts):
            if ci is not None and ad.differentiable(env[s]):
                if ci.aval.shape != env[s].aval.shape:   # a 0-d operand of an elementwise op
                    ci = ad.sum_axes(ci, range(len(ci.aval.shape)))
                cts[s] = ad.add_any(cts.get(s), ci)
    return [cts.get(s) for s in range(n_in)]


def _may_carry_derivative(node) -> bool:
    """Whether a cotangent for `node` (an operand of a region op) can matter: it has a
    differentiable dtype and is no leaf holding a value (a Python scalar's is no variable;
    a placeholder, whose value is unknown while a body is traced, may stand for one)."""
    return ad.differentiable(node) and not (node.prim is None and node.value is not None)


def _zeros_if_none(x, like):
    return ad.zeros(like) if x is None else x


def _differentiable(a: Aval) -> bool:
    return a.dtype.kind in dt.FLOATING_KINDS


# ----------------------------------------------------------------------------- running

def run(sub, arrays) -> list:
    """`sub` on NumPy arrays (the interpreter; called inside its error/flush settings)."""
    env = list(arrays)
    shared = {}
    for prim, params, slots, want in sub.eqns:
        if type(prim) is Region:
            out = shared_value(shared, prim, params, slots, [env[s] for s in slots])
        else:
            out = prim.impl(*[env[s] for s in slots], **params)
        if type(out) is not np.ndarray or out.dtype != want.dtype.numpy:
            out = np.asarray(out, dtype=want.dtype.numpy)
        env.append(out)
    return [env[s] for s in sub.outputs]


def _without_output(params) -> dict:
    return {k: v for k, v in params.items() if k != "output"}


def shared_value(shared, prim, params, slots, arrays):
    """Result `params["output"]` of a region op, computed once per program for all the
    nodes that read one of its results (`shared`: the program's dict of results)."""
    rest = _without_output(params)
    key = (prim, tuple(rest.items()), tuple(slots))
    results = shared.get(key)
    if results is None:
        results = shared[key] = prim.run_all(*arrays, **rest)
    return results[params["output"]]


# ----------------------------------------------------------------------------- region primitives

class Region(Primitive):
    """A primitive with several results (one node per result, parameter `output`) and
    sub-programs. Its rules take all results at once:
      * `emit_all(ctx, *operands, **params) -> [SSA names]` writes the op once;
      * `run_all(*arrays, **params) -> [arrays]` runs it once;
      * `jvp_all(tangents, *operands, out, wanted, **params) -> {output: tangent}` for the
        results `wanted`, as one derived op;
      * `vjp_all(cts, *operands, out, **params) -> cotangent per operand` from `cts`
        ({output: cotangent}), as one derived op;
      * `batch_all(dims, *operands, **params) -> {output: (node, mapped axis)}` (vmap).
    (`out` is one of the result nodes.) The per-node `jvp`/`vjp` are these for one result;
    the autodiff engine and `backward` call the `_all` rules once per op. Other rules
    (`batch`, `source`) are passed on to `Primitive`."""

    __slots__ = ("run_all", "jvp_all", "vjp_all")

    def __init__(self, name, *, infer, emit_all, run_all, jvp_all=None, vjp_all=None,
                 batch_all=None, **rules):
        def emit(ctx, *operands, output, **params):
            key = (name, tuple(params.items()), operands)
            return ctx.once(key, lambda: emit_all(ctx, *operands, **params))[output]

        def impl(*arrays, output, **params):
            return run_all(*arrays, **params)[output]

        def jvp(tangents, *operands, out, output, **params):
            return jvp_all(tangents, *operands, out=out, wanted=[output], **params).get(output)

        def vjp(ct, *operands, out, output, **params):
            return vjp_all({output: ct}, *operands, out=out, **params)

        if batch_all is not None:
            rules["batch"] = _batched_once(name, batch_all)
        super().__init__(name, infer=infer, emit=emit, impl=impl,
                         jvp=None if jvp_all is None else jvp,
                         vjp=None if vjp_all is None else vjp,
                         names=lambda out, *avals, **params: out.names, **rules)
        self.run_all = run_all
        self.jvp_all = jvp_all
        self.vjp_all = vjp_all


class _LastBatched(threading.local):
    op = None      # (name, params, operands, dims, results) of the op batched last


_last_batched = _LastBatched()


def _batched_once(name, batch_all):
    """A region op's batching rule from `batch_all`: vmap rewrites the nodes of the op's
    results one after the other, on the same batched operands; the op is batched once."""
    def batch(dims, *operands, output, **params):
        last = _last_batched.op
        if last is None or last[0] != name or last[3] != dims or last[1] != params or \
                len(last[2]) != len(operands) or any(a is not b for a, b in zip(last[2], operands)):
            last = _last_batched.op = (name, params, operands, dims,
                                       batch_all(dims, *operands, **params))
        return last[4][output]
    return batch


# node -> weakrefs to the result nodes one `results` call made (the autodiff engine reads
# them together: group_of)
_GROUPS = weakref.WeakKeyDictionary()


def results(prim, inputs, params, indices, device=None) -> list:
    """Nodes for results `indices` of the region op `prim` on `inputs`."""
    nodes = [bind(prim, tuple(inputs), dict(params, output=k), device) for k in indices]
    if len(nodes) > 1:
        group = tuple(weakref.ref(n) for n in nodes)
        for n in nodes:
            _GROUPS[n] = group
    return nodes


def group_of(node):
    """The result nodes recorded with `node` (weakrefs), or None for a lone result."""
    return _GROUPS.get(node)


# ----------------------------------------------------------------------------- batching
#
# A sub-program on a batch: each equation recorded again by its primitive's batching rule
# (`replay_batched`). Operands and results of the derived region ops have their mapped axis
# first (0) or none; a loop's carry is mapped when its initial value or the body maps it.

def replay_batched(sub, inputs, dims, device):
    """(output nodes, their mapped axes) of `sub` on `inputs` mapped along `dims`."""
    env, env_dims = list(inputs), list(dims)
    for prim, params, slots, _ in sub.eqns:
        args = tuple(env[s] for s in slots)
        ds = tuple(env_dims[s] for s in slots)
        if all(d is None for d in ds):
            node, d = bind(prim, args, params, device), None
        elif prim is custom_call:
            raise NotImplementedError("vmap: a custom derivative rule (custom_vjp, custom_jvp, "
                                      "checkpoint) inside a control-flow body is not batched")
        elif prim.batch is None:
            raise NotImplementedError(f"vmap: primitive '{prim.name}' has no batching rule")
        else:
            node, d = prim.batch(ds, *args, **params)
        env.append(node)
        env_dims.append(d)
    return [env[s] for s in sub.outputs], [env_dims[s] for s in sub.outputs]


def _batched_aval(a, d, size):
    if d is None:
        return a
    return Aval((size,) + a.shape, a.dtype, None if a.names is None else (None,) + a.names)


def _front(nodes, dims, size):
    """Operands with their mapped axis first (unmapped ones unchanged); their dims."""
    return ([x if d is None else moved(x, d, 0, size) for x, d in zip(nodes, dims)],
            [None if d is None else 0 for d in dims])


def _out_dims(sub, dims, size, device):
    """The mapped axes of `sub`'s outputs on inputs mapped along `dims` (a trial trace)."""
    avals = [_batched_aval(a, d, size) for a, d in zip(sub.in_avals, dims)]
    found = []
    trace(lambda *nodes: found.extend(replay_batched(sub, nodes, dims, device)[1]) or [],
          avals, device, "a batched control-flow body")
    return found


def _carry_dims(subs, dims, n_carry, size, device):
    """The carries' mapped axes: mapped where the initial value is, or where a body (each
    of `subs` returns the carry first) maps it from mapped values: a fixed point."""
    dims = list(dims)
    while True:
        changed = False
        for sub in subs:
            for i, d in enumerate(_out_dims(sub, dims, size, device)[:n_carry]):
                if d is not None and dims[i] is None:
                    dims[i], changed = 0, True
        if not changed:
            return dims


def _batched_programs(subs, dims, size, device, forces, what):
    """`subs` (one operand list) on the batch, output k of sub j moved to axis 0 where
    `forces[j][k]` is 0 (None: left as replayed, unmapped), with the values they capture."""
    avals = [_batched_aval(a, d, size) for a, d in zip(subs[0].in_avals, dims)]

    def fn(sub, force):
        def f(*nodes):
            outs, ods = replay_batched(sub, nodes, dims, device)
            return [o if want is None else moved(o, d, 0, size)
                    for o, d, want in zip(outs, ods, force)]
        return f
    return programs([fn(sub, force) for sub, force in zip(subs, forces)], avals, device, what)


def _broadcast_pred(pred, like):
    """A (size,) predicate broadcast along `like`'s axes (its mapped axis first)."""
    return lax.broadcast_in_dim(pred, shape=like.aval.shape, dims=(0,))



def _cond_infer(index, *operands, branches, output):
    if index.shape != () or (index.dtype is not dt.bool and index.dtype is not dt.int32):
        raise TypeError(f"internal: cond index must be a 0-d bool or int32, got {index}")
    for b in branches:
        if len(b.in_avals) != len(operands):
            raise TypeError("internal: cond branch takes other operands")
    return branches[0].out_avals[output]


def _cond_emit_all(ctx, index, *operands, branches):
    in_avals = ctx.in_avals[1:]
    out_avals = branches[0].out_avals
    if ctx.in_avals[0].dtype is dt.bool:    # stablehlo.if: the true branch first
        name, ordered = "stablehlo.if", (branches[1], branches[0])
    else:                                   # stablehlo.case: an index past the end runs the last
        name, ordered = "stablehlo.case", branches
    regions = []
    for b in ordered:
        c = ctx.child()    # branches read the operands from the enclosing scope
        names = emit_equations(c, b.eqns, operands, in_avals)
        regions.append(c.region((), [names[s] for s in b.outputs], out_avals))
    return ctx.op_results(name, [index], [ctx.in_avals[0]], out_avals, regions=regions)


def _cond_run_all(index, *operands, branches):
    k = int(index)
    return run(branches[min(max(k, 0), len(branches) - 1)], operands)


def _mapped(node_of, keys):
    """{key: node} from derived results, in the order of `keys`."""
    return dict(zip(keys, node_of))


def _cond_jvp_all(tangents, index, *operands, out, wanted, branches):
    keys = [k for k in wanted if _differentiable(branches[0].out_avals[k])]
    if not keys:
        return {}
    ts = tangents[1:]
    live = [i for i, t in enumerate(ts) if t is not None]
    n = len(operands)

    def branch_jvp(b):
        def f(*nodes):
            tan = [None] * n
            for j, i in enumerate(live):
                tan[i] = nodes[n + j]
            env, tenv = replay(b, nodes[:n], out.device, tan)
            return [_zeros_if_none(tenv[b.outputs[k]], env[b.outputs[k]]) for k in keys]
        return f

    avals = [o.aval for o in operands] + [ts[i].aval for i in live]
    subs, captured = programs([branch_jvp(b) for b in branches], avals, out.device,
                              "the derivative of a cond branch")
    inputs = (index, *operands, *[ts[i] for i in live], *captured)
    return _mapped(results(cond, inputs, {"branches": tuple(subs)}, range(len(keys))), keys)


def _cond_vjp_all(cts, index, *operands, out, branches):
    n = len(operands)
    keys = [k for k in sorted(cts) if _differentiable(branches[0].out_avals[k])]
    wanted = [i for i, o in enumerate(operands) if _may_carry_derivative(o)]
    if not wanted or not keys:
        return (None,) * (n + 1)

    def branch_vjp(b):
        def f(*nodes):
            env, _ = replay(b, nodes[:n], out.device)
            out_cts = [None] * len(b.outputs)
            for j, k in enumerate(keys):
                out_cts[k] = nodes[n + j]
            in_cts = backward(b, env, out_cts)
            return [_zeros_if_none(in_cts[i], nodes[i]) for i in wanted]
        return f

    avals = [o.aval for o in operands] + [cts[k].aval for k in keys]
    subs, captured = programs([branch_vjp(b) for b in branches], avals, out.device,
                              "the derivative of a cond branch")
    inputs = (index, *operands, *[cts[k] for k in keys], *captured)
    nodes = results(cond, inputs, {"branches": tuple(subs)}, range(len(wanted)))
    in_cts = [None] * n
    for i, node in zip(wanted, nodes):
        in_cts[i] = node
    return (None, *in_cts)


def _cond_batch_all(dims, index, *operands, branches):
    size = size_of(dims, (index,) + operands)
    device = index.device
    ops, op_dims = _front(operands, dims[1:], size)
    n_out = len(branches[0].outputs)
    mapped = [any(d is not None for d in ds) for ds in zip(*[
        _out_dims(b, op_dims, size, device) for b in branches])] if n_out else []
    if dims[0] is None:      # one branch runs for the whole batch
        force = [0 if m else None for m in mapped]
        subs, captured = _batched_programs(branches, op_dims, size, device,
                                           [force] * len(branches), "a batched cond branch")
        nodes = results(cond, (index, *ops, *captured), {"branches": tuple(subs)},
                        range(n_out), device)
        return {k: (n, 0 if m else None) for k, (n, m) in enumerate(zip(nodes, mapped))}
    # a predicate per example: every branch runs, and each example takes its branch's values
    idx = moved(index, dims[0], 0, size)
    outs = []
    for b in branches:
        nodes, ods = replay_batched(b, ops, op_dims, device)
        outs.append([moved(n, d, 0, size) for n, d in zip(nodes, ods)])
    chosen = outs[-1]
    for k in range(len(branches) - 2, -1, -1):
        if idx.aval.dtype is dt.bool:
            pick = lax.bitwise_not(idx) if k == 0 else idx
        else:
            pick = lax.compare(idx, ad.const(idx, k), direction="EQ")
        chosen = [lax.select(_broadcast_pred(pick, c), o, c) for o, c in zip(outs[k], chosen)]
    return {k: (n, 0) for k, n in enumerate(chosen)}


def _rewritten(sub, nodes, lengths, device):
    """`sub` recorded on `nodes` (padded as `lengths` say) and rewritten by the padding rules:
    its outputs and their padded axes."""
    env, _ = replay(sub, nodes, device)
    outs = [env[s] for s in sub.outputs]
    new, layout = pd.rewrite(outs, known=dict(zip(nodes, lengths)))
    outs = [new.get(o, o) for o in outs]
    return outs, [layout(o) for o in outs]


def _union(a, b):
    """Padded axes of a value that may be either of two (None: not padded)."""
    if a is None or b is None:
        return a if b is None else b
    return tuple(x if x is not None else y for x, y in zip(a, b))


def _cond_padding(lengths, index, *operands, branches, output):
    # every branch rewritten by the padding rules on operands padded as these are (their
    # true lengths enter the branches as captured values); the other results of the same
    # cond are found again, not rewritten again
    key = ("cond", branches, index, operands)
    found = pd.current.regions.get(key)
    if found is None:
        found = pd.current.regions[key] = _padded_cond(lengths[1:], index, operands, branches)
    nodes, layouts = found
    return nodes[output], layouts[output]


def _padded_cond(lengths, index, operands, branches):
    device = index.device
    layouts = []

    def padded_branch(b):
        def f(*nodes):
            outs, layout = _rewritten(b, nodes, lengths, device)
            layouts.append(layout)
            return outs
        return f

    subs, captured = programs([padded_branch(b) for b in branches], [o.aval for o in operands],
                              device, "a cond branch on padded operands")
    merged = []          # a result is padded where any branch's is (the others' data agree)
    for k, per_branch in enumerate(zip(*layouts)):
        axes = None
        for ls in per_branch:
            if ls is None:
                continue
            if axes is not None and any(a is not None and b is not None and a is not b
                                        for a, b in zip(axes, ls)):
                raise pd.PaddingError(f"cond: result {k} is padded along different dynamic axes "
                                      "in different branches")
            axes = ls if axes is None else tuple(a if a is not None else b for a, b in zip(axes, ls))
        merged.append(axes)
    nodes = results(cond, (index, *operands, *captured), {"branches": tuple(subs)},
                    range(len(merged)), device)
    return nodes, merged


cond = Region("cond", infer=_cond_infer, emit_all=_cond_emit_all, run_all=_cond_run_all,
              jvp_all=_cond_jvp_all, vjp_all=_cond_vjp_all, batch_all=_cond_batch_all,
              padding=_cond_padding)


# ----------------------------------------------------------------------------- while

def _while_infer(*operands, cond, body, n_carry, output):
    if len(cond.out_avals) != 1 or unnamed(cond.out_avals[0]) != _PRED:
        raise TypeError(f"internal: while condition gives {cond.out_avals}")
    return body.out_avals[output]


def _loop_region(ctx, sub, avals):
    """(child context, block arguments, names of every slot of `sub` on them): the start of a
    loop region whose block arguments are the loop's operands."""
    c = ctx.child()
    args = [(c.fresh(), a) for a in avals]
    names = emit_equations(c, sub.eqns, [n for n, _ in args], avals)
    return c, args, names


def _while_emit_all(ctx, *operands, cond, body, n_carry):
    avals = list(ctx.in_avals)
    c, args, names = _loop_region(ctx, cond, avals)
    cond_region = c.region(args, [names[cond.outputs[0]]], [_PRED])
    b, args, names = _loop_region(ctx, body, avals)
    new = [names[s] for s in body.outputs] + [n for n, _ in args[n_carry:]]
    body_region = b.region(args, new, avals)
    return ctx.op_results("stablehlo.while", operands, avals, avals,
                          regions=[cond_region, body_region])[:n_carry]


def _while_run_all(*arrays, cond, body, n_carry):
    carry, consts = list(arrays[:n_carry]), list(arrays[n_carry:])
    while bool(run(cond, carry + consts)[0]):
        carry = run(body, carry + consts)
    return carry


def _while_jvp_all(tangents, *operands, out, wanted, cond, body, n_carry):
    carry, consts = operands[:n_carry], operands[n_carry:]
    diff = [i for i in range(n_carry) if _differentiable(carry[i].aval)]
    keys = [k for k in wanted if k in diff]
    if not keys:
        return {}
    live = [i for i, t in enumerate(tangents[n_carry:]) if t is not None]
    nd, nc = len(diff), len(consts)

    def unpack(nodes):
        """(carry, carry tangents, consts, const tangents) of the derived loop's operands."""
        c, tc = nodes[:n_carry], nodes[n_carry:n_carry + nd]
        k = n_carry + nd
        tan = [None] * (n_carry + nc)
        for j, i in enumerate(diff):
            tan[i] = tc[j]
        for j, i in enumerate(live):
            tan[n_carry + i] = nodes[k + nc + j]
        return list(c) + list(nodes[k:k + nc]), tan

    def cond_of(*nodes):
        primals, _ = unpack(nodes)
        env, _ = replay(cond, primals, out.device)
        return [env[cond.outputs[0]]]

    def body_jvp(*nodes):
        primals, tan = unpack(nodes)
        env, tenv = replay(body, primals, out.device, tan)
        new = [env[s] for s in body.outputs]
        return new + [_zeros_if_none(tenv[body.outputs[i]], new[i]) for i in diff]

    t_carry = [_zeros_if_none(tangents[i], carry[i]) for i in diff]
    t_consts = [tangents[n_carry + i] for i in live]
    avals = [x.aval for x in (*carry, *t_carry, *consts, *t_consts)]
    (c_sub, b_sub), captured = programs([cond_of, body_jvp], avals, out.device,
                                        "the derivative of a while_loop body")
    inputs = (*carry, *t_carry, *consts, *t_consts, *captured)
    params = {"cond": c_sub, "body": b_sub, "n_carry": n_carry + nd}
    return _mapped(results(while_, inputs, params, [n_carry + diff.index(k) for k in keys]),
                   keys)


def _while_vjp_all(cts, *operands, out, **params):
    raise ValueError(
        "reverse-mode differentiation (grad, vjp) does not go through tlaloc.while_loop, whose "
        "trip count is known only when it runs; use tlaloc.scan, or tlaloc.fori_loop with "
        "Python int bounds (a scan), or forward mode (tlaloc.jvp, jacfwd)")


def _while_batch_all(dims, *operands, cond, body, n_carry):
    size = size_of(dims, operands)
    device = operands[0].device
    ops, op_dims = _front(operands, dims, size)
    op_dims = _carry_dims([body], op_dims, n_carry, size, device)
    if _out_dims(cond, op_dims, size, device)[0] is not None:
        # a predicate per example: the loop runs until every example's is false, and the
        # examples that finished keep their carry
        op_dims[:n_carry] = [0] * n_carry
        avals = [_batched_aval(a, d, size) for a, d in zip(body.in_avals, op_dims)]

        def pred_of(nodes):
            (p,), (d,) = replay_batched(cond, nodes, op_dims, device)
            return moved(p, d, 0, size)

        def any_lane(*nodes):
            return [lax.reduce_max(pred_of(nodes), axes=(0,))]

        def masked_body(*nodes):
            p = pred_of(nodes)
            new, ds = replay_batched(body, nodes, op_dims, device)
            return [lax.select(_broadcast_pred(p, old), moved(n, d, 0, size), old)
                    for n, d, old in zip(new, ds, nodes[:n_carry])]

        (c_sub, b_sub), captured = programs([any_lane, masked_body], avals, device,
                                            "a batched while_loop")
    else:
        carry_force = [None if d is None else 0 for d in op_dims[:n_carry]]
        (c_sub, b_sub), captured = _batched_programs(
            [cond, body], op_dims, size, device, [[None], carry_force], "a batched while_loop")
    for i in range(n_carry):
        ops[i] = moved(operands[i], dims[i], 0, size) if op_dims[i] == 0 else operands[i]
    params = {"cond": c_sub, "body": b_sub, "n_carry": n_carry}
    nodes = results(while_, (*ops, *captured), params, range(n_carry), device)
    return {k: (n, op_dims[k]) for k, n in enumerate(nodes)}


def _while_padding(lengths, *operands, cond, body, n_carry, output):
    # the condition and the body rewritten by the padding rules (the condition's reductions
    # see only the data, so the loop runs the unpadded loop's steps); the carries' padded
    # axes to a fixed point
    key = ("while", operands, cond, body, n_carry)
    found = pd.current.regions.get(key)
    if found is None:
        found = pd.current.regions[key] = _padded_while(list(lengths), operands, cond, body,
                                                        n_carry)
    nodes, layouts = found
    return nodes[output], layouts[output]


def _padded_while(lengths, operands, cond, body, n_carry):
    device = operands[0].device
    carry_in, consts = lengths[:n_carry], lengths[n_carry:]
    for _ in range(n_carry + 1):
        found = {}

        def test(*nodes):
            return _rewritten(cond, nodes, carry_in + consts, device)[0]

        def step(*nodes):
            outs, found["carry"] = _rewritten(body, nodes, carry_in + consts, device)
            return outs

        (c_sub, b_sub), captured = programs([test, step], [o.aval for o in operands], device,
                                            "a while_loop on padded operands")
        merged = [_union(a, b) for a, b in zip(carry_in, found["carry"])]
        if merged == carry_in:
            break
        carry_in = merged
    else:
        raise pd.PaddingError("while: the carry's padded axes do not settle")
    params = {"cond": c_sub, "body": b_sub, "n_carry": n_carry}
    return results(while_, (*operands, *captured), params, range(n_carry), device), carry_in


while_ = Region("while", infer=_while_infer, emit_all=_while_emit_all, run_all=_while_run_all,
                jvp_all=_while_jvp_all, vjp_all=_while_vjp_all, batch_all=_while_batch_all,
                padding=_while_padding)


# ----------------------------------------------------------------------------- scan
#
# scan(*init, *xs, *consts; body, n_carry, n_xs, length, reverse, unroll, save_carries):
# `body(*carry, *x slices, *consts) -> (*carry, *y)`. Results: the final carry, each y
# stacked along a new leading axis of `length`, and with `save_carries` the carry that
# entered each step, stacked (what the reverse-mode rule reads; under grad the forward scan
# saves them, so the backward pass reads the same op's results instead of running it again).

def _scan_layout(body, n_carry, n_xs, save_carries, length):
    """The avals of a scan's results."""
    outs = body.out_avals
    carry, ys = outs[:n_carry], outs[n_carry:]
    stacked = [Aval((length,) + a.shape, a.dtype,
                    None if a.names is None else (None,) + a.names) for a in ys]
    saved = [Aval((length,) + a.shape, a.dtype,
                  None if a.names is None else (None,) + a.names)
             for a in body.in_avals[:n_carry]] if save_carries else []
    return list(carry) + stacked + saved


def _scan_infer(*operands, body, n_carry, n_xs, length, reverse, unroll, save_carries, output):
    if len(body.in_avals) != len(operands):
        raise TypeError("internal: scan body takes other operands")
    return _scan_layout(body, n_carry, n_xs, save_carries, length)[output]


def _slice_at(c, x, xa, t):
    """Row `t` (an i64 SSA name) of `x` (aval `xa`), without the leading axis."""
    zero = c.constant(0, _I64)
    row = Aval((1,) + xa.shape[1:], xa.dtype)
    sizes = ", ".join(map(str, row.shape))
    s = c.op("stablehlo.dynamic_slice", [x, t] + [zero] * (len(xa.shape) - 1),
             [xa] + [_I64] * len(xa.shape), row, attrs=f"slice_sizes = array<i64: {sizes}>")
    return c.op("stablehlo.reshape", [s], [row], Aval(xa.shape[1:], xa.dtype))


def _update_at(c, buf, ba, value, t):
    """`buf` (aval `ba`) with row `t` set to `value`."""
    zero = c.constant(0, _I64)
    va = Aval(ba.shape[1:], ba.dtype)
    row = Aval((1,) + va.shape, ba.dtype)
    r = c.op("stablehlo.reshape", [value], [va], row)
    return c.op("stablehlo.dynamic_update_slice", [buf, r, t] + [zero] * len(va.shape),
                [ba, row] + [_I64] * len(ba.shape), ba)


def _scan_step(c, body, n_carry, n_xs, state, avals, i, length, reverse):
    """One step at counter `i` (i64 SSA name): the new state (carry, xs, consts, ys, saved
    names). `avals` are the state's avals."""
    n_in = len(body.in_avals)
    t = i
    if reverse:
        last = c.constant(length - 1, _I64)
        t = c.op("stablehlo.subtract", [last, i], [_I64, _I64], _I64)
    carry, xs = state[:n_carry], state[n_carry:n_carry + n_xs]
    consts = state[n_carry + n_xs:n_in]
    bufs = state[n_in:]
    rows = [_slice_at(c, x, a, t) for x, a in zip(xs, avals[n_carry:n_carry + n_xs])]
    names = emit_equations(c, body.eqns, list(carry) + rows + list(consts), body.in_avals)
    outs = [names[s] for s in body.outputs]
    writes = outs[n_carry:] + list(carry)     # ys, then (if saved) the carry that entered
    new_bufs = [_update_at(c, b, a, v, t) for b, a, v in zip(bufs, avals[n_in:], writes)]
    return outs[:n_carry] + list(xs) + list(consts) + new_bufs


def _scan_emit_all(ctx, *operands, body, n_carry, n_xs, length, reverse, unroll, save_carries):
    n_in = len(body.in_avals)
    layout = _scan_layout(body, n_carry, n_xs, save_carries, length)
    buf_avals = layout[n_carry:]
    bufs = [ctx.constant(0, a) for a in buf_avals]
    state = list(operands) + bufs
    avals = list(ctx.in_avals) + buf_avals
    unroll = max(1, min(unroll, length)) if length else 1
    looped = length - length % unroll
    if looped:
        i_avals = [_I64] + avals
        c = ctx.child()
        args = [(c.fresh(), a) for a in i_avals]
        end = c.constant(looped, _I64)
        cond_region = c.region(args, [c.compare(args[0][0], end, _I64, "LT")], [_PRED])
        b = ctx.child()
        args = [(b.fresh(), a) for a in i_avals]
        i, inner = args[0][0], [n for n, _ in args[1:]]
        one = b.constant(1, _I64)
        for _ in range(unroll):
            inner = _scan_step(b, body, n_carry, n_xs, inner, avals, i, length, reverse)
            i = b.op("stablehlo.add", [i, one], [_I64, _I64], _I64)
        body_region = b.region(args, [i] + inner, i_avals)
        start = ctx.constant(0, _I64)
        state = ctx.op_results("stablehlo.while", [start] + state, i_avals, i_avals,
                               regions=[cond_region, body_region])[1:]
    for k in range(looped, length):    # the steps past the last whole unrolled group
        state = _scan_step(ctx, body, n_carry, n_xs, state, avals, ctx.constant(k, _I64),
                           length, reverse)
    return state[:n_carry] + state[n_in:]


def _scan_run_all(*arrays, body, n_carry, n_xs, length, reverse, unroll, save_carries):
    n_in = len(body.in_avals)
    carry = list(arrays[:n_carry])
    xs, consts = arrays[n_carry:n_carry + n_xs], list(arrays[n_carry + n_xs:n_in])
    layout = _scan_layout(body, n_carry, n_xs, save_carries, length)
    ys = [np.empty(a.shape, a.dtype.numpy) for a in layout[n_carry:]]
    n_y = len(body.outputs) - n_carry
    for t in (range(length - 1, -1, -1) if reverse else range(length)):
        for buf, c in zip(ys[n_y:], carry):
            buf[t] = c
        outs = run(body, carry + [x[t] for x in xs] + consts)
        carry = outs[:n_carry]
        for buf, y in zip(ys, outs[n_carry:]):
            buf[t] = y
    return carry + ys


def _scan_parts(operands, n_carry, n_xs):
    return (list(operands[:n_carry]), list(operands[n_carry:n_carry + n_xs]),
            list(operands[n_carry + n_xs:]))


def _scan_jvp_all(tangents, *operands, out, wanted, body, n_carry, n_xs, length, reverse,
                  unroll, save_carries):
    layout = _scan_layout(body, n_carry, n_xs, save_carries, length)
    keys = [k for k in wanted if _differentiable(layout[k])]
    if not keys:
        return {}
    carry, xs, consts = _scan_parts(operands, n_carry, n_xs)
    t_carry_in, t_xs_in, t_consts_in = _scan_parts(tangents, n_carry, n_xs)
    n_y = len(body.outputs) - n_carry
    dc = [i for i in range(n_carry) if _differentiable(carry[i].aval)]
    lx = [i for i, t in enumerate(t_xs_in) if t is not None]
    lk = [i for i, t in enumerate(t_consts_in) if t is not None]
    dy = [j for j in range(n_y) if _differentiable(body.out_avals[n_carry + j])]
    n_c2 = n_carry + len(dc)

    def body_jvp(*nodes):
        c, tc = nodes[:n_carry], nodes[n_carry:n_c2]
        x, tx = nodes[n_c2:n_c2 + n_xs], nodes[n_c2 + n_xs:n_c2 + n_xs + len(lx)]
        k0 = n_c2 + n_xs + len(lx)
        k, tk = nodes[k0:k0 + len(consts)], nodes[k0 + len(consts):]
        tan = [None] * len(body.in_avals)
        for j, i in enumerate(dc):
            tan[i] = tc[j]
        for j, i in enumerate(lx):
            tan[n_carry + i] = tx[j]
        for j, i in enumerate(lk):
            tan[n_carry + n_xs + i] = tk[j]
        env, tenv = replay(body, list(c) + list(x) + list(k), out.device, tan)
        outs = [env[s] for s in body.outputs]
        touts = [_zeros_if_none(tenv[body.outputs[i]], outs[i]) for i in range(len(outs))]
        return outs[:n_carry] + [touts[i] for i in dc] + outs[n_carry:] + \
            [touts[n_carry + j] for j in dy]

    t_carry = [_zeros_if_none(t_carry_in[i], carry[i]) for i in dc]
    t_xs = [t_xs_in[i] for i in lx]
    t_consts = [t_consts_in[i] for i in lk]
    body_avals = ([a for a in body.in_avals[:n_carry]] + [t.aval for t in t_carry]
                  + list(body.in_avals[n_carry:n_carry + n_xs])
                  + [Aval(t.aval.shape[1:], t.aval.dtype) for t in t_xs]
                  + [x.aval for x in consts] + [t.aval for t in t_consts])
    (sub,), captured = programs([body_jvp], body_avals, out.device,
                                "the derivative of a scan body")
    inputs = (*carry, *t_carry, *xs, *t_xs, *consts, *t_consts, *captured)
    params = {"body": sub, "n_carry": n_c2, "n_xs": n_xs + len(lx), "length": length,
              "reverse": reverse, "unroll": unroll, "save_carries": save_carries}

    def position(k):
        """Where the tangent of result `k` is among the derived scan's results."""
        if k < n_carry:
            return n_carry + dc.index(k)
        if k < n_carry + n_y:
            return n_c2 + n_y + dy.index(k - n_carry)
        return n_c2 + n_y + len(dy) + n_carry + dc.index(k - n_carry - n_y)

    return _mapped(results(scan, inputs, params, [position(k) for k in keys]), keys)


def _scan_vjp_all(cts, *operands, out, body, n_carry, n_xs, length, reverse, unroll,
                  save_carries):
    carry, xs, consts = _scan_parts(operands, n_carry, n_xs)
    n_y = len(body.outputs) - n_carry
    layout = _scan_layout(body, n_carry, n_xs, save_carries, length)
    cts = {k: c for k, c in cts.items() if _differentiable(layout[k])}
    dc = [i for i in range(n_carry) if _differentiable(carry[i].aval)]
    dx = [i for i in range(n_xs) if _may_carry_derivative(xs[i])]
    dk = [i for i in range(len(consts)) if _may_carry_derivative(consts[i])]
    if not cts or not (dc or dx or dk):
        return (None,) * len(operands)
    # the carries that entered each step: results of the forward scan saving them (the same
    # op as the forward pass's when it saved them, which the lowering then writes once)
    fwd = {"body": body, "n_carry": n_carry, "n_xs": n_xs, "length": length,
           "reverse": reverse, "unroll": unroll, "save_carries": True}
    saved = results(scan, operands, fwd, range(n_carry + n_y, 2 * n_carry + n_y))
    # cotangents of the final carries start the reverse scan; those of stacked ys and of
    # saved carries are rows it reads, one per step
    row_keys = sorted(k for k in cts if k >= n_carry)
    rows = [cts[k] for k in row_keys]

    def body_vjp(*nodes):
        ct_c = nodes[:len(dc)]
        acc = nodes[len(dc):len(dc) + len(dk)]
        k0 = len(dc) + len(dk)
        c_t, x_t = nodes[k0:k0 + n_carry], nodes[k0 + n_carry:k0 + n_carry + n_xs]
        k1 = k0 + n_carry + n_xs
        row_t = dict(zip(row_keys, nodes[k1:k1 + len(rows)]))
        k_nodes = nodes[k1 + len(rows):]
        env, _ = replay(body, list(c_t) + list(x_t) + list(k_nodes), out.device)
        out_cts = [None] * len(body.outputs)
        for j, i in enumerate(dc):
            out_cts[i] = ct_c[j]
        for k, r in row_t.items():
            if k < n_carry + n_y:
                out_cts[k] = r
        in_cts = backward(body, env, out_cts)
        new_ct = []
        for i in dc:
            c = _zeros_if_none(in_cts[i], c_t[i])
            r = row_t.get(n_carry + n_y + i)   # the saved carry's row: its step's carry
            new_ct.append(c if r is None else lax.add(c, r))
        new_acc = [ad.add_any(a, in_cts[n_carry + n_xs + i]) for a, i in zip(acc, dk)]
        ys = [_zeros_if_none(in_cts[n_carry + i], x_t[i]) for i in dx]
        return new_ct + new_acc + ys

    ct_init = [cts[i] if i in cts else ad.zeros(carry[i]) for i in dc]
    acc_init = [ad.zeros(consts[i]) for i in dk]
    body_avals = ([c.aval for c in ct_init] + [a.aval for a in acc_init]
                  + list(body.in_avals[:n_carry]) + list(body.in_avals[n_carry:n_carry + n_xs])
                  + [Aval(r.aval.shape[1:], r.aval.dtype) for r in rows]
                  + [k.aval for k in consts])
    (sub,), captured = programs([body_vjp], body_avals, out.device,
                                "the derivative of a scan body")
    inputs = (*ct_init, *acc_init, *saved, *xs, *rows, *consts, *captured)
    params = {"body": sub, "n_carry": len(dc) + len(dk), "n_xs": n_carry + n_xs + len(rows),
              "length": length, "reverse": not reverse, "unroll": unroll,
              "save_carries": False}
    nodes = results(scan, inputs, params, range(len(dc) + len(dk) + len(dx)), out.device)
    in_cts = [None] * len(operands)
    for j, i in enumerate(dc):
        in_cts[i] = nodes[j]
    for j, i in enumerate(dk):
        in_cts[n_carry + n_xs + i] = nodes[len(dc) + j]
    for j, i in enumerate(dx):
        in_cts[n_carry + i] = nodes[len(dc) + len(dk) + j]
    return tuple(in_cts)


def _scan_batch_all(dims, *operands, body, n_carry, n_xs, length, reverse, unroll,
                    save_carries):
    size = size_of(dims, operands)
    device = operands[0].device
    carry, xs, consts = _scan_parts(operands, n_carry, n_xs)
    c_dims, x_dims, k_dims = _scan_parts(dims, n_carry, n_xs)
    # the body sees rows of xs: a mapped xs has its mapped axis second (after the scanned one)
    xs = [x if d is None else moved(x, d, 1, size) for x, d in zip(xs, x_dims)]
    consts, k_dims = _front(consts, k_dims, size)
    row_dims = [None if d is None else 0 for d in x_dims]
    in_dims = [None if d is None else 0 for d in c_dims] + row_dims + k_dims
    in_dims = _carry_dims([body], in_dims, n_carry, size, device)
    c_dims = in_dims[:n_carry]
    y_dims = _out_dims(body, in_dims, size, device)[n_carry:]
    force = c_dims + [None if d is None else 0 for d in y_dims]
    (sub,), captured = _batched_programs([body], in_dims, size, device, [force],
                                         "a batched scan body")
    carry = [c if d is None and cd is None else moved(c, d, 0, size)
             for c, d, cd in zip(carry, dims[:n_carry], c_dims)]
    params = {"body": sub, "n_carry": n_carry, "n_xs": n_xs, "length": length,
              "reverse": reverse, "unroll": unroll, "save_carries": save_carries}
    layout = _scan_layout(body, n_carry, n_xs, save_carries, length)
    nodes = results(scan, (*carry, *xs, *consts, *captured), params, range(len(layout)),
                    device)
    out_dims = c_dims + [None if d is None else 1 for d in y_dims] + \
        ([None if d is None else 1 for d in c_dims] if save_carries else [])
    return {k: (n, d) for k, (n, d) in enumerate(zip(nodes, out_dims))}


def _scan_padding(lengths, *operands, body, n_carry, n_xs, length, reverse, unroll,
                  save_carries, output):
    # the body rewritten by the padding rules; along a padded scanned axis (the xs' leading
    # one) the steps past the true length leave the carry as it was, so the final carry is
    # the unpadded scan's and the stacked ys are padded along that axis
    params = dict(body=body, n_carry=n_carry, n_xs=n_xs, length=length, reverse=reverse,
                  unroll=unroll, save_carries=save_carries)
    key = ("scan", operands, tuple(params.items()))
    found = pd.current.regions.get(key)
    if found is None:
        found = pd.current.regions[key] = _padded_scan(list(lengths), operands, **params)
    nodes, layouts = found
    return nodes[output], layouts[output]


def _padded_scan(lengths, operands, *, body, n_carry, n_xs, length, reverse, unroll,
                 save_carries):
    device = operands[0].device
    steps = {ls[0] for ls in lengths[n_carry:n_carry + n_xs] if ls is not None and ls[0] is not None}
    if len(steps) > 1:
        raise pd.PaddingError("scan: the xs are padded along different dynamic axes")
    steps = steps.pop() if steps else None
    rows = [None if ls is None else (ls[1:] if any(n is not None for n in ls[1:]) else None)
            for ls in lengths[n_carry:n_carry + n_xs]]       # each step's slice of the xs
    carry_in = lengths[:n_carry]
    for _ in range(n_carry + 1):     # the carries' padded axes: to a fixed point
        sub, captured, carry_out, y_out = _padded_body(
            body, carry_in, rows, lengths[n_carry + n_xs:], n_carry, n_xs, steps, device)
        merged = [_union(a, b) for a, b in zip(carry_in, carry_out)]
        if merged == list(carry_in):
            break
        carry_in = merged
    else:
        raise pd.PaddingError("scan: the carry's padded axes do not settle")
    xs = list(operands[n_carry:n_carry + n_xs])
    if steps is not None:            # each step's number, as one more x
        xs.append(lax.iota(shape=(length,), dtype=dt.int32, dim=0, device=device))
    inputs = (*operands[:n_carry], *xs, *operands[n_carry + n_xs:], *captured)
    params = {"body": sub, "n_carry": n_carry, "n_xs": len(xs), "length": length,
              "reverse": reverse, "unroll": unroll, "save_carries": save_carries}
    n_out = len(_scan_layout(body, n_carry, n_xs, save_carries, length))
    nodes = results(scan, inputs, params, range(n_out), device)
    stacked = lambda ls, like: (None if ls is None and steps is None else  # noqa: E731
                                (steps,) + (ls or (None,) * len(like.shape)))
    layouts = (list(carry_in)
               + [stacked(ls, a) for ls, a in zip(y_out, body.out_avals[n_carry:])]
               + ([stacked(ls, a) for ls, a in zip(carry_in, body.in_avals[:n_carry])]
                  if save_carries else []))
    return nodes, layouts


def _padded_body(body, carry_in, rows, consts, n_carry, n_xs, steps, device):
    """The scan body rewritten for operands padded as given, with (when the scanned axis is
    padded) a last x, the step's number, that keeps the carry past the true length."""
    found = {}

    def f(*nodes):
        carry, x = nodes[:n_carry], nodes[n_carry:n_carry + n_xs]
        step = nodes[n_carry + n_xs] if steps is not None else None
        ks = nodes[n_carry + n_xs + (steps is not None):]
        outs, layout = _rewritten(body, list(carry) + list(x) + list(ks),
                                  list(carry_in) + rows + list(consts), device)
        found["carry"], found["ys"] = layout[:n_carry], layout[n_carry:]
        if step is not None:
            live = lax.compare(step, steps, direction="LT")
            outs[:n_carry] = [lax.select(live, o, c) for o, c in zip(outs[:n_carry], carry)]
        return outs

    avals = list(body.in_avals[:n_carry + n_xs])
    if steps is not None:
        avals.append(Aval((), dt.int32))
    avals += list(body.in_avals[n_carry + n_xs:])
    (sub,), captured = programs([f], avals, device, "a scan body on padded operands")
    return sub, captured, found["carry"], found["ys"]


scan = Region("scan", infer=_scan_infer, emit_all=_scan_emit_all, run_all=_scan_run_all,
              jvp_all=_scan_jvp_all, vjp_all=_scan_vjp_all, batch_all=_scan_batch_all,
              padding=_scan_padding)

__all__ = ["SubProgram", "Region", "cond", "while_", "scan", "trace", "build", "union",
           "programs", "replay", "backward", "run", "shared_value", "results"]
