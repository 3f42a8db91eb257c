"""Cold compile time of a mid-sized program (about 100 operations, _workloads.mid_program):
the disk cache is disabled and every sample uses a shape this process has not compiled, so
every sample lowers to StableHLO and compiles with XLA."""
from __future__ import annotations

import itertools

import tlaloc as xp

from ._base import Configured
from ._workloads import block, host_f32, mid_program

_fresh_rows = itertools.count(8)  # a new static shape per sample


class ColdCompile(Configured):
    settings = {"execution": "compiled", "compile_cache_dir": ""}
    number = 1
    repeat = (1, 5, 30.0)
    warmup_time = 0.0

    def setup(self):
        self.configure()
        rows = next(_fresh_rows)
        x = xp.asarray(host_f32((rows, 32), rows))
        block(x + 0)  # the input is on the device before the timed region
        self.result = mid_program(xp, x)  # recorded, not evaluated

    def time_cold_compile(self):
        """Lowering + XLA compile + one (tiny) run."""
        block(self.result)

    def track_compile_seconds(self):
        """Seconds tlaloc's cache statistics attribute to lowering and compiling it."""
        before = xp.cache_info()["compile_seconds"]
        block(self.result)
        return xp.cache_info()["compile_seconds"] - before

    track_compile_seconds.unit = "seconds"
