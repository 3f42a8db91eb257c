"""Views: arrays that show part of another array's storage, with NumPy's rules for writes.

tlaloc's values are immutable graph nodes, so a view cannot share memory with its base. A
*family* stands for the storage instead. It holds the base's current value, and weak
references to the arrays that show it (the base itself and its views, views of views
included), each knowing the *steps* that take the base's value to its own: a basic index, a
reshape, a transpose, a reversal, a real or imaginary part.

A write through any member (`__setitem__`, an in-place operator: `assign`) records the
member's new value taken back through its steps (each step's `backward`: the parent with the
view's part replaced, a select, a dynamic_update_slice, a reshape, ...), which is the base's
new value, and rebinds every other live member to its steps applied to that value (each
step's `forward`, the same computation that made the view). So every array of the family sees
the write, in program order, as in NumPy; the graph stays functional: nothing is copied, the
updates fuse and compile with the rest, and derivatives flow through them.

Which functions return views follows NumPy (docs/indexing.md, "Views"). Where NumPy's choice
depends on memory layout (`reshape` of a non-contiguous view copies), each member also keeps
the layout NumPy would give it (byte strides, item size, offset in the base's buffer), and
`reshape` asks `reshaped` as NumPy asks its no-copy reshape.

Arrays that never take part in a view pay nothing: an Array's `_view` slot is unset until a
view is taken of it (read it with `getattr(x, "_view", None)`), so only the view functions
and writes look for it. A family holds its members weakly (a dead view costs nothing; the
list drops them as new views are taken), and its members hold the family, so a live view
keeps its base's value alive, as a NumPy view keeps its base's buffer. A write rebinds only
the members whose bytes (in NumPy's layout) it can reach.
"""
from __future__ import annotations

import weakref

from .._array import Array
from .._prims import lax
from . import _ops as o
from ._core import renamed, wrap


class _Family:
    """One storage: its current value, shown by an Array of its own (so the value is computed,
    and kept, like one the user holds, even when the base array is gone), and its members."""
    __slots__ = ("storage", "members", "prune_at")

    def __init__(self, node):
        self.storage = wrap(node)
        # weak references to the Arrays that show part of it (each member's _View is read
        # from the member: holding it here would close a cycle through _View.family, and
        # the family, its storage and the graph behind it would wait for the cycle
        # collector instead of going with their last member)
        self.members = []
        self.prune_at = 8

    def add(self, member: Array) -> None:
        members = self.members
        members.append(weakref.ref(member))
        if len(members) >= self.prune_at:   # views taken in a loop and dropped
            members[:] = [m for m in members if m() is not None]
            self.prune_at = max(8, 2 * len(members))


class _View:
    """What a member knows: its family, the steps from the base's value to its own, and the
    layout NumPy would give it in the base's buffer (byte strides, item size, and the byte
    offset of its first element)."""
    __slots__ = ("family", "steps", "shape", "strides", "itemsize", "offset", "_extent")

    def __init__(self, family, steps, shape, strides, itemsize, offset):
        self.family = family
        self.steps = steps
        self.shape = shape
        self.strides = strides
        self.itemsize = itemsize
        self.offset = offset
        self._extent = False      # computed at the first write that asks

    @property
    def extent(self):
        """The bytes [first, last) of the base's buffer this member spans (its elements lie
        in them, not necessarily all of them); None when it has no element."""
        extent = self._extent
        if extent is False:
            extent = None
            if 0 not in self.shape:
                first = last = self.offset
                for n, s in zip(self.shape, self.strides):
                    if s < 0:
                        first += (n - 1) * s
                    else:
                        last += (n - 1) * s
                extent = (first, last + self.itemsize)
            self._extent = extent
        return extent


# ----------------------------------------------------------------------------- layouts

