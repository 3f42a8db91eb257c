"""Nested tuples (named ones too), lists, dicts and registered classes of leaves ("trees"):
flatten and rebuild them.

Used for the arguments and results of grad, vjp, jvp, jit and the control-flow functions,
and public as tlaloc.tree. Dict keys are visited in sorted order, so equal structures
flatten identically. A class registered with `register` flattens into its children and a
hashable auxiliary value (its static fields).
"""
from __future__ import annotations


class Structure:
    """The shape of a tree without its leaves; hashable, so usable in cache keys."""

    __slots__ = ("kind", "meta", "children", "_hash")

    def __init__(self, kind, meta, children):
        self.kind = kind          # "leaf", "tuple", "namedtuple", "list", "dict", "none", "custom"
        self.meta = meta          # dict keys (sorted tuple), the named tuple's class,
                                  # (registered class, aux) for "custom", or None
        self.children = children  # tuple of Structure
        self._hash = hash((kind, meta, children))

    def __eq__(self, other):
        return isinstance(other, Structure) and (self.kind, self.meta, self.children) == (
            other.kind, other.meta, other.children)

    def __hash__(self):
        return self._hash

    def __repr__(self):
        if self.kind == "leaf":
            return "*"
        if self.kind == "none":
            return "None"
        inner = ", ".join(map(repr, self.children))
        if self.kind == "dict":
            inner = ", ".join(f"{k!r}: {c!r}" for k, c in zip(self.meta, self.children))
            return "{" + inner + "}"
        if self.kind == "namedtuple":
            return f"{self.meta.__name__}({inner})"
        if self.kind == "custom":
            return f"{self.meta[0].__name__}({inner})"
        return f"({inner})" if self.kind == "tuple" else f"[{inner}]"

    @property
    def num_leaves(self) -> int:
        if self.kind == "leaf":
            return 1
        return sum(c.num_leaves for c in self.children)


LEAF = Structure("leaf", None, ())
NONE = Structure("none", None, ())

# Registered classes: type -> (flatten(obj) -> (children, aux), unflatten(aux, children) -> obj)
_REGISTERED: dict = {}


def register(cls, flatten, unflatten) -> None:
    """Make instances of `cls` trees: `flatten(obj)` returns (an iterable of children, a
    hashable aux value); `unflatten(aux, children)` rebuilds the object."""
    if not isinstance(cls, type):
        raise TypeError(f"tree.register: expected a class, got {cls!r}")
    if not callable(flatten) or not callable(unflatten):
        raise TypeError("tree.register: flatten and unflatten must be callable")
    if cls in (tuple, list, dict, type(None)) or cls in _REGISTERED:
        raise ValueError(f"tree.register: {cls.__name__} is already a tree node")
    _REGISTERED[cls] = (flatten, unflatten)


def flatten(tree, is_leaf=None):
    """(leaves, structure). Everything that is not a tuple (named or not), list, dict or None
    is a leaf."""
    leaves = []
    return leaves, _walk(tree, leaves, is_leaf)


# Module-level recursion (not a nested closure): a recursive closure is a reference cycle
# that would keep the leaves alive until the garbage collector runs.
def _walk(t, leaves, is_leaf):
    if is_leaf is not None and is_leaf(t):
        leaves.append(t)
        return LEAF
    if t is None:
        return NONE
    registered = _REGISTERED.get(type(t))
    if registered is not None:
        children, aux = registered[0](t)
        try:
            hash(aux)
        except TypeError:
            raise TypeError(f"tree: the aux value of a {type(t).__name__} must be hashable, "
                            f"got {aux!r}") from None
        return Structure("custom", (type(t), aux),
                         tuple(_walk(c, leaves, is_leaf) for c in children))
    if isinstance(t, tuple):
        children = tuple(_walk(c, leaves, is_leaf) for c in t)
        if hasattr(t, "_fields"):   # a named tuple (EighResult, a user's parameter record)
            return Structure("namedtuple", type(t), children)
        return Structure("tuple", None, children)
    if isinstance(t, list):
        return Structure("list", None, tuple(_walk(c, leaves, is_leaf) for c in t))
    if isinstance(t, dict):
        keys = tuple(sorted(t))
        return Structure("dict", keys, tuple(_walk(t[k], leaves, is_leaf) for k in keys))
    leaves.append(t)
    return LEAF


def unflatten(structure: Structure, leaves):
    return _build(structure, iter(leaves))


def _build(s, it):
    if s.kind == "leaf":
        return next(it)
    if s.kind == "none":
        return None
    children = [_build(c, it) for c in s.children]
    if s.kind == "tuple":
        return tuple(children)
    if s.kind == "namedtuple":
        return s.meta(*children)
    if s.kind == "list":
        return children
    if s.kind == "custom":
        cls, aux = s.meta
        return _REGISTERED[cls][1](aux, children)
    return dict(zip(s.meta, children))


def tree_map(fn, tree, *rest):
    leaves, structure = flatten(tree)
    others = [flatten(r)[0] for r in rest]
    return unflatten(structure, [fn(x, *ys) for x, *ys in zip(leaves, *others)])
