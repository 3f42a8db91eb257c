"""The node vocabulary: one function per primitive.

Every derivative rule, and every function that composes primitives, records an operation by
calling the primitive's function here: `lax.add(x, y)`, `lax.reduce_sum(x, axes=(0,))`,
`lax.constant(shape=(), dtype=dt.float32, value=0.0, device=d)`. Operands are graph nodes;
static parameters are keyword arguments (hashable: they are part of the compile-cache key).
Elementwise primitives need operands of one dtype and one shape, or 0-d operands beside
full ones; broadcasting and type promotion are the namespace's work.

A function finds its primitive by name in the registry when it is called, so this module
imports no primitive module: the primitive modules use it in their own rules without an
import cycle (each declaration adds its primitive to the registry). Names that are Python
keywords are spelled as the namespace spells them (`bitwise_and` binds `and`).
"""
from __future__ import annotations

from .._graph import bind
from .core import REGISTRY as _P

# The parameters of primitives that take none: one shared dict (parameters are static and
# never changed), so no operation allocates one
_NO_PARAMS = {}

# ----------------------------------------------------------------------------- elementwise

def abs(x):
    return bind(_P["abs"], (x,), _NO_PARAMS)


def acos(x):
    return bind(_P["acos"], (x,), _NO_PARAMS)


def acosh(x):
    return bind(_P["acosh"], (x,), _NO_PARAMS)


def add(x, y):
    return bind(_P["add"], (x, y), _NO_PARAMS)


def asin(x):
    return bind(_P["asin"], (x,), _NO_PARAMS)


def asinh(x):
    return bind(_P["asinh"], (x,), _NO_PARAMS)


def atan(x):
    return bind(_P["atan"], (x,), _NO_PARAMS)


def atan2(x, y):
    return bind(_P["atan2"], (x, y), _NO_PARAMS)


def atanh(x):
    return bind(_P["atanh"], (x,), _NO_PARAMS)


def bessel_i1e(x):
    return bind(_P["bessel_i1e"], (x,), _NO_PARAMS)


def bitcast_convert(x, *, dtype):
    return bind(_P["bitcast_convert"], (x,), {"dtype": dtype})


def bitwise_and(x, y):
    return bind(_P["and"], (x, y), _NO_PARAMS)


def bitwise_not(x):
    return bind(_P["not"], (x,), _NO_PARAMS)


def bitwise_or(x, y):
    return bind(_P["or"], (x, y), _NO_PARAMS)


def bitwise_xor(x, y):
    return bind(_P["xor"], (x, y), _NO_PARAMS)


def ceil(x):
    return bind(_P["ceil"], (x,), _NO_PARAMS)


def compare(x, y, *, direction):
    return bind(_P["compare"], (x, y), {"direction": direction})


def complex(re, im):
    return bind(_P["complex"], (re, im), _NO_PARAMS)


def convert(x, *, dtype):
    return bind(_P["convert"], (x,), {"dtype": dtype})


def cos(x):
    return bind(_P["cos"], (x,), _NO_PARAMS)


def cosh(x):
    return bind(_P["cosh"], (x,), _NO_PARAMS)


def digamma(x):
    return bind(_P["digamma"], (x,), _NO_PARAMS)


def divide(x, y):
    return bind(_P["divide"], (x, y), _NO_PARAMS)


def erf(x):
    return bind(_P["erf"], (x,), _NO_PARAMS)


def erf_inv(x):
    return bind(_P["erf_inv"], (x,), _NO_PARAMS)


def erfc(x):
    return bind(_P["erfc"], (x,), _NO_PARAMS)


def exp(x):
    return bind(_P["exp"], (x,), _NO_PARAMS)


def expm1(x):
    return bind(_P["expm1"], (x,), _NO_PARAMS)


def floor(x):
    return bind(_P["floor"], (x,), _NO_PARAMS)


def imag(x):
    return bind(_P["imag"], (x,), _NO_PARAMS)


def is_finite(x):
    return bind(_P["is_finite"], (x,), _NO_PARAMS)


def lgamma(x):
    return bind(_P["lgamma"], (x,), _NO_PARAMS)


def log(x):
    return bind(_P["log"], (x,), _NO_PARAMS)


def log1p(x):
    return bind(_P["log1p"], (x,), _NO_PARAMS)


def logistic(x):
    return bind(_P["logistic"], (x,), _NO_PARAMS)


def maximum(x, y):
    return bind(_P["maximum"], (x, y), _NO_PARAMS)


def minimum(x, y):
    return bind(_P["minimum"], (x, y), _NO_PARAMS)


def multiply(x, y):
    return bind(_P["multiply"], (x, y), _NO_PARAMS)


def negate(x):
    return bind(_P["negate"], (x,), _NO_PARAMS)


def nextafter(x, y):
    return bind(_P["nextafter"], (x, y), _NO_PARAMS)


def polygamma(n, x):
    return bind(_P["polygamma"], (n, x), _NO_PARAMS)


def power(x, y):
    return bind(_P["power"], (x, y), _NO_PARAMS)


def real(x):
    return bind(_P["real"], (x,), _NO_PARAMS)


def remainder(x, y):
    return bind(_P["remainder"], (x, y), _NO_PARAMS)


def round_even(x):
    return bind(_P["round_even"], (x,), _NO_PARAMS)


def rsqrt(x):
    return bind(_P["rsqrt"], (x,), _NO_PARAMS)


def select(pred, on_true, on_false):
    return bind(_P["select"], (pred, on_true, on_false), _NO_PARAMS)


def shift_left(x, y):
    return bind(_P["shift_left"], (x, y), _NO_PARAMS)


