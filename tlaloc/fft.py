"""The `fft` extension of the array API standard (2025.12), written in primitives.

Transforms are `stablehlo.fft` (the `fft` primitive), which works on the trailing 1 to 3 axes:
other axes are moved to the end and back, and more than 3 axes take several passes. `n` / `s`
trim or zero-pad the input along each transformed axis first. `norm` scales the result:
"backward" (default) 1/n on the inverse, "ortho" 1/sqrt(n) both ways, "forward" 1/n on the
forward transform.

Dtypes. complex64 -> complex64 and complex128 -> complex128; the real transforms map float32
<-> complex64 and float64 <-> complex128. Functions the standard defines for complex input
also accept real floating input (promoted to complex); float16 and bfloat16 are computed in
float32. Integer and boolean input raises TypeError.
"""
from __future__ import annotations

import builtins
import math
import operator

from . import _dtypes as dt
from ._api._core import (axes_of, axis_of, broadcast_to_shape, cast, check_size, constant, node_of,
                         resolve_device, scalar_node, wrap)
from ._api._core import fresh
from ._prims import lax

def __getattr__(name):
    # NumPy's names the standard spells differently say what to write (tlaloc/_numpy_names.py)
    from ._numpy_names import FFT_SPELLING, missing
    raise missing("tlaloc.fft", name, FFT_SPELLING)


__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
           "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_NORMS = ("backward", "ortho", "forward")
_SWAP = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


# ============================================================================ helpers

def _norm(name, norm):
    if norm not in _NORMS:
        raise ValueError(f"{name}: norm must be one of {_NORMS}, got {norm!r}")
    return norm


def _complex_input(name, x):
    node = node_of(name, x)
    d = node.aval.dtype
    if d.kind not in dt.FLOATING_KINDS:
        raise TypeError(f"{name}: x must have a floating-point dtype, got {d}")
    if d.kind == "f":
        node = cast(node, dt.complex128 if d is dt.float64 else dt.complex64)
    return node


def _real_input(name, x):
    node = node_of(name, x)
    d = node.aval.dtype
    if d.kind != "f":
        raise TypeError(f"{name}: x must have a real floating-point dtype, got {d}")
    return cast(node, dt.float32) if d in (dt.float16, dt.bfloat16) else node


def _length(name, n, argname="n"):
    if isinstance(n, builtins.bool):
        raise TypeError(f"{name}: {argname} must be an int, got {n!r}")
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"{name}: {argname} must be an int, got {n!r}") from None
    if n < 1:
        raise ValueError(f"{name}: {argname} must be at least 1, got {n}")
    return n


def _resize(name, node, axis, n):
    """Trim or zero-pad `node` to length `n` along `axis`."""
    shape = node.aval.shape
    size = shape[axis]
    if size == n:
        return node
    nd = len(shape)
    limit = tuple(n if i == axis else s for i, s in enumerate(shape))
    if size > n:
        return lax.slice(node, start=(0,) * nd, limit=limit, strides=(1,) * nd)
    check_size(name, limit, node.aval.dtype, node.device)
    zero = constant(0, (), node.aval.dtype, node.device)
    high = tuple(n - size if i == axis else 0 for i in range(nd))
    return lax.pad(node, zero, low=(0,) * nd, high=high, interior=(0,) * nd)


def _to_end(node, axes):
    """Transpose `axes` (in order) to the end; returns the node and the inverse permutation."""
    nd = len(node.aval.shape)
    perm = tuple(i for i in range(nd) if i not in axes) + tuple(axes)
    if perm == tuple(range(nd)):
        return node, None
    inverse = tuple(perm.index(i) for i in range(nd))
    return lax.transpose(node, perm=perm), inverse


def _back(node, inverse):
    return node if inverse is None else lax.transpose(node, perm=inverse)


def _c2c(node, axes, fft_type):
    """FFT / IFFT over `axes`, at most 3 at a time."""
    axes = list(axes)
    while axes:
        chunk, axes = axes[-3:], axes[:-3]
        moved, inverse = _to_end(node, chunk)
        lengths = moved.aval.shape[-len(chunk):]
        node = _back(lax.fft(moved, fft_type=fft_type, fft_length=tuple(lengths)), inverse)
    return node


