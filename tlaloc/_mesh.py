"""Meshes: named grids of devices, and how an array is laid out over one.

`Mesh({"data": 2, "model": 2})` arranges devices (by default the first four of
`tlaloc.devices("cpu")`) in a 2 x 2 grid whose axes are named. An array on a mesh lives on
the mesh's device (`mesh.device`, a `Device` whose backend runs programs on all of the
mesh's devices at once, partitioned by XLA); its layout maps array axis names to mesh axis
names (`Sharding`). Meshes with the same axes and devices are the same mesh (one device).
"""
from __future__ import annotations

import math
import threading

from ._devices import STATS, Device, device as as_device


class RemoteDevice:
    """A device of another process of a multi-process run (tlaloc.distributed): it appears
    in `tlaloc.devices()` and in meshes, but this process holds no buffers on it."""
    __slots__ = ("platform", "id", "process_index")

    def __init__(self, platform, pjrt_id, process_index):
        self.platform, self.id, self.process_index = platform, pjrt_id, process_index

    def __repr__(self):
        return f"Device({self.platform} id={self.id}, process {self.process_index})"


def _pjrt_of(dev):
    """The PJRT device behind a tlaloc device of the CPU (local or remote)."""
    from .backends import _jaxlib
    if isinstance(dev, RemoteDevice):
        return next(d for d in _jaxlib.pjrt_devices() if d.id == dev.id)
    return dev.backend.runtime.device


def devices(platform=None) -> list:
    """Every device of every process: the CPU devices in the run's global order (other
    processes' as RemoteDevice), then plugin devices, then the interpreter (left out when a
    platform is named)."""
    from ._devices import available_devices
    from .backends import _jaxlib
    if platform is not None and platform not in ("cpu",):
        return [d for d in local_devices(platform)]
    here, _ = _jaxlib.process_info()
    local = iter(d for d in available_devices() if d.platform == "cpu")
    found = [next(local) if d.process_index == here else RemoteDevice("cpu", d.id, d.process_index)
             for d in _jaxlib.pjrt_devices()]
    if platform is None:
        found += [d for d in available_devices() if d.platform != "cpu"]
    return found


def local_devices(platform=None) -> list:
    """The devices of this process (the interpreter left out when a platform is named)."""
    from ._devices import available_devices
    found = available_devices()
    if platform is not None:
        found = [d for d in found if d.platform == as_device(platform).platform]
    return found


class Mesh:
    """A named grid of devices: `Mesh({"data": 2, "model": 2}, devices=None)`.

    `devices` lists the devices in row-major order over the grid (default: the first ones
    of `tlaloc.devices("cpu")`); there must be exactly as many as the grid has cells."""
    __slots__ = ("axes", "devices", "_key", "_device")

    def __init__(self, axes, devices=None):
        if not isinstance(axes, dict) or not axes:
            raise TypeError(f"Mesh: axes must be a non-empty dict from axis names to sizes, "
                            f"got {axes!r}")
        for name, size in axes.items():
            if not isinstance(name, str) or not name.isidentifier():
                raise TypeError(f"Mesh: axis names must be identifiers, got {name!r}")
            if not isinstance(size, int) or isinstance(size, bool) or size < 1:
                raise ValueError(f"Mesh: axis {name!r} must have a positive int size, got {size!r}")
        needed = math.prod(axes.values())
        if devices is None:
            pool = globals()["devices"]("cpu")
            if needed > len(pool):
                shape = " x ".join(f"{n}={s}" for n, s in axes.items())
                raise ValueError(f"Mesh: the mesh {shape} needs {needed} devices, but the run has "
                                 f"{len(pool)} CPU device(s); set TLALOC_CPU_DEVICES={needed} (or "
                                 f"tlaloc.config.update(cpu_devices={needed}) before first use), "
                                 "or start more processes (tlaloc.distributed)")
            chosen = pool[:needed]
        else:
            chosen = [d if isinstance(d, (Device, RemoteDevice)) else as_device(d) for d in devices]
            if len(chosen) != needed:
                raise ValueError(f"Mesh: the mesh needs {needed} devices, got {len(chosen)}")
            if len(set(map(id, chosen))) != len(chosen):
                raise ValueError("Mesh: a device is listed twice")
            if any(d.platform != "cpu" for d in chosen):
                raise ValueError("Mesh: meshes of CPU devices are supported so far, got "
                                 f"{sorted({d.platform for d in chosen})}")
        self.axes = dict(axes)
        self.devices = tuple(chosen)
        self._key = (tuple(self.axes.items()), tuple(map(id, self.devices)))
        self._device = None

    @property
    def shape(self) -> dict:
        return dict(self.axes)

    @property
    def axis_names(self) -> tuple:
        return tuple(self.axes)

    @property
    def size(self) -> int:
        return len(self.devices)

    @property
    def device(self) -> "MeshDevice":
        """The device arrays on this mesh report (one per distinct mesh)."""
        if self._device is None:
            with _lock:
                self._device = _mesh_devices.get(self._key)
                if self._device is None:
                    self._device = _mesh_devices[self._key] = MeshDevice(self)
        return self._device

    def __eq__(self, other):
        return isinstance(other, Mesh) and other._key == self._key

    def __hash__(self):
        return hash(self._key)

    def __repr__(self):
        return f"Mesh({self.axes})"


_lock = threading.Lock()
_mesh_devices = {}


