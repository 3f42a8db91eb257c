"""Arrays over meshes: `shard`, `with_sharding`, `from_process_local`, manual regions
(`shard_map`) and the collectives they may call.

A layout is a dict from array axis names to mesh axis names (`{}` replicates): axis names
live in the abstract value, so code says which named axis is split over which mesh axis,
never a position. Recording on arrays of a mesh builds one global program; the mesh's
device compiles it with XLA's SPMD partitioner, which propagates layouts and inserts the
collectives. The interpreter device runs the same global program unsharded (a manual
region's body once per mesh position), so every sharded result has a reference.
"""
from __future__ import annotations

import threading

import numpy as np

from . import _graph
from ._api._core import axis_of, node_of, wrap
from ._array import Array
from ._context import trace as _trace
from ._graph import Aval, bind
from ._mesh import Mesh, block_shape, is_mesh_device, spec_of_mapping
from ._prims import control
from ._prims import sharding as prims


def _check_mesh(where, mesh):
    if not isinstance(mesh, Mesh):
        raise TypeError(f"{where}: mesh must be a tlaloc.Mesh, got {type(mesh).__name__}")


def shard(x, mesh, layout):
    """`x` laid out over `mesh`: each array axis named in `layout` is split over the mesh
    axis (or axes) it maps to, the other axes are whole on every device. An array of another
    device goes through the host; one already on `mesh` moves device to device."""
    _check_mesh("shard", mesh)
    node = node_of("shard", x)
    spec = spec_of_mapping("shard", node.aval, mesh, layout)
    device = mesh.device
    if node.device is device:
        if node.value is None or (_trace.retain_graph and _graph.reaches_variable(node)):
            # a value of this mesh being traced (jit) or differentiated: a layout constraint
            return wrap(bind(prims.sharding_constraint, (node,), {"spec": spec}))
        value = node.value
        if device.backend.runtime.is_array(value):   # from device to device
            return wrap(_graph.leaf(device.backend.relaid(value, spec), node.aval, device))
    x._leaving("shard")
    value = device.backend.put(x._host(), spec)
    return wrap(_graph.leaf(value, node.aval, device))


def with_sharding(x, layout, *, mesh=None):
    """`x`, constrained to be laid out as `layout` says (on the mesh of `x`). Off a mesh
    (one device, the interpreter) the layout is checked and `x` is returned: the global
    program is the same."""
    node = node_of("with_sharding", x)
    if _region.stack:
        raise ValueError("with_sharding: inside tlaloc.shard_map each device holds its own "
                         "block; layouts are the shard_map's in_specs and out_specs")
    if is_mesh_device(node.device):
        if mesh is not None and mesh != node.device.mesh:
            raise ValueError(f"with_sharding: x is on {node.device.mesh}, not {mesh}")
        mesh = node.device.mesh
    elif mesh is None:
        spec_of_mapping("with_sharding", node.aval, None, layout)
        return x
    else:
        _check_mesh("with_sharding", mesh)
    spec = spec_of_mapping("with_sharding", node.aval, mesh, layout)
    if not is_mesh_device(node.device):
        return x
    return wrap(bind(prims.sharding_constraint, (node,), {"spec": spec}))


def from_process_local(x_local, mesh, layout):
    """The global array whose part on this process's devices is `x_local`: each process
    passes its rows (along the axes `layout` maps to mesh axes spanning the processes),
    and the global array is their concatenation in process order."""
    _check_mesh("from_process_local", mesh)
    node = node_of("from_process_local", x_local, "x_local")
    x_local._leaving("from_process_local")
    host = x_local._host()
    local_spec = spec_of_mapping("from_process_local", node.aval, mesh, layout, divisible=False)
    backend = mesh.device.backend
    shape, offsets = backend.local_box("from_process_local", node.aval.shape, local_spec)
    aval = Aval(shape, node.aval.dtype, node.aval.names)
    spec = spec_of_mapping("from_process_local", aval, mesh, layout)
    value = backend.put_local(host, shape, spec, offsets)
    return wrap(_graph.leaf(value, aval, mesh.device))


# ----------------------------------------------------------------------------- manual regions

class _Regions(threading.local):
    """The manual regions being traced on this thread (innermost last): (mesh, device)."""

    def __init__(self):
        self.stack = []


_region = _Regions()


def _specs(where, specs, n, what):
    if isinstance(specs, dict):
        specs = (specs,)
    if not isinstance(specs, (tuple, list)) or len(specs) != n:
        raise ValueError(f"shard_map: {where} must be one layout dict per {what} ({n}), got {specs!r}")
    return tuple(specs)