def _scale(node, norm, n, inverse):
    """Apply `norm` to a transform over `n` points (XLA's IFFT/IRFFT already divide by n)."""
    if norm == "backward":
        return node
    if norm == "ortho":
        factor = math.sqrt(n) if inverse else 1 / math.sqrt(n)
    else:
        factor = n if inverse else 1 / n
    return lax.multiply(node, constant(factor, node.aval.shape, node.aval.dtype, node.device))


def _axes_and_sizes(name, x, s, axes):
    """Normalised (axes, sizes) of an n-dimensional transform, as the standard defines them."""
    nd = x.ndim
    if s is not None:
        if not isinstance(s, (tuple, list)):
            raise TypeError(f"{name}: s must be a tuple of ints, got {s!r}")
        s = tuple(s)
    if axes is None:
        axes = tuple(range(nd)) if s is None else tuple(range(nd - len(s), nd))
        if s is not None and len(s) > nd:
            raise ValueError(f"{name}: s {s} has more entries than x has dimensions {x.shape}")
    else:
        if not isinstance(axes, (tuple, list)):
            raise TypeError(f"{name}: axes must be a tuple of ints, got {axes!r}")
        axes = tuple(axis_of(name, x, a, "axes") for a in axes)
        if len(set(axes)) != len(axes):
            raise ValueError(f"{name}: repeated axis in axes {axes}")
    if s is None:
        sizes = tuple(x.shape[a] for a in axes)
    else:
        if len(s) != len(axes):
            raise ValueError(f"{name}: s {s} and axes {axes} differ in length")
        sizes = tuple(x.shape[a] if n == -1 else _length(name, n, "s") for a, n in zip(axes, s))
    return axes, sizes


# ============================================================================ complex transforms

def _one_axis(name, x, n, axis, norm, fft_type):
    node = _complex_input(name, x)
    _norm(name, norm)
    ax = axis_of(name, x, axis)
    n = x.shape[ax] if n is None else n
    n = _length(name, n)
    node = _resize(name, node, ax, n)
    return wrap(_scale(_c2c(node, (ax,), fft_type), norm, n, fft_type == "IFFT"))


def fft(x, /, *, n=None, axis=-1, norm="backward"):
    """The one-dimensional discrete Fourier transform along `axis`."""
    return _one_axis("fft", x, n, axis, norm, "FFT")


def ifft(x, /, *, n=None, axis=-1, norm="backward"):
    """The one-dimensional inverse discrete Fourier transform along `axis`."""
    return _one_axis("ifft", x, n, axis, norm, "IFFT")


def _n_axes(name, x, s, axes, norm, fft_type):
    node = _complex_input(name, x)
    _norm(name, norm)
    axes, sizes = _axes_and_sizes(name, x, s, axes)
    for a, n in zip(axes, sizes):
        node = _resize(name, node, a, _length(name, n, "s"))
    if not axes:
        return wrap(node)
    return wrap(_scale(_c2c(node, axes, fft_type), norm, math.prod(sizes), fft_type == "IFFT"))


def fftn(x, /, *, s=None, axes=None, norm="backward"):
    """The n-dimensional discrete Fourier transform over `axes` (default: all, or the last
    len(s)); s[i] trims or pads axis axes[i] (-1 keeps its size)."""
    return _n_axes("fftn", x, s, axes, norm, "FFT")


def ifftn(x, /, *, s=None, axes=None, norm="backward"):
    """The n-dimensional inverse discrete Fourier transform."""
    return _n_axes("ifftn", x, s, axes, norm, "IFFT")


# ============================================================================ real transforms

