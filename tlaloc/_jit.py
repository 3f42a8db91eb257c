"""tlaloc.jit: trace a function once per signature, replay the compiled program.

A signature is the structure of the arguments (nested tuples, lists, dicts), each array's
shape, dtype and device, the values of static arguments and of Python scalars, and which
arguments are donated. Tracing runs the function on abstract arrays (no values): anything
that needs a value raises ConcretizationError at the offending line. The traced program is
compiled on first use; later calls with the same signature run it without calling the
function. While derivatives are being recorded, or when an argument is itself pending
inside another trace, the call is inlined instead, so jit composes with grad both ways.
An argument the function writes into (`x[i] = v`, `x += y`, or through a view of x) is an
extra output of the program, and each call rebinds the caller's array to it, so the caller
(and its views) see the write as after a plain call.
"""
from __future__ import annotations

import collections

import functools
import inspect

from . import _state, _tree
from . import _context
from ._context import trace
from ._array import Array
from ._api import views as _views
from ._api._core import renamed
from ._config import config
from ._devices import STATS, default_device
from ._graph import DONATED, ConcretizationError, Node, _Plan, dependence, evaluate, leaf
from .autodiff.engine import is_tracing
from . import _protocol as protocol

_ARGUMENTS = "a jitted call computing its pending arguments"   # what a profile calls it
COMPILE_LOG = []   # records of why each jit compile happened (see compile_log())


def compile_log() -> list:
    """Every jit compile of this process: dicts with function, cause and seconds."""
    return list(COMPILE_LOG)


def _record_compile(name, cause, seconds, **details):
    rec = {"function": name, "cause": cause, "seconds": seconds, **details}
    COMPILE_LOG.append(rec)
    if config.explain_compiles:
        import logging   # here, not at import: few processes ever explain compiles
        logging.getLogger("tlaloc.compile").warning("tlaloc.jit compiled %s in %.3f s: %s",
                                                    name, seconds, cause)


class _Traced:
    """One signature's program: which leaves are arguments, which are captured values."""

    def __init__(self, plan, leaf_sources, out_structure, out_slots, device, out_avals):
        self.plan = plan                    # key + program, as the backends expect
        self.out_avals = out_avals          # of the program's outputs, in order
        self.leaf_sources = leaf_sources    # per program input: ("arg", i) or ("const", node)
        self.out_structure = out_structure
        self.out_slots = out_slots          # per output leaf: ("out", k), ("arg", i), ("const", obj)
        self.device = device
        self.writes = ()                    # (argument leaf i, slot): its value after a call
        self.states = ()                    # tlaloc._state cells the function reads or writes
        self.state_out = ()                 # (cell, output k): the cell's value after a call


class _FixedPlan(protocol.Plan):
    """A traced plan, with donated inputs in its key and program."""
    keeps_entry = True

    def __init__(self, plan, donated):
        self._plan = plan
        self.donated = donated
        self.key = plan.key + (("donated", donated),)
        self.entry = None   # the backend's cache entry, found once (its key is large to hash)
        self.outputs = plan.outputs
        self.equations = plan.equations

    def program(self):
        p = self._plan.program()
        p.donated = self.donated
        return p


def _signature_of(value):
    if isinstance(value, Array):
        return ("array", value.shape, value.dtype, value.device, value._names)
    try:
        hash(value)
    except TypeError:
        raise TypeError(f"jit: argument leaf of type {type(value).__name__} is neither an "
                        "array nor hashable; mark it static or convert it") from None
    return ("static", type(value), value)


