"""Recording and evaluation.

A `Node` is one recorded value: either a leaf that holds a concrete value (a NumPy array on
the host or a runtime buffer on its device), or the result of a primitive applied to input
nodes. Recording (`bind`) infers the result's abstract value at once and computes nothing.

`evaluate` turns the pending subgraph behind some nodes into one `Program`: a canonical list
of equations whose leaves are inputs. The program's structural key (primitives, static
parameters, input avals) decides cache hits, so values never enter it. After a run the
computed nodes keep their values and drop their inputs, which frees the intermediates.
"""
from __future__ import annotations

import itertools
import operator
import threading
import weakref
from typing import NamedTuple

from ._config import config
from . import _context
from ._context import trace as _trace
from ._dtypes import DType
from . import _protocol as protocol

try:
    import cython           # compiled: a compile-time constant; installed: False
    _COMPILED = cython.compiled
except ImportError:         # Cython is only a build dependency
    _COMPILED = False


class Aval(NamedTuple):
    """Abstract value: what is known about a node before it is computed. `names` is None
    when no axis is named (the common case), else one str or None per axis. Names never
    change what is computed: programs' cache keys leave them out."""
    shape: tuple
    dtype: DType
    names: tuple = None


_tuple_new = tuple.__new__


def new_aval(shape: tuple, dtype: DType, names=None) -> Aval:
    """`Aval(shape, dtype, names)` without the class call: NamedTuple's __new__ is Python
    source (made by exec), run as a frame even where this module is compiled, and most
    recorded operations make an abstract value (~0.1 us instead of ~0.2 us)."""
    return _tuple_new(Aval, (shape, dtype, names))


def unnamed(aval: Aval) -> Aval:
    """`aval` without axis names (what a program's cache key holds)."""
    return aval if aval.names is None else Aval(aval.shape, aval.dtype)


# The primitive whose only parameter is axis names (`rename`): its equations' keys leave the
# parameter out. Set by tlaloc/_prims/shape.py, which declares it.
RENAME = None

# The primitive of values fixed by a program's structure (`constant`). A 0-d one stays an
# equation of every program that uses it, even once computed (an operation on computed
# small arrays runs at once, and so does a constant): as a program input, the lowering
# could not read it (a box write's fixed starts, which decide its form, _prims/shape.py).
# Set by tlaloc/_prims/shape.py, which declares it.
CONSTANT = None


class ConcretizationError(RuntimeError):
    """A value was needed from an array that has none (it is being traced without values)."""


class DerivativeLostError(TypeError):
    """A value that depends on an input being differentiated would leave the graph as data
    (`__array__`, `__dlpack__`, `tolist`), where it carries no derivative."""


def dependence(roots, is_source) -> dict:
    """{node: whether it depends on a node for which `is_source(node)` holds} for the nodes
    behind `roots`, walking pending inputs (a computed node, or a leaf without a source
    behind it, depends on nothing)."""
    depends = {}
    stack = list(roots)
    while stack:
        node = stack[-1]
        if node in depends:
            stack.pop()
            continue
        if is_source(node):
            depends[node] = True
            stack.pop()
            continue
        if node.value is not None or not node.inputs:
            depends[node] = False
            stack.pop()
            continue
        todo = [i for i in node.inputs if i not in depends]
        if todo:
            stack += todo
            continue
        depends[node] = any(depends[i] for i in node.inputs)
        stack.pop()
    return depends


def reaches_variable(node, through=()) -> bool:
    """Whether `node` depends on a variable of a derivative being recorded (through the
    inputs that recording keeps; stop_gradient cuts the dependence), other than through the
    nodes in `through`."""
    seen = {id(n) for n in through}
    stack = [node]
    while stack:
        n = stack.pop()
        prim = n.prim
        if prim is None or id(n) in seen:
            continue
        seen.add(id(n))
        if prim.name == "variable":
            return True
        if prim.name != "stop_gradient":
            stack.extend(n.inputs)
    return False


class DonatedArrayError(RuntimeError):
    """An array whose buffer was donated to a jitted function was used again."""


class _Donated:
    """The value of an array whose buffer was given away (see tlaloc.jit donate_argnums)."""

    def __repr__(self):
        return "<donated>"


DONATED = _Donated()


# Nodes are numbered as they are made, so a node's number is above its inputs': sorting
# pending nodes by number puts them in recording order, which is topological and the same
# for the same code (the plan's canonical order).
_numbering = itertools.count().__next__
_FIRST = operator.itemgetter(0)   # (number, node, inputs) tuples sort by number
_SECOND = operator.itemgetter(1)
_weakref = weakref.ref

