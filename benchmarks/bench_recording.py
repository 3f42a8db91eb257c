"""Recording cost: what a namespace call costs when nothing is evaluated (shape and dtype
inference, promotion, the graph node). Each timed call records 100 operations, so the
reported time divided by 100 is the cost of one."""
from __future__ import annotations

import tlaloc as xp

from ._workloads import cached_host_f32, record_chain

OPS_PER_CALL = 100


class RecordOp:
    """100 independent operations of one kind on an array that holds a value."""

    params = ["add", "add_scalar", "multiply", "sin", "sum_axis", "matmul", "reshape", "getitem"]
    param_names = ["op"]

    def setup(self, op):
        self.x = xp.asarray(cached_host_f32((16, 16), 1))
        self.w = xp.asarray(cached_host_f32((16, 16), 2))
        x, w = self.x, self.w
        self.fn = {
            "add": lambda: x + w,
            "add_scalar": lambda: x + 1.5,
            "multiply": lambda: x * w,
            "sin": lambda: xp.sin(x),
            "sum_axis": lambda: xp.sum(x, axis=1),
            "matmul": lambda: x @ w,
            "reshape": lambda: xp.reshape(x, (256,)),
            "getitem": lambda: x[2:10, ::2],
        }[op]
        self.fn()  # first-use costs are not recording costs

    def time_record_100(self, op):
        fn = self.fn
        for _ in range(OPS_PER_CALL):
            fn()


class RecordChain:
    """A chain of 100 dependent operations (array add, scalar multiply, sin, array
    multiply), recorded and never evaluated (100 < the pending-depth bound)."""

    def setup(self):
        self.x = xp.asarray(cached_host_f32((4,), 1))
        self.w = xp.asarray(cached_host_f32((4,), 2))
        record_chain(xp, self.x, self.w, OPS_PER_CALL)

    def time_record_chain_100(self):
        record_chain(xp, self.x, self.w, OPS_PER_CALL)

    def peakmem_record_chain_100(self):
        record_chain(xp, self.x, self.w, OPS_PER_CALL)
