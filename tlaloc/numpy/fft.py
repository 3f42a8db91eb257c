"""tlaloc.numpy.fft: NumPy's fft functions (positional n/axis, norm=None for "backward") over
tlaloc.fft; the 2-d forms (fft2, ...) are the n-d ones over the last two axes, as in NumPy."""
import tlaloc as _xp
from tlaloc import fft as _fft
from tlaloc.fft import fftshift, ifftshift  # noqa: F401


def _norm(norm):
    return "backward" if norm is None else norm


def _one_d(name):
    f = getattr(_fft, name)

    def fn(a, n=None, axis=-1, norm=None):
        return f(_xp.asarray(a), n=n, axis=axis, norm=_norm(norm))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"NumPy's `np.fft.{name}(a, n=None, axis=-1, norm=None)`."
    return fn


def _n_d(name, nd_name, default_axes):
    f = getattr(_fft, nd_name)

    def fn(a, s=None, axes=default_axes, norm=None):
        return f(_xp.asarray(a), s=s, axes=axes, norm=_norm(norm))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"NumPy's `np.fft.{name}(a, s=None, axes={default_axes}, norm=None)`."
    return fn


fft, ifft, rfft, irfft, hfft, ihfft = (_one_d(n) for n in
                                       ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"))
fftn, ifftn, rfftn, irfftn = (_n_d(n, n, None) for n in ("fftn", "ifftn", "rfftn", "irfftn"))
fft2, ifft2, rfft2, irfft2 = (_n_d(n[:-1] + "2", n, (-2, -1))
                              for n in ("fftn", "ifftn", "rfftn", "irfftn"))


def fftfreq(n, d=1.0, *, device=None):
    """NumPy's `np.fft.fftfreq(n, d=1.0)`."""
    return _fft.fftfreq(n, d=d, device=device)


def rfftfreq(n, d=1.0, *, device=None):
    """NumPy's `np.fft.rfftfreq(n, d=1.0)`."""
    return _fft.rfftfreq(n, d=d, device=device)
