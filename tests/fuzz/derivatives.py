"""The derivative fuzzer: random differentiable float64 programs `f(v0, v1, ...) -> scalar`,
whose grad and jvp (and, for some, jvp of grad and grad of grad) on the interpreter and on
the compiled CPU backend are compared with central differences of the same source run on
array-api-strict.

Programs are smooth compositions (guarded forms like log(x*x + 0.5) keep arguments in the
domain) plus piecewise-smooth ones (abs, maximum, where, sort, max); a point near a kink is
recognised by central differences that disagree between step h and h/2, and skipped.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np
from hypothesis import reject
from hypothesis import strategies as st

from .programs import HEADER
from .values import scalar_source

H = 1e-5                     # central-difference step (inputs are O(1))
RTOL, ATOL = 1e-5, 1e-6      # derivative vs differences, relative to the scale of the values


@dataclasses.dataclass
class DerivativeProgram:
    body: list
    shapes: list             # of the arguments
    inputs: list             # float64 arrays
    tangents: list
    second_order: bool
    ops: list

    @property
    def n_args(self):
        return len(self.shapes)

    def function_source(self) -> str:
        args = ", ".join(f"v{i}" for i in range(self.n_args))
        body = "\n".join("    " + line for line in self.body)
        return f"def f({args}):\n{body}\n"

    def source(self) -> str:
        return HEADER + "\n\n" + self.function_source()

    def reproduction(self, device) -> str:
        argnums = tuple(range(self.n_args))
        arrays = ", ".join(_array_src(a) for a in self.inputs)
        tangents = ", ".join(_array_src(t) for t in self.tangents)
        lines = [self.source(), ""]
        if device == "cpu":
            lines.append('xp.config.update(execution="compiled")')
        lines += [f'dev = xp.device("{device}")',
                  f"args = [xp.asarray(a, device=dev) for a in ({arrays},)]",
                  f"tangents = [xp.asarray(t, device=dev) for t in ({tangents},)]",
                  f"print(xp.grad(f, argnums={argnums!r})(*args))",
                  "print(xp.jvp(f, tuple(args), tuple(tangents)))"]
        if self.second_order:
            lines.append(f"g = xp.grad(f, argnums={argnums!r})")
            lines.append("print(xp.jvp(g, tuple(args), tuple(tangents))[1])")
        return "\n".join(lines) + "\n"

    def __repr__(self):
        return "DerivativeProgram:\n" + self.reproduction("interpreter")

    def _repr_pretty_(self, p, cycle):
        p.text(repr(self))


def _array_src(a):
    flat = ", ".join(scalar_source(float(v)) for v in a.reshape(-1))
    text = f"np.array([{flat}], dtype=np.float64)"
    return text + (f".reshape({a.shape!r})" if a.ndim != 1 else "")


# ------------------------------------------------------------------------ generation

UNARY = ["xp.sin({})", "xp.cos({})", "xp.tanh({})", "xp.exp({})", "xp.expm1({})",
         "xp.log1p({0} * {0})", "xp.sqrt({0} * {0} + 1.0)", "xp.log({0} * {0} + 0.5)",
         "xp.atan({})", "xp.asinh({})", "xp.sinh({})", "xp.cosh({})", "xp.square({})",
         "xp.abs({})", "-{}", "{} ** 2", "{} ** 3", "({0} * {0} + 1.0) ** 0.75",
         "xp.hypot({}, 1.5)", "xp.clip({}, -1.0, 1.0)", "xp.reciprocal({0} * {0} + 1.0)",
         "xp.logaddexp({0}, -{0})", "xp.tan(xp.tanh({}))", "xp.acos(xp.tanh({}) * 0.9)",
         "xp.atanh(xp.tanh({}) * 0.9)", "xp.log2({0} * {0} + 1.0)", "xp.log10({0} * {0} + 1.0)",
         "xp.real(xp.exp(xp.astype({}, xp.complex128) * 1j))"]
BINARY = ["{} + {}", "{} - {}", "{} * {}", "{0} / ({1} * {1} + 1.0)", "xp.maximum({}, {})",
          "xp.minimum({}, {})", "xp.where({0} > {1}, {0}, {1} * 2.0)",
          "xp.atan2({0}, {1} * {1} + 1.0)", "xp.logaddexp({}, {})",
          "({0} * {0} + 1.0) ** {1}", "xp.hypot({0}, {1} + 3.0)"]


class _Builder:
    def __init__(self, draw, shapes):
        self.draw = draw
        self.shapes = list(shapes)      # per value
        self.lines = []
        self.ops = []

    def pick(self, pred=lambda s: True):
        ids = [i for i, s in enumerate(self.shapes) if pred(s)]
        if not ids:
            return None
        return ids[-1 - self.draw(st.integers(0, len(ids) - 1))]

    def define(self, expr, shape, op):
        i = len(self.shapes)
        self.shapes.append(tuple(shape))
        self.lines.append(f"v{i} = {expr}")
        self.ops.append(op)
        return i


def _axis(b, ndim):
    if ndim == 0 or b.draw(st.booleans()):
        return None
    return b.draw(st.integers(-ndim, ndim - 1))


def _reduced(shape, axis, keepdims=False):
    if axis is None:
        return () if not keepdims else (1,) * len(shape)
    a = axis % len(shape)
    return tuple(1 if i == a else s for i, s in enumerate(shape)) if keepdims else \
        tuple(s for i, s in enumerate(shape) if i != a)


def _gen_op(b):
    draw = b.draw
    family = draw(st.sampled_from(["unary", "unary", "binary", "binary", "reduce", "linalg",
                                   "shape", "index", "setitem", "sort", "scan"]))
    x = b.pick()
    s = b.shapes[x]
    n = len(s)
    if family == "unary":
        t = draw(st.sampled_from(UNARY))
        return b.define(t.format(f"v{x}"), s, t.split("(")[0])
    if family == "binary":
        y = b.pick(lambda r: _broadcasts(r, s))
        t = draw(st.sampled_from(BINARY))
        if draw(st.booleans()):
            x, y = y, x
        shape = np.broadcast_shapes(b.shapes[x], b.shapes[y])
        return b.define(t.format(f"v{x}", f"v{y}"), shape, t)
    if family == "reduce":
        name = draw(st.sampled_from(["sum", "mean", "prod", "max", "min", "var", "std"]))
        axis = _axis(b, n)
        keepdims = draw(st.booleans())
        count = math.prod(s) if axis is None else s[axis]
        if count == 0 and name in ("max", "min", "mean", "var", "std"):
            name = "sum"
        if name == "std" and count < 2:
            name = "var"     # the derivative of sqrt at a zero variance is infinite
        kw = f", axis={axis}" if axis is not None else ""
        kw += ", keepdims=True" if keepdims else ""
        return b.define(f"xp.{name}(v{x}{kw})", _reduced(s, axis, keepdims), name)
    if family == "scan" and n >= 1:
        name = draw(st.sampled_from(["cumulative_sum", "cumulative_prod", "diff"]))
        axis = draw(st.integers(-n, n - 1))
        if name == "diff":
            shape = list(s)
            shape[axis] = max(shape[axis] - 1, 0)
            return b.define(f"xp.diff(v{x}, axis={axis})", shape, name)
        include = draw(st.booleans())
        shape = list(s)
        shape[axis] += int(include)
        kw = ", include_initial=True" if include else ""
        return b.define(f"xp.{name}(v{x}, axis={axis}{kw})", shape, name)
    if family == "linalg" and n >= 1:
        kind = draw(st.sampled_from(["matmul", "vecdot", "tensordot"]))
        k = s[-1]
        if kind == "matmul":
            other = (k, draw(st.integers(1, 3))) if draw(st.booleans()) else (k,)
            y = b.pick(lambda r: r == other)
            ytext = f"v{y}" if y is not None else _param_expr(b, other)
            shape = s[:-1] + other[1:]
            return b.define(f"xp.matmul(v{x}, {ytext})", shape, kind)
        if kind == "vecdot":
            y = b.pick(lambda r: r == s)
            ytext = f"v{y}" if y is not None else _param_expr(b, s)
            return b.define(f"xp.vecdot(v{x}, {ytext})", s[:-1], kind)
        other = (k, draw(st.integers(1, 3)))
        ytext = _param_expr(b, other)
        return b.define(f"xp.tensordot(v{x}, {ytext}, axes=1)", s[:-1] + other[1:], kind)
    if family == "shape":
        name = draw(st.sampled_from(["reshape", "permute_dims", "flip", "roll", "concat", "stack",
                                     "expand_dims", "broadcast_to", "tile", "repeat", "moveaxis"]))
        if name == "reshape":
            target = "(-1,)" if math.prod(s) else "(0,)"
            return b.define(f"xp.reshape(v{x}, {target})", (math.prod(s),), name)
        if name == "permute_dims":
            perm = tuple(draw(st.permutations(range(n))))
            return b.define(f"xp.permute_dims(v{x}, {perm!r})", tuple(s[p] for p in perm), name)
        if name == "flip":
            return b.define(f"xp.flip(v{x})", s, name)
        if name == "roll":
            return b.define(f"xp.roll(v{x}, {draw(st.integers(-3, 3))})", s, name)
        if name in ("concat", "stack") and n >= 1:
            y = b.pick(lambda r: r == s)
            if name == "concat":
                shape = (s[0] * 2,) + s[1:]
                return b.define(f"xp.concat([v{x}, v{y}], axis=0)", shape, name)
            return b.define(f"xp.stack([v{x}, v{y}], axis=-1)", s + (2,), name)
        if name == "expand_dims" or n == 0:
            return b.define(f"xp.expand_dims(v{x}, axis=0)", (1,) + s, "expand_dims")
        if name == "broadcast_to":
            shape = (2,) + s
            return b.define(f"xp.broadcast_to(v{x}, {shape!r})", shape, name)
        if name == "tile":
            return b.define(f"xp.tile(v{x}, (2,))", s[:-1] + (s[-1] * 2,), name)
        if name == "repeat":
            return b.define(f"xp.repeat(v{x}, 2, axis=0)", (s[0] * 2,) + s[1:], name)
        return b.define(f"xp.moveaxis(v{x}, 0, -1)", s[1:] + s[:1], name)
    if family == "index" and n >= 1 and s[0] > 0:
        if draw(st.booleans()):
            idx = draw(st.lists(st.integers(-s[0], s[0] - 1), min_size=1, max_size=4))
            return b.define(f"xp.take(v{x}, xp.asarray({idx!r}, device=v0.device), axis=0)",
                            (len(idx),) + s[1:], "take")
        start = draw(st.integers(0, s[0] - 1))
        step = draw(st.sampled_from([1, 2, -1]))
        length = len(range(s[0])[start::step])
        # "..." for the other axes: the standard (and array-api-strict) wants every axis
        # of a multi-dimensional array indexed, or an ellipsis
        return b.define(f"v{x}[{start}::{step}, ...]", (length,) + s[1:], "getitem")
    if family == "setitem" and n >= 1 and s[0] > 0:
        i = draw(st.integers(-s[0], s[0] - 1))
        y = b.pick(lambda r: _broadcasts(r, s[1:]) and np.broadcast_shapes(r, s[1:]) == s[1:])
        new = b.define(f"xp.asarray(v{x}, copy=True)", s, "copy")
        value = f"xp.sin(v{y})" if y is not None else "0.5"
        b.lines.append(f"v{new}[{i}, ...] = {value}")
        b.ops.append("setitem")
        return new
    if family == "sort" and n >= 1:
        return b.define(f"xp.sort(v{x}, axis=-1)", s, "sort")
    t = draw(st.sampled_from(UNARY))
    return b.define(t.format(f"v{x}"), s, t.split("(")[0])


def _broadcasts(a, b):
    try:
        np.broadcast_shapes(a, b)
        return True
    except ValueError:
        return False


def _param_expr(b, shape):
    """A constant array of `shape` (a literal) on the arguments' device."""
    n = math.prod(shape)
    arr = np.array(b.draw(st.lists(st.floats(-1.5, 1.5), min_size=n, max_size=n)),
                   dtype=np.float64).reshape(shape)
    return f"xp.asarray({_array_src(arr)}, device=v0.device)"


