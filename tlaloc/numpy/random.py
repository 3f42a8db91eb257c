"""tlaloc.numpy.random: NumPy's `default_rng` / `Generator` signatures (`size=`, `loc`,
`scale`, `low`, `high`, `endpoint`) over tlaloc.random's Generator.

NumPy's legacy functions on a hidden global state (`np.random.seed`, `rand`, `randn`, ...)
are left out on purpose: a global key cannot advance inside `tlaloc.jit` or `grad` traces,
and explicit generators are what NumPy itself recommends."""
from __future__ import annotations

import tlaloc as _xp
from tlaloc import random as _random


def default_rng(seed=None):
    """NumPy's `np.random.default_rng(seed)`: a Generator (an int seed, a key array, or None
    for a seed from the operating system)."""
    if isinstance(seed, Generator):
        return seed
    return Generator(seed)


def _shape(size):
    """NumPy's size= as tlaloc.random's shape= (None: the parameters' broadcast shape)."""
    if size is None:
        return None
    return (size,) if isinstance(size, int) else tuple(size)


class Generator:
    """NumPy's Generator methods over a tlaloc.random.Generator (`.tlaloc`). The draws are
    tlaloc.random's (counter-based Threefry), not NumPy's PCG64 stream: the same seed gives
    other numbers than NumPy, the same ones on every tlaloc backend."""

    __slots__ = ("tlaloc",)

    def __init__(self, seed=None):
        self.tlaloc = _random.Generator(seed)

    def random(self, size=None, dtype=None):
        """Floats uniform in [0, 1)."""
        return self.tlaloc.random(_shape(size) or (), dtype)

    def uniform(self, low=0.0, high=1.0, size=None):
        """Floats uniform in [low, high)."""
        return self.tlaloc.uniform(low, high, _shape(size))

    def normal(self, loc=0.0, scale=1.0, size=None):
        """Normal floats of mean loc and standard deviation scale."""
        return self.tlaloc.normal(_shape(size), loc=loc, scale=scale)

    def standard_normal(self, size=None, dtype=None):
        return self.tlaloc.normal(_shape(size) or (), dtype)

    def integers(self, low, high=None, size=None, dtype=None, endpoint=False):
        """Integers in [low, high) ([low, high] with endpoint=True; [0, low) without high)."""
        if high is None:
            low, high = 0, low
        if endpoint:
            high = high + 1
        return self.tlaloc.integers(low, high, _shape(size), dtype or _xp.int64)

    def exponential(self, scale=1.0, size=None):
        return self.tlaloc.exponential(_shape(size), scale=scale)

    def standard_exponential(self, size=None, dtype=None):
        return self.tlaloc.exponential(_shape(size), dtype)

    def gamma(self, shape, scale=1.0, size=None):
        return self.tlaloc.gamma(shape, _shape(size), scale=scale)

    def beta(self, a, b, size=None):
        return self.tlaloc.beta(a, b, _shape(size))

    def poisson(self, lam=1.0, size=None):
        return self.tlaloc.poisson(lam, _shape(size))

    def laplace(self, loc=0.0, scale=1.0, size=None):
        return self.tlaloc.laplace(_shape(size), loc=loc, scale=scale)

    def gumbel(self, loc=0.0, scale=1.0, size=None):
        return self.tlaloc.gumbel(_shape(size), loc=loc, scale=scale)

    def multivariate_normal(self, mean, cov, size=None):
        return self.tlaloc.multivariate_normal(mean, cov, _shape(size))

    def choice(self, a, size=None, replace=True, p=None, axis=0, shuffle=True):
        return self.tlaloc.choice(a, None if size is None else _shape(size), replace, p, axis)

    def permutation(self, x, axis=0):
        return self.tlaloc.permutation(x, axis)

    def shuffle(self, x, axis=0):
        """Shuffles x along axis (an update of x, as NumPy's in-place shuffle)."""
        x[...] = self.tlaloc.permutation(x, axis)

    def spawn(self, n_children):
        children = []
        for g in self.tlaloc.spawn(n_children):
            child = object.__new__(Generator)
            child.tlaloc = g
            children.append(child)
        return children

    def __repr__(self):
        return f"tlaloc.numpy.random.Generator({self.tlaloc!r})"
