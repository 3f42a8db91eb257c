"""tlaloc.profile, tlaloc.memory_stats and the printable cache_info (docs/profiling.md).

    with tlaloc.profile() as prof:
        train(steps=20)
    print(prof.summary())            # one row per line of your code, slowest first
    prof.save("step.trace.json.gz")  # open in Perfetto (ui.perfetto.dev) or chrome://tracing
    prof.plot("step.png")            # the timeline as a picture (needs matplotlib)

The trace is jaxlib's profiler session: tlaloc's phases (`tlaloc.evaluate`, `tlaloc.plan`,
`tlaloc.compile`, `tlaloc.execute`, ...: each named with your source line) and XLA's own
events share one timeline. A profile only observes: results are the same with and without.
"""
from __future__ import annotations

import gzip
import json
import os
import threading

from . import _observe
from .backends import _memory

_active = None
_lock = threading.Lock()

_COLUMNS = ("plan", "host-to-device", "compile", "execute", "interpret", "device-to-host")


class Row(dict):
    """One line of the summary (a dict: line, trigger, evaluations, seconds, ...)."""


class Summary:
    """The profile's table: one row per user source line (`file.py:line`), slowest first.
    `rows` holds them as dicts; `str(summary)` is the printout."""

    def __init__(self, evaluations, total_seconds):
        groups = {}
        for ev in evaluations:
            key = (ev.line, ev.trigger)
            row = groups.get(key)
            if row is None:
                row = groups[key] = Row(line=ev.line, trigger=ev.trigger, evaluations=0,
                                        seconds=0.0, programs=0, new_programs=0, hits=0,
                                        flops=0.0, **{c: 0.0 for c in _COLUMNS})
            row["evaluations"] += 1
            row["seconds"] += ev.seconds
            for p in ev.phases:
                if p.name in _COLUMNS:
                    row[p.name] += p.seconds
            for run in ev.programs:
                row["programs"] += 1
                row["new_programs"] += run.new
                row["hits"] += run.outcome == "hit"
                row["flops"] += float(run.cost.get("flops", 0.0) or 0.0)
        self.rows = sorted(groups.values(), key=lambda r: -r["seconds"])
        self.total_seconds = total_seconds

    def __iter__(self):
        return iter(self.rows)

    def __len__(self):
        return len(self.rows)

    def __str__(self):
        head = ("line", "trigger", "evals", "total ms", "compile", "execute", "interp",
                "to dev", "to host", "new/hits")
        lines = []
        for r in self.rows:
            lines.append((r["line"], r["trigger"], str(r["evaluations"]),
                          f"{r['seconds'] * 1e3:.2f}", f"{r['compile'] * 1e3:.2f}",
                          f"{r['execute'] * 1e3:.2f}", f"{r['interpret'] * 1e3:.2f}",
                          f"{r['host-to-device'] * 1e3:.2f}", f"{r['device-to-host'] * 1e3:.2f}",
                          f"{r['new_programs']}/{r['hits']}"))
        widths = [max(len(h), *(len(l[i]) for l in lines)) if lines else len(h)
                  for i, h in enumerate(head)]

        def fmt(cells):
            return "  ".join(c.ljust(w) if i < 2 else c.rjust(w)
                             for i, (c, w) in enumerate(zip(cells, widths)))
        out = [fmt(head), "  ".join("-" * w for w in widths)] + [fmt(l) for l in lines]
        evaluated = sum(r["seconds"] for r in self.rows)
        out.append(f"{sum(r['evaluations'] for r in self.rows)} evaluations took "
                   f"{evaluated * 1e3:.2f} ms of the block's {self.total_seconds * 1e3:.2f} ms "
                   "(the rest is recording and your own Python). Times in ms; "
                   "new/hits: programs compiled or seen for the first time / cache hits.")
        return "\n".join(out)

    __repr__ = __str__