@st.composite
def derivative_programs(draw, max_ops=6):
    n_args = draw(st.integers(1, 3))
    shapes = [draw(st.lists(st.integers(1, 3), max_size=2).map(tuple)) for _ in range(n_args)]
    elem = st.floats(-2.0, 2.0, allow_subnormal=False).map(lambda v: 0.25 if abs(v) < 1e-3 else v)
    def arrays(elements):
        return [np.array(draw(st.lists(elements, min_size=math.prod(s), max_size=math.prod(s))),
                         dtype=np.float64).reshape(s) for s in shapes]
    inputs = arrays(elem)
    tangents = arrays(st.floats(-1.0, 1.0))
    b = _Builder(draw, shapes)
    for _ in range(draw(st.integers(1, max_ops))):
        _gen_op(b)
    last = len(b.shapes) - 1
    w = _param_expr(b, b.shapes[last])
    b.lines.append(f"return xp.sum(v{last} * {w})")
    second = draw(st.integers(0, 2)) == 0
    return DerivativeProgram(b.lines, shapes, inputs, tangents, second, b.ops)


# -------------------------------------------------------------------- the reference side

def reference_function(program):
    import array_api_strict as strict
    namespace = {"xp": strict, "np": np, "math": math}
    exec(compile(program.function_source(), "<derivative program>", "exec"), namespace)
    f = namespace["f"]

    def value(arrays):
        return float(f(*[strict.asarray(a) for a in arrays]))
    return value


