"""Structured control flow: tlaloc.cond, switch, while_loop, fori_loop and scan.

Each traces the user's functions once, on abstract arrays (no values), into sub-programs of
one primitive (tlaloc/_prims/control.py), so a loop is one operation whatever its trip
count: inside `jit` one StableHLO region op, outside it one recorded operation. Carries,
operands and results are trees (tlaloc.tree). A loop body must give back its carry with the
same structure, shapes, dtypes and axis names; the error names the element that changed.
"""
from __future__ import annotations

from . import _dtypes as dt
from . import _state
from . import _tree
from . import tree as _public_tree
from ._api import creation as _creation
from ._api import elementwise as _elementwise
from ._api._core import is_int, wrap
from ._array import Array
from ._devices import default_device
from ._prims import control
from .autodiff.engine import is_tracing

__all__ = ["cond", "switch", "while_loop", "fori_loop", "scan"]


# ----------------------------------------------------------------------------- trees of nodes

def _device(what, *trees):
    """The device of the first array among the trees' leaves (the default one if none);
    ValueError naming `what` when arrays are on different devices."""
    found = None
    for t in trees:
        for x in _tree.flatten(t)[0]:
            if isinstance(x, Array):
                if found is None:
                    found = x.device
                elif x.device != found:
                    raise ValueError(f"{what}: arrays are on different devices ({found} and "
                                     f"{x.device}); move them with to_device")
    return found or default_device()


def _as_node(what, argname, path, x, device, dtype=None):
    """A leaf as a node: an Array's own, a Python or NumPy scalar or array converted (to
    `dtype`, when it stands for a carry of that dtype)."""
    if isinstance(x, Array):
        return x._node
    if isinstance(x, (bool, int, float, complex)) or hasattr(x, "__array__"):
        return _creation.asarray(x, dtype=dtype, device=device)._node
    raise TypeError(f"{what}: {argname}{path} is a {type(x).__name__}, not an array or a "
                    "Python scalar")


def _nodes(what, argname, tree, device):
    leaves, structure = _tree.flatten(tree)
    paths = _public_tree.paths(structure)
    return [_as_node(what, argname, p, x, device) for x, p in zip(leaves, paths)], structure


def _describe(a) -> str:
    names = "" if a.names is None else f" named {a.names}"
    return f"shape {a.shape} {a.dtype}{names}"


def _traced(what, fn_name, fn, args_structure, in_avals, device, expect=None, split=None):
    """Trace `fn` on abstract arrays of `in_avals` (arranged as `args_structure`, a tuple of
    arguments). `expect` ((structure, avals, label, leaf paths or None)) is what the result
    must look like (a loop's carry); `split(result) -> (checked part, rest)` picks it out of
    the result (a scan step's (carry, y)). Python scalars in the result become arrays (of the
    expected dtype). Returns (control.Traced, the checked part's structure, the rest's)."""
    box = {}

    def nodes_fn(*placeholders):
        args = _tree.unflatten(args_structure, [Array._from_node(p) for p in placeholders])
        result = fn(*args)
        checked, rest = split(result) if split is not None else (result, None)
        leaves, structure = _tree.flatten(checked)
        dtypes = [None] * len(leaves)
        if expect is not None:
            e_structure, e_avals, label, _ = expect
            if structure != e_structure:
                raise TypeError(f"{what}: {fn_name} must return its {label} with the structure "
                                f"{e_structure!r}, got {structure!r}")
            dtypes = [a.dtype for a in e_avals]
        paths = _public_tree.paths(structure)
        nodes = [_as_node(what, f"{fn_name}'s result", p, x, device, d)
                 for x, p, d in zip(leaves, paths, dtypes)]
        box["structure"] = structure
        if split is not None:
            r_leaves, r_structure = _tree.flatten(rest)
            r_paths = _public_tree.paths(r_structure)
            nodes += [_as_node(what, f"{fn_name}'s output", p, x, device)
                      for x, p in zip(r_leaves, r_paths)]
            box["rest"] = r_structure
        return nodes

    traced = control.trace(nodes_fn, in_avals, device, f"{what}'s {fn_name}")
    if expect is not None:
        e_structure, e_avals, label, paths = expect
        for p, want, got in zip(paths or _public_tree.paths(e_structure), e_avals, traced.outputs):
            if got.aval != want:
                raise TypeError(f"{what}: {fn_name} changed {label} element {p or '(the only one)'}: "
                                f"{_describe(want)} -> {_describe(got.aval)}; a {label} keeps "
                                "its shape, dtype and axis names from one step to the next")
    return traced, box["structure"], box.get("rest")


def _arrays(structure, nodes):
    return _tree.unflatten(structure, [wrap(n) for n in nodes])


