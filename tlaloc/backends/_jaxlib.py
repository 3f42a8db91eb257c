"""The one module that touches jaxlib. tlaloc never imports `jax`.

Supported: jaxlib >= 0.10, < 0.13. Everything below uses jaxlib's Python client, plus a few
private entry points that avoid a 60-150 us per-array penalty on jaxlib >= 0.10 (see
docs/runtime.md): `batched_device_put` for host-to-device, `execute_sharded` with
`consume_with_handlers` for execution, and the buffer protocol for device-to-host on the CPU.
"""
from __future__ import annotations

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")  # before jaxlib loads: silence XLA's logging

import functools
import importlib.metadata as metadata
import importlib.util
import pathlib
import pkgutil
import threading
import types

import numpy as np

from ._fpenv import flush_subnormals

try:
    import jaxlib
    import jaxlib.xla_client as xc
    from jaxlib import _jax
except ImportError as e:  # pragma: no cover - jaxlib is a dependency
    raise ImportError("tlaloc needs jaxlib>=0.10,<0.13: pip install 'jaxlib>=0.10,<0.13'") from e

SUPPORTED_RANGE = ((0, 10), (0, 13))
VERSION = jaxlib.__version__


def _version_tuple(v: str):
    return tuple(int(p) for p in v.split(".")[:2])


def check_version(version: str = VERSION) -> None:
    lo, hi = SUPPORTED_RANGE
    if not lo <= _version_tuple(version) < hi:
        raise ImportError(f"tlaloc supports jaxlib >= 0.10 and < 0.13, found {version}")


check_version()


class _Sharding(_jax.SingleDeviceSharding):
    """jaxlib's single-device sharding plus the two hooks `batched_device_put` calls."""

    def _to_xla_hlo_sharding(self, ndim):
        return xc.HloSharding.replicate()

    @property
    def memory_kind(self):
        return self._memory_kind


@functools.lru_cache(maxsize=None)
def _aval(shape, np_dtype):
    return types.SimpleNamespace(shape=shape, dtype=np_dtype, weak_type=False)


def _result_handler(avl, sharding):
    try:
        return _jax.array_result_handler(avl, sharding, True, _skip_checks=True)
    except TypeError:  # jaxlib >= 0.11 dropped _skip_checks
        return _jax.array_result_handler(avl, sharding, True)


# Every `execute_sharded` leaves one jaxlib Traceback (40 bytes + 16 per Python frame on
# the stack: ~150-190 bytes from tlaloc's call depth) in jaxlib's deferred-release list (the
# execution's user context holds the traceback, and its destructor hands it to
# PythonRefManager::AddGarbage instead of releasing it). Nothing empties that list unless
# `collect_garbage()` is called, which jax does on its own paths and tlaloc never otherwise
# would: a loop that evaluates every step grew by ~15 MB per 100,000 steps. Emptying it every
# `_GARBAGE_EVERY` executions bounds it (to ~200 kB) for ~2-3 us per call, spread thin.
_GARBAGE_EVERY = 1024
_executions = 0
_collect_garbage = getattr(_jax, "collect_garbage", lambda: None)   # (in every jaxlib so far)


