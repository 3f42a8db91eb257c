"""Programs over a mesh of devices: compiled once by XLA's SPMD partitioner (Shardy), run
on every device of the mesh at once.

A mesh is a grid of devices with named axes, given here as `axes`: ((name, size), ...) in
row-major order over the mesh's device positions. An array on the mesh is laid out by a
*spec*: one tuple of mesh axis names per array axis (the array axis is split over those
mesh axes, in that order; `()` keeps it whole), every mesh axis that no array axis uses
holding copies. A spec is what `sdy.sharding` annotations say; the buffers carry the same
layout as an HloSharding (logical device ids = mesh positions), and programs are keyed by
their leaves' layouts, so the same code on differently laid-out arrays compiles again.

Results come back laid out as XLA's propagation chose; `spec_of` reads the spec back.
"""
from __future__ import annotations

import itertools
import math
import threading
import time

import numpy as np

from .. import _context
from .._dtypes import from_numpy
from .._graph import Aval
from ..lowering import lower_program
from ..lowering.stablehlo import tensor_type
from .interpreter import to_host
from .._protocol import Backend


# ----------------------------------------------------------------------------- layouts

def layout_of_spec(runtime, axes, spec):
    """The HloSharding that lays an array out over the mesh as `spec` says."""
    names = [a for a, _ in axes]
    sizes = dict(axes)
    grid = np.arange(math.prod(sizes.values())).reshape([s for _, s in axes])
    used = [a for dim in spec for a in dim]
    rest = [a for a in names if a not in used]
    order = [names.index(a) for a in used + rest]
    tile_dims = [math.prod(sizes[a] for a in dim) for dim in spec]
    copies = math.prod(sizes[a] for a in rest)
    devices = grid.transpose(order).reshape(-1).tolist()
    if copies > 1:
        tile_dims.append(copies)
    return runtime.layout(tile_dims, devices, copies > 1)


def spec_of(runtime, axes, layout, ndim):
    """The spec whose layout is `layout` (None if XLA chose one no spec describes)."""
    if layout.is_replicated():
        return ((),) * ndim
    dims = list(layout.tile_assignment_dimensions())[:ndim]
    sizes = dict(axes)
    names = [a for a, _ in axes]

    def choices(k, free):
        """Ordered tuples of unused mesh axes whose sizes multiply to dims[k]."""
        for r in range(len(free) + 1):
            for combo in itertools.permutations(free, r):
                if math.prod(sizes[a] for a in combo) == dims[k]:
                    yield combo

    def search(k, free, spec):
        if k == ndim:
            return spec if layout_of_spec(runtime, axes, spec) == layout else None
        for combo in choices(k, free):
            found = search(k + 1, [a for a in free if a not in combo], spec + (combo,))
            if found is not None:
                return found
        return None

    return search(0, names, ())


def sdy_spec(spec) -> str:
    """`[{"data"}, {}]`: a spec as Shardy writes it."""
    return "[" + ", ".join("{" + ", ".join(f'"{a}"' for a in dim) + "}" for dim in spec) + "]"


def sdy_mesh(axes) -> str:
    return "<[" + ", ".join(f'"{a}"={s}' for a, s in axes) + "]>"


# ----------------------------------------------------------------------------- the backend

class _Entry:
    __slots__ = ("program", "executable", "handlers", "layouts", "text")