def _rfft_node(name, node, axes, sizes):
    """RFFT over `axes` (the last gets the half spectrum), after resizing to `sizes`."""
    for a, n in zip(axes, sizes):
        node = _resize(name, node, a, n)
    last = axes[-3:]
    moved, inverse = _to_end(node, last)
    out = _back(lax.fft(moved, fft_type="RFFT", fft_length=tuple(sizes[-3:])), inverse)
    return _c2c(out, axes[:-3], "FFT")


def _irfft_node(name, node, axes, sizes):
    """The inverse of `_rfft_node`: sizes are those of the real output."""
    for a, n in zip(axes[:-1], sizes[:-1]):
        node = _resize(name, node, a, n)
    node = _resize(name, node, axes[-1], sizes[-1] // 2 + 1)
    check_size(name, tuple(sizes[list(axes).index(i)] if i in axes else m
                           for i, m in enumerate(node.aval.shape)),
               dt.real_of(node.aval.dtype), node.device)
    node = _c2c(node, axes[:-3], "IFFT")
    moved, inverse = _to_end(node, axes[-3:])
    return _back(lax.fft(moved, fft_type="IRFFT", fft_length=tuple(sizes[-3:])), inverse)


def rfft(x, /, *, n=None, axis=-1, norm="backward"):
    """The discrete Fourier transform of real input along `axis`: the n//2 + 1 non-negative
    frequencies."""
    node = _real_input("rfft", x)
    _norm("rfft", norm)
    ax = axis_of("rfft", x, axis)
    n = _length("rfft", x.shape[ax] if n is None else n)
    return wrap(_scale(_rfft_node("rfft", node, (ax,), (n,)), norm, n, False))


def irfft(x, /, *, n=None, axis=-1, norm="backward"):
    """The inverse of rfft: real output of length n (default 2 * (x.shape[axis] - 1))."""
    return _irfft("irfft", x, n, axis, norm)


def _irfft(name, x, n, axis, norm):
    node = _complex_input(name, x)
    _norm(name, norm)
    ax = axis_of(name, x, axis)
    n = _length(name, 2 * (x.shape[ax] - 1) if n is None else n)
    return wrap(_scale(_irfft_node(name, node, (ax,), (n,)), norm, n, True))


def rfftn(x, /, *, s=None, axes=None, norm="backward"):
    """The n-dimensional discrete Fourier transform of real input; the last of `axes` keeps
    the non-negative frequencies."""
    node = _real_input("rfftn", x)
    _norm("rfftn", norm)
    axes, sizes = _axes_and_sizes("rfftn", x, s, axes)
    if not axes:
        raise ValueError("rfftn: at least one axis must be transformed")
    sizes = tuple(_length("rfftn", n, "s") for n in sizes)
    return wrap(_scale(_rfft_node("rfftn", node, axes, sizes), norm, math.prod(sizes), False))


def irfftn(x, /, *, s=None, axes=None, norm="backward"):
    """The inverse of rfftn; the last output axis has length s[-1] (default
    2 * (x.shape[axes[-1]] - 1))."""
    node = _complex_input("irfftn", x)
    _norm("irfftn", norm)
    axes, sizes = _axes_and_sizes("irfftn", x, s, axes)
    if not axes:
        raise ValueError("irfftn: at least one axis must be transformed")
    if s is None or s[-1] == -1:
        sizes = sizes[:-1] + (2 * (x.shape[axes[-1]] - 1),)
    sizes = tuple(_length("irfftn", n, "s") for n in sizes)
    return wrap(_scale(_irfft_node("irfftn", node, axes, sizes), norm, math.prod(sizes), True))


def hfft(x, /, *, n=None, axis=-1, norm="backward"):
    """The discrete Fourier transform of a Hermitian-symmetric signal given by its
    non-negative frequencies: real output of length n (default 2 * (x.shape[axis] - 1))."""
    node = _complex_input("hfft", x)
    _norm("hfft", norm)
    conj = lax.complex(lax.real(node), lax.negate(lax.imag(node)))
    return _irfft("hfft", wrap(conj), n, axis, _SWAP[norm])


def ihfft(x, /, *, n=None, axis=-1, norm="backward"):
    """The inverse of hfft: the n//2 + 1 non-negative frequencies of real input."""
    node = _real_input("ihfft", x)
    _norm("ihfft", norm)
    ax = axis_of("ihfft", x, axis)
    n = _length("ihfft", x.shape[ax] if n is None else n)
    out = _scale(_rfft_node("ihfft", node, (ax,), (n,)), _SWAP[norm], n, False)
    return wrap(lax.complex(lax.real(out), lax.negate(lax.imag(out))))


# ============================================================================ helpers of the standard

def _freq_dtype(name, dtype):
    d = dt.DEFAULTS.real_floating if dtype is None else dt.canonicalize(dtype, name)
    if d.kind != "f":
        raise TypeError(f"{name}: dtype must be a real floating-point dtype, got {d}")
    return d


def _spacing(name, n, d):
    n = _length(name, n)
    if isinstance(d, (builtins.bool, builtins.complex)) or not isinstance(d, (builtins.int, builtins.float)):
        raise TypeError(f"{name}: d must be a real number, got {d!r}")
    if d == 0 or not math.isfinite(n * d):
        raise ValueError(f"{name}: d must be a finite non-zero number, got {d!r}")
    return n, 1.0 / (n * d)


def fftfreq(n, /, *, d=1.0, dtype=None, device=None):
    """The sample frequencies of fft: [0, 1, ..., (n-1)//2, -(n//2), ..., -1] / (d * n)."""
    n, val = _spacing("fftfreq", n, d)
    fd = _freq_dtype("fftfreq", dtype)
    dev = resolve_device(device, "fftfreq")
    check_size("fftfreq", (n,), fd, dev)
    k = lax.iota(shape=(n,), dtype=dt.int64, dim=0, device=dev)
    half = constant((n + 1) // 2, (n,), dt.int64, dev)
    wrapped = lax.subtract(k, constant(n, (n,), dt.int64, dev))
    k = lax.select(lax.compare(k, half, direction="LT"), k, wrapped)
    scale = broadcast_to_shape(scalar_node(val, fd, dev), (n,))
    return wrap(lax.multiply(cast(k, fd), scale))


def rfftfreq(n, /, *, d=1.0, dtype=None, device=None):
    """The sample frequencies of rfft: [0, 1, ..., n//2] / (d * n)."""
    n, val = _spacing("rfftfreq", n, d)
    fd = _freq_dtype("rfftfreq", dtype)
    dev = resolve_device(device, "rfftfreq")
    m = n // 2 + 1
    check_size("rfftfreq", (m,), fd, dev)
    k = lax.iota(shape=(m,), dtype=fd, dim=0, device=dev)
    return wrap(lax.multiply(k, broadcast_to_shape(scalar_node(val, fd, dev), (m,))))


def _roll(node, axis, shift):
    shape = node.aval.shape
    n = shape[axis]
    shift %= n if n else 1
    if shift == 0:
        return node
    nd = len(shape)

    def part(lo, hi):
        start = tuple(lo if i == axis else 0 for i in range(nd))
        limit = tuple(hi if i == axis else s for i, s in enumerate(shape))
        return lax.slice(node, start=start, limit=limit, strides=(1,) * nd)

    return lax.concatenate(part(n - shift, n), part(0, n - shift), axis=axis)


def _shift(name, x, axes, sign):
    node = node_of(name, x)
    if axes is None:
        axes = tuple(range(x.ndim))
    elif isinstance(axes, (tuple, list)):
        axes = axes_of(name, x, tuple(axes), "axes")
    else:
        axes = axes_of(name, x, axes, "axes")
    for a in axes:
        n = x.shape[a]
        node = _roll(node, a, sign * (n // 2))
    return wrap(node) if node is not x._node else fresh(x)


def fftshift(x, /, *, axes=None):
    """Move the zero-frequency term to the centre of `axes` (default: all)."""
    return _shift("fftshift", x, axes, 1)


def ifftshift(x, /, *, axes=None):
    """The inverse of fftshift."""
    return _shift("ifftshift", x, axes, -1)