class Jitted:
    def __init__(self, fun, static_argnums=(), static_argnames=(), donate_argnums=()):
        if not callable(fun):
            raise TypeError(f"jit: expected a function, got {type(fun).__name__}")
        self.static_argnums = _argnums("static_argnums", static_argnums)
        self.donate_argnums = _argnums("donate_argnums", donate_argnums)
        self.static_argnames = _argnames(static_argnames)
        functools.update_wrapper(self, fun)
        self.fun = fun
        self._cache = {}
        self._by_arrays = {}     # the same traces, keyed for calls with array leaves only
        self._last_signature = None
        # signature of positional arrays -> its fast call (see __call__); None where calls
        # always take the general path (static arguments; a subclass that runs programs
        # its own way)
        self._fast = {} if not self.static_argnums and type(self)._run is Jitted._run else None
        # The most positional arguments `fun` takes (None: any number, or not inspectable):
        # argnums are checked against it here, or against each call's arguments.
        self._positional = None
        try:
            parameters = inspect.signature(fun).parameters
        except (TypeError, ValueError):
            self._param_names = []
            return
        self._param_names = list(parameters)
        kinds = [p.kind for p in parameters.values()]
        if inspect.Parameter.VAR_POSITIONAL not in kinds:
            self._positional = sum(k in (inspect.Parameter.POSITIONAL_ONLY,
                                         inspect.Parameter.POSITIONAL_OR_KEYWORD) for k in kinds)
            self._check_argnums(self._positional, "takes")
        if inspect.Parameter.VAR_KEYWORD not in kinds:
            keywords = [n for n, p in parameters.items() if p.kind in (
                inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)]
            for name in self.static_argnames:
                if name not in keywords:
                    raise ValueError(f"jit: static_argnames names {name!r}, which is not a "
                                     f"parameter of {getattr(fun, '__qualname__', fun)} "
                                     f"(its parameters: {', '.join(keywords) or 'none by keyword'})")

    def _check_argnums(self, n, verb):
        """ValueError unless every static and donated position exists among n positional
        arguments (the function's, or a call's)."""
        for what in ("static_argnums", "donate_argnums"):
            for i in getattr(self, what):
                if not -n <= i < n:
                    raise ValueError(
                        f"jit: {what}={getattr(self, what)!r} refers to positional argument {i}, "
                        f"but {getattr(self.fun, '__qualname__', 'the function')} {verb} {n} "
                        "positional argument(s)")
        both = {i % n for i in self.static_argnums} & {i % n for i in self.donate_argnums} if n else ()
        if both:
            raise ValueError(f"jit: argument(s) {sorted(both)} cannot be both static and donated")

    def __repr__(self):
        return f"<tlaloc.jit of {getattr(self.fun, '__qualname__', self.fun)}>"

    # ---------------------------------------------------------------- calling

    def __call__(self, *args, **kwargs):
        # The fastest call: positional arrays only, of a signature whose program has run
        # before. Keyed by each array's aval (shape, dtype, axis names) and device, which
        # decide the trace (with no static or keyword arguments, the number of arrays fixes
        # the structure and the donated positions); its values are read only when they are
        # all device buffers already (anything else takes the general path below).
        fast = self._fast
        if fast and not kwargs:
            key = []
            for x in args:
                if type(x) is not Array:
                    break
                node = x._node
                key.append(node.aval)
                key.append(node.device)
            else:
                call = fast.get(tuple(key))
                if call is not None and not trace.retain_graph and _context.observer is None \
                        and not (_context.engaged and trace.jit_depth):
                    out = call(args)
                    if out is not _MISS:
                        return out
        if kwargs or self.static_argnums:
            return self._call(args, kwargs)[0]
        # The common call (arrays in nested tuples, lists, dicts) is keyed by its structure
        # and the arrays' avals, devices and names only: the general signature costs more
        # than running a small program.
        leaves, structure = _tree.flatten(args)
        key = [structure]
        for x in leaves:
            if type(x) is not Array:
                return self._call(args, kwargs)[0]
            key.append((x._node.aval, x._node.device, x._names))
        key = tuple(key)
        found = self._by_arrays.get(key)
        if found is None or is_tracing():
            result, traced, donated = self._call(args, kwargs)
            if traced is not None:
                self._by_arrays[key] = (traced, donated)
                if fast is not None:
                    self._add_fast(args, traced, donated)
            return result
        try:
            evaluate([x._node for x in leaves], _ARGUMENTS)
        except ConcretizationError:
            return self.fun(*args)   # called inside another trace: inline
        traced, donated = found
        if donated:
            self._check_donation(leaves, donated)
        result = self._run(traced, leaves, donated, None)
        if fast is not None:
            self._add_fast(args, traced, donated)
        return result

    def _add_fast(self, args, traced, donated):
        """Give the signature of `args`, when they are positional arrays (none nested), its
        fast call, once its program has run: the one _fast_call makes, or where it makes
        none, one that always declines."""
        key = []
        for x in args:
            if type(x) is not Array:
                return
            key.append(x._node.aval)
            key.append(x._node.device)
        key = tuple(key)
        if key not in self._fast:
            self._fast[key] = _fast_call(traced, donated) or _declines

    def _call(self, args, kwargs):
        """The general call: (result, the trace it ran or None when inlined, donated leaves).
        Bad arguments, and errors the function raises while traced, come before the
        arguments are computed."""
        if self._positional is None and (self.static_argnums or self.donate_argnums):
            self._check_argnums(len(args), "was called with")
        static_pos = {i % len(args) if args else i for i in self.static_argnums if -len(args) <= i < len(args)}
        dynamic = [a for i, a in enumerate(args) if i not in static_pos]
        static_kw = {k: v for k, v in kwargs.items() if k in self.static_argnames}
        dynamic_kw = {k: v for k, v in kwargs.items() if k not in self.static_argnames}
        leaves, structure = _tree.flatten((dynamic, dynamic_kw))
        if is_tracing():
            return self.fun(*args, **kwargs), None, ()   # derivatives are being recorded: inline
        arrays = [x._node for x in leaves if isinstance(x, Array)]
        if trace.jit_depth:   # inside another trace: an argument that has no value inlines
            try:
                evaluate(arrays, _ARGUMENTS)
            except ConcretizationError:
                return self.fun(*args, **kwargs), None, ()
        donated = self._donated_leaves(args, static_pos, len(leaves))
        donated = tuple(i for i in donated if isinstance(leaves[i], Array))
        if donated:
            self._check_donation(leaves, donated)
        signature = (structure, tuple(_signature_of(x) for x in leaves),
                     tuple(_static_key(args[i]) for i in sorted(static_pos)),
                     tuple(sorted((k, _static_key(v)) for k, v in static_kw.items())), donated)
        traced = self._cache.get(signature)
        cause = None
        if traced is None:
            traced = self._trace(args, kwargs, static_pos, leaves, structure, donated)
            self._cache[signature] = traced
            cause = self._cause(self._last_signature, signature)
            self._last_signature = signature
        try:
            evaluate(arrays, _ARGUMENTS)
        except ConcretizationError:
            return self.fun(*args, **kwargs), None, ()   # an array of a finished trace: inline
        return self._run(traced, leaves, donated, cause), traced, donated

    def _cause(self, old, new) -> str:
        """Why a call traces anew: what changed between the last traced signature and this
        one (tlaloc/_dynamic.py says which bucket instead)."""
        return _difference(old, new, self._param_names)

    def _compile_details(self) -> dict:
        """Fields the compile log records beside function, cause and seconds."""
        return {}

    @staticmethod
    def _check_donation(leaves, donated):
        uses = collections.Counter(id(x._node) for x in leaves if isinstance(x, Array))
        for i in donated:
            if uses[id(leaves[i]._node)] > 1:
                raise ValueError("jit: a donated argument is also passed as another "
                                 "argument; its buffer cannot be both consumed and read")

    def _donated_leaves(self, args, static_pos, n_leaves):
        if not self.donate_argnums:
            return ()
        positions = []
        k = 0
        for i, a in enumerate(args):
            if i in static_pos:
                continue
            n = _tree.flatten(a)[1].num_leaves
            if i in {d % len(args) for d in self.donate_argnums}:
                positions.extend(range(k, k + n))
            k += n
        return tuple(positions)

    # ---------------------------------------------------------------- tracing

    def _trace(self, *how, name="jit"):
        trace.jit_depth += 1   # no values while tracing: the depth bound must not compute
        try:
            return self._trace_once(*how, name=name)
        finally:
            trace.jit_depth -= 1

    def _trace_once(self, args, kwargs, static_pos, leaves, structure, donated, name="jit"):
        devices = {x.device for x in leaves if isinstance(x, Array)}
        if len(devices) > 1:
            raise ValueError(f"{name}: arguments are on different devices: {sorted(map(str, devices))}")
        device = devices.pop() if devices else default_device()
        placeholders = {}
        placeholder_nodes = []   # per leaf: its placeholder, or None for a non-array
        abstract = []
        for i, x in enumerate(leaves):
            if isinstance(x, Array):
                node = Node(None, (), None, x._node.aval, device)   # names included
                placeholders[node] = i
                abstract.append(Array._from_node(node))
            else:
                node = None
                abstract.append(x)
            placeholder_nodes.append(node)
        dynamic, dynamic_kw = _tree.unflatten(structure, abstract)
        it = iter(dynamic)
        call_args = [args[i] if i in static_pos else next(it) for i in range(len(args))]
        call_kwargs = dict(kwargs)
        call_kwargs.update(dynamic_kw)
        with _state.Frame() as frame:   # State cells (a Generator's key) become inputs
            result = self.fun(*call_args, **call_kwargs)
        out_leaves, out_structure = _tree.flatten(result)
        # arguments the function wrote into (x[i] = v, x += y, through views of x too): the
        # caller's arrays get their new values after each call, as from a plain call
        written = [(placeholders[node], a) for node, a in zip(placeholder_nodes, abstract)
                   if node is not None and a._node is not node]
        out_leaves = out_leaves + [a for _, a in written]
        out_nodes = list(dict.fromkeys(
            x._node for x in out_leaves
            if isinstance(x, Array) and x._node.prim is not None and x._node.value is None))
        state_in, state_out = _state_outputs(frame)
        out_nodes = list(dict.fromkeys(out_nodes + [n for _, n in state_out]))
        if not placeholders and out_nodes:   # no array arguments: the results' device
            device = out_nodes[0].device
        for node in out_nodes:
            if node.device != device:
                raise ValueError(f"{name}: outputs must stay on the arguments' device")
        captured = _captured_pending(out_nodes, placeholders)
        if captured:
            evaluate(captured)
            # a result that depends on no argument is now a constant of the trace
            out_nodes = [n for n in out_nodes if n.value is None]
        plan = _Plan(out_nodes, device) if out_nodes else None
        sources = []
        if plan is not None:
            for l in plan.leaves:
                if l in placeholders:
                    sources.append(("arg", placeholders[l]))
                elif l in state_in:
                    sources.append(("state", state_in[l]))
                elif l.value is None and l.prim is None and not l.inputs:
                    raise ValueError(f"{name}: the function used an array traced by another call")
                else:
                    sources.append(("const", l))
            arg_inputs = {src[1]: k for k, src in enumerate(sources) if src[0] == "arg"}
            plan = _FixedPlan(plan, tuple(sorted(arg_inputs[i] for i in donated if i in arg_inputs)))
        position = {node: k for k, node in enumerate(out_nodes)}
        slots = []
        for x in out_leaves:
            if isinstance(x, Array) and x._node in placeholders:
                slots.append(("arg", placeholders[x._node]))
            elif isinstance(x, Array) and x._node in position:
                slots.append(("out", position[x._node], x._names))
            elif isinstance(x, Array) and x._node in state_in:
                slots.append(("state", state_in[x._node]))
            else:
                slots.append(("const", x))
        n_results = len(slots) - len(written)
        traced = _Traced(plan, sources, out_structure, slots[:n_results], device,
                         [n.aval for n in out_nodes])
        traced.writes = tuple((i, slot) for (i, _), slot in zip(written, slots[n_results:]))
        traced.states = tuple(state_in.values())
        traced.state_out = tuple((cell, position[n]) for cell, n in state_out)
        return traced

    # ---------------------------------------------------------------- running

    def _run(self, traced, leaves, donated, cause):
        outputs = []
        entry = {}
        if traced.states:
            entry = {cell: cell._value for cell in traced.states}
            evaluate([v._node for v in entry.values()], _ARGUMENTS)
        if traced.plan is not None:
            inputs = [leaves[what]._node if kind == "arg" else
                      entry[what]._node if kind == "state" else what
                      for kind, what in traced.leaf_sources]
            # a captured array donated since (to another jitted function): DonatedArrayError
            evaluate([what for kind, what in traced.leaf_sources
                      if kind == "const" and what.value is DONATED])
            misses, seconds = STATS.misses, STATS.compile_seconds
            with _context.phase("jit", {"function": getattr(self.fun, "__qualname__", "?"),
                                        "cause": cause, "plan": traced.plan,
                                        "device": traced.device}):
                values = traced.device.backend.run(traced.plan, inputs, compiled=True)
            if cause is not None and STATS.misses > misses:
                _record_compile(getattr(self.fun, "__qualname__", repr(self.fun)), cause,
                                STATS.compile_seconds - seconds, **self._compile_details())
            outputs = [Array._from_node(leaf(v, a, traced.device))
                       for v, a in zip(values, traced.out_avals)]
            for cell, k in traced.state_out:
                cell._value = outputs[k]
            for i in donated:
                leaves[i]._node.value = DONATED
        def value(kind, what, *names):
            if kind == "out":
                out = outputs[what]
                if names[0] != out._node.aval.names:   # one node returned under two names
                    out = Array._from_node(renamed(out._node, names[0]))
                return out
            if kind == "arg":
                return leaves[what]
            if kind == "state":
                return entry[what]
            return what
        result = [value(*slot) for slot in traced.out_slots]
        written = [(leaves[i], value(*slot)) for i, slot in traced.writes]
        for x, new in written:   # (all read first: one argument may be written into another)
            _views.assign(x, new, "a write into a jit argument")
        return _tree.unflatten(traced.out_structure, result)