# Nodes and the cycle collector. A pending graph is thousands of live nodes (a loop's
# steps before a cut), and CPython's collector walked them all at every collection of
# their generation (a stencil step recorded in ~30 us with the collector off, ~37-41 us
# with it on). A node is in a reference cycle only through its parameters: its inputs are
# older nodes, its consumers and owner weak references, its value an array or buffer, its
# abstract value and device hold no node. So a node whose parameters are atoms (a dict
# CPython does not track: ints, strings, floats, None, tuples it has untracked; or no
# parameters) is untracked, as CPython untracks a tuple of atoms; parameters it tracks (a
# rule object, a sub-program, a new tuple) keep the node tracked. Untracked, a node is
# still freed by its reference count: the collector only stops walking it. Compiled
# build only (the C API is declared in _graph.pxd).


class Node:
    __slots__ = ("prim", "inputs", "params", "aval", "device", "value", "pending", "consumers",
                 "owner", "number", "where", "__weakref__")
    # `where` (user file, line, function), set only while a profile or tlaloc.explain
    # records source lines (tlaloc/_observe.py); unset otherwise: read it with getattr.
    # `bind` and `leaf` set every other field themselves, without __init__: a new field
    # is set there too

    def __init__(self, prim, inputs, params, aval, device, value=None):
        self.number = _numbering()
        self.prim = prim          # None for a leaf
        self.inputs = inputs      # tuple of Node; a leaf without value may hold a transfer source
        self.params = params      # dict of static parameters (hashable values)
        self.aval = aval
        self.device = device
        self.value = value        # host ndarray or device buffer once computed
        self.pending = 0 if value is not None else 1  # depth of the pending graph behind it
        self.consumers = None     # weakrefs to the recorded operations that consume it
        self.owner = None         # weakref to the first Array that shows it to the user

    def __repr__(self):
        what = self.prim.name if self.prim is not None else "leaf"
        state = "computed" if self.value is not None else "pending"
        return f"<Node {what} {self.aval.shape} {self.aval.dtype} {state}>"


def leaf(value, aval: Aval, device) -> Node:
    node = Node.__new__(Node)   # (as in bind: a leaf is made for every scalar operand)
    node.number = _numbering()
    node.prim = None
    node.inputs = ()
    node.params = None
    node.aval = aval
    node.device = device
    node.value = value
    node.pending = 0 if value is not None else 1
    node.consumers = None
    node.owner = None
    if _COMPILED:
        PyObject_GC_UnTrack(node)    # no parameters: see "Nodes and the cycle collector"
    return node


def transfer(source: Node, device) -> Node:
    """A leaf on `device` whose value is `source`'s, copied when first needed."""
    return Node(None, (source,), None, source.aval, device)


def bind(prim, inputs: tuple, params: dict, device=None) -> Node:
    """Record `prim` applied to `inputs`; returns the (pending) result node. The result's
    axis names come from the primitive's names rule, called only when an input is named."""
    infer = prim.infer
    n_in = len(inputs)
    # the common arities called without argument packing (bind runs on every operation)
    if n_in == 1:
        x = inputs[0]
        a = x.aval
        aval = infer(a, **params) if params else infer(a)
        if a.names is not None:
            aval = _named(prim, aval, (a,), params)
    elif n_in == 2 and not params:
        x, y = inputs
        a, b = x.aval, y.aval
        aval = infer(a, b)
        if a.names is not None or b.names is not None:
            aval = _named(prim, aval, (a, b), params)
    else:
        avals = [n.aval for n in inputs]
        aval = infer(*avals, **params)
        for a in avals:
            if a.names is not None:
                aval = _named(prim, aval, avals, params)
                break
    # Node's fields set here, without __init__'s argument parsing (compiled, Node.__new__
    # is a direct allocation)
    node = Node.__new__(Node)
    node.number = _numbering()
    node.prim = prim
    node.inputs = inputs
    node.params = params
    node.aval = aval
    node.device = device or inputs[0].device
    node.value = None
    node.consumers = None
    node.owner = None
    if _COMPILED and (params is None or not PyObject_GC_IsTracked(params)):
        PyObject_GC_UnTrack(node)
    if _context.engaged:
        on_bind = _trace.on_bind
        if on_bind is not None:
            on_bind(node)
    depth = 0
    ref = None
    for n in inputs:
        if n.value is None:
            if n.pending > depth:
                depth = n.pending
            consumers = n.consumers
            if consumers is None:
                ref = ref or _weakref(node)
                n.consumers = [ref]
            elif consumers[-1] is not ref:     # (an operand used twice is listed once)
                k = len(consumers)
                if k >= 32 and not k & (k - 1):
                    # keep long-lived nodes' lists short: at 32, 64, 128, ... entries the
                    # dead ones are dropped when they are at least half (so a list of live
                    # consumers is scanned once per doubling: O(1) per entry appended)
                    live = [r for r in consumers if r() is not None]
                    if len(live) <= k >> 1:
                        consumers[:] = live
                ref = ref or _weakref(node)
                consumers.append(ref)
    if depth == 0 and not _context.engaged and _context.observer is None:
        # every operand is computed: a host device runs a small operation now (see
        # backends/interpreter.py, run_now), not while tracing, profiling or explaining
        value = node.device.backend.run_now(prim, params, inputs, aval)
        if value is not None:
            node.value = value
            node.pending = 0
            if not _trace.retain_graph:
                node.inputs = ()
            return node
    node.pending = depth + 1
    if depth >= config.max_pending >> 1 and (prim is _last_cut_prim or depth >= config.max_pending) \
            and not _trace.jit_depth:
        _bound_depth(node, depth)
    return node


