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

# ----------------------------------------------------------------------------- elementwise

def abs(x):
    return bind(_P["abs"], (x,), {})


def acos(x):
    return bind(_P["acos"], (x,), {})


def acosh(x):
    return bind(_P["acosh"], (x,), {})


def add(x, y):
    return bind(_P["add"], (x, y), {})


def asin(x):
    return bind(_P["asin"], (x,), {})


def asinh(x):
    return bind(_P["asinh"], (x,), {})


def atan(x):
    return bind(_P["atan"], (x,), {})


def atan2(x, y):
    return bind(_P["atan2"], (x, y), {})


def atanh(x):
    return bind(_P["atanh"], (x,), {})


def bessel_i1e(x):
    return bind(_P["bessel_i1e"], (x,), {})


def bitcast_convert(x, *, dtype):
    return bind(_P["bitcast_convert"], (x,), {"dtype": dtype})


def bitwise_and(x, y):
    return bind(_P["and"], (x, y), {})


def bitwise_not(x):
    return bind(_P["not"], (x,), {})


def bitwise_or(x, y):
    return bind(_P["or"], (x, y), {})


def bitwise_xor(x, y):
    return bind(_P["xor"], (x, y), {})


def ceil(x):
    return bind(_P["ceil"], (x,), {})


def compare(x, y, *, direction):
    return bind(_P["compare"], (x, y), {"direction": direction})


def complex(re, im):
    return bind(_P["complex"], (re, im), {})


def convert(x, *, dtype):
    return bind(_P["convert"], (x,), {"dtype": dtype})


def cos(x):
    return bind(_P["cos"], (x,), {})


def cosh(x):
    return bind(_P["cosh"], (x,), {})


def digamma(x):
    return bind(_P["digamma"], (x,), {})


def divide(x, y):
    return bind(_P["divide"], (x, y), {})


def erf(x):
    return bind(_P["erf"], (x,), {})


def erf_inv(x):
    return bind(_P["erf_inv"], (x,), {})


def erfc(x):
    return bind(_P["erfc"], (x,), {})


def exp(x):
    return bind(_P["exp"], (x,), {})


def expm1(x):
    return bind(_P["expm1"], (x,), {})


def floor(x):
    return bind(_P["floor"], (x,), {})


def imag(x):
    return bind(_P["imag"], (x,), {})


def is_finite(x):
    return bind(_P["is_finite"], (x,), {})


def lgamma(x):
    return bind(_P["lgamma"], (x,), {})


def log(x):
    return bind(_P["log"], (x,), {})


def log1p(x):
    return bind(_P["log1p"], (x,), {})


def logistic(x):
    return bind(_P["logistic"], (x,), {})


def maximum(x, y):
    return bind(_P["maximum"], (x, y), {})


def minimum(x, y):
    return bind(_P["minimum"], (x, y), {})


def multiply(x, y):
    return bind(_P["multiply"], (x, y), {})


def negate(x):
    return bind(_P["negate"], (x,), {})


def nextafter(x, y):
    return bind(_P["nextafter"], (x, y), {})


def polygamma(n, x):
    return bind(_P["polygamma"], (n, x), {})


def power(x, y):
    return bind(_P["power"], (x, y), {})


def real(x):
    return bind(_P["real"], (x,), {})


def remainder(x, y):
    return bind(_P["remainder"], (x, y), {})


def round_even(x):
    return bind(_P["round_even"], (x,), {})


def rsqrt(x):
    return bind(_P["rsqrt"], (x,), {})


def select(pred, on_true, on_false):
    return bind(_P["select"], (pred, on_true, on_false), {})


def shift_left(x, y):
    return bind(_P["shift_left"], (x, y), {})


def shift_right_arithmetic(x, y):
    return bind(_P["shift_right_arithmetic"], (x, y), {})


def shift_right_logical(x, y):
    return bind(_P["shift_right_logical"], (x, y), {})


def sign(x):
    return bind(_P["sign"], (x,), {})


def sin(x):
    return bind(_P["sin"], (x,), {})


def sinh(x):
    return bind(_P["sinh"], (x,), {})


def sqrt(x):
    return bind(_P["sqrt"], (x,), {})


def subtract(x, y):
    return bind(_P["subtract"], (x, y), {})


def tan(x):
    return bind(_P["tan"], (x,), {})


def tanh(x):
    return bind(_P["tanh"], (x,), {})


# ----------------------------------------------------------------------------- structural

def broadcast_in_dim(x, *, shape, dims):
    return bind(_P["broadcast_in_dim"], (x,), {"shape": shape, "dims": dims})


def cholesky(x):
    return bind(_P["cholesky"], (x,), {})


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
    return bind(_P["dynamic_update_slice"], (x, update, *starts), {})


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
    return bind(_P["lu"], (x,), {})


def qr(x, *, full):
    return bind(_P["qr"], (x,), {"full": full})


def optimization_barrier(x):
    return bind(_P["optimization_barrier"], (x,), {})


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
    return bind(_P["stop_gradient"], (x,), {})


def nondifferentiable(x, *, what):
    return bind(_P["nondifferentiable"], (x,), {"what": what})


def variable(x):
    return bind(_P["variable"], (x,), {})


