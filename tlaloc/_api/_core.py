"""What every namespace function shares: turning arguments into graph nodes, promotion,
broadcasting, device agreement, and wrapping results as Arrays. Nothing here computes on
data: it records primitives."""
from __future__ import annotations

import builtins
import math
import os

import numpy as np

from .. import _context
from .. import _dtypes as dt
from .._config import config
from .._array import Array, from_node as wrap   # node -> Array
from .._devices import Device, default_device, device as as_device
from .._graph import Aval, leaf, new_aval
from .._prims import lax
from .._prims import padding as _padding
from .._prims.core import unify as _unify

_SCALARS = (bool, int, float, complex)


def is_scalar(x) -> bool:
    return isinstance(x, _SCALARS)


def is_int(v) -> bool:
    """A Python or NumPy integer, not a bool (counts, shifts, repetitions)."""
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def fresh(x: Array) -> Array:
    """A new Array on x's value (and axis names), for functions whose result equals their
    argument (`+x`, `x[...]`, `reshape(x, x.shape)`, `round` of integers, ...). Returning `x`
    itself would alias: `x[i] = v` and in-place operators rebind the Python object, so they
    would change the result too (NumPy returns a new array or a view object there)."""
    return Array._from_node(x._node)


def renamed(node, names):
    """`node` with axis names `names` (a sequence, or None: no names); `node` itself when
    it has them already. All-None names are stored as None."""
    if names is not None:
        names = tuple(names)
        for n in names:
            if n is not None:
                break
        else:
            names = None
    if node.aval.names == names:
        return node
    if node.prim is None and node.value is not None and not node.inputs:
        return leaf(node.value, node.aval._replace(names=names), node.device)
    return lax.rename(node, names=names)


def names_of(x) -> tuple:
    """One name or None per axis of an Array or node."""
    a = x._node.aval if type(x) is Array else x.aval
    return a.names if a.names is not None else (None,) * len(a.shape)


def check_names(name, nodes):
    """The names of broadcast operands (aligned from the right) unified: ValueError naming
    the function `name` when they give one axis two names, or the result two axes of one
    name. None when no operand is named."""
    named = [n.aval for n in nodes if n.aval.names is not None]
    if not named:
        return None
    ndim = builtins.max(len(n.aval.shape) for n in nodes)
    return unify(name, [(None,) * (ndim - len(a.shape)) + a.names for a in named])


def broadcast_names(name, name_tuples):
    """Name tuples of broadcast operands (aligned from the right) unified, as check_names;
    None when none is named."""
    ndim = builtins.max((len(t) for t in name_tuples), default=0)
    return unify(name, [(None,) * (ndim - len(t)) + tuple(t) for t in name_tuples])


def resolve_device(device, name=None):
    """The Device for a `device=` argument (None: the default device). A bad one raises
    TypeError or ValueError naming the function `name` when given."""
    if device is None:
        return default_device()
    if name is None:
        return as_device(device)
    try:
        return as_device(device)
    except TypeError as e:
        raise TypeError(f"{name}: device: {e}") from None
    except ValueError as e:
        raise ValueError(f"{name}: device: {e}") from None


def keep_dims(node, shape, axes, keepdims, names=None):
    """keepdims: the reduced axes back, of size 1 (with their names: `names`, the input's)."""
    if not keepdims:
        return node
    kept = tuple([1 if i in axes else n for i, n in enumerate(shape)])
    return renamed(lax.reshape(node, shape=kept), names)


def reduction(prim, node, axes, keepdims) -> Array:
    """The reduction `prim` of `node` over `axes` (none: node itself), keepdims applied."""
    shape = node.aval.shape
    out = prim(node, axes=axes) if axes else node
    return wrap(keep_dims(out, shape, axes, keepdims, node.aval.names))


# ----------------------------------------------------------------------------- sizes

class ArrayTooLargeError(MemoryError, ValueError):
    """An array whose size is known, at the call that records it, to be more than its
    device can hold: more bytes than the machine's physical memory, or a byte count past
    int64. A MemoryError, as NumPy raises for an allocation it cannot make, and a
    ValueError, as NumPy raises for a size past its index type."""


_INT64_MAX = 2 ** 63 - 1
_memory = {}   # device -> bytes an array on it may take


