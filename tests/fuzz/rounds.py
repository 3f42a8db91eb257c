"""The fuzz budget as rounds of hypothesis runs: one round of `programs` examples in the ci
profile; in the deep profile, rounds of a few hundred (each with its own seed, derived from
the run's) until the programs or the seconds asked for are spent."""
from __future__ import annotations

import time

from hypothesis import HealthCheck, Phase, seed, settings

from . import PROFILE, SECONDS

ROUND = 200

FUZZ_SETTINGS = settings(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                           HealthCheck.filter_too_much, HealthCheck.function_scoped_fixture],
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
    report_multiple_bugs=False)


def rounds(run_seed, programs, seconds=SECONDS, profile=PROFILE):
    """(seed, max_examples) per round."""
    if profile != "deep":
        yield run_seed, programs
        return
    start = time.monotonic()
    done, r = 0, 0
    while done < programs and (seconds is None or time.monotonic() - start < seconds):
        n = min(ROUND, programs - done)
        yield (run_seed + r) % 2 ** 32, n
        done += n
        r += 1


def fuzz(check, strategy, run_seed, programs):
    """Run `check(example)` over `programs` examples of `strategy` (shrinking a failure)."""
    from hypothesis import given
    for round_seed, n in rounds(run_seed, programs):
        @seed(round_seed)
        @settings(FUZZ_SETTINGS, max_examples=n)
        @given(strategy)
        def one(example):
            check(example)
        one()
