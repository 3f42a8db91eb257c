"""tlaloc.vmap: a function of one example, run on a batch of them.

The function is traced once on abstract arrays of one example's shape (placeholders without
values, as tlaloc.jit traces). The recorded graph is then rewritten: every operation that
depends on a mapped argument is recorded again on the whole batch by its primitive's batching
rule (`batch=` in the declaration, _prims/batching.py's vocabulary), which says where the
mapped axis of its result is. Operations that do not depend on a mapped argument are kept
as they are. Nothing is computed: the result is a lazy graph like any other, so vmap
composes with grad, jvp, jit and itself.
"""
from __future__ import annotations

import functools
import os

import numpy as np

from . import _tree
from ._array import Array
from ._context import trace
from ._graph import Aval, ConcretizationError, Node, bind, dependence
from ._mesh import MeshDevice
from ._prims import batching, lax

_DEFAULT = object()    # in_axes / out_axes not given


def vmap(f, in_axes=_DEFAULT, out_axes=_DEFAULT, *, axis=None, axis_size=None):
    """Vectorise `f` over an axis of its arguments.

    `vmap(f, in_axes=0, out_axes=0)`: `in_axes` gives, for each positional argument, the axis
    that is mapped (an int, or None for an argument shared by every example), as an int or
    None for all of them or as a tuple with one entry per argument whose entries may be
    nested tuples, lists and dicts matching the argument; `out_axes` likewise says where each
    result gets the mapped axis. `vmap(f, axis="batch")` maps the axis named "batch" of every
    argument that has one; the function sees arrays without it and its results get it back,
    named, in front. `axis_size` gives the number of examples when no argument is mapped.
    """
    if not callable(f):
        raise TypeError(f"vmap: expected a function, got {type(f).__name__}")
    if axis is not None:
        if not isinstance(axis, str):
            raise TypeError(f"vmap: axis must be an axis name (a str), got {axis!r}")
        if in_axes is not _DEFAULT or out_axes is not _DEFAULT:
            raise TypeError("vmap: give either axis= (a named axis) or in_axes/out_axes, not both")
    in_axes = 0 if in_axes is _DEFAULT else in_axes
    out_axes = 0 if out_axes is _DEFAULT else out_axes
    _check_axes_spec("in_axes", in_axes)
    _check_axes_spec("out_axes", out_axes)
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    if axis_size is not None:
        if not isinstance(axis_size, int) or isinstance(axis_size, bool):
            raise TypeError(f"vmap: axis_size must be an int, got {axis_size!r}")
        if axis_size < 0:
            raise ValueError(f"vmap: axis_size must be non-negative, got {axis_size}")

    @functools.wraps(f)
    def batched(*args, **kwargs):
        return _call(f, args, kwargs, in_axes, out_axes, axis, axis_size)

    return batched


def _check_axes_spec(what, spec):
    leaves, _ = _tree.flatten(spec)
    for a in leaves:
        if not (a is None or (isinstance(a, int) and not isinstance(a, bool))):
            raise TypeError(f"vmap: {what} entries must be ints or None, got {a!r}")


# ----------------------------------------------------------------------------- a call

def _call(f, args, kwargs, in_axes, out_axes, axis, axis_size):
    name = getattr(f, "__qualname__", None) or repr(f)
    leaves, structure = _tree.flatten((args, kwargs))
    if axis is None:
        spec = _prefix_axes(in_axes, args, "in_axes") + [0] * _tree.flatten(kwargs)[1].num_leaves
    else:
        _check_not_a_mesh_axis(leaves, axis, name)
        spec = [_named_axis(x, axis) for x in leaves]
    size = _mapped_size(leaves, spec, axis_size, name)
    env, example = _placeholders(leaves, spec)
    result = _trace_example(f, *_tree.unflatten(structure, example), name)
    out_leaves, out_structure = _tree.flatten(result)
    found = iter(batch_nodes([x._node for x in out_leaves if isinstance(x, Array)], env))
    if axis is None:
        spec_out = _prefix_axes(out_axes, result, "out_axes", tree_is_result=True)
    else:
        spec_out = [0] * len(out_leaves)
    axis_name = axis if axis is not None else _common_name(leaves, spec)
    outs = [Array._from_node(_place(*next(found), want, size, axis_name, axis is not None, name))
            if isinstance(x, Array) else x for x, want in zip(out_leaves, spec_out)]
    return _tree.unflatten(out_structure, outs)


def _placeholders(leaves, spec):
    """({placeholder: (the argument, its mapped axis)}, the example's leaves): a mapped
    argument is seen by the function as a placeholder of one example's aval."""
    env, example = {}, []
    for x, d in zip(leaves, spec):
        if d is None:
            example.append(x)
            continue
        a = x._node.aval
        names = None if a.names is None else a.names[:d] + a.names[d + 1:]
        if names is not None and all(n is None for n in names):
            names = None
        placeholder = Node(None, (), None, Aval(a.shape[:d] + a.shape[d + 1:], a.dtype, names),
                           x.device)
        env[placeholder] = (_without_name(x._node, d), d)
        example.append(Array._from_node(placeholder))
    return env, example


