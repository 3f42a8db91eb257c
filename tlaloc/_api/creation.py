"""Creation functions."""
from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from .. import _dtypes as dt
from .._array import Array
from .._graph import Aval, leaf, new_aval, transfer
from .._devices import default_device
from .._prims import lax
from ._core import (broadcast_to_shape, cast, check_size, constant, host_leaf, renamed,
                    resolve_device, scalar_node, wrap)


def _shape(name, shape) -> tuple:
    if isinstance(shape, (builtins.int, np.integer)) and not isinstance(shape, builtins.bool):
        shape = (shape,)
    try:
        dims = tuple(operator.index(n) for n in shape)
    except TypeError:
        raise TypeError(f"{name}: shape must be an int or a tuple of ints, got {shape!r}") from None
    if any(n < 0 for n in dims):
        raise ValueError(f"{name}: negative dimension in shape {dims}")
    return dims


def _dtype(name, dtype, default):
    return default if dtype is None else dt.canonicalize(dtype, name)


def _infer_python_dtype(obj):
    """Default dtype for Python scalars and nested sequences (the standard's defaults)."""
    try:
        probe = np.asarray(obj)
    except ValueError as e:   # ragged nesting
        raise ValueError(f"asarray: cannot make an array of this nested sequence ({e})") from None
    if probe.dtype == object:
        raise TypeError("asarray: could not make an array of this object (ragged nesting or "
                        "non-numeric elements)")
    kind = probe.dtype.kind
    if kind == "b":
        return dt.bool
    if kind in dt.INTEGER_KINDS:
        return dt.DEFAULTS.integral
    if kind == "f":
        return dt.DEFAULTS.real_floating
    if kind == "c":
        return dt.DEFAULTS.complex_floating
    raise TypeError(f"asarray: unsupported element type {probe.dtype}")


def _asarray_plain(obj, /, *, dtype=None, device=None, copy=None):
    """Convert `obj` (an Array, Python scalar, nested sequence, NumPy array, buffer, or
    DLPack/`__array__` producer) to a tlaloc array. NumPy inputs are copied, since tlaloc
    arrays are immutable; copy=False raises ValueError when sharing is impossible."""
    if type(obj) is np.ndarray and dtype is None and device is None and copy is not False:
        d = dt.of_numpy(obj.dtype)
        if d is not None:   # the common case, in short
            host = obj.copy()
            host.setflags(write=False)    # the value of an immutable array (setflags: no flags object)
            return wrap(leaf(host, new_aval(host.shape, d), default_device()))
    if dtype is not None:
        dtype = dt.canonicalize(dtype, "asarray")
    if isinstance(obj, Array):
        out = obj
        if dtype is not None and dtype is not obj.dtype:
            if copy is False:
                raise ValueError("asarray: changing the dtype needs a copy, but copy=False")
            out = astype(out, dtype)
        if device is not None and resolve_device(device, "asarray") != out.device:
            if copy is False:
                raise ValueError("asarray: changing the device needs a copy, but copy=False")
            out = wrap(transfer(out._node, resolve_device(device)))
        if copy and out is obj:
            out = wrap(obj._node)  # a new object: in-place operators on it leave obj alone
        return out
    dev = resolve_device(device, "asarray")
    if copy is False:
        raise ValueError("asarray(copy=False): tlaloc arrays own immutable memory and cannot "
                         f"share the memory of a {type(obj).__name__}")
    if isinstance(obj, (builtins.bool, builtins.int, builtins.float, builtins.complex)):
        d = dtype or dt.default_for_scalar(obj)
        return wrap(host_leaf(_scalar_host(obj, d), dev))
    if _has_buffer(obj):
        host = np.array(memoryview(obj), copy=True)
    elif isinstance(obj, np.ndarray) or hasattr(obj, "__array__") or hasattr(obj, "__array_interface__"):
        host = np.array(obj, copy=True)
    elif hasattr(obj, "__dlpack__"):
        host = np.array(np.from_dlpack(obj), copy=True)
    else:
        d = dtype or _infer_python_dtype(obj)
        try:
            host = np.array(obj, dtype=d.numpy)
        except OverflowError:
            raise OverflowError(f"asarray: a Python int in the input is out of bounds for {d}") from None
        except (ValueError, TypeError) as e:   # ragged, or elements that are not numbers
            raise type(e)(f"asarray: cannot make a {d} array of this object ({e})") from None
        return wrap(host_leaf(host, dev))
    if not host.dtype.isnative:   # big-endian data (FITS, network formats): native order
        host = host.astype(host.dtype.newbyteorder("="))
    if host.dtype == object or host.dtype.kind not in dt.ALL_KINDS and not dt.numpy_is_bfloat16(host.dtype):
        raise TypeError(f"asarray: unsupported dtype {host.dtype}")
    if dtype is not None and host.dtype != dtype.numpy:
        host = host.astype(dtype.numpy)
    else:
        dt.from_numpy(host.dtype)  # TypeError for dtypes tlaloc lacks
    return wrap(host_leaf(host, dev))