def _named(prim, aval, avals, params) -> Aval:
    """`aval` with the names `prim`'s names rule gives (ValueError naming the primitive on
    a conflict, or on a result that would name two axes alike)."""
    try:
        names = prim.names(aval, *avals, **params)
    except ValueError as e:
        raise ValueError(f"{prim.name}: {e}") from None
    if names is not None:
        names = tuple(names)
        if len(names) != len(aval.shape):
            raise ValueError(f"internal: {prim.name}: names {names} for shape {aval.shape}")
        seen = None
        for n in names:
            if n is not None:
                if seen is None:
                    seen = set()
                elif n in seen:
                    raise ValueError(f"{prim.name}: the result would have two axes named {n!r}; "
                                     "rename one operand's axis first (tlaloc.rename)")
                seen.add(n)
        if seen is None:
            names = None
    if names is aval.names or names == aval.names:
        return aval
    return Aval(aval.shape, aval.dtype, names)


# ----------------------------------------------------------------------------- the depth bound
#
# A loop that never looks at its values would grow its pending graph (and memory) without
# limit, so pending graphs are bounded in depth (config.max_pending). Where the cut falls
# decides the programs: a cut at whatever operation reached the bound would fall at a
# different place in each round of the loop, every program would be new, and the loop would
# never reach a compiled one. So a cut computes *every* pending array the code still holds
# (all chains restart together), and once a cut has happened, the next one is made past half
# the bound at the first operation like the one that made the last cut (same primitive,
# parameters and operand avals): the same place in the loop body, so every round between
# two cuts records the same program.

class _Owners(threading.local):
    """The calling thread's Arrays that show pending values (weakrefs, pruned as they go).
    Per thread: a cut computes the arrays of the code that made it, never another thread's
    (that thread may be recording derivatives, whose nodes must keep their inputs: computed
    by a thread that is not, they lost them, and the gradient through them was lost)."""

    def __init__(self):
        self.refs = []
        self.prune_at = 1024


_owners = _Owners()
_last_cut = None         # what the operation that made the last cut looked like
_last_cut_prim = None    # its primitive (checked first, on every operation past half the bound)


def note_pending_owner(ref) -> None:
    """Register the weakref to an Array that shows a pending value (the cuts compute it)."""
    owners = _owners
    refs = owners.refs
    refs.append(ref)
    if len(refs) >= 1024 and len(refs) >= owners.prune_at:
        prune_pending_owners()


def prune_pending_owners() -> None:
    """Drop this thread's weakrefs to Arrays that are gone or computed. Done when the list
    reaches twice its last pruned length (at least 1,024): it holds up to that many dead
    references between prunes, which a memory measurement prunes first."""
    owners = _owners
    refs = owners.refs
    refs[:] = [r for r in refs if (a := r()) is not None and a._node.value is None]
    owners.prune_at = max(1024, 2 * len(refs))


BOUND_TRIGGER = "the pending-graph bound (config.max_pending)"