class Profile:
    """What `with tlaloc.profile() as prof:` gives."""

    def __init__(self):
        self.evaluations = []     # Evaluation records, in order
        self.background = []      # phases outside any evaluation (background compiles)
        self._trace = None        # jaxlib's Chrome trace, once the block has ended
        self._session = None
        self._state = "new"
        self._start = self._end = 0
        self.profiler_error = None   # why jaxlib's session could not start, if it could not

    # -- the observer's subscriber interface
    def receive(self, evaluation):
        self.evaluations.append(evaluation)

    def loose(self, phase):
        self.background.append(phase)

    # -- the block
    def __enter__(self):
        global _active
        import time
        with _lock:
            if _active is not None:
                raise RuntimeError("tlaloc.profile: a profile is already on; profiles do not "
                                   "nest (end the outer `with tlaloc.profile()` block first, "
                                   "or profile the inner code alone)")
            if self._state != "new":
                raise RuntimeError("tlaloc.profile: this profile has already run; make a new "
                                   "one with tlaloc.profile()")
            _active = self
        from .backends import _jaxlib
        try:
            self._session = _jaxlib.start_profiler()
        except RuntimeError as e:
            self._session = None
            self.profiler_error = str(e)
        obs = _observe.subscribe(self)
        obs.session = self._session
        _memory.enable()
        self._state = "on"
        self._start = time.perf_counter_ns()
        return self

    def __exit__(self, *exc):
        global _active
        import time
        self._end = time.perf_counter_ns()
        obs = _observe.current()
        if obs is not None:
            obs.session = None
        _observe.unsubscribe(self)
        if self._session is not None:
            from .backends import _jaxlib
            try:
                self._trace = _jaxlib.stop_profiler(self._session)
            except Exception as e:   # the profile's own records stay usable
                self.profiler_error = f"jaxlib's profiler failed to export: {e}"
            self._session = None
        self._state = "done"
        with _lock:
            _active = None
        return False

    # -- results
    def summary(self) -> Summary:
        """One row per user source line, slowest first (`str()` prints the table)."""
        import time
        end = self._end or time.perf_counter_ns()
        return Summary(self.evaluations, (end - self._start) * 1e-9)

    def _own_events(self):
        """tlaloc's phases as Chrome trace events (when jaxlib's trace is missing)."""
        events = []
        pid = os.getpid()
        for ev in self.evaluations:
            events.append({"ph": "X", "pid": pid, "tid": ev.thread, "name":
                           f"tlaloc.evaluate {ev.trigger} {ev.line}", "ts": ev.start / 1e3,
                           "dur": (ev.end - ev.start) / 1e3, "args": {"line": ev.line}})
            for p in ev.phases:
                events.append({"ph": "X", "pid": pid, "tid": p.thread, "name":
                               f"tlaloc.{p.name} {ev.line}", "ts": p.start / 1e3,
                               "dur": (p.end - p.start) / 1e3, "args": {"line": ev.line}})
        return events

    def trace_events(self) -> list:
        """The Chrome trace events of the profile (jaxlib's session: tlaloc's phases and
        XLA's events; tlaloc's own records where the session could not run)."""
        if self._state != "done":
            raise RuntimeError("tlaloc.profile: the trace exists once the `with` block ends")
        if self._trace is not None and any(
                str(e.get("name", "")).startswith("tlaloc.") for e in self._trace["traceEvents"]):
            return self._trace["traceEvents"]
        base = list(self._trace["traceEvents"]) if self._trace is not None else []
        return base + self._own_events()

    def save(self, path) -> str:
        """Write the trace as Chrome/Perfetto JSON, gzipped (`.json.gz`; open it in
        ui.perfetto.dev or chrome://tracing). Returns the path."""
        path = os.fspath(path)
        events = self.trace_events()
        data = {"displayTimeUnit": "ms", "traceEvents": events,
                "metadata": {"tlaloc": "tlaloc.profile"}}
        try:
            with open(path, "wb") as raw:
                with gzip.GzipFile(fileobj=raw, mode="wb") as f:
                    f.write(json.dumps(data).encode())
        except OSError as e:
            raise type(e)(e.errno, f"tlaloc.profile.save: cannot write {path!r}: "
                                   f"{e.strerror or e}") from None
        return path

    def plot(self, path) -> str:
        """Draw the timeline (one band per phase, each evaluation labelled with its line)
        as a PNG. Needs matplotlib (pip install matplotlib)."""
        if self._state != "done":
            raise RuntimeError("tlaloc.profile.plot: call it after the `with` block ends")
        try:
            import matplotlib
            matplotlib.use("Agg", force=False)
            import matplotlib.pyplot as plt
        except ImportError:
            raise ImportError("tlaloc.profile.plot needs matplotlib, which is not installed: "
                              "pip install matplotlib (or pip install 'tlaloc[profile]'); "
                              "prof.save() and prof.summary() work without it") from None
        path = os.fspath(path)
        bands = ["evaluate", *_COLUMNS, "plan"]
        bands = list(dict.fromkeys(bands))
        colors = dict(zip(bands, ["#999999", "#4c72b0", "#dd8452", "#c44e52", "#55a868",
                                  "#8172b3", "#937860"]))
        t0 = self._start
        fig, ax = plt.subplots(figsize=(11, 3.6))
        for ev in self.evaluations:
            ax.broken_barh([((ev.start - t0) / 1e6, max((ev.end - ev.start) / 1e6, 1e-3))],
                           (0, 0.8), color=colors["evaluate"])
            for p in ev.phases:
                if p.name in bands:
                    y = bands.index(p.name)
                    ax.broken_barh([((p.start - t0) / 1e6, max((p.end - p.start) / 1e6, 1e-3))],
                                   (y, 0.8), color=colors[p.name])
        # label the slowest evaluations with their lines
        for ev in sorted(self.evaluations, key=lambda e: -e.seconds)[:6]:
            ax.annotate(ev.line, ((ev.start - t0) / 1e6, 0.85), fontsize=7, rotation=30)
        ax.set_yticks([i + 0.4 for i in range(len(bands))], bands)
        ax.set_xlabel("ms since the profile began")
        ax.set_title("tlaloc.profile: evaluations and their phases")
        ax.invert_yaxis()
        fig.tight_layout()
        try:
            fig.savefig(path, format="png", dpi=110)
        except OSError as e:
            raise type(e)(e.errno, f"tlaloc.profile.plot: cannot write {path!r}: "
                                   f"{e.strerror or e}") from None
        finally:
            plt.close(fig)
        return path

    def __repr__(self):
        return f"<tlaloc.profile: {len(self.evaluations)} evaluation(s), {self._state}>"


