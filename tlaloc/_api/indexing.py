"""Indexing: `x[key]` and the functional update behind `x[key] = value`, and the standard's
indexing functions `take` and `take_along_axis`.

A key is an int, a slice (any step), `...`, `None`, an integer array (a tlaloc array, or a
NumPy array or nested list converted to one), a boolean mask, or a tuple of these. The
semantics are NumPy's:

  * integer arrays (and the ints among them) are broadcast together; the result's
    broadcast dimensions replace the indexed axes when those are adjacent in the key, and
    come first otherwise;
  * a boolean mask of k dimensions indexes k axes and stands for the integer arrays of its
    `nonzero` (its shape must match the axes it indexes); a 0-d mask adds an axis of size 1
    or 0. Masks give data-dependent shapes, so indexing with one evaluates the mask's count
    of true elements (one of the documented evaluation triggers) and records the rest.

Out-of-bounds integers raise IndexError. Integer *arrays* are checked when their values are
already known (arrays made from host data, computed arrays); the values of pending index
arrays are not known when the operation is recorded, so there negative values count from
the end as usual and out-of-bounds values are **clamped** by `x[key]` (XLA's gather) and
**dropped** by `x[key] = value` (XLA's scatter), on every backend alike. With duplicate
indices in `x[key] = value`, which update lands is unspecified (the interpreter keeps the
last one).

`setitem(x, key, value)` returns the updated array; `Array.__setitem__` rebinds the array to
it. The value must not change the array's dtype: an array value is promoted with `x` and the
result must be `x.dtype` (else TypeError); a Python scalar is converted to `x.dtype` when the
standard's scalar rules allow it (a float into an integer array is a TypeError).
"""
from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from .. import _dtypes as dt
from .._array import Array
from .._config import config
from . import _ops as o
from . import views
from .._prims import lax
from ._core import (axis_of, broadcast_shapes, cast, check_devices, check_size, constant, distinct,
                    eager_host_value, host_leaf, names_of, node_of, renamed, scalar_node, unify,
                    wrap)


# ----------------------------------------------------------------------------- parsing

class _Mask:
    """A boolean mask entry covering `ndim` axes."""
    __slots__ = ("node", "ndim")

    def __init__(self, node, ndim):
        self.node = node
        self.ndim = ndim


class _Ints:
    """An integer-array entry covering one axis. `in_range`: its values are known to lie in
    [0, the axis's size) (a mask's coordinates), so they need no bounds check or wrapping."""
    __slots__ = ("node", "in_range")

    def __init__(self, node, in_range=False):
        self.node = node
        self.in_range = in_range


def _convert(x, k):
    """One key item as None, Ellipsis, slice, int, _Ints or _Mask (IndexError otherwise)."""
    if k is None or k is Ellipsis or isinstance(k, builtins.slice):
        return k
    if isinstance(k, builtins.bool) or isinstance(k, np.bool_):
        raise IndexError("indexing: boolean scalars are not supported as indices; use a boolean array")
    if isinstance(k, Array):
        if k.device != x.device:
            raise ValueError(f"indexing: the index array is on {k.device}, the array on {x.device}")
        return _array_entry(k._node)
    if isinstance(k, (list, tuple, np.ndarray)):   # a sequence inside the key: an index array
        from .creation import asarray
        host = np.asarray(k)
        if host.dtype == object:
            raise IndexError("indexing: could not make an index array of this list")
        if host.size == 0 and host.dtype.kind == "f":
            host = host.astype(np.int64)   # [] indexes nothing
        return _array_entry(asarray(host, device=x.device)._node)
    try:
        return operator.index(k)
    except TypeError:
        raise IndexError(f"indexing: only integers, slices, ellipsis, None, integer arrays and boolean "
                         f"arrays are valid indices, got {type(k).__name__}") from None


def _array_entry(node):
    kind = node.aval.dtype.kind
    if kind == "b":
        return _Mask(node, len(node.aval.shape))
    if kind in dt.INTEGER_KINDS:
        return _Ints(node)
    raise IndexError(f"indexing: index arrays must have an integer or boolean dtype, got {node.aval.dtype}")


class _Parsed:
    __slots__ = ("entries", "shape", "inserted", "adjacent")

    def __init__(self, entries, shape, inserted, adjacent):
        self.entries = entries    # per axis of the expanded array (a _Mask spans mask.ndim)
        self.shape = shape        # the array's shape with a 1 at each None
        self.inserted = inserted  # positions of the axes added by None (and 0-d masks)
        self.adjacent = adjacent  # the array (and int) items are next to each other in the key


