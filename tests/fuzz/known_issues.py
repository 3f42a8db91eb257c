"""Failures the fuzzer finds that are known and being fixed elsewhere: a small, temporary
list, each entry with its reason, to be removed when its fix lands. A failure one of them
matches is counted (the summary prints how many) but does not fail the run.

Each predicate sees the program (its op names, its source) and the failure (kind, mode,
detail); keep them narrow so that they explain only the bug they name."""
from __future__ import annotations

import dataclasses
from typing import Callable


@dataclasses.dataclass(frozen=True)
class KnownIssue:
    name: str
    reason: str
    matches: Callable


KNOWN_ISSUES: list[KnownIssue] = [
]


def match_known(program, failure):
    """The name of the first entry that explains `failure`, or None."""
    for issue in KNOWN_ISSUES:
        if issue.matches(program, failure):
            return issue.name
    return None
