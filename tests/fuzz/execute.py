"""What the worker does with a request (it imports tlaloc; the fuzzer's parent process runs
no tlaloc program). A program request carries the program's source; the source is executed
as it is printed in a reproduction, so a reproduction runs exactly what failed."""
from __future__ import annotations

import traceback

import numpy as np

import tlaloc as xp

PROGRAM_FILE = "<program>"


def describe_exception(exc) -> dict:
    """Type, message, and the program line that raised (when it was the program's)."""
    frames = traceback.extract_tb(exc.__traceback__)
    line = None
    for f in frames:
        if f.filename == PROGRAM_FILE:
            line = f.lineno
    tail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)[-6:])
    return {"type": type(exc).__name__, "message": str(exc)[:2000], "line": line,
            "traceback": tail[-3000:]}


def _forget_structures():
    """Each program starts with no compiled structure: the tiered mode's first run is then
    interpreted and a repeat compiled, whatever ran before in this process. (Reaches into
    the backends: this is test code.)"""
    from tlaloc._devices import _devices
    for d in list(_devices.values()):
        backend = d._backend
        if backend is not None and hasattr(backend, "_entries"):
            backend.wait_for_compiles()
            backend._entries.clear()


def _run_once(program, device):
    outs = program(device)
    xp.eval(*outs)
    return [np.asarray(o) for o in outs]


def run_program(source, mode, max_pending=None):
    namespace = {}
    exec(compile(source, PROGRAM_FILE, "exec"), namespace)
    program = namespace["program"]
    _forget_structures()
    saved = xp.config.update(execution="auto")
    runs = []
    try:
        if max_pending is not None:
            xp.config.update(max_pending=max_pending)
        if mode == "interpreter":
            runs.append(_run_once(program, xp.device("interpreter")))
        elif mode == "compiled":
            xp.config.update(execution="compiled")
            runs.append(_run_once(program, xp.device("cpu")))
        elif mode == "auto":
            # lazy, so that the tiers see whole programs (the interpreter mode runs small
            # operations as they are recorded, the default)
            xp.config.update(eager_max_size=0)
            for run in range(3):
                runs.append(_run_once(program, xp.device("cpu")))
                if run == 1:
                    xp.wait_for_compiles()
        else:
            raise ValueError(f"unknown mode {mode!r}")
    except Exception as exc:    # noqa: BLE001 - reported to the parent with the runs so far
        return {"runs": runs, "error": describe_exception(exc)}
    finally:
        xp.config.update(**saved)
        if max_pending is not None:
            xp.config.update(max_pending=_DEFAULT_MAX_PENDING)
    return {"runs": runs}


_DEFAULT_MAX_PENDING = xp.config.max_pending


def handle(msg):
    if msg["kind"] == "program":
        return run_program(msg["source"], msg["mode"], msg.get("max_pending"))
    if msg["kind"] == "derivative":
        from .derivatives import run_derivative
        return run_derivative(msg)
    if msg["kind"] == "ping":
        return {"pong": True}
    raise ValueError(f"unknown request {msg['kind']!r}")