def _parse(x, key) -> _Parsed:
    items = [_convert(x, k) for k in (key if isinstance(key, tuple) else (key,))]
    if builtins.sum(1 for k in items if k is Ellipsis) > 1:
        raise IndexError("indexing: an index can only have a single ellipsis ('...')")
    ndim = x.ndim
    consumed = builtins.sum(k.ndim if isinstance(k, _Mask) else 1
                            for k in items if k is not None and k is not Ellipsis)
    if consumed > ndim:
        raise IndexError(f"indexing: too many indices: the array is {ndim}-dimensional, "
                         f"but {consumed} were indexed")
    fill = [builtins.slice(None)] * (ndim - consumed)
    # NumPy places the broadcast dimensions of index arrays where the arrays are when the
    # array items (ints count, once an array is present) are next to each other in the key;
    # anything between them (a slice, None, even an ellipsis that expands to nothing)
    # separates them and the dimensions go first.
    advanced = [i for i, k in enumerate(items) if isinstance(k, (_Mask, _Ints))]
    if advanced:
        advanced = [i for i, k in enumerate(items)
                    if isinstance(k, (_Mask, _Ints)) or isinstance(k, builtins.int)]
    adjacent = advanced == list(range(advanced[0], advanced[0] + len(advanced))) if advanced else True
    at = next((i for i, k in enumerate(items) if k is Ellipsis), None)
    if at is not None:
        items = items[:at] + fill + items[at + 1:]
    else:
        items = items + fill
    entries, shape, inserted = [], [], []
    axis = 0
    for k in items:
        if k is None:
            inserted.append(len(shape))
            shape.append(1)
            entries.append(builtins.slice(None))
            continue
        if isinstance(k, _Mask):
            if k.ndim == 0:   # a 0-d mask: a new axis of length 1, masked
                inserted.append(len(shape))
                shape.append(1)
                entries.append(_Mask(o.reshape(k.node, (1,)), 1))
                continue
            want = x.shape[axis:axis + k.ndim]
            if (k.node.aval.shape != want and len(want) == k.ndim
                    and all(m in (n, 0) for m, n in zip(k.node.aval.shape, want))):
                # a mask without elements (a 0 where the axis is longer) selects nothing,
                # as in NumPy (the official array-api-tests suite expects it)
                k = _Mask(constant(False, want, dt.bool, k.node.device), k.ndim)
            if k.node.aval.shape != want:
                raise IndexError(f"indexing: boolean index of shape {k.node.aval.shape} does not match "
                                 f"the indexed axes {tuple(range(axis, axis + k.ndim))} of shape {want}")
            entries.append(k)
            shape.extend(want)
            axis += k.ndim
            continue
        n = x.shape[axis]
        if isinstance(k, builtins.int):
            if not -n <= k < n:
                raise IndexError(f"indexing: index {k} is out of bounds for axis {axis} with size {n}")
            k %= n
        entries.append(k)
        shape.append(n)
        axis += 1
    return _Parsed(entries, tuple(shape), inserted, adjacent)


def _expand_masks(entries):
    """Replace each mask by the integer arrays of its nonzero (evaluates its count)."""
    out = []
    for e in entries:
        if isinstance(e, _Mask):
            out.extend([_Ints(c, in_range=True) for c in o.nonzero_nodes(e.node)])
        else:
            out.append(e)
    return out


def _has_arrays(entries):
    return builtins.any(isinstance(e, (_Ints, _Mask)) for e in entries)


def _host_key(node, parsed):
    """x's value reshaped to parsed.shape, and the NumPy key of the parsed entries (index
    arrays as their values), where NumPy may index it at once: x and every index array are
    computed on the host (eager_host_value), none has axis names (the recorded gather
    gives index arrays' names to the result), the key reads alike in NumPy (an ellipsis
    that expands to nothing separates index arrays, where the entries no longer have it),
    and the result is small (at most config.eager_max_size elements). Else None: the
    indexing is recorded. Index values out of bounds are an IndexError here."""
    host = eager_host_value(node)
    if host is None or node.aval.names is not None:
        return None
    key, batch, advanced = [], [], []
    for axis, e in enumerate(parsed.entries):
        if isinstance(e, (_Ints, _Mask)):
            value = eager_host_value(e.node)
            if value is None or e.node.aval.names is not None:
                return None
            if isinstance(e, _Mask):
                batch.append((builtins.int(np.count_nonzero(value)),))
            else:
                batch.append(value.shape)
                if value.size:
                    _check_values("indexing", value, axis, parsed.shape[axis])
            key.append(value)
            advanced.append(axis)
        else:
            key.append(e)
            if type(e) is builtins.int:
                advanced.append(axis)
    if (advanced == list(range(advanced[0], advanced[0] + len(advanced)))) != parsed.adjacent:
        return None
    if len(batch) == 1:
        size = math.prod(batch[0])
    else:
        try:
            size = math.prod(np.broadcast_shapes(*batch))
        except ValueError:
            return None     # (the recorded path says which shapes do not broadcast)
    kept = [n for n, e in zip(parsed.shape, parsed.entries) if type(e) is builtins.slice]
    if size * math.prod(kept) > config.eager_max_size:
        return None
    if host.shape != parsed.shape:
        host = host.reshape(parsed.shape)
    return host, tuple(key)


def _host_masked(node, mask):
    """x[mask] computed by NumPy, for the common mask (one boolean array over x's leading
    axes, on x's device), where _host_key would compute it: both computed on the host, no
    axis names, a small result. Else None."""
    host, where = eager_host_value(node), eager_host_value(mask)
    if host is None or where is None or where.dtype != np.bool_ or not where.ndim \
            or where.shape != host.shape[:where.ndim] or mask.device is not node.device \
            or node.aval.names is not None or mask.aval.names is not None:
        return None
    if np.count_nonzero(where) * math.prod(host.shape[where.ndim:]) > config.eager_max_size:
        return None
    return host[where]


