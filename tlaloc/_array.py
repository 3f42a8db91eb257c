"""The Array: an immutable, lazy handle on a recorded value.

Reading `shape`, `dtype`, `device` never computes. Converting to Python or NumPy does (the
evaluation triggers listed in docs/execution.md). In-place operators compute a new value and
rebind this Python object to it; other references to the old value are unaffected.

The operators (`+`, `@`, `x[i]`, `x[i] = v`, ...) and the methods that are namespace functions
(`T`, `mT`, `rename`, `align_to`) and `__array_namespace__` are the namespace's: it installs
them onto Array from one table (tlaloc/_operators.py). This module imports nothing of it.
"""
from __future__ import annotations

import math
import weakref

import numpy as np

from . import _dtypes as dt
from . import _graph
from . import _mesh
from . import _context
from ._context import trace
from ._devices import default_device, device as as_device
from ._graph import evaluate, transfer, note_pending_owner as _note_pending_owner


_new = object.__new__
_weakref = weakref.ref


def from_node(node) -> "Array":
    """The Array showing `node` (every operation's result is made here)."""
    self = _new(Array)
    self._node = node       # its aval holds the shape, dtype and axis names
    if node.value is None:
        if node.owner is None:      # a new result: Array._own's common case, inline
            node.owner = ref = _weakref(self)
            if not (_context.engaged and trace.jit_depth):
                _note_pending_owner(ref)
        else:
            self._own(node)
    return self