def shard_map(f, mesh, in_specs, out_specs):
    """`f` run on each device's block: argument i laid out as `in_specs[i]` (a layout, as
    `shard` takes), each result's blocks put together as `out_specs` says (a layout, or a
    tuple of them for a tuple of results). Inside `f`, the collectives (`psum`, ...)
    exchange blocks between the devices along mesh axes."""
    _check_mesh("shard_map", mesh)
    if not callable(f):
        raise TypeError(f"shard_map: f must be callable, got {type(f).__name__}")
    single_out = isinstance(out_specs, dict)

    def mapped(*args):
        in_layouts = _specs("in_specs", in_specs, len(args), "argument")
        nodes = [node_of("shard_map", a, f"argument {i}") for i, a in enumerate(args)]
        device = nodes[0].device if nodes else mesh.device
        for n in nodes:
            if n.device is not device:
                raise ValueError(f"shard_map: arguments are on different devices ({device} and "
                                 f"{n.device})")
        if not (device is mesh.device or device.platform == "interpreter"):
            raise ValueError(f"shard_map: the arguments are on {device}; put them on the mesh "
                             "(tlaloc.shard(x, mesh, layout)) or on the interpreter device")
        specs = [spec_of_mapping(f"shard_map: argument {i}", n.aval, mesh, m)
                 for i, (n, m) in enumerate(zip(nodes, in_layouts))]
        block_avals = [Aval(block_shape(n.aval.shape, s, mesh), n.aval.dtype, n.aval.names)
                       for n, s in zip(nodes, specs)]
        axes = tuple(mesh.axes.items())
        results = {}

        def body(*placeholders):
            _region.stack.append((mesh, device))
            try:
                out = f(*[wrap(p) for p in placeholders])
            finally:
                _region.stack.pop()
            outs = (out,) if single_out else out
            if not isinstance(outs, (tuple, list)) or not all(isinstance(o, Array) for o in outs):
                raise TypeError("shard_map: f must return an array, or a tuple of arrays "
                                "when out_specs is a tuple")
            results["n"] = len(outs)
            return [o._node for o in outs]

        traced = control.trace(body, block_avals, device, "a shard_map function")
        out_layouts = _specs("out_specs", (out_specs,) if single_out else out_specs,
                             results["n"], "result")
        out_spec = tuple(spec_of_mapping(f"shard_map: result {k}", o.aval, mesh, m,
                                         divisible=False)
                         for k, (o, m) in enumerate(zip(traced.outputs, out_layouts)))
        captured = traced.captured
        sub = control.build(traced, captured)
        params = {"body": sub, "axes": axes,
                  "in_specs": tuple(specs) + tuple(((),) * len(c.aval.shape) for c in captured),
                  "out_specs": out_spec}
        outs = [wrap(n) for n in control.results(prims.shard_map, nodes + list(captured), params,
                                                 range(len(out_spec)), device)]
        return outs[0] if single_out else tuple(outs)

    mapped.__name__ = getattr(f, "__name__", "mapped")
    mapped.__doc__ = getattr(f, "__doc__", None)
    return mapped


def _inside(name, axis_name):
    """(mesh axes, axis tuple, device) for a collective over `axis_name` (a mesh axis name
    or a tuple of them) in the innermost manual region."""
    if not _region.stack:
        raise RuntimeError(f"{name}: collectives run only inside a function that "
                           "tlaloc.shard_map runs")
    mesh, device = _region.stack[-1]
    axis = (axis_name,) if isinstance(axis_name, str) else axis_name
    if not isinstance(axis, tuple) or not axis or not all(isinstance(a, str) for a in axis):
        raise TypeError(f"{name}: axis_name must be a mesh axis name or a tuple of them, "
                        f"got {axis_name!r}")
    for a in axis:
        if a not in mesh.axes:
            raise ValueError(f"{name}: the mesh has no axis named {a!r} (its axes are "
                             f"{tuple(mesh.axes)})")
    if len(set(axis)) != len(axis):
        raise ValueError(f"{name}: mesh axis named twice in {axis}")
    return tuple(mesh.axes.items()), axis, device


def _group(axes, axis):
    sizes = dict(axes)
    n = 1
    for a in axis:
        n *= sizes[a]
    return n


def psum(x, axis_name):
    """The sum of `x` over the devices along mesh axis `axis_name` (each gets the sum)."""
    axes, axis, _ = _inside("psum", axis_name)
    return wrap(bind(prims.psum, (node_of("psum", x),), {"axes": axes, "axis": axis}))