def _bound_depth(node, depth):
    global _last_cut, _last_cut_prim
    looks = (node.prim, node.params, [n.aval for n in node.inputs])
    if depth < config.max_pending and looks != _last_cut:
        return
    _last_cut, _last_cut_prim = looks, node.prim
    refs = _owners.refs
    held = [a._node for r in refs if (a := r()) is not None and a._node.value is None]
    refs.clear()
    try:
        evaluate([node] + held, BOUND_TRIGGER)
    except (ConcretizationError, DonatedArrayError):
        # a held array that cannot be computed is left to its reader
        evaluate([node], BOUND_TRIGGER)


# ----------------------------------------------------------------------------- programs

class Equation(NamedTuple):
    prim: object
    params: dict
    inputs: tuple      # slots: inputs are 0..n_in-1, equation i writes slot n_in + i
    aval: Aval


class Program(protocol.Program):
    """A straight-line program: inputs, equations in order, and the slots it returns."""

    def __init__(self, in_avals, eqns, outputs, device, donated=()):
        self.in_avals = in_avals
        self.eqns = eqns
        self.outputs = outputs
        self.device = device
        self.donated = donated    # input indices whose buffers the program may reuse

    def out_avals(self):
        n_in = len(self.in_avals)
        return [self.in_avals[s] if s < n_in else self.eqns[s - n_in].aval for s in self.outputs]


def _pending_graph(targets):
    """(leaves, nodes, equation keys, output indices) of the pending graph behind `targets`,
    as _Plan holds them."""
    # The pending nodes behind the targets, in recording order (node numbers); leaves in
    # the order of their first use. Both depend only on the code that recorded them.
    # Each node's inputs are read once, and before its value: another thread may be
    # computing the same nodes, and `evaluate` sets a node's value before it drops the
    # node's inputs, so inputs read first are the node's own unless the node then shows
    # a value (and is a leaf here). Read after the value, they could be the emptied
    # tuple of a node still taken as pending: an operation without operands.
    pending = []
    seen = set()
    stack = list(targets)
    constant = CONSTANT
    while stack:
        node = stack.pop()
        if node not in seen:
            seen.add(node)
            inputs = node.inputs
            prim = node.prim
            if prim is not None and (node.value is None or (prim is constant and not node.aval.shape)):
                pending.append((node.number, node, inputs))
                stack += inputs
    pending.sort(key=_FIRST)
    nodes = list(map(_SECOND, pending))
    index = dict(zip(nodes, range(len(nodes))))   # Node -> i for node i, ~j for leaf j
    leaves = []
    eq_keys = []
    rename = RENAME
    for _, n, inputs in pending:
        slots = []
        for x in inputs:
            k = index.get(x)
            if k is None:
                k = index[x] = ~len(leaves)
                leaves.append(x)
            slots.append(k)
        prim = n.prim
        params = n.params
        eq_keys.append((prim, tuple(params.items()) if params and prim is not rename else (),
                        tuple(slots)))
    outputs = []
    returned = set()
    for t in targets:
        k = index.get(t)
        if k is None:                    # a leaf target (a transfer to make, say)
            index[t] = ~len(leaves)
            leaves.append(t)
        elif k >= 0 and k not in returned:
            outputs.append(k)
            returned.add(k)
    # Pending intermediates that will be needed again are returned too, so whatever
    # evaluates next (the next step of a loop, the backward pass) finds their values
    # instead of computing them again: those other operations already consume, and
    # those an Array still shows to the user (parameters and optimizer state of a
    # training loop). Both depend on what the code holds, not on the values, so the
    # same code gives the same program.
    # Consumers inside this program, and consumers that no longer exist, do not count: an
    # intermediate shared only within the program (a polynomial's running sum, a value
    # two branches of a select use) stays internal, so XLA can fuse it.
    for i, node in enumerate(nodes):
        if i in returned:
            continue
        owner = node.owner
        if owner is not None and owner() is not None:
            outputs.append(i)
            continue
        for r in node.consumers or ():   # a pending operation outside the program
            c = r()
            if c is not None and c.value is None and c not in index:
                outputs.append(i)
                break
    return leaves, nodes, eq_keys, outputs