def central(fn, arrays, direction, h):
    plus = [a + h * d for a, d in zip(arrays, direction)]
    minus = [a - h * d for a, d in zip(arrays, direction)]
    return (fn(plus) - fn(minus)) / (2 * h)


def one_sided_agree(fn, arrays, direction, value):
    """Whether the forward and backward slopes at the point agree: they differ by the jump
    of the slope at a kink that lies exactly on the point (a tie of a sort or a max), where
    the central differences of steps h and h/2 agree with each other on the mean. Each side
    is extrapolated from steps h and h/2 (Richardson), so the O(h) terms cancel and a jump
    far smaller than the checks' tolerance is seen: compared raw, the two sides differed by
    h f'' already, and a tolerance above that let a jump of 0.007 through (a tie of a sort
    under a small weight; the gradient then took one side's slope, the differences the
    mean)."""
    def slope(h):
        moved = [a + h * d for a, d in zip(arrays, direction)]
        return (fn(moved) - value) / h
    forward = 2 * slope(H / 2) - slope(H)
    backward = 2 * slope(-H / 2) - slope(-H)
    return abs(forward - backward) <= 1e-6 * (1 + abs(forward) + abs(backward))


def expectations(program):
    """Reference value, gradient and directional derivative by central differences, or
    reject() where f is not finite or not smooth at the point."""
    f = reference_function(program)
    with np.errstate(all="ignore"):
        value = f(program.inputs)
        if not math.isfinite(value) or abs(value) > 1e8:
            reject()
        grads = []
        for k, a in enumerate(program.inputs):
            g = np.zeros(a.shape)
            for idx in np.ndindex(a.shape):
                e = [np.zeros(x.shape) for x in program.inputs]
                e[k][idx] = 1.0
                d1, d2 = central(f, program.inputs, e, H), central(f, program.inputs, e, H / 2)
                if not _smooth(d1, d2) or not one_sided_agree(f, program.inputs, e, value):
                    reject()
                g[idx] = (4 * d2 - d1) / 3          # Richardson
            grads.append(g)
        if not linear(f, program.inputs, grads):
            reject()
        d1 = central(f, program.inputs, program.tangents, H)
        d2 = central(f, program.inputs, program.tangents, H / 2)
        if not _smooth(d1, d2) or not one_sided_agree(f, program.inputs, program.tangents, value):
            reject()
    return value, grads, (4 * d2 - d1) / 3


