"""Configuration helpers of the asv benchmarks (no benchmarks here)."""
from __future__ import annotations

import tlaloc as xp


class Configured:
    """Applies `settings` (tlaloc.config) in `configure()` and restores them in teardown.
    asv re-runs setup and teardown around every timed sample."""

    settings: dict = {"execution": "compiled"}

    def configure(self):
        self._previous = xp.config.update(**self.settings)

    def teardown(self, *params):
        previous = getattr(self, "_previous", None)
        if previous:
            xp.config.update(**previous)
            self._previous = None