class Runtime:
    """One PJRT device: transfers, compilation and execution."""

    def __init__(self, client, device):
        self.client = client
        self.device = device
        self.sharding = _Sharding(device)
        self.platform = client.platform
        self.device_kind = device.device_kind
        self.platform_version = client.platform_version

    def put(self, array: np.ndarray):
        # IMMUTABLE_ONLY_DURING_CALL: the runtime takes its own copy, so later writes to
        # the host array never show through.
        return _jax.batched_device_put(
            _aval(array.shape, array.dtype), self.sharding, [array], [self.device], True, False,
            _jax.HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL, True)

    def compile(self, text: str):
        # XLA folds constant subexpressions while it compiles, on this thread: in the
        # flush-to-zero mode its executables run in, so folded and run values agree
        with flush_subnormals():
            return self.client.compile_and_load(text, xc.DeviceList((self.device,)),
                                                xc.CompileOptions())

    @staticmethod
    def cost_analysis(executable) -> dict:
        """XLA's cost estimate of a compiled program ({"flops": ..., "bytes accessed": ...};
        empty where the executable gives none)."""
        try:
            return dict(executable.cost_analysis() or {})
        except Exception:   # not every platform or executable implements it
            return {}

    def serialize(self, executable) -> bytes:
        return executable.serialize()

    def deserialize(self, blob: bytes):
        return self.client.deserialize_executable(blob, xc.DeviceList((self.device,)),
                                                  xc.CompileOptions())

    def handlers(self, out_shapes_dtypes):
        return [_result_handler(_aval(tuple(s), np.dtype(d)), self.sharding) for s, d in out_shapes_dtypes]

    @staticmethod
    def release_deferred() -> None:
        """Empty jaxlib's deferred-release list now (what `execute` does every
        `_GARBAGE_EVERY` calls). Each parked traceback is 40 B + 16 B per Python frame, so
        under a deep stack (pytest's) the bounded list still holds up to ~1 MB; a memory
        measurement calls this first."""
        global _executions
        _executions = 0
        _collect_garbage()

    @staticmethod
    def execute(executable, handlers, buffers):
        global _executions
        out = executable.execute_sharded(buffers).consume_with_handlers(handlers)
        _executions += 1
        if _executions >= _GARBAGE_EVERY:
            _executions = 0
            _collect_garbage()
        return out

    @staticmethod
    def to_numpy(buffer) -> np.ndarray:
        """A read-only host view of a buffer (zero-copy on the CPU)."""
        a = np.asarray(buffer)
        if a.dtype == object:  # bfloat16 and friends have no buffer protocol
            a = buffer._single_device_array_to_np_array_did_copy()[0]
        return a

    @staticmethod
    def is_buffer(value) -> bool:
        return isinstance(value, _jax.ArrayImpl)

    def copy(self, buffer):
        """A new device buffer with `buffer`'s value (copied on the device)."""
        return _jax.batched_device_put(
            buffer.aval, self.sharding, [buffer], [self.device], True, True,
            _jax.HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL, True)

    @staticmethod
    def dlpack(buffer, stream=None):
        """A DLPack capsule of the device buffer itself (no copy), ready on `stream` (the
        consumer's stream, for GPUs). jaxlib makes DLPack 0.x capsules, which cannot mark
        memory read-only."""
        return _jax.buffer_to_dlpack_managed_tensor(buffer, stream=stream)

    def cache_identity(self) -> str:
        """What a serialized executable depends on besides its program text."""
        return "|".join((VERSION, self.platform, self.platform_version, self.device_kind,
                         os.environ.get("XLA_FLAGS", ""), _host_cpu()))


@functools.lru_cache(maxsize=None)
def _host_cpu() -> str:
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("model name", "flags")):
                return line
    except OSError:
        pass
    import platform
    return platform.processor() or platform.machine()


def _made_once(make):
    """Like functools.cache, but the value for some arguments is made once even when threads
    ask for it at the same time (lru_cache runs the function in each of them, and two PJRT
    clients for one device each refuse the other's buffers: "Buffer passed to Execute() ...
    is on device cpu:0, but replica is assigned to device cpu:0"). A call that raises is not
    remembered. Only the first calls take the lock."""
    made = {}
    lock = threading.Lock()

    @functools.wraps(make)
    def get(*args):
        value = made.get(args)
        if value is None:
            with lock:
                value = made.get(args)
                if value is None:
                    value = made[args] = make(*args)
        return value

    return get


@_made_once
def cpu_client():
    # Synchronous: the program runs on the calling thread. The asynchronous client hands
    # every execution to a worker thread, and when Python has been busy between two
    # executions (recording the next step, as eager-lazy code always is) waking that thread
    # and waiting for it cost ~80-100 us per evaluation here, against ~3 us inline. Large
    # programs still spread their loops over XLA's intra-op thread pool.
    return xc.make_cpu_client(asynchronous=False)


_lapack_ready = False
_lapack_lock = threading.Lock()