def _trace_example(f, args, kwargs, name):
    """f on the placeholders, recorded without values."""
    outer_trace = trace.jit_depth > 0
    trace.jit_depth += 1    # placeholders have no values: nothing may be computed meanwhile
    try:
        return f(*args, **kwargs)
    except ConcretizationError as e:
        raise _concretization_error(e, name, outer_trace) from None
    finally:
        trace.jit_depth -= 1


def _common_name(leaves, spec):
    """The name the mapped arguments that name their mapped axis give it, if they agree on
    one: the results' mapped axis keeps it."""
    names = {x.names[d] for x, d in zip(leaves, spec) if d is not None} - {None}
    return names.pop() if len(names) == 1 else None


def _check_not_a_mesh_axis(leaves, axis, name):
    """A named batch axis must not be a mesh axis of an argument's mesh: collectives and
    layouts name mesh axes, and one name would mean both."""
    for x in leaves:
        if isinstance(x, Array) and isinstance(x.device, MeshDevice) \
                and axis in x.device.mesh.axis_names:
            raise ValueError(f"vmap of {name}: axis={axis!r} is also an axis of the mesh "
                             f"{x.device.mesh} an argument is laid out on; name the batch axis "
                             "differently")


def _named_axis(x, axis):
    if isinstance(x, Array) and x._names is not None and axis in x._names:
        return x._names.index(axis)
    return None


def _prefix_axes(spec, tree, what, tree_is_result=False):
    """One axis (int or None) per leaf of `tree` from `spec`, a prefix of it: an int or None
    stands for every leaf below it."""
    if not tree_is_result and isinstance(spec, tuple) and len(spec) != len(tree):
        raise ValueError(f"vmap: in_axes has {len(spec)} entries but the function was called "
                         f"with {len(tree)} positional argument(s)")
    out = []
    _prefix_walk(spec, tree, out, what)
    return out


def _prefix_walk(spec, tree, out, what):
    if spec is None or isinstance(spec, int):
        out.extend([spec] * _tree.flatten(tree)[1].num_leaves)
        return
    if isinstance(spec, (tuple, list)) and isinstance(tree, (tuple, list)) and len(spec) == len(tree):
        for s, t in zip(spec, tree):
            _prefix_walk(s, t, out, what)
        return
    if isinstance(spec, dict) and isinstance(tree, dict) and set(spec) == set(tree):
        for k in sorted(tree):
            _prefix_walk(spec[k], tree[k], out, what)
        return
    raise ValueError(f"vmap: {what} {spec!r} does not match the structure of {_tree.flatten(tree)[1]!r}")


def _mapped_size(leaves, spec, axis_size, name):
    sizes = {}
    for i, (x, d) in enumerate(zip(leaves, spec)):
        if d is not None and not isinstance(x, Array):
            if isinstance(x, np.ndarray):
                raise TypeError(f"vmap of {name}: argument leaf {i} is a NumPy array; convert "
                                "it with tlaloc.asarray to map it, or give it in_axes None")
            spec[i] = d = None     # Python scalars, strings, None: the same for every example
        if d is None:
            continue
        if not -x.ndim <= d < x.ndim:
            raise ValueError(f"vmap of {name}: in_axes {d} for argument leaf {i} of shape "
                             f"{x.shape} is out of range")
        spec[i] = d % x.ndim
        sizes.setdefault(x.shape[spec[i]], []).append(i)
    if len(sizes) > 1:
        listed = "; ".join(f"size {n} for leaves {idx}" for n, idx in sizes.items())
        raise ValueError(f"vmap of {name}: mapped axes have different sizes: {listed}")
    if sizes:
        (size,) = sizes
        if axis_size is not None and axis_size != size:
            raise ValueError(f"vmap of {name}: axis_size={axis_size} but the mapped axes have "
                             f"size {size}")
        return size
    if axis_size is None:
        raise ValueError(f"vmap of {name}: no argument is mapped (in_axes are all None or "
                         "no argument has the axis); give axis_size")
    return axis_size


def _without_name(node, d):
    """The mapped argument, its mapped axis unnamed (the rules see a plain batch axis)."""
    names = node.aval.names
    if names is None or names[d] is None:
        return node
    names = names[:d] + (None,) + names[d + 1:]
    return lax.rename(node, names=None if all(n is None for n in names) else names)


