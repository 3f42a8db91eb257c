"""tlaloc.fft against numpy.fft, on the compiled (XLA) and interpreter tiers."""
import numpy as np
import pytest

import tlaloc as xp
from helpers import random_normal as rand, assert_matches

F = xp.fft
TOL = {"complex64": (2e-5, 2e-5), "float32": (2e-5, 2e-5),
       "complex128": (1e-12, 1e-12), "float64": (1e-12, 1e-12)}




def close(actual, expected):
    """Compare with NumPy's result in the precision tlaloc promises (NumPy may compute wider)."""
    a = np.asarray(actual)
    e = np.asarray(expected)
    r, t = TOL[str(a.dtype)]
    assert_matches(a, e.astype(a.dtype) if e.dtype.kind == a.dtype.kind else e, rtol=r,
                   atol=t * max(1.0, float(np.abs(e).max(initial=0))))


def values(*arrays):
    xp.eval(*arrays)
    return [np.asarray(a) for a in arrays]


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_fft_ifft(tier, dtype):
    a = rand((3, 8, 6), dtype)
    x = xp.asarray(a, device=tier)
    cases = [dict(), dict(n=5, axis=1), dict(n=11, axis=0, norm="ortho"), dict(axis=-2, norm="forward")]
    got = values(*[F.fft(x, **c) for c in cases], *[F.ifft(x, **c) for c in cases])
    for c, g in zip(cases, got):
        assert g.dtype == np.dtype(dtype)
        close(g, np.fft.fft(a, **c))
    for c, g in zip(cases, got[len(cases):]):
        close(g, np.fft.ifft(a, **c))


def test_fft_round_trip_and_real_input(tier):
    a = rand((16,), "float32")
    x = xp.asarray(a, device=tier)
    y = F.fft(x)
    assert y.dtype == xp.complex64  # real floating input is promoted
    back = np.asarray(F.ifft(y))
    np.testing.assert_allclose(back.real, a, rtol=1e-5, atol=1e-6)
    assert F.fft(xp.asarray(rand((4,), "float64"), device=tier)).dtype == xp.complex128


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_fftn_ifftn(tier, dtype):
    a = rand((2, 3, 4, 5), dtype)
    x = xp.asarray(a, device=tier)
    cases = [  # (tlaloc arguments, NumPy arguments)
        (dict(), dict()),
        (dict(axes=(0, 2)), dict(axes=(0, 2))),
        (dict(s=(6, 2), axes=(3, 1), norm="ortho"), dict(s=(6, 2), axes=(3, 1), norm="ortho")),
        (dict(s=(-1, 7)), dict(s=(4, 7), axes=(2, 3))),  # -1 keeps the axis' size
        (dict(axes=(3, 0, 1, 2), norm="forward"), dict(axes=(3, 0, 1, 2), norm="forward")),
    ]
    got = values(*[F.fftn(x, **c) for c, _ in cases], *[F.ifftn(x, **c) for c, _ in cases])
    for (_, ref), g in zip(cases, got):
        close(g, np.fft.fftn(a, **ref))
    for (_, ref), g in zip(cases, got[len(cases):]):
        close(g, np.fft.ifftn(a, **ref))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rfft_irfft(tier, dtype):
    a = rand((4, 9), dtype)
    x = xp.asarray(a, device=tier)
    cases = [dict(), dict(n=6), dict(n=13, axis=0, norm="ortho"), dict(norm="forward")]
    got = values(*[F.rfft(x, **c) for c in cases])
    for c, g in zip(cases, got):
        assert g.dtype == np.result_type(dtype, np.complex64)
        close(g, np.fft.rfft(a, **c))
    spec = np.fft.rfft(a).astype(np.result_type(dtype, np.complex64))
    s = xp.asarray(spec, device=tier)
    icases = [dict(), dict(n=9), dict(n=4, norm="ortho"), dict(n=7, axis=0, norm="forward")]
    got = values(*[F.irfft(s, **c) for c in icases])
    for c, g in zip(icases, got):
        assert g.dtype == np.dtype(dtype)
        close(g, np.fft.irfft(spec, **c))
    close(got[1], a)  # round trip with the odd length given


