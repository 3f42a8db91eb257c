"""What the recorder hands a backend, and what a backend offers: declared once.

A *plan* is one program to run: `_graph._Plan` (the pending graph behind some arrays),
`_jit._FixedPlan` (a jitted function's trace, replayed) and `_export._ExportedPlan` (a
deserialized artifact). A *program* is what a backend compiles: `_graph.Program` (equations
that `lowering.lower_program` turns into StableHLO) or `_export._Lowered` (StableHLO text
already). A *backend* runs plans on one device: `pjrt.PjrtBackend` and
`interpreter.InterpreterBackend`.

Each is a base class that its implementations subclass; the defaults here are the optional
parts. This module imports nothing of tlaloc, so the programs layer (tlaloc/_graph.py), which
lies below the backends, can subclass it.
"""
from __future__ import annotations


class Program:
    """What a backend compiles.

    in_avals    the inputs' abstract values, in order
    eqns        `(prim, params, input slots, aval)` per equation; inputs are slots
                0..n_in-1, equation i writes slot n_in + i
    outputs     the slots it returns
    donated     input indices whose buffers the program may reuse
    text        StableHLO already lowered (then eqns and outputs are not read), or None
    """
    __slots__ = ()
    donated = ()
    text = None

    def out_avals(self) -> list:
        """The abstract value of each output, in order."""
        raise NotImplementedError


class Plan:
    """One program to run on the values of its leaves (given to `Backend.run` beside it).

    key         the structural key: equal keys mean the same program (the compile cache's)
    leaves      the nodes whose values are the inputs, where the plan found them (a replayed
                plan takes its inputs from the call instead)
    outputs     the slots the program returns
    nodes       the pending nodes (the execution tiers' cost estimate reads their avals; a
                plan run with compiled=True needs none)
    entry       a backend's cache entry for `key`, remembered when `keeps_entry` (a plan run
                many times: finding the entry again would hash its long key every call)
    """
    __slots__ = ()
    keeps_entry = False
    entry = None

    def equations(self) -> list:
        """`(prim, params, input slots, aval)` per equation (the interpreter runs these
        without building a Program)."""
        raise NotImplementedError

    def program(self) -> Program:
        raise NotImplementedError


class Backend:
    """Runs plans on one device and holds its values.

    platform    "cpu", "cuda", ..., or "interpreter"
    """
    __slots__ = ()
    platform = None

    def run(self, plan: Plan, leaves, *, compiled: bool = False) -> list:
        """The values of `plan.outputs`, computed from the values of `leaves` (nodes).
        compiled=True skips an interpreted tier (tlaloc.jit)."""
        raise NotImplementedError

    def run_now(self, prim, params, inputs, aval):
        """The value of `prim` on the computed nodes `inputs` (result aval `aval`), computed
        as the operation is recorded; or None, having done nothing, when it waits for an
        evaluation (the default: every operation does)."""
        return None

    def to_numpy(self, value):
        """A value of this backend as a host NumPy array."""
        raise NotImplementedError

    def transfer_in(self, value, source_device):
        """A value of another device's backend, as a value of this one."""
        raise NotImplementedError

    def ready(self, value) -> None:
        """Return once `value` has been computed (backends that run asynchronously)."""

    def dlpack_device(self, device) -> tuple:
        """(DLPack device type, device id) of the memory `to_dlpack` exports: kDLCPU (1, 0)
        for backends whose values tlaloc exports from host memory (their default)."""
        return (1, 0)

    def to_dlpack(self, node, *, stream=None, copy=False):
        """A DLPack capsule of computed `node`'s device buffer, or of a device copy of it,
        for a backend whose `dlpack_device` is a device's (not kDLCPU)."""
        raise NotImplementedError

    def wait_for_compiles(self) -> None:
        """Return once background compiles have finished (backends that compile in the
        background)."""

    def program_text(self, plan):
        """The StableHLO text this backend would compile for `plan`, where it adds to what
        `lowering.lower_program` writes (a mesh's layouts); None otherwise."""
        return None
