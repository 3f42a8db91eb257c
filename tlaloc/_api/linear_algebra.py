"""matmul, tensordot, vecdot, matrix_transpose (the main namespace's linear algebra)."""
from __future__ import annotations

import operator

from .._prims import reduce as rd
from ._core import (axis_of, broadcast_names, broadcast_shapes, broadcast_to_shape, cast,
                    check_devices, check_size, distinct, names_of, node_of, normalize_axis,
                    position_of, promote, renamed, wrap)
from . import views
from .elementwise import conj
from .._prims import lax


def _pair(name, x1, x2):
    a, b = node_of(name, x1, "x1"), node_of(name, x2, "x2")
    check_devices(name, a, b)
    d = promote(name, a.aval.dtype, b.aval.dtype)
    if d.kind == "b":
        raise TypeError(f"{name}: x1 and x2 must have numeric dtypes, got bool")
    return cast(a, d), cast(b, d)


def _dot_names(name, a, b, contract, batch):
    """The names of dot_general(a, b) by its names rule, its errors naming `name`."""
    try:
        names = rd.dot_general.names(None, a.aval, b.aval, contract=contract, batch=batch)
    except ValueError as e:
        raise ValueError(f"{name}: {e}") from None
    return distinct(name, names)


def _matmul_names(a, b):
    """matmul's result names: the batch axes' (broadcast), then a's rows and b's columns (a
    vector operand contributes none); contracted axes' names must agree."""
    n1, n2 = a.aval.names or (None,) * len(a.aval.shape), b.aval.names or (None,) * len(b.aval.shape)
    k1, k2 = n1[-1], (n2[-2] if len(n2) >= 2 else n2[-1])
    if k1 is not None and k2 is not None and k1 != k2:
        raise ValueError(f"matmul: contracted axes are named {k1!r} and {k2!r}")
    if len(n1) >= 2 and len(n2) >= 2:
        nb = max(len(n1), len(n2)) - 2
        batch = broadcast_names("matmul", [n1[:-2], n2[:-2]]) or (None,) * nb
        names = batch + (n1[-2], n2[-1])
    elif len(n1) >= 2:
        names = n1[:-1]
    elif len(n2) >= 2:
        names = n2[:-2] + (n2[-1],)
    else:
        names = ()
    return distinct("matmul", names)


def matmul(x1, x2, /):
    a, b = _pair("matmul", x1, x2)
    sa, sb = a.aval.shape, b.aval.shape
    if not sa or not sb:
        raise ValueError("matmul: 0-d arrays are not allowed; use multiply")
    names = None if a.aval.names is None and b.aval.names is None else _matmul_names(a, b)
    if names is not None:   # the names are set once, on the result
        a, b = renamed(a, None), renamed(b, None)
    va, vb = len(sa) == 1, len(sb) == 1
    if (va or vb) and len(sa) <= 2 and len(sb) <= 2:
        # a vector with a vector or a matrix: one contraction, without the reshapes to and
        # from a matrix of one row or column (three operations where one does)
        if sa[-1] != sb[0]:
            raise ValueError(f"matmul: contracted dimensions differ: {x1.shape} @ {x2.shape}")
        shape = sa[:-1] + sb[1:]
        check_size("matmul", shape, a.aval.dtype, a.device)
        out = lax.dot_general(a, b, contract=((len(sa) - 1,), (0,)), batch=((), ()))
        return wrap(out if names is None else renamed(out, names))
    if va:
        a, sa = lax.reshape(a, shape=(1,) + sa), (1,) + sa
    if vb:
        b, sb = lax.reshape(b, shape=sb + (1,)), sb + (1,)
    if sa[-1] != sb[-2]:
        raise ValueError(f"matmul: contracted dimensions differ: {x1.shape} @ {x2.shape}")
    batch = broadcast_shapes(sa[:-2], sb[:-2], name="matmul")
    check_size("matmul", batch + (sa[-2], sb[-1]), a.aval.dtype, a.device)
    if len(sb) == 2:
        # a stack of matrices times one matrix: one contraction over a's last axis (XLA:CPU
        # ran the batched product with b broadcast over the stack 10-20x slower)
        out = lax.dot_general(broadcast_to_shape(a, batch + sa[-2:]), b,
                              contract=((len(batch) + 1,), (0,)), batch=((), ()))
    else:
        a = broadcast_to_shape(a, batch + sa[-2:])
        b = broadcast_to_shape(b, batch + sb[-2:])
        nb = len(batch)
        out = lax.dot_general(a, b, contract=((nb + 1,), (nb,)),
                              batch=(tuple(range(nb)), tuple(range(nb))))
    shape = batch + (() if va else (sa[-2],)) + (() if vb else (sb[-1],))
    if out.aval.shape != shape:
        out = lax.reshape(out, shape=shape)
    return wrap(out if names is None else renamed(out, names))


