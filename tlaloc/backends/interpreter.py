"""The reference interpreter: runs a Program with each primitive's NumPy implementation.

It is a device of its own (`device="interpreter"`), and the first execution tier of the
PJRT CPU device for programs that have not been compiled yet (see backends/pjrt.py).
"""
from __future__ import annotations

import numpy as np


def interpret(program, inputs):
    """Run `program` on NumPy `inputs`; returns the NumPy outputs."""
    env = list(inputs)
    with np.errstate(all="ignore"):   # StableHLO semantics: inf and nan, never warnings
        for eqn in program.eqns:
            out = eqn.prim.impl(*[env[s] for s in eqn.inputs], **eqn.params)
            want = eqn.aval
            out = np.asarray(out)
            if out.dtype != want.dtype.numpy:
                out = out.astype(want.dtype.numpy)
            if out.shape != want.shape:
                raise AssertionError(f"interpreter: {eqn.prim.name} gave shape {out.shape}, "
                                     f"its infer rule said {want.shape}")
            env.append(out)
    return [env[s] for s in program.outputs]


class InterpreterBackend:
    """Values are host NumPy arrays."""

    platform = "interpreter"

    def __init__(self, stats):
        self.stats = stats
        self._programs = {}

    def run(self, plan, leaves, *, compiled=False):
        program = self._programs.get(plan.key)
        if program is None:
            program = self._programs[plan.key] = plan.program()
            self.stats.misses += 1
        else:
            self.stats.hits += 1
        self.stats.interpreted += 1
        return interpret(program, [self.host(l.value) for l in leaves])

    @staticmethod
    def host(value) -> np.ndarray:
        return value if isinstance(value, np.ndarray) else to_host(value)

    def transfer_in(self, value, source_device):
        return to_host(value)

    def to_numpy(self, value) -> np.ndarray:
        return self.host(value)


def to_host(value) -> np.ndarray:
    if isinstance(value, np.ndarray):
        return value
    from . import _jaxlib
    return _jaxlib.Runtime.to_numpy(value)
