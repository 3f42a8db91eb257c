"""The one module that touches jaxlib. tlaloc never imports `jax`.

Supported: jaxlib >= 0.10, < 0.13. Everything below uses jaxlib's Python client, plus a few
private entry points that avoid a 60-150 us per-array penalty on jaxlib >= 0.10 (see
docs/runtime.md): `batched_device_put` for host-to-device, `execute_sharded` with
`consume_with_handlers` for execution, and the buffer protocol for device-to-host on the CPU.
DLPack export of a device buffer (`__dlpack__` of GPU arrays) is `buffer_to_dlpack_managed_tensor`
(verified on jaxlib 0.10.2's CPU buffers; the GPU path runs the same call).
"""
from __future__ import annotations

import os
import platform


def _cpuinfo_line(prefixes) -> str:
    """The first line of Linux's /proc/cpuinfo that starts with one of `prefixes` ("" if
    none, or elsewhere)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(prefixes):
                    return line.rstrip("\n")
    except OSError:
        pass
    return ""


def _cpu_flags() -> frozenset:
    """The host CPU's feature flags as Linux lists them (empty elsewhere)."""
    return frozenset(_cpuinfo_line(("flags",)).partition(":")[2].split())


def _capped_isa_flags(flags: str, cpu_flags: frozenset) -> str:
    """XLA_FLAGS with XLA:CPU's code capped at AVX2 on an AVX-512 host, unless the flags name
    an ISA already. XLA's AVX-512 code for a long fused chain of products on a small array
    made LLVM's machine scheduler run for minutes and take over 24 GB (a 300-step
    `x = x * c + d` on 3 elements; docs/runtime-notes-cpu.md); capped, it compiles in about
    a second, and the benchmarks' loops and matmuls ran within the machine's noise."""
    if "avx512f" not in cpu_flags or "xla_cpu_max_isa" in flags:
        return flags
    return f"{flags} --xla_cpu_max_isa=AVX2".strip()


# before jaxlib loads: silence XLA's logging; XLA reads its flags when it first needs them
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
if platform.machine().lower() in ("x86_64", "amd64"):
    os.environ["XLA_FLAGS"] = _capped_isa_flags(os.environ.get("XLA_FLAGS", ""), _cpu_flags())

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

# The type of every device buffer this module makes (puts, results, global arrays): a value
# whose type is exactly this is a buffer a program can take as it is.
BUFFER = _jax.ArrayImpl


class Runtime:
    """One PJRT device: transfers, compilation and execution."""

    buffer_type = BUFFER

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
    def executor(executable, handlers):
        """`execute(executable, handlers, buffers)` as a function of the buffers alone, for a
        program run many times (tlaloc.jit's cached calls): the lookups are done once."""
        execute_sharded = executable.execute_sharded

        def run(buffers):
            global _executions
            out = execute_sharded(buffers).consume_with_handlers(handlers)
            _executions += 1
            if _executions >= _GARBAGE_EVERY:
                _executions = 0
                _collect_garbage()
            return out

        return run

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
    return _cpuinfo_line(("model name", "flags")) or platform.processor() or platform.machine()


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
    from .._config import config, fix_cpu_devices
    count = config.cpu_devices
    options = {}
    if count is not None:
        options["num_devices"] = count
        # XLA:CPU runs each device's part of an SPMD program as a task of one client thread
        # pool, sized by the core count (or $NPROC); with fewer threads than devices, the
        # parts that wait in a collective hold every thread and the others never start (a
        # deadlock: 4 devices on 2 cores hung in the first all-reduce, jax's too).
        if int(os.environ.get("NPROC", "0") or 0) < count:
            os.environ["NPROC"] = str(max(count, os.cpu_count() or 1))
    if _distributed.client is not None:
        options.update(distributed_client=_distributed.client, node_id=_distributed.process_id,
                       num_nodes=_distributed.num_processes,
                       collectives=_jax.make_gloo_tcp_collectives(
                           _distributed.client, hostname=_distributed.hostname))
    client = xc.make_cpu_client(asynchronous=False, **options)
    fix_cpu_devices()
    return client


# ----------------------------------------------------------------------------- several devices
# (*private*, verified on 0.10.2 only: _jax.GSPMDSharding subclassed (its _hlo_sharding),
# _jax.ArrayImpl assembled from per-device buffers (_skip_checks dropped in 0.11: the
# fallback below), a global array's ._arrays and ._sharding; make_cpu_client(num_devices=);
# ../shared/notes/sharding-and-processes.md sections 2-4)