class SpmdBackend(Backend):
    """Runs plans on every device of one mesh (always compiled: XLA partitions them)."""

    def __init__(self, runtime, axes, stats):
        self.runtime = runtime
        self.axes = axes
        self.stats = stats
        self.platform = runtime.platform
        self._entries = {}
        self._lock = threading.Lock()
        self._replicated = None
        self._scalars = {}

    # -------------------------------------------------------------- values

    def replicated(self):
        if self._replicated is None:
            self._replicated = layout_of_spec(self.runtime, self.axes, ())
        return self._replicated

    def put(self, array: np.ndarray, spec):
        """A host array laid out over the mesh as `spec` says."""
        return self.runtime.put(np.ascontiguousarray(array), layout_of_spec(self.runtime, self.axes, spec))

    def local_box(self, where, local_shape, spec):
        """(global shape, offsets of this process's part) for an array whose part on this
        process's devices has `local_shape` under `spec`: along each axis, this process's
        devices must hold consecutive tiles (ValueError otherwise)."""
        names = [a for a, _ in self.axes]
        sizes = dict(self.axes)
        coords = list(np.ndindex(*[s for _, s in self.axes]))
        shape, offsets = [], []
        for k, (n, dim) in enumerate(zip(local_shape, spec)):
            held = set()
            for p, _ in self.runtime.local:
                t = 0
                for a in dim:
                    t = t * sizes[a] + coords[p][names.index(a)]
                held.add(t)
            held = sorted(held)
            count = len(held)
            if held != list(range(held[0], held[0] + count)):
                raise ValueError(f"{where}: this process's devices hold tiles {held} of axis {k}, "
                                 "not consecutive ones; order the mesh's devices by process")
            if n % count:
                raise ValueError(f"{where}: axis {k} of the local part has size {n}, which this "
                                 f"process's {count} tiles along it do not divide")
            tile = n // count
            shape.append(tile * math.prod(sizes[a] for a in dim))
            offsets.append(held[0] * tile)
        return tuple(shape), tuple(offsets)

    def put_local(self, host, shape, spec, offsets):
        """The global array of `shape` laid out as `spec` whose tiles on this process's
        devices are those of `host`, this process's part (at `offsets`)."""
        def part(index):
            if index is None:
                return host
            return host[tuple(slice(s.start - o, s.stop - o) for s, o in zip(index, offsets))]
        return self.runtime.put_parts(shape, host.dtype, layout_of_spec(self.runtime, self.axes, spec),
                                      part)

    def transfer_in(self, value, source_device):
        return self.runtime.put(np.ascontiguousarray(source_device.backend.to_numpy(value)),
                                self.replicated())

    def _as_buffer(self, leaf):
        value = leaf.value
        if isinstance(value, np.ndarray):
            if value.ndim == 0:    # Python scalars: one set of copies per value, reused
                key = (value.dtype, value.tobytes())
                buf = self._scalars.get(key)
                if buf is None:
                    if len(self._scalars) >= 64:
                        self._scalars.clear()
                    buf = self._scalars[key] = self.runtime.put(value, self.replicated())
                value = buf
            else:
                value = leaf.value = self.runtime.put(np.ascontiguousarray(value), self.replicated())
        return value

    def spec(self, value, ndim):
        """The spec of a value of this mesh (None: a layout no spec describes)."""
        return spec_of(self.runtime, self.axes, self.runtime.layout_of(value), ndim)

    def shards(self, value, shape):
        """[(device position, tuple of slices, single-device array)] of this process."""
        tiles = self.runtime.tiles(self.runtime.layout_of(value), shape)
        full = tuple(slice(0, n) for n in shape)
        return [(p, full if tiles is None else tiles[p], a) for p, a in self.runtime.shards(value)]

    def to_numpy(self, value) -> np.ndarray:
        if isinstance(value, np.ndarray):
            return value
        shape = tuple(value.aval.shape)
        parts = self.shards(value, shape)
        if len(parts) < len(self.runtime.devices) and not self.runtime.layout_of(value).is_replicated():
            # some tiles live in other processes: every process gathers a full copy
            value = self.relaid(value, ((),) * len(shape))
            parts = self.shards(value, shape)
        out = None
        for _, index, a in parts:
            block = to_host(a)
            if out is None:
                if all(s == slice(0, n) for s, n in zip(index, shape)):
                    return block
                out = np.empty(shape, block.dtype)
            out[index] = block
        return out

    def relaid(self, value, spec):
        """`value` laid out as `spec` instead, device to device (a program returning its
        input with that layout; `spec` all copies: every process gets all of it)."""
        shape = tuple(value.aval.shape)
        aval = Aval(shape, from_numpy(np.dtype(value.aval.dtype)))
        layout = self.runtime.layout_of(value)
        key = ("relaid", aval, layout, spec)
        entry = self._entries.get(key)
        if entry is None:
            current = self.spec(value, len(shape))
            if current is None:
                raise RuntimeError(f"internal: a layout no spec describes: {layout}")
            text = _identity_text(self.axes, aval, current, spec)
            entry = self._compiled(key, text, [aval], None)
        return self.runtime.execute(entry.executable, entry.handlers, [value])[0]

    # -------------------------------------------------------------- running

    def run(self, plan, leaves, *, compiled=False):
        buffers = [self._as_buffer(l) for l in leaves]
        entry = self._entry(plan, buffers)
        with _context.phase("execute"):
            return self.runtime.execute(entry.executable, entry.handlers, buffers)

    def _entry(self, plan, buffers):
        """The compiled program of `plan` on inputs laid out as `buffers` are."""
        layouts = tuple([self.runtime.layout_of(b) for b in buffers])
        # a plan run many times (jit) keeps its executables by layouts: hashing its long key
        # at every call would cost time proportional to the program
        mine = plan.entry if plan.keeps_entry else None
        entry = mine.get(layouts) if mine is not None else None
        if entry is None:
            entry = self._entries.get((plan.key, layouts))
        if entry is not None:
            self.stats.hits += 1
            if plan.keeps_entry:
                if mine is None:
                    mine = plan.entry = {}
                mine[layouts] = entry
            return entry
        key = (plan.key, layouts)
        program = plan.program()
        text = program.text     # an exported program arrives lowered, for these layouts
        if text is None:
            specs = [self.spec(b, len(a.shape)) for b, a in zip(buffers, program.in_avals)]
            text = lower_program(program, **lowering_attributes(self.axes, specs, program.donated))
        return self._compiled(key, text, program.out_avals(), program)

    def _compiled(self, key, text, out_avals, program):
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                return entry
            start = time.perf_counter()
            with _context.phase("compile"):
                executable = self.runtime.compile(text)
            entry = _Entry()
            entry.program, entry.executable, entry.text = program, executable, text
            entry.handlers, entry.layouts = self.runtime.handlers(
                executable, [(a.shape, a.dtype.numpy) for a in out_avals])
            seconds = time.perf_counter() - start
            self.stats.misses += 1
            self.stats.compiles += 1
            self.stats.compile_seconds += seconds
            obs = _context.observer
            if obs is not None and program is not None:
                obs.compiled(program, text, executable, self.runtime, seconds)
            self._entries[key] = entry
            return entry

    def program_text(self, plan):
        program = plan.program()
        specs = []
        for leaf, aval in zip(plan.leaves, program.in_avals):
            value = leaf.value
            # a value not on the mesh yet (a host value, a transfer) arrives with copies
            specs.append(self.spec(value, len(aval.shape)) if self.runtime.is_array(value)
                         else ((),) * len(aval.shape))
        return lower_program(program, **lowering_attributes(self.axes, specs, program.donated))

    def compiled_text(self, program, leaves) -> str:
        """The partitioned, optimized HLO of `program` on the values of `leaves` (compiled,
        not run; tlaloc.collectives reads the collectives in it)."""
        buffers = [self._as_buffer(l) for l in leaves]
        specs = [self.spec(b, len(a.shape)) for b, a in zip(buffers, program.in_avals)]
        text = lower_program(program, **lowering_attributes(self.axes, specs, program.donated))
        entry = self._compiled(("text", text), text, program.out_avals(), program)
        return self.runtime.optimized_hlo(entry.executable)

    def ready(self, value) -> None:
        if not isinstance(value, np.ndarray):
            value.block_until_ready()

    def wait_for_compiles(self):
        pass


