"""Primitives of programs over a mesh: a layout constraint, manual regions, collectives.

A mesh is given to these rules as `axes`: ((mesh axis name, size), ...), row-major over the
mesh's device positions (what the program's `sdy.mesh @mesh` declares). A *spec* has one
tuple of mesh axis names per array axis (tlaloc/backends/spmd.py).

* `sharding_constraint(x, spec=...)`: `x` laid out as `spec` (`sdy.sharding_constraint`);
  the identity on values, so on the interpreter and in derivatives.
* `shard_map(*operands, body=, axes=, in_specs=, out_specs=, output=)`: a manual region
  (`sdy.manual_computation` over every mesh axis). `body` (a SubProgram) runs on each
  device's block of the operands; its results are blocks of the outputs. The interpreter
  runs the body once per mesh position, in step, so collectives see every block.
* Collectives, valid only in a manual region's body (they exchange blocks between the
  devices along mesh axes `axis`, a tuple of names): `psum`/`pmax`/`pmin`
  (`stablehlo.all_reduce`), `all_gather`, `psum_scatter` (`reduce_scatter`), `ppermute`
  (`collective_permute`), `all_to_all`, and `axis_index` (from `partition_id`).
"""
from __future__ import annotations

import math

import numpy as np

from .. import _dtypes as dt
from .._graph import Aval, bind
from ..lowering.stablehlo import emit_equations, tensor_type
from . import ad
from . import batching as bt
from . import lax
from .control import (Region, _batched_programs, _front, backward, programs, replay, results,
                      shared_value)
from .core import REGISTRY, declare, first_names, same_if_shape
from . import padding as pd


def _sdy(spec) -> str:
    return "[" + ", ".join("{" + ", ".join(f'"{a}"' for a in dim) + "}" for dim in spec) + "]"


# ----------------------------------------------------------------------------- the constraint

def _constraint_infer(x, *, spec):
    if len(spec) != len(x.shape):
        raise TypeError(f"internal: spec {spec} for shape {x.shape}")
    return x


def _constraint_emit(ctx, x, *, spec):
    return ctx.simple("sdy.sharding_constraint", x,
                      attrs=f"sharding = #sdy.sharding<@mesh, {_sdy(spec)}>")


sharding_constraint = declare(
    "sharding_constraint", infer=_constraint_infer, emit=_constraint_emit,
    impl=lambda x, *, spec: x, names=same_if_shape,
    source=lambda ctx, x, *, spec: x, padding=pd.ignore("sharding_constraint"),
    batch=lambda bdims, x, *, spec: (     # the mapped axis is not sharded
        bind(sharding_constraint, (x,), {"spec": bt.inserted(spec, bdims[0], ())}), bdims[0]),
    **ad.linear_rules(lambda ct, x, *, out, spec: (
        bind(sharding_constraint, (ct,), {"spec": spec}),)))


# ----------------------------------------------------------------------------- mesh geometry

def groups(axes, axis) -> list:
    """Device positions that exchange along the mesh axes `axis` (a tuple): one list per
    group, members ordered by their (row-major) index over `axis`."""
    names = [a for a, _ in axes]
    grid = np.arange(math.prod(s for _, s in axes)).reshape([s for _, s in axes])
    moved = np.moveaxis(grid, [names.index(a) for a in axis], range(-len(axis), 0))
    return moved.reshape(-1, math.prod(dict(axes)[a] for a in axis)).tolist()


def _group_size(axes, axis) -> int:
    return math.prod(dict(axes)[a] for a in axis)


def _replica_groups(axes, axis) -> str:
    g = groups(axes, axis)
    rows = ", ".join("[" + ", ".join(map(str, r)) + "]" for r in g)
    return f"replica_groups = dense<[{rows}]> : tensor<{len(g)}x{len(g[0])}xi64>"


def _channel(ctx) -> str:
    # a fresh SSA number doubles as a channel id: unique within the module
    return f"channel_handle = #stablehlo.channel_handle<handle = {ctx.fresh()[2:]}, type = 1>"


_COMBINE = {"sum": "stablehlo.add", "max": "stablehlo.maximum", "min": "stablehlo.minimum"}
_NUMPY_COMBINE = {"sum": np.add, "max": np.maximum, "min": np.minimum}


