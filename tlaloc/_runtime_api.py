"""The public runtime functions: evaluation, cache statistics and program inspection."""
from __future__ import annotations

import dataclasses

from . import _context
from ._array import Array
from ._devices import STATS
from ._graph import DONATED, _Plan, evaluate
from .lowering import lower_program


def eval(*arrays):
    """Compute every pending array among `arrays` now, in one program per device, and wait
    until their values exist. Returns its arguments (a single array when given one)."""
    if len(arrays) == 1 and _context.observer is None:
        # the common call: one array, often computed already (a jit result): nothing to plan
        a = arrays[0]
        if isinstance(a, Array):
            node = a._node
            value = node.value
            if value is not None and value is not DONATED:
                node.device.backend.ready(value)
                return a
    for a in arrays:
        if not isinstance(a, Array):
            raise TypeError(f"tlaloc.eval: expected tlaloc arrays, got {type(a).__name__}")
    nodes = [a._node for a in arrays]
    evaluate(nodes, "tlaloc.eval()")
    for node in nodes:      # PJRT devices may run asynchronously (GPUs): wait for the values
        node.device.backend.ready(node.value)
    return arrays[0] if len(arrays) == 1 else arrays


# ----------------------------------------------------------------------------- cache_info

_MEANINGS = {
    "hits": "programs run from a ready compiled executable",
    "misses": "program structures that had to be compiled (or loaded from disk)",
    "compiles": "XLA compilations",
    "disk_hits": "executables loaded from the persistent disk cache",
    "compile_seconds": "seconds spent compiling or loading",
    "interpreted": "programs run by the NumPy interpreter (before a structure is compiled)",
    "immediate": "operations on small host arrays run as they were recorded",
    "interpret_seconds": "seconds those interpreted runs took",
    "compiled_at_once": "structures compiled at first sight (one run would cost a compile)",
    "compiled_after_interpreting": "structures compiled once interpreting cost a compile",
    "predicted_compile_seconds": "the compile seconds the tier policy predicted for those",
}


class CacheInfo(dict):
    """tlaloc.cache_info(): a dict of the compile-cache counters whose `str`/`repr` is a
    short table saying what each means."""

    def __str__(self):
        width = max(len(k) for k in self)
        lines = ["tlaloc compile cache:"]
        for k, v in self.items():
            value = f"{v:.3f}" if isinstance(v, float) else str(v)
            lines.append(f"  {k.ljust(width)}  {value.rjust(8)}  {_MEANINGS.get(k, '')}")
        return "\n".join(lines)

    __repr__ = __str__


def cache_info() -> dict:
    """Compile-cache and tier statistics of this process: hits, misses, compiles, disk_hits,
    compile_seconds, interpreted, immediate, interpret_seconds, compiled_at_once,
    compiled_after_interpreting, predicted_compile_seconds (docs/execution.md)."""
    return CacheInfo(dataclasses.asdict(STATS))


def reset_cache_info() -> None:
    for field in dataclasses.fields(STATS):
        setattr(STATS, field.name, field.default)


def stablehlo(*arrays) -> str:
    """The StableHLO module that would compute the pending `arrays` (computes nothing).
    Arrays that already hold values appear as inputs."""
    for a in arrays:
        if not isinstance(a, Array):
            raise TypeError(f"tlaloc.stablehlo: expected tlaloc arrays, got {type(a).__name__}")
    nodes = [a._node for a in arrays]
    devices = {n.device for n in nodes}
    if len(devices) > 1:
        raise ValueError("tlaloc.stablehlo: arrays are on different devices")
    plan = _Plan(nodes, nodes[0].device)
    if not plan.nodes:
        raise ValueError("tlaloc.stablehlo: every array already holds its value; "
                         "there is no program left to show")
    # a mesh's backend writes its layouts into the module (sdy.mesh, sdy.sharding)
    return nodes[0].device.backend.program_text(plan) or lower_program(plan.program())


def wait_for_compiles() -> None:
    """Block until background compiles have finished (for tests and benchmarks)."""
    from ._devices import _devices
    for d in list(_devices.values()):
        backend = d._backend
        if backend is not None:
            backend.wait_for_compiles()


def primitive(name: str, *operands, device=None, **params):
    """Apply the primitive `name` to arrays directly (grad_source writes this for operations
    that have no spelling in the namespace). Parameters are the primitive's own."""
    from ._api._core import check_devices, resolve_device
    from ._graph import bind
    from ._prims import REGISTRY
    prim = REGISTRY.get(name)
    if prim is None:
        raise ValueError(f"tlaloc.primitive: unknown primitive {name!r}")
    nodes = []
    for x in operands:
        if not isinstance(x, Array):
            raise TypeError(f"tlaloc.primitive: operands must be tlaloc arrays, got {type(x).__name__}")
        nodes.append(x._node)
    dev = check_devices(name, *nodes) if nodes else resolve_device(device)
    return Array._from_node(bind(prim, tuple(nodes), params, dev))
