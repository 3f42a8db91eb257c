"""The discrete Fourier transform primitive: `stablehlo.fft` over the trailing 1 to 3 axes.

  FFT / IFFT   complex -> complex, same shape; IFFT includes the 1/n factor.
  RFFT         real (..., n) -> complex (..., n//2 + 1), the non-negative frequencies.
  IRFFT        complex (..., n//2 + 1) -> real (..., n); the inverse of RFFT (with 1/n).

`fft_length` is the size of each transformed axis (for IRFFT, of the real output). Axes other
than the trailing ones, padding, trimming and the `norm` scaling are the namespace's work
(tlaloc/fft.py). The interpreter follows NumPy's pocketfft, computed in the operand's
precision.
"""
from __future__ import annotations

import math

import numpy as np

from .. import _dtypes as dt
from . import ad, lax
from . import batching as bt
from . import padding as pd
from .core import aval, declare, first_names

FFT_TYPES = ("FFT", "IFFT", "RFFT", "IRFFT")


def _infer(x, *, fft_type, fft_length):
    if fft_type not in FFT_TYPES:
        raise ValueError(f"fft: fft_type must be one of {FFT_TYPES}, got {fft_type!r}")
    k = len(fft_length)
    if not 1 <= k <= 3 or k > len(x.shape):
        raise ValueError(f"fft: fft_length {fft_length} must name 1 to 3 trailing axes of {x.shape}")
    if any(n < 1 for n in fft_length):
        raise ValueError(f"fft: fft_length {fft_length} must be positive")
    lead, tail = x.shape[:-k], tuple(x.shape[-k:])
    if fft_type == "RFFT":
        if x.dtype not in (dt.float32, dt.float64):
            raise TypeError(f"fft: RFFT needs float32 or float64, got {x.dtype}")
        if tail != tuple(fft_length):
            raise ValueError(f"fft: RFFT operand {x.shape} does not end in {fft_length}")
        return aval(lead + tail[:-1] + (fft_length[-1] // 2 + 1,), dt.complex_of(x.dtype))
    if x.dtype not in (dt.complex64, dt.complex128):
        raise TypeError(f"fft: {fft_type} needs complex64 or complex128, got {x.dtype}")
    if fft_type == "IRFFT":
        want = tuple(fft_length[:-1]) + (fft_length[-1] // 2 + 1,)
        if tail != want:
            raise ValueError(f"fft: IRFFT operand {x.shape} must end in {want}")
        return aval(lead + tuple(fft_length), dt.real_of(x.dtype))
    if tail != tuple(fft_length):
        raise ValueError(f"fft: operand {x.shape} does not end in {fft_length}")
    return x


def _emit(ctx, x, *, fft_type, fft_length):
    if any(n == 0 for n in ctx.out_aval.shape) or any(n == 0 for n in ctx.in_avals[0].shape):
        return ctx.constant(0, ctx.out_aval)
    return ctx.simple("stablehlo.fft", x, attrs=(
        f"fft_type = #stablehlo<fft_type {fft_type}>, "
        f"fft_length = array<i64: {', '.join(map(str, fft_length))}>"))


def _impl(x, *, fft_type, fft_length):
    axes = tuple(range(-len(fft_length), 0))
    if x.size == 0:
        shape = _infer(aval(x.shape, dt.from_numpy(x.dtype)), fft_type=fft_type,
                       fft_length=fft_length)
        return np.zeros(shape.shape, shape.dtype.numpy)
    if fft_type == "FFT":
        return np.fft.fftn(x, axes=axes)
    if fft_type == "IFFT":
        return np.fft.ifftn(x, axes=axes)
    if fft_type == "RFFT":
        return np.fft.rfftn(x, axes=axes)
    return np.fft.irfftn(x, s=fft_length, axes=axes)


# Derivatives. The transforms are linear: forward mode applies the same transform to the
# tangent; reverse mode applies the adjoint. With N the number of points transformed:
#   FFT^H = N IFFT;  IFFT^H = FFT / N;
#   RFFT^H: zero-fill the missing half of the spectrum, N IFFT, real part;
#   IRFFT^H: RFFT / N, with weight 2 on the bins that stand for two (a bin and its mirror).

def _jvp(tangents, x, *, out, fft_type, fft_length):
    t = tangents[0]
    if t is None:
        return None
    return lax.fft(ad.as_dtype_of(t, x), fft_type=fft_type, fft_length=fft_length)


def _vjp(ct, x, *, out, fft_type, fft_length):
    n_total = math.prod(fft_length)
    if fft_type == "FFT":
        back = lax.fft(ct, fft_type="IFFT", fft_length=fft_length)
        return (lax.multiply(back, ad.const(back, float(n_total))),)
    if fft_type == "IFFT":
        back = lax.fft(ct, fft_type="FFT", fft_length=fft_length)
        return (lax.multiply(back, ad.const(back, 1.0 / n_total)),)
    nd = len(ct.aval.shape)
    if fft_type == "RFFT":
        missing = fft_length[-1] - ct.aval.shape[-1]
        zero = ad.scalar(0, ct.aval.dtype, ct.device)
        full = lax.pad(ct, zero, low=(0,) * nd, high=(0,) * (nd - 1) + (missing,),
                       interior=(0,) * nd)
        back = lax.fft(full, fft_type="IFFT", fft_length=fft_length)
        return (lax.multiply(lax.real(back), ad.const(lax.real(back), float(n_total))),)
    # IRFFT
    spectrum = lax.fft(ct, fft_type="RFFT", fft_length=fft_length)
    bins = spectrum.aval.shape[-1]
    n = fft_length[-1]
    weights = np.full(bins, 2.0)
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0
    w = _weights_node(weights / n_total, spectrum)
    return (lax.multiply(spectrum, w),)


def _weights_node(weights, like):
    """A constant node holding per-bin weights broadcast over `like`'s shape."""
    bins = len(weights)
    pieces = [lax.constant(shape=(1,), dtype=like.aval.dtype, value=complex(v), device=like.device)
              for v in weights]
    row = lax.concatenate(*pieces, axis=0) if bins > 1 else pieces[0]
    nd = len(like.aval.shape)
    return lax.broadcast_in_dim(row, shape=like.aval.shape, dims=(nd - 1,))


def _batch(bdims, x, *, fft_type, fft_length):
    # the transformed axes are the trailing ones: a mapped axis among them moves to the front
    (d,) = bdims
    if d >= len(x.aval.shape) - len(fft_length):
        x, d = bt.moved(x, d, 0, None), 0
    return lax.fft(x, fft_type=fft_type, fft_length=fft_length), d


fft = declare("fft", infer=_infer, names=first_names, emit=_emit, impl=_impl, jvp=_jvp, vjp=_vjp,
              batch=_batch,
              padding=pd.along("fft", lambda x, *, fft_type, fft_length: range(
                  len(x.aval.shape) - len(fft_length), len(x.aval.shape)),
                  why="a transform's result depends on the axis' length"))