class _Plan(protocol.Plan):
    """The pending subgraph behind some targets, in canonical order."""

    __slots__ = ("leaves", "nodes", "outputs", "key")

    def __init__(self, targets, device):
        leaves, nodes, eq_keys, outputs = _pending_graph(targets)
        n_in = len(leaves)
        self.leaves = leaves
        self.nodes = nodes
        self.outputs = outputs = list(map(n_in.__add__, outputs))
        # the key names operands by their index among the leaves (~j) or the nodes (i)
        # (axis names are left out: a program on named arrays shares the unnamed one's entry)
        avals = []
        for l in leaves:
            a = l.aval
            avals.append(a if a.names is None else unnamed(a))
        self.key = (device, tuple(avals), tuple(eq_keys), tuple(outputs))

    def equations(self):
        """(prim, params, input slots, aval) of every node, in order: inputs are slots
        0..n_in-1, node i writes slot n_in + i."""
        n_in = len(self.leaves)
        return [(n.prim, n.params, tuple([s + n_in if s >= 0 else ~s for s in k[2]]), n.aval)
                for n, k in zip(self.nodes, self.key[2])]

    def program(self):
        n_in = len(self.leaves)
        eqns = [Equation(*e) for e in self.equations()]
        assert all(s >= n_in for s in self.outputs)
        program = Program([l.aval for l in self.leaves], eqns, self.outputs, self.key[0])
        where = [getattr(n, "where", None) for n in self.nodes]   # source lines, if recorded
        if any(where):
            program.locations = where   # the lowering writes them as loc(...)
        return program


def _materialize_leaf(node: Node):
    inputs = node.inputs   # before the value (see _Plan): another thread may be making it
    if node.value is not None:
        if node.value is DONATED:
            raise DonatedArrayError("this array's buffer was donated to a jitted function "
                                    "(donate_argnums) and can no longer be read; use the "
                                    "function's result instead")
        return
    if not inputs:
        raise ConcretizationError(
            f"{_user_location()}a value is needed from an array traced without values by "
            "tlaloc.jit (a Python `if`/`while` on an array, int()/float()/bool(), or a "
            "function whose output shape depends on values such as nonzero, unique_* or a "
            "boolean mask). Use xp.where for value-dependent choices, or mark the argument "
            "static with static_argnums / static_argnames.")
    source = inputs[0]
    evaluate([source])
    with _context.phase("transfer"):
        node.value = node.device.backend.transfer_in(source.value, source.device)
    node.inputs = ()
    node.pending = 0


def _user_location() -> str:
    """'file:line: code' of the innermost caller outside tlaloc, for error messages."""
    import os
    import traceback
    package = os.path.dirname(os.path.abspath(__file__))
    for frame in reversed(traceback.extract_stack()):
        if not os.path.abspath(frame.filename).startswith(package):
            return f"{frame.filename}:{frame.lineno}: `{(frame.line or '').strip()}`: "
    return ""


def evaluate(nodes, trigger="an evaluation") -> None:
    """Compute every node in `nodes` that has no value yet, one program per device.
    `trigger` says what asked (`float()`, ...) to a profile or tlaloc.explain."""
    obs = _context.observer   # a profile or tlaloc.explain: it times and explains the run
    if obs is not None:
        return obs.evaluation(nodes, _evaluate, trigger)
    _evaluate(nodes)


def _evaluate(nodes) -> None:
    todo = []
    for n in nodes:
        value = n.value
        if value is None:
            todo.append(n)
        elif value is DONATED:
            _materialize_leaf(n)  # raises DonatedArrayError
    if not todo:
        return
    device = todo[0].device
    for n in todo:
        if n.device is not device:
            by_device = {}
            for n in todo:
                by_device.setdefault(n.device, []).append(n)
            for device, targets in by_device.items():
                _run_plan(targets, device)
            return
    _run_plan(todo, device)


def _run_plan(targets, device) -> None:
    """Compute the pending `targets` (all on `device`) as one program."""
    observed = _context.observer is not None
    if observed:
        with _context.phase("plan"):
            plan = _Plan(targets, device)
    else:
        plan = _Plan(targets, device)
    leaves = plan.leaves
    for l in leaves:
        value = l.value
        if value is None or value is DONATED:
            _materialize_leaf(l)
    if not plan.nodes:
        return
    if observed:
        with _context.phase("run", {"plan": plan, "device": device}):
            values = device.backend.run(plan, leaves)
    else:
        values = device.backend.run(plan, leaves)
    n_in = len(leaves)
    nodes = plan.nodes
    keep = _trace.retain_graph
    for s, value in zip(plan.outputs, values):
        node = nodes[s - n_in]
        node.value = value
        if not keep:
            node.inputs = ()  # frees the intermediates behind it
        node.pending = 0
