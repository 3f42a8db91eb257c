"""tlaloc.tree: nested containers of arrays ("trees") and functions over their leaves.

A tree is a tuple (named tuples too), list, dict, None, or an instance of a class made a tree
with `register`; everything else is a leaf. These are the trees that `jit`, `grad`, `export`
and the control-flow functions take (one notion, tlaloc/_tree.py). Dict keys are visited in
sorted order. An Adam step over nested parameters, for example:

    m = tree.map(lambda m, g: b1 * m + (1 - b1) * g, m, grads)
"""
from __future__ import annotations

from . import _tree
from ._tree import Structure

__all__ = ["Structure", "flatten", "leaves", "map", "paths", "register", "structure",
           "unflatten"]

def flatten(tree, is_leaf=None):
    """(list of leaves, Structure). `is_leaf(node) -> bool` may stop the descent early."""
    return _tree.flatten(tree, is_leaf)

def leaves(tree, is_leaf=None) -> list:
    """The leaves of `tree`, in flattening order."""
    return _tree.flatten(tree, is_leaf)[0]

def structure(tree, is_leaf=None) -> Structure:
    """The Structure of `tree` (hashable; equal for trees of the same shape)."""
    return _tree.flatten(tree, is_leaf)[1]

def unflatten(structure: Structure, leaves):
    """The tree of `structure` holding `leaves` (in flattening order)."""
    if not isinstance(structure, Structure):
        raise TypeError(f"tree.unflatten: expected a tree Structure, got {type(structure).__name__}")
    leaves = list(leaves)
    if len(leaves) != structure.num_leaves:
        raise ValueError(f"tree.unflatten: the structure {structure!r} has "
                         f"{structure.num_leaves} leaves, got {len(leaves)}")
    return _tree.unflatten(structure, leaves)

def map(f, tree, *rest, is_leaf=None):
    """`f` applied leaf by leaf: `f(x, *ys)` for the leaves of `tree` and of each tree in
    `rest`, which must have `tree`'s structure; the results in `tree`'s structure."""
    if not callable(f):
        raise TypeError(f"tree.map: expected a function, got {type(f).__name__}")
    xs, s = _tree.flatten(tree, is_leaf)
    others = []
    for i, r in enumerate(rest):
        ys, t = _tree.flatten(r, is_leaf)
        if t != s:
            raise ValueError(f"tree.map: tree {i + 1} has structure {t!r}, "
                             f"but the first has {s!r}")
        others.append(ys)
    return _tree.unflatten(s, [f(x, *ys) for x, *ys in zip(xs, *others)])

def register(cls, flatten, unflatten) -> type:
    """Make instances of `cls` trees: `flatten(obj) -> (children, aux)` (aux hashable: the
    fields that are not leaves), `unflatten(aux, children) -> obj`. Returns `cls`."""
    _tree.register(cls, flatten, unflatten)
    return cls

def paths(structure: Structure) -> list:
    """A readable path for each leaf of `structure`, in flattening order: '[0]', "['w']",
    '.field' (named tuples), '' for a tree that is one leaf."""
    out = []
    _paths(structure, "", out)
    return out

def _paths(s, prefix, out):
    if s.kind == "leaf":
        out.append(prefix)
    elif s.kind == "dict":
        for k, c in zip(s.meta, s.children):
            _paths(c, f"{prefix}[{k!r}]", out)
    elif s.kind == "namedtuple":
        for f, c in zip(s.meta._fields, s.children):
            _paths(c, f"{prefix}.{f}", out)
    else:
        for i, c in enumerate(s.children):
            _paths(c, f"{prefix}[{i}]", out)
