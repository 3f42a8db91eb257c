"""The tier policy, loops that write into arrays, and start-up (issue 20, parts 2-4).

  * StencilLoop: the 200x200 heat-equation stencil, 500 steps of `u[1:-1, 1:-1] = ...`,
    from NumPy data to a NumPy result: in the default mode from a cold start of the loop
    (what a script's first run costs) and compiled with its programs cached;
  * Repeated: the one-shot workload's 100 small computations, each repeated 1, 2, 5 or 50
    times, with shapes the process has never seen (the tier policy decides every compile);
  * StartUp: `import tlaloc` and `import numpy` in fresh processes.

benchmarks/compare_tiers.py runs the same workloads beside NumPy in one process and prints
ratios (docs/benchmarks.md).
"""
from __future__ import annotations

import itertools
import os
import subprocess
import sys

import numpy as np

import tlaloc as xp

from ._base import Configured
from ._workloads import (ONE_SHOT_PROGRAMS, one_shot_inputs, one_shot_program, one_shot_steps,
                         stencil_grid, stencil_loop)

_fresh_rep = itertools.count(10_000)


class StencilLoop(Configured):
    params = ["auto", "compiled"]
    param_names = ["execution"]
    number = 1
    repeat = (1, 5, 30.0)
    warmup_time = 0.0

    def setup(self, execution):
        self.settings = {"execution": execution}
        self.configure()
        self.grid = stencil_grid()
        if execution == "compiled":   # steady state: the loop's programs are compiled
            np.asarray(stencil_loop(xp.asarray(self.grid)))

    def time_stencil_500_steps(self, execution):
        np.asarray(stencil_loop(xp.asarray(self.grid)))


class Repeated(Configured):
    settings = {"execution": "auto"}
    params = [1, 2, 5, 50]
    param_names = ["repetitions"]
    number = 1
    repeat = (1, 5, 60.0)
    warmup_time = 0.0

    def setup(self, repetitions):
        self.configure()
        xp.wait_for_compiles()
        rep = next(_fresh_rep)
        self.work = [(one_shot_steps(k), *one_shot_inputs(k, rep))
                     for k in range(ONE_SHOT_PROGRAMS)]

    def time_100_computations_repeated(self, repetitions):
        for _ in range(repetitions):
            for steps, a, b in self.work:
                float(one_shot_program(xp, steps, xp.asarray(a), xp.asarray(b)))


# with bytecode caches, as on a user's machine (PYTHONDONTWRITEBYTECODE would compile every
# tlaloc module from source at each start)
_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _fresh_process(statement):
    subprocess.run([sys.executable, "-c", statement], check=True, env=_ENV)


class StartUp:
    number = 1
    repeat = (3, 20, 20.0)
    warmup_time = 0.0

    def time_import_tlaloc(self):
        _fresh_process("import tlaloc")

    def time_import_numpy(self):
        _fresh_process("import numpy")

    def time_import_tlaloc_and_first_evaluation(self):
        _fresh_process("import tlaloc as xp; float(xp.sum(xp.sin(xp.asarray([1.0, 2.0]))))")