class Array:
    # `_view`: set only on arrays that share storage with others (tlaloc/_api/views.py);
    # unset on every other array, so recording never touches it
    __slots__ = ("_node", "_view", "__weakref__")
    __array_priority__ = 100  # NumPy defers binary operators with a NumPy left operand to us

    def __init__(self, *args, **kwargs):
        raise TypeError("tlaloc arrays are made by the namespace functions "
                        "(tlaloc.asarray, tlaloc.zeros, ...), not by the Array constructor")

    _from_node = staticmethod(from_node)

    def _own(self, node, replacing=None) -> None:
        """Show the pending `node` as this array's value, unless a live array other than
        `replacing` already does: the depth bound's cuts compute the pending values arrays
        show (and a plan returns them), so the value a loop goes on with is kept, not
        recomputed by every later program. `x[i] = v` and `x += y` rebind x to the node of
        a temporary result (`replacing`), which dies right after."""
        owner = node.owner
        if owner is None or owner() is None or owner() is replacing:
            node.owner = ref = _weakref(self)   # a pending value the user can still reach
            if not (_context.engaged and trace.jit_depth):
                _note_pending_owner(ref)

    def _rebind(self, other: "Array", opname: str) -> "Array":
        """In-place operators: the result must keep this array's shape and dtype."""
        if other.dtype is not self.dtype:
            raise TypeError(f"{opname}: in-place result would have dtype {other.dtype}, "
                            f"but the array has dtype {self.dtype}")
        if other.shape != self.shape:
            raise ValueError(f"{opname}: in-place result would have shape {other.shape}, "
                             f"but the array has shape {self.shape}")
        old = self._node
        if old.owner is not None and old.owner() is self:
            old.owner = None    # this array no longer shows it: plans need not return it
        node = self._node = other._node
        if node.value is None:
            self._own(node, replacing=other)
        return self

    # ------------------------------------------------------------------ metadata

    @property
    def shape(self) -> tuple:
        return self._node.aval.shape

    @property
    def dtype(self) -> dt.DType:
        return self._node.aval.dtype

    @property
    def device(self):
        return self._node.device

    @property
    def sharding(self):
        """The layout over a mesh (a tlaloc.Sharding: the mesh and a mapping from array axes
        to mesh axes), or None for an array on one device. A pending array on a mesh is
        computed first: XLA's partitioner decides the layout of what it computes."""
        node = self._node
        if not _mesh.is_mesh_device(node.device):
            return None
        evaluate([node], ".sharding")
        return _mesh.sharding_of(node)

    @property
    def addressable_shards(self) -> list:
        """This process's parts of the array (tlaloc.Shard: `.device`, `.index`, a tuple of
        slices into the array, and `.data`, that part as an array on `.device`)."""
        node = self._node
        if not _mesh.is_mesh_device(node.device):
            return [_mesh.Shard(node.device, tuple(slice(0, n) for n in self.shape), self)]
        evaluate([node], ".addressable_shards")
        aval = node.aval
        return [_mesh.Shard(dev, index, Array._from_node(_graph.leaf(
                    buf, _graph.Aval(tuple(s.stop - s.start for s in index), aval.dtype, aval.names), dev)))
                for dev, index, buf in _mesh.shards_of(node)]

    @property
    def names(self) -> tuple:
        """One name (a str) or None per axis (they live in the abstract value)."""
        names = self._node.aval.names
        return names if names is not None else (None,) * len(self._node.aval.shape)

    @property
    def _names(self):
        """The abstract value's names: None when no axis is named."""
        return self._node.aval.names

    @property
    def ndim(self) -> int:
        return len(self._node.aval.shape)

    @property
    def size(self) -> int:
        return math.prod(self._node.aval.shape)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def to_device(self, device, /, *, stream=None) -> "Array":
        if stream is not None:
            raise ValueError("to_device: tlaloc has no streams; pass stream=None")
        try:
            target = as_device(device)
        except (TypeError, ValueError) as e:
            raise type(e)(f"to_device: {e}") from None
        if target == self.device:
            return self
        return Array._from_node(transfer(self._node, target))

    # ------------------------------------------------------------------ evaluation triggers

    # Each trigger names itself to evaluate() for profiles and tlaloc.explain (compiled
    # modules have no frames to read the name from: docs/native.md).

    def _host(self, trigger="reading the value") -> np.ndarray:
        """The value as a host array (computes it if pending), for reading inside tlaloc."""
        node = self._node
        if node.value is None or type(node.value) is not np.ndarray:
            evaluate([node], trigger)
            return node.device.backend.to_numpy(node.value)
        return node.value

    def _numpy(self, trigger="reading the value") -> np.ndarray:
        """The value as a read-only host array (computes it if pending)."""
        host = self._host(trigger)
        if host.flags.writeable:
            # the interpreter's values are plain NumPy arrays: hand out a read-only view, so
            # np.asarray(x, copy=False) or from_dlpack(copy=False) cannot change this value
            host = host.view()
            host.flags.writeable = False
        return host

    def _leaving(self, what):
        """The value is about to leave tlaloc as data: refused while it depends on an input
        being differentiated (it would carry no derivative: a silently wrong gradient)."""
        if trace.retain_graph and _graph.reaches_variable(self._node):
            raise _graph.DerivativeLostError(
                f"{what}: this array depends on an input being differentiated, and its value "
                "would leave the graph without a derivative; compute with tlaloc functions, "
                "or wrap it in tlaloc.stop_gradient(x) where no derivative is wanted")

    def __array__(self, dtype=None, copy=None):
        self._leaving("__array__")
        host = self._numpy("np.asarray()")
        if copy is False:
            if dtype is not None and np.dtype(dtype) != host.dtype:
                raise ValueError("__array__: copy=False, but a dtype conversion needs a copy")
            return host
        return np.array(host, dtype=dtype, copy=True)  # writeable, owned by the caller

    def _scalar(self, kind: str, trigger: str):
        if self.size != 1:
            raise TypeError(f"only single-element arrays convert to Python {kind}, "
                            f"got shape {self.shape}")
        return self._host(trigger).item()

    def __bool__(self) -> bool:
        if self.size != 1:
            raise ValueError(f"the truth value of an array of shape {self.shape} is ambiguous; "
                             "use xp.any or xp.all")
        return bool(self._scalar("bool", "bool()"))

    def __int__(self) -> int:
        if self.dtype.kind == "c":
            raise TypeError("int() of a complex array; take xp.real first")
        return int(self._scalar("int", "int()"))

    def __float__(self) -> float:
        if self.dtype.kind == "c":
            raise TypeError("float() of a complex array; take xp.real first")
        return float(self._scalar("float", "float()"))

    def __complex__(self) -> complex:
        return complex(self._scalar("complex", "complex()"))

    def __index__(self) -> int:
        if self.dtype.kind not in dt.INTEGER_KINDS:
            raise TypeError(f"only integer arrays can be used as an index, got {self.dtype}")
        if self.ndim != 0:
            raise TypeError(f"only 0-d integer arrays can be used as an index, got shape {self.shape}")
        return int(self._scalar("int", "operator.index()"))

    def item(self):
        return self._scalar("scalar", ".item()")

    def tolist(self):
        self._leaving("tolist")
        return self._numpy(".tolist()").tolist()

    def __dlpack__(self, /, *, stream=None, max_version=None, dl_device=None, copy=None):
        """The value for a DLPack consumer, from the memory `__dlpack_device__` names: a
        GPU array's device buffer itself (copy=True: a device copy), or host memory (CPU and
        interpreter arrays; any array asked for dl_device=(1, 0), kDLCPU, by copying)."""
        here = self.__dlpack_device__()
        wanted = here if dl_device is None else tuple(dl_device)
        if wanted not in (here, (1, 0)):
            raise BufferError(f"__dlpack__: the array is on {self.device} {here}; it exports "
                              f"there or to host memory (1, 0), not dl_device={wanted}")
        self._leaving("__dlpack__")
        if wanted != (1, 0):
            evaluate([self._node], "__dlpack__()")
            return self.device.backend.to_dlpack(self._node, stream=stream, copy=copy is True)
        if here != (1, 0):
            if copy is False:
                raise BufferError(f"__dlpack__(copy=False): the value is in {self.device}'s "
                                  "memory; host memory (dl_device=(1, 0)) needs a copy")
            copy = True
        host = self._numpy("__dlpack__()")   # read-only: the value is immutable
        if self.dtype is dt.bfloat16:
            return _bfloat16_capsule(host, copy, stream)
        if copy is not False:
            host = np.array(host, copy=True)    # writeable, owned by the consumer
        elif max_version is None or tuple(max_version) < (1, 0):
            # A DLPack 0.x capsule cannot mark memory read-only (NumPy refuses to export it),
            # and the standard allows a copy only when copy is None: BufferError. DLPack 1.x
            # consumers (NumPy >= 2.1) get the value zero-copy, flagged read-only.
            raise BufferError("__dlpack__(copy=False): the value is read-only memory, which "
                              "only a DLPack >= 1.0 consumer (max_version) can take without a copy")
        kwargs = {} if max_version is None else {"max_version": max_version}
        if dl_device is not None:
            kwargs["dl_device"] = dl_device
        return host.__dlpack__(stream=stream, **kwargs)

    def __dlpack_device__(self):
        """Where `__dlpack__` exports from: (kDLCUDA = 2, i) for an array on cuda:i, (kDLCPU
        = 1, 0) for CPU and interpreter arrays and platforms exported through host memory."""
        return self.device.backend.dlpack_device(self.device)

    def __repr__(self) -> str:
        host = self._numpy("repr()/print()")
        prefix = "Array("
        if host.size == 0:
            body = f"[], shape={host.shape}"
        else:
            body = np.array2string(host, separator=", ", prefix=prefix, threshold=1000)
        extra = ""
        if self.device != default_device():
            extra = f", device={self.device}"
        if self._node.aval.names is not None:
            extra += f", names={self._node.aval.names}"
        return f"{prefix}{body}, dtype={self.dtype}{extra})"

    __str__ = __repr__

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        for i in range(self.shape[0]):
            yield self[i]

    def __hash__(self):
        raise TypeError("tlaloc arrays are not hashable")

    def __reduce__(self):
        """Pickled by value: the value (computed if pending: an evaluation trigger), its
        dtype, its device's platform and index, and its axis names. Refused while the value
        depends on an input being differentiated (DerivativeLostError) or is traced without
        values by jit (ConcretizationError), as every conversion to host data is."""
        self._leaving("pickle")
        device = self.device
        return (_unpickle, (self._numpy(), self.dtype.name, device.platform, device.index,
                            self._node.aval.names))


