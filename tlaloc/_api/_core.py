"""What every namespace function shares: turning arguments into graph nodes, promotion,
broadcasting, device agreement, and wrapping results as Arrays. Nothing here computes on
data: it records primitives."""
from __future__ import annotations

import builtins
import math

import numpy as np

from .. import _dtypes as dt
from .._array import Array
from .._devices import default_device, device as as_device
from .._graph import Aval, bind, leaf
from .._prims import elementwise as ew
from .._prims import shape as sh

_SCALARS = (builtins.bool, builtins.int, builtins.float, builtins.complex)


def is_scalar(x) -> bool:
    return isinstance(x, _SCALARS)


def wrap(node) -> Array:
    return Array._from_node(node)


def fresh(x: Array) -> Array:
    """A new Array on x's value (and axis names), for functions whose result equals their
    argument (`+x`, `x[...]`, `reshape(x, x.shape)`, `round` of integers, ...). Returning `x`
    itself would alias: `x[i] = v` and in-place operators rebind the Python object, so they
    would change the result too (NumPy returns a new array or a view object there)."""
    out = Array._from_node(x._node)
    out._names = x._names
    return out


def resolve_device(device):
    return default_device() if device is None else as_device(device)


def scalar_node(value, dtype: dt.DType, device):
    """A 0-d program input holding a Python scalar (an input, not a constant, so the
    compiled program is reused whatever the value). Every use gets its own leaf: sharing
    leaves of equal values would make the program's structure depend on values."""
    if dtype.kind in "iu" and not isinstance(value, builtins.bool):
        dt.check_int_fits(value, dtype)
    return leaf(np.asarray(value, dtype=dtype.numpy), Aval((), dtype), device)


def constant(value, shape, dtype, device):
    """A value fixed by the program's structure (0 for a sum, 1 for a reciprocal)."""
    return bind(sh.constant, (), {"shape": tuple(shape), "dtype": dtype, "value": value}, device)


def node_of(name: str, x, argname: str = "x"):
    if isinstance(x, Array):
        return x._node
    raise TypeError(f"{name}: {argname} must be a tlaloc array, got {type(x).__name__}")


def check_devices(name, *nodes):
    dev = nodes[0].device
    for n in nodes[1:]:
        if n.device != dev:
            raise ValueError(f"{name}: arrays are on different devices ({dev} and {n.device}); "
                             "move one with to_device")
    return dev


def broadcast_shapes(*shapes, name="broadcast_shapes"):
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for i, n in enumerate(s, ndim - len(s)):
            if n == out[i] or n == 1:
                continue
            if out[i] == 1:
                out[i] = n
            else:
                shown = " and ".join(str(tuple(t)) for t in shapes)
                raise ValueError(f"{name}: shapes {shown} cannot be broadcast together")
    return tuple(out)


def broadcast_to_shape(node, shape):
    if node.aval.shape == shape:
        return node
    nd = len(node.aval.shape)
    dims = tuple(range(len(shape) - nd, len(shape)))
    return bind(sh.broadcast_in_dim, (node,), {"shape": shape, "dims": dims})


def cast(node, dtype):
    if node.aval.dtype is dtype:
        return node
    return bind(ew.convert, (node,), {"dtype": dtype})


def result_dtype(name, *args):
    """The promoted dtype of arrays and Python scalars (scalars are weak)."""
    arrays = [a for a in args if isinstance(a, Array)]
    if not arrays:
        raise TypeError(f"{name}: at least one argument must be a tlaloc array")
    d = arrays[0].dtype
    for a in arrays[1:]:
        d = dt.promote(d, a.dtype)
    for s in args:
        if isinstance(s, _SCALARS):
            d = dt.scalar_dtype(s, d)
        elif not isinstance(s, Array):
            raise TypeError(f"{name}: expected tlaloc arrays or Python scalars, "
                            f"got {type(s).__name__}")
    return d


def operands(name, *args, dtype=None):
    """Nodes of `args` (arrays or scalars) promoted to one dtype and broadcast to one shape.
    Returns (nodes, dtype, shape). This runs on every recorded operation, so the common
    cases (two arrays of one aval and device; an array and a Python float or int that
    keeps its dtype) take short paths."""
    if len(args) == 2 and dtype is None:
        a, b = args
        if type(a) is Array:
            na = a._node
            if type(b) is Array:
                nb = b._node
                if na.aval.dtype is nb.aval.dtype and na.device is nb.device:
                    if na.aval.shape == nb.aval.shape:
                        return [na, nb], na.aval.dtype, na.aval.shape
                    shape = broadcast_shapes(na.aval.shape, nb.aval.shape, name=name)
                    return ([broadcast_to_shape(na, shape), broadcast_to_shape(nb, shape)],
                            na.aval.dtype, shape)
            elif type(b) is builtins.float or type(b) is builtins.int:
                d = na.aval.dtype
                if dt.scalar_dtype(b, d) is d:
                    return [na, scalar_node(b, d, na.device)], d, na.aval.shape
        elif type(b) is Array and (type(a) is builtins.float or type(a) is builtins.int):
            nb = b._node
            d = nb.aval.dtype
            if dt.scalar_dtype(a, d) is d:
                return [scalar_node(a, d, nb.device), nb], d, nb.aval.shape
    array_nodes = [a._node for a in args if isinstance(a, Array)]
    if not array_nodes:
        raise TypeError(f"{name}: at least one argument must be a tlaloc array")
    first = array_nodes[0]
    shape, device = first.aval.shape, first.device
    if dtype is None:
        dtype = result_dtype(name, *args) if len(array_nodes) != len(args) or any(
            n.aval.dtype is not first.aval.dtype for n in array_nodes) else first.aval.dtype
    for n in array_nodes:
        if n.device != device:
            check_devices(name, *array_nodes)
        if n.aval.shape != shape:
            shape = broadcast_shapes(*[m.aval.shape for m in array_nodes], name=name)
            break
    nodes = []
    for a in args:
        if isinstance(a, Array):
            n = cast(a._node, dtype)
            if n.aval.shape != shape:
                n = broadcast_to_shape(n, shape)
        else:   # a Python scalar stays 0-d: elementwise primitives take it as it is
            n = scalar_node(a, dtype, device)
        nodes.append(n)
    return nodes, dtype, shape


def normalize_axis(name, axis, ndim, argname="axis") -> int:
    if not isinstance(axis, (builtins.int, np.integer)) or isinstance(axis, builtins.bool):
        raise TypeError(f"{name}: {argname} must be an int, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise IndexError(f"{name}: {argname} {axis} is out of range for an array of {ndim} dimension(s)")
    return builtins.int(axis) % ndim


def normalize_axes(name, axis, ndim):
    """axis=None|int|tuple -> sorted tuple of distinct non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (list, tuple)):
        axes = tuple(normalize_axis(name, a, ndim) for a in axis)
        if len(set(axes)) != len(axes):
            raise ValueError(f"{name}: repeated axis in {axis!r}")
        return tuple(sorted(axes))
    return (normalize_axis(name, axis, ndim),)


def size_of(shape) -> int:
    return math.prod(shape)
