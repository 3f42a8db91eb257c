"""The reference interpreter: runs a Program with each primitive's NumPy implementation.

It is a device of its own (`device="interpreter"`), and the first execution tier of the
PJRT CPU device for programs that have not been compiled yet (see backends/pjrt.py).
"""
from __future__ import annotations

from time import perf_counter

import numpy as np

from .. import _context
from .._prims.control import Region, shared_value
from . import _memory
from ._fpenv import flush_subnormals
from .._protocol import Backend


def interpret(eqns, outputs, inputs, timings=None):
    """Run straight-line code on NumPy `inputs`; returns the NumPy values of the slots
    `outputs`. `eqns` are (prim, params, input slots, aval): a Program's equations, or a
    plan's (which the PJRT device's first tier runs without building a Program). A list
    `timings` receives (prim, aval, seconds) per equation (the tier policy's measurements)."""
    env = list(inputs)
    ndarray = np.ndarray
    dying = _last_uses(eqns, outputs)
    shared = {}   # results of region ops (control flow), each run once for all its nodes
    # StableHLO semantics: inf and nan, never warnings; subnormals flushed, as XLA:CPU does
    with np.errstate(all="ignore"), flush_subnormals():
        for i, (prim, params, slots, want) in enumerate(eqns):
            if timings is not None:
                start = perf_counter()
            if type(prim) is Region:
                out = shared_value(shared, prim, params, slots, [env[s] for s in slots])
            elif len(slots) == 1:
                out = prim.impl(env[slots[0]], **params)
            else:
                out = prim.impl(*[env[s] for s in slots], **params)
            if type(out) is not ndarray or out.dtype is not want.dtype.numpy \
                    or out.shape != want.shape:
                out = _checked(out, prim, want)
            if timings is not None:
                timings.append((prim, want, perf_counter() - start))
            env.append(out)
            dead = dying.get(i)
            if dead is not None:
                for s in dead:
                    env[s] = None
    return [env[s] for s in outputs]


def _last_uses(eqns, outputs) -> dict:
    """{equation index: the slots no later equation reads} (outputs excepted). Dropping
    them as the program runs frees each intermediate after its last use, as NumPy code
    that chains operations does, so memory is reused instead of freshly mapped."""
    last = {}
    for i, eqn in enumerate(eqns):
        for s in eqn[2]:
            last[s] = i
    for s in outputs:
        last.pop(s, None)
    dying = {}
    for s, i in last.items():
        dying.setdefault(i, []).append(s)
    return dying


def _checked(out, prim, want):
    """`out` as an ndarray of the declared dtype; a shape other than the declared one is a
    bug of the primitive's rules."""
    out = np.asarray(out)
    if out.dtype != want.dtype.numpy:
        out = out.astype(want.dtype.numpy)
    if out.shape != want.shape:
        raise AssertionError(f"interpreter: {prim.name} gave shape {out.shape}, "
                             f"its infer rule said {want.shape}")
    return out


class InterpreterBackend(Backend):
    """Values are host NumPy arrays."""

    platform = "interpreter"

    # structures remembered for the hit/miss statistics (forgotten beyond this many)
    _MAX_SEEN = 4096

    def __init__(self, stats):
        self.stats = stats
        self._seen = set()

    def run(self, plan, leaves, *, compiled=False):
        key = plan.key
        if key in self._seen:
            self.stats.hits += 1
        else:
            if len(self._seen) >= self._MAX_SEEN:
                self._seen.clear()
            self._seen.add(key)
            self.stats.misses += 1
        self.stats.interpreted += 1
        with _context.phase("interpret"):
            out = interpret(plan.equations(), plan.outputs, [self.host(l.value) for l in leaves])
        if _memory.ENABLED:
            _memory.track(self, out)
        return out

    @staticmethod
    def host(value) -> np.ndarray:
        return value if isinstance(value, np.ndarray) else to_host(value)

    def transfer_in(self, value, source_device):
        return source_device.backend.to_numpy(value)

    def to_numpy(self, value) -> np.ndarray:
        return self.host(value)


def to_host(value) -> np.ndarray:
    if isinstance(value, np.ndarray):
        return value
    from . import _jaxlib
    return _jaxlib.Runtime.to_numpy(value)