class _GlobalSharding(_jax.GSPMDSharding):
    """jaxlib's sharding over a device list, plus the hooks its result handlers call."""

    def _to_xla_hlo_sharding(self, ndim):
        return self._hlo_sharding

    @property
    def memory_kind(self):
        return self._memory_kind


class SpmdRuntime:
    """Devices of one mesh (in mesh order, possibly of several processes): SPMD compiles
    with XLA's Shardy partitioner, and arrays laid out over the devices. A layout is an
    HloSharding whose logical device ids are positions in `devices`."""

    def __init__(self, client, devices):
        self.client = client
        self.devices = tuple(devices)
        self.device_list = xc.DeviceList(self.devices)
        here = client.process_index()
        # (position, device) of the devices this process holds buffers of
        self.local = [(i, d) for i, d in enumerate(self.devices) if d.process_index == here]
        self._one = {d: _Sharding(d) for _, d in self.local}
        self.platform = client.platform

    @staticmethod
    def layout(tile_dims, tile_devices, replicated_last: bool):
        """The HloSharding that tiles axis k into tile_dims[k] parts, tile i of the
        row-major tile grid on the device at position tile_devices[i] (a last extra
        dimension of tile_dims, with replicated_last, lists devices holding copies)."""
        if all(t == 1 for t in tile_dims):
            return xc.HloSharding.replicate()
        dims = ",".join(map(str, tile_dims))
        devices = ",".join(map(str, tile_devices))
        last = " last_tile_dim_replicate" if replicated_last else ""
        return xc.HloSharding.from_string(f"{{devices=[{dims}]{devices}{last}}}")

    @staticmethod
    def tiles(layout, shape) -> dict:
        """{device position: tuple of slices into the global array} for `layout`."""
        if layout.is_replicated() or not layout.is_tiled():
            return None   # every device holds all of it
        dims = list(layout.tile_assignment_dimensions())
        devices = list(layout.tile_assignment_devices())
        out = {}
        for flat, index in enumerate(np.ndindex(*dims)):   # row-major over the tile grid
            slices = []
            for axis, n in enumerate(shape):
                size = -(-n // dims[axis])
                slices.append(slice(index[axis] * size, min((index[axis] + 1) * size, n)))
            out[devices[flat]] = tuple(slices)
        return out

    def put(self, array: np.ndarray, layout):
        """`array` laid out as `layout` over the mesh (this process's tiles only)."""
        return self.put_parts(array.shape, array.dtype, layout,
                              lambda index: array if index is None else array[index])

    def put_parts(self, shape, np_dtype, layout, part):
        """The global array of `shape` laid out as `layout`, whose tile at `index` (a tuple
        of slices; None: the whole array) this process has as `part(index)`."""
        tiles = self.tiles(layout, shape)
        buffers = []
        for position, device in self.local:
            block = np.ascontiguousarray(part(None if tiles is None else tiles[position]))
            buffers.append(_jax.batched_device_put(
                _aval(block.shape, block.dtype), self._one[device], [block], [device], True,
                False, _jax.HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL, True))
        return self.assemble(shape, np_dtype, layout, buffers)

    def assemble(self, shape, np_dtype, layout, buffers):
        """One global array from this process's per-device buffers (in `local` order)."""
        sharding = _GlobalSharding(self.device_list, layout)
        try:
            return _jax.ArrayImpl(_aval(tuple(shape), np.dtype(np_dtype)), sharding, buffers,
                                  True, _skip_checks=True)
        except TypeError:   # jaxlib >= 0.11 dropped _skip_checks
            return _jax.ArrayImpl(_aval(tuple(shape), np.dtype(np_dtype)), sharding, buffers, True)

    def layout_of(self, value):
        return value._sharding._hlo_sharding

    @staticmethod
    def is_array(value) -> bool:
        """Whether `value` is an array of the runtime (not a host value)."""
        return isinstance(value, _jax.ArrayImpl)

    def shards(self, value) -> list:
        """(device position, single-device array) of this process's parts of `value`."""
        # the parts come in the order of the device list's addressable devices: ours
        return [(p, a) for (p, _), a in zip(self.local, value._arrays)]

    def compile(self, text: str):
        options = xc.CompileOptions()
        options.num_replicas, options.num_partitions = 1, len(self.devices)
        build = options.executable_build_options
        build.use_spmd_partitioning = True
        build.use_shardy_partitioner = True
        options.device_assignment = xc.DeviceAssignment.create(
            np.array([[d.id for d in self.devices]], dtype=np.int32))
        with flush_subnormals():
            return self.client.compile_and_load(text, self.device_list, options)

    def handlers(self, executable, out_shapes_dtypes):
        """Result handlers for the output layouts XLA chose; and those layouts."""
        found = executable.get_output_shardings()   # None for a mesh of one device
        out_shapes_dtypes = list(out_shapes_dtypes)
        layouts = ([xc.HloSharding.from_proto(p) for p in found] if found is not None
                   else [xc.HloSharding.replicate()] * len(out_shapes_dtypes))
        handlers = [_result_handler(_aval(tuple(s), np.dtype(d)),
                                    _GlobalSharding(self.device_list, layout))
                    for (s, d), layout in zip(out_shapes_dtypes, layouts)]
        return handlers, layouts

    execute = staticmethod(Runtime.execute)
    cost_analysis = staticmethod(Runtime.cost_analysis)

    @staticmethod
    def optimized_hlo(executable) -> str:
        """The partitioned, optimized HLO module (where XLA's collectives are)."""
        return "\n".join(m.to_string() for m in executable.hlo_modules())


def pjrt_devices() -> list:
    """Every CPU device of every process of the run (PJRT devices, global order)."""
    return list(cpu_client().devices())


# ----------------------------------------------------------------------------- several processes
# (*private*: _jax.get_distributed_runtime_service / _client, make_gloo_tcp_collectives;
# ../shared/notes/sharding-and-processes.md section 5)

class _Distributed:
    """This process's place in a multi-process run (set once by `connect`)."""
    client = None
    service = None
    process_id = 0
    num_processes = 1
    hostname = None


_distributed = _Distributed()


class DistributedError(RuntimeError):
    """The processes of a run could not connect, or a peer went away."""


def connect(address: str, num_processes: int, process_id: int, timeout_s: int) -> None:
    """Join the run coordinated at `address` ("host:port"); process 0 also serves it. Must
    come before the CPU client is made (its device list spans the processes)."""
    if _distributed.client is not None:
        raise RuntimeError("tlaloc.distributed.initialize was already called in this process")
    if _cpu_made():
        raise RuntimeError("tlaloc.distributed.initialize must come before tlaloc first uses "
                           "the CPU (the device list spans the processes)")
    try:
        if process_id == 0:
            _distributed.service = _jax.get_distributed_runtime_service(
                address, num_processes, heartbeat_timeout=timeout_s,
                cluster_register_timeout=timeout_s, shutdown_timeout=timeout_s)
        client = _jax.get_distributed_runtime_client(
            address, process_id, init_timeout=timeout_s, heartbeat_timeout=timeout_s,
            shutdown_timeout=timeout_s, rpc_timeout=timeout_s, shutdown_on_destruction=False,
            missed_heartbeat_callback=_peer_lost)
        client.connect()
    except Exception as e:   # jaxlib raises its own XlaRuntimeError types here
        _shutdown_service()
        raise DistributedError(f"tlaloc.distributed.initialize: process {process_id} of "
                               f"{num_processes} could not join the run at {address} within "
                               f"{timeout_s} s: {e}") from None
    _distributed.client = client
    _distributed.process_id = process_id
    _distributed.num_processes = num_processes
    # gloo's address for this process: loopback when the run is on this machine; otherwise
    # None, which lets gloo take this host's name (the coordinator's would be wrong for
    # every other host)
    host = address.rpartition(":")[0]
    _distributed.hostname = host if host.startswith("127.") or host == "localhost" else None


def _peer_lost(*_):
    """The client's callback for a peer the service reports lost. Given any callback, jaxlib
    no longer applies its default (abort this process from a C++ thread) while connect()
    waits for a peer that never joins, so connect() raises (DistributedError). It is never
    entered: on 0.10.2, jaxlib aborts with std::bad_cast converting the status it would pass,
    which is how a process idle when a peer dies ends, timeout_s later (a process inside a
    collective gets the collective's error first)."""


def _cpu_made() -> bool:
    from .._config import cpu_devices_fixed
    return cpu_devices_fixed()


def _shutdown_service():
    if _distributed.service is not None:
        try:
            _distributed.service.shutdown()
        except Exception:   # already gone
            pass
        _distributed.service = None


def disconnect() -> None:
    """Leave the run (a barrier with the other processes, then the service stops)."""
    client = _distributed.client
    if client is not None:
        try:
            client.shutdown()
        except Exception:   # a peer already left: nothing to wait for
            pass
        _distributed.client = None
    _shutdown_service()


def process_info() -> tuple:
    """(this process's index, the number of processes)."""
    return _distributed.process_id, _distributed.num_processes


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
