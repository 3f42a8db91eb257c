"""Named axes.

An array may carry one name (a str) or None per axis (`x.names`). Names are metadata: they
ride on arrays, are checked and propagated when an operation is recorded, and never change
what is computed. Every standard function keeps its positional meaning; on top of it:

- **elementwise and broadcasting** operations align axes from the right, as broadcasting
  does, and unify their names: None takes the other's name; two different names on one
  axis raise ValueError naming both and the function;
- **reductions** drop the names of reduced axes (kept with keepdims);
- **permute_dims, matrix_transpose, moveaxis** move names with their axes; **indexing**
  drops the names of integer-indexed axes, keeps sliced ones, and gives None to new axes;
  **expand_dims** inserts None, **squeeze** removes; **concat** unifies names (the joined
  axis included), **stack** adds an unnamed axis; **matmul, tensordot, vecdot** keep the
  names of free axes and require contracted axes' names to agree; **reshape** keeps the
  names of leading and trailing axes that survive unchanged;
- functions that keep an array's shape along an axis (sort, cumulative_sum, flip, roll,
  diff, fft, ...) keep its names; linalg functions keep batch axes' names;
- **`axis=` accepts a name or a tuple of names** wherever an axis is expected, and
  `permute_dims` accepts names.

Name-based operations: `rename`, `align_to`, `broadcast` (by name), `contract` (a
contraction over named axes, like einsum with names instead of letters). Annotations:
`Array[Named["batch", "feature"], float32]` checked at call time by `@typechecked`.
"""
from __future__ import annotations

import builtins
import functools
import inspect
import typing

from . import _dtypes as dt
from ._array import Array
from ._graph import bind


# ----------------------------------------------------------------------------- basics

def names_of(x) -> tuple:
    return x._names if x._names is not None else (None,) * x.ndim


def _with_names(x, names):
    """`x` carrying `names` (a new Array object; the value is shared)."""
    names = tuple(names)
    if all(n is None for n in names):
        names = None
    if names == x._names:
        return x
    out = Array._from_node(x._node)
    out._names = names
    return out


def _check_name(name, where):
    if name is not None and not isinstance(name, str):
        raise TypeError(f"{where}: axis names must be str or None, got {name!r}")


def _validate(names, ndim, where):
    if len(names) != ndim:
        raise ValueError(f"{where}: {len(names)} names for an array of {ndim} dimension(s)")
    seen = set()
    for n in names:
        _check_name(n, where)
        if n is not None:
            if n in seen:
                raise ValueError(f"{where}: axis name {n!r} is used twice")
            seen.add(n)
    return tuple(names)


def rename(x, *names, **mapping):
    """rename(x, "batch", None) sets every axis's name; rename(x, batch="b") renames."""
    if not isinstance(x, Array):
        raise TypeError(f"rename: expected a tlaloc array, got {type(x).__name__}")
    if names and mapping:
        raise TypeError("rename: give either all names or a mapping old=new, not both")
    if len(names) == 1 and isinstance(names[0], (tuple, list)):
        names = tuple(names[0])
    if mapping:
        current = names_of(x)
        for old in mapping:
            if old not in current:
                raise ValueError(f"rename: the array has no axis named {old!r} (names {current})")
        names = tuple(mapping.get(n, n) if n is not None else None for n in current)
    return _with_names(x, _validate(names, x.ndim, "rename"))


def unify(where, *name_tuples):
    """Right-aligned names of broadcast operands, unified; ValueError on a clash."""
    ndim = max((len(t) for t in name_tuples), default=0)
    out = [None] * ndim
    for t in name_tuples:
        for i, n in enumerate(t, ndim - len(t)):
            if n is None:
                continue
            if out[i] is None:
                out[i] = n
            elif out[i] != n:
                raise ValueError(f"{where}: axis names {out[i]!r} and {n!r} are aligned on the "
                                 f"same axis; rename or align_to one of the arrays")
    named = [n for n in out if n is not None]
    if len(named) != len(set(named)):
        raise ValueError(f"{where}: the result would name two axes {named}; align the arrays "
                         "by name with align_to first")
    return tuple(out)


