"""The observer behind tlaloc.profile and tlaloc.explain: what each evaluation was, why it
happened, and where its time went.

While a profile or an explanation is on, `_context.observer` is the one `Observer`; the graph,
the backends and jit call it at their evaluation points (`evaluation`, `phase`, `compiled`).
It turns them into `Evaluation` records: the trigger (the conversion or function that needed
a value) and the user's line that called it, the phases with their times, each program run
with its cache outcome, compile time, XLA's cost estimate, and, for a program structure not
seen before, how it differs from the closest one that was (tlaloc/_explain.py). Subscribers
(the active profile, explanations) receive every finished record.

Source lines: while observing, recorded operations get `node.where` (file, line, function)
through the calling thread's `trace.on_bind` hook, and the lowering writes them as MLIR
locations. Nothing of this runs when no profile or explanation is on.
"""
from __future__ import annotations

import os
import sys
import threading
import time

from . import _context, _program_diff
from ._context import trace
from ._devices import STATS

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep
_inside = {}    # code object -> whether it is tlaloc's own


def _is_tlaloc(code) -> bool:
    inside = _inside.get(code)
    if inside is None:
        inside = _inside[code] = os.path.abspath(code.co_filename).startswith(_PACKAGE)
    return inside


def user_frame():
    """(file, line, function) of the innermost caller outside tlaloc, or None. The walk
    skips tlaloc's own frames and never counts them: compiled modules (docs/native.md)
    have none."""
    f = sys._getframe(1)
    while f is not None:
        code = f.f_code
        if not _is_tlaloc(code):
            return code.co_filename, f.f_lineno, code.co_name
        f = f.f_back
    return None


def where_of_bind(node) -> None:
    """The on_bind hook: the user's line that recorded `node`."""
    f = sys._getframe(1)
    while f is not None:
        code = f.f_code
        if not _is_tlaloc(code):
            node.where = (code.co_filename, f.f_lineno, code.co_name)
            return
        f = f.f_back


def short(where) -> str:
    """'file.py:line' of a (file, line, function)."""
    if where is None:
        return "?"
    return f"{os.path.basename(where[0])}:{where[1]}"


# ----------------------------------------------------------------------------- records

class Phase:
    __slots__ = ("name", "start", "end", "thread", "where", "info")

    def __init__(self, name, start, end, thread, where, info):
        self.name, self.start, self.end = name, start, end
        self.thread, self.where, self.info = thread, where, info

    @property
    def seconds(self) -> float:
        return (self.end - self.start) * 1e-9


class ProgramRun:
    """One program an evaluation ran."""
    __slots__ = ("ops", "inputs", "outcome", "new", "differences", "compile_seconds", "cost",
                 "text_bytes", "device", "cause", "function")

    def __init__(self):
        self.ops = self.inputs = 0
        self.outcome = ""            # "hit", "compiled", "disk", "interpreted", "queued"
        self.new = False             # a structure this device had not seen
        self.differences = []        # from the closest cached program (when new)
        self.compile_seconds = 0.0
        self.cost = {}               # XLA's cost analysis (flops, bytes accessed, ...)
        self.text_bytes = 0
        self.device = None
        self.cause = None            # jit: why the function was traced again
        self.function = None         # jit: the function's name

    def describe(self) -> str:
        what = f"a program of {self.ops} ops" if not self.new else f"a new program of {self.ops} ops"
        if self.function is not None:
            what = f"the jitted `{self.function}`"
        outcome = {
            "hit": "cache hit",
            "compiled": f"cache miss, compiled in {self.compile_seconds:.3f} s",
            "disk": f"cache miss, loaded from the disk cache in {self.compile_seconds:.3f} s",
            "queued": "compiling in the background, run by the interpreter meanwhile",
            "interpreted": "run by the NumPy interpreter",
        }.get(self.outcome, self.outcome)
        text = f"{what} ({outcome})"
        if self.cause is not None and self.function is not None:
            text += f", traced again: {self.cause}"
        if self.differences:
            text += "; it differs from the closest cached program in: " + ", ".join(self.differences)
        elif self.new and self.function is None:
            text += "; no earlier program on this device to compare with"
        return text


