"""The tier policy of `execution="auto"`: when a program structure is worth compiling.

Compiling a structure is a one-off cost C (XLA's compile, predicted from the program's size);
running it in the NumPy interpreter costs I each time (measured on every interpreted run,
predicted from the program's size before its first run). The policy is the ski-rental rule:

    compile a structure as soon as the interpreter time already spent on it, plus one more
    interpreted run, would reach its predicted compile time.

On first sight nothing is spent yet, so a structure whose one predicted interpreted run costs
as much as compiling is compiled at once (large arrays). Otherwise it is interpreted until
its interpreted runs have cost about one compile. With exact predictions and compiled runs
no slower than interpreted ones, the total time of any number n of runs is within 2x of the
better fixed tier, min(n * I, C + n * E): while n * I < C nothing is compiled and the total is
n * I; past that the interpreter time spent before compiling is below C, so the total is
below 2 * C + n * E. (The background compile of the CPU device makes it better still: the
interpreter keeps running while XLA compiles.)

The predictions are fits to this machine's measurements, kept in the disk cache's folder
(`costs-<machine>.json`) so that a new process starts from them:
  * compile seconds = a + b * ops, from every XLA compile;
  * interpreter seconds of one equation = c + d * elements written, per primitive, from
    each equation of every structure's first interpreted run; a program's prediction is
    the sum over its equations (later runs of a structure use its own measured time).
Each fit starts from a prior (the figures of a 2-core machine: 40 ms + 1 ms/op to compile,
5 us per call + 1.5 ns/element to interpret) worth a few observations, so early predictions
are sensible and later ones are this machine's.
"""
from __future__ import annotations

import ast
import atexit
import math
import os
import pathlib
import platform
import tempfile
import threading
import zlib

import numpy as np   # (its version names the machine's costs)

from . import disk_cache

# The priors, and how many observations each is worth against this machine's own.
_COMPILE_PRIOR = (0.04, 0.001)            # seconds, seconds per op
_INTERPRET_PRIOR = (5e-6, 1.5e-9)         # seconds per call, seconds per element written
_PRIOR_WEIGHT = 4.0
# Older observations fade, so a fit follows the machine's current load: each new one counts
# as much as this many earlier ones together (an exponential moving window).
_WINDOW = 200.0
_FADE = _WINDOW / (_WINDOW + 1.0)
# A primitive's fit that holds this many (faded) observations takes one equation in
# _SAMPLE_EVERY of the structures met later: it is settled, and every structure's first run
# is measured (the one-shot code of a script meets nothing but first runs).
_SETTLED = 100.0
_SAMPLE_EVERY = 8


def should_compile(spent: float, next_run: float, compile_seconds: float) -> bool:
    """The ski-rental rule: compile once `spent` (interpreter seconds already spent on the
    structure) plus `next_run` (one more interpreted run) reaches the compile's cost."""
    return spent + next_run >= compile_seconds


class _LinearFit:
    """y ~ p0 * x0 + p1 * x1 by least squares over moving sums, regularised toward a prior
    coefficient pair. Plain floats: an observation costs about a microsecond, so every
    interpreted run can be one."""

    def __init__(self, prior, scales):
        self.prior = prior
        self.scales = scales            # typical feature sizes (keeps the solve well scaled)
        self.sums = [0.0] * 6           # x0x0, x0x1, x1x1, x0y, x1y, count (all faded)
        self._coef = prior
        self.offered = 0                # observations offered since the fit settled

    def settled(self) -> bool:
        return self.sums[5] >= _SETTLED

    def observe(self, x0, x1, y) -> None:
        x0 /= self.scales[0]
        x1 /= self.scales[1]
        fade = _FADE
        s = self.sums
        s[0] = s[0] * fade + x0 * x0
        s[1] = s[1] * fade + x0 * x1
        s[2] = s[2] * fade + x1 * x1
        s[3] = s[3] * fade + x0 * y
        s[4] = s[4] * fade + x1 * y
        s[5] = s[5] * fade + 1.0
        self._coef = None

    def coefficients(self) -> tuple:
        if self._coef is None:
            # ridge toward the prior: (X'X + w I) p = X'y + w p_prior, in scaled coordinates
            a00, a01, a11, b0, b1, _ = self.sums
            w = _PRIOR_WEIGHT
            q0, q1 = self.prior[0] * self.scales[0], self.prior[1] * self.scales[1]
            a00, a11, b0, b1 = a00 + w, a11 + w, b0 + w * q0, b1 + w * q1
            det = a00 * a11 - a01 * a01          # > 0: the ridge makes it positive definite
            p0 = (b0 * a11 - b1 * a01) / det
            p1 = (a00 * b1 - a01 * b0) / det
            # no cost is negative
            self._coef = (max(p0, 0.0) / self.scales[0], max(p1, 0.0) / self.scales[1])
        return self._coef

    def predict(self, x0, x1) -> float:
        p0, p1 = self.coefficients()
        return p0 * x0 + p1 * x1

    def state(self) -> list:
        return list(self.sums)

    def load(self, state) -> None:
        sums = [float(v) for v in state]
        if len(sums) != 6 or not all(math.isfinite(v) for v in sums):
            raise ValueError("bad fit state")
        self.sums = sums
        self._coef = None


