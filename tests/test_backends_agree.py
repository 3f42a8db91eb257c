"""Every primitive gives the same result on the interpreter and on the CPU device (compiled):
bit for bit for exact operations, within docs/precision.md's tolerances for transcendental
ones (issue 14, deliverable 3). Subnormal results compare as zeros of the same sign (XLA:CPU
flushes them, docs/precision.md); NaN positions and the signs of zeros are compared.

`CASES` has one entry per primitive in `tlaloc._prims.REGISTRY` (a test fails for a primitive
without one): a function `case(dev) -> [(label, array, exact)]` that applies the primitive to
edge inputs on the device `dev`. Every case of one primitive is evaluated in one program per
device. The derivative programs (jvp and vjp of a function applying the primitive) are
compared the same way for the primitives with derivative rules.
"""
import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tlaloc as xp
import tlaloc.fft, tlaloc.linalg, tlaloc.random, tlaloc.special  # noqa: F401 (all primitives declared)
from tlaloc._prims import REGISTRY

from helpers import TOLERANCE

FLOATS = ["float16", "bfloat16", "float32", "float64"]
COMPLEX = ["complex64", "complex128"]
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
ALL = ["bool"] + INTS + FLOATS + COMPLEX


def _np_dtype(name):
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def _finfo(name):
    return ml_dtypes.finfo(ml_dtypes.bfloat16) if name == "bfloat16" else np.finfo(name)


def float_edges(name):
    """±0, ± subnormal, ± smallest normal, tiny, moderate, huge, ±max, ±inf, nan."""
    fi = _finfo(name)
    sub = float(fi.smallest_subnormal) * 3
    tiny = float(fi.smallest_normal)
    huge = float(fi.max)
    vals = [0.0, -0.0, sub, -sub, tiny, -tiny, tiny * 4, 1e-3, -0.25, 0.5, -0.5, 0.75, 1.0, -1.0,
            1.5, -2.5, 3.0, 7.25, -40.0, 100.0, math.sqrt(huge), -math.sqrt(huge), huge, -huge,
            math.inf, -math.inf, math.nan]
    return np.array(vals, dtype=_np_dtype(name))


def complex_edges(name):
    """Parts drawn from ±0, subnormal, tiny, moderate, huge, ±inf, nan (all combinations)."""
    part = "float32" if name == "complex64" else "float64"
    small, big = (1e-20, 1e20) if part == "float32" else (1e-200, 1e200)
    sub = float(np.finfo(part).smallest_subnormal) * 3
    re = np.array([0.0, -0.0, sub, small, -small, 0.5, -1.5, 1.0, big, -big, math.inf, -math.inf,
                   math.nan], dtype=part)
    out = np.empty((len(re), len(re)), dtype=name)
    out.real, out.imag = re[:, None], re[None, :]
    return out.ravel()


def int_edges(name):
    if name == "bool":
        return np.array([True, False, True, False])
    info = np.iinfo(name)
    vals = [0, 1, 2, 3, 7, info.max, info.min, info.max - 1]
    if info.min < 0:
        vals += [-1, -2, -7, info.min + 1]
    return np.array(vals, dtype=name)


def edges(name):
    if name in FLOATS:
        return float_edges(name)
    if name in COMPLEX:
        return complex_edges(name)
    return int_edges(name)


def pairs(name):
    """Every pair of edge values, as two flat arrays."""
    v = edges(name)
    return np.repeat(v, len(v)), np.tile(v, len(v))


# ----------------------------------------------------------------------------- comparison

def _flush(a):
    """Subnormals as zeros of the same sign (float arrays; complex by parts)."""
    if a.dtype.kind == "c":
        return _complex_from(_flush(a.real.copy()), _flush(a.imag.copy()), a.dtype)
    if a.dtype.kind == "V" or a.dtype == np.dtype(ml_dtypes.bfloat16):
        tiny = float(ml_dtypes.finfo(ml_dtypes.bfloat16).smallest_normal)
        a = a.astype(np.float32)
    elif a.dtype.kind == "f":
        tiny = float(np.finfo(a.dtype).smallest_normal)
    else:
        return a
    a = a.copy()
    sub = (a != 0) & (np.abs(a) < tiny)
    a[sub] = np.copysign(0, a[sub])
    return a


def _complex_from(re, im, dtype):
    out = np.empty(re.shape, dtype=dtype)
    out.real, out.imag = re, im
    return out


def _parts(a):
    return [a.real, a.imag] if a.dtype.kind == "c" else [a]


