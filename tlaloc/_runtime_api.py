"""The public runtime functions: evaluation, cache statistics and program inspection."""
from __future__ import annotations

import dataclasses

from ._array import Array
from ._devices import STATS
from ._graph import _Plan, evaluate
from .lowering import lower_program


def eval(*arrays):
    """Compute every pending array among `arrays` now, in one program per device.
    Returns its arguments (a single array when given one)."""
    for a in arrays:
        if not isinstance(a, Array):
            raise TypeError(f"tlaloc.eval: expected tlaloc arrays, got {type(a).__name__}")
    evaluate([a._node for a in arrays])
    return arrays[0] if len(arrays) == 1 else arrays


def cache_info() -> dict:
    """Compile-cache statistics of this process: hits, misses, compiles, disk_hits,
    compile_seconds, interpreted."""
    return dataclasses.asdict(STATS)


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
    return lower_program(plan.program())


def wait_for_compiles() -> None:
    """Block until background compiles have finished (for tests and benchmarks)."""
    from ._devices import _devices
    for d in list(_devices.values()):
        backend = d._backend
        if backend is not None and hasattr(backend, "wait_for_compiles"):
            backend.wait_for_compiles()
