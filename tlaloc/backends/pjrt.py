"""PJRT devices: compile programs with XLA and run them, with tiered execution.

Tiers (config.execution, env TLALOC_EXECUTION):
  * "compiled": every program is compiled before it runs.
  * "interpreted": every program runs through the NumPy interpreter on the host (CPU only).
  * "auto" (default): the ski-rental policy of backends/tiers.py: a structure runs in the
    interpreter until its interpreted runs have cost about its predicted compile time (or
    is compiled at once when one run would cost more); the compile then runs in a
    background thread where a spare core allows, and the interpreter keeps running the
    structure until the executable is ready. Devices that are not the host (GPUs) always
    compile.

The PJRT client (and jaxlib) is made on the first compile or transfer that needs it: a
program the interpreter tier runs needs neither.
"""
from __future__ import annotations

import collections
import threading
import time
import weakref

import numpy as np

from .. import _context
from . import _memory
from .._config import config
from ..lowering import lower_program
from .interpreter import Schedule, interpret, run_now, to_host
from ._untrack import untracked
from .._protocol import Backend

_SCALAR_TABLE_SIZE = 64

# The one background compile thread, made by the first background compile: concurrent.futures
# (and the logging it imports) would cost milliseconds at a process's first evaluation.
_compile_pool = None
_compile_pool_lock = threading.Lock()


def _in_background(fn, *args):
    """fn(*args) on the background compile thread: its future. RuntimeError once the
    interpreter is exiting."""
    global _compile_pool
    pool = _compile_pool
    if pool is None:
        with _compile_pool_lock:
            pool = _compile_pool
            if pool is None:
                import concurrent.futures
                pool = concurrent.futures.ThreadPoolExecutor(
                    max_workers=1, thread_name_prefix="tlaloc-compile")
                # threading's exit hooks run in reverse order of registration, so this runs
                # before the one concurrent.futures registered at its import (the hook that
                # drains the queue)
                threading._register_atexit(_drop_queued_compiles)
                _compile_pool = pool
    return pool.submit(fn, *args)


def _drop_queued_compiles():
    """At interpreter exit, cancel the background compiles still queued: nothing will run
    their executables, and concurrent.futures would otherwise run every queued compile
    before the process can end (seconds to minutes after a short script's last line). A
    compile already running finishes (and is stored in the disk cache)."""
    _compile_pool.shutdown(wait=False, cancel_futures=True)


# Structures seen once and never compiled are forgotten beyond this many (code that runs
# once, shape after shape, would otherwise grow the table without limit).
_MAX_UNCOMPILED_ENTRIES = 4096


class _Entry:
    """What the device knows of one program structure. `program` is built when the
    structure is first compiled (a structure that only ever runs in the interpreter tier
    never needs one). `spent` and `last_run` are its interpreted runs' measured seconds
    (the tier policy's input); `schedule` is its interpreter form, kept once it runs
    interpreted a second time."""
    __slots__ = ("program", "seen", "executable", "handlers", "execute", "future", "spent",
                 "last_run", "schedule")

    def __init__(self, program=None):
        self.program = program
        self.seen = 0
        self.executable = None
        self.handlers = None
        self.execute = None       # buffers -> outputs: the executable's run, once compiled
        self.future = None
        self.spent = 0.0
        self.last_run = None
        self.schedule = None


# DLPack's device types of the platforms whose buffers jaxlib exports
_DLPACK_DEVICE_TYPES = {"cuda": 2, "rocm": 10}   # kDLCUDA, kDLROCM


