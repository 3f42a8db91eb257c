"""The primitive: one declaration that carries all the rules of one operation.

A primitive has
  * `infer(*avals, **params) -> Aval`: the result's shape and dtype (raises on misuse);
  * `emit(ctx, *operands, **params) -> str`: StableHLO text through a lowering context,
    returning the SSA name of the result;
  * `impl(*arrays, **params) -> ndarray`: NumPy with StableHLO semantics (the interpreter),
    called under `np.errstate(all="ignore")` (inf and nan are values, not warnings);
  * `jvp` / `vjp`: derivative rules written in primitives (see _prims/ad.py);
  * `source`: how the operation reads as Python with the namespace (tlaloc.grad_source):
    a format string over the operands ("{0} + {1}", "xp.exp({0})") or a function
    `source(ctx, *operands, **params) -> str`; None falls back to `xp.primitive(...)`.
"""
from __future__ import annotations

import numpy as np

from .._graph import Aval

REGISTRY: dict = {}


class Primitive:
    __slots__ = ("name", "infer", "emit", "impl", "jvp", "vjp", "source", "elementwise",
                 "__weakref__")

    def __init__(self, name, *, infer, emit, impl, jvp=None, vjp=None, source=None,
                 elementwise=False):
        if name in REGISTRY:
            raise ValueError(f"primitive {name!r} declared twice")
        self.name = name
        self.infer = infer
        self.emit = emit
        self.impl = impl
        self.jvp = jvp
        self.vjp = vjp
        self.source = source
        # Elementwise primitives take 0-d operands beside full ones (a Python scalar's value
        # at every element): the lowering broadcasts them, NumPy broadcasts them itself.
        self.elementwise = elementwise
        REGISTRY[name] = self

    def __repr__(self):
        return f"<primitive {self.name}>"

    def __reduce__(self):
        return (REGISTRY.__getitem__, (self.name,))


def declare(name, *, infer, emit, impl, jvp=None, vjp=None, source=None,
            elementwise=False) -> Primitive:
    return Primitive(name, infer=infer, emit=emit, impl=impl, jvp=jvp, vjp=vjp, source=source,
                     elementwise=elementwise)


def common_shape(*avals) -> tuple:
    """The shape of an elementwise operation's result: its operands' shape, where 0-d
    operands stand for their value at every element."""
    shape = ()
    for a in avals:
        if a.shape != shape and a.shape:
            if shape:
                raise TypeError(f"internal: elementwise operand shapes differ: {avals}")
            shape = a.shape
    return shape


def same_as_input(x, *rest, **params):
    """The infer rule of elementwise primitives whose operands share one dtype (and one
    shape, or are 0-d)."""
    out = x
    for r in rest:
        if r.dtype is not x.dtype:
            raise TypeError(f"internal: elementwise operands differ: {x} vs {r}")
        if r.shape != out.shape:
            if not out.shape:
                out = r
            elif r.shape:
                raise TypeError(f"internal: elementwise operands differ: {x} vs {r}")
    return out


def kinds_check(name, kinds):
    """An infer rule: operands share an aval whose dtype kind is in `kinds`."""
    def infer(x, *rest, **params):
        if x.dtype.kind not in kinds:
            raise TypeError(f"{name}: unsupported dtype {x.dtype}")
        return same_as_input(x, *rest)
    return infer


def aval(shape, dtype) -> Aval:
    return Aval(tuple(shape), dtype)