def disagreement(i, c, exact, rtol=None):
    """None when interpreter result `i` and compiled result `c` agree, else a description."""
    i, c = np.asarray(i), np.asarray(c)
    if i.shape != c.shape or i.dtype != c.dtype:
        return f"shape/dtype {i.shape} {i.dtype} != {c.shape} {c.dtype}"
    if i.dtype.kind in "biu":
        bad = i != c
    elif exact == "magnitude":  # complex derivatives: each part relative to |z|, zero signs free
        r, t = TOLERANCE[str(i.dtype)]
        with np.errstate(all="ignore"):
            bad = ~np.isclose(i, c, rtol=r, atol=t, equal_nan=True)
            for pi, pc in zip(_parts(i), _parts(c)):
                bad |= np.isnan(pi) != np.isnan(pc)
    elif exact == "norm":   # linear algebra: errors relative to the largest entry
        r = 1e-4 if i.dtype in (np.float32, np.complex64) else 1e-10
        scale = np.max(np.abs(i[np.isfinite(i)]), initial=0.0)
        bad = ~np.isclose(i, c, rtol=r, atol=r * scale, equal_nan=True)
    else:
        name = str(i.dtype)
        r, t = TOLERANCE.get(name, (1e-6, 1e-7))
        if rtol is not None:
            r = rtol
        fi, fc = _flush(i), _flush(c)
        bad = np.zeros(i.shape, dtype=bool)
        for pi, pc in zip(_parts(fi), _parts(fc)):
            pi, pc = pi.astype(np.float64), pc.astype(np.float64)
            ni, nc = np.isnan(pi), np.isnan(pc)
            bad |= ni != nc
            both = ~ni & ~nc
            if exact:
                bad |= both & (pi != pc)
            else:
                with np.errstate(all="ignore"):
                    close = np.isclose(pi, pc, rtol=r, atol=t)
                bad |= both & ~close
            zero = both & (pi == 0) & (pc == 0)
            bad |= zero & (np.signbit(pi) != np.signbit(pc))
    if not bad.any():
        return None
    where = np.argwhere(bad)[:4].tolist()
    return (f"{int(bad.sum())} of {bad.size} differ, at {where}: interpreter "
            f"{i[bad][:4].tolist()} compiled {c[bad][:4].tolist()}")


# ----------------------------------------------------------------------------- cases

def _arr(dev, values):
    return xp.asarray(np.asarray(values), device=dev)


def _prim(name, *xs, **params):
    return xp.primitive(name, *xs, **params)


# Exact elementwise primitives (IEEE exact, or integer/bitwise, or no arithmetic at all).
EXACT_EW = {"add", "subtract", "multiply", "divide", "sqrt", "negate", "abs", "maximum", "minimum",
            "floor", "ceil", "round_even", "sign", "real", "imag", "complex", "is_finite",
            "nextafter", "remainder", "and", "or", "xor", "not", "shift_left",
            "shift_right_arithmetic", "shift_right_logical", "compare", "select"}
# ... but complex arithmetic other than add/subtract/negate is a composition (FMA may apply).
EXACT_COMPLEX = {"add", "subtract", "negate", "real", "imag", "complex", "is_finite", "compare",
                 "select", "round_even", "floor", "ceil"}


def _exact(name, dtype):
    if name not in EXACT_EW:
        return False
    return dtype not in COMPLEX or name in EXACT_COMPLEX


def unary(name, dtypes=ALL):
    def case(dev):
        out = []
        for d in dtypes:
            try:
                r = _prim(name, _arr(dev, edges(d)))
            except TypeError:
                continue
            out.append((d, r, _exact(name, d)))
        assert out, f"{name}: no dtype accepted"
        return out
    return case


def binary(name, dtypes=ALL, **params):
    def case(dev):
        out = []
        for d in dtypes:
            a, b = pairs(d)
            try:
                r = _prim(name, _arr(dev, a), _arr(dev, b), **params)
            except TypeError:
                continue
            out.append((d, r, _exact(name, d)))
        assert out, f"{name}: no dtype accepted"
        return out
    return case


def shifts(name):
    def case(dev):
        out = []
        for d in INTS:
            v = int_edges(d)
            bits = np.iinfo(d).bits
            s = np.array([0, 1, 3, bits - 1, bits, bits + 1] + ([-1] if d.startswith("int") else []),
                         dtype=d)
            a, b = np.repeat(v, len(s)), np.tile(s, len(v))
            out.append((d, _prim(name, _arr(dev, a), _arr(dev, b)), True))
        return out
    return case


def compare_case(dev):
    out = []
    for direction in ("EQ", "NE", "LT", "LE", "GT", "GE"):
        for d in ALL:
            a, b = pairs(d)
            if d in COMPLEX and direction not in ("EQ", "NE"):
                continue
            out.append((f"{direction} {d}", xp.primitive("compare", _arr(dev, a), _arr(dev, b),
                                                         direction=direction), True))
    return out