# ----------------------------------------------------------------------------- states
#
# A function that draws random numbers reads and advances a state cell (a
# tlaloc.random.Generator's key). Traced once for a whole loop, it would read the same key at
# every step (every step would draw the same numbers), and the key it advanced would be a
# value of the body. So the functions are traced inside a state frame first; when they touch
# cells, the construct runs again with the keys as extra carries (loops) or operands and
# results (branches), and the cells get the keys it returns.

def _touched(trace_all):
    """(trace_all(), the state cells the traced functions read or wrote)."""
    with _state.Frame() as frame:
        result = trace_all()
    return result, [cell for cell, _, _ in frame.threaded()]


def _keys_of(cells):
    """The cells' current keys (an enclosing jit trace threads each cell from here on)."""
    return [cell.get() for cell in cells]


def _reading_keys(cells, fn, returns_keys):
    """`fn` taking the cells' keys as its last argument: they are set as the cells' values
    while it runs (and restored after); with `returns_keys`, the result is (fn's result,
    the cells' keys after it)."""
    def wrapped(*args):
        *args, keys = args
        saved = [cell._value for cell in cells]
        for cell, key in zip(cells, keys):
            cell._value = key
        try:
            out = fn(*args)
            return (out, [cell._value for cell in cells]) if returns_keys else out
        finally:
            for cell, value in zip(cells, saved):
                cell._value = value
    return wrapped


def _store_keys(cells, keys):
    for cell, key in zip(cells, keys):
        cell.set(key)


def _index_and_value(what, structure):
    """fori_loop's carry is (index, value): its errors name the user's value's leaves."""
    if what != "fori_loop":
        return None
    value = _public_tree.paths(structure.children[1])
    return ["(the loop index)"] + [p or "(the only one)" for p in value]


# ----------------------------------------------------------------------------- cond, switch

def cond(pred, true_fn, false_fn, *operands):
    """`true_fn(*operands)` if `pred` else `false_fn(*operands)`, as one operation.

    Both functions are traced (without values) and must return the same structure of arrays
    of the same shapes and dtypes; only the chosen one runs. `pred` is a 0-d array or Python
    bool (a number counts as `pred != 0`)."""
    for name, f in (("true_fn", true_fn), ("false_fn", false_fn)):
        if not callable(f):
            raise TypeError(f"cond: {name} must be callable, got {type(f).__name__}")
    device = _device("cond", pred, operands)
    index = _as_node("cond", "pred", "", pred, device)
    if index.aval.shape != ():
        raise TypeError(f"cond: pred must be a 0-d array or a Python bool, got shape "
                        f"{index.aval.shape}")
    if index.aval.dtype is not dt.bool:
        index = _creation.astype(wrap(index), dt.bool)._node
    return _branches("cond", index, [("false_fn", false_fn), ("true_fn", true_fn)], operands,
                     device)


def switch(index, branches, *operands):
    """`branches[index](*operands)` as one operation; `index` (a 0-d integer array or a
    Python int) is clamped to the valid range, as in JAX."""
    try:
        branches = list(branches)
    except TypeError:
        raise TypeError(f"switch: branches must be a sequence of functions, got "
                        f"{type(branches).__name__}") from None
    if not branches:
        raise ValueError("switch: branches is empty")
    for k, f in enumerate(branches):
        if not callable(f):
            raise TypeError(f"switch: branches[{k}] must be callable, got {type(f).__name__}")
    device = _device("switch", index, operands)
    if isinstance(index, bool) or not (is_int(index) or isinstance(index, Array)):
        raise TypeError(f"switch: index must be an integer (a 0-d array or a Python int), got "
                        f"{type(index).__name__}")
    i = index if isinstance(index, Array) else _creation.asarray(index, device=device)
    if i.shape != () or i.dtype.kind not in dt.INTEGER_KINDS:
        raise TypeError(f"switch: index must be a 0-d integer array, got shape {i.shape} "
                        f"{i.dtype}")
    i = _creation.astype(_elementwise.clip(i, 0, len(branches) - 1), dt.int32)
    return _branches("switch", i._node, [(f"branches[{k}]", f) for k, f in enumerate(branches)],
                     operands, device)


