"""Program -> StableHLO text.

The emitter writes MLIR's generic operation form (`"stablehlo.add"(%a, %b) : (...) -> ...`)
because one syntax then serves every op; primitives with regions write their region inline.
Literals are written as bit patterns, so nan, inf, -0.0 and denormals survive exactly.
"""
from __future__ import annotations

import numpy as np

from .._dtypes import DType, INTEGER_KINDS
from .._dtypes import bool as _BOOL


def tensor_type(aval) -> str:
    shape, dtype = aval.shape, aval.dtype
    if shape:
        return f"tensor<{'x'.join(map(str, shape))}x{dtype.mlir}>"
    return f"tensor<{dtype.mlir}>"


_UINT_OF_BITS = {16: np.uint16, 32: np.uint32, 64: np.uint64}
_COMPARE_TYPE = {"b": "UNSIGNED", "u": "UNSIGNED", "i": "SIGNED"}


def _float_bits(value, np_dtype) -> str:
    raw = np.asarray(value, dtype=np_dtype).reshape(()).view(_UINT_OF_BITS[np_dtype.itemsize * 8])
    return f"0x{int(raw):0{np_dtype.itemsize * 2}X}"


def scalar_literal(value, dtype: DType) -> str:
    """The element of a `dense<...>` attribute holding `value` as `dtype`."""
    if dtype.kind == "b":
        return "true" if value else "false"
    if dtype.kind in INTEGER_KINDS:
        return str(int(value))
    if dtype.kind == "f":
        return _float_bits(value, dtype.numpy)
    part = np.dtype(np.float32 if dtype.bits == 64 else np.float64)
    c = complex(value)
    return f"({_float_bits(c.real, part)}, {_float_bits(c.imag, part)})"


