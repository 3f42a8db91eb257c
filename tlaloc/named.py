"""Named axes: the user-facing functions.

An array may carry one name (a str) or None per axis (`x.names`). Names live in the abstract
value of each graph node (`Aval.names`, tlaloc/_graph.py), beside the shape and dtype, and
every primitive's names rule propagates them as its infer rule propagates shapes
(tlaloc/_prims/core.py). They never change what is computed, and programs' cache keys leave
them out. Axis arguments (`axis=`, `axes=`, `source`/`destination`) accept names wherever an
axis is expected: one helper resolves them (`axis_of`/`axes_of` in tlaloc/_api/_core.py).
See docs/named-axes.md for the rules.

Here: `rename`, `align_to`, `broadcast` (by name), `contract` (a contraction over named axes,
like einsum with names instead of letters), and the annotations
`Array[Named["batch", "feature"], float32]` checked at call time by `@typechecked`.
"""
from __future__ import annotations

import functools
import inspect
import typing

from . import _dtypes as dt
from ._api._core import cast, check_devices, node_of, promote, renamed
from ._api._core import unify as _unify_aligned
from ._api.manipulation import permute_dims, reshape
from ._array import Array
from ._prims import lax


# ----------------------------------------------------------------------------- basics

def names_of(x) -> tuple:
    """One name or None per axis of `x`."""
    return x.names


def _with_names(x, names):
    """`x` carrying `names` (a new Array object on the same value, or x itself when it has
    them already)."""
    node = renamed(x._node, names)
    return x if node is x._node else Array._from_node(node)


def _check_name(name, where):
    if name is not None and not isinstance(name, str):
        raise TypeError(f"{where}: axis names must be str or None, got {name!r}")


def _validate(names, ndim, where):
    if len(names) != ndim:
        raise ValueError(f"{where}: {len(names)} names for an array of {ndim} dimension(s)")
    seen = set()
    for n in names:
        _check_name(n, where)
        if n is not None:
            if n in seen:
                raise ValueError(f"{where}: axis name {n!r} is used twice")
            seen.add(n)
    return tuple(names)


def rename(x, *names, **mapping):
    """rename(x, "batch", None) sets every axis's name; rename(x, batch="b") renames."""
    if not isinstance(x, Array):
        raise TypeError(f"rename: expected a tlaloc array, got {type(x).__name__}")
    if names and mapping:
        raise TypeError("rename: give either all names or a mapping old=new, not both")
    if len(names) == 1 and isinstance(names[0], (tuple, list)):
        names = tuple(names[0])
    if mapping:
        current = names_of(x)
        for old in mapping:
            if old not in current:
                raise ValueError(f"rename: the array has no axis named {old!r} (names {current})")
        names = tuple(mapping.get(n, n) if n is not None else None for n in current)
    return _with_names(x, _validate(names, x.ndim, "rename"))


def unify(where, *name_tuples):
    """Right-aligned names of broadcast operands, unified; ValueError naming `where` on a
    clash, or when the result would name two axes alike."""
    ndim = max((len(t) for t in name_tuples), default=0)
    out = _unify_aligned(where, [(None,) * (ndim - len(t)) + tuple(t) for t in name_tuples])
    return out if out is not None else (None,) * ndim


# ----------------------------------------------------------------------------- name-based operations

def align_to(x, *names):
    """Permute x's axes into the order `names`, inserting size-1 axes for names x lacks.
    Every named axis of x must be listed; `...` stands for x's unnamed axes, in order."""
    if not isinstance(x, Array):
        raise TypeError(f"align_to: expected a tlaloc array, got {type(x).__name__}")
    if len(names) == 1 and isinstance(names[0], (tuple, list)):
        names = tuple(names[0])
    for n in names:
        if n is not Ellipsis:
            _check_name(n, "align_to")
        if n is not None and names.count(n) > 1:
            raise ValueError(f"align_to: {n!r} appears more than once in {names}")
    current = names_of(x)
    for n in current:
        if n is not None and n not in names:
            raise ValueError(f"align_to: axis {n!r} of the array is not in {names}")
    unnamed = [i for i, n in enumerate(current) if n is None]
    if unnamed and Ellipsis not in names:
        raise ValueError(f"align_to: the array has unnamed axes; include ... in {names}")
    order, shape, result_names = [], [], []
    for n in names:
        if n is Ellipsis:
            for i in unnamed:
                order.append(i)
                shape.append(x.shape[i])
                result_names.append(None)
        elif n in current:
            i = current.index(n)
            order.append(i)
            shape.append(x.shape[i])
            result_names.append(n)
        else:
            shape.append(1)
            result_names.append(n)
    moved = permute_dims(x, tuple(order)) if order != list(range(x.ndim)) else x
    out = reshape(moved, tuple(shape)) if tuple(shape) != moved.shape else moved
    return _with_names(out, result_names)


