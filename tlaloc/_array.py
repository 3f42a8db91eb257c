"""The Array: an immutable, lazy handle on a recorded value.

Reading `shape`, `dtype`, `device` never computes. Converting to Python or NumPy does (the
evaluation triggers listed in docs/execution.md). In-place operators compute a new value and
rebind this Python object to it; other references to the old value are unaffected.
"""
from __future__ import annotations

import builtins
import math
import weakref

import numpy as np

from . import _dtypes as dt
from . import _graph
from ._context import trace
from ._graph import evaluate

_API_VERSIONS = (None, "2021.12", "2022.12", "2023.12", "2024.12", "2025.12")


class Array:
    __slots__ = ("_node", "__weakref__")
    __array_priority__ = 100  # NumPy defers binary operators with a NumPy left operand to us

    def __init__(self, *args, **kwargs):
        raise TypeError("tlaloc arrays are made by the namespace functions "
                        "(tlaloc.asarray, tlaloc.zeros, ...), not by the Array constructor")

    @classmethod
    def _from_node(cls, node) -> "Array":
        self = object.__new__(cls)
        self._node = node       # its aval holds the shape, dtype and axis names
        if node.owner is None and node.value is None:
            node.owner = ref = weakref.ref(self)   # a pending value the user can still reach
            if not trace.jit_depth:
                _graph.note_pending_owner(ref)
        return self

    def _rebind(self, other: "Array", opname: str) -> "Array":
        """In-place operators: the result must keep this array's shape and dtype."""
        if other.dtype is not self.dtype:
            raise TypeError(f"{opname}: in-place result would have dtype {other.dtype}, "
                            f"but the array has dtype {self.dtype}")
        if other.shape != self.shape:
            raise ValueError(f"{opname}: in-place result would have shape {other.shape}, "
                             f"but the array has shape {self.shape}")
        self._node = other._node
        if self._node.owner is None and self._node.value is None:
            self._node.owner = ref = weakref.ref(self)
            if not trace.jit_depth:
                _graph.note_pending_owner(ref)
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
    def names(self) -> tuple:
        """One name (a str) or None per axis (they live in the abstract value)."""
        names = self._node.aval.names
        return names if names is not None else (None,) * len(self._node.aval.shape)

    @property
    def _names(self):
        """The abstract value's names: None when no axis is named."""
        return self._node.aval.names

    def rename(self, *names, **mapping) -> "Array":
        """This array with new axis names: rename("batch", None) names every axis;
        rename(old="new") renames some."""
        from .named import rename
        return rename(self, *names, **mapping)

    def align_to(self, *names) -> "Array":
        from .named import align_to
        return align_to(self, *names)

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

    @property
    def T(self) -> "Array":
        if self.ndim != 2:
            raise ValueError(f"Array.T needs a 2-d array, got {self.ndim}-d; use permute_dims or mT")
        return _manip.permute_dims(self, (1, 0))

    @property
    def mT(self) -> "Array":
        return _linalg.matrix_transpose(self)

    def __array_namespace__(self, /, *, api_version=None):
        if api_version not in _API_VERSIONS:
            raise ValueError(f"tlaloc implements the array API 2025.12 (and older versions "
                             f"{_API_VERSIONS[1:-1]}); got api_version={api_version!r}")
        import tlaloc
        return tlaloc

    def to_device(self, device, /, *, stream=None) -> "Array":
        if stream is not None:
            raise ValueError("to_device: tlaloc has no streams; pass stream=None")
        from ._devices import device as as_device
        from ._graph import transfer
        try:
            target = as_device(device)
        except (TypeError, ValueError) as e:
            raise type(e)(f"to_device: {e}") from None
        if target == self.device:
            return self
        return Array._from_node(transfer(self._node, target))

    # ------------------------------------------------------------------ evaluation triggers

    def _host(self) -> np.ndarray:
        """The value as a host array (computes it if pending), for reading inside tlaloc."""
        node = self._node
        if node.value is None or type(node.value) is not np.ndarray:
            evaluate([node])
            return node.device.backend.to_numpy(node.value)
        return node.value

    def _numpy(self) -> np.ndarray:
        """The value as a read-only host array (computes it if pending)."""
        host = self._host()
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
        host = self._numpy()
        if copy is False:
            if dtype is not None and np.dtype(dtype) != host.dtype:
                raise ValueError("__array__: copy=False, but a dtype conversion needs a copy")
            return host
        return np.array(host, dtype=dtype, copy=True)  # writeable, owned by the caller

    def _scalar(self, kind: str):
        if self.size != 1:
            raise TypeError(f"only single-element arrays convert to Python {kind}, "
                            f"got shape {self.shape}")
        return self._host().item()

    def __bool__(self) -> builtins.bool:
        if self.size != 1:
            raise ValueError(f"the truth value of an array of shape {self.shape} is ambiguous; "
                             "use xp.any or xp.all")
        return builtins.bool(self._scalar("bool"))

    def __int__(self) -> builtins.int:
        if self.dtype.kind == "c":
            raise TypeError("int() of a complex array; take xp.real first")
        return builtins.int(self._scalar("int"))

    def __float__(self) -> builtins.float:
        if self.dtype.kind == "c":
            raise TypeError("float() of a complex array; take xp.real first")
        return builtins.float(self._scalar("float"))

    def __complex__(self) -> builtins.complex:
        return builtins.complex(self._scalar("complex"))

    def __index__(self) -> builtins.int:
        if self.dtype.kind not in "iu":
            raise TypeError(f"only integer arrays can be used as an index, got {self.dtype}")
        if self.ndim != 0:
            raise TypeError(f"only 0-d integer arrays can be used as an index, got shape {self.shape}")
        return builtins.int(self._scalar("int"))

    def item(self):
        return self._scalar("scalar")

    def tolist(self):
        self._leaving("tolist")
        return self._numpy().tolist()

    def __dlpack__(self, /, *, stream=None, max_version=None, dl_device=None, copy=None):
        if dl_device is not None and tuple(dl_device) != (1, 0):
            raise BufferError(f"__dlpack__: tlaloc exports host (kDLCPU) memory only, "
                              f"dl_device={tuple(dl_device)} was asked for")
        self._leaving("__dlpack__")
        host = self._numpy()   # read-only: the value is immutable
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
        if self.device.platform in ("cpu", "interpreter"):
            return (1, 0)  # kDLCPU
        return (2, self.device.index) if self.device.platform == "cuda" else (1, 0)

    def __repr__(self) -> str:
        host = self._numpy()
        prefix = "Array("
        if host.size == 0:
            body = f"[], shape={host.shape}"
        else:
            body = np.array2string(host, separator=", ", prefix=prefix, threshold=1000)
        extra = ""
        from ._devices import default_device
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

    def __getitem__(self, key):
        return _indexing.getitem(self, key)

    def __setitem__(self, key, value):
        """A functional update: computes the new value and rebinds this array to it (other
        references to the old value are unaffected)."""
        self._rebind(_indexing.setitem(self, key, value), "__setitem__")

    def __hash__(self):
        raise TypeError("tlaloc arrays are not hashable")


