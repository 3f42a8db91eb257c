"""Subnormal floats flushed to zero on the host, as XLA:CPU does.

XLA's CPU runtime executes every program with the processor's flush-to-zero and
denormals-are-zero modes set (x86: the FTZ and DAZ bits of MXCSR; ARM: the FZ bit of FPCR):
subnormal inputs of floating-point arithmetic read as zeros of the same sign, and subnormal
results become zeros. So that a program's result does not depend on the tier or backend that
ran it, the interpreter runs programs, and XLA compiles them (its constant folder computes on
the host), in the same mode. `flush_subnormals()` sets it for the calling thread and restores
the previous floating-point environment on exit; the mode is per thread, so other threads are
not affected. docs/precision.md states the rule.

Where the C library's floating-point environment has no known layout (platforms other than
Linux on x86-64 and AArch64), `FLUSHES` is False and the context does nothing.

Every interpreted program enters a block, so its cost is per evaluation: through ctypes
(four foreign calls) a block took 3.3 us. Compiled (setup.py's native modules), the block
calls fegetenv/fesetenv directly (declared in _fpenv.pxd): 0.8-1.1 us. The ctypes path stays
the pure-Python reference.
"""
from __future__ import annotations

import ctypes
import platform
import threading

try:
    import cython           # compiled: a compile-time constant; installed: False
    _COMPILED = cython.compiled
except ImportError:         # Cython is only a build dependency
    _COMPILED = False

# fenv_t as 32-bit words, and the word and bits of the flush mode in it (glibc's layouts:
# x86-64 keeps the x87 environment in words 0-6 and MXCSR in word 7; AArch64 is FPCR, FPSR)
_LAYOUTS = {
    "x86_64": (8, 7, (1 << 15) | (1 << 6)),   # MXCSR.FTZ | MXCSR.DAZ
    "aarch64": (2, 0, 1 << 24),               # FPCR.FZ
}


def _fenv():
    layout = _LAYOUTS.get(platform.machine().lower())
    if layout is None or platform.system() != "Linux":
        return None
    # the process's own symbols first: CPython links libm, so no library search is needed
    # (ctypes.util.find_library runs ldconfig in a subprocess: milliseconds at import)
    for name in (None, "libm.so.6"):
        try:
            libm = ctypes.CDLL(name)
            return libm.fegetenv, libm.fesetenv, layout
        except (OSError, AttributeError):
            continue
    return None


_FENV = _fenv()
FLUSHES = _FENV is not None


class _ThreadState(threading.local):
    """The calling thread's saved environment, and how deep its flushing blocks are nested
    (only the outermost block changes and restores the mode)."""

    def __init__(self):
        self.depth = 0
        self.saved_bytes = b""      # the compiled path's saved fenv_t
        if _FENV is not None:
            words = _FENV[2][0]
            self.saved = (ctypes.c_uint32 * words)()
            self.flushing = (ctypes.c_uint32 * words)()


_state = _ThreadState()
_INDEX, _BITS = (_FENV[2][1], _FENV[2][2]) if _FENV is not None else (0, 0)


def _enter_compiled(state):
    """__enter__'s outermost block, compiled: the environment read into a C fenv_t, kept as
    bytes for __exit__, and set again with the flush bits if they are not set already."""
    env = cython.declare(fenv_t)
    fegetenv(cython.address(env))
    words = cython.cast(cython.p_uint, cython.address(env))
    state.saved_bytes = cython.cast(cython.p_char, cython.address(env))[:cython.sizeof(fenv_t)]
    if words[_INDEX] & _BITS != _BITS:
        words[_INDEX] |= _BITS
        fesetenv(cython.address(env))


def _exit_compiled(state):
    saved = cython.declare(bytes, state.saved_bytes)
    fesetenv(cython.cast(cython.pointer(fenv_t), cython.cast(cython.p_char, saved)))


class flush_subnormals:
    """Context manager: subnormals flush to zero on this thread inside the block. The
    buffers are the thread's own, made once: every interpreted program enters a block."""

    __slots__ = ()

    def __enter__(self):
        state = _state
        state.depth += 1
        if _FENV is None or state.depth > 1:
            return self
        if _COMPILED:
            _enter_compiled(state)
            return self
        get, set_, (words, index, bits) = _FENV
        saved = state.saved
        get(saved)
        if saved[index] & bits != bits:
            flushing = state.flushing
            ctypes.memmove(flushing, saved, 4 * words)
            flushing[index] |= bits
            set_(flushing)
        return self

    def __exit__(self, *exc):
        state = _state
        state.depth -= 1
        if _FENV is not None and state.depth == 0:
            if _COMPILED:
                _exit_compiled(state)
            else:
                _FENV[1](state.saved)
        return False
