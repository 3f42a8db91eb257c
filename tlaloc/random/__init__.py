"""tlaloc.random: counter-based random numbers, the same bits on every backend and tier.

    import tlaloc as xp
    key = xp.random.key(0)
    k1, k2 = xp.random.split(key)
    x = xp.random.normal(k1, (3, 4), dtype=xp.float32)   # jax.random.normal's values
    rng = xp.random.Generator(0)                          # NumPy-style, a key that advances
    y = rng.uniform(0, 1, shape=(5,))

The generator is Threefry-2x32 with 20 rounds (jax's default, partitionable form), written
with uint32 primitives: it lowers everywhere, the interpreter computes the same bits, and a
key's numbers do not depend on how the output is split across devices. A key is an ordinary
uint32 array of shape (2,): it flows through `jit` (new keys never recompile), `grad` (no
derivative), and `export`. See docs/random.md.
"""
from ._core import bits, fold_in, key, split
from ._distributions import (bernoulli, beta, categorical, choice, dirichlet, exponential,
                             gamma, gumbel, integers, laplace, multivariate_normal, normal,
                             permutation, poisson, truncated_normal, uniform)
from ._generator import Generator

__all__ = ["key", "split", "fold_in", "bits", "uniform", "normal", "integers", "bernoulli",
           "categorical", "permutation", "choice", "truncated_normal", "exponential", "gamma",
           "beta", "dirichlet", "multivariate_normal", "gumbel", "laplace", "poisson",
           "Generator"]