class EmitContext:
    """What a primitive's `emit` rule sees: the avals involved and a way to write ops."""

    def __init__(self, platform=None):
        self.lines = []
        self._count = 0
        self.in_avals = ()
        self.out_aval = None
        self.platform = platform  # of the device the program is for ("cpu", "cuda", ...), if known
        self.producer = {}  # result name -> the op that defined it (for peephole choices)
        self._broadcast_of = {}  # result of a broadcast_in_dim -> its operand
        self._constant = set()   # results that depend on no program input
        self._scalar_values = {}  # 0-d constants' results -> their values
        self.notes = {}          # result -> what an emit rule noted of it for later rules
        self._shared = {}        # results of multi-result ops, by what computes them (`once`)

    def fresh(self) -> str:
        self._count += 1
        return f"%t{self._count}"

    # ------------------------------------------------------------------ regions
    #
    # Ops with regions (stablehlo.while, case, if) write their bodies in a child context:
    # its own lines and shared results, the parent's SSA counter (names stay unique in the
    # module). A region may read the enclosing scope's values by name (case and if branches
    # do; while bodies take everything they need as block arguments).

    def child(self) -> "EmitContext":
        """A context for one region's body."""
        region = EmitContext(self.platform)
        region.fresh = self.fresh
        return region

    def region(self, args, results, result_avals) -> str:
        """This child context's lines as one region's text: block arguments `args`
        ((name, aval) pairs), returning `results` (names of `result_avals`)."""
        head = ""
        if args:
            head = "  ^bb0(" + ", ".join(f"{n}: {tensor_type(a)}" for n, a in args) + "):\n"
        body = "".join(f"    {line}\n" for line in self.lines)
        types = ", ".join(tensor_type(a) for a in result_avals)
        return (f"{{\n{head}{body}"
                f'    "stablehlo.return"({", ".join(results)}) : ({types}) -> ()\n}}')

    def op_results(self, name, operands, in_avals, out_avals, attrs="", regions=()) -> list:
        """Write one generic-form op with several results; returns their names."""
        result = self.fresh()
        n = len(out_avals)
        head = f"{result}:{n}" if n > 1 else result
        ins = ", ".join(tensor_type(a) for a in in_avals)
        outs = ", ".join(tensor_type(a) for a in out_avals)
        attr = f" {{{attrs}}}" if attrs else ""
        reg = f" ({', '.join(regions)})" if regions else ""
        self.lines.append(f'{head} = "{name}"({", ".join(operands)}){reg}{attr} : '
                          f"({ins}) -> ({outs})")
        names = [f"{result}#{i}" for i in range(n)] if n > 1 else [result]
        for r in names:
            self.producer[r] = name
        return names

    def once(self, key, make):
        """`make()`, written once per `key` in this context: the nodes that each take one
        result of a multi-result op (one node per result, told apart by a parameter) share
        the op. `key` names the op and its operands (SSA names) and static parameters."""
        found = self._shared.get(key)
        if found is None:
            found = self._shared[key] = make()
        return found

    def op(self, name, operands, in_avals, out_aval, attrs="", regions="") -> str:
        """Write one generic-form op and return its result name."""
        result = self.fresh()
        ins = ", ".join(tensor_type(a) for a in in_avals)
        attr = f" {{{attrs}}}" if attrs else ""
        reg = f" ({regions})" if regions else ""
        self.lines.append(f'{result} = "{name}"({", ".join(operands)}){reg}{attr} : '
                          f"({ins}) -> {tensor_type(out_aval)}")
        self.producer[result] = name
        if name == "stablehlo.broadcast_in_dim":
            self._broadcast_of[result] = operands[0]
        if all(o in self._constant for o in operands):
            self._constant.add(result)
        return result

    def constant(self, value, aval) -> str:
        """A splat constant of `aval` holding `value` (for values fixed by the program's
        structure, such as the 0 of a sum; user scalars are inputs, not constants)."""
        result = self.fresh()
        t = tensor_type(aval)
        self.lines.append(f'{result} = "stablehlo.constant"() '
                          f'{{value = dense<{scalar_literal(value, aval[1])}> : {t}}} : () -> {t}')
        self.producer[result] = "stablehlo.constant"
        self._constant.add(result)
        if not aval[0]:
            self._scalar_values[result] = value
        return result

    def scalar_value(self, x):
        """The value of `x` where it is a 0-d constant of this program, else None."""
        return self._scalar_values.get(x)

    def origin(self, x) -> str:
        """The op that computes `x`'s elements, looking through broadcasts (XLA's
        simplifier looks through them too); "" for a program input."""
        while x in self._broadcast_of:
            x = self._broadcast_of[x]
        return self.producer.get(x, "")

    def is_constant(self, x) -> bool:
        """Whether `x` depends on no program input (XLA folds it into a literal)."""
        return x in self._constant

    def simple(self, name, *operands, attrs="") -> str:
        """The common case: an op on this equation's operands giving its result."""
        return self.op(name, operands, self.in_avals, self.out_aval, attrs)

    def compare(self, x, y, aval, direction) -> str:
        """`x <direction> y` elementwise (EQ, NE, LT, LE, GT, GE) for operands of `aval`."""
        ctype = _COMPARE_TYPE.get(aval[1].kind, "FLOAT")
        return self.op("stablehlo.compare", (x, y), (aval, aval), type(aval)(aval[0], _BOOL),
                       attrs=f"comparison_direction = #stablehlo<comparison_direction {direction}>, "
                             f"compare_type = #stablehlo<comparison_type {ctype}>")

    def select(self, pred, on_true, on_false, aval) -> str:
        """`on_true` where `pred` holds, else `on_false` (both of `aval`)."""
        mask = type(aval)(aval[0], _BOOL)
        return self.op("stablehlo.select", (pred, on_true, on_false), (mask, aval, aval), aval)

    def rounded_product(self, x, aval) -> str:
        """`x` (a real float product) kept a rounded product where it feeds a sum: XLA:CPU's
        LLVM backend contracts a product and the add or subtract it feeds in the same loop
        into one FMA, whose product is never rounded and so never overflows on its own
        ((a + a) - a * a at float32's largest a was inf, not inf - inf = nan), and no compile
        option reaches that backend. It contracts a product of one use only; this gives `x`
        a second: `select(x != x, nan, x)`, which is `x` (docs/runtime-notes-cpu.md)."""
        isnan = self.compare(x, x, aval, "NE")
        return self.select(isnan, self.constant(float("nan"), aval), x, aval)

    def barrier(self, x, aval) -> str:
        """`x` behind an optimization barrier: XLA's simplifier cannot look through it (used
        where one of its rewrites would change a result, docs/runtime-notes-cpu.md)."""
        return self.op("stablehlo.optimization_barrier", (x,), (aval,), aval)