def memory_limit(device) -> int:
    """The most bytes one array on `device` may take: the machine's physical memory (PJRT
    CPU and the interpreter hold arrays in host memory; plugin devices are bounded by the
    host's as well, their own memory being checked when they allocate)."""
    limit = _memory.get(device)
    if limit is None:
        try:
            limit = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (AttributeError, OSError, ValueError):   # no sysconf: only the int64 bound
            limit = _INT64_MAX
        limit = _memory[device] = builtins.min(builtins.max(limit, 1), _INT64_MAX)
    return limit


def check_size(name, shape, dtype, device) -> None:
    """ArrayTooLargeError, naming `name`, unless an array of `shape` and `dtype` fits on
    `device`. Called where sizes grow (creation, broadcasting, tile, repeat, outer
    products, fft lengths), not on every recorded operation."""
    nbytes = math.prod(shape) * (dtype.bits >> 3)
    if nbytes <= _memory.get(device, 0):
        return
    limit = memory_limit(device)
    if nbytes <= limit:
        return
    if nbytes > _INT64_MAX:
        raise ArrayTooLargeError(f"{name}: an array of shape {tuple(shape)} ({math.prod(shape)} "
                                 f"elements of {dtype}) is too large: its size in bytes does not "
                                 "fit in an int64")
    raise ArrayTooLargeError(f"{name}: an array of shape {tuple(shape)} and dtype {dtype} "
                             f"needs {_bytes(nbytes)}, more than the {_bytes(limit)} of memory "
                             f"{device} can use")


def _bytes(n) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n} bytes" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024


# Read-only 0-d host values (with their abstract value) of the Python scalars operations
# meet, by dtype, type and value (and the sign of a float's zeros): making them costs about
# a third of recording the operation. Values are immutable, so leaves may share them; the
# table is cleared when full, so values that change every step (a loop counter) only pass
# through it.
_scalar_hosts = {}
_SCALAR_HOSTS_SIZE = 512


_copysign = math.copysign   # (the keys tell 0.0 from -0.0)


def _scalar_key(value, dtype):
    t = type(value)
    if t is float:
        return dtype, t, value, _copysign(1.0, value)
    if t is complex:
        return dtype, t, value, _copysign(1.0, value.real), _copysign(1.0, value.imag)
    return dtype, t, value


def scalar_node(value, dtype: dt.DType, device, name=None):
    """A 0-d program input holding a Python scalar (an input, not a constant, so the
    compiled program is reused whatever the value). Every use gets its own leaf: sharing
    leaves of equal values would make the program's structure depend on values."""
    key = _scalar_key(value, dtype)
    known = _scalar_hosts.get(key)
    if known is None:
        if dtype.kind in dt.INTEGER_KINDS and not isinstance(value, bool):
            dt.check_int_fits(value, dtype, name)
        try:
            host = np.asarray(value, dtype=dtype.numpy)
        except OverflowError:   # a Python int past the floating dtype's range
            where = "" if name is None else f"{name}: "
            raise OverflowError(f"{where}Python int {value} is too large for {dtype}") from None
        host.flags.writeable = False
        if len(_scalar_hosts) >= _SCALAR_HOSTS_SIZE:
            _scalar_hosts.clear()
        known = _scalar_hosts[key] = (host, Aval((), dtype))
    return leaf(known[0], known[1], device)


def host_leaf(host: np.ndarray, device, names=None):
    """A computed array holding the NumPy array `host` (which it takes: made read-only),
    with axis names `names` (an aval's: None or one per axis)."""
    host.flags.writeable = False  # the value of an immutable array
    return leaf(host, new_aval(host.shape, dt.from_numpy(host.dtype), names), device)


# Devices whose values are host memory: work that must read values anyway (the true elements
# of a mask, a sort for unique_*) is done there by NumPy, which moves no data
HOST_PLATFORMS = ("cpu", "interpreter")


def on_host(device) -> bool:
    """Whether `device`'s arrays are each one host array of this process: a CPU or the
    interpreter device, not a mesh's device (a subclass: its arrays are laid out over
    several devices, and a result made on the host would lose that layout)."""
    return type(device) is Device and device.platform in HOST_PLATFORMS