_MISS = object()   # what a fast call returns when it declines (the general path runs)


def _declines(args):
    return _MISS


def _fast_call(traced, donated):
    """The call of one signature of positional arrays once its program has run (see
    Jitted.__call__), or None where the general path must run every call: the function
    reads or writes state or writes into an argument, a result is not one of the program's
    outputs, or the device's backend has no fast runner (a mesh's executables depend on the
    inputs' layouts, which the key leaves out). The call reads its inputs' values (the
    arguments', and the constants the trace captured) and declines, returning _MISS having
    done nothing, unless all are device buffers: a pending argument, a host value still to
    be put on the device, a donated or foreign value all take the general path, which
    computes, moves or refuses them."""
    plan = traced.plan
    if plan is None or traced.states or traced.writes or traced.state_out:
        return None
    order = []
    for slot in traced.out_slots:
        if slot[0] != "out" or slot[2] != traced.out_avals[slot[1]].names:
            return None
        order.append(slot[1])
    device = traced.device
    backend = device.backend
    make = getattr(backend, "fast_runner", None)
    runner = make(plan) if make is not None else None
    if runner is None:
        return None
    if any(kind not in ("arg", "const") for kind, _ in traced.leaf_sources):
        return None
    buffer = backend.buffer_type
    # per program input: (argument position, None) or (-1, the captured constant's node)
    sources = tuple((what, None) if kind == "arg" else (-1, what)
                    for kind, what in traced.leaf_sources)
    out_avals = tuple(traced.out_avals)
    structure = traced.out_structure
    order = tuple(order)
    new_array = Array.__new__

    def run(args):
        """The program's output buffers, or _MISS (nothing done) when an input's value is
        not a device buffer or a donated buffer must be copied first."""
        buffers = []
        for i, node in sources:
            value = (args[i]._node if node is None else node).value
            if type(value) is not buffer:
                return _MISS
            buffers.append(value)
        values = runner(buffers)
        if values is None:       # a donated buffer the general path must copy first
            return _MISS
        for i in donated:
            args[i]._node.value = DONATED
        return values

    if structure.kind == "leaf" and len(out_avals) == 1:   # one result: the common case
        aval = out_avals[0]

        def call(args):
            values = run(args)
            if values is _MISS:
                return _MISS
            out = new_array(Array)
            out._node = leaf(values[0], aval, device)
            return out

        return call

    def call(args):
        values = run(args)
        if values is _MISS:
            return _MISS
        outputs = []
        for value, aval in zip(values, out_avals):
            out = new_array(Array)
            out._node = leaf(value, aval, device)
            outputs.append(out)
        return _tree.unflatten(structure, [outputs[k] for k in order])

    return call