class CostModel:
    """Predicted compile and interpreter seconds on this machine (see the module's text)."""

    def __init__(self, path=None):
        self.compile = _LinearFit(_COMPILE_PRIOR, (1.0, 100.0))
        self.interpret = {}       # primitive name -> fit of (1 call, elements) -> seconds
        self._coefficients = {}   # primitive name -> its fit's (per call, per element) now
        self.path = path
        self.changed = 0
        self._lock = threading.Lock()
        if path is not None:
            self._load()

    def predict_compile(self, ops: int) -> float:
        return self.compile.predict(1.0, ops)

    def predict_interpret(self, nodes) -> float:
        """Seconds of one interpreted run of a plan's `nodes` (its equations)."""
        coefficients = self._coefficients
        total = 0.0
        for n in nodes:
            name = n.prim.name
            c = coefficients.get(name)
            if c is None:
                fit = self.interpret.get(name)
                c = coefficients[name] = _INTERPRET_PRIOR if fit is None else fit.coefficients()
            total += c[0] + c[1] * math.prod(n.aval.shape)
        return total

    def observe_compile(self, ops: int, seconds: float) -> None:
        with self._lock:
            self.compile.observe(1.0, ops, seconds)
            self.changed += 1

    def observe_interpret(self, timings) -> None:
        """(prim, aval, seconds) of each equation of one interpreted run (a settled fit takes
        one in _SAMPLE_EVERY of them)."""
        with self._lock:
            fits = self.interpret
            coefficients = self._coefficients
            for prim, aval, seconds in timings:
                name = getattr(prim, "name", "?")
                fit = fits.get(name)
                if fit is None:
                    fit = fits[name] = _interpret_fit()
                elif fit.settled():
                    fit.offered += 1
                    if fit.offered % _SAMPLE_EVERY:
                        continue
                fit.observe(1.0, math.prod(aval.shape), seconds)
                coefficients.pop(name, None)
            self.changed += 1

    # -------------------------------------------------------------- persistence

    def _load(self) -> None:
        try:
            # JSON of dicts, lists, strings and finite numbers (save writes no other) is
            # also a Python literal: ast is loaded already (numpy imports it), json is not
            state = ast.literal_eval(pathlib.Path(self.path).read_text())
            compile_fit = _LinearFit(_COMPILE_PRIOR, self.compile.scales)
            compile_fit.load(state["compile"])
            interpret = {}
            for name, sums in state["interpret"].items():
                interpret[str(name)] = fit = _interpret_fit()
                fit.load(sums)
        except (OSError, ValueError, SyntaxError, RecursionError, MemoryError, KeyError, TypeError,
                AttributeError):
            return   # absent, unreadable or from another version: start from the priors
        self.compile, self.interpret = compile_fit, interpret
        self._coefficients = {}

    def save(self) -> None:
        """Write the fits (atomically: concurrent processes never see half a file). A
        folder that cannot be written only costs the next process its head start."""
        if self.path is None or not self.changed:
            return
        with self._lock:
            state = {"compile": self.compile.state(),
                     "interpret": {k: f.state() for k, f in self.interpret.items()}}
            self.changed = 0
        tmp = None
        try:
            path = pathlib.Path(self.path)
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            with os.fdopen(fd, "w") as f:
                import json   # at exit, where its import costs nothing that shows
                json.dump(state, f, allow_nan=False)
            os.replace(tmp, path)
        except OSError:
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass


_shared = {}
_shared_lock = threading.Lock()


def machine_costs(platform_name: str) -> CostModel:
    """The cost model of this machine's `platform_name` devices: one per file, shared by
    the devices (cpu:0, cpu:1, ...), loaded on first use and saved at exit."""
    path = machine_costs_path(platform_name)
    with _shared_lock:
        model = _shared.get(path)
        if model is None:
            model = _shared[path] = CostModel(path)
            if path is not None:
                atexit.register(model.save)
    return model


def _interpret_fit():
    return _LinearFit(_INTERPRET_PRIOR, (1.0, 1e4))


def machine_costs_path(platform_name: str):
    """Where this machine's fits live (None when the disk cache is off). Named by what the
    costs depend on and known without starting a runtime: the host (a cache folder may be
    shared between machines), the cores this process may use, the device's platform, and
    the NumPy version (the interpreter's speed)."""
    root = disk_cache.cache_dir()
    if root is None:
        return None
    machine = "|".join((platform.node(), platform.machine(), str(usable_cores()),
                        platform_name, np.__version__))
    # a name, not a secret: zlib is loaded already (numpy imports it), hashlib is not
    return root / f"costs-{zlib.crc32(machine.encode()):08x}.json"


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def spare_core() -> bool:
    """Whether a background compile can run beside the caller's thread: it must never take
    the last free core from the thread that records and interprets. Free: the cores this
    process may use less the machine's load (its one-minute average of running threads,
    the caller among them), so on a machine that others keep busy the compile runs in the
    caller's thread instead of slowing it down from the side."""
    cores = usable_cores()
    if cores < 2:
        return False
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        return True       # no load figure: the process's own cores are the best guess
    return cores - load >= 1.0
