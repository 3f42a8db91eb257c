"""`__dlpack_device__` and `__dlpack__` agree (issue 21, deliverable 7): an array exports from
the memory it reports. CPU and interpreter arrays export host memory; a GPU array (CUDA,
ROCm) exports its device buffer itself through jaxlib (tlaloc/backends/_jaxlib.py), which
the CPU tests here drive on CPU buffers; the GPU test runs only where a CUDA device and
PyTorch or CuPy are present (docs/interop.md, "DLPack")."""
import numpy as np
import pytest

import tlaloc as xp

from helpers import assert_matches

KDLCPU, KDLCUDA = 1, 2


class _Capsule:
    """A producer handing NumPy a capsule made elsewhere (NumPy takes objects, not capsules)."""

    def __init__(self, capsule, device=(KDLCPU, 0)):
        self.capsule, self.device = capsule, device

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return self.device


def _computed(device, values=np.arange(6.0).reshape(2, 3)):
    x = xp.asarray(values, device=device) * 2
    xp.eval(x)
    return x


@pytest.mark.parametrize("device", ["cpu", "interpreter"])
def test_host_arrays_report_and_export_host_memory(device):
    x = _computed(device)
    assert x.__dlpack_device__() == (KDLCPU, 0)
    a = np.from_dlpack(x)
    assert_matches(a, np.arange(6.0).reshape(2, 3) * 2)
    with pytest.raises(BufferError, match="dl_device"):
        x.__dlpack__(dl_device=(KDLCUDA, 0))


def test_the_device_buffer_path_exports_without_a_copy():
    """The GPU code path (backend.to_dlpack -> jaxlib), on CPU buffers."""
    x = _computed("cpu")
    backend = x.device.backend
    pointer = backend._as_buffer(x._node).unsafe_buffer_pointer()
    shared = np.from_dlpack(_Capsule(backend.to_dlpack(x._node, copy=False)))
    copied = np.from_dlpack(_Capsule(backend.to_dlpack(x._node, copy=True)))
    assert shared.ctypes.data == pointer          # the buffer itself
    assert copied.ctypes.data != pointer          # a device copy
    assert_matches(shared, np.asarray(x)) and assert_matches(copied, np.asarray(x))


def test_a_leaf_not_yet_on_the_device_is_uploaded_first():
    x = xp.asarray(np.arange(4, dtype=np.int32))      # a host value, not yet a buffer
    capsule = x.device.backend.to_dlpack(x._node)
    assert_matches(np.from_dlpack(_Capsule(capsule)), np.arange(4, dtype=np.int32))


@pytest.fixture
def cpu_as_gpu(monkeypatch):
    """The CPU backend reporting its buffers as GPU memory: __dlpack__ must then export the
    device buffer (jaxlib's capsule), and copy for a host consumer."""
    backend = xp.device("cpu").backend
    monkeypatch.setattr(type(backend), "dlpack_device", lambda self, device: (KDLCUDA, 0))
    return backend


def test_dlpack_follows_the_reported_device(cpu_as_gpu):
    x = _computed("cpu")
    assert x.__dlpack_device__() == (KDLCUDA, 0)
    pointer = cpu_as_gpu._as_buffer(x._node).unsafe_buffer_pointer()
    for kwargs in ({}, {"copy": False}, {"dl_device": (KDLCUDA, 0)}, {"max_version": (1, 0)}):
        a = np.from_dlpack(_Capsule(x.__dlpack__(**kwargs)))
        assert a.ctypes.data == pointer, kwargs       # zero-copy from the "device"
    a = np.from_dlpack(_Capsule(x.__dlpack__(copy=True)))
    assert a.ctypes.data != pointer
    host = np.from_dlpack(_Capsule(x.__dlpack__(dl_device=(KDLCPU, 0))))   # a host copy
    assert host.ctypes.data != pointer
    assert_matches(host, np.arange(6.0).reshape(2, 3) * 2)
    with pytest.raises(BufferError, match="needs a copy"):
        x.__dlpack__(dl_device=(KDLCPU, 0), copy=False)
    with pytest.raises(BufferError, match="not dl_device"):
        x.__dlpack__(dl_device=(KDLCUDA, 1))