def _state_outputs(frame):
    """The State cells a trace touched: {placeholder node: cell}, and (cell, node) for each
    cell the function gave a new value (an extra output of the program)."""
    state_in, state_out = {}, []
    for cell, placeholder, final in frame.threaded():
        state_in[placeholder] = cell
        node = final._node
        if node is placeholder:
            continue
        if node.prim is None or node.value is not None:
            raise ValueError("jit: the function set a state (a tlaloc.random.Generator's "
                             "key) to an array it did not compute; set it from a key the "
                             "function computes (split, fold_in) or outside the function")
        state_out.append((cell, node))
    return state_in, state_out


def _captured_pending(out_nodes, placeholders):
    """Pending arrays the traced function read from outside (their owner, an Array made before
    the call, is still alive) and that depend on no argument. They are computed once, now,
    and enter the program as inputs; left pending, every call would compute them again
    (and return them, as a plan returns the pending values the code still holds).
    Constants the function made itself (their Arrays are gone) stay in the program."""
    def is_argument(node):   # or a value traced by another call
        return node in placeholders or (node.value is None and node.prim is None
                                        and not node.inputs)
    depends = dependence(out_nodes, is_argument)
    return [n for n, d in depends.items()
            if not d and n.value is None and n.prim is not None
            and n.owner is not None and n.owner() is not None]


