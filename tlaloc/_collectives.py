"""`tlaloc.collectives(f, *args)`: the collectives XLA put into the compiled program of `f`
on `args`, each with the recorded operation that caused it and the user's source line.

The program is recorded with source lines (as while profiling) and lowered with one MLIR
location per recorded operation, named after its position in the program; XLA keeps
locations as HLO metadata (`op_name`) through partitioning and fusion, so each collective
of the partitioned HLO names the operation it came from.
"""
from __future__ import annotations

import re
from typing import NamedTuple

from . import _observe
from ._array import Array
from ._context import trace as _trace
from ._graph import _Plan, _materialize_leaf
from ._jit import Jitted
from ._mesh import is_mesh_device
from ._tree import flatten as _flatten

_KINDS = ("all-reduce", "all-gather", "reduce-scatter", "collective-permute", "all-to-all")
# `%name = <shape> <kind>(`; a combined collective has a tuple shape, "(f32[2,3]{1,0}, f32[])"
_LINE = re.compile(r"=\s*(?P<shape>.+?)\s+(?P<kind>" + "|".join(_KINDS) + r")(?:-start)?\(")
_OP_NAME = re.compile(r'op_name="(?P<names>[^"]*)"')
_NODE = re.compile(r"tlaloc(\d+)/")
_GROUPS = re.compile(r"replica_groups=(?P<groups>\{[^ ]*\}|mesh\[[^\]]*\] \{[^}]*\}|\[[^ ]*\]<=\[[^ ]*\])")


class Collective(NamedTuple):
    kind: str          # "all-reduce", "all-gather", "reduce-scatter", "collective-permute", "all-to-all"
    shape: str         # the per-device operand as HLO writes it, e.g. "f32[16,32]"
    groups: str        # the device groups, as HLO writes them ("" if none)
    primitive: str     # the recorded operation(s) behind it ("" if XLA's metadata lost them)
    where: str         # "file.py:line" of the user's code that recorded them ("" if unknown)
    hlo: str           # the HLO instruction

    def __str__(self):
        cause = f" from {self.primitive}" if self.primitive else ""
        at = f" at {self.where}" if self.where else ""
        return f"{self.kind} {self.shape}{cause}{at}"


def collectives(f, *args, **kwargs) -> list:
    """The collectives in the compiled program of `f(*args, **kwargs)` on a mesh (nothing
    runs: the program is recorded and compiled). An empty list for a program on one
    device."""
    if not callable(f):
        raise TypeError(f"collectives: f must be callable, got {type(f).__name__}")
    while isinstance(f, Jitted):   # its program is the function's (a call would run it)
        f = f.fun
    outer, _trace.on_bind = _trace.on_bind, _observe.where_of_bind
    try:
        result = f(*args, **kwargs)
    finally:
        _trace.on_bind = outer
    nodes = [x._node for x in _flatten(result)[0] if isinstance(x, Array)]
    pending = [n for n in nodes if n.value is None and is_mesh_device(n.device)]
    if not pending:
        return []
    device = pending[0].device
    plan = _Plan([n for n in pending if n.device is device], device)
    for leaf in plan.leaves:
        _materialize_leaf(leaf)
    program = plan.program()
    program.locations = [(w[0], w[1], f"tlaloc{i}") if w else ("", 0, f"tlaloc{i}")
                         for i, w in enumerate(getattr(n, "where", None) for n in plan.nodes)]
    text = device.backend.compiled_text(program, plan.leaves)
    found = []
    for line in text.splitlines():
        m = _LINE.search(line)
        if m is None or "ENTRY" in line:
            continue
        op = _OP_NAME.search(line)
        # XLA names a collective it combined from several after all of them: "(a:b)"
        nodes = [plan.nodes[int(i)] for i in _NODE.findall(op["names"])] if op else []
        wheres = [getattr(n, "where", None) for n in nodes]
        groups = _GROUPS.search(line)
        found.append(Collective(m["kind"], m["shape"], groups["groups"] if groups else "",
                                ", ".join(dict.fromkeys(n.prim.name for n in nodes)),
                                ", ".join(dict.fromkeys(_observe.short(w) for w in wheres if w)),
                                line.strip()))
    return found