def test_dlpack_under_grad_raises(cpu_as_gpu):
    def loss(w):
        with pytest.raises(xp.DerivativeLostError):
            (w * 2).__dlpack__()
        return xp.sum(w)
    xp.grad(loss)(xp.ones(3))


def _cuda_device():
    try:
        return next(d for d in xp.devices() if d.platform == "cuda")
    except StopIteration:
        return None


@pytest.mark.skipif(_cuda_device() is None, reason="needs a CUDA device (and its PJRT plugin)")
def test_cuda_arrays_export_device_memory_without_a_copy():
    consumers = []
    for name in ("torch", "cupy"):
        try:
            consumers.append(__import__(name))
        except ImportError:
            pass
    if not consumers:
        pytest.skip("needs PyTorch or CuPy to consume GPU memory")
    dev = _cuda_device()
    x = _computed(dev, np.arange(12.0, dtype=np.float32).reshape(3, 4))
    assert x.__dlpack_device__() == (KDLCUDA, dev.index)
    pointer = dev.backend._as_buffer(x._node).unsafe_buffer_pointer()
    for lib in consumers:
        if lib.__name__ == "torch":
            t = lib.from_dlpack(x)
            assert t.device.type == "cuda" and t.data_ptr() == pointer
            got = t.cpu().numpy()
            back = xp.from_dlpack(t)             # and back: to the tensor's device
            assert back.device == dev
            np.testing.assert_array_equal(np.asarray(back), got)
        else:
            c = lib.from_dlpack(x)
            assert c.data.ptr == pointer
            got = lib.asnumpy(c)
        np.testing.assert_array_equal(got, np.arange(12.0, dtype=np.float32).reshape(3, 4) * 2)


@pytest.mark.parametrize("device", ["cpu", "interpreter"])
@pytest.mark.parametrize("shape", [(), (3,), (2, 0)])
def test_bfloat16_exports_through_jaxlib(device, shape):
    """NumPy's DLPack has no bfloat16; tlaloc exports a copy through jaxlib's capsule, which
    jax (or PyTorch) imports."""
    jax = pytest.importorskip("jax")
    values = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) * 0.5 - 1
    x = xp.asarray(values, dtype=xp.bfloat16, device=device)
    got = jax.dlpack.from_dlpack(_Capsule(x.__dlpack__()))
    assert got.dtype == xp.bfloat16.numpy and got.shape == shape
    np.testing.assert_array_equal(np.asarray(got, dtype=np.float32), values)
    with pytest.raises(BufferError, match="bfloat16"):
        x.__dlpack__(copy=False)


class _GpuProducer:
    """A producer whose value is in (simulated) CUDA memory: it exports only to host memory
    when asked for dl_device=(1, 0), as PyTorch and CuPy do for DLPack 1.0 consumers."""

    def __init__(self, values, kind=KDLCUDA):
        self.values, self.kind, self.asked = values, kind, []

    def __dlpack_device__(self):
        return (self.kind, 0)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        self.asked.append(dl_device)
        if dl_device is None or tuple(dl_device) != (KDLCPU, 0):
            raise BufferError("device memory: NumPy cannot take it")
        return np.array(self.values).__dlpack__(max_version=max_version, copy=copy)

    def __array__(self, *args, **kwargs):     # NumPy must not take this route
        raise AssertionError("imported through __array__")


def test_from_dlpack_of_gpu_memory_copies_through_the_host():
    producer = _GpuProducer(np.arange(6.0).reshape(2, 3))
    x = xp.from_dlpack(producer, device="cpu")
    assert x.device == xp.device("cpu") and producer.asked[-1] == (KDLCPU, 0)
    assert_matches(x, np.arange(6.0).reshape(2, 3))
    # without device=, the array goes where the producer's value is: cuda:0, absent here
    if _cuda_device() is None:
        with pytest.raises(RuntimeError, match="no PJRT plugin for 'cuda'"):
            xp.from_dlpack(producer)
    with pytest.raises(BufferError, match="pass device="):
        xp.from_dlpack(_GpuProducer(np.ones(2), kind=8))          # kDLMetal: no mapping
    assert_matches(xp.from_dlpack(_GpuProducer(np.ones(2), kind=8), device="interpreter"),
                   np.ones(2))
