"""Devices. A device names where an array's value lives and which backend computes it:
PJRT CPU ("cpu"), a PJRT plugin ("cuda", "rocm", "metal"), or the NumPy reference
interpreter ("interpreter")."""
from __future__ import annotations

import threading
from dataclasses import dataclass

from ._config import config


@dataclass
class CacheStats:
    hits: int = 0             # programs run from a ready executable
    misses: int = 0           # structures that had to be compiled (or loaded from disk)
    compiles: int = 0         # XLA compilations
    disk_hits: int = 0        # executables loaded from the persistent cache
    compile_seconds: float = 0.0
    interpreted: int = 0      # programs run by the NumPy interpreter
    immediate: int = 0        # operations on small host values run as they were recorded
    # the tier policy of execution="auto" (backends/tiers.py)
    interpret_seconds: float = 0.0          # measured seconds of those interpreted runs
    compiled_at_once: int = 0               # first sight: one run predicted to cost a compile
    compiled_after_interpreting: int = 0    # compiled once interpreting had cost about as much
    predicted_compile_seconds: float = 0.0  # what the policy predicted those compiles cost


STATS = CacheStats()
_PLUGIN_PLATFORMS = ("cuda", "rocm", "metal")
_ALIASES = {"gpu": "cuda"}


class Device:
    """A device. Instances are unique per (platform, index) (made only by `device()`, and
    unpickled through it), so identity is equality, and hashing is the identity hash in C:
    every program key and jit signature hashes its device."""
    __slots__ = ("platform", "index", "_backend", "__weakref__")

    def __init__(self, platform: str, index: int = 0):
        self.platform = platform
        self.index = index
        self._backend = None

    def __repr__(self):
        if self.platform == "interpreter":
            return "Device(interpreter)"
        return f"Device({self.platform}:{self.index})"

    def __eq__(self, other):
        return self is other

    __hash__ = object.__hash__

    def __reduce__(self):
        return (device, (f"{self.platform}:{self.index}",))

    @property
    def backend(self):
        b = self._backend
        if b is None:
            # Made once, under a lock: threads that meet here on a device's first use would
            # otherwise each make a backend (and the first of them its own PJRT client, whose
            # buffers the others' executables refuse).
            with _backend_lock:
                b = self._backend
                if b is None:
                    b = self._backend = _make_backend(self)
        return b


_lock = threading.Lock()
_backend_lock = threading.RLock()
_devices = {}


def _make_backend(dev: Device):
    if dev.platform == "interpreter":
        from .backends.interpreter import InterpreterBackend
        return InterpreterBackend(STATS)
    from .backends.pjrt import PjrtBackend
    backend = PjrtBackend(lambda: _make_runtime(dev), STATS, host=dev.platform == "cpu",
                          platform=dev.platform)
    if dev.platform != "cpu" or dev.index != 0:
        # a missing plugin or device index raises here, at the device's first use; the
        # first CPU device always exists, and its client waits for the first compile or
        # transfer (a program the interpreter tier runs needs no jaxlib)
        backend.runtime  # noqa: B018
    return backend


def _make_runtime(dev: Device):
    from .backends import _jaxlib
    client = _jaxlib.cpu_client() if dev.platform == "cpu" else _jaxlib.plugin_client(dev.platform)
    pjrt_devices = client.local_devices()
    if dev.index >= len(pjrt_devices):
        raise ValueError(f"{dev} does not exist: {dev.platform} has {len(pjrt_devices)} device(s)")
    return _jaxlib.Runtime(client, pjrt_devices[dev.index])


def device(spec) -> Device:
    """The Device named by `spec`: a Device, "cpu", "cpu:1", "cuda", "gpu:0", "interpreter"."""
    if isinstance(spec, Device):
        return spec
    if not isinstance(spec, str):
        raise TypeError(f"expected a tlaloc Device or a device name, got {spec!r}")
    name, _, idx = spec.partition(":")
    name = _ALIASES.get(name.lower(), name.lower())
    if name not in ("cpu", "interpreter") + _PLUGIN_PLATFORMS:
        raise ValueError(f"unknown device {spec!r}; expected 'cpu', 'interpreter', "
                         f"or one of {_PLUGIN_PLATFORMS} with a PJRT plugin installed")
    try:
        index = int(idx) if idx else 0
    except ValueError:
        raise ValueError(f"bad device index in {spec!r}") from None
    key = (name, index)
    with _lock:
        d = _devices.get(key)
        if d is None:
            d = _devices[key] = Device(name, index)
    if name in _PLUGIN_PLATFORMS:
        d.backend  # noqa: B018 - raises now, naming what to install, if the plugin is missing
    return d


_default = (None, None)   # (config.default_device, its Device): resolved once per setting


def default_device() -> Device:
    global _default
    spec, dev = _default
    if spec != config.default_device:
        dev = device(config.default_device)
        _default = (config.default_device, dev)
    return dev


def available_devices() -> list:
    """Every device this process can use."""
    from .backends import _jaxlib
    found = [device(f"cpu:{i}") for i in range(len(_jaxlib.cpu_client().local_devices()))]
    for platform in _jaxlib.installed_plugins():
        try:
            n = len(_jaxlib.plugin_client(platform).local_devices())
        except Exception:
            continue  # installed but unusable here (no GPU visible): not available
        found += [device(f"{platform}:{i}") for i in range(n)]
    found.append(device("interpreter"))
    return found
