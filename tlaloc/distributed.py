"""Several processes, one program: `tlaloc.distributed.initialize` joins this process to a
run coordinated by process 0 (jaxlib's distributed runtime; CPU collectives over TCP with
gloo). After it, `tlaloc.devices()` lists every process's devices, a `Mesh` may span them,
and every process runs the same code: each computes its devices' parts of the program.

    tlaloc.distributed.initialize("10.0.0.1:8476", num_processes=2, process_id=0)

Call it before anything uses the CPU (the device list is fixed when the CPU client is
made). A peer that never connects, or dies, makes the others raise within `timeout_s`.
"""
from __future__ import annotations

import atexit


def __getattr__(name):
    # jaxlib is imported on first need (`import tlaloc` and interpreted programs need none)
    if name == "DistributedError":
        from .backends import _jaxlib
        return _jaxlib.DistributedError
    raise AttributeError(f"module 'tlaloc.distributed' has no attribute {name!r}")


def initialize(coordinator_address: str, num_processes: int, process_id: int, *,
               timeout_s: int = 60) -> None:
    """Join the run whose process 0 serves at `coordinator_address` ("host:port")."""
    if not isinstance(coordinator_address, str) or ":" not in coordinator_address:
        raise ValueError("initialize: coordinator_address must be 'host:port', got "
                         f"{coordinator_address!r}")
    for name, value in (("num_processes", num_processes), ("process_id", process_id),
                        ("timeout_s", timeout_s)):
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"initialize: {name} must be an int, got {value!r}")
    if num_processes < 1:
        raise ValueError(f"initialize: num_processes must be positive, got {num_processes}")
    if not 0 <= process_id < num_processes:
        raise ValueError(f"initialize: process_id must be in [0, {num_processes}), got {process_id}")
    if timeout_s < 1:
        raise ValueError(f"initialize: timeout_s must be at least 1, got {timeout_s}")
    from .backends import _jaxlib
    _jaxlib.connect(coordinator_address, num_processes, process_id, timeout_s)
    atexit.register(shutdown)


def shutdown() -> None:
    """Leave the run (waits for the other processes to leave too, up to the timeout)."""
    from .backends import _jaxlib
    _jaxlib.disconnect()


def process_index() -> int:
    """This process's index in the run (0 without tlaloc.distributed.initialize)."""
    from .backends import _jaxlib
    return _jaxlib.process_info()[0]


def process_count() -> int:
    """The number of processes in the run (1 without tlaloc.distributed.initialize)."""
    from .backends import _jaxlib
    return _jaxlib.process_info()[1]