def resolve_axis(where, x, axis):
    """Positional axes for `axis` given as ints and/or names of x's axes."""
    if isinstance(axis, str):
        current = names_of(x)
        if axis not in current:
            raise ValueError(f"{where}: the array has no axis named {axis!r} (names {current})")
        return current.index(axis)
    if isinstance(axis, (tuple, list)):
        return type(axis)(resolve_axis(where, x, a) for a in axis)
    return axis


# ----------------------------------------------------------------------------- propagation rules

def _arrays_in(args):
    for a in args:
        if isinstance(a, Array):
            yield a
        elif isinstance(a, (list, tuple)):
            for b in a:
                if isinstance(b, Array):
                    yield b


def _has_names(args, kwargs):
    """Whether names are involved in a call (runs on every call: kept cheap)."""
    for a in args:
        if isinstance(a, Array):
            if a._names is not None:
                return True
        elif isinstance(a, (list, tuple)):
            for b in a:
                if isinstance(b, Array) and b._names is not None:
                    return True
    if kwargs:
        for v in kwargs.values():
            if isinstance(v, Array) and v._names is not None:
                return True
        axis = kwargs.get("axis", kwargs.get("axes"))
        if isinstance(axis, str) or (isinstance(axis, (tuple, list))
                                     and builtins.any(isinstance(a, str) for a in axis)):
            return True
    return False


def _first_array(args):
    return next(_arrays_in(args))


def _resolve_axis_kw(where, args, kwargs, positional_index=None):
    """Replace names in the axis argument (keyword or positional) with positions."""
    x = _first_array(args)
    if "axis" in kwargs:
        kwargs["axis"] = resolve_axis(where, x, kwargs["axis"])
        return args, kwargs, kwargs["axis"]
    if positional_index is not None and len(args) > positional_index:
        args = list(args)
        args[positional_index] = resolve_axis(where, x, args[positional_index])
        return tuple(args), kwargs, args[positional_index]
    return args, kwargs, None


def _apply(result, fn):
    """Apply fn to every Array in a result (an array, tuple, list or named tuple)."""
    if isinstance(result, Array):
        return fn(result)
    if isinstance(result, tuple) and hasattr(result, "_fields"):
        return type(result)(*[_apply(r, fn) for r in result])
    if isinstance(result, (tuple, list)):
        return type(result)(_apply(r, fn) for r in result)
    return result


def elementwise(name, fn):
    def rule(*args, **kwargs):
        arrays = list(_arrays_in(args)) + [v for v in kwargs.values() if isinstance(v, Array)]
        names = unify(name, *[names_of(a) for a in arrays])
        return _apply(fn(*args, **kwargs), lambda r: _with_names(r, names[len(names) - r.ndim:]))
    return rule


def reduction(name, fn, axis_position=None):
    def rule(*args, **kwargs):
        args, kwargs, axis = _resolve_axis_kw(name, args, kwargs, axis_position)
        x = _first_array(args)
        names = names_of(x)
        if axis is None:
            reduced = set(range(x.ndim))
        else:
            axes = axis if isinstance(axis, (tuple, list)) else (axis,)
            reduced = {a % x.ndim for a in axes} if x.ndim else set()
        out = fn(*args, **kwargs)
        if kwargs.get("keepdims"):
            kept = names
        else:
            kept = tuple(n for i, n in enumerate(names) if i not in reduced)
        return _apply(out, lambda r: _with_names(r, kept) if r.ndim == len(kept) else r)
    return rule


def same_shape(name, fn, axis_position=None):
    """Functions whose result keeps the input's axes (sizes may change along one)."""
    def rule(*args, **kwargs):
        args, kwargs, _ = _resolve_axis_kw(name, args, kwargs, axis_position)
        names = names_of(_first_array(args))
        return _apply(fn(*args, **kwargs), lambda r: _with_names(r, names) if r.ndim == len(names) else r)
    return rule