def _has_buffer(obj) -> bool:
    """Whether `obj` exports the buffer protocol (bytes, array.array, ...). Python < 3.12 has
    no `__buffer__` attribute to look for, so ask memoryview."""
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return True
    if isinstance(obj, (list, tuple, np.ndarray)) or hasattr(obj, "__array__"):
        return False
    try:
        memoryview(obj)
    except TypeError:
        return False
    return True


def _scalar_host(value, d, name="asarray"):
    if d.kind in dt.INTEGER_KINDS and not isinstance(value, builtins.bool):
        if isinstance(value, (builtins.float, builtins.complex)):
            raise TypeError(f"{name}: cannot represent {value!r} as {d}")
        info = np.iinfo(d.numpy)
        if not info.min <= value <= info.max:
            raise OverflowError(f"{name}: {value} is out of bounds for {d}")
    if d.kind == "b" and not isinstance(value, builtins.bool):
        raise TypeError(f"{name}: cannot represent {value!r} as bool")
    if d.kind == "f" and isinstance(value, builtins.complex):
        raise TypeError(f"{name}: cannot represent {value!r} as {d}")
    return np.array(value, dtype=d.numpy)


class _CopyNeeded(BufferError, ValueError):
    """copy=False where a copy is needed: the standard's BufferError (a ValueError too, as
    tlaloc raised before)."""


def from_dlpack(x, /, *, device=None, copy=None):
    if isinstance(x, Array):
        # A tlaloc array stays where it is unless a device is given; its memory is
        # immutable, so "no copy" is the array itself.
        if device is None or resolve_device(device) == x.device:
            return x
        if copy is False:
            raise _CopyNeeded("from_dlpack(copy=False): moving to another device needs a copy")
        return asarray(x, device=device)
    if device is not None:
        resolve_device(device, "from_dlpack")
    if copy is False:
        raise _CopyNeeded("from_dlpack(copy=False): tlaloc arrays own immutable memory, so "
                          "importing a foreign buffer copies it")
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"from_dlpack: {type(x).__name__} does not implement __dlpack__")
    kind, index = _dlpack_device_of(x)
    if kind == _KDLCPU:
        return asarray(np.from_dlpack(x), device=device)
    # NumPy imports host memory only: the producer copies its value to the host (DLPack
    # 1.0's dl_device), and the array goes to the producer's device unless one is given
    if device is None:
        if kind not in _DLPACK_PLATFORMS:
            raise BufferError(f"from_dlpack: the value is in DLPack device type {kind}'s memory, "
                              "which tlaloc has no device for; pass device=")
        device = resolve_device(f"{_DLPACK_PLATFORMS[kind]}:{index}", "from_dlpack")
    return asarray(np.from_dlpack(x, device="cpu", copy=True), device=device)