def lowering_attributes(axes, specs, donated=()) -> dict:
    """lower_program's keyword arguments for a program over the mesh `axes` whose inputs are
    laid out as `specs` (outputs: as XLA's propagation chooses)."""
    n = math.prod(s for _, s in axes)
    arg_attrs = []
    for i, spec in enumerate(specs):
        attrs = [f"sdy.sharding = #sdy.sharding<@mesh, {sdy_spec(spec)}>"] if spec is not None else []
        if i in donated:
            attrs.append("jax.buffer_donor = true")
        arg_attrs.append(", ".join(attrs))
    return {"module_attrs": f"mhlo.num_partitions = {n} : i32, mhlo.num_replicas = 1 : i32",
            "prelude": f"sdy.mesh @mesh = {sdy_mesh(axes)}", "arg_attrs": arg_attrs}


def _identity_text(axes, aval, spec, out_spec):
    """A program returning its input (laid out as `spec`) laid out as `out_spec`."""
    n = math.prod(s for _, s in axes)
    t = tensor_type(aval)
    return (f"module @relayout attributes {{mhlo.num_partitions = {n} : i32, "
            f"mhlo.num_replicas = 1 : i32}} {{\n  sdy.mesh @mesh = {sdy_mesh(axes)}\n"
            f"  func.func public @main(%arg0: {t} {{sdy.sharding = #sdy.sharding<@mesh, "
            f"{sdy_spec(spec)}>}}) -> ({t} {{sdy.sharding = #sdy.sharding<@mesh, {sdy_spec(out_spec)}>}}) {{\n"
            f'    "func.return"(%arg0) : ({t}) -> ()\n  }}\n}}\n')
