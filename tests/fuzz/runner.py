"""Running a program on every backend and judging the results.

Modes, in this order on one worker:
  interpreter   the NumPy reference interpreter device, with its defaults (operations on
                small computed arrays run as they are recorded: config.eager_max_size);
  auto          the default tiered mode on the CPU, every operation lazy
                (eager_max_size=0): three runs (the first interpreted, the second
                interpreted while it compiles in the background, the third compiled);
  compiled      execution="compiled" on the CPU (it finds auto's executable in the cache).
Every run of every mode is compared with the reference, so the backends agree with each
other wherever the reference pins a value.
"""
from __future__ import annotations

import collections
import dataclasses
import time

from . import compare
from .known_issues import match_known

MODES = ("interpreter", "auto", "compiled")
TIMEOUT_S = 90.0


@dataclasses.dataclass
class Failure:
    kind: str           # "crash", "hang", "exception", "mismatch"
    mode: str
    detail: str
    reproduction: str
    op: str = ""        # a mismatch: the operation that wrote the first differing output

    def summary(self) -> str:
        return f"{self.kind} in mode {self.mode}"


@dataclasses.dataclass
class Stats:
    programs: int = 0
    runs: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    failures: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    known: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    ops: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    checked: int = 0
    elements: int = 0
    seconds: float = 0.0

    def add(self, other: "Stats"):
        self.programs += other.programs
        for name in ("runs", "failures", "known", "ops"):
            getattr(self, name).update(getattr(other, name))
        self.checked += other.checked
        self.elements += other.elements
        self.seconds += other.seconds

    def report(self) -> str:
        kinds = ("crash", "hang", "exception", "mismatch")
        lines = [f"programs: {self.programs} in {self.seconds:.0f} s; runs per mode: "
                 + ", ".join(f"{m} {n}" for m, n in self.runs.items()),
                 "failures: " + ", ".join(f"{k} {self.failures[k]}" for k in kinds)
                 + " (exception: raised where the reference succeeds)"]
        if self.elements:
            lines.append(f"elements pinned by the reference: {self.checked} of {self.elements}")
        if self.known:
            lines.append("known issues matched (KNOWN_ISSUES): "
                         + ", ".join(f"{k} {n}" for k, n in sorted(self.known.items())))
        return "\n".join(lines)


def run_mode(worker, program, mode):
    """The failures of `program` in `mode` (empty: every run matched the reference)."""
    msg = {"kind": "program", "source": program.source(), "mode": mode,
           "max_pending": program.max_pending}
    status, reply = worker.request(msg, TIMEOUT_S)
    repro = program.reproduction(mode)
    if status != "reply":
        return [Failure(status, mode, reply, repro)]
    failures = []
    for run, outs in enumerate(reply.get("runs", [])):
        lines, first = [], None
        for n, (out, ref) in enumerate(zip(outs, program.refs)):
            found = compare.problems(out, ref, label=f"output {n} (v{program.outputs[n]}): ")
            if found and first is None:
                first = program.origins[n] if program.origins else ""
            lines += found
        if lines:
            where = f" (run {run + 1} of 3)" if mode == "auto" else ""
            failures.append(Failure("mismatch", mode, "\n".join(lines) + where, repro, first))
    if "error" in reply:
        e = reply["error"]
        line = ""
        if e["line"] is not None:
            line = f" at line {e['line']}: {program.source().splitlines()[e['line'] - 1].strip()}"
        text = f"{e['type']}: {e['message']}{line}\n{e['traceback']}"
        failures.append(Failure("exception", mode, text, repro))
    return failures


def check_program(worker, program, stats: Stats, modes=MODES):
    """Run `program` in `modes`; returns the failures no KNOWN_ISSUES entry explains."""
    start = time.perf_counter()
    stats.programs += 1
    stats.ops.update(program.ops)
    checked, total = compare.checked_fraction(program.refs)
    stats.checked += checked
    stats.elements += total
    unexplained = []
    for mode in modes:
        stats.runs[mode] += 1
        for f in run_mode(worker, program, mode):
            known = match_known(program, f)
            if known:
                stats.known[known] += 1
            else:
                stats.failures[f.kind] += 1
                unexplained.append(f)
    stats.seconds += time.perf_counter() - start
    return unexplained


def focused(check, modes=MODES):
    """`check(example, modes)` run in every mode until something fails, then only in the
    modes that failed: shrinking a failure of one mode need not run the others."""
    state = {"modes": None}

    def run(example):
        failures = check(example, state["modes"] or modes)
        if failures and state["modes"] is None:
            state["modes"] = tuple(m for m in modes if any(f.mode == m for f in failures)) or modes
        return failures
    return run


def format_failures(failures, seed=None) -> str:
    parts = []
    for f in failures:
        parts.append(f"--- {f.summary()}\n{f.detail}")
    f = failures[0]
    replay = f"\nreplay the run with TLALOC_FUZZ_SEED={seed}" if seed is not None else ""
    return ("\n".join(parts) + f"\n\n--- reproduction ({f.mode}):\n{f.reproduction}" + replay)