def ensure_lapack() -> None:
    """Make jaxlib's LAPACK custom-call targets (`lapack_?getrf_ffi`, ...) usable on the CPU
    client: bind the LAPACK routines (`_lapack.initialize()`, which imports scipy; executing
    a LAPACK custom call without it segfaults the process) and register every target.
    Idempotent; call it before compiling or loading a program that uses one."""
    global _lapack_ready
    if _lapack_ready:
        return
    with _lapack_lock:
        if _lapack_ready:
            return
        from jaxlib import lapack
        lapack._lapack.initialize()
        for name, fn, api_version in lapack.registrations()["cpu"]:
            xc.register_custom_call_target(name, fn, platform="cpu", api_version=api_version)
        _lapack_ready = True


# ----------------------------------------------------------------------------- the profiler
# (*private*: jaxlib._profiler; ../shared/notes/sharding-and-processes.md section 8)

def start_profiler():
    """A running jaxlib profiler session (host events at level 2, no Python tracer: it
    would time every Python call). RuntimeError where one cannot start (another is on)."""
    from jaxlib import _profiler
    options = _profiler.ProfileOptions()
    options.host_tracer_level = 2
    options.python_tracer_level = 0
    try:
        return _profiler.ProfilerSession(options)
    except Exception as e:   # jaxlib raises its own error types here
        raise RuntimeError(f"jaxlib's profiler could not start: {e}") from None


def stop_profiler(session) -> dict:
    """Stop `session`; its Chrome trace ({"traceEvents": [...]}, timestamps in us)."""
    import glob
    import gzip
    import json
    import shutil
    import tempfile
    folder = tempfile.mkdtemp(prefix="tlaloc-profile-")
    try:
        session.stop_and_export(folder)
        found = glob.glob(os.path.join(folder, "**", "*.trace.json.gz"), recursive=True)
        if not found:
            return {"traceEvents": []}
        with gzip.open(found[0], "rt") as f:
            return json.load(f)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def trace_me(name: str):
    """An entered jaxlib TraceMe (a named span on the profiler's host timeline); the
    caller exits it."""
    from jaxlib import _profiler
    t = _profiler.TraceMe(name)
    t.__enter__()
    return t


# ----------------------------------------------------------------------------- portable artifacts

class ArtifactError(ValueError):
    """Bytes that are not a StableHLO portable artifact this jaxlib can read."""


def portable_artifact(text: str) -> tuple:
    """(VHLO bytecode, target version) of a StableHLO module given as text. CHLO ops become
    `stablehlo.composite` ops with their decompositions (VHLO has no CHLO). The oldest
    version that can express the program is the target, so that older jaxlibs (whose
    StableHLO reads versions up to their own) can load it; newer ones always can."""
    from jaxlib.mlir.dialects import stablehlo
    versions = [str(stablehlo.get_minimum_version()), str(stablehlo.get_current_version())]
    try:   # composites (the legalized CHLO ops) need a newer version than the minimum
        versions.insert(1, str(stablehlo.get_version_from_compatibility_requirement(
            stablehlo.StablehloCompatibilityRequirement.WEEK_12)))
    except AttributeError:   # pragma: no cover (a jaxlib without compatibility requirements)
        pass
    for version in versions[:-1]:
        try:
            return bytes(_jax.mlir.serialize_portable_artifact(text, version)), version
        except Exception:   # jaxlib raises several types here; a newer version may do
            pass
    return bytes(_jax.mlir.serialize_portable_artifact(text, versions[-1])), versions[-1]


def artifact_text(blob: bytes) -> str:
    """The StableHLO text of a portable artifact (ArtifactError if it is not one)."""
    from jaxlib.mlir import ir
    from jaxlib.mlir.dialects import chlo, stablehlo
    from jaxlib.mlir._mlir_libs import _jax_mlir_ext
    context = ir.Context()
    registry = ir.DialectRegistry()
    _jax_mlir_ext.register_dialects(registry)   # func and the upstream dialects
    context.append_dialect_registry(registry)
    context.load_all_available_dialects()
    stablehlo.register_dialect(context)
    chlo.register_dialect(context)
    diagnostics = []

    def collect(diagnostic):   # into the error message, instead of MLIR's print to stderr
        diagnostics.append(str(diagnostic))
        return True

    context.attach_diagnostic_handler(collect)
    try:
        with context, ir.Location.unknown():
            return str(stablehlo.deserialize_portable_artifact(context, blob))
    except Exception as e:   # MLIRError, ValueError, ... for bytes that are no artifact
        detail = "; ".join(diagnostics) or str(e)
        raise ArtifactError(f"not a StableHLO portable artifact this jaxlib ({VERSION}) can "
                            f"read: {detail}") from None