def linear(fn, arrays, grads):
    """Whether the partial derivatives are a gradient: the difference quotient along a fixed
    generic direction is their dot product with it. Partial derivatives can exist where f is
    not differentiable: at a tie of a sort, moving one element alone leaves the middle of
    sort([x, x, x]) where it is (partials 0), moving all together moves it (slope 1)."""
    rng = np.random.RandomState(20261205)
    u = [rng.standard_normal(a.shape) for a in arrays]
    d1, d2 = central(fn, arrays, u, H), central(fn, arrays, u, H / 2)
    if not _smooth(d1, d2):
        return False
    du = (4 * d2 - d1) / 3
    dot = sum(float((g * v).sum()) for g, v in zip(grads, u))
    scale = sum(float((np.abs(g) * np.abs(v)).sum()) for g, v in zip(grads, u))
    return abs(du - dot) <= 1e-5 * (1 + abs(du) + scale)


def _smooth(d1, d2):
    return math.isfinite(d1) and math.isfinite(d2) and abs(d1 - d2) <= 1e-7 * (1 + abs(d1))


def close(actual, expected, scale):
    a = np.asarray(actual, np.float64)
    e = np.asarray(expected, np.float64)
    if a.shape != e.shape:
        return False
    return bool(np.all(np.abs(a - e) <= ATOL * scale + RTOL * np.abs(e)))


# ------------------------------------------------------------------------ the worker side

