"""grad, value_and_grad, vjp, jvp, jacobian, hessian, stop_gradient, custom rules, checkpoint."""
from __future__ import annotations

import functools
import threading
import weakref

from .._array import Array
from .._graph import DerivativeLostError, reaches_variable
from .._prims import ad, lax
from .._prims.lax import rename as node_renamed
from .. import _dtypes as dt
from .. import _tree
from .engine import Tape, is_tracing, tracing, variable


# ----------------------------------------------------------------------------- arguments

def _as_array(x, what):
    if isinstance(x, Array):
        return x
    from .._api.creation import asarray
    try:
        return asarray(x)
    except TypeError:
        raise TypeError(f"{what}: expected arrays (or nested tuples, lists, dicts of arrays), "
                        f"got {type(x).__name__}") from None


def _check_differentiable(arrays, what):
    for a in arrays:
        if a.dtype.kind not in dt.FLOATING_KINDS:
            raise TypeError(f"{what}: can only differentiate with respect to floating-point "
                            f"arrays, got {a.dtype}; convert with astype or mark it with "
                            "argnums")


def _make_variables(tree, what):
    """Replace every array leaf of `tree` with a fresh variable; returns (new tree, nodes)."""
    leaves, structure = _tree.flatten(tree)
    arrays = [_as_array(x, what) for x in leaves]
    _check_differentiable(arrays, what)
    nodes = [variable(a._node) for a in arrays]
    return _tree.unflatten(structure, [_named_like(Array._from_node(n), a) for n, a in zip(nodes, arrays)]), \
        nodes, structure


def _named_like(result, primal):
    """Derivatives carry the axis names of their primals (a `rename`, which computes
    nothing, where the rules gave other names)."""
    names = primal._node.aval.names if result.shape == primal.shape else None
    node = result._node
    if node.aval.names == names:
        return result
    return Array._from_node(node_renamed(node, names=names))


def _zeros_for(node):
    return ad.zeros(node)


def _callable(f, what):
    if not callable(f):
        raise TypeError(f"{what}: expected a function, got {type(f).__name__}")


def _seed(x, node, what, kind, of):
    """A tangent or cotangent `x` for `node` (a primal, or an output): an array of the node's
    shape and dtype, or a Python scalar for a 0-d node, which takes the node's dtype."""
    scalar = isinstance(x, (bool, int, float, complex))
    if scalar:
        from .._api.creation import asarray
        x = asarray(x, device=node.device)
    x = _as_array(x, what)
    if x.shape != node.aval.shape:
        raise ValueError(f"{what}: {kind} of shape {x.shape} for {of} of shape {node.aval.shape}")
    if x.device != node.device:
        raise ValueError(f"{what}: {kind} on {x.device} for {of} on {node.device} (different "
                         "devices); move it with to_device")
    if x.dtype is not node.aval.dtype:
        if not scalar or (x.dtype.kind == "c" and node.aval.dtype.kind != "c"):
            raise TypeError(f"{what}: {kind} of dtype {x.dtype} for {of} of dtype "
                            f"{node.aval.dtype}; it must have the dtype of its {of.split()[-1]} "
                            "(convert it with astype)")
        return ad.convert(x._node, node.aval.dtype)
    return x._node


def _nodes_of_output(out, what):
    leaves, structure = _tree.flatten(out)
    for x in leaves:
        if not isinstance(x, Array):
            raise TypeError(f"{what}: the function must return arrays (or trees of arrays), "
                            f"got {type(x).__name__}")
    return [x._node for x in leaves], structure


# ----------------------------------------------------------------------------- vjp / jvp

def vjp(f, *primals, has_aux=False):
    """(f(*primals), vjp_fn[, aux]): vjp_fn(cotangent) gives one cotangent per primal.

    Cotangents have the structure of f's result, and each output's shape and dtype (a
    Python scalar for a 0-d output); results have the structure of `primals`."""
    return _vjp(f, primals, has_aux, "vjp")