# ----------------------------------------------------------------------------- plugins

_KNOWN_PLUGINS = {  # jax_plugins module -> (tlaloc platform, PJRT platform name, library file)
    "xla_cuda13": ("cuda", "cuda", "xla_cuda_plugin.so"),
    "xla_cuda12": ("cuda", "cuda", "xla_cuda_plugin.so"),
    "xla_rocm7": ("rocm", "rocm", "xla_rocm_plugin.so"),
    "metal_plugin": ("metal", "METAL", "pjrt_plugin_metal_14.dylib"),
}

INSTALL_HINTS = {
    "cuda": "pip install 'jax-cuda13-plugin[with-cuda]==<your jaxlib version>' (or jax-cuda12-plugin)",
    "rocm": "pip install jax-rocm7-plugin matching your jaxlib version",
    "metal": "install a PJRT Metal plugin that registers under the jax_plugins namespace",
}


def installed_plugins() -> dict:
    """{tlaloc platform: info} for PJRT plugins in the `jax_plugins` namespace. Plugins are
    located, never imported: their own __init__ imports jax."""
    modules = set()
    try:
        modules |= {ep.value for ep in metadata.entry_points(group="jax_plugins")}
    except Exception:  # pragma: no cover - broken metadata of an unrelated package
        pass
    spec = importlib.util.find_spec("jax_plugins")
    if spec is not None and spec.submodule_search_locations:
        modules |= {m.name for m in pkgutil.iter_modules(list(spec.submodule_search_locations),
                                                         "jax_plugins.")}
    found = {}
    for module in sorted(modules):
        short = module.rsplit(".", 1)[-1]
        platform, pjrt_name, libname = _KNOWN_PLUGINS.get(short, (short, short, None))
        s = importlib.util.find_spec(module)
        if s is None or not s.submodule_search_locations:
            continue
        folder = pathlib.Path(list(s.submodule_search_locations)[0])
        candidates = ([folder / libname] if libname else []) + sorted(folder.glob("*.so")) + sorted(folder.glob("*.dylib"))
        library = next((str(p) for p in candidates if p.exists()), None)
        if library and platform not in found:
            found[platform] = {"module": module, "pjrt_name": pjrt_name, "library": library}
    return found


@_made_once
def plugin_client(platform: str):
    """A client for an installed plugin; RuntimeError saying what to install otherwise."""
    info = installed_plugins().get(platform)
    if info is None:
        raise RuntimeError(f"no PJRT plugin for {platform!r} is installed; "
                           f"{INSTALL_HINTS.get(platform, 'install its PJRT plugin')}")
    name = info["pjrt_name"]
    if platform == "cuda":
        _preload_nvidia_libraries()
    xc.load_pjrt_plugin_dynamically(name, info["library"])
    if not xc.pjrt_plugin_initialized(name):
        xc.initialize_pjrt_plugin(name)
    options = xc.generate_pjrt_gpu_plugin_options() if platform in ("cuda", "rocm") else {}
    return xc.make_c_api_client(name, options)


def _preload_nvidia_libraries():
    """Load the pip NVIDIA libraries the CUDA plugin links against (what its own
    initialize() would do, without importing jax)."""
    import ctypes
    for pkg in ("cu13", "cuda_runtime", "cublas", "cudnn", "cufft", "cusolver", "cusparse",
                "nccl", "cuda_nvrtc", "nvjitlink"):
        spec = importlib.util.find_spec(f"nvidia.{pkg}") if importlib.util.find_spec("nvidia") else None
        if spec is None or not spec.submodule_search_locations:
            continue
        for so in sorted((pathlib.Path(list(spec.submodule_search_locations)[0]) / "lib").glob("lib*.so*")):
            try:
                ctypes.CDLL(str(so), mode=ctypes.RTLD_GLOBAL)
            except OSError:
                pass
