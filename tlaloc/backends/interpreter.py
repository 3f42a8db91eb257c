"""The reference interpreter: runs a Program with each primitive's NumPy implementation.

It is a device of its own (`device="interpreter"`), and the first execution tier of the
PJRT CPU device for programs that have not been compiled yet (see backends/pjrt.py).
"""
from __future__ import annotations

from math import prod
from sys import getrefcount
from time import perf_counter

import numpy as np
from numpy import ndarray   # (a global: read per operation, np.ndarray is a module lookup)

from .. import _context
from .._config import config
from .._prims.control import Region, shared_value
from . import _memory
from ._fpenv import call_flushed, flush_subnormals
from ._untrack import untracked
from .._protocol import Backend


class Schedule:
    """A straight-line program made ready for the interpreter, once per structure: its
    equations, the slots it returns, {equation index: the slots that die there} and
    {equation index: the operand slots it may overwrite}. `eqns` are (prim, params, input
    slots, aval): a Program's equations, or a plan's (which the PJRT device's first tier
    runs without building a Program); the inputs, of avals `in_avals`, are slots
    0..n_in-1, equation i writes slot n_in + i.

    Dead slots are dropped as the program runs, which frees each intermediate after its
    last use, as NumPy code that chains operations does, so memory is reused instead of
    freshly mapped. An equation with `impl_into` and a large result (_REUSED_FROM) may
    write it into an operand that dies there, as NumPy's temporary elision does: one the
    program computed (not an input), of the result's shape and dtype (and, for elementwise
    operations, of every operand's dtype, so that the ufunc's loop is the same); an operand
    the equation reads twice may be written too (a ufunc's `out=` may be its input).
    Whether nothing else refers to that operand's memory is known only at run time
    (_take_sole)."""

    __slots__ = ("eqns", "outputs", "dying", "reusable")

    def __init__(self, eqns, outputs, in_avals):
        last = {}
        for i, eqn in enumerate(eqns):
            for s in eqn[2]:
                last[s] = i
        for s in outputs:
            last.pop(s, None)
        dying = {}
        for s, i in last.items():
            dying.setdefault(i, []).append(s)
        reusable = {}
        for i, (prim, params, slots, want) in enumerate(eqns):
            if prim.impl_into is not None and \
                    want.dtype.numpy.itemsize * prod(want.shape) >= _REUSED_FROM:
                reuse = _overwritable(prim, slots, want, i, eqns, in_avals, last)
                if reuse:
                    reusable[i] = reuse
        self.eqns = eqns
        self.outputs = outputs
        self.dying = dying
        self.reusable = reusable


# Results of at least this many bytes are written into a dying operand: below it NumPy's
# allocator reuses memory as cheaply (the size from which NumPy elides temporaries itself)
_REUSED_FROM = 256 * 1024


def _overwritable(prim, slots, want, i, eqns, in_avals, last) -> tuple:
    """The operand slots equation i (`prim` on `slots`, giving `want`) may write its
    result into (see Schedule)."""
    n_in = len(in_avals)
    avals = [in_avals[t] if t < n_in else eqns[t - n_in][3] for t in slots]
    dtype = want.dtype
    if prim.elementwise and any(a.dtype is not dtype for a in avals):
        return ()
    return tuple(s for s, a in ((slots[pos], avals[pos])
                                for pos in prim.into_operands or range(len(slots)))
                 if s >= n_in and last.get(s) == i
                 and a.shape == want.shape and a.dtype is dtype)


def interpret(schedule, inputs, timings=None):
    """Run a Schedule on NumPy `inputs`; returns the NumPy values of its outputs. A list
    `timings` receives (prim, aval, seconds) per equation (the tier policy's measurements)."""
    env = list(inputs)
    dying = schedule.dying
    reusable = schedule.reusable
    shared = {}   # results of region ops (control flow), each run once for all its nodes
    # StableHLO semantics: inf and nan, never warnings; subnormals flushed, as XLA:CPU does
    with np.errstate(all="ignore"), flush_subnormals():
        for i, (prim, params, slots, want) in enumerate(schedule.eqns):
            if timings is not None:
                start = perf_counter()
            out = None
            if reusable:
                reuse = reusable.get(i)
                if reuse is not None:
                    out = _into_dying(env, prim, params, slots, reuse)
            if out is None:
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
            out = None   # env's reference only: _take_sole counts the references
            dead = dying.get(i)
            if dead is not None:
                for s in dead:
                    env[s] = None
    return [env[s] for s in schedule.outputs]


# Operations whose operands and result all have at most config.eager_max_size elements
# are run as they are recorded on a host device (`run_now`). At that size a compiled
# program of such operations gains little over NumPy's own calls, while a structure seen
# once spends far more on its plan, key and schedule than on its arithmetic (the one-shot
# workload). The bound keeps larger arrays lazy: their programs fuse, and the tier policy
# compiles the ones that repeat.