def pmean(x, axis_name):
    """The mean of `x` over the devices along mesh axis `axis_name`."""
    axes, axis, _ = _inside("pmean", axis_name)
    return psum(x, axis_name) / _group(axes, axis)


def pmax(x, axis_name):
    """The maximum of `x` over the devices along mesh axis `axis_name`."""
    axes, axis, _ = _inside("pmax", axis_name)
    return wrap(bind(prims.pmax, (node_of("pmax", x),), {"axes": axes, "axis": axis}))


def pmin(x, axis_name):
    """The minimum of `x` over the devices along mesh axis `axis_name`."""
    axes, axis, _ = _inside("pmin", axis_name)
    return wrap(bind(prims.pmin, (node_of("pmin", x),), {"axes": axes, "axis": axis}))


def all_gather(x, axis_name, *, axis=0):
    """The blocks of `x` of the devices along `axis_name`, concatenated along array axis
    `axis` (an int or an axis name) in device order."""
    axes, mesh_axis, _ = _inside("all_gather", axis_name)
    node = node_of("all_gather", x)
    dim = axis_of("all_gather", x, axis)
    return wrap(bind(prims.all_gather, (node,), {"axes": axes, "axis": mesh_axis, "dim": dim}))


def psum_scatter(x, axis_name, *, axis=0):
    """The sum over the devices along `axis_name`, split along array axis `axis`: device
    j of the group gets part j."""
    axes, mesh_axis, _ = _inside("psum_scatter", axis_name)
    node = node_of("psum_scatter", x)
    dim = axis_of("psum_scatter", x, axis)
    n = _group(axes, mesh_axis)
    if node.aval.shape[dim] % n:
        raise ValueError(f"psum_scatter: axis {axis!r} has size {node.aval.shape[dim]}, which "
                         f"the {n} devices along {mesh_axis} do not divide")
    return wrap(bind(prims.psum_scatter, (node,), {"axes": axes, "axis": mesh_axis, "dim": dim}))


def ppermute(x, axis_name, perm):
    """Device `src` of each group along `axis_name` sends its block to device `dst`, for
    each (src, dst) in `perm`; a device no pair sends to gets zeros."""
    axes, mesh_axis, _ = _inside("ppermute", axis_name)
    node = node_of("ppermute", x)
    n = _group(axes, mesh_axis)
    try:
        pairs = tuple((int(s), int(d)) for s, d in perm)
    except (TypeError, ValueError):
        raise TypeError(f"ppermute: perm must be (source, destination) pairs, got {perm!r}") from None
    for s, d in pairs:
        if not (0 <= s < n and 0 <= d < n):
            raise ValueError(f"ppermute: pair {(s, d)} is outside the {n} devices along {mesh_axis}")
    if len({s for s, _ in pairs}) != len(pairs) or len({d for _, d in pairs}) != len(pairs):
        raise ValueError(f"ppermute: perm {pairs} sends from or to one device twice")
    return wrap(bind(prims.ppermute, (node,), {"axes": axes, "axis": mesh_axis, "perm": pairs}))


def all_to_all(x, axis_name, split_axis, concat_axis):
    """Each device splits its block along `split_axis` into one part per device along
    `axis_name`, sends part j to device j, and concatenates what it receives along
    `concat_axis` (in device order)."""
    axes, mesh_axis, _ = _inside("all_to_all", axis_name)
    node = node_of("all_to_all", x)
    split = axis_of("all_to_all", x, split_axis, "split_axis")
    concat = axis_of("all_to_all", x, concat_axis, "concat_axis")
    n = _group(axes, mesh_axis)
    if node.aval.shape[split] % n:
        raise ValueError(f"all_to_all: split_axis {split_axis!r} has size "
                         f"{node.aval.shape[split]}, which the {n} devices along {mesh_axis} "
                         "do not divide")
    return wrap(bind(prims.all_to_all, (node,), {"axes": axes, "axis": mesh_axis,
                                                 "split_dim": split, "concat_dim": concat}))


def axis_index(axis_name):
    """This device's index (an int32 0-d array) along mesh axis `axis_name`."""
    axes, axis, device = _inside("axis_index", axis_name)
    if len(axis) != 1:
        raise TypeError("axis_index: one mesh axis name, not a tuple")
    return wrap(bind(prims.axis_index, (), {"axes": axes, "axis": axis}, device))