def broadcast(*arrays):
    """Align arrays by name (union of names in order of first appearance) so they
    broadcast against each other by name rather than by position. An axis name must have
    one size in every array that has it (or size 1)."""
    order, sizes = [], {}
    for k, a in enumerate(arrays):
        if not isinstance(a, Array):
            raise TypeError(f"broadcast: argument {k} is a {type(a).__name__}, not a tlaloc array")
        for n, size in zip(names_of(a), a.shape):
            if n is None:
                raise ValueError("broadcast: every axis must be named to broadcast by name")
            if n not in sizes:
                order.append(n)
                sizes[n] = size
            elif size != sizes[n] and size != 1 and sizes[n] != 1:
                raise ValueError(f"broadcast: axis {n!r} has size {sizes[n]} in one array and "
                                 f"{size} in another")
            elif sizes[n] == 1:
                sizes[n] = size
    return [align_to(a, *order) for a in arrays]


def contract(x1, x2, /, over):
    """Sum of products over the axes named in `over` (a name or tuple of names). Names
    the arrays share but do not contract are batch axes. The result's axes: batch names
    (in x1's order), then x1's other names, then x2's."""
    a, b = node_of("contract", x1, "x1"), node_of("contract", x2, "x2")
    over = (over,) if isinstance(over, str) else tuple(over)
    for n in over:
        _check_name(n, "contract")
        if over.count(n) > 1:
            raise ValueError(f"contract: axis {n!r} appears more than once in over={over}")
    n1, n2 = names_of(x1), names_of(x2)
    if None in n1 or None in n2:
        raise ValueError("contract: every axis must be named")
    for n in over:
        if n not in n1 or n not in n2:
            raise ValueError(f"contract: axis {n!r} is not in both arrays ({n1} and {n2})")
        if x1.shape[n1.index(n)] != x2.shape[n2.index(n)]:
            raise ValueError(f"contract: axis {n!r} has sizes {x1.shape[n1.index(n)]} and "
                             f"{x2.shape[n2.index(n)]}")
    batch = [n for n in n1 if n in n2 and n not in over]
    for n in batch:
        if x1.shape[n1.index(n)] != x2.shape[n2.index(n)]:
            raise ValueError(f"contract: batch axis {n!r} differs in size")
    check_devices("contract", a, b)
    d = promote("contract", a.aval.dtype, b.aval.dtype)
    def positions(names, of):
        return tuple(names.index(n) for n in of)
    node = lax.dot_general(cast(a, d), cast(b, d),
                           contract=(positions(n1, over), positions(n2, over)),
                           batch=(positions(n1, batch), positions(n2, batch)))
    names = batch + [n for n in n1 if n not in over and n not in batch] + \
        [n for n in n2 if n not in over and n not in batch]
    return _with_names(Array._from_node(node), names)


# ----------------------------------------------------------------------------- annotations

class Named:
    """`Named["batch", "feature"]`: the axis names an annotated array must carry
    (None for an axis whose name is not checked, ... for any number of leading axes)."""

    def __init__(self, names):
        self.names = names

    def __class_getitem__(cls, names):
        names = names if isinstance(names, tuple) else (names,)
        return cls(names)

    def __repr__(self):
        return f"Named[{', '.join(map(repr, self.names))}]"


class ArrayType:
    """The annotation `Array[Named[...], dtype]`."""

    def __init__(self, named, dtype):
        self.named = named
        self.dtype = dtype

    def __repr__(self):
        return f"Array[{self.named!r}, {self.dtype}]"

    def check(self, value, where):
        if not isinstance(value, Array):
            raise TypeError(f"{where}: expected a tlaloc array, got {type(value).__name__}")
        if self.dtype is not None and value.dtype is not self.dtype:
            raise TypeError(f"{where}: expected dtype {self.dtype}, got {value.dtype}")
        if self.named is not None:
            want = self.named.names
            have = names_of(value)
            if Ellipsis in want:
                tail = want[want.index(Ellipsis) + 1:]
                ok = len(have) >= len(tail) and all(w is None or w == h for w, h in zip(tail[::-1], have[::-1]))
            else:
                ok = len(want) == len(have) and all(w is None or w == h for w, h in zip(want, have))
            if not ok:
                raise ValueError(f"{where}: expected axes named {want}, got {have}")


def _class_getitem(params):
    params = params if isinstance(params, tuple) else (params,)
    named = next((p for p in params if isinstance(p, Named)), None)
    dtype = next((p for p in params if isinstance(p, dt.DType)), None)
    return ArrayType(named, dtype)


def typechecked(fn):
    """Check `Array[Named[...], dtype]` annotations of arguments and result at call time."""
    signature = inspect.signature(fn)
    hints = typing.get_type_hints(fn) if not isinstance(fn, functools.partial) else {}
    hints = {k: v for k, v in {**fn.__annotations__, **hints}.items() if isinstance(v, ArrayType)}

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        for name, value in bound.arguments.items():
            if name in hints:
                hints[name].check(value, f"{fn.__name__}: argument {name!r}")
        result = fn(*args, **kwargs)
        if "return" in hints:
            hints["return"].check(result, f"{fn.__name__}: result")
        return result
    return wrapper


Array.__class_getitem__ = classmethod(lambda cls, params: _class_getitem(params))