def batch_preserving(name, fn):
    """linalg-style functions: leading (batch) axes keep their names, the rest are None,
    except that results of the input's own shape keep every name."""
    def rule(*args, **kwargs):
        x = _first_array(args)
        names = names_of(x)

        def name_result(r):
            if r.shape == x.shape:
                return _with_names(r, names)
            k = 0
            while k < min(r.ndim, x.ndim - 1) and r.shape[k] == x.shape[k]:
                k += 1
            return _with_names(r, names[:k] + (None,) * (r.ndim - k))
        return _apply(fn(*args, **kwargs), name_result)
    return rule


def permute_dims_rule(fn):
    def rule(x, /, axes):
        axes = tuple(resolve_axis("permute_dims", x, a) for a in axes)
        names = names_of(x)
        return _with_names(fn(x, axes), [names[a % x.ndim] for a in axes])
    return rule


def matrix_transpose_rule(fn):
    def rule(x, /):
        names = names_of(x)
        return _with_names(fn(x), names[:-2] + (names[-1], names[-2]))
    return rule


def moveaxis_rule(fn):
    def rule(x, source, destination, /):
        source = resolve_axis("moveaxis", x, source)
        destination = resolve_axis("moveaxis", x, destination)
        src = source if isinstance(source, tuple) else (source,)
        dst = destination if isinstance(destination, tuple) else (destination,)
        src = [s % x.ndim for s in src]
        dst = [d % x.ndim for d in dst]
        order = [a for a in range(x.ndim) if a not in src]
        for d, s in sorted(zip(dst, src)):
            order.insert(d, s)
        names = names_of(x)
        return _with_names(fn(x, source, destination), [names[a] for a in order])
    return rule


def reshape_rule(fn):
    def rule(x, /, shape, **kwargs):
        out = fn(x, shape, **kwargs)
        names = names_of(x)
        new = [None] * out.ndim
        i = 0
        while i < min(x.ndim, out.ndim) and x.shape[i] == out.shape[i]:
            new[i] = names[i]
            i += 1
        j = 1
        while j <= min(x.ndim, out.ndim) - i and x.shape[-j] == out.shape[-j]:
            new[-j] = names[-j]
            j += 1
        if x.shape == out.shape:
            new = list(names)
        return _with_names(out, new)
    return rule


def expand_dims_rule(fn):
    def rule(x, /, axis=0):
        out = fn(x, axis=axis)
        axes = axis if isinstance(axis, tuple) else (axis,)
        positions = sorted(a % out.ndim for a in axes)
        names = list(names_of(x))
        for p in positions:
            names.insert(p, None)
        return _with_names(out, names)
    return rule


def squeeze_rule(fn):
    def rule(x, /, axis):
        axis = resolve_axis("squeeze", x, axis)
        axes = {a % x.ndim for a in (axis if isinstance(axis, (tuple, list)) else (axis,))}
        out = fn(x, axis=axis)
        return _with_names(out, [n for i, n in enumerate(names_of(x)) if i not in axes])
    return rule


def concat_rule(fn):
    def rule(arrays, /, *, axis=0):
        if axis is not None and arrays:
            axis = resolve_axis("concat", arrays[0], axis)
        out = fn(arrays, axis=axis)
        if axis is None:
            return out
        return _with_names(out, unify("concat", *[names_of(a) for a in arrays]))
    return rule


def stack_rule(fn):
    def rule(arrays, /, *, axis=0):
        out = fn(arrays, axis=axis)
        names = list(unify("stack", *[names_of(a) for a in arrays]))
        names.insert(axis % out.ndim, None)
        return _with_names(out, names)
    return rule


def unstack_rule(fn):
    def rule(x, /, *, axis=0):
        axis = resolve_axis("unstack", x, axis)
        names = [n for i, n in enumerate(names_of(x)) if i != axis % x.ndim]
        return tuple(_with_names(r, names) for r in fn(x, axis=axis))
    return rule


