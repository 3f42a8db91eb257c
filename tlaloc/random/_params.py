"""Arguments of the samplers: shapes (tuples, or dicts of axis names to sizes), parameters
(Python scalars or arrays, broadcast to the result), dtypes, and the named result."""
from __future__ import annotations

import builtins
import numbers
import operator

import numpy as np

from .. import _dtypes as dt
from .._array import Array
from .._api._core import (broadcast_shapes, broadcast_to_shape, cast, check_size, renamed,
                          scalar_node)
from .._devices import default_device

FLOATS = (dt.float16, dt.bfloat16, dt.float32, dt.float64)


def parse_shape(name, shape):
    """(sizes or None, names or None) of a `shape` argument: None, an int, a tuple of ints,
    or a dict of axis names to sizes (a named result)."""
    if shape is None:
        return None, None
    names = None
    if isinstance(shape, dict):
        names = tuple(shape)
        for n in names:
            if not isinstance(n, str):
                raise TypeError(f"{name}: the keys of a shape dict are axis names (str), got {n!r}")
        sizes = tuple(shape.values())
    elif isinstance(shape, (builtins.int, np.integer)) and not isinstance(shape, (builtins.bool, np.bool_)):
        sizes = (shape,)
    else:
        try:
            sizes = tuple(shape)
        except TypeError:
            raise TypeError(f"{name}: shape must be a tuple of ints or a dict of axis names to "
                            f"sizes, got {type(shape).__name__}") from None
    out = []
    for s in sizes:
        if isinstance(s, (builtins.bool, np.bool_)):
            raise TypeError(f"{name}: shape entries must be ints, got {shape!r}")
        try:
            s = operator.index(s)
        except TypeError:
            raise TypeError(f"{name}: shape entries must be ints, got {shape!r}") from None
        if s < 0:
            raise ValueError(f"{name}: shape entries must be non-negative, got {shape!r}")
        out.append(s)
    # the draw is known to be too large here, not when it is computed (8 bytes an element:
    # the widest a sampler gives, and the counters' width)
    check_size(name, out, dt.float64, default_device())
    return tuple(out), names


def finish(node, names=None, param_names=()):
    """The result Array, named by a shape dict or, without one, by the parameters' names."""
    out = Array._from_node(node)
    if names is None and param_names:
        from ..named import unify
        names = unify("tlaloc.random", *param_names)
        if len(names) != len(node.aval.shape):
            names = (None,) * (len(node.aval.shape) - len(names)) + tuple(names)
    if names is not None and any(n is not None for n in names):
        if len(names) != len(node.aval.shape):    # a shape dict names the batch axes only
            names = tuple(names) + (None,) * (len(node.aval.shape) - len(names))
        out = Array._from_node(renamed(node, tuple(names)))
    return out


def float_dtype(name, dtype, *params):
    """The result dtype: `dtype`, or the widest floating dtype among array parameters, or
    the default real floating dtype."""
    if dtype is None:
        found = [a.dtype for a in params if isinstance(a, Array) and a.dtype.kind == "f"]
        if not found:
            return dt.DEFAULTS.real_floating
        d = found[0]
        for f in found[1:]:
            d = dt.promote(d, f)
        return d
    d = dt.canonicalize(dtype, name)
    if d not in FLOATS:
        raise TypeError(f"{name}: dtype must be a real floating dtype (float16, bfloat16, "
                        f"float32, float64), got {d}")
    return d


def is_number(x):
    return isinstance(x, numbers.Real) and not isinstance(x, (builtins.bool, np.bool_))


class Params:
    """The parameters of one call, as nodes of one dtype, broadcast to the result's shape.

    `Params(name, device, dtype, minval=..., maxval=...)` keeps Python numbers as numbers
    (`static(name)` gives them; `node(name)` gives a 0-d program input) and arrays as nodes.
    """

    def __init__(self, fname, device, **values):
        self.fname = fname
        self.device = device
        self.values = {}
        self.shapes = []
        self.names = []
        for k, v in values.items():
            if isinstance(v, Array):
                if v.device != device:
                    raise ValueError(f"{fname}: {k} is on {v.device}, the key on {device}; "
                                     "move one with to_device")
                if v.dtype.kind not in dt.REAL_KINDS:
                    raise TypeError(f"{fname}: {k} must be a real array, got dtype {v.dtype}")
                self.shapes.append(v.shape)
                if v._names is not None:
                    self.names.append(v._names)
            elif is_number(v):
                v = v.item() if isinstance(v, np.generic) else v
            elif isinstance(v, np.ndarray):
                from .._api.creation import asarray
                v = asarray(np.asarray(v), device=device)
                if v.dtype.kind not in dt.REAL_KINDS:
                    raise TypeError(f"{fname}: {k} must be real numbers, got dtype {v.dtype}")
                self.shapes.append(v.shape)
            else:
                raise TypeError(f"{fname}: {k} must be a number or a tlaloc array, got "
                                f"{type(v).__name__}")
            self.values[k] = v

    def is_static(self, k):
        return not isinstance(self.values[k], Array)

    def static(self, k):
        return self.values[k]

    def shape(self, shape):
        """The result's shape: `shape`, which the parameters broadcast to, or (None) the
        parameters' broadcast shape."""
        pshape = broadcast_shapes(*self.shapes, name=self.fname) if self.shapes else ()
        if shape is None:
            return pshape
        if broadcast_shapes(pshape, shape, name=self.fname) != tuple(shape):
            raise ValueError(f"{self.fname}: parameters of shape {pshape} do not broadcast to "
                             f"the requested shape {tuple(shape)}")
        return tuple(shape)

    def node(self, k, dtype, shape):
        """Parameter `k` as a node of `dtype`: 0-d for a Python number (a program input, so
        the program does not depend on the value), else broadcast to `shape`."""
        v = self.values[k]
        if isinstance(v, Array):
            return broadcast_to_shape(cast(v._node, dtype), tuple(shape))
        if dtype.kind in dt.INTEGER_KINDS:
            return scalar_node(builtins.int(v), dtype, self.device)
        return scalar_node(builtins.float(v), dtype, self.device)
