"""Live and peak bytes of the buffers tlaloc's backends made, per backend (tlaloc.memory_stats).

The backends call `track(owner, values)` where buffers come into being: transfers to the
device, execution results, the interpreter's results. Each value gets a weak reference whose
callback takes its bytes off when the buffer is freed, so the count follows the program's
own lifetimes at no cost per recorded operation (a few hundred nanoseconds per buffer made).
A value seen twice (a result that is an input, a shared scalar) is counted once.

Counting costs about 1-2 us per buffer (a small jitted call makes three), so it is off until
it is asked for: the first `tlaloc.memory_stats()` call, a `tlaloc.profile()` block, or
TLALOC_MEMORY_STATS=1 turns it on for the rest of the process (`ENABLED`); the backends
check the flag before calling `track`. Buffers made before then are not counted.
"""
from __future__ import annotations

import math
import os
import threading
import weakref

ENABLED = os.environ.get("TLALOC_MEMORY_STATS", "") not in ("", "0")


def enable() -> None:
    """Count buffers from now on (idempotent)."""
    global ENABLED
    ENABLED = True

_lock = threading.Lock()
_stats = {}     # id(owner) -> [live bytes, peak bytes, buffers live]
# The weak references live in slots of a list that only grows to the most buffers alive at
# once (a dict with one insert and one delete per buffer would reallocate as it churns).
_slots = []
_free = []


class _Ref(weakref.ref):
    __slots__ = ("slot", "counts", "nbytes")


def _freed(ref) -> None:
    with _lock:
        _slots[ref.slot] = None
        _free.append(ref.slot)
        counts = ref.counts
        counts[0] -= ref.nbytes
        counts[2] -= 1


def counts_of(owner) -> list:
    """[live bytes, peak bytes, live buffers] of `owner` (a backend), made on first use."""
    counts = _stats.get(id(owner))
    if counts is None:
        counts = _stats.setdefault(id(owner), [0, 0, 0])
    return counts


def track(owner, values) -> None:
    """Count `values` (buffers or NumPy arrays `owner` made) until they are freed."""
    counts = None
    for v in values:
        if weakref.getweakrefcount(v) and any(type(r) is _Ref for r in weakref.getweakrefs(v)):
            continue     # counted already
        try:
            ref = _Ref(v, _freed)
        except TypeError:     # a value that takes no weak reference: not counted
            continue
        if counts is None:
            counts = counts_of(owner)
        ref.counts = counts
        n = getattr(v, "nbytes", None)     # NumPy arrays
        if n is None:                        # PJRT buffers: from the shape and dtype
            aval = v.aval
            n = math.prod(aval.shape) * aval.dtype.itemsize
        ref.nbytes = n
        with _lock:
            if _free:
                ref.slot = k = _free.pop()
                _slots[k] = ref
            else:
                ref.slot = len(_slots)
                _slots.append(ref)
            counts[0] += n
            counts[2] += 1
            if counts[0] > counts[1]:
                counts[1] = counts[0]


def reset_peak(owner) -> None:
    counts = counts_of(owner)
    with _lock:
        counts[1] = counts[0]