class Evaluation:
    """Why one evaluation happened and what it did. `str(record)` is the sentence."""

    def __init__(self, trigger, where, start):
        self.trigger = trigger       # "float()", "tlaloc.eval()", "jit call of step", ...
        self.where = where           # (file, line, function) of the user's code, or None
        self.start = start
        self.end = start
        self.phases = []             # Phase records, in order
        self.programs = []           # ProgramRun records
        self.thread = threading.get_ident()

    @property
    def line(self) -> str:
        """'file.py:line' of the user's code that caused it."""
        return short(self.where)

    @property
    def seconds(self) -> float:
        return (self.end - self.start) * 1e-9

    @property
    def compile_seconds(self) -> float:
        return sum(p.compile_seconds for p in self.programs)

    def phase_seconds(self, name) -> float:
        return sum(p.seconds for p in self.phases if p.name == name)

    def __str__(self):
        runs = "; ".join(p.describe() for p in self.programs) or "only transfers"
        return f"{self.trigger} at {self.line} ran {runs} [{self.seconds * 1e3:.3f} ms]"

    __repr__ = __str__


# ----------------------------------------------------------------------------- the observer

class _Local(threading.local):
    current = None    # the Evaluation this thread is in
    last = None       # its last one (a device-to-host read after it belongs to it)
    depth = 0


class _PhaseScope:
    __slots__ = ("obs", "name", "info", "start", "trace_me", "run", "stats")

    def __init__(self, obs, name, info):
        self.obs, self.name, self.info = obs, name, info
        self.run = None

    def __enter__(self):
        obs = self.obs
        local = obs.local
        if self.name == "jit" and local.current is None:
            # a jitted call is an evaluation of its own
            where = user_frame()
            obs._begin(f"jit call of `{self.info['function']}`", where)
            self.info["owns"] = True
        if self.name in ("run", "jit") and local.current is not None:
            self.run = obs._program_begins(self.info, self.name == "jit")
            self.stats = (STATS.hits, STATS.misses, STATS.compiles, STATS.disk_hits,
                          STATS.interpreted, STATS.compile_seconds)
        self.trace_me = obs._trace_me(self.name)
        self.start = time.perf_counter_ns()
        return None

    def __exit__(self, *exc):
        end = time.perf_counter_ns()
        if self.trace_me is not None:
            self.trace_me.__exit__(None, None, None)
        obs = self.obs
        local = obs.local
        ev = local.current
        if ev is None and self.name == "device-to-host":
            ev = local.last
        if self.run is not None:
            obs._program_ends(self.run, self.stats)
        where = ev.where if ev is not None else None
        phase = Phase(self.name, self.start, end, threading.get_ident(), where, self.info)
        if ev is not None:
            ev.phases.append(phase)
            if ev.end < end:
                ev.end = end
        else:
            obs._loose(phase)
        if self.info is not None and self.info.get("owns"):
            obs._finish()
        return False


