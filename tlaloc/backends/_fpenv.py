"""Subnormal floats flushed to zero on the host, as XLA:CPU does.

XLA's CPU runtime executes every program with the processor's flush-to-zero and
denormals-are-zero modes set (x86: the FTZ and DAZ bits of MXCSR; ARM: the FZ bit of FPCR):
subnormal inputs of floating-point arithmetic read as zeros of the same sign, and subnormal
results become zeros. So that a program's result does not depend on the tier or backend that
ran it, the interpreter runs programs, and XLA compiles them (its constant folder computes on
the host), in the same mode. `flush_subnormals()` sets it for the calling thread and restores
the previous floating-point environment on exit (`flush_begin()` and `flush_end(token)` are
the same two steps without a context manager); the mode is per thread, so other threads are
not affected. docs/precision.md states the rule.

Where the C library's floating-point environment has no known layout (platforms other than
Linux on x86-64 and AArch64), `FLUSHES` is False and the context does nothing.

Every interpreted program enters a block, and every operation run as it is recorded
(interpreter.run_now) is called through `call_flushed`, which also ignores NumPy's
floating-point errors (inf and nan are values, not warnings) for the call. Through ctypes
(fegetenv/fesetenv, four foreign calls) a block takes 3.3 us. Compiled (setup.py's native
modules), the block reads and writes the control register that holds the flush bits
(MXCSR, FPCR; declared in _fpenv.pxd) directly, in nanoseconds: it saves and restores the
same bits, and the register's other bits (rounding, exception masks and flags) as they
were. The ctypes path stays the pure-Python reference.
"""
from __future__ import annotations

import ctypes
import platform

import numpy as np

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


_BITS = _FENV[2][2] if _FENV is not None else 0
# fenv_t's ctypes type, made once (each `c_uint32 * n` makes a type, and a type is a cycle)
_ENV_TYPE = ctypes.c_uint32 * _FENV[2][0] if _FENV is not None else None

# flush_begin's token when the flush mode was set already (an enclosing block, or the
# thread's own mode): flush_end then leaves the environment as it is, which is what makes
# blocks nest
_UNCHANGED = None


def flush_begin():
    """Set the flush mode on the calling thread; returns the token `flush_end` takes to
    restore what was there before."""
    if _FENV is None:
        return _UNCHANGED
    if _COMPILED:
        word = cython.declare(cython.uint, tlaloc_control_word())
        if word & _BITS == _BITS:
            return _UNCHANGED
        tlaloc_set_control_word(word | _BITS)
        return word
    get, set_, (words, index, bits) = _FENV
    saved = _ENV_TYPE()
    get(saved)
    if saved[index] & bits == bits:
        return _UNCHANGED
    flushing = _ENV_TYPE()
    ctypes.memmove(flushing, saved, 4 * words)
    flushing[index] |= bits
    set_(flushing)
    return saved


def flush_end(token) -> None:
    """Restore the environment `flush_begin` saved in `token`."""
    if token is _UNCHANGED:
        return
    if _COMPILED:
        tlaloc_set_control_word(token)
    else:
        _FENV[1](token)


class _ErrstateVariable:
    """NumPy 1.26's error state, set and reset as NumPy 2's context variable is (`set`
    returns the token `reset` takes)."""

    @staticmethod
    def set(state):
        errstate = np.errstate(**state)
        errstate.__enter__()
        return errstate

    @staticmethod
    def reset(errstate):
        errstate.__exit__(None, None, None)


try:
    # NumPy >= 2 keeps the error state in a context variable: setting it to a state made
    # once costs ~0.1 us (~20 ns through C), `np.errstate(all="ignore")` ~1.4 us
    from numpy._core._ufunc_config import _extobj_contextvar as _errors, _make_extobj
    _IGNORE_ERRORS = _make_extobj(all="ignore")
    _CONTEXT_VARIABLE = True
except ImportError:   # NumPy 1.26
    _errors, _IGNORE_ERRORS, _CONTEXT_VARIABLE = _ErrstateVariable, {"all": "ignore"}, False


def call_flushed(fn, args: tuple, kwargs: dict):
    """`fn(*args, **kwargs)` with subnormals flushed on the calling thread and NumPy's
    floating-point errors ignored: the state a primitive's NumPy implementation runs in.
    Compiled, both are set and restored through C (the control register, the error state's
    context variable): ~0.15 us for an operation run as it is recorded, against ~0.4 us
    through a flush block and the variable's methods."""
    if _COMPILED and _CONTEXT_VARIABLE:
        word = cython.declare(cython.uint, tlaloc_control_word())
        bits = cython.declare(cython.uint, _BITS)   # (the test below in C integers)
        change = cython.declare(cython.bint, FLUSHES and word & bits != bits)
        if change:
            tlaloc_set_control_word(word | bits)
        errors = PyContextVar_Set(_errors, _IGNORE_ERRORS)
        try:
            # (without parameters, a call with no keyword dict: `**{}` copies the dict)
            return fn(*args, **kwargs) if kwargs else fn(*args)
        finally:
            PyContextVar_Reset(_errors, errors)
            if change:
                tlaloc_set_control_word(word)
    token = flush_begin()
    errors = _errors.set(_IGNORE_ERRORS)
    try:
        return fn(*args, **kwargs)
    finally:
        _errors.reset(errors)
        flush_end(token)


class flush_subnormals:
    """Context manager: subnormals flush to zero on this thread inside the block (blocks
    nest: only the outermost one changes and restores the mode)."""

    __slots__ = ("_token",)

    def __enter__(self):
        self._token = flush_begin()
        return self

    def __exit__(self, *exc):
        flush_end(self._token)
        return False