def tensordot(x1, x2, /, *, axes=2):
    a, b = _pair("tensordot", x1, x2)
    na, nb = len(a.aval.shape), len(b.aval.shape)
    if isinstance(axes, tuple) and len(axes) == 2 and not isinstance(axes[0], int):
        ca = tuple(axis_of("tensordot", a, i, "axes") for i in axes[0])
        cb = tuple(axis_of("tensordot", b, i, "axes") for i in axes[1])
        if len(ca) != len(cb):
            raise ValueError("tensordot: the two axes sequences differ in length")
    else:
        try:
            n = operator.index(axes)
        except TypeError:
            raise TypeError(f"tensordot: axes must be an int or a pair of sequences, got {axes!r}") from None
        if n < 0 or n > na or n > nb:
            raise ValueError(f"tensordot: cannot contract {n} axes of {x1.shape} and {x2.shape}")
        ca, cb = tuple(range(na - n, na)), tuple(range(n))
    for i, j in zip(ca, cb):
        if a.aval.shape[i] != b.aval.shape[j]:
            raise ValueError(f"tensordot: axis {i} of x1 ({a.aval.shape[i]}) and axis {j} of x2 "
                             f"({b.aval.shape[j]}) differ in size")
    check_size("tensordot", tuple(n for i, n in enumerate(a.aval.shape) if i not in ca)
               + tuple(n for j, n in enumerate(b.aval.shape) if j not in cb), a.aval.dtype, a.device)
    if a.aval.names is not None or b.aval.names is not None:
        _dot_names("tensordot", a, b, (ca, cb), ((), ()))
    return wrap(lax.dot_general(a, b, contract=(ca, cb), batch=((), ())))


def vecdot(x1, x2, /, *, axis=-1):
    a, b = _pair("vecdot", x1, x2)
    shape = broadcast_shapes(a.aval.shape, b.aval.shape, name="vecdot")
    if shape != a.aval.shape and shape != b.aval.shape:
        check_size("vecdot", shape, a.aval.dtype, a.device)
    if not shape:
        raise ValueError("vecdot: arrays must have at least one dimension")
    if type(axis) is str:   # a name of the broadcast operands' axes
        axis = position_of("vecdot", broadcast_names("vecdot", [names_of(a), names_of(b)]), axis)
    ax = normalize_axis("vecdot", axis, len(shape))
    k = ax - len(shape)  # the axis counted from the end, valid for both operands
    sizes = {s[k] for s in (a.aval.shape, b.aval.shape) if len(s) >= -k}
    if len(sizes) > 1:
        raise ValueError(f"vecdot: contracted axis sizes differ: {x1.shape} and {x2.shape}")
    a = broadcast_to_shape(a, shape)
    b = broadcast_to_shape(b, shape)
    if a.aval.dtype.kind == "c":
        a = conj(wrap(a))._node
    batch = tuple(i for i in range(len(shape)) if i != ax)
    return wrap(lax.dot_general(a, b, contract=((ax,), (ax,)), batch=(batch, batch)))


def matrix_transpose(x, /):
    """The last two axes swapped: a view of x, as NumPy's `x.mT`."""
    node_of("matrix_transpose", x)
    nd = x.ndim
    if nd < 2:
        raise ValueError(f"matrix_transpose: x must have at least 2 dimensions, got {nd}")
    perm = tuple(range(nd - 2)) + (nd - 1, nd - 2)
    strides, _ = views.layout(x)
    return views.view(x, views.Permute(perm), [strides[a] for a in perm])