def _combiner_region(ctx, kind, dtype) -> str:
    t = tensor_type(Aval((), dtype))
    a, b, r = ctx.fresh(), ctx.fresh(), ctx.fresh()
    return (f'{{\n      ^bb0({a}: {t}, {b}: {t}):\n'
            f'        {r} = "{_COMBINE[kind]}"({a}, {b}) : ({t}, {t}) -> {t}\n'
            f'        "stablehlo.return"({r}) : ({t}) -> ()\n    }}')


def _not_in_region(name):
    def impl(*arrays, **params):
        raise RuntimeError(f"{name}: a collective runs only inside tlaloc.shard_map")
    return impl


# Collectives' interpreter rules: rule(blocks, axes, **params) -> blocks, where `blocks` has
# one array per mesh position (the operand on each device).
SIMULATE = {}


def _collective(name, infer, emit, simulate, batch, transpose=None, rules=None):
    """A collective; a linear one has `transpose(ct, *, axes, axis, ...) -> node` (its jvp
    applies it to the tangent, its vjp is the transpose: the collective that sends every
    cotangent back along the same exchange); others may give their `rules` (jvp, vjp)."""
    if transpose is not None:
        rules = ad.linear_rules(lambda ct, x, *, out, **params: (transpose(ct, **params),))
    # a block keeps its axes (and their names) through every collective, sizes may change
    prim = declare(name, infer=infer, emit=emit, impl=_not_in_region(name), names=first_names,
                   padding=pd.cannot(name, "collectives exchange whole blocks across the mesh"),
                   batch=batch, **(rules or {}))
    SIMULATE[prim] = simulate
    return prim


def _reduce_infer(kind):
    def infer(x, *, axes, axis):
        if x.dtype.kind not in dt.NUMERIC_KINDS or (kind != "sum" and x.dtype.kind == "c"):
            raise TypeError(f"p{kind}: unsupported dtype {x.dtype}")
        return x
    return infer


def _reduce_emit(kind):
    def emit(ctx, x, *, axes, axis):
        return ctx.op("stablehlo.all_reduce", (x,), ctx.in_avals, ctx.out_aval,
                      attrs=f"{_replica_groups(axes, axis)}, {_channel(ctx)}, use_global_device_ids",
                      regions=_combiner_region(ctx, kind, ctx.out_aval.dtype))
    return emit


def _reduce_simulate(kind):
    def simulate(blocks, axes, *, axis):
        out = list(blocks)
        for g in groups(axes, axis):
            total = blocks[g[0]]
            for p in g[1:]:
                total = _NUMPY_COMBINE[kind](total, blocks[p])
            for p in g:
                out[p] = total
        return out
    return simulate


# Batching a collective: it exchanges blocks between devices, so a mapped axis of the block
# is one more axis it carries along; only the block axes a collective names shift.
def _shifting(name, *keys):
    def rule(bdims, x, **params):
        (d,) = bdims
        moved = {k: bt.shifted(params[k], d) for k in keys}
        return bind(REGISTRY[name], (x,), {**params, **moved}), d
    return rule


# psum's transpose is psum: each device's block reaches every sum of its group
psum = _collective("psum", _reduce_infer("sum"), _reduce_emit("sum"), _reduce_simulate("sum"),
                   bt.unary("psum"), transpose=lambda ct, **params: bind(psum, (ct,), params))
# pmax/pmin: the derivative flows through the devices whose block holds the extreme, shared
# equally between ties (as reductions' max/min share it). Linearized, the result's tangent
# is psum(mask * t) / count (the same on every device of a group); its transpose gives each
# device mask * psum(ct) / count.

def _extreme_mask(x, out, params):
    mask = lax.compare(x, out, direction="EQ")
    count = bind(psum, (lax.convert(mask, dtype=x.aval.dtype),), params)
    return mask, count


def _extreme_jvp(tangents, x, *, out, **params):
    (t,) = tangents
    if t is None:
        return None
    mask, count = _extreme_mask(x, out, params)
    return lax.divide(bind(psum, (lax.select(mask, t, ad.zeros(t)),), params), count)


def _extreme_vjp(ct, x, *, out, **params):
    mask, count = _extreme_mask(x, out, params)
    share = lax.divide(bind(psum, (ct,), params), count)
    return (lax.select(mask, share, ad.zeros(share)),)