# ----------------------------------------------------------------------------- basic indexing

def _slice_params(shape, entries):
    """start/limit/strides of the slice op, the axes to reverse, and the result's shape
    (ints keep a size-1 axis here)."""
    start, limit, strides, reverse_dims, kept = [], [], [], [], []
    for axis, (n, k) in enumerate(zip(shape, entries)):
        if isinstance(k, builtins.slice):
            lo, hi, step = k.indices(n)
            count = len(range(lo, hi, step))
            if step < 0:
                reverse_dims.append(axis)
                lo, step = n - 1 - lo, -step
            if count == 0:
                lo = 0
            start.append(lo)
            limit.append(lo + (count - 1) * step + 1 if count else lo)
            strides.append(step)
            kept.append(count)
        elif isinstance(k, builtins.int):
            start.append(k)
            limit.append(k + 1)
            strides.append(1)
            kept.append(1)
        else:   # an array entry: the whole axis
            start.append(0)
            limit.append(n)
            strides.append(1)
            kept.append(n)
    return start, limit, strides, reverse_dims, tuple(kept)


def _apply_basic(node, entries):
    """Slices and ints applied (ints leave a size-1 axis); array entries keep whole axes.

    Integer positions are program inputs (a dynamic slice), not constants, so `x[i]` in a
    loop over i reuses one compiled program."""
    if any(isinstance(k, builtins.int) for k in entries):
        shape = node.aval.shape
        starts = tuple(scalar_node(k, dt.int64, node.device) if isinstance(k, builtins.int)
                       else constant(0, (), dt.int64, node.device) for k in entries)
        sizes = tuple(1 if isinstance(k, builtins.int) else n for k, n in zip(entries, shape))
        node = lax.dynamic_slice(node, *starts, sizes=sizes)
        entries = [builtins.slice(None) if isinstance(k, builtins.int) else k for k in entries]
    shape = node.aval.shape
    start, limit, strides, reverse_dims, _ = _slice_params(shape, entries)
    if reverse_dims:
        node = lax.reverse(node, dims=tuple(reverse_dims))
    if (tuple(start), tuple(limit), tuple(strides)) != ((0,) * len(shape), shape, (1,) * len(shape)):
        node = lax.slice(node, start=tuple(start), limit=tuple(limit), strides=tuple(strides))
    return node


def _basic_result_shape(shape, entries):
    return tuple(len(range(*k.indices(n))) for n, k in zip(shape, entries)
                 if isinstance(k, builtins.slice))


# ----------------------------------------------------------------------------- advanced indexing

def _advanced_plan(y, entries, adjacent):
    """For `y` (basic part applied) and the per-axis entries: the indexed axes, the index
    tuple (B + (len(axes),)) of normalised int64 indices, B, and the permutation taking the
    gather's (B + rest) order to NumPy's result order."""
    shape = y.aval.shape
    axes = [i for i, e in enumerate(entries) if not isinstance(e, builtins.slice)]
    cols = []
    for a in axes:
        e = entries[a]
        n = shape[a]
        if isinstance(e, builtins.int):
            # a program input, as x[i]'s position is: a loop over i reuses one program
            cols.append(scalar_node(e, o.index_dtype(), y.device))
            continue
        node = e.node
        if node.device != y.device:
            raise ValueError(f"indexing: the index array is on {node.device}, the array on {y.device}")
        if e.in_range:
            cols.append(node)
            continue
        _check_bounds("indexing", node, y, a)
        cols.append(o.normalize_indices(node, n, o.dynamic_length(y, a)))
    try:
        batch = broadcast_shapes(*[c.aval.shape for c in cols], name="indexing")
    except ValueError as err:
        raise IndexError(f"indexing: shape mismatch: index arrays could not be broadcast together ({err})") from None
    nb = len(batch)
    rest_axes = [d for d in range(len(shape)) if d not in axes]
    contiguous = adjacent and axes == list(range(axes[0], axes[0] + len(axes)))
    if contiguous:
        first = builtins.sum(1 for d in rest_axes if d < axes[0])
        perm = (list(range(nb, nb + first)) + list(range(nb))
                + list(range(nb + first, nb + len(rest_axes))))
    else:
        perm = list(range(nb + len(rest_axes)))
    return axes, cols, batch, perm


def _index_tuple(cols, batch):
    nb = len(batch)
    parts = [o.reshape(o.broadcast(c, batch), batch + (1,)) for c in cols]
    return parts[0] if len(parts) == 1 else lax.concatenate(*parts, axis=nb)


def _check_empty_axes(shape, axes, batch):
    for a in axes:
        if shape[a] == 0 and math.prod(batch) != 0:
            raise IndexError(f"indexing: index out of bounds for axis {a} with size 0")


def _gather_result(y, entries, adjacent):
    axes, cols, batch, perm = _advanced_plan(y, entries, adjacent)
    shape = y.aval.shape
    rest = tuple(n for d, n in enumerate(shape) if d not in axes)
    _check_empty_axes(shape, axes, batch)
    gathered_shape = batch + rest
    out_shape = tuple(gathered_shape[p] for p in perm)
    check_size("indexing", out_shape, y.aval.dtype, y.device)
    if math.prod(out_shape) == 0:
        return o.const(0, out_shape, y.aval.dtype, y.device)
    g = lax.gather(y, _index_tuple(cols, batch), axes=tuple(axes))
    return o.transpose(g, perm)