def c_strides(shape, itemsize) -> tuple:
    """Byte strides of a C-ordered array of `shape`."""
    strides = []
    step = itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def layout(x: Array):
    """(byte strides, item size) of x as NumPy would lay it out: a view's own, C order for
    any other array (tlaloc's results are new arrays, as NumPy's are)."""
    v = getattr(x, "_view", None)
    if v is not None:
        return v.strides, v.itemsize
    itemsize = _itemsize(x)
    return c_strides(x.shape, itemsize), itemsize


def _itemsize(x: Array) -> int:
    return max(x._node.aval.dtype.bits >> 3, 1)    # bool: one byte


itemsize = _itemsize


def _c_contiguous(shape, strides, itemsize) -> bool:
    """NumPy's C-contiguity: size-1 axes' strides do not count, an empty array always is."""
    if 0 in shape:
        return True
    expected = itemsize
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1:
            if s != expected:
                return False
            expected *= n
    return True


def reshaped(x: Array, new_shape):
    """The byte strides of x reshaped to `new_shape` without a copy, or None where that is
    impossible and NumPy's reshape copies."""
    v = getattr(x, "_view", None)
    if v is None:     # an array of its own: C-contiguous
        return c_strides(new_shape, _itemsize(x))
    return _reshaped_strides(x.shape, v.strides, v.itemsize, new_shape)


def _reshaped_strides(shape, strides, itemsize, new_shape):
    """The byte strides of the array (`shape`, `strides`) reshaped to `new_shape` without a
    copy, or None where that is impossible and NumPy's reshape copies.

    NumPy's rule: a C-contiguous (or empty) array always reshapes in place; otherwise the
    axes of size other than 1 are matched in groups whose products agree, old and new, and a
    group of old axes must be C-contiguous among themselves to become the new ones."""
    if _c_contiguous(shape, strides, itemsize):
        return c_strides(new_shape, itemsize)
    old = [(n, s) for n, s in zip(shape, strides) if n != 1]
    new = list(new_shape)
    out = [0] * len(new)
    oi = ni = 0
    while ni < len(new) and oi < len(old):
        # the smallest groups old[oi:oj], new[ni:nj] of equal size
        oj, nj = oi + 1, ni + 1
        old_size, new_size = old[oi][0], new[ni]
        while old_size != new_size:
            if new_size < old_size:
                new_size *= new[nj]
                nj += 1
            else:
                old_size *= old[oj][0]
                oj += 1
        for k in range(oi, oj - 1):
            if old[k][1] != old[k + 1][0] * old[k + 1][1]:
                return None    # the group's old axes are not contiguous: no common stride
        out[nj - 1] = old[oj - 1][1]
        for k in range(nj - 1, ni, -1):
            out[k - 1] = out[k] * new[k]
        oi, ni = oj, nj
    last = out[ni - 1] if ni else itemsize
    for k in range(ni, len(new)):   # trailing axes of size 1
        out[k] = last
    return tuple(out)


# ----------------------------------------------------------------------------- steps

class Step:
    """One step from a parent's value to a view's. `forward(parent)` is the view's value (the
    computation of the function that made the view, axis names included); `backward(parent,
    value)` is the parent's value with the view's part replaced by `value`."""
    __slots__ = ()

    def forward(self, node):
        raise NotImplementedError

    def backward(self, parent, value):
        raise NotImplementedError


class Reshape(Step):
    """reshape, expand_dims, squeeze (and the identity): `names`, when given, are the view's
    axis names (else reshape's rule gives them)."""
    __slots__ = ("shape", "names")

    def __init__(self, shape, names=None):
        self.shape = tuple(shape)
        self.names = names

    def forward(self, node):
        out = o.reshape(node, self.shape)
        return out if self.names is None else renamed(out, self.names)

    def backward(self, parent, value):
        return o.reshape(value, parent.aval.shape)


class Permute(Step):
    """permute_dims, matrix_transpose, .T, moveaxis."""
    __slots__ = ("perm",)

    def __init__(self, perm):
        self.perm = tuple(perm)

    def forward(self, node):
        return o.transpose(node, self.perm)

    def backward(self, parent, value):
        inverse = [0] * len(self.perm)
        for i, p in enumerate(self.perm):
            inverse[p] = i
        return o.transpose(value, inverse)


