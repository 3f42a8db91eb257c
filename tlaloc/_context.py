"""What the transformations set while they run, held per thread (DESIGN.md invariant 11).

`trace` is the calling thread's context. Each transformation changes it on entry and
restores it on exit, so threads that record, take derivatives and trace `jit` functions at
once never see each other's settings:

  * `retain_graph` > 0 while derivatives are being recorded (grad, jvp, grad_source):
    computed nodes keep their inputs, so the backward pass can walk the graph;
  * `jit_depth` > 0 while tlaloc.jit traces a function without values (nothing can be
    computed; the pending-depth bound must not try);
  * `on_bind` is called with every node recorded while it is set (grad_source's namer).
"""
from __future__ import annotations

import threading


class _TraceContext(threading.local):
    # class attributes: each thread starts from these defaults
    retain_graph = 0
    _jit_depth = 0
    _on_bind = None

    # `jit_depth` and `on_bind` are read on every recorded operation. Reading a thread-local
    # attribute costs about three module-global reads, so the recording path reads
    # `engaged` (below) first and the thread's context only when some thread has set one.
    @property
    def jit_depth(self):
        return self._jit_depth

    @jit_depth.setter
    def jit_depth(self, value):
        _engage(bool(value) - bool(self._jit_depth))
        self._jit_depth = value

    @property
    def on_bind(self):
        return self._on_bind

    @on_bind.setter
    def on_bind(self, hook):
        _engage((hook is not None) - (self._on_bind is not None))
        self._on_bind = hook


trace = _TraceContext()

# How many (thread, setting) pairs differ from the default: 0 when no thread traces jit or
# has an on_bind hook, so `if engaged and trace.jit_depth:` reads the thread's context only
# when one might be set.
engaged = 0
_engaged_lock = threading.Lock()


def _engage(change: int) -> None:
    global engaged
    if change:
        with _engaged_lock:
            engaged += change


# ----------------------------------------------------------------------------- observation
#
# The profiler's and tlaloc.explain's slot (tlaloc/_observe.py sets it while a profile or an
# explanation is on). Process-wide, not per thread: an evaluation on any thread is observed.
# Lower layers (the graph, the backends, jit) only read it and call it: None costs them one
# global read per evaluation, never anything per recorded operation.
observer = None


class _Nothing:
    __slots__ = ()

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


_NOTHING = _Nothing()


def phase(name: str, info=None):
    """A context manager around one phase of an evaluation ("plan", "compile", "execute",
    "host-to-device", "device-to-host", "interpret", "transfer") for the observer; does
    nothing when no observer is set. `info` is a dict the observer may read and fill."""
    obs = observer
    return _NOTHING if obs is None else obs.phase(name, info)