def _branches(what, index, fns, operands, device):
    op_nodes, op_structure = _nodes(what, "operands", operands, device)
    in_avals = [n.aval for n in op_nodes]
    traces, cells = _touched(lambda: [_traced(what, name, f, op_structure, in_avals, device)[:2]
                                      for name, f in fns])
    if cells:    # random keys go in as operands and come back as results
        keys = _keys_of(cells)
        with_keys = [(name, lambda *a, f=f: _reading_keys(cells, f, True)(*a[:-1], list(a[-1])))
                     for name, f in fns]
        out, keys = _branches(what, index, with_keys, (*operands, keys), device)
        _store_keys(cells, keys)
        return out
    first_name = fns[-1][0] if what == "cond" else fns[0][0]
    first, s0 = traces[-1] if what == "cond" else traces[0]
    for (name, _), (t, s) in zip(fns, traces):
        if s != s0:
            raise TypeError(f"{what}: {name} returns the structure {s!r}, but {first_name} "
                            f"returns {s0!r}")
        for p, a, b in zip(_public_tree.paths(s0), first.outputs, t.outputs):
            if a.aval != b.aval:
                raise TypeError(f"{what}: {name} and {first_name} return different types at "
                                f"{p or 'their result'}: {_describe(b.aval)} vs {_describe(a.aval)}")
    captured = control.union(t.captured for t, _ in traces)
    subs = tuple(control.build(t, captured) for t, _ in traces)
    n_out = len(first.outputs)
    nodes = control.results(control.cond, (index, *op_nodes, *captured), {"branches": subs},
                            range(n_out), device)
    return _arrays(s0, nodes)


# ----------------------------------------------------------------------------- while_loop

def while_loop(cond_fun, body_fun, init):
    """Repeat `carry = body_fun(carry)` while `cond_fun(carry)`, starting from `init`; one
    operation whatever the number of steps. `cond_fun` returns a 0-d bool array; `body_fun`
    returns a carry like `init` (structure, shapes, dtypes, axis names).

    Forward-mode derivatives go through it; reverse mode needs a known trip count: use
    `scan`, or `fori_loop` with Python int bounds."""
    return _while("while_loop", "cond_fun", cond_fun, "body_fun", body_fun, init)


def _while(what, cond_name, cond_fun, body_name, body_fun, init):
    for name, f in ((cond_name, cond_fun), (body_name, body_fun)):
        if not callable(f):
            raise TypeError(f"{what}: {name} must be callable, got {type(f).__name__}")
    device = _device(what, init)
    nodes, structure = _nodes(what, "init", init, device)
    avals = [n.aval for n in nodes]
    args = _tree.Structure("tuple", None, (structure,))
    (tc, tb), cells = _touched(lambda: _while_traces(what, cond_name, cond_fun, body_name,
                                                     body_fun, structure, args, avals, device))
    if cells:    # random keys ride along as carries
        keys = _keys_of(cells)
        cond_k = _reading_keys(cells, lambda c: cond_fun(c), False)
        body_k = _reading_keys(cells, lambda c: body_fun(c), True)
        out, keys = _while(what, cond_name, lambda c: cond_k(c[0], c[1]), body_name,
                           lambda c: body_k(c[0], c[1]), (init, keys))
        _store_keys(cells, keys)
        return out
    captured = control.union([tc.captured, tb.captured])
    params = {"cond": control.build(tc, captured), "body": control.build(tb, captured),
              "n_carry": len(nodes)}
    if not nodes:
        return init
    out = control.results(control.while_, (*nodes, *captured), params, range(len(nodes)), device)
    return _arrays(structure, out)


def _while_traces(what, cond_name, cond_fun, body_name, body_fun, structure, args, avals,
                  device):
    tc, _, _ = _traced(what, cond_name, cond_fun, args, avals, device)
    if len(tc.outputs) != 1 or tc.outputs[0].aval.shape != () \
            or tc.outputs[0].aval.dtype is not dt.bool:
        got = ", ".join(_describe(o.aval) for o in tc.outputs) or "nothing"
        raise TypeError(f"{what}: {cond_name} must return a 0-d bool array, got {got}")
    tb, _, _ = _traced(what, body_name, body_fun, args, avals, device,
                       expect=(structure, avals, "carry", _index_and_value(what, structure)))
    return tc, tb


# ----------------------------------------------------------------------------- fori_loop

def fori_loop(lower, upper, body_fun, init):
    """`for i in range(lower, upper): val = body_fun(i, val)`, from `val = init`, as one
    operation. With Python int bounds it is a `scan` (reverse-mode derivatives work); with
    array bounds a `while_loop` (forward mode only)."""
    if not callable(body_fun):
        raise TypeError(f"fori_loop: body_fun must be callable, got {type(body_fun).__name__}")
    if is_int(lower) and is_int(upper):
        device = _device("fori_loop", init)
        start = _creation.asarray(int(lower), device=device)

        def step(carry, _):
            i, val = carry
            return (i + 1, body_fun(i, val)), None

        (_, val), _ = _scan("fori_loop", "body_fun", step, (start, init), None,
                            max(int(upper) - int(lower), 0), False, 1)
        return val
    for name, b in (("lower", lower), ("upper", upper)):
        if isinstance(b, bool) or not (is_int(b) or isinstance(b, Array)):
            raise TypeError(f"fori_loop: {name} must be an integer (a Python int or a 0-d "
                            f"integer array), got {type(b).__name__}")
        if isinstance(b, Array) and (b.shape != () or b.dtype.kind not in dt.INTEGER_KINDS):
            raise TypeError(f"fori_loop: {name} must be a 0-d integer array, got shape "
                            f"{b.shape} {b.dtype}")
    device = _device("fori_loop", lower, upper, init)
    lo = lower if isinstance(lower, Array) else _creation.asarray(lower, device=device)
    hi = upper if isinstance(upper, Array) else _creation.asarray(upper, device=device)
    kind = dt.promote(lo.dtype, hi.dtype)
    lo, hi = _creation.astype(lo, kind), _creation.astype(hi, kind)

    def body(carry):
        i, val = carry
        return i + 1, body_fun(i, val)

    _, val = _while("fori_loop", "the loop condition", lambda c: c[0] < hi, "body_fun", body,
                    (lo, init))
    return val