pmax = _collective("pmax", _reduce_infer("max"), _reduce_emit("max"), _reduce_simulate("max"),
                   bt.unary("pmax"), rules={"jvp": _extreme_jvp, "vjp": _extreme_vjp})
pmin = _collective("pmin", _reduce_infer("min"), _reduce_emit("min"), _reduce_simulate("min"),
                   bt.unary("pmin"), rules={"jvp": _extreme_jvp, "vjp": _extreme_vjp})


def _with_size(shape, dim, size):
    return tuple(size if k == dim else n for k, n in enumerate(shape))


def _gather_infer(x, *, axes, axis, dim):
    return Aval(_with_size(x.shape, dim, x.shape[dim] * _group_size(axes, axis)), x.dtype, x.names)


def _gather_emit(ctx, x, *, axes, axis, dim):
    return ctx.simple("stablehlo.all_gather", x,
                      attrs=f"all_gather_dim = {dim} : i64, {_replica_groups(axes, axis)}, "
                            f"{_channel(ctx)}, use_global_device_ids")


def _gather_simulate(blocks, axes, *, axis, dim):
    out = list(blocks)
    for g in groups(axes, axis):
        whole = np.concatenate([blocks[p] for p in g], axis=dim)
        for p in g:
            out[p] = whole
    return out


all_gather = _collective("all_gather", _gather_infer, _gather_emit, _gather_simulate,
                         _shifting("all_gather", "dim"),
                         transpose=lambda ct, **params: bind(psum_scatter, (ct,), params))