def _static_key(value):
    try:
        hash(value)
    except TypeError:
        raise TypeError(f"jit: static argument {value!r} is not hashable") from None
    return (type(value), value)


def _difference(old, new, names) -> str:
    """A sentence saying what changed between two signatures."""
    if old is None:
        return "first call"
    o_struct, o_leaves, o_static, o_kw, o_don = old
    n_struct, n_leaves, n_static, n_kw, n_don = new
    if o_struct != n_struct:
        return f"argument structure changed: {o_struct} -> {n_struct}"
    for i, (a, b) in enumerate(zip(o_leaves, n_leaves)):
        if a == b:
            continue
        label = names[i] if i < len(names) and o_struct.num_leaves == len(names) else f"#{i}"
        if a[0] == b[0] == "array":
            if a[1] != b[1]:
                return f"argument `{label}` shape {a[1]} -> {b[1]}"
            if a[2] != b[2]:
                return f"argument `{label}` dtype {a[2]} -> {b[2]}"
            if a[3] != b[3]:
                return f"argument `{label}` device {a[3]} -> {b[3]}"
            return f"argument `{label}` axis names {a[4]} -> {b[4]}"
        return f"argument `{label}` value {a[2]!r} -> {b[2]!r}"
    if o_static != n_static or o_kw != n_kw:
        return f"new static value: {o_static or o_kw} -> {n_static or n_kw}"
    if o_don != n_don:
        return "different donated arguments"
    return "new signature"