def run_derivative(msg):
    """In the worker: grad, jvp and (second order) the jvp of grad, grad of grad and grad at
    x +- h t and x +- h/2 t, on one device."""
    import tlaloc as xp
    namespace = {}
    exec(compile(msg["source"], "<program>", "exec"), namespace)
    f = namespace["f"]
    device = msg["device"]
    saved = xp.config.update(execution="compiled" if device == "cpu" else "auto")
    out = {}
    try:
        dev = xp.device(device)
        xs = tuple(xp.asarray(a, device=dev) for a in msg["inputs"])
        ts = tuple(xp.asarray(t, device=dev) for t in msg["tangents"])
        argnums = tuple(range(len(xs)))
        out["value"] = float(f(*xs))
        grad = xp.grad(f, argnums=argnums)
        out["grad"] = [np.asarray(g) for g in grad(*xs)]
        _, tangent = xp.jvp(f, xs, ts)
        out["jvp"] = float(tangent)
        if msg["second_order"]:
            _, hvp = xp.jvp(grad, xs, ts)
            out["hvp"] = [np.asarray(g) for g in hvp]

            def along(*a):
                return sum(xp.sum(g * t) for g, t in zip(grad(*a), ts))
            out["grad_grad"] = [np.asarray(g) for g in xp.grad(along, argnums=argnums)(*xs)]
            for name, step in (("plus", H), ("minus", -H), ("plus2", H / 2), ("minus2", -H / 2)):
                moved = tuple(x + step * t for x, t in zip(xs, ts))
                out["grad_" + name] = [np.asarray(g) for g in grad(*moved)]
    except Exception as exc:   # noqa: BLE001 - reported with what was computed
        from .execute import describe_exception
        return {"result": out, "error": describe_exception(exc)}
    finally:
        xp.config.update(**saved)
    return {"result": out}


# ------------------------------------------------------------------------------ checking

DEVICES = ("interpreter", "cpu")


def check_derivative_program(worker, program, stats, devices=DEVICES, expected=None):
    """Failures of `program` on `devices` (runner.Failure records)."""
    import time
    from .runner import Failure, TIMEOUT_S
    start = time.perf_counter()
    value, grads, directional = expected or expectations(program)
    stats.programs += 1
    stats.ops.update(program.ops)
    failures = []
    for device in devices:
        stats.runs[device] += 1
        msg = {"kind": "derivative", "source": program.source(), "device": device,
               "inputs": program.inputs, "tangents": program.tangents,
               "second_order": program.second_order}
        status, reply = worker.request(msg, TIMEOUT_S)
        repro = program.reproduction(device)
        if status != "reply":
            failures.append(Failure(status, device, reply, repro))
            continue
        r = reply["result"]
        problems = _derivative_problems(r, value, grads, directional)
        if problems:
            failures.append(Failure("mismatch", device, "\n".join(problems), repro))
        if "error" in reply:
            e = reply["error"]
            text = f"{e['type']}: {e['message']}\n{e['traceback']}"
            failures.append(Failure("exception", device, text, repro))
    for f in failures:
        stats.failures[f.kind] += 1
    stats.seconds += time.perf_counter() - start
    return failures


def _derivative_problems(r, value, grads, directional):
    problems = []
    scale = max([1.0, abs(value)] + [float(np.abs(g).max(initial=0)) for g in grads])
    if "value" in r and not math.isclose(r["value"], value, rel_tol=1e-9, abs_tol=1e-9 * scale):
        problems.append(f"value {r['value']!r}, expected {value!r}")
    for k, g in enumerate(r.get("grad", [])):
        if not close(g, grads[k], scale):
            problems.append(f"grad[{k}] = {np.asarray(g).tolist()}, central differences "
                            f"{grads[k].tolist()}")
    if "jvp" in r and not close(r["jvp"], directional, scale):
        problems.append(f"jvp = {r['jvp']!r}, central differences {directional!r}")
    if "grad_plus2" in r:
        fd1 = [(p - m) / (2 * H) for p, m in zip(r["grad_plus"], r["grad_minus"])]
        fd2 = [(p - m) / H for p, m in zip(r["grad_plus2"], r["grad_minus2"])]
        smooth = all(np.all(np.abs(a - c) <= 1e-6 * (1 + np.abs(a))) for a, c in zip(fd1, fd2))
        if smooth:
            hvp = [(4 * c - a) / 3 for a, c in zip(fd1, fd2)]
            s2 = max([scale] + [float(np.abs(h).max(initial=0)) for h in hvp])
            for name in ("hvp", "grad_grad"):
                for k, got in enumerate(r.get(name, [])):
                    if not close(got, hvp[k], s2):
                        problems.append(f"{name}[{k}] = {np.asarray(got).tolist()}, central "
                                        f"differences of grad {hvp[k].tolist()}")
    return problems