def shift_right_arithmetic(x, y):
    return bind(_P["shift_right_arithmetic"], (x, y), _NO_PARAMS)


def shift_right_logical(x, y):
    return bind(_P["shift_right_logical"], (x, y), _NO_PARAMS)


def sign(x):
    return bind(_P["sign"], (x,), _NO_PARAMS)


def sin(x):
    return bind(_P["sin"], (x,), _NO_PARAMS)


def sinh(x):
    return bind(_P["sinh"], (x,), _NO_PARAMS)


def sqrt(x):
    return bind(_P["sqrt"], (x,), _NO_PARAMS)


def subtract(x, y):
    return bind(_P["subtract"], (x, y), _NO_PARAMS)


def tan(x):
    return bind(_P["tan"], (x,), _NO_PARAMS)


def tanh(x):
    return bind(_P["tanh"], (x,), _NO_PARAMS)


# ----------------------------------------------------------------------------- structural

def broadcast_in_dim(x, *, shape, dims):
    return bind(_P["broadcast_in_dim"], (x,), {"shape": shape, "dims": dims})


def cholesky(x):
    return bind(_P["cholesky"], (x,), _NO_PARAMS)


def concatenate(*xs, axis):
    return bind(_P["concatenate"], tuple(xs), {"axis": axis})


def constant(*, shape, dtype, value, device):
    return bind(_P["constant"], (), {"shape": shape, "dtype": dtype, "value": value}, device)


def cumulative(x, *, axis, kind):
    return bind(_P["cumulative"], (x,), {"axis": axis, "kind": kind})


def dot_general(lhs, rhs, *, contract, batch):
    return bind(_P["dot_general"], (lhs, rhs), {"contract": contract, "batch": batch})


def dynamic_slice(x, *starts, sizes):
    return bind(_P["dynamic_slice"], (x, *starts), {"sizes": sizes})


def dynamic_update_slice(x, update, *starts):
    return bind(_P["dynamic_update_slice"], (x, update, *starts), _NO_PARAMS)


def eig(x, *, vectors):
    return bind(_P["eig"], (x,), {"vectors": vectors})


def eigh(x, *, vectors):
    return bind(_P["eigh"], (x,), {"vectors": vectors})


def fft(x, *, fft_type, fft_length):
    return bind(_P["fft"], (x,), {"fft_type": fft_type, "fft_length": fft_length})


def gather(x, idx, *, axes):
    return bind(_P["gather"], (x, idx), {"axes": axes})


def iota(*, shape, dtype, dim, device):
    return bind(_P["iota"], (), {"shape": shape, "dtype": dtype, "dim": dim}, device)


def lu(x):
    return bind(_P["lu"], (x,), _NO_PARAMS)


def qr(x, *, full):
    return bind(_P["qr"], (x,), {"full": full})


def optimization_barrier(x):
    return bind(_P["optimization_barrier"], (x,), _NO_PARAMS)


def pad(x, padding_value, *, low, high, interior):
    return bind(_P["pad"], (x, padding_value), {"low": low, "high": high, "interior": interior})


def reduce_max(x, *, axes):
    return bind(_P["reduce_max"], (x,), {"axes": axes})


def reduce_min(x, *, axes):
    return bind(_P["reduce_min"], (x,), {"axes": axes})


def reduce_prod(x, *, axes):
    return bind(_P["reduce_prod"], (x,), {"axes": axes})


def reduce_sum(x, *, axes):
    return bind(_P["reduce_sum"], (x,), {"axes": axes})


def rename(x, *, names):
    """`x` with axis names `names` (computes nothing); `x` itself when they are its own."""
    if x.aval.names == names:
        return x
    return bind(_P["rename"], (x,), {"names": names})


def reshape(x, *, shape):
    return bind(_P["reshape"], (x,), {"shape": shape})


def reverse(x, *, dims):
    return bind(_P["reverse"], (x,), {"dims": dims})


def scatter(x, idx, updates, *, axes, mode):
    return bind(_P["scatter"], (x, idx, updates), {"axes": axes, "mode": mode})


def slice(x, *, start, limit, strides):
    return bind(_P["slice"], (x,), {"start": start, "limit": limit, "strides": strides})


def slice_by(x, params):
    """slice with its parameters as one dict {"start", "limit", "strides"}, which the nodes
    share: a basic index's cached step makes it once, not at every `x[a:b]`."""
    return bind(_P["slice"], (x,), params)


def sort(*operands, dimension, num_keys, descending, output):
    return bind(_P["sort"], tuple(operands),
                {"dimension": dimension,
                 "num_keys": num_keys,
                 "descending": descending,
                 "output": output})


def svd(x, *, mode):
    return bind(_P["svd"], (x,), {"mode": mode})


def threefry2x32(k0, k1, x0, x1, *, output):
    return bind(_P["threefry2x32"], (k0, k1, x0, x1), {"output": output})


def transpose(x, *, perm):
    return bind(_P["transpose"], (x,), {"perm": perm})


def triangular_solve(a, b, *, left_side, lower, transpose_a, unit_diagonal):
    return bind(_P["triangular_solve"], (a, b),
                {"left_side": left_side,
                 "lower": lower,
                 "transpose_a": transpose_a,
                 "unit_diagonal": unit_diagonal})


# ----------------------------------------------------------------------------- autodiff

def custom_derivative_call(value, *args, rule, output=None):
    return bind(_P["custom_derivative_call"], (value, *args), {"rule": rule, "output": output})


def stop_gradient(x):
    return bind(_P["stop_gradient"], (x,), _NO_PARAMS)


def nondifferentiable(x, *, what):
    return bind(_P["nondifferentiable"], (x,), {"what": what})


def variable(x):
    return bind(_P["variable"], (x,), _NO_PARAMS)