def select_case(dev):
    out = []
    for d in ALL:
        a, b = pairs(d)
        p = (np.arange(a.size) % 3) == 0
        out.append((d, _prim("select", _arr(dev, p), _arr(dev, a), _arr(dev, b)), True))
    return out


def complex_case(dev):
    out = []
    for d in ("float32", "float64"):
        a, b = pairs(d)
        out.append((d, _prim("complex", _arr(dev, a), _arr(dev, b)), True))
    return out


def polygamma_case(dev):
    out = []
    for d in ("float32", "float64"):
        x = float_edges(d)
        for n in (0.0, 1.0, 2.0):
            nn = np.full(x.shape, n, dtype=d)
            out.append((f"{d} n={n}", _prim("polygamma", _arr(dev, nn), _arr(dev, x)), False))
    return out


def convert_case(dev):
    out = []
    for s in ALL:
        for d in ALL:
            x = _arr(dev, edges(s))
            try:
                r = _prim("convert", x, dtype=getattr(xp, d))
            except TypeError:
                continue
            out.append((f"{s}->{d}", r, True))
    return out


def bitcast_case(dev):
    out = []
    for s, d in [("float32", "int32"), ("float32", "uint32"), ("float64", "int64"),
                 ("float64", "uint64"), ("int32", "float32"), ("uint64", "float64"),
                 ("float16", "int16"), ("int16", "float16")]:
        v = edges(s)
        if s.startswith(("int", "uint")):  # bit patterns of subnormals, NaNs, infinities
            v = np.concatenate([v, np.array([1, 0x7f800001 if "32" in s else 0x7c01], dtype=s)])
        r = _prim("bitcast_convert", _arr(dev, v), dtype=getattr(xp, d))
        if d.startswith("float"):  # compare the bits: no arithmetic touches them
            r = _prim("bitcast_convert", r, dtype=getattr(xp, s))
        out.append((f"{s}->{d}", r, True))
    return out