def _vjp(f, primals, has_aux, what):
    _callable(f, what)
    with tracing():
        args, var_nodes, structures, var_arrays = [], [], [], []
        for p in primals:
            tree, nodes, structure = _make_variables(p, what)
            var_arrays.append(_tree.flatten(tree)[0])
            args.append(tree)
            var_nodes.append(nodes)
            structures.append(structure)
        result = f(*args)
        out, aux = _split_aux(result, has_aux, what)
        out_nodes, out_structure = _nodes_of_output(out, what)
        flat_vars = [n for nodes in var_nodes for n in nodes]
        tape = Tape(out_nodes, flat_vars)

    def vjp_fn(cotangent):
        ct_leaves, ct_structure = _tree.flatten(cotangent)
        if ct_structure != out_structure:
            raise ValueError(f"{what}: cotangent structure {ct_structure} does not match the "
                             f"output's {out_structure}")
        seeds = {}
        for node, ct in zip(out_nodes, ct_leaves):
            c = _seed(ct, node, what, "cotangent", "an output")
            seeds[node] = ad.add_any(seeds.get(node), c)
        cts = tape.backward(seeds)
        results = []
        for nodes, structure, primal_arrays in zip(var_nodes, structures, var_arrays):
            leaves = [_named_like(Array._from_node(cts[n] if cts[n] is not None else _zeros_for(n)), a)
                      for n, a in zip(nodes, primal_arrays)]
            results.append(_tree.unflatten(structure, leaves))
        return tuple(results)

    outputs = _tree.unflatten(out_structure, [_named_like(Array._from_node(n), o)
                                              for n, o in zip(out_nodes, _tree.flatten(out)[0])])
    return (outputs, vjp_fn, aux) if has_aux else (outputs, vjp_fn)


def jvp(f, primals, tangents, *, has_aux=False):
    """(f(*primals), directional derivative along `tangents`[, aux]). Each tangent has its
    primal's shape and dtype (a Python scalar for a 0-d primal)."""
    return _jvp(f, primals, tangents, has_aux, "jvp")


def _jvp(f, primals, tangents, has_aux, what):
    _callable(f, what)
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError(f"{what}: primals and tangents must be tuples (one entry per argument)")
    if len(primals) != len(tangents):
        raise ValueError(f"{what}: primals and tangents differ in length")
    with tracing():
        args, seeds = [], {}
        for p, t in zip(primals, tangents):
            tree, nodes, structure = _make_variables(p, what)
            t_leaves, t_structure = _tree.flatten(t)
            if t_structure != structure:
                raise ValueError(f"{what}: tangent structure {t_structure} differs from the primal's {structure}")
            for n, tl in zip(nodes, t_leaves):
                seeds[n] = _seed(tl, n, what, "tangent", "a primal")
            args.append(tree)
        result = f(*args)
        out, aux = _split_aux(result, has_aux, what)
        out_nodes, out_structure = _nodes_of_output(out, what)
        tans = Tape(out_nodes, list(seeds)).forward(seeds)
    out_arrays = _tree.flatten(out)[0]
    outputs = _tree.unflatten(out_structure, [_named_like(Array._from_node(n), o)
                                              for n, o in zip(out_nodes, out_arrays)])
    tangent_out = _tree.unflatten(out_structure, [
        _named_like(Array._from_node(tans.get(n) if tans.get(n) is not None else _zeros_for(n)), o)
        for n, o in zip(out_nodes, out_arrays)])
    return (outputs, tangent_out, aux) if has_aux else (outputs, tangent_out)


def _split_aux(result, has_aux, what):
    if not has_aux:
        return result, None
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        raise TypeError(f"{what}(has_aux=True): the function must return (output, aux)")
    return result[0], result[1]


# ----------------------------------------------------------------------------- grad