class Reverse(Step):
    """flip."""
    __slots__ = ("dims",)

    def __init__(self, dims):
        self.dims = tuple(dims)

    def forward(self, node):
        return lax.reverse(node, dims=self.dims) if self.dims else node

    def backward(self, parent, value):
        return self.forward(value)


class ComplexPart(Step):
    """real or imag of a complex array."""
    __slots__ = ("imaginary",)

    def __init__(self, imaginary: bool):
        self.imaginary = imaginary

    def forward(self, node):
        return lax.imag(node) if self.imaginary else lax.real(node)

    def backward(self, parent, value):
        if self.imaginary:
            return lax.complex(lax.real(parent), value)
        return lax.complex(value, lax.imag(parent))


# ----------------------------------------------------------------------------- views and writes

def view(x: Array, step: Step, strides, itemsize=None, offset=0) -> Array:
    """A new array showing `step` applied to x's value, a view of x's storage, with NumPy's
    layout: byte `strides`, `itemsize` (x's unless given), and its first element `offset`
    bytes from x's."""
    parent = getattr(x, "_view", None)
    if parent is None:   # x becomes the base of a family
        family = _Family(x._node)
        shape_strides, size = layout(x)
        parent = x._view = _View(family, (), x._node.aval.shape, shape_strides, size, 0)
        family.add(x)
    else:
        family = parent.family
    node = step.forward(x._node)
    out = wrap(node)
    out._view = _View(family, parent.steps + (step,), node.aval.shape,
                      strides if type(strides) is tuple else tuple(strides),
                      parent.itemsize if itemsize is None else itemsize, parent.offset + offset)
    family.add(out)
    return out


def assign(x: Array, new: Array, opname: str) -> Array:
    """x rebound to `new` (the result of an in-place operator or __setitem__ on x), and the
    write seen by every live array that shares x's storage."""
    x._rebind(new, opname)
    v = getattr(x, "_view", None)
    if v is None:
        return x
    family = v.family
    storage = family.storage
    value = x._node
    if v.steps:
        base = storage._node
        value = renamed(_write_back(base, v.steps, value), base.aval.names)
    if storage._node is not value:
        _show(storage, value)
    extent = v._extent
    if extent is False:
        extent = v.extent
    if extent is None:
        return x           # an empty write changes no element
    # Only the members whose bytes the write can reach are rebound; the others keep their
    # values (older nodes of the same values), so writes through many disjoint views (rows,
    # blocks) cost one rebinding each, not one per live view. Dead members are dropped.
    first, last = extent
    values = {(): value}   # members' values by their steps (views of one parent share them)
    members = family.members
    live = 0
    for i in range(len(members)):
        entry = members[i]
        m = entry()
        if m is None:
            continue
        members[live] = entry
        live += 1
        if m is x:
            continue
        member = m._view
        extent = member._extent
        if extent is False:
            extent = member.extent
        if extent is not None and extent[0] < last and first < extent[1]:
            _show(m, _value_at(member.steps, values))
    del members[live:]
    return x


def _show(a: Array, node) -> None:
    """Rebind the family's array `a` to `node` (of its own shape and dtype): _rebind
    without a temporary Array."""
    old = a._node
    if old is node:
        return
    if old.owner is not None and old.owner() is a:
        old.owner = None    # `a` no longer shows it: plans need not return it
    a._node = node
    if node.value is None:
        a._own(node)


def _value_at(steps, values):
    node = values.get(steps)
    if node is None:
        node = values[steps] = steps[-1].forward(_value_at(steps[:-1], values))
    return node


def _write_back(base, steps, value):
    """The base's value with the part that `steps` show replaced by `value`."""
    parents = [base]
    for s in steps[:-1]:
        parents.append(s.forward(parents[-1]))
    for s, parent in zip(reversed(steps), reversed(parents)):
        value = s.backward(parent, value)
    return value