class MeshDevice(Device):
    """The device of arrays laid out over a mesh: its backend compiles each program once for
    all the mesh's devices (XLA's SPMD partitioner) and runs it on all of them."""
    __slots__ = ("mesh",)

    def __init__(self, mesh):
        super().__init__("cpu", -1)
        self.mesh = mesh

    def __repr__(self):
        axes = ", ".join(f"{n}={s}" for n, s in self.mesh.axes.items())
        return f"Device(mesh {axes})"

    def __reduce__(self):
        raise TypeError("arrays on a mesh do not pickle; gather them first (np.asarray)")

    @property
    def backend(self):
        b = self._backend
        if b is None:
            with _lock:
                if self._backend is None:
                    from .backends import _jaxlib
                    from .backends.spmd import SpmdBackend
                    runtime = _jaxlib.SpmdRuntime(_jaxlib.cpu_client(),
                                                  [_pjrt_of(d) for d in self.mesh.devices])
                    self._backend = SpmdBackend(runtime, tuple(self.mesh.axes.items()), STATS)
                b = self._backend
        return b


# ----------------------------------------------------------------------------- layouts by name

def spec_of_mapping(where, aval, mesh, mapping, divisible=True) -> tuple:
    """The spec (one tuple of mesh axes per array axis) that `mapping` (array axis names ->
    a mesh axis name or a tuple of them) gives an array of `aval` on `mesh`; ValueError or
    TypeError naming what is wrong. mesh=None checks the names only; divisible=False leaves
    out the check that the mesh axes divide the axis sizes (for a block's layout)."""
    if not isinstance(mapping, dict):
        raise TypeError(f"{where}: the layout must be a dict from array axis names to mesh "
                        f"axis names ({{}} replicates), got {mapping!r}")
    names = aval.names
    if mapping and names is None:
        raise ValueError(f"{where}: the array's axes have no names, so {mapping!r} names no "
                         "axis of it; name them first (tlaloc.rename(x, (...)) or names=)")
    spec = [()] * len(aval.shape)
    used = {}
    for axis_name, mesh_axes in mapping.items():
        if axis_name not in names:
            raise ValueError(f"{where}: the array has no axis named {axis_name!r} (its axes "
                             f"are {names})")
        if isinstance(mesh_axes, str):
            mesh_axes = (mesh_axes,)
        if not isinstance(mesh_axes, tuple) or not all(isinstance(a, str) for a in mesh_axes):
            raise TypeError(f"{where}: axis {axis_name!r} must map to a mesh axis name or a "
                            f"tuple of them, got {mesh_axes!r}")
        for m in mesh_axes:
            if mesh is not None and m not in mesh.axes:
                raise ValueError(f"{where}: the mesh has no axis named {m!r} (its axes are "
                                 f"{tuple(mesh.axes)})")
            if m in used:
                raise ValueError(f"{where}: mesh axis {m!r} is used for two array axes "
                                 f"({used[m]!r} and {axis_name!r}); an array axis can be split "
                                 "over a mesh axis only once")
            used[m] = axis_name
        k = names.index(axis_name)
        parts = 1 if mesh is None else math.prod(mesh.axes[m] for m in mesh_axes)
        if divisible and aval.shape[k] % parts:
            raise ValueError(f"{where}: axis {axis_name!r} has size {aval.shape[k]}, which the "
                             f"mesh axes {mesh_axes} ({parts} devices) do not divide; pad it "
                             "to a multiple, or lay it out over fewer devices")
        spec[k] = mesh_axes
    return tuple(spec)


def block_shape(shape, spec, mesh) -> tuple:
    """The shape of one device's block of an array of `shape` laid out as `spec`."""
    return tuple(n // math.prod(mesh.axes[m] for m in dim) for n, dim in zip(shape, spec))


class Sharding:
    """How an array is laid out: its `mesh` and `mapping` (array axis -> mesh axis or axes;
    an unnamed array axis appears by position). `spec` has one tuple of mesh axes per array
    axis. Axes not in the mapping are whole on every device."""
    __slots__ = ("mesh", "spec", "mapping")

    def __init__(self, mesh, spec, names):
        self.mesh = mesh
        if spec is None:    # a layout XLA chose that no mapping of axes describes
            self.spec = self.mapping = None
            return
        self.spec = tuple(spec)
        names = names or (None,) * len(spec)
        self.mapping = {(n if n is not None else k): (dim[0] if len(dim) == 1 else dim)
                        for k, (n, dim) in enumerate(zip(names, spec)) if dim}

    def __eq__(self, other):
        return isinstance(other, Sharding) and (self.mesh, self.spec) == (other.mesh, other.spec)

    def __hash__(self):
        return hash((self.mesh, self.spec))

    def __repr__(self):
        if self.spec is None:
            return f"Sharding({self.mesh}, <a layout no axis mapping describes>)"
        return f"Sharding({self.mesh}, {self.mapping})"


class Shard:
    """One device's part of an array: `device`, `index` (a tuple of slices into the global
    array) and `data` (that part, as an array on `device`)."""
    __slots__ = ("device", "index", "data")

    def __init__(self, device, index, data):
        self.device, self.index, self.data = device, index, data

    def __repr__(self):
        return f"Shard(device={self.device}, index={self.index}, shape={self.data.shape})"


def is_mesh_device(dev) -> bool:
    return isinstance(dev, MeshDevice)


def sharding_of(node) -> Sharding:
    """The layout of a computed node on a mesh."""
    mesh = node.device.mesh
    value = node.value
    ndim = len(node.aval.shape)
    if type(value).__module__ == "numpy":     # a host value not sent yet: copies everywhere
        spec = ((),) * ndim
    else:
        spec = node.device.backend.spec(value, ndim)
    return Sharding(mesh, spec, node.aval.names)


def shards_of(node) -> list:
    """(device, index, single-device buffer) of this process's parts of a computed node."""
    backend = node.device.backend
    value = node.value
    if type(value).__module__ == "numpy":
        value = backend._as_buffer(node)
    mesh = node.device.mesh
    return [(mesh.devices[p], index, buf) for p, index, buf in backend.shards(value, node.aval.shape)]