def _getitem_names(names, key, ndim, out_ndim):
    """Names of x[key] for basic indexing: integer-indexed axes drop theirs, sliced ones keep
    them, new axes (None) get None; array indexing names no axis."""
    items = key if isinstance(key, tuple) else (key,)
    if builtins.any(isinstance(k, (Array, list)) for k in items):
        return None
    consumed = builtins.sum(1 for k in items if k is not None and k is not Ellipsis)
    result, axis = [], 0
    for k in items:
        if k is Ellipsis:
            n = ndim - consumed
            result.extend(names[axis:axis + n])
            axis += n
        elif k is None:
            result.append(None)
        elif isinstance(k, builtins.slice):
            result.append(names[axis])
            axis += 1
        else:
            axis += 1
    result.extend(names[axis:])
    return tuple(result) if len(result) == out_ndim else None


class _BasicIndex(views.Step):
    """`x[key]` for a key of ints, slices, `...` and None: a view of x, as in NumPy.

    A step depends only on the key and x's shape, and computes at its construction all it
    needs to record the view's value (`forward`), the write of a value into its part
    (`put`, behind `backward` and `x[key] = v`), and its NumPy layout; `_plan` keeps the
    steps of recent keys, so a key repeated on a shape (a loop body) is parsed once. A step
    is immutable once made: views share it."""
    __slots__ = ("key", "expanded", "entries", "shape", "inserted", "scalar", "_in_shape",
                 "_ints", "_sizes", "_reverse", "_slice", "_reshape_out", "_numpy_key", "_put",
                 "_layouts")

    def __init__(self, key, parsed, in_shape):
        self.key = key
        self.expanded = parsed.shape      # x's shape with a 1 at each None
        self.entries = parsed.entries     # an int or a slice per axis of that shape
        self.inserted = tuple(parsed.inserted)
        self.shape = tuple([len(range(*e.indices(n))) for n, e in zip(parsed.shape, parsed.entries)
                            if type(e) is builtins.slice])
        # One int per axis (no slice, None or `...` in the key): NumPy returns a scalar, a
        # copy, not a view.
        self.scalar = not self.shape and key is not Ellipsis and not (
            type(key) is tuple and builtins.any(k is Ellipsis for k in key))
        self._in_shape = tuple(in_shape)
        # forward: reshape to `expanded` (None), a dynamic_slice at the ints (their positions
        # are program inputs, so `x[i]` in a loop over i reuses one program), a reverse
        # (negative steps), a strided slice, a reshape dropping the ints' axes
        entries = self.entries
        self._ints = builtins.any(isinstance(k, builtins.int) for k in entries)
        shape = self.expanded
        if self._ints:
            self._sizes = tuple([1 if isinstance(k, builtins.int) else n
                                 for k, n in zip(entries, shape)])
            shape = self._sizes
            entries = [builtins.slice(None) if isinstance(k, builtins.int) else k for k in entries]
        else:
            self._sizes = None
        start, limit, strides, reverse_dims, kept = _slice_params(shape, entries)
        self._reverse = tuple(reverse_dims)
        start, limit, strides = tuple(start), tuple(limit), tuple(strides)
        if (start, limit, strides) == ((0,) * len(shape), shape, (1,) * len(shape)):
            self._slice = None
        else:
            self._slice = {"start": start, "limit": limit, "strides": strides}
        self._reshape_out = kept != self.shape
        # the key NumPy reads as this step (one entry an axis of `expanded`; the `...` makes
        # an all-int key give a 0-d array, not a scalar)
        self._numpy_key = tuple(self.entries) + (Ellipsis,)
        self._put = None          # the write's parameters, made at the first write
        self._layouts = {}        # parent strides (or item size, C order) -> layout

    def forward(self, node):
        names = node.aval.names
        host = eager_host_value(node)
        if host is not None:
            # NumPy's view of the computed value (no copy), which the operations below would
            # compute one by one; a value is immutable, so the view is too
            if host.shape != self.expanded:
                host = host.reshape(self.expanded)
            out = host[self._numpy_key]
            if names is not None:
                names = _getitem_names(names, self.key, len(names), len(self.shape))
            return host_leaf(out, node.device, names)
        if node.aval.shape != self.expanded:
            node = lax.reshape(node, shape=self.expanded)
        if self._ints:
            dev = node.device
            starts = tuple([scalar_node(k, dt.int64, dev) if isinstance(k, builtins.int)
                            else constant(0, (), dt.int64, dev) for k in self.entries])
            node = lax.dynamic_slice(node, *starts, sizes=self._sizes)
        if self._reverse:
            node = lax.reverse(node, dims=self._reverse)
        params = self._slice
        if params is not None:
            node = lax.slice_by(node, params)
        if self._reshape_out:
            node = lax.reshape(node, shape=self.shape)
        if names is not None:
            node = renamed(node, _getitem_names(names, self.key, len(names), len(self.shape)))
        return node

    def backward(self, parent, value):
        return self.put(parent, value)

    def put(self, x, v):
        """x (of the step's input shape) with the step's part replaced by v (broadcast to
        the part's shape): what `x[key] = v` records."""
        host = eager_host_value(x)
        value = None if host is None else eager_host_value(v)
        if value is not None:
            # both computed: NumPy writes into a copy, which the operations below would
            # compute one by one
            out = host.copy()
            out.reshape(self.expanded)[self._numpy_key] = value.reshape(
                _assignable(value.shape, self.shape))
            return host_leaf(out, x.device, x.aval.names)
        x2 = x if x.aval.shape == self.expanded else lax.reshape(x, shape=self.expanded)
        put = self._put
        if put is None:
            put = self._put = _put_plan(self.expanded, self.entries)
        out = _put_with(put, x2, self.entries, self.shape, v)
        if out.aval.shape != self._in_shape:
            out = lax.reshape(out, shape=self._in_shape)
        return out

    def layout(self, x_strides):
        """The view's byte strides, and the byte offset of its first element, from x's
        strides (None adds an axis, whose stride is moot)."""
        expanded = list(x_strides)
        for i in self.inserted:
            expanded.insert(i, 0)
        strides, offset = [], 0
        for n, stride, e in zip(self.expanded, expanded, self.entries):
            if type(e) is builtins.slice:
                first, _, step = e.indices(n)
                strides.append(stride * step)
                if n:
                    offset += first * stride
            else:
                offset += e * stride
        return tuple(strides), offset

    def layout_of(self, x):
        """layout() for x's own strides (as views.layout gives them), memoized."""
        v = getattr(x, "_view", None)
        if v is not None:
            memo = v.strides
        else:
            memo = views.itemsize(x)    # C order: the strides follow from the item size
        layouts = self._layouts
        out = layouts.get(memo)
        if out is None:
            strides = v.strides if v is not None else views.c_strides(self._in_shape, memo)
            out = self.layout(strides)
            if len(layouts) >= 16:
                layouts.clear()
            layouts[memo] = out
        return out