# ----------------------------------------------------------------------------- scan

def scan(f, init, xs=None, length=None, reverse=False, unroll=1):
    """Loop `carry, y = f(carry, x)` over the leading axis of `xs`, as one operation;
    returns `(final carry, ys)` with the ys stacked along a new leading axis.

    `xs` is a tree of arrays sharing their leading size (or None, with `length` given);
    `reverse=True` runs from the last row to the first (ys keep their positions);
    `unroll` steps are written per loop iteration (True: all of them). Derivatives in both
    modes; the reverse mode is a reverse scan that recomputes each step's internals from the
    carry saved at that step."""
    if not callable(f):
        raise TypeError(f"scan: f must be callable, got {type(f).__name__}")
    if not isinstance(reverse, bool):
        raise TypeError(f"scan: reverse must be a bool, got {type(reverse).__name__}")
    if length is not None and (isinstance(length, bool) or not is_int(length) or length < 0):
        raise ValueError(f"scan: length must be a non-negative int, got {length!r}")
    return _scan("scan", "f", f, init, xs, length, reverse, unroll)


def _scan(what, fn_name, f, init, xs, length, reverse, unroll):
    device = _device(what, init, xs)
    carry, c_structure = _nodes(what, "init", init, device)
    x_nodes, x_structure = _nodes(what, "xs", xs, device)
    sizes = set()
    for p, n in zip(_public_tree.paths(x_structure), x_nodes):
        if not n.aval.shape:
            raise ValueError(f"{what}: xs{p} is 0-d; scan slices xs along their leading axis")
        sizes.add(n.aval.shape[0])
    if len(sizes) > 1:
        raise ValueError(f"{what}: the leading sizes of xs differ: {sorted(sizes)}")
    if sizes:
        n = sizes.pop()
        if length is not None and length != n:
            raise ValueError(f"{what}: length={length}, but xs have leading size {n}")
        length = n
    elif length is None:
        raise ValueError(f"{what}: give length when xs has no arrays")
    length = int(length)
    if unroll is True:
        unroll = max(length, 1)
    elif unroll is False:
        unroll = 1
    if not is_int(unroll) or unroll < 1:
        raise ValueError(f"{what}: unroll must be a positive int or a bool, got {unroll!r}")
    c_avals = [n.aval for n in carry]
    row_avals = [n.aval._replace(shape=n.aval.shape[1:],
                                 names=None if n.aval.names is None else n.aval.names[1:])
                 for n in x_nodes]
    args = _tree.Structure("tuple", None, (c_structure, x_structure))

    def split(result):
        if not isinstance(result, (tuple, list)) or len(result) != 2:
            raise TypeError(f"{what}: {fn_name} must return a pair (carry, y), got "
                            f"{type(result).__name__}")
        return result[0], result[1]

    (traced, _, y_structure), cells = _touched(lambda: _traced(
        what, fn_name, f, args, c_avals + row_avals, device,
        expect=(c_structure, c_avals, "carry", _index_and_value(what, c_structure)),
        split=split))
    if cells:    # random keys ride along as carries
        step = _reading_keys(cells, f, True)

        def f_keys(carry_keys, x):
            (c, y), keys = step(carry_keys[0], x, carry_keys[1])
            return (c, keys), y
        (out, keys), ys = _scan(what, fn_name, f_keys, (init, _keys_of(cells)), xs, length,
                                reverse, unroll)
        _store_keys(cells, keys)
        return out, ys
    body = control.build(traced, traced.captured)
    n_y = len(traced.outputs) - len(carry)
    params = {"body": body, "n_carry": len(carry), "n_xs": len(x_nodes), "length": length,
              "reverse": reverse, "unroll": int(unroll),
              # under grad, the forward scan saves each step's carry for the reverse scan
              "save_carries": is_tracing()}
    inputs = (*carry, *x_nodes, *traced.captured)
    if not carry and not n_y:
        return init, _tree.unflatten(y_structure, [])
    out = control.results(control.scan, inputs, params, range(len(carry) + n_y), device)
    return _arrays(c_structure, out[:len(carry)]), _arrays(y_structure, out[len(carry):])