def _broadcast_scalars(ctx, operands, shape):
    """An elementwise op's 0-d operands broadcast to its result's shape (StableHLO's
    elementwise ops take operands of one shape)."""
    avals = list(ctx.in_avals)
    for i, a in enumerate(avals):
        if not a.shape:
            avals[i] = type(a)(shape, a.dtype)
            operands[i] = ctx.op("stablehlo.broadcast_in_dim", (operands[i],), (a,), avals[i],
                                 attrs="broadcast_dimensions = array<i64>")
    ctx.in_avals = tuple(avals)
    return operands


def emit_equations(ctx, eqns, names, avals, emit_of=None, locations=None) -> list:
    """Write straight-line equations (prim, params, input slots, aval) into `ctx`: `names`
    and `avals` hold the inputs' SSA names and avals (slots 0..n-1); equation i writes slot
    n + i. Returns the names of all slots. `emit_of(prim)` picks the emit rule (default:
    `prim.emit`). `ctx.in_avals`/`ctx.out_aval` are those of the caller again afterwards
    (a primitive's formula emits its own equations through this, inside its emit rule)."""
    saved = ctx.in_avals, ctx.out_aval
    names, avals = list(names), list(avals)
    for i, (prim, params, slots, aval) in enumerate(eqns):
        start = len(ctx.lines)
        ctx.in_avals = tuple([avals[s] for s in slots])
        ctx.out_aval = aval
        operands = [names[s] for s in slots]
        if prim.elementwise and aval.shape:
            operands = _broadcast_scalars(ctx, operands, aval.shape)
        emit = prim.emit if emit_of is None else emit_of(prim)
        names.append(emit(ctx, *operands, **params))
        avals.append(aval)
        if locations is not None and locations[i] is not None:
            _locate(ctx.lines, start, locations[i], prim.name)
    ctx.in_avals, ctx.out_aval = saved
    return names


def _locate(lines, start, where, opname) -> None:
    """Give the ops an equation wrote (lines[start:]) the user's source line, as MLIR
    locations `loc("function/op"("file.py":line:1))`: XLA keeps them as HLO metadata
    (op_name, source_file, source_line), so its profiles and messages name the line.
    `where` is (file, line, function), recorded while a profile or tlaloc.explain is on."""
    file, line, function = where
    file = file.replace("\\", "\\\\").replace('"', '\\"')
    name = f"{function}/{opname}".replace("\\", "\\\\").replace('"', '\\"')
    loc = f' loc("{name}"("{file}":{int(line)}:1))'
    for k in range(start, len(lines)):
        text = lines[k]
        # an op's text ends with its type; region bodies (inside the text) keep theirs
        if text.startswith(("%", '"')) and text.endswith((">", ")")):
            lines[k] = text + loc


def lower_program(program, name="main", *, module_attrs="", prelude="", arg_attrs=None) -> str:
    """The StableHLO module text of a Program. A program over a mesh of devices adds module
    attributes (`mhlo.num_partitions`), a `prelude` before the function (`sdy.mesh`), and
    per-argument attributes (`sdy.sharding`, with any donation among them)."""
    ctx = EmitContext(getattr(program.device, "platform", None))
    n_in = len(program.in_avals)
    names = emit_equations(ctx, program.eqns, [f"%arg{i}" for i in range(n_in)],
                           list(program.in_avals),
                           locations=getattr(program, "locations", None))
    out_avals = program.out_avals()
    # A donated input's buffer may be reused for an output of the same type (in place).
    donor = " {jax.buffer_donor = true}"
    if arg_attrs is None:
        args = ", ".join(f"%arg{i}: {tensor_type(a)}{donor if i in program.donated else ''}"
                         for i, a in enumerate(program.in_avals))
    else:
        args = ", ".join(f"%arg{i}: {tensor_type(a)}{f' {{{attrs}}}' if attrs else ''}"
                         for i, (a, attrs) in enumerate(zip(program.in_avals, arg_attrs)))
    results = ", ".join(tensor_type(a) for a in out_avals)
    body = "\n".join("    " + line for line in ctx.lines)
    ret = ", ".join(names[s] for s in program.outputs)
    head = f"module @tlaloc attributes {{{module_attrs}}} {{\n" if module_attrs else "module @tlaloc {\n"
    if prelude:
        head += f"  {prelude}\n"
    return (f"{head}  func.func public @{name}({args}) -> ({results}) {{\n"
            f"{body}\n    \"func.return\"({ret}) : ({results}) -> ()\n  }}\n}}\n")