def _signature(key):
    """A hashable stand-in for a basic key (all a step depends on beside the array's
    shape): the key's items where they are exact Python ints, None, `...` and slices of
    exact ints or None, tagged by whether the key is a tuple. None for any other key (index
    arrays, lists, NumPy or bool scalars, slices of other types): those are parsed every
    time. Exact types: True == 1 and 1.0 == 1 hash alike, but a bool or a float key is an
    error."""
    if type(key) is tuple:
        items = key
    else:
        items = (key,)
    sig = []
    for k in items:
        t = type(k)
        if t is builtins.slice:
            a, b, c = k.start, k.stop, k.step
            if not ((a is None or type(a) is builtins.int)
                    and (b is None or type(b) is builtins.int)
                    and (c is None or type(c) is builtins.int)):
                return None
            sig.append((a, b, c))
        elif t is builtins.int or k is None or k is Ellipsis:
            sig.append(k)
        else:
            return None
    return (type(key) is tuple, tuple(sig))


_PLANS = {}            # (signature, shape) -> _BasicIndex
_PLANS_MAX = 2048      # emptied when full (keys of many ints: x[i] for each i)


def _plan(x, key):
    """The cached step of the basic key `key` on x's shape (made on a miss, after the
    checks of parsing: bounds, too many indices), or None for a key that is not basic."""
    sig = _signature(key)
    if sig is None:
        return None
    shape = x._node.aval.shape
    ck = (sig, shape)
    step = _PLANS.get(ck)
    if step is None:
        parsed = _parse(x, key)     # raises here, at the call, for a bad key
        step = _BasicIndex(key, parsed, shape)
        if len(_PLANS) >= _PLANS_MAX:
            _PLANS.clear()
        _PLANS[ck] = step
    return step


def _with_exact_ints(key):
    """`key` with the integers of its ints and slices (NumPy integers, 0-d integer arrays:
    what library code computes its bounds with) made Python ints, so that its plan is
    cached (_signature); None if it has none, or has items of other kinds."""
    items = key if type(key) is tuple else (key,)
    out = []
    changed = False
    for k in items:
        t = type(k)
        if t is builtins.slice:
            bounds = [k.start, k.stop, k.step]
            for i, b in enumerate(bounds):
                if b is not None and type(b) is not builtins.int:
                    if isinstance(b, builtins.bool) or not _integer_scalar(b):
                        return None
                    bounds[i] = operator.index(b)
                    changed = True
            out.append(builtins.slice(*bounds))
        elif t is builtins.int or k is None or k is Ellipsis:
            out.append(k)
        elif isinstance(k, np.integer):
            out.append(builtins.int(k))
            changed = True
        else:
            return None
    if not changed:
        return None
    return tuple(out) if type(key) is tuple else out[0]


def _integer_scalar(b) -> bool:
    """Whether b is a NumPy integer or a 0-d integer tlaloc array (operator.index reads it)."""
    if isinstance(b, np.integer):
        return True
    return type(b) is Array and b.ndim == 0 and b.dtype.kind in dt.INTEGER_KINDS