_KDLCPU = 1
_DLPACK_PLATFORMS = {2: "cuda", 10: "rocm"}    # kDLCUDA, kDLROCM


def _dlpack_device_of(x):
    """(DLPack device type, id) of a producer; host memory for those without
    __dlpack_device__."""
    if not hasattr(x, "__dlpack_device__"):
        return _KDLCPU, 0
    kind, index = x.__dlpack_device__()
    return int(kind), int(index)


def _fill(name, shape, value, dtype, device):
    shape = _shape(name, shape)
    d = _dtype(name, dtype, dt.DEFAULTS.real_floating)
    dev = resolve_device(device, name)
    check_size(name, shape, d, dev)
    return wrap(constant(value, shape, d, dev))


def _zeros_plain(shape, *, dtype=None, device=None):
    return _fill("zeros", shape, 0, dtype, device)


def _ones_plain(shape, *, dtype=None, device=None):
    return _fill("ones", shape, 1, dtype, device)


def _empty_plain(shape, *, dtype=None, device=None):
    """tlaloc has no uninitialised memory: empty is zeros."""
    return _fill("empty", shape, 0, dtype, device)


def _full_plain(shape, fill_value, *, dtype=None, device=None):
    return _full("full", shape, fill_value, dtype, device)


def _full(name, shape, fill_value, dtype, device):
    shape = _shape(name, shape)
    dev = resolve_device(device, name)
    if isinstance(fill_value, Array):
        if fill_value.ndim != 0:
            raise ValueError(f"{name}: fill_value must be a scalar or a 0-d array")
        d = _dtype(name, dtype, fill_value.dtype)
        if fill_value.dtype.kind == "c" and d.kind != "c":
            raise TypeError(f"{name}: a complex fill_value for a real {d} array")
        check_size(name, shape, d, dev)
        node = cast(fill_value._node, d)
        if node.device != dev:
            node = transfer(node, dev)
        return wrap(broadcast_to_shape(node, shape))
    if not isinstance(fill_value, (builtins.bool, builtins.int, builtins.float, builtins.complex)):
        raise TypeError(f"{name}: fill_value must be a Python scalar, got {type(fill_value).__name__}")
    d = _dtype(name, dtype, dt.default_for_scalar(fill_value))
    host = _scalar_host(fill_value, d, name)
    check_size(name, shape, d, dev)
    return wrap(broadcast_to_shape(leaf(host, Aval((), d), dev), shape))


def _like(name, x, dtype, device):
    if not isinstance(x, Array):
        raise TypeError(f"{name}: x must be a tlaloc array, got {type(x).__name__}")
    return x.shape, _dtype(name, dtype, x.dtype), (x.device if device is None else device)


def _zeros_like_plain(x, /, *, dtype=None, device=None):
    shape, d, dev = _like("zeros_like", x, dtype, device)
    return _fill("zeros_like", shape, 0, d, dev)


def _ones_like_plain(x, /, *, dtype=None, device=None):
    shape, d, dev = _like("ones_like", x, dtype, device)
    return _fill("ones_like", shape, 1, d, dev)


def _empty_like_plain(x, /, *, dtype=None, device=None):
    shape, d, dev = _like("empty_like", x, dtype, device)
    return _fill("empty_like", shape, 0, d, dev)


def _full_like_plain(x, /, fill_value, *, dtype=None, device=None):
    shape, d, dev = _like("full_like", x, dtype, device)
    if d.kind in dt.INTEGER_KINDS and isinstance(fill_value, builtins.float):
        raise TypeError(f"full_like: float fill_value for an {d} array")
    return _full("full_like", shape, fill_value, d, dev)


def _iota(shape, dtype, dim, device):
    return lax.iota(shape=tuple(shape), dtype=dtype, dim=dim, device=device)