def _check_argnums(argnums, what):
    """TypeError unless argnums is an int or a tuple/list of ints."""
    nums = (argnums,) if isinstance(argnums, int) else argnums
    if isinstance(argnums, bool) or not isinstance(nums, (tuple, list)) or not all(
            isinstance(i, int) and not isinstance(i, bool) for i in nums):
        raise TypeError(f"{what}: argnums must be an int or a tuple of ints, got {argnums!r}")


def _argnums_tuple(argnums, nargs, what):
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for i in nums:
        if not -nargs <= i < nargs:
            raise ValueError(f"{what}: argnums {argnums!r} out of range for {nargs} argument(s)")
    return tuple(i % nargs for i in nums)


def value_and_grad(f, argnums=0, has_aux=False):
    """A function returning (f(*args), gradient of f at args w.r.t. args[argnums])."""
    return _value_and_grad(f, argnums, has_aux, "value_and_grad")


def _value_and_grad(f, argnums, has_aux, what):
    _callable(f, what)
    _check_argnums(argnums, what)

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        nums = _argnums_tuple(argnums, len(args), what)

        def partial(*diff_args):
            full = list(args)
            for i, a in zip(nums, diff_args):
                full[i] = a
            return f(*full, **kwargs)

        res = _vjp(partial, [args[i] for i in nums], has_aux, what)
        out, fn = res[0], res[1]
        if not isinstance(out, Array) or out.ndim != 0:
            shape = getattr(out, "shape", type(out).__name__)
            raise TypeError(f"{what}: the function must return a scalar (0-d) array, got {shape}; "
                            "use vjp or jacobian for other outputs")
        if out.dtype.kind not in "f":
            raise TypeError(f"{what}: the function must return a real floating-point scalar, got {out.dtype}")
        from .._api.creation import ones_like
        grads = fn(ones_like(out))
        g = grads[0] if isinstance(argnums, int) else grads
        value = (out, res[2]) if has_aux else out
        return value, g

    return wrapped