def _bfloat16_capsule(host, copy, stream):
    """A DLPack capsule of a bfloat16 value, which NumPy's DLPack cannot export: from a copy
    in a CPU buffer, through jaxlib. Its capsule (DLPack 0.x) cannot mark memory read-only,
    so the consumer always gets its own copy (copy=False: BufferError)."""
    if copy is False:
        raise BufferError("__dlpack__(copy=False): bfloat16 values are exported through a "
                          "copy (their DLPack 0.x capsule cannot be read-only)")
    cpu = as_device("cpu")
    leaf = _graph.leaf(host, _graph.Aval(host.shape, dt.bfloat16), cpu)
    # copy=True: a 0-d value's buffer may be the CPU backend's shared scalar
    return cpu.backend.to_dlpack(leaf, stream=stream, copy=True)


def _unpickle(host, dtype_name, platform, index, names) -> Array:
    """An unpickled array: on the device of that platform and index in this process, else
    the platform's first device, else the default device (a CUDA array unpickled where no
    GPU is)."""
    dtype = dt._by_name(dtype_name)
    host = np.asarray(host, dtype=dtype.numpy)
    host.flags.writeable = False    # the value of an immutable array
    node = _graph.leaf(host, _graph.Aval(host.shape, dtype, names), _device_like(platform, index))
    return Array._from_node(node)


def _device_like(platform, index):
    for spec in (f"{platform}:{index}", f"{platform}:0"):
        try:
            dev = as_device(spec)
            dev.backend   # made once per device; raises where this process lacks it
            return dev
        except (ValueError, RuntimeError):
            continue
    return default_device()