def _distinct(where, names):
    """The names of a result that joins two operands' axes; two axes of one name raise
    (`q @ q.T` for q named ("query", "feature") would name both result axes "query")."""
    seen = set()
    for n in names:
        if n is not None:
            if n in seen:
                raise ValueError(f"{where}: the result would have two axes named {n!r}; "
                                 "rename one operand's axis first (tlaloc.rename)")
            seen.add(n)
    return tuple(names)


def matmul_rule(fn):
    def rule(x1, x2, /):
        n1, n2 = names_of(x1), names_of(x2)
        k1 = n1[-1]
        k2 = n2[-2] if len(n2) >= 2 else n2[-1]
        if k1 is not None and k2 is not None and k1 != k2:
            raise ValueError(f"matmul: contracted axes are named {k1!r} and {k2!r}")
        out = fn(x1, x2)
        if len(n1) >= 2 and len(n2) >= 2:
            batch = unify("matmul", n1[:-2], n2[:-2])
            names = batch + (n1[-2], n2[-1])
        elif len(n1) >= 2:
            names = n1[:-1]
        elif len(n2) >= 2:
            names = n2[:-2] + (n2[-1],)
        else:
            names = ()
        return _with_names(out, _distinct("matmul", names))
    return rule


def tensordot_rule(fn):
    def rule(x1, x2, /, *, axes=2):
        n1, n2 = names_of(x1), names_of(x2)
        if isinstance(axes, int):
            a1, a2 = list(range(x1.ndim - axes, x1.ndim)), list(range(axes))
        else:
            a1 = [resolve_axis("tensordot", x1, a) % x1.ndim for a in axes[0]]
            a2 = [resolve_axis("tensordot", x2, a) % x2.ndim for a in axes[1]]
            axes = (a1, a2)
        for i, j in zip(a1, a2):
            if n1[i] is not None and n2[j] is not None and n1[i] != n2[j]:
                raise ValueError(f"tensordot: contracted axes are named {n1[i]!r} and {n2[j]!r}")
        out = fn(x1, x2, axes=axes)
        names = [n for i, n in enumerate(n1) if i not in a1] + [n for j, n in enumerate(n2) if j not in a2]
        return _with_names(out, _distinct("tensordot", names))
    return rule


def vecdot_rule(fn):
    def rule(x1, x2, /, *, axis=-1):
        names = unify("vecdot", names_of(x1), names_of(x2))
        if isinstance(axis, str):
            if axis not in names:
                raise ValueError(f"vecdot: no axis named {axis!r}")
            axis = names.index(axis) - len(names)
        out = fn(x1, x2, axis=axis)
        return _with_names(out, [n for i, n in enumerate(names) if i != axis % len(names)])
    return rule


def broadcast_to_rule(fn):
    def rule(x, /, shape):
        out = fn(x, shape)
        return _with_names(out, unify("broadcast_to", names_of(x), (None,) * len(shape)))
    return rule


def broadcast_arrays_rule(fn):
    def rule(*arrays):
        out = fn(*arrays)
        names = unify("broadcast_arrays", *[names_of(a) for a in arrays])
        return tuple(_with_names(r, names) for r in out)
    return rule


def getitem_names(x, key, out):
    """Names of x[key] for basic indexing; None for the new axes of array indexing."""
    names = names_of(x)
    items = key if isinstance(key, tuple) else (key,)
    if any(isinstance(k, Array) or isinstance(k, list) for k in items):
        return (None,) * out.ndim
    consumed = sum(1 for k in items if k is not None and k is not Ellipsis)
    result, axis = [], 0
    for k in items:
        if k is Ellipsis:
            n = x.ndim - consumed
            result.extend(names[axis:axis + n])
            axis += n
        elif k is None:
            result.append(None)
        elif isinstance(k, slice):
            result.append(names[axis])
            axis += 1
        else:
            axis += 1
    result.extend(names[axis:])
    return tuple(result) if len(result) == out.ndim else (None,) * out.ndim


# ----------------------------------------------------------------------------- name-based operations