def getitem(x: Array, key):
    step = _plan(x, key)
    if step is None:
        exact = _with_exact_ints(key)
        if exact is not None:
            key = exact
            step = _plan(x, key)
    if step is not None:
        if step.scalar:
            return wrap(step.forward(x._node))
        strides, offset = step.layout_of(x)
        return views.view(x, step, strides, offset=offset)
    if type(key) is Array:
        selected = _host_masked(x._node, key._node)
        if selected is not None:
            return wrap(host_leaf(selected, x.device))
    parsed = _parse(x, key)
    if not _has_arrays(parsed.entries):
        step = _BasicIndex(key, parsed, x.shape)
        if step.scalar:
            return wrap(step.forward(x._node))
        strides, offset = step.layout_of(x)
        return views.view(x, step, strides, offset=offset)
    found = _host_key(x._node, parsed)
    if found is not None:
        host, host_key = found
        # (np.asarray: NumPy reads 0-d index arrays as ints, so an all-int key gives a scalar)
        return wrap(host_leaf(np.asarray(host[host_key]), x.device))
    entries = _expand_masks(parsed.entries)
    basic = [e if isinstance(e, builtins.slice) else builtins.slice(None) for e in entries]
    y = _apply_basic(o.reshape(x._node, parsed.shape), basic)
    out = _gather_result(y, entries, parsed.adjacent)
    names = x._node.aval.names
    if names is not None:
        out = renamed(out, _getitem_names(names, key, len(names), len(out.aval.shape)))
    return wrap(out)


# ----------------------------------------------------------------------------- setitem

def _value_node(x, value):
    if isinstance(value, Array):
        if value.device != x.device:
            raise ValueError(f"__setitem__: the value is on {value.device}, the array on {x.device}")
        try:
            d = dt.promote(x.dtype, value.dtype)
        except TypeError:
            d = None
        if d is not x.dtype:
            raise TypeError(f"__setitem__: a {value.dtype} value cannot be stored in a {x.dtype} "
                            "array without changing its dtype; cast the value with astype")
        return cast(value._node, x.dtype)
    if isinstance(value, (builtins.bool, builtins.int, builtins.float, builtins.complex)):
        d = dt.scalar_dtype(value, x.dtype)
        if dt.promote(x.dtype, d) is not x.dtype:
            raise TypeError(f"__setitem__: a Python {type(value).__name__} cannot be stored in a "
                            f"{x.dtype} array")
        return scalar_node(value, x.dtype, x.device)
    raise TypeError(f"__setitem__: the value must be a tlaloc array or a Python scalar, "
                    f"got {type(value).__name__}")


def _assignable(vshape, shape):
    """`vshape` less the leading size-1 dimensions an assignment into a region of `shape`
    drops; ValueError where it does not broadcast to `shape`."""
    trimmed = vshape
    while len(trimmed) > len(shape) and trimmed[0] == 1:
        trimmed = trimmed[1:]
    if len(trimmed) > len(shape) or builtins.any(
            a not in (1, b) for a, b in zip(trimmed[::-1], shape[::-1])):
        raise ValueError(f"__setitem__: a value of shape {tuple(vshape)} cannot be broadcast "
                         f"to the indexed shape {tuple(shape)}")
    return trimmed


def _broadcast_value(v, shape):
    """`v` broadcast to `shape` for assignment (leading size-1 dimensions may be dropped)."""
    vshape = v.aval.shape
    if vshape == shape:
        return v
    v = o.reshape(v, _assignable(vshape, shape))
    return o.broadcast(v, tuple(shape))


def _set_basic(x2, entries, v):
    """x2 with the region of the (int/slice) entries replaced by v (broadcast to the
    region's indexed shape)."""
    shape = x2.aval.shape
    return _put_with(_put_plan(shape, entries), x2, entries, _basic_result_shape(shape, entries), v)


def _put_plan(shape, entries):
    """What writing into the region of the (int/slice) entries of an array of `shape`
    takes: the region's shape, the pad parameters placing it (low, high, interior), the
    axes to reverse (negative steps), and whether it is a box (a dynamic_update_slice)."""
    low, high, interior, region, reverse_dims = [], [], [], [], []
    for n, k in zip(shape, entries):
        if isinstance(k, builtins.int):
            first, last, step, count = k, k, 1, 1
        else:
            lo, hi, step = k.indices(n)
            count = len(range(lo, hi, step))
            if step < 0:
                reverse_dims.append(len(region))
                first, last, step = lo + (count - 1) * step, lo, -step
            else:
                first, last = lo, lo + (count - 1) * step
        region.append(count)
        low.append(first if count else 0)
        high.append(n - 1 - last if count else n)
        interior.append(step - 1)
    box = builtins.all(c == 1 or i == 0 for c, i in zip(region, interior))
    return (tuple(shape), tuple(region), tuple(low), tuple(high), tuple(interior),
            tuple(reverse_dims), box)