def eager_host_value(node):
    """node's NumPy value where NumPy may do an operation on it at once in place of recording
    it, as `bind` runs a small one (backends/interpreter.py, run_now): node is computed, its
    value a NumPy array of a host device of at most config.eager_max_size elements, and
    nothing keeps the graph (no derivative recorded, no jit trace or on_bind hook, no
    observer). Else None: a larger value stays an input of the program recorded on it."""
    value = node.value
    if type(value) is not np.ndarray or value.size > config.eager_max_size \
            or _context.trace.retain_graph or _context.engaged \
            or _context.observer is not None or not on_host(node.device):
        return None
    return value


def constant(value, shape, dtype, device):
    """A value fixed by the program's structure (0 for a sum, 1 for a reciprocal)."""
    return lax.constant(shape=tuple(shape), dtype=dtype, value=value, device=device)


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
    # (indexed loops: this runs on every broadcasting operation, and compiled, a generator
    # expression or enumerate makes an object per call)
    ndim = 0
    for s in shapes:
        if len(s) > ndim:
            ndim = len(s)
    out = [1] * ndim
    for s in shapes:
        lead = ndim - len(s)
        for j in range(len(s)):
            n = s[j]
            i = lead + j
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
    return lax.broadcast_in_dim(node, shape=shape, dims=dims)


def cast(node, dtype):
    if node.aval.dtype is dtype:
        return node
    return lax.convert(node, dtype=dtype)


def promote(name, a, b):
    """dt.promote, its TypeError naming the function."""
    try:
        return dt.promote(a, b)
    except TypeError as e:
        raise TypeError(f"{name}: {e}") from None


def promote_all(name, dtypes):
    """dt.promote_all (several dtypes, in any order), its TypeError naming the function."""
    try:
        return dt.promote_all(dtypes)
    except TypeError as e:
        raise TypeError(f"{name}: {e}") from None


def result_dtype(name, *args):
    """The promoted dtype of arrays and Python scalars (scalars are weak)."""
    arrays = [a for a in args if isinstance(a, Array)]
    if not arrays:
        raise TypeError(f"{name}: at least one argument must be a tlaloc array")
    d = arrays[0].dtype if len(arrays) == 1 else promote_all(name, [a.dtype for a in arrays])
    for s in args:
        if isinstance(s, _SCALARS):
            d = dt.scalar_dtype(s, d, name)
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
        pair = _pair(name, args[0], args[1])
        if pair is not None:
            a = pair[0].aval
            return list(pair), a.dtype, a.shape if a.shape else pair[1].aval.shape
    return _promoted(name, args, dtype)


def binary_operands(name, x1, x2) -> tuple:
    """`operands(name, x1, x2)`'s two nodes, as a tuple."""
    pair = _pair(name, x1, x2)
    if pair is None:
        nodes = _promoted(name, (x1, x2), None)[0]
        pair = nodes[0], nodes[1]
    return pair


def _pair(name, a, b):
    """The common cases of two operands, or None: two arrays of one dtype and device
    (broadcast to one shape), or an array and a Python float or int that keeps its dtype."""
    if type(a) is Array:
        na = a._node
        if type(b) is Array:
            nb = b._node
            aa, ab = na.aval, nb.aval
            if aa.dtype is ab.dtype and na.device is nb.device:
                if aa.names is not None or ab.names is not None:
                    check_names(name, (na, nb))
                if aa.shape == ab.shape:
                    return na, nb
                shape = broadcast_shapes(aa.shape, ab.shape, name=name)
                if shape != aa.shape and shape != ab.shape:   # an outer product
                    check_size(name, shape, aa.dtype, na.device)
                return broadcast_to_shape(na, shape), broadcast_to_shape(nb, shape)
        elif type(b) is float or type(b) is int:
            d = na.aval.dtype
            if dt.scalar_dtype(b, d, name) is d:
                return na, scalar_node(b, d, na.device, name)
    elif type(b) is Array and (type(a) is float or type(a) is int):
        nb = b._node
        d = nb.aval.dtype
        if dt.scalar_dtype(a, d, name) is d:
            return scalar_node(a, d, nb.device, name), nb
    return None


