"""State: a mutable cell holding an Array, that tlaloc.jit threads through a traced function.

A `tlaloc.random.Generator` keeps its key in one. Outside a trace the cell is an attribute.
While `tlaloc.jit` traces a function, the first read or write of a cell made before the
trace swaps its value for a placeholder (an argument without a value); when the function
returns, the cell's last value is an extra output of the program and the cell gets its old
value back. Each call of the compiled program then takes the cell's current value as an
input and stores the new value in the cell: a jitted step that draws numbers compiles once
and gives new numbers every call.

Trace frames are kept per thread (DESIGN.md invariant 11).
"""
from __future__ import annotations

import threading

from ._graph import Node

_local = threading.local()


def _frames() -> list:
    f = getattr(_local, "frames", None)
    if f is None:
        f = _local.frames = []
    return f


def current_frame():
    f = _frames()
    return f[-1] if f else None


class Frame:
    """The cells one trace has touched: cell -> (value before the trace, placeholder)."""

    __slots__ = ("cells", "finals")

    def __init__(self):
        self.cells = {}
        self.finals = []

    def enter(self, cell):
        from ._array import Array
        value = cell._value
        node = value._node
        if node.value is None and node.prim is None and not node.inputs:
            return    # traced by an enclosing trace: leave it (that trace threads it)
        placeholder = Array._from_node(Node(None, (), None, node.aval, node.device))
        self.cells[cell] = (value, placeholder)
        cell._value = placeholder

    def __enter__(self):
        _frames().append(self)
        return self

    def __exit__(self, *exc):
        _frames().remove(self)
        self.finals = [(cell, cell._value) for cell in self.cells]
        for cell, (before, _) in self.cells.items():
            cell._value = before
        return False

    def threaded(self):
        """(cell, placeholder node, final Array) for every cell the trace touched."""
        return [(cell, self.cells[cell][1]._node, final) for cell, final in self.finals]


class State:
    """A cell holding an Array (a Generator's key). `get()` and `set(value)` read and write
    it; under tlaloc.jit they read and write the traced program's view of it."""

    __slots__ = ("_value", "_frame", "__weakref__")

    def __init__(self, value):
        self._value = value
        self._frame = current_frame()   # made inside a trace: that trace's own value

    def _touch(self):
        frame = current_frame()
        if frame is not None and frame is not self._frame and self not in frame.cells:
            frame.enter(self)

    def get(self):
        self._touch()
        return self._value

    def set(self, value):
        self._touch()
        self._value = value

    def __repr__(self):
        return f"State({self._value!r})"