def _put_with(put, x2, entries, value_shape, v):
    """x2 with the region `put` describes (_put_plan of x2's shape and `entries`) replaced
    by v broadcast to `value_shape` (the region without the ints' axes): a
    dynamic_update_slice for a box, else pad the value into place and select."""
    shape, region, low, high, interior, reverse_dims, box = put
    vb = _broadcast_value(v, value_shape)
    if 0 in region:
        return x2
    vr = o.reshape(vb, region)
    if reverse_dims:
        vr = lax.reverse(vr, dims=reverse_dims)
    if region == shape:
        return vr
    dtype = x2.aval.dtype
    dev = x2.device
    if box:
        # a box: int positions are program inputs (as in x[i]), so a loop writing x[i] = v
        # for each i reuses one program
        starts = []
        fixed = {}     # one constant per distinct fixed start
        for k, lo in zip(entries, low):
            if isinstance(k, builtins.int):
                starts.append(scalar_node(k, dt.int64, dev))
            else:
                c = fixed.get(lo)
                if c is None:
                    c = fixed[lo] = _fixed_start(lo, dev)
                starts.append(c)
        return lax.dynamic_update_slice(x2, vr, *starts)
    params = {"low": low, "high": high, "interior": interior}
    placed = lax.pad(vr, o.const(0, (), dtype, dev), **params)
    inside = lax.pad(o.const(True, region, dt.bool, dev), o.const(False, (), dt.bool, dev),
                     **params)
    return o.select(inside, placed, x2)


_FIXED_STARTS = {}      # (start, device) -> that start as a computed constant
_FIXED_STARTS_MAX = 256


def _fixed_start(lo, dev):
    """The fixed start `lo` of a box write, a 0-d constant (the write's lowering reads it:
    _prims/shape.py). A computed one is immutable and stays an equation of every program
    that uses it (_graph.CONSTANT), so the writes of a loop share one, and a program holds
    it once; one still pending (execution="compiled", a trace) is made at each write."""
    key = (lo, dev)
    c = _FIXED_STARTS.get(key)
    if c is None:
        c = constant(lo, (), dt.int64, dev)
        if c.value is None:
            return c
        if len(_FIXED_STARTS) >= _FIXED_STARTS_MAX:
            _FIXED_STARTS.clear()
        _FIXED_STARTS[key] = c
    return c


def _set_advanced(x2, entries, v, adjacent):
    basic = [e if isinstance(e, builtins.slice) else builtins.slice(None) for e in entries]
    y = _apply_basic(x2, basic)
    axes, cols, batch, perm = _advanced_plan(y, entries, adjacent)
    shape = y.aval.shape
    rest = tuple(n for d, n in enumerate(shape) if d not in axes)
    gathered_shape = batch + rest
    out_shape = tuple(gathered_shape[p] for p in perm)
    vb = _broadcast_value(v, out_shape)
    if math.prod(out_shape) == 0:
        return x2
    _check_empty_axes(shape, axes, batch)
    inverse = [perm.index(i) for i in range(len(perm))]
    updates = o.transpose(vb, inverse)
    y2 = lax.scatter(y, _index_tuple(cols, batch), updates, axes=tuple(axes), mode="set")
    if builtins.all(k == builtins.slice(None) for k in basic):
        return y2
    return _set_basic(x2, basic, y2)


def _leading_mask_select(x2, entries, v):
    """`x[mask] = v` (mask over the leading axes, the rest whole) where v does not vary along
    the masked elements: a select, with no evaluation. None if the case does not apply."""
    if not entries or not isinstance(entries[0], _Mask):
        return None
    m = entries[0]
    if builtins.any(not (isinstance(e, builtins.slice) and e == builtins.slice(None))
                    for e in entries[1:]):
        return None
    shape = x2.aval.shape
    trailing = shape[m.ndim:]
    vshape = v.aval.shape
    while vshape and vshape[0] == 1 and len(vshape) > len(trailing):
        vshape = vshape[1:]
    if len(vshape) > len(trailing):
        return None   # the value has one entry per masked element: needs the count
    vb = _broadcast_value(o.reshape(v, vshape), trailing)
    full = o.broadcast(vb, shape, dims=tuple(range(m.ndim, len(shape))))
    mask = o.broadcast(m.node, shape, dims=tuple(range(m.ndim)))
    return o.select(mask, full, x2)


def _written(host, key, value):
    """A copy of `host` with host[key] = value, by NumPy (the last of repeated indices
    lands), in x's shape; ValueError, as the recorded path words it, for a value that does
    not broadcast to the indexed part."""
    out = host.copy()
    try:
        out[key] = value
    except ValueError:
        raise ValueError(f"__setitem__: a value of shape {value.shape} cannot be broadcast "
                         f"to the indexed shape {host[key].shape}") from None
    return out


def setitem(x: Array, key, value) -> Array:
    """The array `x` with `x[key]` replaced by `value` (x itself is not changed)."""
    step = _plan(x, key)
    if step is not None:
        v = _value_node(x, value)
        node = x._node
        return wrap(renamed(step.put(node, v), node.aval.names))
    parsed = _parse(x, key)
    v = _value_node(x, value)
    found = _host_key(x._node, parsed)
    v_host = None if found is None else eager_host_value(v)
    if v_host is not None:
        return wrap(host_leaf(_written(*found, v_host).reshape(x.shape), x.device))
    x2 = o.reshape(x._node, parsed.shape)
    out = _leading_mask_select(x2, parsed.entries, v) if not parsed.inserted else None
    if out is None:
        entries = parsed.entries
        if _has_arrays(entries):
            entries = _expand_masks(entries)
        if _has_arrays(entries):
            out = _set_advanced(x2, entries, v, parsed.adjacent)
        else:
            out = _set_basic(x2, entries, v)
    return wrap(renamed(o.reshape(out, x.shape), x._node.aval.names))


# ----------------------------------------------------------------------------- take, take_along_axis