def _arange_plain(start, /, stop=None, step=1, *, dtype=None, device=None):
    from_zero = stop is None
    if from_zero:
        start, stop = 0, start
    for name, v in (("start", start), ("stop", stop), ("step", step)):
        if isinstance(v, builtins.complex) or not isinstance(v, (builtins.int, builtins.float)):
            raise TypeError(f"arange: {name} must be a real Python number, got {v!r}")
        if not math.isfinite(v):
            raise ValueError(f"arange: {name} must be finite, got {v!r}")
    if step == 0:
        raise ValueError("arange: step must not be zero")
    all_int = all(isinstance(v, builtins.int) for v in (start, stop, step))
    d = _dtype("arange", dtype, dt.DEFAULTS.integral if all_int else dt.DEFAULTS.real_floating)
    if all_int:
        n = builtins.max(0, -(-(stop - start) // step))
    else:
        length = (stop - start) / step
        if not math.isfinite(length):   # finite bounds whose difference overflows
            raise ValueError(f"arange: the length of [{start}, {stop}) in steps of {step} "
                             "is not finite")
        n = builtins.max(0, math.ceil(length))
    dev = resolve_device(device, "arange")
    if d.kind == "b":
        raise TypeError("arange: bool dtype is not supported")
    check_size("arange", (n,), d, dev)
    if d.kind in dt.INTEGER_KINDS and n and all_int:   # the last value must fit too
        dt.check_int_fits(start + (n - 1) * step, d, "arange")
    # start + iota * step, without the sum when start is left out (arange(n)) nor the
    # product by the int step 1: iota is then the result, exactly, in every dtype
    out = _iota((n,), d, 0, dev)
    if not (type(step) is builtins.int and step == 1):
        out = lax.multiply(out, broadcast_to_shape(scalar_node(step, d, dev, "arange"), (n,)))
    if not from_zero:
        out = lax.add(out, broadcast_to_shape(scalar_node(start, d, dev, "arange"), (n,)))
    return wrap(out)


def _linspace_plain(start, stop, /, num, *, dtype=None, device=None, endpoint=True):
    if not isinstance(num, (builtins.int, np.integer)) or isinstance(num, builtins.bool):
        raise TypeError(f"linspace: num must be an int, got {num!r}")
    if num < 0:
        raise ValueError(f"linspace: num must be non-negative, got {num}")
    if not isinstance(endpoint, builtins.bool):
        raise TypeError(f"linspace: endpoint must be a bool, got {endpoint!r}")
    for name, v in (("start", start), ("stop", stop)):
        if not isinstance(v, (builtins.int, builtins.float, builtins.complex)):
            raise TypeError(f"linspace: {name} must be a Python number, got {v!r}")
    is_complex = isinstance(start, builtins.complex) or isinstance(stop, builtins.complex)
    d = _dtype("linspace", dtype, dt.DEFAULTS.complex_floating if is_complex else dt.DEFAULTS.real_floating)
    if d.kind not in dt.FLOATING_KINDS:
        raise TypeError(f"linspace: dtype must be floating, got {d}")
    if is_complex and d.kind != "c":
        raise TypeError(f"linspace: complex endpoints need a complex dtype, got {d}")
    dev = resolve_device(device, "linspace")
    num = builtins.int(num)
    shape = (num,)
    check_size("linspace", shape, d, dev)
    div = (num - 1) if endpoint else num
    a = broadcast_to_shape(scalar_node(start, d, dev), shape)
    b = broadcast_to_shape(scalar_node(stop, d, dev), shape)
    idx = cast(_iota(shape, dt.real_of(d), 0, dev), d)
    delta = lax.subtract(b, a)
    if div > 0:
        frac = lax.divide(idx, constant(float(div), shape, d, dev))
        out = lax.add(a, lax.multiply(frac, delta))
    else:
        out = a
    if endpoint and num > 1:
        last = lax.compare(idx, constant(float(num - 1), shape, d, dev), direction="EQ")
        out = lax.select(last, b, out)
    return wrap(out)


def _eye_plain(n_rows, n_cols=None, /, *, k=0, dtype=None, device=None):
    n_cols = n_rows if n_cols is None else n_cols
    shape = _shape("eye", (n_rows, n_cols))
    if not isinstance(k, (builtins.int, np.integer)) or isinstance(k, builtins.bool):
        raise TypeError(f"eye: k must be an int, got {k!r}")
    d = _dtype("eye", dtype, dt.DEFAULTS.real_floating)
    dev = resolve_device(device, "eye")
    check_size("eye", shape, d, dev)
    return wrap(cast(_diagonal_mask(shape, k, "EQ", dev), d))


def _diagonal_mask(shape, k, direction, device):
    """col - row (direction) k over the last two dims of `shape`."""
    nd = len(shape)
    rows = _iota(shape, dt.int64, nd - 2, device)
    cols = _iota(shape, dt.int64, nd - 1, device)
    diff = lax.subtract(cols, rows)
    # col - row lies in [1 - n_rows, n_cols - 1]: a k past that range (even past int64) acts
    # as the nearest value outside it
    k = builtins.max(-shape[-2], builtins.min(int(k), shape[-1]))
    return lax.compare(diff, constant(k, shape, dt.int64, device), direction=direction)


def _triangle(name, x, k, direction):
    if not isinstance(x, Array):
        raise TypeError(f"{name}: x must be a tlaloc array")
    if x.ndim < 2:
        raise ValueError(f"{name}: x must have at least 2 dimensions, got {x.ndim}")
    if not isinstance(k, (builtins.int, np.integer)) or isinstance(k, builtins.bool):
        raise TypeError(f"{name}: k must be an int, got {k!r}")
    node = x._node
    mask = _diagonal_mask(x.shape, k, direction, node.device)
    zero = constant(0, x.shape, x.dtype, node.device)
    return wrap(lax.select(mask, node, zero))


def tril(x, /, *, k=0):
    return _triangle("tril", x, k, "LE")


def triu(x, /, *, k=0):
    return _triangle("triu", x, k, "GE")


def meshgrid(*arrays, indexing="xy"):
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    for a in arrays:
        if not isinstance(a, Array) or a.ndim != 1:
            raise ValueError("meshgrid: every argument must be a 1-d tlaloc array")
    if arrays:
        first = arrays[0]
        for a in arrays[1:]:
            if a.dtype is not first.dtype:
                raise TypeError("meshgrid: arrays must share one dtype")
            if a.device != first.device:
                raise ValueError("meshgrid: arrays are on different devices")
    sizes = [a.shape[0] for a in arrays]
    if indexing == "xy" and len(arrays) >= 2:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    shape = tuple(sizes)
    if arrays:
        check_size("meshgrid", shape, arrays[0].dtype, arrays[0].device)
    out = []
    for i, a in enumerate(arrays):
        dim = i
        if indexing == "xy" and len(arrays) >= 2 and i < 2:
            dim = 1 - i
        out.append(wrap(lax.broadcast_in_dim(a._node, shape=shape, dims=(dim,))))
    return tuple(out)  # a tuple since 2025.12


def astype(x, dtype, /, *, copy=True, device=None):
    if not isinstance(x, Array):
        raise TypeError(f"astype: x must be a tlaloc array, got {type(x).__name__}")
    d = dt.canonicalize(dtype, "astype")
    if x.dtype.kind == "c" and d.kind != "c":
        raise TypeError(f"astype: casting complex {x.dtype} to real {d} would drop the "
                        "imaginary part; take xp.real first")
    if device is not None:
        resolve_device(device, "astype")
    out = x if d is x.dtype else wrap(cast(x._node, d))
    if device is not None:
        out = out.to_device(device)
    if copy and out is x:
        out = wrap(x._node)
    return out


# ----------------------------------------------------------------------------- names=
#
# Creation functions take `names=` (one str or None per axis); *_like functions keep x's
# names unless given. A leaf gets the names in its abstract value; a recorded value gets a
# `rename` (which computes nothing).

def check_names_arg(name, names, ndim) -> tuple:
    """`names` as a tuple of one str or None per axis (TypeError or ValueError naming the
    function otherwise)."""
    try:
        names = tuple(names)
    except TypeError:
        raise TypeError(f"{name}: names must be a tuple of str or None, got {names!r}") from None
    if len(names) != ndim:
        raise ValueError(f"{name}: {len(names)} names for an array of {ndim} dimension(s)")
    seen = set()
    for n in names:
        if n is not None:
            if not isinstance(n, str):
                raise TypeError(f"{name}: axis names must be str or None, got {n!r}")
            if n in seen:
                raise ValueError(f"{name}: axis name {n!r} is used twice")
            seen.add(n)
    return names


def _named(name, out, names):
    if names is None:
        return out
    node = renamed(out._node, check_names_arg(name, names, out.ndim))
    return out if node is out._node else wrap(node)


def asarray(obj, /, *, dtype=None, device=None, copy=None, names=None):
    out = _asarray_plain(obj, dtype=dtype, device=device, copy=copy)
    return out if names is None else _named("asarray", out, names)


asarray.__doc__ = _asarray_plain.__doc__


def zeros(shape, *, dtype=None, device=None, names=None):
    return _named("zeros", _zeros_plain(shape, dtype=dtype, device=device), names)


zeros.__doc__ = _zeros_plain.__doc__


def ones(shape, *, dtype=None, device=None, names=None):
    return _named("ones", _ones_plain(shape, dtype=dtype, device=device), names)


ones.__doc__ = _ones_plain.__doc__


def empty(shape, *, dtype=None, device=None, names=None):
    return _named("empty", _empty_plain(shape, dtype=dtype, device=device), names)


empty.__doc__ = _empty_plain.__doc__


def full(shape, fill_value, *, dtype=None, device=None, names=None):
    return _named("full", _full_plain(shape, fill_value, dtype=dtype, device=device), names)


full.__doc__ = _full_plain.__doc__


def arange(start, /, stop=None, step=1, *, dtype=None, device=None, names=None):
    return _named("arange", _arange_plain(start, stop, step, dtype=dtype, device=device), names)


arange.__doc__ = _arange_plain.__doc__


def linspace(start, stop, /, num, *, dtype=None, device=None, endpoint=True, names=None):
    return _named("linspace", _linspace_plain(start, stop, num, dtype=dtype, device=device, endpoint=endpoint), names)


linspace.__doc__ = _linspace_plain.__doc__


def eye(n_rows, n_cols=None, /, *, k=0, dtype=None, device=None, names=None):
    return _named("eye", _eye_plain(n_rows, n_cols, k=k, dtype=dtype, device=device), names)


eye.__doc__ = _eye_plain.__doc__


def zeros_like(x, /, *, dtype=None, device=None, names=None):
    out = _zeros_like_plain(x, dtype=dtype, device=device)
    return _named("zeros_like", out, x._node.aval.names if names is None else names)


zeros_like.__doc__ = _zeros_like_plain.__doc__


def ones_like(x, /, *, dtype=None, device=None, names=None):
    out = _ones_like_plain(x, dtype=dtype, device=device)
    return _named("ones_like", out, x._node.aval.names if names is None else names)


ones_like.__doc__ = _ones_like_plain.__doc__


def empty_like(x, /, *, dtype=None, device=None, names=None):
    out = _empty_like_plain(x, dtype=dtype, device=device)
    return _named("empty_like", out, x._node.aval.names if names is None else names)


empty_like.__doc__ = _empty_like_plain.__doc__


def full_like(x, /, fill_value, *, dtype=None, device=None, names=None):
    out = _full_like_plain(x, fill_value, dtype=dtype, device=device)
    return _named("full_like", out, x._node.aval.names if names is None else names)


full_like.__doc__ = _full_like_plain.__doc__
