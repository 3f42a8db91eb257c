"""tlaloc.explain: why each evaluation happened, and why a program was new.

    with tlaloc.explain() as ex:
        for step in range(3):
            loss = float(step_fn(w))
    for record in ex.records:
        print(record)     # "float() at train.py:12 ran a new program of 14 ops (cache miss,
                          #  compiled in 0.041 s); it differs from the closest cached program
                          #  in: input 2 shape (3,) -> (4,)"

`TLALOC_EXPLAIN=1` in the environment explains every evaluation of the process on the
`tlaloc.explain` logger. A program structure is compared with the closest structure seen on
the same device (by this process's observer, and those the backend keeps): its inputs'
shapes and dtypes, each operation's primitive and static parameters.
"""
from __future__ import annotations

import logging
import os

from . import _observe

_log = logging.getLogger("tlaloc.explain")


class Explanation:
    """What `with tlaloc.explain() as ex:` gives: `ex.records`, one per evaluation."""

    def __init__(self, log=False):
        self.records = []
        self._log = log
        self._active = False

    def receive(self, evaluation):
        self.records.append(evaluation)
        if self._log:
            _log.warning("%s", evaluation)

    def __enter__(self):
        if self._active:
            raise RuntimeError("tlaloc.explain: this explanation is already on")
        self._active = True
        _observe.subscribe(self)
        return self

    def __exit__(self, *exc):
        _observe.unsubscribe(self)
        self._active = False
        return False

    def __str__(self):
        return "\n".join(str(r) for r in self.records)

    def __repr__(self):
        return f"<tlaloc.explain: {len(self.records)} evaluation(s)>"


def explain(*, log: bool = False) -> Explanation:
    """A context manager recording why each evaluation in its block happened (trigger and
    the user's line), its cache outcome and compile time, and for a new program structure
    how it differs from the closest cached one. `log=True` also writes each record to the
    `tlaloc.explain` logger."""
    return Explanation(log=log)


_process_explanation = None


def explain_from_environment() -> None:
    """TLALOC_EXPLAIN=1: explain every evaluation of the process on the `tlaloc.explain`
    logger (called when tlaloc is imported)."""
    global _process_explanation
    if os.environ.get("TLALOC_EXPLAIN", "").strip().lower() in ("1", "true", "yes", "on") \
            and _process_explanation is None:
        _process_explanation = Explanation(log=True)
        _process_explanation.records = _Bounded()
        _process_explanation.__enter__()


class _Bounded(list):
    """The process-wide explanation keeps only its last records (it logs them all)."""

    def append(self, item):
        super().append(item)
        if len(self) > 1000:
            del self[:500]