def run_now(prim, params, inputs, want, backend):
    """The NumPy value of `prim` (with `params`) on computed host `inputs` (nodes), of aval
    `want`, counted in `backend`'s statistics and memory; or None, having done nothing, when
    the operation must wait for an evaluation: an operand or the result is larger than
    config.eager_max_size, an operand's value is not a NumPy array (a device buffer, a
    donated one), or the operation is a region (control flow), whose sub-programs run inside
    a program. Each value is the one the interpreter computes."""
    limit = config.eager_max_size
    shape = want.shape
    size = 1
    for extent in shape:    # (a loop of C integers where compiled: prod() is a call)
        size *= extent
    if size > limit or type(prim) is Region:
        return None
    if len(inputs) == 1:    # (the common cases without a loop: this runs on every operation)
        x = inputs[0]
        a = x.value
        if type(a) is not ndarray or a.size > limit:
            return None
        values = (a,)
    elif len(inputs) == 2:
        x = inputs[0]
        y = inputs[1]
        a = x.value
        b = y.value
        if type(a) is not ndarray or type(b) is not ndarray or a.size > limit or b.size > limit:
            return None
        values = (a, b)
    else:
        values = tuple([n.value for n in inputs])
        for a in values:
            if type(a) is not ndarray or a.size > limit:
                return None
    if prim.moves_data:   # no arithmetic: nothing to flush, no floating-point error to hide
        out = prim.impl(*values, **params)
    else:
        out = call_flushed(prim.impl, values, params)
    if type(out) is not ndarray or out.dtype is not want.dtype.numpy or out.shape != shape:
        out = _checked(out, prim, want)
    backend.stats.immediate += 1
    if _memory.ENABLED:
        _memory.track(backend, (out,))
    return out


def _into_dying(env, prim, params, slots, reuse):
    """`prim` run with impl_into on the first slot of `reuse` that nothing but env holds
    (taken out of env), or None (env unchanged) if there is none."""
    for s in reuse:
        x = _take_sole(env, s)
        if x is not None:
            return prim.impl_into(x, *[x if t == s else env[t] for t in slots], **params)
    return None


def _refs_when_taken(env, s):
    x = env[s]
    env[s] = None
    return x, getrefcount(x)


# The reference count of a value that only env held, once taken out of it (the count
# depends on how this module was built, compiled or not, so it is measured the same way).
_SOLE = _refs_when_taken([np.empty(0)], 0)[1]


def _take_sole(env, s):
    """env[s], taken out of env, if nothing else refers to it or to its memory: it owns its
    data (a view's base refers to its owner, so an owner with views has more references),
    no other slot, region result or caller holds it. Else None, and env is unchanged."""
    x, refs = _refs_when_taken(env, s)
    if refs == _SOLE and x.base is None and x.flags.writeable:
        return x
    env[s] = x
    return None


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


_UNSEEN = object()


class InterpreterBackend(Backend):
    """Values are host NumPy arrays."""

    platform = "interpreter"

    # structures' schedules, remembered for the hit/miss statistics too (forgotten beyond
    # this many)
    _MAX_SCHEDULES = 4096

    def __init__(self, stats):
        self.stats = stats
        self._schedules = {}   # structure -> its Schedule (None: seen once)

    def run(self, plan, leaves, *, compiled=False):
        key = plan.key
        schedules = self._schedules
        schedule = schedules.get(key, _UNSEEN)
        if schedule is _UNSEEN:
            self.stats.misses += 1
            if len(schedules) >= self._MAX_SCHEDULES:
                schedules.clear()
            schedules[untracked(key)] = None   # seen; its schedule is kept from its second run
            schedule = Schedule(plan.equations(), plan.outputs, [l.aval for l in leaves])
        else:
            self.stats.hits += 1
            if schedule is None:
                schedule = schedules[key] = Schedule(plan.equations(), plan.outputs,
                                                     [l.aval for l in leaves])
        self.stats.interpreted += 1
        with _context.phase("interpret"):
            out = interpret(schedule, [self.host(l.value) for l in leaves])
        if _memory.ENABLED:
            _memory.track(self, out)
        return out

    @staticmethod
    def host(value) -> np.ndarray:
        return value if isinstance(value, np.ndarray) else to_host(value)

    def run_now(self, prim, params, inputs, aval):
        return run_now(prim, params, inputs, aval, self)

    def transfer_in(self, value, source_device):
        return source_device.backend.to_numpy(value)

    def to_numpy(self, value) -> np.ndarray:
        return self.host(value)


def to_host(value) -> np.ndarray:
    if isinstance(value, np.ndarray):
        return value
    from . import _jaxlib
    return _jaxlib.Runtime.to_numpy(value)
