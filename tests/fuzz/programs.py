"""Programs: plain data that prints as a runnable Python function.

A program is a list of source lines over numbered values `v0, v1, ...` (inputs built from
literal NumPy arrays, then one operation a line; `v3[key] = v5` updates v3), the values it
returns, and the reference of each returned value. It is built by drawing operations one at
a time while the reference runs alongside (ops.py), so every drawn operation is valid for the
shapes and dtypes at hand, and hypothesis shrinks a program by shrinking its draws.

`Program.source()` is the definition the worker executes and the reproduction prints:

    def program(dev):
        v0 = xp.asarray(np.array([...], dtype=np.float32), device=dev)
        v1 = xp.sin(v0)
        return [v1]

Values no longer needed are deleted (`del v2`), so an intermediate is returned by the
evaluated program only when the program returns it too: both shapes of a program occur.
"""
from __future__ import annotations

import dataclasses

import numpy as np
from hypothesis import strategies as st

from . import values
from .reference import Ref

HEADER = "import math\n\nimport numpy as np\nimport tlaloc as xp\n\n\n" + values.COMPLEX_HELPER


@dataclasses.dataclass
class Line:
    text: str
    uses: tuple      # value ids read
    defines: int | None
    target: int | None = None    # the value an x[key] = v line updates


@dataclasses.dataclass
class Program:
    body: list          # source lines of the function body (deletions included)
    outputs: list       # value ids returned
    refs: list          # Ref of each returned value
    ops: list           # operation names, in order (for statistics and KNOWN_ISSUES)
    max_pending: int | None = None
    origins: list = dataclasses.field(default_factory=list)   # the op that last wrote each output

    def source(self) -> str:
        body = "\n".join("    " + line for line in self.body)
        ret = ", ".join(f"v{i}" for i in self.outputs)
        return f"{HEADER}\n\ndef program(dev):\n{body}\n    return [{ret}]\n"

    def reproduction(self, mode: str) -> str:
        return self.source() + "\n\n" + driver(mode, self.max_pending)

    def __repr__(self):
        return "Program:\n" + self.source()

    def _repr_pretty_(self, p, cycle):     # hypothesis prints the falsifying example so
        p.text(repr(self))


def driver(mode: str, max_pending=None) -> str:
    """The lines that run `program` in `mode` (the worker does the same)."""
    lines = []
    if max_pending is not None:
        lines.append(f"xp.config.update(max_pending={max_pending})")
    if mode == "interpreter":
        lines += ['outs = program(xp.device("interpreter"))', "xp.eval(*outs)",
                  "print([np.asarray(o) for o in outs])"]
    elif mode == "compiled":
        lines += ['xp.config.update(execution="compiled")', 'outs = program(xp.device("cpu"))',
                  "xp.eval(*outs)", "print([np.asarray(o) for o in outs])"]
    else:
        lines += ['xp.config.update(execution="auto")  # the default: interpreted, then compiled',
                  "xp.config.update(eager_max_size=0)  # whole programs, not operations",
                  "for run in range(3):",
                  '    outs = program(xp.device("cpu"))',
                  "    xp.eval(*outs)",
                  "    print(run, [np.asarray(o) for o in outs])",
                  "    if run == 1:",
                  "        xp.wait_for_compiles()"]
    return "\n".join(lines) + "\n"


def choice(items):
    """One of `items`, nearly uniformly (st.sampled_from favours the first entries more),
    shrinking towards the first."""
    items = list(items)
    return st.integers(0, 2 ** 16 - 1).map(lambda i: items[i % len(items)])


# Operations that return a view of their operand (or the operand itself), as in NumPy. A
# write through a view reaches its base and the other views (tests/test_views.py checks that
# against NumPy); the per-value references here do not model it, so programs write only into
# values no view shares. `x.T` (op "T"), `real`/`imag` of a complex x (and `real` of a real x:
# x itself, viewed) are views; `broadcast_arrays` returns an operand itself where its shape is
# already the broadcast one, as NumPy's does (test_harness checks this list against tlaloc).
VIEW_OPS = {"getitem_basic", "reshape", "permute_dims", "T", "matrix_transpose", "moveaxis",
            "unstack", "expand_dims", "squeeze", "flip", "real", "imag", "broadcast_arrays"}


