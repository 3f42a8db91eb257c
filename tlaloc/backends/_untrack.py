"""Cache keys kept out of the cycle collector's walks.

The devices remember every program structure they have seen, keyed by the structure (a
tuple of tuples: the device, the inputs' abstract values, an entry per equation), so that
the tier policy can tell a repetition (backends/tiers.py). Code that runs once, shape after
shape, makes one such key per evaluation, and thousands stay in the tables. CPython's cycle
collector walks every container it tracks, and a key's tuples, holding primitives and
abstract values, stay tracked: a full collection walked about 15 of them per remembered
structure. With them tracked, collections took about a fifth of the one-shot workload's
time; untracked, 9% (docs/native.md).

A key cannot be part of a reference cycle: nothing it holds (primitives, abstract values,
devices, dtypes, parameters) refers to the table that holds it, or to a key. So its tuples
may be untracked, as CPython untracks a tuple of atoms itself: the collector no longer
walks them, and what they hold stays alive by its reference counts, exactly as before.

Only the compiled build does this (through the C API, declared in _untrack.pxd); the
pure-Python reference leaves keys tracked, which changes the collector's work, never what
is kept or freed.
"""
from __future__ import annotations

try:
    import cython           # compiled: a compile-time constant; installed: False
    _COMPILED = cython.compiled
except ImportError:         # Cython is only a build dependency
    _COMPILED = False


def untracked(key: tuple) -> tuple:
    """`key`, with its tuples (nested ones included) no longer tracked by the cycle
    collector in the compiled build. Call it once, on a key a table keeps."""
    if _COMPILED:
        _untrack(key)
    return key


def _untrack(t):
    # compiled only: PyObject_GC_UnTrack is declared in _untrack.pxd (it does nothing to an
    # object already untracked)
    for x in t:
        if type(x) is tuple:
            _untrack(x)
    PyObject_GC_UnTrack(t)