def test_rfftn_irfftn(tier):
    a = rand((2, 3, 4, 6), "float64")
    x = xp.asarray(a, device=tier)
    cases = [dict(), dict(axes=(1, 0)), dict(s=(5, 4), axes=(1, 3), norm="ortho"),
             dict(axes=(0, 1, 2, 3), norm="forward")]
    got = values(*[F.rfftn(x, **c) for c in cases])
    for c, g in zip(cases, got):
        close(g, np.fft.rfftn(a, **c))
    spec = np.fft.rfftn(a)
    s = xp.asarray(spec, device=tier)
    icases = [dict(), dict(s=(3, 4, 7), axes=(1, 2, 3)), dict(axes=(0, 3), norm="ortho"),
              dict(s=(2, 3, 4, 6))]  # s without axes: the last len(s) axes
    got = values(*[F.irfftn(s, **c) for c in icases])
    for c, g in zip(icases, got):
        close(g, np.fft.irfftn(spec, **c, **({"axes": (0, 1, 2, 3)} if "s" in c and "axes" not in c else {})))
    close(got[3], a)


def test_hfft_ihfft(tier):
    a = rand((3, 5), "complex128")
    r = rand((3, 8), "float32")
    x, y = xp.asarray(a, device=tier), xp.asarray(r, device=tier)
    v = values(F.hfft(x), F.hfft(x, n=7, norm="ortho"), F.ihfft(y),
               F.ihfft(y, n=5, axis=0, norm="forward"))
    close(v[0], np.fft.hfft(a))
    close(v[1], np.fft.hfft(a, n=7, norm="ortho"))
    close(v[2], np.fft.ihfft(r))
    close(v[3], np.fft.ihfft(r, n=5, axis=0, norm="forward"))
    assert v[2].dtype == np.complex64


def test_freq_and_shift(tier):
    f = [F.fftfreq(8, device=tier), F.fftfreq(7, d=0.25, device=tier),
         F.rfftfreq(8, d=0.5, device=tier), F.rfftfreq(9, dtype=xp.float32, device=tier),
         F.fftfreq(5, dtype=xp.float32, device=tier)]
    got = values(*f)
    assert_matches(got[0], np.fft.fftfreq(8))
    assert_matches(got[1], np.fft.fftfreq(7, d=0.25))
    assert_matches(got[2], np.fft.rfftfreq(8, d=0.5))
    close(got[3], np.fft.rfftfreq(9))
    close(got[4], np.fft.fftfreq(5))
    assert got[3].dtype == np.float32 and got[0].dtype == np.float64
    assert f[0].device == tier
    a = np.arange(5 * 6).reshape(5, 6)
    x = xp.asarray(a, device=tier)
    for fn, ref in ((F.fftshift, np.fft.fftshift), (F.ifftshift, np.fft.ifftshift)):
        got = values(fn(x), fn(x, axes=0), fn(x, axes=(1,)), fn(x, axes=(-1, 0)))
        for g, kw in zip(got, (dict(), dict(axes=0), dict(axes=(1,)), dict(axes=(-1, 0)))):
            assert_matches(g, ref(a, **kw))


def test_empty_batch_and_errors(tier):
    e = xp.asarray(np.zeros((0, 4), np.complex64), device=tier)
    assert F.fft(e).shape == (0, 4) and F.rfft(xp.real(e)).shape == (0, 3)
    assert np.asarray(F.fft(e)).shape == (0, 4)
    x = xp.asarray(rand((4,), "complex128"), device=tier)
    with pytest.raises(ValueError):
        F.fft(x, n=0)
    with pytest.raises(ValueError):
        F.fft(x, norm="unitary")
    with pytest.raises(IndexError):
        F.fft(x, axis=1)
    with pytest.raises(TypeError):
        F.fft(xp.asarray(np.arange(4), device=tier))
    with pytest.raises(TypeError):
        F.rfft(x)
    with pytest.raises(ValueError):
        F.fftn(x, s=(2, 2), axes=(0,))
    with pytest.raises(ValueError):
        F.fftn(xp.asarray(rand((2, 2), "complex64"), device=tier), axes=(0, 0))
    with pytest.raises(ValueError):
        F.fftfreq(0)