def grid(d, rows=4):
    """The edge values of `d` as a (rows, >= 3) array."""
    v = edges(d)
    v = np.tile(v, -(-3 * rows // len(v)))
    n = (len(v) // rows) * rows
    return v[:n].reshape(rows, n // rows)


def _shape_cases(dev, fn):
    return [(d, fn(_arr(dev, grid(d)), d), True)
            for d in ("bool", "int8", "uint64", "float32", "float64", "complex128")]


def shape_case(name, fn):
    return lambda dev: _shape_cases(dev, fn)


def constant_case(dev):
    out = []
    for d, v in [("float64", -0.0), ("float32", math.nan), ("float64", 5e-324), ("int8", -128),
                 ("uint64", 2**64 - 1), ("bool", True), ("complex128", complex(-0.0, math.inf))]:
        out.append((d, xp.primitive("constant", device=dev, shape=(3,), dtype=getattr(xp, d),
                                    value=v), True))
    return out


def iota_case(dev):
    return [(d, xp.primitive("iota", device=dev, shape=(3, 4), dtype=getattr(xp, d), dim=1), True)
            for d in ("int32", "uint8", "float32", "float64")]


def reduce_case(name):
    exact = name in ("reduce_max", "reduce_min")
    def case(dev):
        out = []
        for d in ALL:
            x = _arr(dev, grid(d, 3))
            for axes in ((0,), (1,), (0, 1)):
                try:
                    r = _prim(name, x, axes=axes)
                except TypeError:
                    continue
                out.append((f"{d} {axes}", r, exact or d not in FLOATS + COMPLEX))
        return out
    return case


def cumulative_case(dev):
    out = []
    for kind in ("sum", "prod", "max", "min"):
        for d in ("int32", "uint8", "float32", "float64", "complex128"):
            x = _arr(dev, grid(d, 3))
            try:
                r = _prim("cumulative", x, axis=1, kind=kind)
            except (TypeError, ValueError):
                continue
            out.append((f"{kind} {d}", r, kind in ("max", "min") or d.startswith(("int", "uint"))))
    return out


def dot_case(dev):
    out = []
    rng = np.random.default_rng(0)
    for d in ("int32", "float32", "float64", "complex128"):
        a = rng.integers(-3, 4, (3, 4)).astype(d)
        b = rng.integers(-3, 4, (4, 5)).astype(d)
        out.append((d, _prim("dot_general", _arr(dev, a), _arr(dev, b), contract=((1,), (0,)),
                             batch=((), ())), True))
        # edge values: inf * 0 gives nan, -0 sums
        e = edges(d)[:12].reshape(3, 4)
        out.append((f"{d} edges", _prim("dot_general", _arr(dev, e), _arr(dev, e),
                                        contract=((1,), (1,)), batch=((), ())), False))
    return out


def gather_case(dev):
    idx = np.array([[0], [2], [3], [-1], [9]], dtype=np.int32)  # out of range: clamped
    return _shape_cases(dev, lambda x, d: _prim("gather", x, _arr(dev, idx), axes=(0,)))


def scatter_case(dev):
    out = []
    idx = np.array([[0], [2], [2], [-1], [9]], dtype=np.int32)  # out of range: dropped
    for mode in ("set", "add", "mul", "min", "max"):
        for d in ("bool", "int8", "uint32", "float32", "float64", "complex128"):
            x = grid(d)
            u = np.flip(x, 1)[[0, 1, 1, 2, 3]]
            if mode == "set":
                idx_m, u = idx[[0, 1, 3, 4]], u[[0, 1, 3, 4]]  # no duplicate: order unspecified
            else:
                idx_m = idx
            try:
                r = _prim("scatter", _arr(dev, x), _arr(dev, idx_m), _arr(dev, u), axes=(0,),
                          mode=mode)
            except (TypeError, ValueError):
                continue
            out.append((f"{mode} {d}", r, mode in ("set", "min", "max") or d not in ("float32", "float64", "complex128") or mode == "add"))
    return out


def sort_case(dev):
    out = []
    for d in ("bool", "int8", "uint64", "float32", "float64", "float16"):
        v = edges(d)
        x = _arr(dev, v)
        pos = xp.primitive("iota", device=dev, shape=v.shape, dtype=xp.int32, dim=0)
        for desc in (False, True):
            out.append((f"{d} desc={desc}", _prim("sort", x, dimension=0, num_keys=1,
                                                   descending=desc, output=0), True))
            out.append((f"{d} perm desc={desc}", _prim("sort", x, pos, dimension=0, num_keys=1,
                                                        descending=desc, output=1), True))
    return out


def fft_case(dev):
    rng = np.random.default_rng(1)
    z = (rng.standard_normal(8) + 1j * rng.standard_normal(8))
    out = []
    for d in COMPLEX:
        zz = z.astype(d)
        out.append((f"FFT {d}", _prim("fft", _arr(dev, zz), fft_type="FFT", fft_length=(8,)), False))
        out.append((f"IFFT {d}", _prim("fft", _arr(dev, zz), fft_type="IFFT", fft_length=(8,)), False))
        r = zz.real.copy()
        out.append((f"RFFT {d}", _prim("fft", _arr(dev, r), fft_type="RFFT", fft_length=(8,)), False))
        out.append((f"IRFFT {d}", _prim("fft", _arr(dev, zz[:5]), fft_type="IRFFT", fft_length=(8,)), False))
    return out


def _spd(d, n=4):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((n, n))
    if d in COMPLEX:
        a = a + 1j * rng.standard_normal((n, n))
    return (a @ a.conj().T + n * np.eye(n)).astype(d)


LINALG_DTYPES = ("float32", "float64", "complex128")


def linalg_case(fn):
    def case(dev):
        return [(d, r, "norm") for d in LINALG_DTYPES for r in fn(_arr(dev, _spd(d)))]
    return case


def triangular_solve_case(dev):
    out = []
    for d in LINALG_DTYPES:
        a = np.tril(_spd(d))
        b = _spd(d)[:, :2]
        for lower, ta in ((True, "NO_TRANSPOSE"), (True, "ADJOINT"), (False, "TRANSPOSE")):
            aa = a if lower else a.T.copy()
            out.append((f"{d} {lower} {ta}", _prim("triangular_solve", _arr(dev, aa), _arr(dev, b),
                                                   left_side=True, lower=lower, transpose_a=ta,
                                                   unit_diagonal=False), "norm"))
    return out


def _passthrough(name, **params):
    return shape_case(name, lambda x, d: _prim(name, x, **params))


def threefry_case(dev):
    out = []
    u = lambda v: xp.asarray(np.asarray(v, dtype=np.uint32), device=dev)
    x1 = u([0, 1, 2, 0xFFFFFFFF, 0x80000000])
    for output in ("xor", "wide", "pair"):
        out.append((output, _prim("threefry2x32", u(0x12345678), u(0xFFFFFFFF), u(7), x1,
                                  output=output), True))
    return out


CASES = {
    "threefry2x32": threefry_case,
    "constant": constant_case,
    "iota": iota_case,
    "convert": convert_case,
    "bitcast_convert": bitcast_case,
    "compare": compare_case,
    "select": select_case,
    "complex": complex_case,
    "polygamma": polygamma_case,
    "shift_left": shifts("shift_left"),
    "shift_right_arithmetic": shifts("shift_right_arithmetic"),
    "shift_right_logical": shifts("shift_right_logical"),
    "broadcast_in_dim": shape_case("broadcast_in_dim", lambda x, d: _prim(
        "broadcast_in_dim", x, shape=(2,) + x.shape, dims=(1, 2))),
    "concatenate": shape_case("concatenate", lambda x, d: _prim("concatenate", x, x, axis=1)),
    "reshape": shape_case("reshape", lambda x, d: _prim("reshape", x, shape=(x.shape[1], 4))),
    "reverse": shape_case("reverse", lambda x, d: _prim("reverse", x, dims=(0, 1))),
    "transpose": shape_case("transpose", lambda x, d: _prim("transpose", x, perm=(1, 0))),
    "slice": shape_case("slice", lambda x, d: _prim("slice", x, start=(1, 0), limit=(4, 3),
                                                    strides=(2, 2))),
    "pad": shape_case("pad", lambda x, d: _prim(
        "pad", x, _prim("reshape", _prim("slice", _prim("reshape", x, shape=(x.size,)), start=(1,), limit=(2,),
                        strides=(1,)), shape=()),
        low=(1, -1), high=(0, 2), interior=(1, 0))),
    "dynamic_slice": shape_case("dynamic_slice", lambda x, d: _prim(
        "dynamic_slice", x, xp.asarray(3, dtype=xp.int32, device=x.device),
        xp.asarray(-1, dtype=xp.int32, device=x.device), sizes=(2, 2))),
    "dynamic_update_slice": shape_case("dynamic_update_slice", lambda x, d: _prim(
        "dynamic_update_slice", x, _prim("reverse", x, dims=(0,))[:2, :2],
        xp.asarray(1, dtype=xp.int32, device=x.device), xp.asarray(7, dtype=xp.int32, device=x.device))),
    "gather": gather_case,
    "scatter": scatter_case,
    "sort": sort_case,
    "cumulative": cumulative_case,
    "dot_general": dot_case,
    "reduce_sum": reduce_case("reduce_sum"),
    "reduce_prod": reduce_case("reduce_prod"),
    "reduce_max": reduce_case("reduce_max"),
    "reduce_min": reduce_case("reduce_min"),
    "rename": shape_case("rename", lambda x, d: _prim("rename", x, names=("a", "b"))),
    "optimization_barrier": _passthrough("optimization_barrier"),
    "stop_gradient": _passthrough("stop_gradient"),
    "variable": _passthrough("variable"),
    "nondifferentiable": _passthrough("nondifferentiable", what="test"),
    "custom_derivative_call": _passthrough("custom_derivative_call", rule=None),
    "fft": fft_case,
    "cholesky": linalg_case(lambda a: [_prim("cholesky", a)]),
    "triangular_solve": triangular_solve_case,
    # Factorisations: compared through quantities that do not depend on a phase convention.
    "eigh": linalg_case(lambda a: [xp.linalg.eigvalsh(a)]),
    "eig": linalg_case(lambda a: [xp.sort(xp.real(xp.linalg.eigvals(a)))]),
    "svd": linalg_case(lambda a: [xp.linalg.svdvals(a)]),
    "lu": linalg_case(lambda a: [xp.linalg.det(a), xp.linalg.inv(a)]),
    "qr": linalg_case(lambda a: [xp.abs(xp.linalg.qr(a)[1])]),
}


# ----------------------------------------------------------------------------- control flow
#
# Region ops run their bodies' primitives (each with its own case above): these cases check
# the region ops themselves on edge inputs (which branch runs, how many times a body runs,
# what a scan stacks), with bodies of correctly rounded operations.

def cond_case(dev):
    out = []
    for d in ("float32", "float64", "complex128", "int32"):
        v = _arr(dev, edges(d))
        for pred in (True, False):
            r = xp.cond(xp.asarray(pred, device=dev), lambda x: x * x - x, lambda x: -x, v)
            out.append((f"{d} {pred}", r, True))
        k = xp.asarray(2, device=dev)
        r = xp.switch(k, [lambda x: x, lambda x: x + x, lambda x: x * x], v)
        out.append((f"{d} switch", r, True))
    return out


def while_case(dev):
    out = []
    for d in ("float32", "float64"):
        v = _arr(dev, edges(d))
        count, halved = xp.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * 0.5),
                                      (xp.asarray(0, device=dev), v))
        out += [(f"{d} count", count, True), (f"{d} halved", halved, True)]
        never = xp.while_loop(lambda c: c[0] < 0, lambda c: (c[0] + 1, c[1] + 1.0),
                              (xp.asarray(0, device=dev), v))[1]
        out.append((f"{d} empty", never, True))
    return out


def scan_case(dev):
    out = []
    for d in ("float32", "float64", "int64"):
        rows = _arr(dev, edges(d)[:12].reshape(4, 3))
        for reverse in (False, True):
            total, running = xp.scan(lambda c, x: (c + x, c * x), xp.zeros(3, dtype=rows.dtype,
                                                                          device=dev),
                                     rows, reverse=reverse)
            out += [(f"{d} {reverse} carry", total, True), (f"{d} {reverse} ys", running, True)]
    return out


CASES.update({"cond": cond_case, "while": while_case, "scan": scan_case})

for _name, _p in REGISTRY.items():
    if _name not in CASES and _p.elementwise:
        n_operands = 2 if _name in {"add", "subtract", "multiply", "divide", "maximum", "minimum",
                                    "atan2", "nextafter", "power", "remainder", "and", "or",
                                    "xor"} else 1
        CASES[_name] = (binary if n_operands == 2 else unary)(_name)


# The mesh primitives need several devices, which this process does not have (the CPU device
# count is fixed when the client is made): tests/test_sharding.py runs each of them on 4 CPU
# devices in a subprocess and compares every result with the interpreter's.
ON_A_MESH = {"sharding_constraint", "shard_map", "psum", "pmax", "pmin", "all_gather",
             "psum_scatter", "ppermute", "all_to_all", "axis_index"}


def test_every_primitive_has_a_case():
    missing = sorted(set(REGISTRY) - set(CASES) - ON_A_MESH)
    assert not missing, f"primitives without an agreement case: {missing}"


def _run(case):
    """The case on both devices: [(label, interpreter result, compiled result, exact)]."""
    interp = case(xp.device("interpreter"))
    xp.eval(*[r for _, r, _ in interp])
    saved = xp.config.execution
    xp.config.update(execution="compiled")
    try:
        comp = case(xp.device("cpu"))
        xp.eval(*[r for _, r, _ in comp])
    finally:
        xp.config.update(execution=saved)
    assert [l for l, _, _ in interp] == [l for l, _, _ in comp]
    return [(l, np.asarray(i), np.asarray(c), e) for (l, i, e), (_, c, _) in zip(interp, comp)]


# Disagreements found by this test and not fixed yet: (primitive, label prefix) -> why. A
# listed case is still run (and must not raise); the other cases of the primitive must agree.
# Remove an entry when its fix lands.
_BF16_SUB = ("bfloat16 subnormal input: the interpreter's ml_dtypes arithmetic reads it as "
             "zero (DAZ), XLA's bfloat16 lowering does not flush it here")
KNOWN = {
    **{(n, d): "a subnormal part beside an infinite one: the special-value selection "
               "reads it as zero on the interpreter (DAZ), not compiled"
       for n in ("sin", "sinh") for d in COMPLEX},
    **{("multiply", d): "the sign of an imaginary part that underflows to zero: XLA:CPU "
                        "contracts a*d + b*c into a fused multiply-add, which keeps the sign of "
                        "the exact sum (docs/precision.md, FMA)" for d in COMPLEX},
    ("convert", "bfloat16->bool"): _BF16_SUB,
    ("remainder", "bfloat16"): _BF16_SUB,
    ("sign", "bfloat16"): _BF16_SUB + "; XLA's bfloat16 sign(-0) is +0",
    **{(n, d): "digamma/polygamma at ±0 and at poles: XLA gives nan, SciPy ∓inf"
       for n in ("digamma", "polygamma") for d in FLOATS},
    **{(n, d): "sign of a zero result at a -0 (or flushed -subnormal) input: XLA gives -0, "
               "SciPy +0" for n in ("bessel_i1e", "erf_inv") for d in FLOATS},
    ("lgamma", "float32"): "XLA's float32 lgamma near its zeros (x = 1, 2): absolute error "
                           "~5e-7, relative error unbounded",
    ("cholesky", ""): "XLA's cholesky leaves the upper triangle unspecified (not zeroed); "
                      "the namespace masks it",
    ("cumulative", "sum complex"): "summation order (XLA scans as a tree) with cancelling huge values",
    ("cumulative", "sum float"): "summation order (XLA scans as a tree) with cancelling huge values",
    ("cumulative", "prod complex"): "complex multiplication of huge/inf parts (as multiply)",
    ("dot_general", "complex128 edges"): "complex products of inf parts (as multiply)",
}


# NumPy's AVX-512 builds of pow (its CPU dispatch picks them where the CPU has AVX512F) read
# subnormal operands as zeros in the interpreter's DAZ mode (0 ** 4e-45 is 1, not 0, and a
# subnormal base gives inf), where its other builds and XLA's pow read them as themselves.
try:
    from numpy._core._multiarray_umath import __cpu_features__ as _NUMPY_CPU
except ImportError:   # NumPy 1.x
    from numpy.core._multiarray_umath import __cpu_features__ as _NUMPY_CPU
if _NUMPY_CPU.get("AVX512F"):
    _AVX512_POW = ("NumPy's AVX-512 pow reads subnormal operands as zeros under DAZ, XLA's "
                   "as themselves")
    KNOWN.update({("power", d): _AVX512_POW for d in ("float32", "float64", "bfloat16",
                                                       "complex64")})


def _known(name, label):
    return any(n == name and label.startswith(prefix) for n, prefix in KNOWN)


@pytest.mark.parametrize("name", sorted(set(REGISTRY) - ON_A_MESH))
def test_backends_agree(name):
    failures = []
    for label, i, c, exact in _run(CASES[name]):
        why = disagreement(i, c, exact)
        if why is not None and not _known(name, label):
            failures.append(f"{name} {label} ({exact if isinstance(exact, str) else 'exact' if exact else 'tolerance'}): {why}")
    assert not failures, "\n".join(failures)


# ----------------------------------------------------------------------------- NumPy references

def _flushed_input(v):
    return _flush(v).astype(v.dtype)


_NUMPY_UNARY = {"exp": np.exp, "log": np.log, "log1p": np.log1p, "expm1": np.expm1, "sin": np.sin,
                "cos": np.cos, "tan": np.tan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh,
                "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "asinh": np.arcsinh,
                "acosh": np.arccosh, "atanh": np.arctanh, "sqrt": np.sqrt, "floor": np.floor,
                "ceil": np.ceil, "abs": np.abs, "negate": np.negative, "round_even": np.rint}
_NUMPY_BINARY = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
                 "divide": np.divide, "atan2": np.arctan2, "remainder": np.fmod}


@pytest.mark.parametrize("d", ["float32", "float64"])
def test_real_elementwise_match_numpy(d):
    """Both devices agree (above); here the interpreter (so both) matches NumPy on the same
    inputs read as XLA reads them (subnormals as zeros of the same sign)."""
    dev = xp.device("interpreter")
    failures = []
    v = float_edges(d)
    a, b = pairs(d)
    cases = [(n, _prim(n, _arr(dev, v)), f(_flushed_input(v))) for n, f in _NUMPY_UNARY.items()]
    cases += [(n, _prim(n, _arr(dev, a), _arr(dev, b)), f(_flushed_input(a), _flushed_input(b)))
              for n, f in _NUMPY_BINARY.items()]
    xp.eval(*[c[1] for c in cases])
    with np.errstate(all="ignore"):
        for n, got, want in cases:
            why = disagreement(np.asarray(want, dtype=d), np.asarray(got), _exact(n, d))
            if why is not None:
                failures.append(f"{n} {d}: {why.replace('compiled', 'tlaloc').replace('interpreter', 'numpy')}")
    assert not failures, "\n".join(failures)


# ----------------------------------------------------------------------------- derivatives

_MODERATE = {"float32": [-2.5, -0.75, -0.3, 0.2, 0.6, 1.7, 3.25], "float64": [-2.5, -0.75, -0.3, 0.2, 0.6, 1.7, 3.25]}


def _derivative_inputs(d):
    if d in COMPLEX:
        re = np.array([-1.5, -0.3, 0.0, -0.0, 0.4, 1.2, 1e-200 if d == "complex128" else 1e-20])
        out = np.empty((len(re), len(re)), dtype=d)
        out.real, out.imag = re[:, None], re[None, :]
        return out.ravel()
    return np.concatenate([np.array(_MODERATE[d], dtype=d), float_edges(d)])


def _ew_with_rules():
    names = []
    for n, p in sorted(REGISTRY.items()):
        if p.elementwise and p.jvp is not None and n not in _NOT_DIFFERENTIABLE:
            names.append(n)
    return names


def _derivatives(name, dev, d):
    """(jvp tangent, vjp cotangents) of the primitive at the derivative inputs."""
    p = REGISTRY[name]
    v = _derivative_inputs(d)
    binary_ = name in _BINARY_NAMES
    if binary_:
        a = np.repeat(v, 3)
        b = np.tile(np.array(v[[1, 4, 5]]), len(v))
        primals = (_arr(dev, a), _arr(dev, b))
    else:
        primals = (_arr(dev, v),)
    f = lambda *xs: _prim(name, *xs)
    try:
        out = f(*primals)
    except TypeError:
        return None
    ones = [xp.ones_like(x) for x in primals]
    _, t = xp.jvp(f, primals, tuple(ones))
    _, pull = xp.vjp(f, *primals)
    cts = pull(xp.ones_like(out))
    return [t, *cts]


_BINARY_NAMES = {"add", "subtract", "multiply", "divide", "maximum", "minimum", "atan2",
                 "nextafter", "power", "remainder"}
_NOT_DIFFERENTIABLE = {"select", "polygamma", "complex", "and", "or", "xor", "not", "compare",
                       "shift_left", "shift_right_arithmetic", "shift_right_logical"}
# Derivative disagreements found by this test and not fixed yet: (primitive, dtype) -> why.
DERIVATIVE_KNOWN = {
    **{(n, d): "XLA's digamma/polygamma: nan at ±0 and inf, trigamma underflows at huge x"
       for n in ("digamma", "lgamma") for d in ("float32", "float64")},
    ("tanh", "float32"): "1 - tanh(x)**2 amplifies the last-ulp difference of tanh near 3",
    ("tanh", "float64"): "as float32, at huge |x| (2e-6 where both should be 0)",
    ("bessel_i1e", "float64"): "i0e - i1e cancels at huge x: factor 2 between XLA and SciPy",
    **{(n, "complex128"): "complex derivatives at a non-finite primal (1/z at z = inf): nan on "
                          "the interpreter, inf+nanj compiled"
       for n in ("log", "sqrt", "power")},
}
if _NUMPY_CPU.get("AVX512F"):
    DERIVATIVE_KNOWN.update({("power", d): _AVX512_POW for d in ("float32", "float64")})


@pytest.mark.parametrize("name", _ew_with_rules())
def test_derivatives_agree(name):
    """jvp and vjp of a function applying the primitive, on both devices, at moderate and
    edge inputs, agree within the tolerances (derivative rules are compositions)."""
    results = {}
    for where in ("interpreter", "compiled"):
        saved = xp.config.execution
        if where == "compiled":
            xp.config.update(execution="compiled")
        try:
            dev = xp.device("interpreter" if where == "interpreter" else "cpu")
            per = {}
            for d in ("float32", "float64", "complex128"):
                r = _derivatives(name, dev, d)
                if r is not None:
                    per[d] = r
            xp.eval(*[x for rs in per.values() for x in rs])
            results[where] = {d: [np.asarray(x) for x in rs] for d, rs in per.items()}
        finally:
            xp.config.update(execution=saved)
    assert results["interpreter"], f"{name}: no dtype accepted"
    failures = []
    for d, rs in results["interpreter"].items():
        if (name, d) in DERIVATIVE_KNOWN:
            continue
        for k, (i, c) in enumerate(zip(rs, results["compiled"][d])):
            why = disagreement(i, c, "magnitude" if d in COMPLEX else False)
            if why is not None:
                failures.append(f"{name} {d} {'jvp' if k == 0 else f'vjp[{k - 1}]'}: {why}")
    assert not failures, "\n".join(failures)


# ----------------------------------------------------------------------------- hypothesis

from hypothesis.extra.array_api import make_strategies_namespace  # noqa: E402

xps = make_strategies_namespace(xp)


@settings(max_examples=40, deadline=None)
@given(x=xps.arrays(dtype=st.sampled_from([xp.float32, xp.float64, xp.int16, xp.uint8, xp.bool,
                                             xp.complex64]),
                    shape=xps.array_shapes(min_dims=1, max_dims=2, max_side=5),
                    elements={"allow_nan": True, "allow_infinity": True,
                              "allow_subnormal": True}))
def test_hypothesis_strategies_draw_in_the_default_mode(x):
    """hypothesis.extra.array_api draws arrays (it builds them with full/where/isnan/...,
    and checks them) without FlakyStrategyDefinition in the default, tiered execution mode:
    the interpreter and the compiled tier agree on special values and subnormals."""
    assert xp.config.execution == "auto"
    a = np.asarray(x)
    assert a.shape == x.shape


@settings(max_examples=30, deadline=None)
@given(x=xps.arrays(dtype=xp.float64, shape=st.integers(1, 6),
                    elements=st.sampled_from([0.0, -0.0, math.nan, math.inf, -math.inf, 5e-324,
                                              -5e-324, 1.5])),
       y=xps.arrays(dtype=xp.float32, shape=3, elements=st.sampled_from(
           [0.0, -0.0, math.nan, -math.inf, float(np.float32(1e-45)), 2.0])))
def test_hypothesis_special_values_in_the_default_mode(x, y):
    assert xp.config.execution == "auto"
    assert np.asarray(x).shape[0] >= 1 and np.asarray(y).shape == (3,)