def _index_node(name, x, indices):
    if isinstance(indices, Array):
        node = indices._node
    else:
        raise TypeError(f"{name}: indices must be a tlaloc array, got {type(indices).__name__}")
    if node.aval.dtype.kind not in dt.INTEGER_KINDS:
        raise TypeError(f"{name}: indices must have an integer dtype, got {node.aval.dtype}")
    check_devices(name, x._node, node)
    return node


def _check_bounds(name, node, x, axis):
    """IndexError for index values known now that lie outside axis `axis` of node `x`."""
    host = o.known_value(node)
    if host is not None and host.size:
        n, what = o.fixed_index_bound(x, axis, x.aval.shape[axis])
        _check_values(name, host, axis, n, what)


def _check_values(name, host, axis, n, what=None):
    """IndexError for index values `host` (not empty) outside [-n, n) on axis `axis`."""
    lo, hi = host.min(), host.max()
    if lo < -n or hi >= n:
        bad = lo if lo < -n else hi
        raise IndexError(f"{name}: index {builtins.int(bad)} is out of bounds for axis "
                         f"{axis} with {what or f'size {n}'}")


def take(x, indices, /, *, axis=None):
    """Elements of x at `indices` along `axis` (optional for 1-d x). Negative indices count
    from the end. Out-of-bounds indices raise IndexError when their values are known;
    pending ones are clamped."""
    node = node_of("take", x)
    idx = _index_node("take", x, indices)
    shape = node.aval.shape
    if axis is None:
        if len(shape) != 1:
            raise ValueError(f"take: axis must be given for a {len(shape)}-d array")
        axis = 0
    if not shape:
        raise ValueError("take: x must have at least one dimension")
    ax = axis_of("take", node, axis)
    n = shape[ax]
    _check_bounds("take", idx, node, ax)
    out_shape = shape[:ax] + idx.aval.shape + shape[ax + 1:]
    check_size("take", out_shape, node.aval.dtype, node.device)
    if n == 0 and math.prod(idx.aval.shape):
        raise IndexError(f"take: cannot take from axis {ax} of size 0")
    names = None
    if node.aval.names is not None or idx.aval.names is not None:
        # x's axes keep their names; the taken axis keeps its own for 1-d indices
        xn, inn = names_of(node), names_of(idx)
        mid = (xn[ax],) if len(inn) == 1 and inn[0] is None else inn
        names = distinct("take", xn[:ax] + mid + xn[ax + 1:])
    if math.prod(out_shape) == 0:
        return wrap(renamed(o.const(0, out_shape, node.aval.dtype, node.device), names))
    if names is None and math.prod(out_shape) <= config.eager_max_size \
            and idx.device is node.device:
        host, where = eager_host_value(node), eager_host_value(idx)
        if host is not None and where is not None:    # (its bounds are checked above)
            return wrap(host_leaf(np.take(host, where, axis=ax), node.device))
    return wrap(renamed(o.take_axis(node, o.normalize_indices(idx, n, o.dynamic_length(node, ax)), ax),
                        names))


def take_along_axis(x, indices, /, *, axis=-1):
    """out[..., i, ...] = x[..., indices[..., i, ...], ...] along `axis`; x and indices have
    the same number of dimensions and broadcast against each other off the axis."""
    node = node_of("take_along_axis", x)
    idx = _index_node("take_along_axis", x, indices)
    shape, ishape = node.aval.shape, idx.aval.shape
    if len(shape) != len(ishape):
        raise ValueError(f"take_along_axis: x ({len(shape)}-d) and indices ({len(ishape)}-d) "
                         "must have the same number of dimensions")
    if not shape:
        raise ValueError("take_along_axis: x must have at least one dimension")
    ax = axis_of("take_along_axis", node, axis)
    names = unify("take_along_axis", [node.aval.names, idx.aval.names])   # x's axes' names
    out = []
    for d, (a, b) in enumerate(zip(shape, ishape)):
        if d == ax:
            out.append(b)
        elif a == b or b == 1:
            out.append(a)
        elif a == 1:
            out.append(b)
        else:
            raise ValueError(f"take_along_axis: shapes {shape} and {ishape} do not broadcast "
                             f"off axis {ax}")
    out = tuple(out)
    n = shape[ax]
    _check_bounds("take_along_axis", idx, node, ax)
    if n == 0 and math.prod(out):
        raise IndexError(f"take_along_axis: cannot take from axis {ax} of size 0")
    if math.prod(out) == 0:
        return wrap(renamed(o.const(0, out, node.aval.dtype, node.device), names))
    nd = len(shape)
    xb = o.broadcast(node, tuple(n if d == ax else m for d, m in enumerate(out)),
                     dims=tuple(range(nd))) if shape != tuple(
                         n if d == ax else m for d, m in enumerate(out)) else node
    ib = o.normalize_indices(idx, n, o.dynamic_length(node, ax))
    if ishape != out:
        ib = o.broadcast(ib, out, dims=tuple(range(nd)))
    cols = [o.reshape(ib if d == ax else o.iota(out, d, node.device), out + (1,)) for d in range(nd)]
    coords = cols[0] if nd == 1 else lax.concatenate(*cols, axis=nd)
    return wrap(renamed(lax.gather(xb, coords, axes=tuple(range(nd))), names))
