"""The one-shot workload: 100 different small computations (_workloads.one_shot_program),
each run once in the default tiered mode ("auto"), from NumPy inputs to a Python float.
Every sample uses shapes the process has never seen, so nothing comes from a cache."""
from __future__ import annotations

import itertools

import tlaloc as xp

from ._base import Configured
from ._workloads import ONE_SHOT_PROGRAMS, one_shot_inputs, one_shot_program, one_shot_steps

_fresh_rep = itertools.count(1)


class OneShot(Configured):
    """`scale` multiplies the arrays' rows: ~1,000, ~8,000 and ~64,000 elements on average."""
    settings = {"execution": "auto"}
    params = [1, 8, 64]
    param_names = ["scale"]
    number = 1
    repeat = (1, 10, 20.0)
    warmup_time = 0.0

    def setup(self, scale):
        self.configure()
        xp.wait_for_compiles()
        rep = next(_fresh_rep)
        self.work = [(one_shot_steps(k), *one_shot_inputs(k, rep, scale))
                     for k in range(ONE_SHOT_PROGRAMS)]
        # First-use costs (the PJRT client, first code paths) are not one-shot costs: run two
        # programs with shapes of their own first.
        for k in range(ONE_SHOT_PROGRAMS, ONE_SHOT_PROGRAMS + 2):
            steps, (a, b) = one_shot_steps(k), one_shot_inputs(k, rep, scale)
            float(one_shot_program(xp, steps, xp.asarray(a), xp.asarray(b)))

    def time_one_shot_100(self, scale):
        for steps, a, b in self.work:
            float(one_shot_program(xp, steps, xp.asarray(a), xp.asarray(b)))