class Builder:
    """Draws a program op by op; `refs[i]` is value i's current reference."""

    def __init__(self, draw):
        self.draw = draw
        self.refs: list[Ref] = []
        self.lines: list[Line] = []
        self.ops: list[str] = []
        self.aliased: set[int] = set()   # values that share memory with another (views)

    # values
    def pick(self, pred=lambda r: True):
        """An existing value satisfying `pred`, or None. Recent values first (and shrinking
        goes towards the latest), so that operations chain."""
        ids = [i for i, r in enumerate(self.refs) if pred(r)]
        if not ids:
            return None
        return ids[-1 - self.draw(st.integers(0, len(ids) - 1))]

    def writable(self):
        """A value that shares no memory with another (recent first, as pick), or None."""
        ids = [i for i in range(len(self.refs)) if i not in self.aliased]
        return ids[-1 - self.draw(st.integers(0, len(ids) - 1))] if ids else None

    def input(self, dtype=None, shape=None) -> int:
        if dtype is None:
            dtype = self.draw(st.sampled_from(values.WEIGHTED_DTYPES))
        if shape is None:
            shape = self.draw(values.shapes())
        arr = self.draw(values.arrays(str(np.dtype(dtype)), tuple(shape)))
        return self.define(f"xp.asarray({values.array_source(arr)}, device=dev)", Ref(arr), (),
                           "input")

    def define(self, expr, ref: Ref, uses, op) -> int:
        i = len(self.refs)
        if op in VIEW_OPS or (op == "expression" and ("xp.real(" in expr or "xp.imag(" in expr)):
            self.aliased.add(i)
            self.aliased.update(uses)
        self.refs.append(ref)
        self.lines.append(Line(f"v{i} = {expr}", tuple(uses), i))
        self.ops.append(op)
        return i

    def statement(self, text, uses, op, target=None, ref=None):
        """A line that defines nothing new (x[key] = v); `target` gets `ref`."""
        if target is not None:
            self.refs[target] = ref
        self.lines.append(Line(text, tuple(uses), None, target))
        self.ops.append(op)

    def sinks(self):
        """Values no later line reads (inputs aside): their last write is their last use."""
        last_write, last_read, inputs = {}, {}, set()
        for n, line in enumerate(self.lines):
            for u in line.uses:
                if u != line.target:
                    last_read[u] = n
            if line.defines is not None:
                last_write[line.defines] = n
                if line.text.startswith(f"v{line.defines} = xp.asarray("):
                    inputs.add(line.defines)
            if line.target is not None:
                last_write[line.target] = n
                inputs.discard(line.target)
        return [i for i, w in last_write.items()
                if i not in inputs and last_read.get(i, -1) < w]

    # the end
    def finish(self, outputs, max_pending=None) -> Program:
        outputs = sorted(set(outputs))
        last_use = {}
        for n, line in enumerate(self.lines):
            for u in line.uses:
                last_use[u] = n
            if line.defines is not None:
                last_use.setdefault(line.defines, n)
        body = []
        for n, line in enumerate(self.lines):
            body.append(line.text)
            dead = [i for i, last in last_use.items() if last == n and i not in outputs]
            if dead:
                body.append("del " + ", ".join(f"v{i}" for i in sorted(dead)))
        writer = {}
        for line, op in zip(self.lines, self.ops):
            for i in (line.defines, line.target):
                if i is not None:
                    writer[i] = op
        return Program(body, outputs, [self.refs[i] for i in outputs], list(self.ops), max_pending,
                       [writer.get(i, "?") for i in outputs])


@st.composite
def programs(draw, max_ops=10):
    from .ops import GENERATORS
    b = Builder(draw)
    with np.errstate(all="ignore"):
        for _ in range(draw(st.integers(1, 3))):
            b.input()
        # short programs as often as long ones: a crash of one fusion may need the fusion
        # alone (other outputs in the program change XLA's fusion decisions)
        n_ops = draw(st.sampled_from([1, 2, 3, max_ops // 2, max_ops]))
        for _ in range(draw(st.integers(1, n_ops))):
            draw(choice(GENERATORS))(b)
    # every value no later line reads is returned (so nothing computed is dead code), and
    # some intermediates too (a value both returned and consumed compiles differently)
    sinks = b.sinks()
    last = len(b.refs) - 1
    extra = draw(st.lists(st.integers(0, last), max_size=3))
    max_pending = draw(st.sampled_from([None, None, None, 2, 3, 5]))
    return b.finish(sinks + [last] + extra, max_pending)
