"""The primitive: one declaration that carries all the rules of one operation.

A primitive has
  * `infer(*avals, **params) -> Aval`: the result's shape and dtype (raises on misuse);
  * `names(out, *avals, **params) -> tuple | None`: the result's axis names (one str or None
    per axis of `out`, the inferred aval) from the operands' avals. `bind` calls it only when
    some operand is named. The default by kind: elementwise primitives unify their operands'
    names (`unify_names`); others keep operand 0's names when the result has its shape
    (`same_if_shape`), else name nothing. The vocabulary below covers the other shapes of
    rule (`first_names`, `no_names`, `reduced_names`, `batch_names`);
  * `emit(ctx, *operands, **params) -> str`: StableHLO text through a lowering context,
    returning the SSA name of the result;
  * `impl(*arrays, **params) -> ndarray`: NumPy with StableHLO semantics (the interpreter),
    called under `np.errstate(all="ignore")` (inf and nan are values, not warnings);
  * `impl_into(out, *arrays, **params) -> out` (optional, with `into_operands`): `impl`
    writing its result into `out`, which is one of `arrays` (at one of the positions
    `into_operands`, None: any), has the result's shape and dtype, and is the interpreter's
    to overwrite (no other value refers to its memory). Elementwise primitives whose
    `impl` is a NumPy ufunc get it by default (the ufunc's `out=`), so the interpreter,
    like NumPy's own temporary elision, reuses a dying intermediate's buffer;
  * `jvp` / `vjp`: derivative rules written in primitives (see _prims/ad.py);
  * `formula` (with `formula_kinds`, default "c"): the primitive's special-case numerics
    written in primitives, used by both `emit` and `impl` for operands of those dtype kinds
    (see _prims/formula.py); the plain rules stay as `op_emit`/`op_impl`;
  * `source`: how the operation reads as Python with the namespace (tlaloc.grad_source):
    a format string over the operands ("{0} + {1}", "xp.exp({0})") or a function
    `source(ctx, *operands, **params) -> str`; None falls back to `xp.primitive(...)`;
  * `batch(bdims, *operands, **params) -> (node, bdim)`: the batching rule (tlaloc.vmap).
    `bdims` (passed by position) has one entry per operand: the operand's mapped axis (an
    int in 0..ndim-1; every mapped operand has the same size there), or None for an operand
    that is the same for every example (passed unchanged). At least one entry is an int. The rule records
    the batched operation with `_prims/lax.py` (and the helpers of `_prims/batching.py`)
    and returns the result node and its mapped axis (an int, or None when the result does
    not vary along the mapped axis). A primitive without operands needs no rule; vmap
    raises NotImplementedError naming a primitive that has none.
  * `padding(lengths, *operands, **params) -> node`: how the primitive treats padding along
    a dynamic axis (tlaloc.jit(f, dynamic=...), see _prims/padding.py). An axis is padded
    when its name is one of the dynamic names: its first `length` positions hold the data,
    the rest hold values nothing may depend on. `lengths` (passed by position) has one
    entry per operand: None for an operand without padded axes, else a tuple with one entry
    per axis: the true length (a 0-d int32 node) or None. The rule records the operation so
    that the result's data positions equal the unpadded computation's and returns the
    result node (whose padded axes are again those with dynamic names). A rule that cannot
    honour padding raises PaddingError naming the primitive and the axis (`padding.cannot`).
    A primitive without operands needs no rule; a dynamic trace raises NotImplementedError
    naming a primitive with padded operands and no rule.
"""
from __future__ import annotations

import numpy as np

from .._graph import Aval, new_aval
from . import formula as _formula

REGISTRY: dict = {}


class Primitive:
    __slots__ = ("name", "infer", "emit", "impl", "jvp", "vjp", "source", "elementwise",
                 "names", "formula", "formula_kinds", "formula_cache", "op_emit", "op_impl",
                 "batch", "padding", "impl_into", "into_operands", "moves_data", "__weakref__")

    def __init__(self, name, *, infer, emit, impl, jvp=None, vjp=None, source=None,
                 elementwise=False, names=None, formula=None, formula_kinds="c", batch=None, padding=None,
                 impl_into=None, into_operands=None, moves_data=False):
        if name in REGISTRY:
            raise ValueError(f"primitive {name!r} declared twice")
        self.name = name
        self.infer = infer
        self.op_emit = emit
        self.op_impl = impl
        self.formula = formula
        self.formula_kinds = formula_kinds
        self.formula_cache = {}
        if formula is None:
            self.emit = emit
            self.impl = impl
        else:
            self.emit = _formula.emit_rule(self)
            self.impl = _formula.impl_rule(self)
        self.jvp = jvp
        self.vjp = vjp
        self.source = source
        self.batch = batch
        self.padding = padding
        # Elementwise primitives take 0-d operands beside full ones (a Python scalar's value
        # at every element): the lowering broadcasts them, NumPy broadcasts them itself.
        self.elementwise = elementwise
        self.names = names or (unify_names if elementwise else same_if_shape)
        if impl_into is None and elementwise and isinstance(self.impl, np.ufunc):
            impl_into = _ufunc_into(self.impl)
        self.impl_into = impl_into
        self.into_operands = into_operands
        # The implementation only moves, copies or makes elements (no arithmetic): run as it
        # is recorded, it needs neither flushed subnormals nor NumPy's error state
        self.moves_data = moves_data
        REGISTRY[name] = self

    def __repr__(self):
        return f"<primitive {self.name}>"

    def __reduce__(self):
        return (REGISTRY.__getitem__, (self.name,))