def _place(node, d, want, size, axis_name, named_mode, name):
    """A result with its mapped axis where out_axes (or the named axis) wants it, named
    `axis_name` (with vmap(axis=...) always; otherwise when no other axis has the name)."""
    if want is None:
        if d is not None:
            raise ValueError(f"vmap of {name}: out_axes is None for a result that varies "
                             "along the mapped axis")
        return node
    ndim = len(node.aval.shape) + (d is None)
    if not -ndim <= want < ndim:
        raise ValueError(f"vmap of {name}: out_axes {want} is out of range for a result of "
                         f"{ndim} dimension(s)")
    want %= ndim
    node = batching.moved(node, d, want, size)
    names = list(node.aval.names or (None,) * ndim)
    if axis_name is not None and (named_mode or axis_name not in names):
        names[want] = axis_name
        node = lax.rename(node, names=tuple(names))
    return node


# ----------------------------------------------------------------------------- the rewrite

class _Frame:
    """One rewrite: `env` maps the example's nodes to (batched node, mapped axis or None)."""

    def __init__(self, env):
        self.env = env
        self.node = None    # the example's node whose rule runs (custom rules read it)

    def batch(self, nodes, extra):
        """`nodes` (None allowed) recorded on the batch, with `extra` placeholders mapped."""
        env = dict(self.env)
        env.update(extra)
        return batch_nodes(nodes, env)


def batch_nodes(outputs, env):
    """(node, mapped axis or None) for each of `outputs` (None stays (None, None)), the
    example graph behind them rewritten on the batch; `env` maps the example's placeholders
    (and any node already batched) to their batched nodes, and is extended."""
    order = _depending(outputs, env)
    frame = _Frame(env)
    saved = batching.rewriting.frame
    batching.rewriting.frame = frame
    try:
        for node in order:
            inputs = [env.get(i) or (i, None) for i in node.inputs]
            operands = tuple(n for n, _ in inputs)
            dims = tuple(d for _, d in inputs)
            if all(d is None for d in dims):
                env[node] = (bind(node.prim, operands, node.params, node.device), None)
                continue
            rule = node.prim.batch
            if rule is None:
                raise NotImplementedError(f"vmap: primitive '{node.prim.name}' has no batching rule")
            frame.node = node
            new, d = rule(dims, *operands, **node.params)
            _check(node, new, d, batching.size_of(dims, operands))
            env[node] = (new, d)
    finally:
        batching.rewriting.frame = saved
    return [(None, None) if o is None else env.get(o, (o, None)) for o in outputs]


def _depending(outputs, env):
    """The nodes behind `outputs` that depend on a node of `env` and are not in it, in
    recording order (node numbers are topological)."""
    depends = dependence([o for o in outputs if o is not None], env.__contains__)
    order = [n for n, d in depends.items() if d and n not in env]
    order.sort(key=lambda n: n.number)
    return order


def _check(node, new, d, size):
    """A rule's result must be the example's result with the mapped axis at `d`."""
    shape = node.aval.shape
    want = shape if d is None else shape[:d] + (size,) + shape[d:]
    if new.aval.shape != want or new.aval.dtype is not node.aval.dtype:
        raise AssertionError(f"vmap: the batching rule of '{node.prim.name}' made "
                             f"{new.aval.shape} {new.aval.dtype}, expected {want} "
                             f"{node.aval.dtype} (mapped axis {d})")


# ----------------------------------------------------------------------------- errors

_CALL_NAMES = {"__bool__": "bool()", "__int__": "int()", "__float__": "float()",
               "__index__": "an index (operator.index)", "__getitem__": "x[...]",
               "__setitem__": "x[...] = v", "getitem": "x[...]", "setitem": "x[...] = v", "item": "x.item()", "tolist": "x.tolist()",
               "__array__": "numpy.asarray(x)", "__complex__": "complex()"}


def _concretization_error(e, name, outer_trace):
    """The error of a function that needs values under vmap: where, which call, and what to
    write instead."""
    if str(e).startswith("vmap"):      # an inner vmap said it already
        return e
    import traceback   # only when an error is reported
    package = os.path.dirname(os.path.abspath(__file__))
    frames = traceback.extract_tb(e.__traceback__)
    where, call = "", None
    for i, fr in enumerate(frames):
        if not os.path.abspath(fr.filename).startswith(package):
            where = f"{fr.filename}:{fr.lineno}: `{(fr.line or '').strip()}`: "
            inner = frames[i + 1] if i + 1 < len(frames) else None
            call = None if inner is None else inner.name
    called = _CALL_NAMES.get(call, f"{call}()" if call else "this call")
    also = (" (or on an argument that an enclosing tlaloc.jit traces without values)"
            if outer_trace else "")
    return ConcretizationError(
        f"vmap of {name}: {where}{called} needs the value of an array that vmap maps{also}: "
        "vmap traces the function once for all examples, without values, so a Python "
        "`if`/`while` on an array, int()/float()/bool(), or a function whose output shape "
        "depends on values (nonzero, unique_*, a boolean mask x[mask]) cannot run. Write the "
        "choice with xp.where(condition, x, y) instead (x[mask] -> xp.where(mask, x, 0), "
        "keeping the shape), and branches or loops on values with tlaloc.control_flow (cond, "
        "while_loop).")