def align_to(x, *names):
    """Permute x's axes into the order `names`, inserting size-1 axes for names x lacks.
    Every named axis of x must be listed; `...` stands for x's unnamed axes, in order."""
    if not isinstance(x, Array):
        raise TypeError(f"align_to: expected a tlaloc array, got {type(x).__name__}")
    if len(names) == 1 and isinstance(names[0], (tuple, list)):
        names = tuple(names[0])
    for n in names:
        if n is not Ellipsis:
            _check_name(n, "align_to")
        if n is not None and names.count(n) > 1:
            raise ValueError(f"align_to: {n!r} appears more than once in {names}")
    current = names_of(x)
    for n in current:
        if n is not None and n not in names:
            raise ValueError(f"align_to: axis {n!r} of the array is not in {names}")
    unnamed = [i for i, n in enumerate(current) if n is None]
    if unnamed and Ellipsis not in names:
        raise ValueError(f"align_to: the array has unnamed axes; include ... in {names}")
    from ._api.manipulation import permute_dims, reshape
    order, shape, result_names = [], [], []
    for n in names:
        if n is Ellipsis:
            for i in unnamed:
                order.append(i)
                shape.append(x.shape[i])
                result_names.append(None)
        elif n in current:
            i = current.index(n)
            order.append(i)
            shape.append(x.shape[i])
            result_names.append(n)
        else:
            shape.append(1)
            result_names.append(n)
    moved = permute_dims(x, tuple(order)) if order != list(range(x.ndim)) else x
    out = reshape(moved, tuple(shape)) if tuple(shape) != moved.shape else moved
    return _with_names(out, result_names)


def broadcast(*arrays):
    """Align arrays by name (union of names in order of first appearance) so they
    broadcast against each other by name rather than by position. An axis name must have
    one size in every array that has it (or size 1)."""
    order, sizes = [], {}
    for k, a in enumerate(arrays):
        if not isinstance(a, Array):
            raise TypeError(f"broadcast: argument {k} is a {type(a).__name__}, not a tlaloc array")
        for n, size in zip(names_of(a), a.shape):
            if n is None:
                raise ValueError("broadcast: every axis must be named to broadcast by name")
            if n not in sizes:
                order.append(n)
                sizes[n] = size
            elif size != sizes[n] and size != 1 and sizes[n] != 1:
                raise ValueError(f"broadcast: axis {n!r} has size {sizes[n]} in one array and "
                                 f"{size} in another")
            elif sizes[n] == 1:
                sizes[n] = size
    return [align_to(a, *order) for a in arrays]


def contract(x1, x2, /, over):
    """Sum of products over the axes named in `over` (a name or tuple of names). Names
    the arrays share but do not contract are batch axes. The result's axes: batch names
    (in x1's order), then x1's other names, then x2's."""
    from ._api._core import cast, check_devices, node_of, promote
    from ._prims import reduce as rd
    a, b = node_of("contract", x1, "x1"), node_of("contract", x2, "x2")
    over = (over,) if isinstance(over, str) else tuple(over)
    for n in over:
        _check_name(n, "contract")
        if over.count(n) > 1:
            raise ValueError(f"contract: axis {n!r} appears more than once in over={over}")
    n1, n2 = names_of(x1), names_of(x2)
    if None in n1 or None in n2:
        raise ValueError("contract: every axis must be named")
    for n in over:
        if n not in n1 or n not in n2:
            raise ValueError(f"contract: axis {n!r} is not in both arrays ({n1} and {n2})")
        if x1.shape[n1.index(n)] != x2.shape[n2.index(n)]:
            raise ValueError(f"contract: axis {n!r} has sizes {x1.shape[n1.index(n)]} and "
                             f"{x2.shape[n2.index(n)]}")
    batch = [n for n in n1 if n in n2 and n not in over]
    for n in batch:
        if x1.shape[n1.index(n)] != x2.shape[n2.index(n)]:
            raise ValueError(f"contract: batch axis {n!r} differs in size")
    check_devices("contract", a, b)
    d = promote("contract", a.aval.dtype, b.aval.dtype)
    node = bind(rd.dot_general, (cast(a, d), cast(b, d)), {
        "contract": (tuple(n1.index(n) for n in over), tuple(n2.index(n) for n in over)),
        "batch": (tuple(n1.index(n) for n in batch), tuple(n2.index(n) for n in batch))})
    names = batch + [n for n in n1 if n not in over and n not in batch] + \
        [n for n in n2 if n not in over and n not in batch]
    return _with_names(Array._from_node(node), names)