def profile() -> Profile:
    """Profile the `with` block: every evaluation's trigger and line, planning, cache
    outcome, compile time, transfers, execution, and XLA's cost estimate. Profiles do not
    nest (RuntimeError)."""
    return Profile()


# ----------------------------------------------------------------------------- memory

class MemoryStats(dict):
    """tlaloc.memory_stats(device): live_bytes, peak_bytes, live_buffers (a dict); its
    `str` is one readable line."""

    def __str__(self):
        return (f"{self['device']}: {_bytes(self['live_bytes'])} live in "
                f"{self['live_buffers']} buffer(s), peak {_bytes(self['peak_bytes'])}")

    __repr__ = __str__


def _bytes(n) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024


def memory_stats(device=None, *, reset_peak: bool = False) -> MemoryStats:
    """Live and peak bytes of the buffers tlaloc holds on `device` (default: the default
    device): transfers, program results and interpreter results, counted until freed.
    reset_peak=True starts the peak again from the live bytes (after reading it)."""
    from ._devices import default_device, device as as_device
    dev = default_device() if device is None else as_device(device)
    _memory.enable()   # counting starts with the first question (backends/_memory.py)
    counts = _memory.counts_of(dev.backend)
    stats = MemoryStats(device=str(dev), live_bytes=counts[0], peak_bytes=counts[1],
                        live_buffers=counts[2])
    if reset_peak:
        _memory.reset_peak(dev.backend)
    return stats