def _promoted(name, args, dtype):
    """operands() in general: any number of arrays and scalars, `dtype` or the promoted one."""
    array_nodes = [a._node for a in args if isinstance(a, Array)]
    if not array_nodes:
        raise TypeError(f"{name}: at least one argument must be a tlaloc array")
    check_names(name, array_nodes)
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
            if builtins.all(m.aval.shape != shape for m in array_nodes):   # an outer product
                check_size(name, shape, dtype, device)
            break
    nodes = []
    for a in args:
        if isinstance(a, Array):
            n = cast(a._node, dtype)
            if n.aval.shape != shape:
                n = broadcast_to_shape(n, shape)
        else:   # a Python scalar stays 0-d: elementwise primitives take it as it is
            n = scalar_node(a, dtype, device, name)
        nodes.append(n)
    return nodes, dtype, shape


def unify(name, name_tuples) -> tuple:
    """Names of operands of one rank unified axis by axis (ValueError naming `name` on a
    clash, or when the result would name two axes alike); None when none is named."""
    out = _unify(name, name_tuples)
    if out is not None:
        distinct(name, out)
    return out


def distinct(name, names):
    """ValueError naming `name` unless the names (None aside) are distinct."""
    seen = set()
    for n in names:
        if n is not None:
            if n in seen:
                raise ValueError(f"{name}: the result would have two axes named {n!r}; "
                                 "rename one operand's axis first (tlaloc.rename)")
            seen.add(n)
    return names


def position_of(name, names, axis, argname="axis"):
    """The position of the axis named `axis` among `names` (ValueError naming the function
    and the name when there is none)."""
    if names is not None:
        for i, n in enumerate(names):
            if n == axis:
                return i
    shown = names if names is not None else "none: the array's axes are unnamed"
    raise ValueError(f"{name}: {argname}: the array has no axis named {axis!r} (names {shown})")


def axis_of(name, x, axis, argname="axis", ndim=None) -> int:
    """The non-negative position of one axis argument of the function `name`: an int, or
    the name of one of `x`'s axes (`x` an Array or a node). `ndim` (default x's) bounds
    ints, for arguments that index a result of another rank (stack, expand_dims)."""
    a = x._node.aval if type(x) is Array else x.aval
    if type(axis) is str:
        return position_of(name, a.names, axis, argname)
    return normalize_axis(name, axis, len(a.shape) if ndim is None else ndim, argname)


def axes_of(name, x, axis, argname="axis"):
    """axis=None|int|name|tuple of them -> sorted tuple of distinct non-negative axes of
    `x` (an Array or a node)."""
    a = x._node.aval if type(x) is Array else x.aval
    ndim = len(a.shape)
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (list, tuple)):
        axes = tuple(axis_of(name, x, i, argname) for i in axis)
        if len(set(axes)) != len(axes):
            raise ValueError(f"{name}: repeated axis in {axis!r}")
        return tuple(sorted(axes))
    return (axis_of(name, x, axis, argname),)


def normalize_axis(name, axis, ndim, argname="axis") -> int:
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TypeError(f"{name}: {argname} must be an int, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise IndexError(f"{name}: {argname} {axis} is out of range for an array of {ndim} dimension(s)")
    return int(axis) % ndim


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


def check_bool(name, value, argname) -> None:
    """TypeError unless a flag argument (keepdims, upper, ...) is a bool."""
    if value is not True and value is not False and not isinstance(value, np.bool_):
        raise TypeError(f"{name}: {argname} must be a bool, got {value!r}")


def size_of(shape) -> int:
    return math.prod(shape)


def true_count(node, axes, dtype):
    """The number of elements along `axes` of `node`, as a node of `dtype` shaped as a
    reduction over them, inside a tlaloc.jit trace with dynamic axes; None elsewhere (the
    count is then static). Inside, it is a sum of ones over `axes`: the padding rules mask it
    as they mask the sum it divides, so it is the true count even along a dynamic axis that
    was renamed on the way (_prims/padding.py)."""
    if not _padding.current.lengths or not axes:
        return None
    x = lax.real(node) if node.aval.dtype.kind == "c" else node
    one = constant(1.0, (), dtype, node.device)
    ones = lax.select(lax.compare(x, x, direction="EQ"), one, one)   # shaped (and padded) as x
    return lax.reduce_sum(ones, axes=axes)