# ----------------------------------------------------------------------------- annotations

class Named:
    """`Named["batch", "feature"]`: the axis names an annotated array must carry
    (None for an axis whose name is not checked, ... for any number of leading axes)."""

    def __init__(self, names):
        self.names = names

    def __class_getitem__(cls, names):
        names = names if isinstance(names, tuple) else (names,)
        return cls(names)

    def __repr__(self):
        return f"Named[{', '.join(map(repr, self.names))}]"


class ArrayType:
    """The annotation `Array[Named[...], dtype]`."""

    def __init__(self, named, dtype):
        self.named = named
        self.dtype = dtype

    def __repr__(self):
        return f"Array[{self.named!r}, {self.dtype}]"

    def check(self, value, where):
        if not isinstance(value, Array):
            raise TypeError(f"{where}: expected a tlaloc array, got {type(value).__name__}")
        if self.dtype is not None and value.dtype is not self.dtype:
            raise TypeError(f"{where}: expected dtype {self.dtype}, got {value.dtype}")
        if self.named is not None:
            want = self.named.names
            have = names_of(value)
            if Ellipsis in want:
                tail = want[want.index(Ellipsis) + 1:]
                ok = len(have) >= len(tail) and all(w is None or w == h for w, h in zip(tail[::-1], have[::-1]))
            else:
                ok = len(want) == len(have) and all(w is None or w == h for w, h in zip(want, have))
            if not ok:
                raise ValueError(f"{where}: expected axes named {want}, got {have}")


def _class_getitem(params):
    params = params if isinstance(params, tuple) else (params,)
    named = next((p for p in params if isinstance(p, Named)), None)
    dtype = next((p for p in params if isinstance(p, dt.DType)), None)
    return ArrayType(named, dtype)


def typechecked(fn):
    """Check `Array[Named[...], dtype]` annotations of arguments and result at call time."""
    signature = inspect.signature(fn)
    hints = typing.get_type_hints(fn) if not isinstance(fn, functools.partial) else {}
    hints = {k: v for k, v in {**fn.__annotations__, **hints}.items() if isinstance(v, ArrayType)}

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        for name, value in bound.arguments.items():
            if name in hints:
                hints[name].check(value, f"{fn.__name__}: argument {name!r}")
        result = fn(*args, **kwargs)
        if "return" in hints:
            hints["return"].check(result, f"{fn.__name__}: result")
        return result
    return wrapper


# ----------------------------------------------------------------------------- installation

def _wrap(fn, rule):
    """fn, with names propagated by `rule` when any argument is named (otherwise fn itself
    runs, untouched)."""
    named = rule(fn)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if _has_names(args, kwargs):
            return named(*args, **kwargs)
        return fn(*args, **kwargs)
    wrapper.__wrapped_for_names__ = fn
    return wrapper


ELEMENTWISE = """abs acos acosh add asin asinh atan atan2 atanh bitwise_and bitwise_invert
    bitwise_left_shift bitwise_or bitwise_right_shift bitwise_xor ceil clip conj copysign cos
    cosh divide equal exp expm1 floor floor_divide greater greater_equal hypot imag isfinite
    isinf isnan less less_equal log log10 log1p log2 logaddexp logical_and logical_not
    logical_or logical_xor maximum minimum multiply negative nextafter not_equal positive pow
    real reciprocal remainder round sign signbit sin sinh sqrt square subtract tan tanh trunc
    where astype""".split()