def _binary_operator(fn_name, reflected=False):
    def op(self, other):
        fn = getattr(_ew, fn_name)
        t = type(other)
        if t is Array or t is builtins.float or t is builtins.int:
            return fn(other, self) if reflected else fn(self, other)
        if not isinstance(other, (Array, builtins.bool, builtins.int, builtins.float, builtins.complex)):
            if isinstance(other, np.generic) and other.dtype.kind in "biufc":
                other = other.item()    # a NumPy scalar acts as the Python scalar it holds
            elif isinstance(other, np.ndarray):
                # returning NotImplemented would let NumPy compute `x + ndarray` eagerly
                # through __array__ (and `ndarray + x` fail with a confusing message)
                raise TypeError(f"{fn_name}: cannot mix a tlaloc array with a NumPy array; "
                                "convert it with tlaloc.asarray first")
            else:
                return NotImplemented
        return fn(other, self) if reflected else fn(self, other)
    op.__name__ = f"__{'r' if reflected else ''}{fn_name}__"
    return op


def _inplace_operator(fn_name, dunder):
    def op(self, other):
        return self._rebind(getattr(_ew, fn_name)(self, other), dunder)
    op.__name__ = dunder
    return op


_OPERATORS = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide",
    "floordiv": "floor_divide", "mod": "remainder", "pow": "pow",
    "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
    "lshift": "bitwise_left_shift", "rshift": "bitwise_right_shift",
}
for _short, _fn in _OPERATORS.items():
    setattr(Array, f"__{_short}__", _binary_operator(_fn))
    setattr(Array, f"__r{_short}__", _binary_operator(_fn, reflected=True))
    setattr(Array, f"__i{_short}__", _inplace_operator(_fn, f"__i{_short}__"))

for _short, _fn in {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal",
                    "gt": "greater", "ge": "greater_equal"}.items():
    setattr(Array, f"__{_short}__", _binary_operator(_fn))


def _matmul_operand(other, name):
    if isinstance(other, np.ndarray):
        # NotImplemented would let NumPy compute `x @ ndarray` eagerly through __array__
        raise TypeError(f"{name}: cannot mix a tlaloc array with a NumPy array; "
                        "convert it with tlaloc.asarray first")
    return isinstance(other, Array)


def _matmul(self, other):
    return _linalg.matmul(self, other) if _matmul_operand(other, "matmul") else NotImplemented


def _rmatmul(self, other):
    return _linalg.matmul(other, self) if _matmul_operand(other, "matmul") else NotImplemented


def _imatmul(self, other):
    return self._rebind(_linalg.matmul(self, other), "__imatmul__")


Array.__matmul__, Array.__rmatmul__, Array.__imatmul__ = _matmul, _rmatmul, _imatmul
Array.__neg__ = lambda self: _ew.negative(self)
Array.__pos__ = lambda self: _ew.positive(self)
Array.__abs__ = lambda self: _ew.abs(self)
Array.__invert__ = lambda self: _ew.bitwise_invert(self)

from ._api import elementwise as _ew  # noqa: E402  (the namespace imports Array first)
from ._api import indexing as _indexing  # noqa: E402
from ._api import linear_algebra as _linalg  # noqa: E402
from ._api import manipulation as _manip  # noqa: E402
