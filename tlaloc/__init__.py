"""tlaloc: the Python array API standard (2025.12), lazy and fused through StableHLO and PJRT.

    import tlaloc as xp
    x = xp.linspace(0, 1, 5)
    y = xp.sum(xp.sin(x) ** 2)   # recorded, not computed
    float(y)                      # lowered to one StableHLO program, compiled or interpreted
"""
import os as _os
import sys as _sys

# first: decides which modules may be imported compiled (TLALOC_PURE_PYTHON, docs/native.md)
from ._native import native_modules
from ._config import VERSION as _VERSION, config
from ._dtypes import (bfloat16, bool, complex64, complex128, float16, float32, float64, int8,
                      int16, int32, int64, uint8, uint16, uint32, uint64, DType)
from ._array import Array
from . import _operators
from ._devices import Device, device
from ._graph import ConcretizationError, DerivativeLostError, DonatedArrayError
from ._runtime_api import (cache_info, eval, primitive, reset_cache_info, stablehlo,
                           wait_for_compiles)
from ._api.creation import (arange, asarray, astype, empty, empty_like, eye, from_dlpack, full,
                            full_like, linspace, meshgrid, ones, ones_like, tril, triu, zeros,
                            zeros_like)
from ._api.data_types import can_cast, finfo, iinfo, isdtype, result_type
from ._api.elementwise import (abs, acos, acosh, add, asin, asinh, atan, atan2, atanh,
                               bitwise_and, bitwise_invert, bitwise_left_shift, bitwise_or,
                               bitwise_right_shift, bitwise_xor, ceil, clip, conj, copysign, cos,
                               cosh, divide, equal, exp, expm1, floor, floor_divide, greater,
                               greater_equal, hypot, imag, isfinite, isinf, isnan, less,
                               less_equal, log, log1p, log2, log10, logaddexp, logical_and,
                               logical_not, logical_or, logical_xor, maximum, minimum, multiply,
                               negative, nextafter, not_equal, positive, pow, real, reciprocal,
                               remainder, round, sign, signbit, sin, sinh, sqrt, square, subtract,
                               tan, tanh, trunc)
from ._api.info import __array_namespace_info__
from ._api.linear_algebra import matmul, matrix_transpose, tensordot, vecdot
from ._api.manipulation import (broadcast_arrays, broadcast_to, concat, expand_dims, flip,
                                moveaxis, permute_dims, repeat, reshape, roll, squeeze, stack,
                                tile, unstack)
from ._api.indexing import take, take_along_axis
from ._api._core import ArrayTooLargeError, broadcast_shapes as _broadcast_shapes
from ._api.statistical import (cumulative_prod, cumulative_sum, max, mean, min, prod, std, sum,
                               var)
from ._api.utility import all, any, diff
from ._api.searching import argmax, argmin, count_nonzero, nonzero, searchsorted, where
from ._api.sorting import argsort, sort
from ._api.set_functions import isin, unique_all, unique_counts, unique_inverse, unique_values

from ._prims.padding import PaddingError
from ._mesh import Mesh, Shard, Sharding, devices, local_devices   # docs/distributed.md
# The interpreter runs every operation done at once and every first evaluation: loaded with
# the package rather than by the first line that computes
from .backends import interpreter as _interpreter  # noqa: F401

__array_api_version__ = "2025.12"
__version__ = _VERSION

e = 2.718281828459045
pi = 3.141592653589793
inf = float("inf")
nan = float("nan")
newaxis = None

_operators.install(_sys.modules[__name__])   # Array's operators and namespace methods


if _os.environ.get("TLALOC_EXPLAIN", "") not in ("", "0"):
    # every evaluation on the tlaloc.explain logger
    from ._explain import explain_from_environment as _explain_from_environment
    _explain_from_environment()


def broadcast_shapes(*shapes):
    """The shape that `shapes` broadcast to (ValueError if they do not)."""
    return _broadcast_shapes(*[tuple(s) for s in shapes])


# Named axes: the user-facing functions (names themselves live in the abstract values).
from . import named  # noqa: E402
from .named import Named, align_to, contract, rename, typechecked  # noqa: E402


# Imported on first use, so that `import tlaloc` loads only what recording and evaluation
# need (docs/benchmarks.md, start-up): attribute -> (module, its attribute or None for the
# module itself). tlaloc.linalg, .fft and .special are the extensions (SciPy finds
# xp.special), profile/memory_stats docs/profiling.md.
_SUBSYSTEMS = {
    ".autodiff": ("checkpoint", "custom_jvp", "custom_vjp", "grad", "hessian", "jacfwd",
                  "jacobian", "jacrev", "jvp", "stop_gradient", "value_and_grad", "vjp"),
    ".autodiff.source": ("grad_source",),
    # jit and export with dynamic axes (docs/dynamic-shapes.md); without dynamic=, _jit's
    # and _export's
    "._dynamic": ("deserialize", "dim_size", "export", "jit"),
    "._jit": ("compile_log",),
    "._export": ("Exported",),
    "._vmap": ("vmap",),
    ".control_flow": ("cond", "fori_loop", "scan", "switch", "while_loop"),
    "._sharding": ("all_gather", "all_to_all", "axis_index", "from_process_local", "pmax",
                   "pmean", "pmin", "ppermute", "psum", "psum_scatter", "shard", "shard_map",
                   "with_sharding"),
    "._collectives": ("collectives",),
    ".distributed": ("process_count", "process_index"),
    "._profile": ("profile", "memory_stats"),
    "._explain": ("explain",),
}
_ON_FIRST_USE = {name: (module, name) for module, names in _SUBSYSTEMS.items()
                 for name in names}
_ON_FIRST_USE.update({m: ("." + m, None) for m in (
    "fft", "linalg", "special", "random", "numpy", "tree", "distributed")})


def __dir__():
    return sorted(set(globals()) | set(_ON_FIRST_USE))


def __getattr__(name):
    spec = _ON_FIRST_USE.get(name)
    if spec is not None:
        import importlib
        module = importlib.import_module(spec[0], __name__)
        value = module if spec[1] is None else getattr(module, spec[1])
        globals()[name] = value     # found directly from now on
        return value
    from ._numpy_names import STANDARD_SPELLING, missing
    raise missing("tlaloc", name, STANDARD_SPELLING)
