"""tlaloc.random in config execution "compiled": draws of float32 normals and uniforms and a
permutation, with the key an input of a cached program (setup compiles it). Each timing is
record + dispatch + run + wait; `jitted` variants go through tlaloc.jit. Other samplers are
timed at 1e6 draws. benchmarks/compare_random.py times the same draws beside NumPy's
default_rng() and jax.random in one process."""
from __future__ import annotations

import tlaloc as xp

from ._base import Configured
from ._workloads import block


class NormalUniform(Configured):
    """n float32 standard normals or uniforms in [0, 1) from one key."""

    params = (["normal", "uniform"], [10**4, 10**6, 10**7], ["eager", "jitted"])
    param_names = ["sampler", "n", "mode"]

    def setup(self, sampler, n, mode):
        self.configure()
        self.key = xp.random.key(0)
        if sampler == "normal":
            draw = lambda key: xp.random.normal(key, (n,), dtype=xp.float32)  # noqa: E731
        else:
            draw = lambda key: xp.random.uniform(key, shape=(n,), dtype=xp.float32)  # noqa: E731
        self.fn = xp.jit(draw) if mode == "jitted" else draw
        block(self.key)
        for _ in range(2):
            block(self.fn(self.key))

    def time_draw(self, sampler, n, mode):
        block(self.fn(self.key))


class Permutation(Configured):
    """A random permutation of range(n) (jax's sort rounds: two sorts at 1e6)."""

    params = [10**4, 10**6]
    param_names = ["n"]

    def setup(self, n):
        self.configure()
        self.key = xp.random.key(0)
        self.n = n
        block(xp.random.permutation(self.key, n))

    def time_permutation(self, n):
        block(xp.random.permutation(self.key, self.n))


class Samplers(Configured):
    """1e6 draws of the other samplers (float32 where they take a dtype)."""

    params = ["bits", "integers", "bernoulli", "exponential", "gamma", "beta", "poisson_small",
              "poisson_large", "truncated_normal", "categorical"]
    param_names = ["sampler"]

    def setup(self, sampler):
        self.configure()
        n = 10**6
        r, f32 = xp.random, xp.float32
        self.key = key = r.key(0)
        logits = xp.zeros(10, dtype=f32)
        self.fn = {
            "bits": lambda: r.bits(key, (n,)),
            "integers": lambda: r.integers(key, 0, 1000, (n,)),
            "bernoulli": lambda: r.bernoulli(key, 0.3, (n,)),
            "exponential": lambda: r.exponential(key, (n,), f32),
            "gamma": lambda: r.gamma(key, 2.5, (n,), f32),
            "beta": lambda: r.beta(key, 2.0, 3.0, (n,), f32),
            "poisson_small": lambda: r.poisson(key, 4.0, (n,)),
            "poisson_large": lambda: r.poisson(key, 400.0, (n,)),
            "truncated_normal": lambda: r.truncated_normal(key, -1.0, 2.0, (n,), f32),
            "categorical": lambda: r.categorical(key, logits, shape=(n // 10,)),
        }[sampler]
        block(self.fn())

    def time_sampler(self, sampler):
        block(self.fn())


class GeneratorStep(Configured):
    """A jitted step drawing from a Generator (its key threaded through the program): the
    dispatch cost of stateful draws."""

    def setup(self):
        self.configure()
        rng = xp.random.Generator(0)
        self.x = xp.zeros(256, dtype=xp.float32)
        self.step = xp.jit(lambda x: x + rng.normal(x.shape, dtype=xp.float32))
        for _ in range(3):
            block(self.step(self.x))

    def time_generator_step(self):
        block(self.step(self.x))