class PjrtBackend(Backend):
    def __init__(self, make_runtime, stats, host: bool, platform: str):
        self._make_runtime = make_runtime   # -> _jaxlib.Runtime, called on first need
        self._runtime = None
        self._buffer = None        # the runtime's buffer type, once the runtime is made
        self._disk = None
        self.stats = stats
        self.host = host            # buffers live in host memory: the interpreter tier applies
        self.platform = platform
        self._entries = {}
        self._lock = threading.Lock()
        self._runtime_lock = threading.Lock()
        self._scalars = {}
        # every buffer the scalar table handed out, by id, while it lives: leaves keep the
        # buffer after the table forgets it, so it stays shared (and must not be donated)
        self._shared_scalars = weakref.WeakValueDictionary()
        self._costs = None

    @property
    def costs(self):
        """This machine's measured costs, which the tier policy predicts from: read at the
        first program that consults the policy, not at the device's first use (operations
        run at once never do, and reading the file took ~5 ms of a fresh process's first
        line)."""
        costs = self._costs
        if costs is None:
            # the policy's module too: a device whose operations all run at once (small
            # host arrays, the one-shot workload) never imports it (~0.4 ms of a fresh
            # process's first computation, with the disk cache it reads)
            from . import tiers
            costs = self._costs = tiers.machine_costs(self.platform)
        return costs

    @costs.setter
    def costs(self, model):
        self._costs = model

    @property
    def runtime(self):
        """The PJRT client and device, made (importing jaxlib) on first use."""
        runtime = self._runtime
        if runtime is None:
            with self._runtime_lock:
                runtime = self._runtime
                if runtime is None:
                    from .disk_cache import DiskCache
                    runtime = self._make_runtime()
                    self._disk = DiskCache(runtime.cache_identity())
                    self._buffer = runtime.buffer_type
                    self._runtime = runtime
        return runtime

    # -------------------------------------------------------------- values

    def to_numpy(self, value) -> np.ndarray:
        if _context.observer is None:
            return to_host(value)
        with _context.phase("device-to-host"):
            return to_host(value)

    def transfer_in(self, value, source_device):
        # the source's backend reads it (an array over a mesh is put together from its parts)
        return self._put(np.ascontiguousarray(source_device.backend.to_numpy(value)))

    def _put(self, array):
        """A device copy of a host array, counted in tlaloc.memory_stats."""
        buf = self.runtime.put(array)
        if _memory.ENABLED:
            _memory.track(self, (buf,))
        return buf

    def dlpack_device(self, device) -> tuple:
        if self.host or self.platform not in _DLPACK_DEVICE_TYPES:
            return (1, 0)      # kDLCPU: the CPU, and plugins without jaxlib's DLPack export
        return (_DLPACK_DEVICE_TYPES[self.platform], device.index)

    def to_dlpack(self, node, *, stream=None, copy=False):
        buf = self._as_buffer(node)
        if copy:
            buf = self.runtime.copy(buf)
        return self.runtime.dlpack(buf, stream)

    def _as_buffer(self, leaf):
        value = leaf.value
        if not self.runtime.is_buffer(value):
            if value.ndim == 0:
                value = self._scalar_buffer(value)
            else:
                value = self._put(value)
            leaf.value = value            # keep it on the device for next time
        return value

    def _scalar_buffer(self, value):
        """Device copies of 0-d values, shared by value: the constant scalars of a loop body
        are sent once, not at every evaluation. The table is small (values that change every
        step, like a loop counter, only pass through it), so memory stays flat."""
        key = (value.dtype, value.tobytes())
        buf = self._scalars.get(key)
        if buf is None or buf.is_deleted():   # a donated copy cannot be reused
            if len(self._scalars) >= _SCALAR_TABLE_SIZE:
                self._scalars.clear()
            buf = self._scalars[key] = self._put(value)
            self._shared_scalars[id(buf)] = buf
        return buf

    # -------------------------------------------------------------- running

    def run(self, plan, leaves, *, compiled=False):
        """Run `plan` (a protocol.Plan) on the values of `leaves`. compiled=True skips the
        interpreter tier (tlaloc.jit)."""
        entry = plan.entry     # a plan run many times (jit, export) remembers its entry
        if entry is None:
            key = plan.key
            entry = self._entries.get(key)
            if entry is None:
                if len(self._entries) >= _MAX_UNCOMPILED_ENTRIES:
                    self._forget_uncompiled()
                # setdefault: threads that meet a new structure together share one entry
                entry = self._entries.setdefault(untracked(key), _Entry())
            if plan.keeps_entry:
                plan.entry = entry
        entry.seen += 1
        mode = config.execution if self.host and not compiled else "compiled"
        if mode == "interpreted":   # forced: even a structure compiled before is interpreted
            return self._interpret(plan, leaves, entry)
        if entry.executable is None and entry.future is not None and entry.future.done() \
                and not entry.future.cancelled():
            entry.future.result()  # re-raises a compile error
        if entry.executable is not None:
            self.stats.hits += 1
            return self._execute(entry, leaves)
        if mode == "compiled":
            self.stats.misses += 1
            self._compile(entry, plan)
            return self._execute(entry, leaves)
        if entry.future is None and self._worth_compiling(plan, entry):
            self.stats.misses += 1
            if entry.last_run is None:            # first sight: one run costs a compile
                self.stats.compiled_at_once += 1
            else:
                self.stats.compiled_after_interpreting += 1
                from . import tiers
                if tiers.spare_core():
                    try:
                        if entry.program is None:
                            entry.program = plan.program()
                        entry.future = _in_background(self._compile, entry)
                        return self._interpret(plan, leaves, entry)
                    except RuntimeError:    # the interpreter is exiting: no more pool work
                        pass
            self._compile(entry, plan)      # in the caller's thread
            return self._execute(entry, leaves)
        return self._interpret(plan, leaves, entry)

    def run_now(self, prim, params, inputs, aval):
        """An operation on small computed host values, run as it is recorded (the
        interpreter's `run_now`) unless every program must be compiled."""
        if not self.host or config.execution == "compiled":
            return None
        return run_now(prim, params, inputs, aval, self)

    def fast_runner(self, plan):
        """For a plan run many times with the same structure (tlaloc.jit's cached calls): a
        function of the input buffers that does what `run` does once the plan's executable
        is ready (count a hit, execute, track memory), with every lookup made here, once.
        It returns None, having done nothing, when a donated input's buffer is shared (with
        another input, or through the scalar table): `run` copies it first. None instead of
        a function while the executable is not ready. The caller passes buffers of the
        runtime's type (`buffer_type`) only, and calls it only while no observer is set (it
        opens no phases)."""
        entry = plan.entry
        if entry is None or entry.executable is None:
            return None
        execute = entry.execute
        donated = tuple(entry.program.donated)
        stats = self.stats
        shared = self._shared_scalars
        memory = _memory

        def run(buffers):
            if donated:
                ids = [id(b) for b in buffers]
                for i in donated:
                    b = buffers[i]
                    if ids.count(id(b)) > 1 or shared.get(id(b)) is b:
                        return None
            stats.hits += 1
            entry.seen += 1
            out = execute(buffers)
            if memory.ENABLED:
                memory.track(self, out)
            return out

        return run

    @property
    def buffer_type(self):
        """The type of this backend's device buffers (exactly: no subclass)."""
        return self.runtime.buffer_type

    def _worth_compiling(self, plan, entry) -> bool:
        """The ski-rental rule (backends/tiers.py) on this structure's measured runs, or on
        the predicted one before its first run."""
        from . import tiers
        costs = self.costs
        next_run = entry.last_run
        if next_run is None:
            next_run = costs.predict_interpret(plan.nodes)
        compile_seconds = costs.predict_compile(len(plan.nodes))
        if tiers.should_compile(entry.spent, next_run, compile_seconds):
            self.stats.predicted_compile_seconds += compile_seconds
            return True
        return False

    def _forget_uncompiled(self):
        # list(): one C call, so another thread's new entry cannot change the dict mid-walk
        self._entries = {k: e for k, e in list(self._entries.items())
                         if e.executable is not None or e.future is not None}

    def _interpret(self, plan, leaves, entry):
        stats = self.stats
        stats.interpreted += 1
        # a structure's first run measures each equation, for the per-primitive fits
        timings = [] if entry.last_run is None else None
        start = time.perf_counter()
        schedule = entry.schedule
        if schedule is None:
            schedule = Schedule(plan.equations(), plan.outputs, [l.aval for l in leaves])
            if entry.last_run is not None:
                # kept from a structure's second run: kept for every structure seen once,
                # the schedules' objects slowed the garbage collector (one-shot code, 8%)
                entry.schedule = schedule
        with _context.phase("interpret"):
            out = interpret(schedule, [to_host(l.value) for l in leaves], timings)
        seconds = time.perf_counter() - start
        stats.interpret_seconds += seconds
        entry.spent += seconds
        entry.last_run = seconds
        if timings:
            self.costs.observe_interpret(timings)
        if _memory.ENABLED:
            _memory.track(self, out)
        return out

    def _execute(self, entry, leaves):
        observed = _context.observer is not None
        if observed:
            with _context.phase("host-to-device"):
                buffers = [self._as_buffer(l) for l in leaves]
        else:
            buffer = self._buffer
            buffers = []
            for l in leaves:
                value = l.value
                buffers.append(value if type(value) is buffer else self._as_buffer(l))
        donated = entry.program.donated
        if donated:
            # a donated buffer must be this input's alone (a shared scalar copy, or the same
            # array passed twice, would be consumed under the other's feet)
            uses = collections.Counter(map(id, buffers))
            shared = self._shared_scalars
            for i in donated:
                if uses[id(buffers[i])] > 1 or shared.get(id(buffers[i])) is buffers[i]:
                    uses[id(buffers[i])] -= 1
                    buffers[i] = leaves[i].value = self._put(
                        np.ascontiguousarray(to_host(buffers[i])))
        if observed:
            with _context.phase("execute"):
                out = entry.execute(buffers)
        else:
            out = entry.execute(buffers)
        if _memory.ENABLED:
            _memory.track(self, out)
        return out

    def _compile(self, entry, plan=None):
        with self._lock:
            if entry.executable is not None:
                return
            if entry.program is None:
                entry.program = plan.program()
            runtime = self.runtime
            start = time.perf_counter()
            # an exported program arrives lowered (tlaloc/_export.py)
            text = entry.program.text or lower_program(entry.program)
            if self.platform == "cpu" and "lapack_" in text:
                from . import _jaxlib
                _jaxlib.ensure_lapack()  # LAPACK custom calls: register before compile or load
            with _context.phase("compile"):
                executable = self._disk.load(text, runtime)
                if executable is None:
                    executable = runtime.compile(text)
                    self._disk.store(text, runtime, executable)
                    self.stats.compiles += 1
                    if not entry.program.text:   # (an exported program's size is unknown)
                        self.costs.observe_compile(len(entry.program.eqns),
                                                   time.perf_counter() - start)
                else:
                    self.stats.disk_hits += 1
            entry.handlers = self.runtime.handlers(
                (a.shape, a.dtype.numpy) for a in entry.program.out_avals())
            entry.execute = runtime.executor(executable, entry.handlers)
            entry.executable = executable    # last: other threads run it once it is set
            seconds = time.perf_counter() - start
            self.stats.compile_seconds += seconds
            obs = _context.observer   # a profile or tlaloc.explain: the program's size and cost
            if obs is not None:
                obs.compiled(entry.program, text, executable, self.runtime, seconds)

    def ready(self, value) -> None:
        if type(value) is self._buffer:
            value.block_until_ready()
        elif type(value) is not np.ndarray and self.runtime.is_buffer(value):
            value.block_until_ready()

    def wait_for_compiles(self):
        for entry in list(self._entries.values()):
            if entry.future is not None:
                entry.future.result()
