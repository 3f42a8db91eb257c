"""Generator: NumPy-style stateful draws over the functional API.

Each draw splits the generator's key (`key, sub = split(key)`), draws with `sub` and keeps
`key`. The key lives in a `tlaloc._state.State`, so under `tlaloc.jit` it is an input of
the compiled program and its next value an output: a jitted step that draws compiles once
and gives new numbers every call.
"""
from __future__ import annotations

import functools
import inspect
import secrets

from .._array import Array
from .._state import State
from . import _core, _distributions
from ._core import key_words
from .._prims import lax


def _row(pair, i):
    """Row i of a (2, 2) node, shape (2,)."""
    s = lax.slice(pair, start=(i, 0), limit=(i + 1, 2), strides=(1, 1))
    return lax.reshape(s, shape=(2,))


class Generator:
    """Random draws from a key that advances: `rng = Generator(seed)` (an int in
    [0, 2**64), a key array, or None for a seed from the operating system), then
    `rng.normal((3, 4))`, `rng.integers(0, 10, shape=5)`, ... with the functions' arguments
    less the key. `Generator(seed).normal(...)` equals `normal(split(key(seed))[1], ...)`."""

    __slots__ = ("_state",)

    def __init__(self, seed=None, *, device=None):
        if seed is None:
            seed = secrets.randbits(64)
        if isinstance(seed, Array) and seed.ndim == 1:
            key_words("Generator", seed, "seed")
            k = seed
        else:
            k = _core.key(seed, device=device)
        self._state = State(k)

    @property
    def key(self) -> Array:
        """The current key (the next draw splits it)."""
        return self._state.get()

    @key.setter
    def key(self, value):
        key_words("Generator.key", value, "value")
        self._state.set(value)

    def next_key(self) -> Array:
        """A fresh key for the functional API (the generator advances)."""
        k = self._state.get()
        pair = _core.cipher(key_words("Generator", k), (2,), "pair")     # split(k)
        nxt, sub = (Array._from_node(_row(pair, i)) for i in (0, 1))
        self._state.set(nxt)
        return sub

    def spawn(self, n: int) -> list:
        """`n` independent generators (their keys split from a fresh key)."""
        ks = _core.split(self.next_key(), n)
        return [Generator(ks[i]) for i in range(n)]

    def random(self, shape=None, dtype=None) -> Array:
        """Floats uniform in [0, 1) (NumPy's Generator.random)."""
        return _distributions.uniform(self.next_key(), 0.0, 1.0, shape, dtype)

    def __repr__(self):
        return f"Generator(key={self._state._value!r})"


def _method(fn):
    @functools.wraps(fn)
    def method(self, *args, **kwargs):
        return fn(self.next_key(), *args, **kwargs)
    sig = inspect.signature(fn)
    params = list(sig.parameters.values())[1:]
    method.__signature__ = sig.replace(parameters=[
        inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)] + params)
    method.__doc__ = (fn.__doc__ or "") + "\n\n(The generator's key is the key argument.)"
    return method


for _name in ("bits", "uniform", "normal", "integers", "bernoulli", "categorical",
              "permutation", "choice", "truncated_normal", "exponential", "gamma", "beta",
              "dirichlet", "multivariate_normal", "gumbel", "laplace", "poisson"):
    _fn = getattr(_core, _name, None) or getattr(_distributions, _name)
    setattr(Generator, _name, _method(_fn))
del _name, _fn