def _argnums(what, value):
    """static_argnums / donate_argnums as a tuple of ints (TypeError naming jit otherwise)."""
    if value is None:
        return ()
    items = (value,) if isinstance(value, int) else value
    try:
        items = tuple(items)
    except TypeError:
        items = None
    if items is None or isinstance(value, str) or not all(
            isinstance(i, int) and not isinstance(i, bool) for i in items):
        raise TypeError(f"jit: {what} must be an int or a sequence of ints, got {value!r}")
    return items


def _argnames(value):
    """static_argnames as a tuple of str (TypeError naming jit otherwise)."""
    if value is None:
        return ()
    items = (value,) if isinstance(value, str) else value
    try:
        items = tuple(items)
    except TypeError:
        items = None
    if items is None or not all(isinstance(n, str) for n in items):
        raise TypeError(f"jit: static_argnames must be a str or a sequence of str, got {value!r}")
    return items


def jit(fun=None, *, static_argnums=(), static_argnames=(), donate_argnums=()):
    """Capture `fun`: trace once per signature and replay the compiled program.

    Usable as `jit(f, ...)` or as a decorator `@jit` / `@jit(static_argnums=...)`."""
    if fun is None:
        _argnums("static_argnums", static_argnums)   # bad options fail here, not at decoration
        _argnums("donate_argnums", donate_argnums)
        _argnames(static_argnames)
        return functools.partial(jit, static_argnums=static_argnums,
                                 static_argnames=static_argnames, donate_argnums=donate_argnums)
    return Jitted(fun, static_argnums, static_argnames, donate_argnums)