def _ufunc_into(ufunc):
    def impl_into(out, *arrays):
        return ufunc(*arrays, out=out)
    return impl_into


def declare(name, *, infer, emit, impl, jvp=None, vjp=None, source=None,
            elementwise=False, names=None, formula=None, formula_kinds="c",
            batch=None, padding=None, impl_into=None, into_operands=None,
            moves_data=False) -> Primitive:
    return Primitive(name, infer=infer, emit=emit, impl=impl, jvp=jvp, vjp=vjp, source=source,
                     elementwise=elementwise, names=names, formula=formula,
                     formula_kinds=formula_kinds, batch=batch, padding=padding,
                     impl_into=impl_into, into_operands=into_operands, moves_data=moves_data)


# ----------------------------------------------------------------------------- names rules
#
# A names rule is `rule(out, *avals, **params)`: `out` is the inferred result aval, `avals`
# the operands'. It returns one name or None per axis of `out` (or None: no axis named).
# `bind` checks that the result names no two axes alike.

def names_or_none(a) -> tuple:
    """An aval's names, one per axis (None for each axis of an unnamed aval)."""
    return a.names if a.names is not None else (None,) * len(a.shape)


def unify(where, name_tuples) -> tuple:
    """Names of operands of one rank, axis by axis: None takes the other's name; two
    different names on one axis raise ValueError naming `where` (rules pass None: `bind`
    names the primitive)."""
    out = None
    for t in name_tuples:
        if t is None:
            continue
        if out is None:
            out = list(t)
            continue
        for i, n in enumerate(t):
            if n is not None and out[i] != n:
                if out[i] is not None:
                    raise ValueError(f"{where + ': ' if where else ''}axis names {out[i]!r} and "
                                     f"{n!r} are aligned on the same axis; rename or align_to "
                                     "one of the arrays")
                out[i] = n
    return None if out is None else tuple(out)


def unify_names(out, *avals, **params):
    """Elementwise: the full-shape operands' names, unified (0-d operands carry none)."""
    nd = len(out.shape)
    return unify(None, [a.names for a in avals if len(a.shape) == nd])


def first_names(out, x, *rest, **params):
    """The result has operand 0's axes (sizes may change: slice, pad, sort, fft, ...)."""
    return x.names


def same_if_shape(out, x=None, *rest, **params):
    """The default for non-elementwise primitives: operand 0's names when the result has
    its shape, else no names."""
    if x is not None and x.shape == out.shape:
        return x.names
    return None


def no_names(out, *avals, **params):
    return None


def reduced_names(out, x, *rest, axes, **params):
    """Reductions: the names of the axes not in `axes`."""
    if x.names is None:
        return None
    return tuple(n for i, n in enumerate(x.names) if i not in axes)


def batch_names(out, x, *rest, **params):
    """Matrix functions (linalg): an operand of the result's shape gives every name;
    otherwise the batch axes (all but the last two of operand 0) keep their names, unified
    across operands, and the other result axes get None."""
    for a in (x,) + rest:
        if a.shape == out.shape and a.names is not None:
            return a.names
    k = len(x.shape) - 2
    if k <= 0 or tuple(out.shape[:k]) != tuple(x.shape[:k]):
        return None
    batch = unify(None, [a.names[:k] for a in (x,) + rest
                             if a.names is not None and len(a.shape) == k + 2])
    if batch is None:
        return None
    return batch + (None,) * (len(out.shape) - k)


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


def _common_aval(x, rest: tuple):
    """The result aval of elementwise operands `x, *rest` that share one dtype (and one
    shape, or are 0-d)."""
    out = x
    for r in rest:
        if r == out:        # the common case (one tuple comparison, in C)
            continue
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
    def infer(x, *rest):
        if x.dtype.kind not in kinds:
            raise TypeError(f"{name}: unsupported dtype {x.dtype}")
        return _common_aval(x, rest)
    return infer


def aval(shape, dtype) -> Aval:
    return new_aval(tuple(shape), dtype)