class Observer:
    def __init__(self):
        self.local = _Local()
        self.subscribers = []      # objects with .receive(evaluation) and .loose(phase)
        self.seen = {}             # device -> {key: None} of program structures seen
        self.session = None        # jaxlib's profiler session while a profile is on
        self._lock = threading.Lock()

    # -- hooks the lower layers call

    def evaluation(self, nodes, run, trigger):
        local = self.local
        if local.current is not None:        # inside another evaluation: part of it
            return run(nodes)
        self._begin(trigger, user_frame())
        try:
            return run(nodes)
        finally:
            self._finish()

    def phase(self, name, info):
        return _PhaseScope(self, name, info)

    def compiled(self, program, text, executable, runtime, seconds):
        run = getattr(self.local, "run", None)
        if run is None:
            return           # a background compile: its phase is on the timeline
        run.cost = runtime.cost_analysis(executable)
        run.text_bytes = len(text)

    # -- evaluations

    def _begin(self, trigger, where):
        local = self.local
        ev = Evaluation(trigger, where, time.perf_counter_ns())
        local.current = ev
        local.trace_me = self._trace_me("evaluate", f"{trigger} {short(where)}")

    def _finish(self):
        local = self.local
        ev = local.current
        local.current = None
        tm = getattr(local, "trace_me", None)
        if tm is not None:
            tm.__exit__(None, None, None)
            local.trace_me = None
        if ev is None or not ev.phases:
            return
        ev.end = max(ev.end, time.perf_counter_ns())
        local.last = ev
        for s in list(self.subscribers):
            s.receive(ev)

    def _loose(self, phase):
        for s in list(self.subscribers):
            loose = getattr(s, "loose", None)
            if loose is not None:
                loose(phase)

    def _trace_me(self, name, label=None):
        if self.session is None:
            return None
        from .backends import _jaxlib
        if label is None:
            ev = self.local.current or self.local.last
            label = short(ev.where) if ev is not None else "?"
        return _jaxlib.trace_me(f"tlaloc.{name} {label}")

    # -- programs

    def _program_begins(self, info, is_jit):
        plan, device = info["plan"], info["device"]
        run = ProgramRun()
        run.device = device
        try:
            run.ops = len(plan.equations())
        except Exception:
            run.ops = 0
        key = plan.key
        with self._lock:
            seen = self.seen.setdefault(device, {})
            known = key in seen or _program_diff.backend_knows(device, key)
            if not known:
                run.new = True
                if is_jit:
                    run.function = info.get("function")
                    run.cause = info.get("cause")
                else:
                    run.differences = _program_diff.differences(key, plan, _program_diff.candidates(
                        device, seen))
            seen[key] = None
            if len(seen) > 512:
                seen.pop(next(iter(seen)))
        if is_jit:
            run.function = info.get("function")
            run.cause = info.get("cause")
        self.local.run = run
        ev = self.local.current
        ev.programs.append(run)
        return run

    def _program_ends(self, run, before):
        self.local.run = None
        hits, misses, compiles, disk, interpreted, seconds = before
        if STATS.compiles > compiles:
            run.outcome = "compiled"
        elif STATS.disk_hits > disk:
            run.outcome = "disk"
        elif STATS.hits > hits:
            run.outcome = "hit"
        elif STATS.misses > misses:
            run.outcome = "queued"
        elif STATS.interpreted > interpreted:
            run.outcome = "interpreted"
        else:
            run.outcome = "run"
        if run.outcome in ("compiled", "disk"):
            run.compile_seconds = STATS.compile_seconds - seconds


_observer = None
_observer_lock = threading.RLock()


def subscribe(subscriber, locations=True):
    """Start observing for `subscriber` (installs the observer if none is on). Source
    lines are recorded on the calling thread from now on."""
    global _observer
    with _observer_lock:
        if _observer is None:
            _observer = Observer()
        _observer.subscribers.append(subscriber)
        _context.observer = _observer
    if locations:
        subscriber._outer_on_bind = outer = trace.on_bind
        if outer is None:
            trace.on_bind = where_of_bind
        else:
            def both(node, outer=outer):
                where_of_bind(node)
                outer(node)
            trace.on_bind = both
    return _observer


def unsubscribe(subscriber):
    global _observer
    if hasattr(subscriber, "_outer_on_bind"):
        trace.on_bind = subscriber._outer_on_bind
        del subscriber._outer_on_bind
    with _observer_lock:
        if _observer is not None and subscriber in _observer.subscribers:
            _observer.subscribers.remove(subscriber)
            if not _observer.subscribers:
                _context.observer = None
                _observer = None


def current():
    return _observer
