"""A differential fuzzer of whole programs (issue 23).

Hypothesis draws random programs over the namespace (programs.py, ops.py): plain records of
operations on numbered values, printed as a runnable Python function. Each program runs in
a worker subprocess (worker.py) on the interpreter device, on the compiled CPU backend and in
the default tiered mode (three runs: interpreted, interpreted while compiling, compiled), and
every result is compared with a NumPy reference that says, per element, what a correct
backend may return (reference.py). A crash, a hang, an exception or a wrong value is a failure
that hypothesis shrinks and reports with the reproduction. derivatives.py does the same for
grad/jvp against central differences.

Budget (read once, here):
  TLALOC_FUZZ_PROFILE   "ci" (default: a bounded number of programs) or "deep"
  TLALOC_FUZZ_PROGRAMS  programs per fuzz test (ci: 40; deep: 2000)
  TLALOC_FUZZ_SECONDS   stop a fuzz test after this long (deep only; default none)
  TLALOC_FUZZ_SEED      the seed (default: a new one per run, printed in the summary)

Run outside pytest: python -m tests.fuzz --programs 1000 --seed 1 (see __main__.py).
"""
from __future__ import annotations

import os
import random
import sys
from pathlib import Path

# the documented tolerances (docs/precision.md) live in tests/helpers.py
_TESTS = str(Path(__file__).resolve().parent.parent)
if _TESTS not in sys.path:
    sys.path.append(_TESTS)
from helpers import TOLERANCE  # noqa: E402

PROFILE = os.environ.get("TLALOC_FUZZ_PROFILE", "ci")
if PROFILE not in ("ci", "deep"):
    raise ValueError(f"TLALOC_FUZZ_PROFILE must be 'ci' or 'deep', got {PROFILE!r}")
PROGRAMS = int(os.environ.get("TLALOC_FUZZ_PROGRAMS", 2000 if PROFILE == "deep" else 40))
DERIVATIVE_PROGRAMS = int(os.environ.get("TLALOC_FUZZ_PROGRAMS", 1000 if PROFILE == "deep" else 20))
_SECONDS = os.environ.get("TLALOC_FUZZ_SECONDS")
SECONDS = float(_SECONDS) if _SECONDS else None
SEED = int(os.environ.get("TLALOC_FUZZ_SEED") or random.SystemRandom().randrange(2 ** 32))

__all__ = ["TOLERANCE", "PROFILE", "PROGRAMS", "DERIVATIVE_PROGRAMS", "SECONDS", "SEED"]
