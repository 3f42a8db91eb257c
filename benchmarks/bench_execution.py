"""Steady-state execution in config execution "compiled": every structure here is compiled
during setup (warm-up), so the timings are record + dispatch + run of a cached executable.
Inputs already live on the device. `block` waits for the value (`tlaloc.eval` does)."""
from __future__ import annotations

import functools

import tlaloc as xp

from ._base import Configured
from ._workloads import block, cached_device_array, chain10, small3, small3_arrays


class SmallProgram(Configured):
    """End-to-end latency of a cached 3-op program on 4 float32 elements: record, evaluate,
    wait. "scalar" is sin(x * w + 1.0) (the Python scalar is a program input), "arrays" is
    sin(x * w + w)."""

    params = ["scalar", "arrays"]
    param_names = ["variant"]

    def setup(self, variant):
        self.configure()
        self.x = cached_device_array((4,), 1)
        self.w = cached_device_array((4,), 2)
        self.fn = small3 if variant == "scalar" else small3_arrays
        for _ in range(3):
            block(self.fn(xp, self.x, self.w))

    def time_small_program(self, variant):
        block(self.fn(xp, self.x, self.w))


class SmallJitted(Configured):
    """The same small program through tlaloc.jit: the dispatch cost of a captured call."""

    def setup(self):
        self.configure()
        self.x = cached_device_array((4,), 1)
        self.w = cached_device_array((4,), 2)
        self.fn = xp.jit(functools.partial(small3, xp))
        for _ in range(3):
            block(self.fn(self.x, self.w))

    def time_small_jitted(self):
        block(self.fn(self.x, self.w))


class FusedChain(Configured):
    """A chain of 10 elementwise operations on float32, fused into one program."""

    params = [10**3, 10**4, 10**5, 10**6, 10**7]
    param_names = ["n"]

    def setup(self, n):
        self.configure()
        self.x = cached_device_array((n,), 1)
        block(chain10(xp, self.x))

    def time_chain10(self, n):
        block(chain10(xp, self.x))

    def peakmem_chain10(self, n):
        block(chain10(xp, self.x))


class Reductions(Configured):
    """sum, max and mean of a 2000 x 2000 float32 array over all axes, axis 0 and axis 1."""

    params = (["sum", "max", "mean"], ["all", "0", "1"])
    param_names = ["op", "axis"]

    def setup(self, op, axis):
        self.configure()
        self.x = cached_device_array((2000, 2000), 1)
        self.fn = getattr(xp, op)
        self.axis = None if axis == "all" else int(axis)
        block(self.fn(self.x, axis=self.axis))

    def time_reduce(self, op, axis):
        block(self.fn(self.x, axis=self.axis))


class Matmul(Configured):
    """float32 n x n matrix product."""

    params = [64, 256, 1024, 2048]
    param_names = ["n"]

    def setup(self, n):
        self.configure()
        self.a = cached_device_array((n, n), 1)
        self.b = cached_device_array((n, n), 2)
        block(self.a @ self.b)

    def time_matmul(self, n):
        block(self.a @ self.b)
