"""The fuzz tests' worker process (one per session, reaped at the end) and their summary:
the seed (replay with TLALOC_FUZZ_SEED) and what ran."""
import pytest

from . import PROFILE, SEED
from .runner import Stats
from .worker import Worker

_STATS = {"programs": Stats(), "derivatives": Stats()}


@pytest.fixture(scope="session")
def worker():
    with Worker() as w:
        yield w


@pytest.fixture(scope="session")
def fuzz_stats():
    return _STATS


def pytest_terminal_summary(terminalreporter):
    ran = {name: s for name, s in _STATS.items() if s.programs}
    if not ran:
        return
    terminalreporter.section(f"tlaloc fuzz (profile {PROFILE}, TLALOC_FUZZ_SEED={SEED})")
    for name, s in ran.items():
        terminalreporter.write_line(f"[{name}] " + s.report().replace("\n", f"\n[{name}] "))