def grad(f, argnums=0, has_aux=False):
    """The gradient of a scalar function: grad(f)(*args) has the structure of args[argnums]."""
    vg = _value_and_grad(f, argnums, has_aux, "grad")

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        value, g = vg(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapped


# ----------------------------------------------------------------------------- jacobians

def _flat(x):
    from .._api.manipulation import reshape
    return reshape(x, (-1,))


def jacobian(f, argnums=0, *, mode="reverse"):
    """The Jacobian of an array-valued f of one array argument (argnums an int): shape
    out.shape + arg.shape. mode "reverse" builds it row by row with vjp, "forward" column by
    column with jvp."""
    return _jacobian(f, argnums, mode, "jacobian")


def _jacobian(f, argnums, mode, what):
    _callable(f, what)
    if mode not in ("reverse", "forward"):
        raise ValueError(f"{what}: mode must be 'reverse' or 'forward', got {mode!r}")
    if not isinstance(argnums, int) or isinstance(argnums, bool):
        raise TypeError(f"{what}: argnums must be an int, got {argnums!r}")
    from .._api.creation import zeros
    from .._api.manipulation import reshape, stack

    @functools.wraps(f)
    def wrapped(*args):
        i = _argnums_tuple(argnums, len(args), what)[0]
        x = _as_array(args[i], what)

        def partial(xi):
            full = list(args)
            full[i] = xi
            return f(*full)

        if mode == "reverse":
            out, fn = _vjp(partial, (x,), False, what)
            n = out.size
            rows = []
            for k in range(n):
                basis = reshape(_unit(n, k, out.dtype, out.device), out.shape)
                rows.append(_flat(fn(basis)[0]))
            jac = stack(rows, axis=0) if rows else zeros((0, x.size), dtype=x.dtype, device=x.device)
            return reshape(jac, out.shape + x.shape)
        cols = []
        out = None
        for k in range(x.size):
            basis = reshape(_unit(x.size, k, x.dtype, x.device), x.shape)
            out, t = _jvp(partial, (x,), (basis,), False, what)
            cols.append(_flat(t))
        if out is None:
            out = partial(x)
            return zeros(out.shape + x.shape, dtype=out.dtype, device=out.device)
        return reshape(stack(cols, axis=-1), out.shape + x.shape)

    return wrapped


def _unit(n, k, dtype, device):
    from .._api.creation import eye
    return eye(1, n, k=k, dtype=dtype, device=device)[0]


def jacrev(f, argnums=0):
    return _jacobian(f, argnums, "reverse", "jacrev")


def jacfwd(f, argnums=0):
    return _jacobian(f, argnums, "forward", "jacfwd")


def hessian(f, argnums=0):
    """Second derivatives of a scalar f: forward over reverse."""
    return _jacobian(_jacobian(f, argnums, "reverse", "hessian"), argnums, "forward", "hessian")


# ----------------------------------------------------------------------------- stop_gradient

def stop_gradient(x):
    """x, with derivatives blocked: it is a constant to grad, vjp and jvp."""
    if isinstance(x, Array):
        return Array._from_node(lax.stop_gradient(x._node))
    if isinstance(x, (tuple, list, dict)):
        return _tree.tree_map(stop_gradient, x)
    if x is None or isinstance(x, (bool, int, float, complex)):
        return x   # a Python constant has no derivative to stop
    raise TypeError(f"stop_gradient: expected arrays (or nested tuples, lists, dicts of "
                    f"arrays), got {type(x).__name__}")


# ----------------------------------------------------------------------------- custom rules

_CALLS = weakref.WeakKeyDictionary()   # custom_derivative_call node -> its arguments


def _custom_output(rule, value: Array, args, output=None):
    arrays = tuple(a for a in args if isinstance(a, Array))
    # The derivative of a custom rule or a checkpoint flows to its array arguments only: a
    # differentiated array that the function reads otherwise (a closure, an array inside a
    # container argument) would get a silent zero.
    if reaches_variable(value._node, through=[a._node for a in arrays]):
        kind = getattr(rule, "kind", "checkpoint")
        name = getattr(getattr(rule, "fun", None), "__qualname__", "the function")
        raise DerivativeLostError(
            f"{kind} {name}: the function reads an array that depends on an input being "
            "differentiated without taking it as an array argument (a closure, or an array "
            "inside a container); its derivative would be lost. Pass that array as an "
            "argument of the function")
    node = lax.custom_derivative_call(value._node, *[a._node for a in arrays], rule=rule,
                                      output=output)
    _CALLS[node] = args
    return Array._from_node(node)


_local = threading.local()


def _running_fwd() -> set:
    """The custom_vjp functions whose fwd is running on this thread."""
    running = getattr(_local, "running_fwd", None)
    if running is None:
        running = _local.running_fwd = set()
    return running


class _Custom:
    """The front end shared by custom_vjp and custom_jvp: decoration (plain, or with
    arguments: `@custom_jvp(check=True)`), the call that records the function's outputs as
    custom-derivative nodes while derivatives are taken, and the finite-difference check of
    the user's rule (`check=True`: at the first differentiated call, in float64)."""

    kind = "custom"

    def __new__(cls, fun=None, *, check=False):
        if fun is None:              # used as @custom_jvp(check=True)
            return functools.partial(cls, check=check)
        return super().__new__(cls)

    def __init__(self, fun, *, check=False):
        _callable(fun, self.kind)
        if not isinstance(check, bool):
            raise TypeError(f"{self.kind}: check must be True or False, got {check!r}")
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.check = check
        self._checked = False

    @property
    def _name(self):
        return getattr(self.fun, "__name__", repr(self.fun))

    def _defined(self) -> bool:
        raise NotImplementedError

    def _evaluate(self, args):
        """(the function's value, what the rules need later) while derivatives are taken."""
        raise NotImplementedError

    def __call__(self, *args):
        if not self._defined():
            raise TypeError(f"{self.kind} {self._name}: define the rule with "
                            f"{'defvjp(fwd, bwd)' if self.kind == 'custom_vjp' else 'defjvp'} first")
        if not is_tracing() or self in _running_fwd():
            # a rule usually calls the function itself for the value (`return f(x), res`):
            # that call is the plain function, not the rule again
            return self.fun(*args)
        if self.check and not self._checked:
            self._checked = True
            self._check_rule(args)
        value, saved = self._evaluate(args)
        if isinstance(value, Array):
            out = _custom_output(self, value, args)
            _CALLS[out._node] = (args, saved)
            return out
        if (self.kind == "custom_jvp" and isinstance(value, tuple)
                and all(isinstance(v, Array) for v in value)):
            outs = [_custom_output(self, v, args, output=i) for i, v in enumerate(value)]
            for o in outs:
                _CALLS[o._node] = (args, saved)
            return type(value)(*outs) if hasattr(value, "_fields") else tuple(outs)
        shape = "an array or a tuple of arrays" if self.kind == "custom_jvp" else "a single array"
        raise TypeError(f"{self.kind}: the function must return {shape}")

    # ------------------------------------------------------------------ check=True

    def _directional(self, args64, directions):
        """The rule's derivative in `directions` (one per array argument, None elsewhere) as
        a flat float64/complex128 NumPy vector to compare with finite differences."""
        raise NotImplementedError

    def _fd_probe(self, value):
        """What finite differences of the function's value are compared through."""
        return value

    def _check_rule(self, args):
        import numpy as np
        from .._api.creation import asarray
        positions = [i for i, a in enumerate(args)
                     if isinstance(a, Array) and a.dtype.kind in dt.FLOATING_KINDS]
        if not positions:
            return
        rng = np.random.default_rng(0)
        args64, directions = list(args), [None] * len(args)
        for i in positions:
            a = args[i]
            v = np.asarray(stop_gradient(a)).astype(np.complex128 if a.dtype.kind == "c" else np.float64)
            args64[i] = asarray(v, device=a.device)
            d = rng.standard_normal(v.shape)
            if a.dtype.kind == "c":
                d = d + 1j * rng.standard_normal(v.shape)
            directions[i] = d
        running = _running_fwd()
        running.add(self)         # the user's code runs as the plain function meanwhile
        try:
            rule = self._directional(args64, directions)
            scale = max([1.0] + [float(np.max(np.abs(np.asarray(args64[i]))))
                                 for i in positions if np.asarray(args64[i]).size])
            eps = 1e-6 * scale

            def at(sign):
                moved = list(args64)
                for i in positions:
                    moved[i] = asarray(np.asarray(args64[i]) + sign * eps * directions[i],
                                       device=args[i].device)
                return self._fd_probe(self.fun(*moved))
            fd = (at(1) - at(-1)) / (2 * eps)
        finally:
            running.discard(self)
        fd = np.ravel(np.asarray(fd))
        rule = np.ravel(np.asarray(rule))
        if fd.shape != rule.shape:
            raise ValueError(f"{self.kind} {self._name}: the rule gives a derivative of "
                             f"{rule.size} elements, finite differences {fd.size}")
        gap = np.abs(rule - fd)
        worst = int(np.argmax(gap)) if gap.size else 0
        tol = 1e-5 * (1.0 + np.abs(fd))
        if gap.size and not np.all(gap <= tol):
            raise ValueError(
                f"{self.kind} {self._name}: the rule disagrees with central finite differences "
                f"(float64, step {eps:.1e}): largest discrepancy {gap[worst]:.3e} at element "
                f"{worst} (rule {rule[worst]:.6g}, finite differences {fd[worst]:.6g})")


def _flat_values(tree):
    import numpy as np
    leaves, _ = _tree.flatten(tree)
    return np.concatenate([np.ravel(np.asarray(x)).astype(np.complex128) for x in leaves]) \
        if leaves else np.zeros(0)


class custom_vjp(_Custom):
    """A function with a user-supplied reverse-mode rule.

        @tlaloc.custom_vjp                 # or @tlaloc.custom_vjp(check=True)
        def f(x): ...
        def f_fwd(x): return f(x), residuals
        def f_bwd(residuals, ct): return (ct_x,)   # one entry per argument
        f.defvjp(f_fwd, f_bwd)

    The function must return one array. Forward mode is not available (use custom_jvp).
    check=True compares the rule with central finite differences at the first
    differentiated call (see docs/derivatives.md)."""

    kind = "custom_vjp"

    def __init__(self, fun, *, check=False):
        super().__init__(fun, check=check)
        self.fwd = self.bwd = None

    def defvjp(self, fwd, bwd):
        self.fwd, self.bwd = fwd, bwd
        return self

    def _defined(self):
        return self.fwd is not None

    def _evaluate(self, args):
        running = _running_fwd()
        running.add(self)
        try:
            return self.fwd(*args)
        finally:
            running.discard(self)

    def _cotangents(self, args, residuals, ct):
        cts = self.bwd(residuals, ct)
        if not isinstance(cts, (tuple, list)) or len(cts) != len(args):
            raise TypeError(f"custom_vjp {self._name}: bwd must return a tuple with one "
                            f"cotangent per argument ({len(args)})")
        return cts

    def _vjp_rule(self, out, ct, arg_nodes, output):
        args, residuals = _CALLS[out]
        cts = self._cotangents(args, residuals, Array._from_node(ct))
        result = []
        for a, c in zip(args, cts):
            if isinstance(a, Array):
                result.append(None if c is None else ad.as_dtype_of(_as_array(c, "custom_vjp")._node, a._node))
        return result

    def _jvp_rule(self, out, tangents, arg_nodes, output):
        raise TypeError(f"custom_vjp {self._name} has no forward-mode rule; "
                        "define it with custom_jvp to use jvp, jacfwd or hessian")

    # check: Re<u, J d> from the rule (bwd gives J^H u) against finite differences of Re<u, f>
    def _directional(self, args64, directions):
        import numpy as np
        from .._api.creation import asarray
        value, residuals = self.fwd(*args64)
        if not isinstance(value, Array):
            raise TypeError("custom_vjp: the function must return a single array")
        u = np.random.default_rng(1).standard_normal(value.shape)
        if value.dtype.kind == "c":
            u = u + 1j * np.random.default_rng(2).standard_normal(value.shape)
        self._probe = u
        cts = self._cotangents(args64, residuals, asarray(u.astype(np.asarray(value).dtype),
                                                            device=value.device))
        total = 0.0
        for c, d in zip(cts, directions):
            if d is not None and c is not None:
                total += float(np.real(np.sum(np.conj(np.asarray(c)) * d)))
        return np.asarray([total])

    def _fd_probe(self, value):
        import numpy as np
        return np.asarray([np.real(np.sum(np.conj(self._probe) * np.asarray(value)))])


class custom_jvp(_Custom):
    """A function with a user-supplied forward-mode rule.

        @tlaloc.custom_jvp                 # or @tlaloc.custom_jvp(check=True)
        def f(x): ...
        @f.defjvp
        def f_jvp(primals, tangents): return f(*primals), tangent_out

    f may return one array or a tuple of arrays (a named tuple too); the rule then returns
    tangents of the same structure.

    Reverse mode transposes the rule: the tangent output is recorded as a function of the
    tangents and differentiated backwards, which is exact because it is linear in them.
    check=True compares the rule with central finite differences at the first
    differentiated call (see docs/derivatives.md)."""

    kind = "custom_jvp"

    def __init__(self, fun, *, check=False):
        super().__init__(fun, check=check)
        self.rule = None

    def defjvp(self, rule):
        self.rule = rule
        return rule

    def _defined(self):
        return self.rule is not None

    def _evaluate(self, args):
        return self.fun(*args), None

    def _tangent_out(self, args, tangent_nodes, output):
        tangents, k = [], 0
        for a in args:
            if isinstance(a, Array):
                t = tangent_nodes[k]
                k += 1
                tangents.append(Array._from_node(t if t is not None else ad.zeros(a._node)))
            else:
                tangents.append(None)
        _, t_out = self.rule(tuple(args), tuple(tangents))
        if output is not None:
            t_out = t_out[output]
        return _as_array(t_out, "custom_jvp")._node

    def _jvp_rule(self, out, tangents, arg_nodes, output):
        args, _ = _CALLS[out]
        return ad.as_dtype_of(self._tangent_out(args, list(tangents), output), out)

    def _vjp_rule(self, out, ct, arg_nodes, output):
        args, _ = _CALLS[out]
        with tracing():
            seeds = [variable(ad.zeros(n)) for n in arg_nodes]
            t_out = self._tangent_out(args, seeds, output)
            tape = Tape([t_out], seeds)
        cts = tape.backward({t_out: ad.as_dtype_of(ct, t_out)})
        return [cts[s] for s in seeds]

    # check: the rule's tangent output against finite differences of the outputs
    def _directional(self, args64, directions):
        import numpy as np
        from .._api.creation import asarray
        tangents = tuple(None if d is None else asarray(d.astype(np.asarray(a).dtype), device=a.device)
                         if isinstance(a, Array) else None for a, d in zip(args64, directions))
        tangents = tuple(t if t is not None or not isinstance(a, Array) else _zeros_like_array(a)
                         for t, a in zip(tangents, args64))
        _, t_out = self.rule(tuple(args64), tangents)
        return _flat_values(t_out)

    def _fd_probe(self, value):
        return _flat_values(value)


def _zeros_like_array(a):
    return Array._from_node(ad.zeros(a._node))


class _Checkpointed:
    """The rule object of checkpoint(f): its backward pass recomputes f."""

    def __init__(self, fun):
        self.fun = fun

    def _vjp_rule(self, out, ct, arg_nodes, output):
        args = _CALLS[out]
        fresh, k = [], 0
        for a in args:
            if isinstance(a, Array):
                fresh.append(Array._from_node(lax.optimization_barrier(arg_nodes[k])))
                k += 1
            else:
                fresh.append(a)
        partial, positions = _with_arrays_replaced(self.fun, fresh)
        _, fn = vjp(partial, *[fresh[i] for i in positions])
        return [c._node for c in fn(Array._from_node(ct))]

    def _jvp_rule(self, out, tangents, arg_nodes, output):
        args = _CALLS[out]
        partial, _ = _with_arrays_replaced(self.fun, args)
        primals = tuple(Array._from_node(n) for n in arg_nodes)
        tans = tuple(Array._from_node(t if t is not None else ad.zeros(n)) for t, n in zip(tangents, arg_nodes))
        _, t = jvp(partial, primals, tans)
        return t._node


def _with_arrays_replaced(fun, args):
    """fun as a function of the array arguments among `args` (the rest held fixed), and the
    positions of those arrays."""
    positions = [i for i, a in enumerate(args) if isinstance(a, Array)]

    def partial(*arrays):
        full = list(args)
        for i, a in zip(positions, arrays):
            full[i] = a
        return fun(*full)
    return partial, positions


def checkpoint(fun):
    """fun, differentiated by recomputing its internals in the backward pass instead of
    keeping them (less memory, more compute). fun must return one array."""
    _callable(fun, "checkpoint")
    rule = _Checkpointed(fun)

    @functools.wraps(fun)
    def wrapped(*args):
        value = fun(*args)
        if not is_tracing():
            return value
        if not isinstance(value, Array):
            raise TypeError("checkpoint: the function must return a single array")
        return _custom_output(rule, value, args)

    return wrapped