REDUCTIONS = "sum prod max min mean var std all any argmax argmin count_nonzero".split()
SAME_SHAPE = ("sort argsort cumulative_sum cumulative_prod flip roll diff tril triu "
              "repeat take_along_axis isin").split()
CREATION = "asarray zeros ones empty full arange linspace eye".split()
CREATION_LIKE = "zeros_like ones_like empty_like full_like".split()


def creation(fn):
    """Creation functions take `names=`."""
    @functools.wraps(fn)
    def wrapper(*args, names=None, **kwargs):
        out = fn(*args, **kwargs)
        return out if names is None else _with_names(out, _validate(tuple(names), out.ndim, fn.__name__))
    return wrapper


def creation_like(fn):
    """*_like functions keep x's names unless `names=` is given."""
    @functools.wraps(fn)
    def wrapper(x, /, *args, names=None, **kwargs):
        out = fn(x, *args, **kwargs)
        names = names_of(x) if names is None else _validate(tuple(names), out.ndim, fn.__name__)
        return _with_names(out, names)
    return wrapper
SPECIAL = {"permute_dims": permute_dims_rule, "matrix_transpose": matrix_transpose_rule,
           "moveaxis": moveaxis_rule, "reshape": reshape_rule, "expand_dims": expand_dims_rule,
           "squeeze": squeeze_rule, "concat": concat_rule, "stack": stack_rule,
           "unstack": unstack_rule, "matmul": matmul_rule, "tensordot": tensordot_rule,
           "vecdot": vecdot_rule, "broadcast_to": broadcast_to_rule,
           "broadcast_arrays": broadcast_arrays_rule}
LINALG_REDUCTIONS = {"vector_norm"}
LINALG_SPECIAL = {"matmul": matmul_rule, "tensordot": tensordot_rule, "vecdot": vecdot_rule,
                  "matrix_transpose": matrix_transpose_rule}
FFT_SAME = "fft ifft fftn ifftn rfft irfft rfftn irfftn hfft ihfft fftshift ifftshift".split()


def install(namespace: dict, modules=()) -> None:
    """Wrap the namespace's functions (and the same functions in `modules`, so operators
    and methods that call them directly propagate names too)."""
    def put(name, wrapped):
        original = namespace.get(name)
        namespace[name] = wrapped
        for m in modules:
            if getattr(m, name, None) is original:
                setattr(m, name, wrapped)

    for name in CREATION:
        if name in namespace:
            put(name, creation(namespace[name]))
    for name in CREATION_LIKE:
        if name in namespace:
            put(name, creation_like(namespace[name]))
    for name in ELEMENTWISE:
        if name in namespace:
            put(name, _wrap(namespace[name], functools.partial(elementwise, name)))
    for name in REDUCTIONS:
        if name in namespace:
            put(name, _wrap(namespace[name], functools.partial(reduction, name)))
    for name in SAME_SHAPE:
        if name in namespace:
            put(name, _wrap(namespace[name], functools.partial(same_shape, name)))
    for name, rule in SPECIAL.items():
        if name in namespace:
            put(name, _wrap(namespace[name], rule))
    linalg = namespace.get("linalg")
    if linalg is not None:
        for name in dir(linalg):
            fn = getattr(linalg, name)
            if name.startswith("_") or not callable(fn) or inspect.isclass(fn) or \
                    getattr(fn, "__module__", "") != linalg.__name__ and name not in LINALG_SPECIAL:
                continue
            if name in LINALG_SPECIAL:
                setattr(linalg, name, namespace[name])
            elif name in LINALG_REDUCTIONS:
                setattr(linalg, name, _wrap(fn, functools.partial(reduction, f"linalg.{name}")))
            else:
                setattr(linalg, name, _wrap(fn, functools.partial(batch_preserving, f"linalg.{name}")))
    fft = namespace.get("fft")
    if fft is not None:
        for name in FFT_SAME:
            if hasattr(fft, name):
                setattr(fft, name, _wrap(getattr(fft, name), functools.partial(same_shape, f"fft.{name}")))
    Array.__class_getitem__ = classmethod(lambda cls, params: _class_getitem(params))