def _scatter_infer(x, *, axes, axis, dim):
    n = _group_size(axes, axis)
    if x.dtype.kind not in dt.NUMERIC_KINDS:
        raise TypeError(f"psum_scatter: unsupported dtype {x.dtype}")
    return Aval(_with_size(x.shape, dim, x.shape[dim] // n), x.dtype, x.names)


def _scatter_emit(ctx, x, *, axes, axis, dim):
    return ctx.op("stablehlo.reduce_scatter", (x,), ctx.in_avals, ctx.out_aval,
                  attrs=f"scatter_dimension = {dim} : i64, {_replica_groups(axes, axis)}, "
                        f"{_channel(ctx)}, use_global_device_ids",
                  regions=_combiner_region(ctx, "sum", ctx.out_aval.dtype))


def _scatter_simulate(blocks, axes, *, axis, dim):
    out = list(blocks)
    for g in groups(axes, axis):
        total = blocks[g[0]]
        for p in g[1:]:
            total = total + blocks[p]
        for j, part in enumerate(np.split(total, len(g), axis=dim)):
            out[g[j]] = part
    return out


psum_scatter = _collective("psum_scatter", _scatter_infer, _scatter_emit, _scatter_simulate,
                           _shifting("psum_scatter", "dim"),
                           transpose=lambda ct, **params: bind(all_gather, (ct,), params))


def _permute_infer(x, *, axes, axis, perm):
    return x


def _permute_emit(ctx, x, *, axes, axis, perm):
    pairs = [(g[s], g[d]) for g in groups(axes, axis) for s, d in perm]
    rows = ", ".join(f"[{s}, {d}]" for s, d in pairs)
    return ctx.simple("stablehlo.collective_permute", x,
                      attrs=f"source_target_pairs = dense<[{rows}]> : tensor<{len(pairs)}x2xi64>, "
                            f"{_channel(ctx)}")


def _permute_simulate(blocks, axes, *, axis, perm):
    out = [np.zeros_like(b) for b in blocks]    # a device no pair sends to receives zeros
    for g in groups(axes, axis):
        for s, d in perm:
            out[g[d]] = blocks[g[s]]
    return out


ppermute = _collective("ppermute", _permute_infer, _permute_emit, _permute_simulate,
                       bt.unary("ppermute"),
                       transpose=lambda ct, *, axes, axis, perm: bind(
                           ppermute, (ct,), {"axes": axes, "axis": axis,
                                             "perm": tuple((d, s) for s, d in perm)}))


def _all_to_all_infer(x, *, axes, axis, split_dim, concat_dim):
    n = _group_size(axes, axis)
    shape = _with_size(x.shape, split_dim, x.shape[split_dim] // n)
    shape = _with_size(shape, concat_dim, shape[concat_dim] * n)
    return Aval(shape, x.dtype, x.names)


def _all_to_all_emit(ctx, x, *, axes, axis, split_dim, concat_dim):
    n = _group_size(axes, axis)
    return ctx.simple("stablehlo.all_to_all", x,
                      attrs=f"split_dimension = {split_dim} : i64, concat_dimension = "
                            f"{concat_dim} : i64, split_count = {n} : i64, "
                            f"{_replica_groups(axes, axis)}, {_channel(ctx)}")


def _all_to_all_simulate(blocks, axes, *, axis, split_dim, concat_dim):
    out = list(blocks)
    for g in groups(axes, axis):
        parts = [np.split(blocks[p], len(g), axis=split_dim) for p in g]
        for j, p in enumerate(g):
            out[p] = np.concatenate([parts[i][j] for i in range(len(g))], axis=concat_dim)
    return out


all_to_all = _collective("all_to_all", _all_to_all_infer, _all_to_all_emit, _all_to_all_simulate,
                         _shifting("all_to_all", "split_dim", "concat_dim"),
                         transpose=lambda ct, *, axes, axis, split_dim, concat_dim: bind(
                             all_to_all, (ct,), {"axes": axes, "axis": axis,
                                                 "split_dim": concat_dim, "concat_dim": split_dim}))

_I32 = Aval((), dt.int32)


def _index_emit(ctx, *, axes, axis):
    # partition_id is the device's mesh position (row-major): its index along `axis` is
    # (position // stride) % size, stride = the product of the sizes of the axes after it
    names = [a for a, _ in axes]
    sizes = dict(axes)
    k = names.index(axis[0])
    stride = math.prod(s for _, s in axes[k + 1:])
    u32 = Aval((), dt.uint32)
    pid = ctx.op("stablehlo.partition_id", (), (), u32)
    pos = ctx.op("stablehlo.convert", (pid,), (u32,), _I32)
    if stride > 1:
        pos = ctx.op("stablehlo.divide", (pos, ctx.constant(stride, _I32)), (_I32, _I32), _I32)
    return ctx.op("stablehlo.remainder", (pos, ctx.constant(sizes[axis[0]], _I32)),
                  (_I32, _I32), _I32)


def _index_simulate(blocks, axes, *, axis):
    names = [a for a, _ in axes]
    coords = list(np.ndindex(*[s for _, s in axes]))
    return [np.asarray(c[names.index(axis[0])], np.int32) for c in coords]


axis_index = _collective("axis_index", lambda *, axes, axis: _I32, _index_emit, _index_simulate,
                         None)   # no operands: never batched


# ----------------------------------------------------------------------------- manual regions

def _map_infer(*operands, body, axes, in_specs, out_specs, output):
    block = body.out_avals[output]
    spec = out_specs[output]
    shape = tuple(n * _group_size(axes, dim) for n, dim in zip(block.shape, spec))
    return Aval(shape, block.dtype, block.names)


def _map_emit_all(ctx, *operands, body, axes, in_specs, out_specs):
    c = ctx.child()
    args = [(c.fresh(), a) for a in body.in_avals]
    names = emit_equations(c, body.eqns, [n for n, _ in args], list(body.in_avals))
    region = c.region(args, [names[s] for s in body.outputs], body.out_avals)
    end = region.rindex('"stablehlo.return"')     # the region's own return (the last one)
    region = region[:end] + '"sdy.return"' + region[end + len('"stablehlo.return"'):]
    out_avals = [_map_infer(*ctx.in_avals, body=body, axes=axes, in_specs=in_specs,
                            out_specs=out_specs, output=k) for k in range(len(body.outputs))]
    per_value = lambda specs: "#sdy.sharding_per_value<[" + ", ".join(
        f"<@mesh, {_sdy(s)}>" for s in specs) + "]>"
    manual = ", ".join(f'"{a}"' for a, _ in axes)
    return ctx.op_results(
        "sdy.manual_computation", operands, ctx.in_avals, out_avals,
        attrs=f"in_shardings = {per_value(in_specs)}, out_shardings = {per_value(out_specs)}, "
              f"manual_axes = #sdy<manual_axes{{{manual}}}>", regions=[region])


def _block_index(shape, spec, axes) -> list:
    """The slices of an array of `shape` that each mesh position holds under `spec`."""
    names = [a for a, _ in axes]
    sizes = dict(axes)
    out = []
    for coords in np.ndindex(*[s for _, s in axes]):
        index = []
        for n, dim in zip(shape, spec):
            parts, k = 1, 0
            for a in dim:          # the block's index along this array axis, row-major
                k = k * sizes[a] + coords[names.index(a)]
                parts *= sizes[a]
            size = n // parts
            index.append(slice(k * size, (k + 1) * size))
        out.append(tuple(index))
    return out


def _map_run_all(*arrays, body, axes, in_specs, out_specs):
    n_pos = math.prod(s for _, s in axes)
    env = [[a[i] for i in _block_index(a.shape, spec, axes)]          # slot -> blocks
           for a, spec in zip(arrays, in_specs)]
    for prim, params, slots, want in body.eqns:
        operands = [env[s] for s in slots]
        simulate = SIMULATE.get(prim)
        if simulate is not None:
            rest = {k: v for k, v in params.items() if k != "axes"}
            blocks = simulate(operands[0] if operands else [None] * n_pos, axes, **rest)
        elif isinstance(prim, Region):
            blocks = [shared_value({}, prim, params, slots, [o[p] for o in operands])
                      for p in range(n_pos)]
        else:
            blocks = [prim.impl(*[o[p] for o in operands], **params) for p in range(n_pos)]
        env.append([np.asarray(b, dtype=want.dtype.numpy) for b in blocks])
    results = []
    for k, s in enumerate(body.outputs):
        aval = _map_infer(*arrays, body=body, axes=axes, in_specs=in_specs, out_specs=out_specs,
                          output=k)
        out = np.empty(aval.shape, aval.dtype.numpy)
        first = {}
        for p, index in enumerate(_block_index(aval.shape, out_specs[k], axes)):
            key = tuple((i.start, i.stop) for i in index)
            if key not in first:
                first[key] = p
                out[index] = env[s][p]
            elif not np.array_equal(env[s][p], env[s][first[key]], equal_nan=True):
                # XLA would return one device's block, unspecified which: refused here
                raise ValueError(
                    f"shard_map: result {k} is laid out with copies over the mesh axes "
                    f"{_unused(axes, out_specs[k])}, but its blocks differ between those "
                    "devices; combine them (psum, pmean, all_gather) or lay the result out "
                    "over those axes")
        results.append(out)
    return results


def _map_batch_all(dims, *operands, body, axes, in_specs, out_specs):
    # the mapped axis is a new first axis of every block, not sharded: the body runs on the
    # batch of each device's blocks, its collectives carry the axis along
    size = bt.size_of(dims, operands)
    device = operands[0].device
    ops, op_dims = _front(operands, dims, size)
    n_out = len(body.outputs)
    (sub,), captured = _batched_programs([body], op_dims, size, device, [[0] * n_out],
                                         "a batched shard_map body")
    in_specs = tuple(s if d is None else ((),) + s for s, d in zip(in_specs, op_dims)) + tuple(
        ((),) * len(c.aval.shape) for c in captured)
    out_specs = tuple(((),) + s for s in out_specs)
    nodes = results(shard_map, (*ops, *captured), {"body": sub, "axes": axes, "in_specs": in_specs,
                                                   "out_specs": out_specs}, range(n_out), device)
    return {k: (n, 0) for k, n in enumerate(nodes)}


# ----------------------------------------------------------------------------- derivatives
#
# A manual region's derivative is a manual region of the body's derivative. Forward mode:
# the body's jvp on the blocks, tangents laid out as their primals. Reverse mode: each
# device's block of an input is a copy of a part of the global input, and a block of a
# result that several devices hold (the mesh axes its layout leaves out) is read from one of
# them (index 0 along those axes). So a result's cotangent goes to that device only (zeros
# on the others), the body's backward pass runs on every device (collectives transpose to
# collectives), and an input's cotangent sums those of its copies (a psum over the mesh axes
# its layout leaves out).

def _unused(axes, spec):
    used = {a for dim in spec for a in dim}
    return tuple(a for a, _ in axes if a not in used)


def _on_first_device(ct, axes, along):
    """`ct` on the devices at index 0 along the mesh axes `along`, zeros on the others."""
    if not along:
        return ct
    keep = None
    for a in along:
        index = bind(axis_index, (), {"axes": axes, "axis": (a,)}, ct.device)
        first = lax.compare(index, ad.const(index, 0), direction="EQ")
        keep = first if keep is None else lax.bitwise_and(keep, first)
    mask = lax.broadcast_in_dim(keep, shape=ct.aval.shape, dims=())
    return lax.select(mask, ct, ad.zeros(ct))


def _derived_region(derivative, avals, inputs, in_specs, out_specs, axes, device):
    """The result nodes of a manual region that runs `derivative` (a node function) on the
    blocks (of `avals`) of `inputs` laid out as `in_specs`; the values it reads from outside
    become operands with copies on every device."""
    (sub,), captured = programs([derivative], avals, device,
                                "the derivative of a shard_map function")
    specs = tuple(in_specs) + tuple(((),) * len(c.aval.shape) for c in captured)
    params = {"body": sub, "axes": axes, "in_specs": specs, "out_specs": tuple(out_specs)}
    return results(shard_map, (*inputs, *captured), params, range(len(out_specs)), device)


def _floating(aval) -> bool:
    return aval.dtype.kind in dt.FLOATING_KINDS


def _map_jvp_all(tangents, *operands, out, wanted, body, axes, in_specs, out_specs):
    keys = [k for k in wanted if _floating(body.out_avals[k])]
    if not keys:
        return {}
    live = [i for i, t in enumerate(tangents) if t is not None]
    n = len(operands)

    def derivative(*nodes):
        tan = [None] * n
        for j, i in enumerate(live):
            tan[i] = nodes[n + j]
        env, tenv = replay(body, nodes[:n], out.device, tan)
        return [ad.zeros(env[body.outputs[k]]) if tenv[body.outputs[k]] is None
                else tenv[body.outputs[k]] for k in keys]

    nodes = _derived_region(derivative, list(body.in_avals) + [body.in_avals[i] for i in live],
                            (*operands, *[tangents[i] for i in live]),
                            list(in_specs) + [in_specs[i] for i in live],
                            [out_specs[k] for k in keys], axes, out.device)
    return dict(zip(keys, nodes))


def _map_vjp_all(cts, *operands, out, body, axes, in_specs, out_specs):
    n = len(operands)
    keys = [k for k in sorted(cts) if _floating(body.out_avals[k])]
    wanted = [i for i, o in enumerate(operands) if o.prim is not None and ad.differentiable(o)]
    if not keys or not wanted:
        return (None,) * n

    def derivative(*nodes):
        env, _ = replay(body, nodes[:n], out.device)
        out_cts = [None] * len(body.outputs)
        for j, k in enumerate(keys):
            out_cts[k] = _on_first_device(nodes[n + j], axes, _unused(axes, out_specs[k]))
        in_cts = backward(body, env, out_cts)
        found = []
        for i in wanted:
            c = ad.zeros(nodes[i]) if in_cts[i] is None else in_cts[i]
            copies = _unused(axes, in_specs[i])
            found.append(bind(psum, (c,), {"axes": axes, "axis": copies}) if copies else c)
        return found

    nodes = _derived_region(derivative, list(body.in_avals) + [body.out_avals[k] for k in keys],
                            (*operands, *[cts[k] for k in keys]),
                            list(in_specs) + [out_specs[k] for k in keys],
                            [in_specs[i] for i in wanted], axes, out.device)
    found = [None] * n
    for i, node in zip(wanted, nodes):
        found[i] = node
    return tuple(found)


shard_map = Region("shard_map", infer=_map_infer, emit_all=_map_emit_all, run_all=_map_run_all,
                   batch_all=_map_batch_all, jvp_all=_map_jvp_all, vjp_all=_map_vjp_all,
                   padding=pd.cannot("shard_map", "its body runs on blocks of the padded arrays"))


__all__ = ["sharding_constraint", "shard_map", "psum", "pmax", "pmin", "all_gather",
           "psum_scatter", "ppermute", "all_to_all", "axis_index", "groups", "SIMULATE"]
