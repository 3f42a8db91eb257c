"""tlaloc.numpy (NumPy's spellings), NumPy's Array methods, and the standard namespace's
AttributeError for NumPy-only names: every call against the same call on NumPy, on both
backends (docs/numpy-namespace.md)."""
import subprocess
import sys
import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st

import tlaloc as xp
import tlaloc.numpy as tnp
from tlaloc._numpy_names import FFT_SPELLING, LINALG_SPELLING, STANDARD_SPELLING

from helpers import assert_matches

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4))
B = RNG.standard_normal((4, 5))
V = RNG.standard_normal(4)
S = A[:, :3] @ A[:, :3].T + np.eye(3)          # symmetric positive definite
T = np.arange(24.0).reshape(2, 3, 4) - 7.5
I = np.array([3, 1, 3, 2, 0, 3])
N = A.copy()                                     # NaN in one row, a row of NaN
N[0, 1] = np.nan
N[2, :] = np.nan


def _inputs(m, dtype, device):
    """The inputs as m's arrays (NumPy's, or tlaloc arrays on `device`) of `dtype`."""
    conv = (lambda x: np.asarray(x, dtype=dtype)) if m is np else \
        (lambda x: tnp.asarray(x, dtype=getattr(xp, dtype), device=device))
    return {"a": conv(A), "b": conv(B), "v": conv(V), "s": conv(S), "t": conv(T), "n": conv(N),
            "i": np.asarray(I) if m is np else tnp.asarray(I, device=device)}


# name -> fn(m, inputs); m is numpy or tlaloc.numpy
CALLS = {
    "concatenate": lambda m, d: m.concatenate([d["a"], d["a"]], axis=1),
    "concatenate axis=None": lambda m, d: m.concatenate([d["a"], d["v"]], axis=None),
    "stack": lambda m, d: m.stack([d["v"], d["v"]], axis=1),
    "vstack": lambda m, d: m.vstack([d["v"], d["v"]]),
    "hstack": lambda m, d: m.hstack([d["a"], d["a"]]),
    "dstack": lambda m, d: m.dstack([d["a"], d["a"]]),
    "column_stack": lambda m, d: m.column_stack([d["v"], d["v"]]),
    "split": lambda m, d: m.split(d["a"], 2, axis=1),
    "split at indices": lambda m, d: m.split(d["t"], [1, 3], axis=2),
    "array_split": lambda m, d: m.array_split(d["a"], 3, axis=1),
    "transpose": lambda m, d: m.transpose(d["t"]),
    "transpose axes": lambda m, d: m.transpose(d["t"], (1, 0, 2)),
    "swapaxes": lambda m, d: m.swapaxes(d["t"], 0, 2),
    "reshape list": lambda m, d: m.reshape(d["a"], [2, -1]),
    "reshape order=F": lambda m, d: m.reshape(d["a"], (4, 3), order="F"),
    "ravel": lambda m, d: m.ravel(d["t"]),
    "squeeze": lambda m, d: m.squeeze(m.reshape(d["v"], (1, 4, 1))),
    "expand_dims tuple": lambda m, d: m.expand_dims(d["a"], (0, 3)),
    "atleast_1d": lambda m, d: m.atleast_1d(d["v"][0]),
    "atleast_2d": lambda m, d: m.atleast_2d(d["v"]),
    "atleast_3d": lambda m, d: m.atleast_3d(d["a"]),
    "atleast_2d and 3d of 0-d and 1-d": lambda m, d: (m.atleast_2d(d["v"][0]), m.atleast_3d(d["v"]),
                                                      m.atleast_3d(d["v"][0])),
    "fliplr": lambda m, d: m.fliplr(d["a"]),
    "flipud": lambda m, d: m.flipud(d["a"]),
    "roll": lambda m, d: m.roll(d["a"], 2),
    "tile": lambda m, d: m.tile(d["v"], (2, 2)),
    "repeat": lambda m, d: m.repeat(d["a"], 2),
    "cumsum": lambda m, d: m.cumsum(d["a"]),
    "cumsum axis": lambda m, d: m.cumsum(d["a"], axis=1),
    "cumprod": lambda m, d: m.cumprod(d["v"]),
    "diff": lambda m, d: m.diff(d["v"], 2),
    "sum": lambda m, d: m.sum(d["a"], 0),
    "sum keepdims": lambda m, d: m.sum(d["t"], axis=(0, 2), keepdims=True),
    "prod": lambda m, d: m.prod(d["v"]),
    "mean": lambda m, d: m.mean(d["a"], axis=1),
    "std ddof": lambda m, d: m.std(d["a"], ddof=1),
    "var axis": lambda m, d: m.var(d["t"], axis=2),
    "amax": lambda m, d: m.amax(d["a"], axis=0),
    "amin": lambda m, d: m.amin(d["a"]),
    "argmax": lambda m, d: m.argmax(d["a"]),
    "argmin axis": lambda m, d: m.argmin(d["a"], axis=1),
    "ptp": lambda m, d: m.ptp(d["a"], axis=0),
    "average weights": lambda m, d: m.average(d["a"], axis=1, weights=d["v"]),
    "median": lambda m, d: m.median(d["a"], axis=1),
    "median odd": lambda m, d: m.median(d["a"], axis=0),
    "median all": lambda m, d: m.median(d["t"]),
    "median keepdims": lambda m, d: m.median(d["a"], axis=0, keepdims=True),
    "median with inf": lambda m, d: m.median(m.concatenate([d["v"][:2], m.abs(d["v"][:1]) + m.inf])),
    "median with NaN": lambda m, d: m.median(d["n"], axis=1),
    "quantile": lambda m, d: m.quantile(d["a"], 0.3, axis=1),
    "quantile of several q": lambda m, d: m.quantile(d["a"], [0.1, 0.5, 1.0], axis=0),
    "quantile keepdims": lambda m, d: m.quantile(d["t"], [0.25, 0.75], axis=2, keepdims=True),
    "percentile": lambda m, d: m.percentile(d["a"], [10, 90]),
    "nansum": lambda m, d: m.nansum(d["n"], axis=1),
    "nanprod": lambda m, d: m.nanprod(d["n"], axis=1),
    "nanmean": lambda m, d: m.nanmean(d["n"], axis=0),
    "nanmax": lambda m, d: m.nanmax(d["n"], axis=1),
    "nanmin": lambda m, d: m.nanmin(d["n"]),
    "nanstd ddof": lambda m, d: m.nanstd(d["n"], axis=1, ddof=1),
    "nanvar": lambda m, d: m.nanvar(d["n"], axis=0),
    "nanmedian": lambda m, d: m.nanmedian(d["n"], axis=1),
    "cov": lambda m, d: m.cov(d["a"]),
    "cov rowvar=False": lambda m, d: m.cov(d["a"], rowvar=False),
    "cov of x and y": lambda m, d: m.cov(d["a"][0], d["a"][1]),
    "cov bias": lambda m, d: m.cov(d["t"][0], bias=True),
    "corrcoef": lambda m, d: m.corrcoef(d["a"]),
    "bincount": lambda m, d: m.bincount(d["i"]),
    "bincount weights minlength": lambda m, d: m.bincount(d["i"], weights=d["v"][[0, 1, 2, 3, 0, 1]],
                                                          minlength=6),
    "convolve": lambda m, d: m.convolve(d["v"], d["a"][0]),
    "convolve same": lambda m, d: m.convolve(d["a"][0], d["v"], mode="same"),
    "convolve valid": lambda m, d: m.convolve(d["a"][0], d["v"][:2], mode="valid"),
    "interp": lambda m, d: m.interp(d["v"] * 3, m.sort(d["a"][0]), d["a"][1]),
    "interp lists left right": lambda m, d: m.interp(d["v"] * 9, [-1.0, 0.0, 1.0], [1.0, 3.0, 2.0],
                                                     left=-5.0, right=5.0),
    "trapezoid": lambda m, d: m.trapezoid(d["a"]),
    "trapezoid x": lambda m, d: m.trapezoid(d["a"], x=m.cumsum(m.abs(d["a"][0]))),
    "trapezoid dx axis": lambda m, d: m.trapezoid(d["t"], dx=0.5, axis=1),
    "dot matrices": lambda m, d: m.dot(d["a"], d["b"]),
    "dot matrix vector": lambda m, d: m.dot(d["a"], d["v"]),
    "dot vectors": lambda m, d: m.dot(d["v"], d["v"]),
    "dot n-d": lambda m, d: m.dot(d["t"], d["b"]),
    "dot 0-d": lambda m, d: m.dot(d["v"], d["v"][0]),
    "vdot": lambda m, d: m.vdot(d["a"], d["a"]),
    "inner": lambda m, d: m.inner(d["a"], d["a"]),
    "outer": lambda m, d: m.outer(d["v"], d["a"]),
    "kron": lambda m, d: m.kron(d["a"][:2, :2], d["a"]),
    "cross": lambda m, d: m.cross(d["a"][:, :3], d["a"][:, 1:]),
    "trace": lambda m, d: m.trace(d["a"]),
    "diagonal": lambda m, d: m.diagonal(d["t"], 1, 1, 2),
    "diag of 1-d": lambda m, d: m.diag(d["v"], -1),
    "diag of 2-d": lambda m, d: m.diag(d["a"], 1),
    "array": lambda m, d: m.array([[1.0, 2.0], [3.0, 4.0]]),
    "array ndmin": lambda m, d: m.array(d["v"], ndmin=3),
    "copy": lambda m, d: m.copy(d["a"]),
    "arange": lambda m, d: m.arange(1, 10, 2.5),
    "linspace": lambda m, d: m.linspace(0, 1),
    "linspace retstep": lambda m, d: m.linspace(0, 2, 5, endpoint=False, retstep=True)[0],
    "eye": lambda m, d: m.eye(3, 4, 1),
    "identity": lambda m, d: m.identity(3),
    "allclose": lambda m, d: m.allclose(d["a"], d["a"] * (1 + 1e-6)),
    "allclose not": lambda m, d: m.allclose(d["a"], d["a"] + 1e-3),
    "isclose": lambda m, d: m.isclose(d["a"], d["a"] * (1 + 3e-6), rtol=1e-6),
    "isclose inf nan": lambda m, d: m.isclose(m.asarray([np.inf, np.nan, 1.0, -np.inf]),
                                              m.asarray([np.inf, np.nan, np.inf, np.inf]),
                                              equal_nan=True),
    "array_equal": lambda m, d: m.array_equal(d["a"], d["a"] + 0),
    "array_equal shapes": lambda m, d: m.array_equal(d["a"], d["v"]),
    "argwhere": lambda m, d: m.argwhere(d["a"] > 0),
    "argwhere 0-d": lambda m, d: m.argwhere(m.asarray(3.0)),
    "flatnonzero": lambda m, d: m.flatnonzero(d["a"] > 0),
    "nonzero": lambda m, d: m.nonzero(d["a"] > 0),
    "where one argument": lambda m, d: m.where(d["a"] > 0),
    "where": lambda m, d: m.where(d["a"] > 0, d["a"], 0.0),
    "where of two scalars": lambda m, d: m.where(d["a"] > 0, 1.0, -1.0),
    "where of a non-bool condition": lambda m, d: m.where(d["i"], d["i"], 7),
    "count_nonzero": lambda m, d: m.count_nonzero(d["a"] > 0, axis=0),
    "take flat": lambda m, d: m.take(d["a"], [[0, 5], [3, 11]]),
    "take axis": lambda m, d: m.take(d["a"], [0, 2], axis=1),
    "nan_to_num": lambda m, d: m.nan_to_num(m.asarray([np.nan, np.inf, -np.inf, 1.0])),
    "nan_to_num values": lambda m, d: m.nan_to_num(m.asarray([np.nan, np.inf, -np.inf]),
                                                   nan=1.0, posinf=2.0, neginf=-2.0),
    "round decimals": lambda m, d: m.round(d["a"], 2),
    "around": lambda m, d: m.around(d["a"] * 10, -1),
    "clip": lambda m, d: m.clip(d["a"], -0.5, 0.5),
    "absolute": lambda m, d: m.absolute(d["a"]),
    "power": lambda m, d: m.power(d["a"], 2),
    "arctan2": lambda m, d: m.arctan2(d["a"], d["a"][::-1]),
    "arccos": lambda m, d: m.arccos(d["a"] / 4),
    "exp2": lambda m, d: m.exp2(d["v"]),
    "sinc": lambda m, d: m.sinc(m.concatenate([d["v"], d["v"] * 0])),
    "angle": lambda m, d: m.angle(d["v"] + 1j * d["v"][::-1]),
    "angle real degrees": lambda m, d: m.angle(d["v"], deg=True),
    "heaviside": lambda m, d: m.heaviside(m.concatenate([d["v"], d["v"] * 0, d["n"][2]]), 0.5),
    "fmax": lambda m, d: m.fmax(d["n"], d["n"][::-1]),
    "fmin scalar": lambda m, d: m.fmin(d["n"], 0.0),
    "select": lambda m, d: m.select([d["a"] < -0.5, d["a"] > 0.5], [d["a"] * 10, 3.0], -1.0),
    "isreal": lambda m, d: m.isreal(d["v"] + 1j * (d["v"] > 0)),
    "iscomplex": lambda m, d: m.iscomplex(d["v"] + 1j * (d["v"] > 0)),
    "logspace": lambda m, d: m.logspace(0, 3, 4),
    "logspace base": lambda m, d: m.logspace(0, 1, 5, base=2.0, endpoint=False),
    "tril_indices": lambda m, d: m.tril_indices(4, -1),
    "triu_indices": lambda m, d: m.triu_indices(3, 1, 5),
    "diag_indices": lambda m, d: m.diag_indices(3),
    "indices": lambda m, d: m.indices((2, 3)),
    "unravel_index": lambda m, d: m.unravel_index(d["i"] * 3, (3, 4)),
    "unravel_index F": lambda m, d: m.unravel_index(d["i"] * 3, (3, 4), order="F"),
    "pad": lambda m, d: m.pad(d["a"], 2),
    "pad pairs": lambda m, d: m.pad(d["a"], ((1, 0), (0, 3)), constant_values=((7, 8), (9, 1))),
    "pad edge": lambda m, d: m.pad(d["a"], (2, 3), mode="edge"),
    "pad reflect past the size": lambda m, d: m.pad(d["v"], 10, mode="reflect"),
    "pad symmetric": lambda m, d: m.pad(d["a"], 2, mode="symmetric"),
    "pad wrap": lambda m, d: m.pad(d["a"], ((0, 4), (6, 1)), mode="wrap"),
    "deg2rad": lambda m, d: m.deg2rad(d["v"]),
    "degrees": lambda m, d: m.degrees(d["v"]),
    "sort axis=None": lambda m, d: m.sort(d["a"], axis=None),
    "argsort": lambda m, d: m.argsort(d["a"]),
    "unique": lambda m, d: m.unique(d["i"]),
    "unique counts inverse": lambda m, d: m.unique(d["i"], return_index=True,
                                                   return_inverse=True, return_counts=True),
    "unique NaNs as one": lambda m, d: m.unique(m.concatenate([d["n"][2], d["v"], d["n"][2]]),
                                                return_index=True, return_inverse=True,
                                                return_counts=True),
    "unique NaNs apart": lambda m, d: m.unique(m.concatenate([d["n"][2], d["v"]]), equal_nan=False),
    "searchsorted": lambda m, d: m.searchsorted(m.sort(d["v"]), d["a"]),
    "isin": lambda m, d: m.isin(d["i"], [2, 3]),
    "meshgrid": lambda m, d: m.meshgrid(d["v"], d["v"][:2]),
    "einsum": lambda m, d: m.einsum("ij,jk->ik", d["a"], d["b"]),
    "einsum implicit": lambda m, d: m.einsum("ij,jk", d["a"], d["b"]),
    "einsum trace": lambda m, d: m.einsum("ii", d["s"]),
    "einsum ellipsis": lambda m, d: m.einsum("...j,jk->...k", d["t"], d["b"]),
    "einsum three operands": lambda m, d: m.einsum("ij,jk,k->i", d["a"], d["b"], d["b"][0]),
    "einsum sublists": lambda m, d: m.einsum(d["a"], [0, 1], d["b"], [1, 2], [0, 2]),
    "linalg.norm": lambda m, d: m.linalg.norm(d["a"]),
    "linalg.norm ord=1": lambda m, d: m.linalg.norm(d["a"], 1),
    "linalg.norm nuc": lambda m, d: m.linalg.norm(d["a"], "nuc"),
    "linalg.norm axis": lambda m, d: m.linalg.norm(d["t"], axis=1),
    "linalg.norm inf vector": lambda m, d: m.linalg.norm(d["v"], np.inf),
    "linalg.norm axes keepdims": lambda m, d: m.linalg.norm(d["t"], axis=(2, 0), keepdims=True),
    "linalg.norm of ints": lambda m, d: m.linalg.norm(d["i"]),
    "linalg.svd compute_uv=False": lambda m, d: m.linalg.svd(d["a"], compute_uv=False),
    "linalg.eigh UPLO=U": lambda m, d: m.linalg.eigh(m.triu(d["s"]), UPLO="U")[0],
    "linalg.eigvalsh UPLO=L": lambda m, d: m.linalg.eigvalsh(m.tril(d["s"])),
    "linalg.lstsq": lambda m, d: m.linalg.lstsq(d["b"], d["v"], rcond=None)[:2],
    "linalg.lstsq rank-deficient": lambda m, d: m.linalg.lstsq(
        m.concatenate([d["b"], d["b"]], axis=1), d["v"], rcond=None)[0],
    "linalg.multi_dot": lambda m, d: m.linalg.multi_dot([d["a"], d["b"], d["b"].T]),
    "linalg.matrix_rank": lambda m, d: m.linalg.matrix_rank(d["a"]),
    "linalg.inv": lambda m, d: m.linalg.inv(d["s"]),
    "fft.fft2": lambda m, d: m.fft.fft2(d["a"]),
    "fft.rfft n": lambda m, d: m.fft.rfft(d["v"], 8),
    "fft.irfft2": lambda m, d: m.fft.irfft2(m.fft.rfft2(d["a"])),
}

# float32 loses more in these (sums of products, iterative LAPACK)
_LOOSE32 = {"rtol": 2e-4, "atol": 2e-5}


def _compare(actual, expected, dtype):
    if isinstance(expected, (tuple, list)):
        assert isinstance(actual, (tuple, list)) and len(actual) == len(expected)
        for a, e in zip(actual, expected):
            _compare(a, e, dtype)
        return
    if isinstance(expected, bool):            # allclose, array_equal: Python bools
        assert actual is bool(expected)
        return
    if isinstance(expected, int):
        assert int(actual) == expected
        return
    e = np.asarray(expected)
    assert isinstance(actual, xp.Array), type(actual)
    if dtype == "float32" and e.dtype.kind in "fc":
        assert_matches(actual, e, **_LOOSE32)
    else:
        assert_matches(actual, e, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", list(CALLS))
def test_function_matches_numpy(tier, name, dtype):
    fn = CALLS[name]
    with warnings.catch_warnings():          # NumPy's "All-NaN slice", "Mean of empty slice"
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = fn(np, _inputs(np, dtype, None))
    actual = fn(tnp, _inputs(tnp, dtype, tier))
    _compare(actual, expected, dtype)


def test_functions_take_numpy_arrays_lists_and_scalars():
    assert_matches(tnp.sin([0.0, 1.0]), np.sin([0.0, 1.0]))
    assert_matches(tnp.add(np.ones(2, np.float32), 1.0), np.ones(2, np.float32) + 1.0)
    assert_matches(tnp.maximum(np.arange(3), [2, 0, 1]), np.maximum(np.arange(3), [2, 0, 1]))
    assert_matches(tnp.sum([[1, 2], [3, 4]], axis=0), np.sum([[1, 2], [3, 4]], axis=0))
    assert_matches(tnp.stack([np.ones(2), [2.0, 3.0]]), np.stack([np.ones(2), [2.0, 3.0]]))
    assert_matches(tnp.einsum("i,i", [1.0, 2.0], np.ones(2)), np.einsum("i,i", [1.0, 2.0], np.ones(2)))


def test_out_writes_into_the_given_array(tier):
    a = tnp.asarray(A, device=tier)
    out = tnp.zeros(4, device=tier)
    same = tnp.sum(a, axis=0, out=out)
    assert same is out
    assert_matches(out, A.sum(axis=0))
    ints = tnp.zeros(3, dtype=xp.int32, device=tier)
    tnp.dot(tnp.asarray(I[:3] * 1.0, device=tier), 2.0, out=ints)          # cast into out
    assert_matches(ints, (I[:3] * 2).astype(np.int32))
    with pytest.raises(ValueError, match="out has shape"):
        tnp.sum(a, axis=1, out=out)
    with pytest.raises(TypeError, match="out must be a tlaloc array"):
        tnp.sum(a, out=np.zeros(()))


# ----------------------------------------------------------------------------- einsum

@st.composite
def einsum_problems(draw):
    """Random subscripts over 'abcd' (repeated labels, broadcast '...', implicit or explicit
    outputs) with matching random operands."""
    sizes = {c: draw(st.integers(1, 3)) for c in "abcd"}
    n_ops = draw(st.integers(1, 3))
    ell = draw(st.integers(0, 2)) if draw(st.booleans()) else None
    ell_shape = [draw(st.integers(1, 3)) for _ in range(ell or 0)]
    terms, arrays = [], []
    for _ in range(n_ops):
        labels = draw(st.lists(st.sampled_from("abcd"), max_size=3))
        shape = [sizes[c] for c in labels]
        term = "".join(labels)
        if ell is not None and draw(st.booleans()):
            k = draw(st.integers(0, ell))           # fewer '...' axes broadcast
            own = [1 if draw(st.booleans()) else n for n in ell_shape[ell - k:]]
            cut = draw(st.integers(0, len(labels)))
            term = "".join(labels[:cut]) + "..." + "".join(labels[cut:])
            shape = shape[:cut] + own + shape[cut:]
        terms.append(term)
        arrays.append(draw(st.integers(0, 2 ** 16)))      # a seed
        arrays[-1] = np.random.default_rng(arrays[-1]).standard_normal(shape)
    subscripts = ",".join(terms)
    if draw(st.booleans()):
        used = sorted({c for t in terms for c in t if c.isalpha()})
        out = draw(st.permutations(used)).__iter__()
        out = "".join(c for c in out if draw(st.booleans()))
        subscripts += "->" + ("..." if "..." in subscripts else "") + out
    return subscripts, arrays


@given(einsum_problems())
def test_einsum_matches_numpy(problem):
    subscripts, arrays = problem
    expected = np.einsum(subscripts, *arrays)
    actual = tnp.einsum(subscripts, *[xp.asarray(a, device="interpreter") for a in arrays])
    assert_matches(actual, expected, rtol=1e-10, atol=1e-12)


def test_einsum_compiles_and_differentiates():
    a, b = xp.asarray(A), xp.asarray(B)
    f = lambda a: xp.sum(tnp.einsum("ij,jk->ik", a, b) ** 2)
    expected = 2 * (A @ B) @ B.T
    assert_matches(xp.grad(f)(a), expected, rtol=1e-10, atol=1e-12)
    assert_matches(xp.jit(f)(a), np.sum((A @ B) ** 2), rtol=1e-12)


@pytest.mark.parametrize("args, message", [
    (("ij,jk->ik", A, A), "label 'j' has sizes 4 and 3"),
    (("ij,jk->ik", A), "2 operand subscripts for 1 operands"),
    (("ijk", A), "operand 0 has 2 axes"),
    (("ij->iz", A), "output label 'z' appears in no operand"),
    (("ij->ii", A), "repeats a label"),
    (("i1", A), "invalid subscript '1'"),
    (("i..j..", A), "misplaced"),
    (("...i->i", T), "the output 'i' has none"),
    (("ij->i->j", A), "more than one '->'"),
    (("ii", A), "label 'i' has sizes 3 and 4"),
    (("ii", T[0, :, :3].reshape(3, 3)[:, :2]), "label 'i' has sizes 3 and 2"),
])
def test_einsum_bad_subscripts_raise(args, message):
    with pytest.raises(ValueError, match=message):
        tnp.einsum(*[xp.asarray(a) if isinstance(a, np.ndarray) else a for a in args])


# ----------------------------------------------------------------------------- properties
# hypothesis draws against NumPy on the interpreter (each drawn shape would be a compile on
# the CPU device; CALLS above runs both backends)

def _on_interpreter(a):
    return xp.asarray(a, device="interpreter")


FLOAT_DTYPES = st.sampled_from(["float32", "float64"])
SMALL_SHAPES = st.lists(st.integers(0, 4), min_size=1, max_size=3).map(tuple)


@st.composite
def float_arrays(draw, shape=SMALL_SHAPES, specials=True):
    dtype = draw(FLOAT_DTYPES)
    shape = draw(shape) if isinstance(shape, st.SearchStrategy) else shape
    values = st.floats(-1e3, 1e3, width=32) if not specials else st.one_of(
        st.floats(-1e3, 1e3, width=32), st.sampled_from([np.nan, np.inf, -np.inf, 0.0, -0.0]))
    return np.array(draw(st.lists(values, min_size=int(np.prod(shape)),
                                  max_size=int(np.prod(shape)))), dtype=dtype).reshape(shape)


@given(float_arrays(specials=False), st.integers(-3, 3))
def test_round_decimals_is_numpy_bit_for_bit(a, decimals):
    assert_matches(_on_interpreter(a).round(decimals), np.round(a, decimals), exact=True)


@given(float_arrays(), st.data())
def test_quantile_and_median_match_numpy(a, data):
    axis = data.draw(st.sampled_from([None] + list(range(a.ndim))))
    if a.size == 0 or axis is not None and a.shape[axis] == 0:
        return
    # no subnormal q: every tier flushes subnormals to zero (docs/precision.md), so a
    # subnormal q is q = 0 there, and 0 * inf is nan where NumPy's tiny q * inf is inf
    q = data.draw(st.lists(st.floats(0, 1, allow_subnormal=False), min_size=1, max_size=3))
    x = _on_interpreter(a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert_matches(tnp.quantile(x, q, axis=axis), np.quantile(a, q, axis=axis),
                       rtol=1e-6, atol=1e-6)
        assert_matches(tnp.median(x, axis=axis), np.median(a, axis=axis), rtol=1e-6, atol=1e-6)


@given(float_arrays(specials=False), st.data())
def test_pad_matches_numpy(a, data):
    mode = data.draw(st.sampled_from(["constant", "edge", "reflect", "symmetric", "wrap"]))
    widths = [(data.draw(st.integers(0, 5)), data.draw(st.integers(0, 5))) for _ in a.shape]
    if mode != "constant" and any(n == 0 and w != (0, 0) for n, w in zip(a.shape, widths)):
        return                                # NumPy cannot pad an empty axis but by constants
    assert_matches(tnp.pad(_on_interpreter(a), widths, mode=mode), np.pad(a, widths, mode=mode),
                   exact=True)


@given(st.integers(1, 9), st.integers(1, 9), st.sampled_from(["full", "same", "valid"]),
       st.integers(0, 2 ** 16))
def test_convolve_matches_numpy(n, m, mode, seed):
    rng = np.random.default_rng(seed)
    a, v = rng.standard_normal(n), rng.standard_normal(m)
    assert_matches(tnp.convolve(_on_interpreter(a), _on_interpreter(v), mode=mode),
                   np.convolve(a, v, mode=mode), rtol=1e-12, atol=1e-12)


@given(st.integers(0, 12), st.data())
def test_split_matches_numpy(n, data):
    a = np.arange(n * 2.0).reshape(n, 2)
    how = data.draw(st.one_of(st.integers(1, 4), st.lists(st.integers(-n - 2, n + 2), max_size=3)))
    expected = np.array_split(a, how)
    actual = tnp.array_split(_on_interpreter(a), how)
    assert len(actual) == len(expected)
    for x, e in zip(actual, expected):
        assert_matches(x, e, exact=True)


@given(float_arrays(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple),
                    specials=False), st.data())
def test_reshape_and_ravel_in_fortran_order_match_numpy(a, data):
    shape = data.draw(st.permutations(list(a.shape)))
    x = _on_interpreter(a)
    assert_matches(x.reshape(*shape, order="F"), a.reshape(shape, order="F"), exact=True)
    assert_matches(x.ravel("F"), a.ravel("F"), exact=True)


# ----------------------------------------------------------------------------- Array methods

METHODS = {
    "sum": lambda x: x.sum(), "sum axis dtype": lambda x: x.sum(axis=0, dtype="float32"),
    "mean keepdims": lambda x: x.mean(1, keepdims=True), "std": lambda x: x.std(ddof=1),
    "var": lambda x: x.var(axis=0), "min": lambda x: x.min(), "max": lambda x: x.max(0),
    "prod": lambda x: x.prod(axis=1), "argmax": lambda x: x.argmax(),
    "argmax axis": lambda x: x.argmax(axis=1), "argmin keepdims": lambda x: x.argmin(keepdims=True),
    "any": lambda x: (x > 1).any(axis=0), "all": lambda x: (x > -5).all(),
    "reshape ints": lambda x: x.reshape(4, 3), "reshape tuple": lambda x: x.reshape((2, -1)),
    "reshape order=F": lambda x: x.reshape(2, 6, order="F"),
    "astype int": lambda x: x.astype(int), "astype name": lambda x: x.astype("float32"),
    "astype NumPy dtype": lambda x: x.astype(np.int16), "copy": lambda x: x.copy(),
    "transpose": lambda x: x.transpose(), "transpose axes": lambda x: x.transpose(1, 0),
    "transpose tuple": lambda x: x.transpose((1, 0)), "swapaxes": lambda x: x.swapaxes(0, 1),
    "flatten": lambda x: x.flatten(), "ravel": lambda x: x.ravel(), "ravel F": lambda x: x.ravel("F"),
    "clip": lambda x: x.clip(-1, 2), "clip max only": lambda x: x.clip(max=0.5),
    "round": lambda x: x.round(), "round 1": lambda x: x.round(1), "round -1": lambda x: (x * 30).round(-1),
    "round ints -2": lambda x: (x * 400).astype(np.int64).round(-2),
    "cumsum": lambda x: x.cumsum(), "cumsum axis": lambda x: x.cumsum(1),
    "cumprod": lambda x: x.cumprod(axis=0), "squeeze": lambda x: x[None, :, None].squeeze(),
    "conj": lambda x: (x * 1j).conj(), "conjugate": lambda x: (x + 2j).conjugate(),
    "nonzero": lambda x: (x > 0).nonzero(), "tolist": lambda x: x.tolist(),
    "argsort": lambda x: x.argsort(), "argsort axis": lambda x: x.argsort(axis=0),
    "dot": lambda x: x.dot(x.T), "dot scalar": lambda x: x.dot(2.0), "dot vector": lambda x: x.dot(x[0]),
    "take": lambda x: x.take([[0, 5], [3, 11]]), "take axis": lambda x: x.take([2, 0], axis=1),
    "repeat": lambda x: x.repeat(2, axis=0), "repeat flat": lambda x: x.repeat(3),
    "nbytes": lambda x: x.nbytes, "itemsize": lambda x: x.astype(np.float32).itemsize,
}


@pytest.mark.parametrize("name", list(METHODS))
def test_array_method_matches_numpy(tier, name):
    fn = METHODS[name]
    expected = fn(A.copy())
    actual = fn(xp.asarray(A, device=tier))
    if isinstance(expected, list):
        assert actual == expected
        return
    _compare(actual, expected, "float64")


def test_in_place_methods_write_through(tier):
    x = xp.asarray(A, device=tier)
    alias = x
    assert x.sort(axis=1) is None and alias is x
    assert_matches(x, np.sort(A, axis=1))
    x.fill(2.5)
    assert_matches(x, np.full_like(A, 2.5))


def test_copies_and_views_are_numpys(tier):
    """Which results share the array's storage is NumPy's: copy, flatten and deepcopy copy;
    ravel, transpose and split's parts are views, and writes through them reach the array."""
    import copy as copy_module
    arrays = {}
    for m in (np, tnp):
        x = np.arange(6.0).reshape(2, 3) if m is np else tnp.asarray(np.arange(6.0).reshape(2, 3),
                                                                      device=tier)
        x.copy()[0, 0] = 50
        x.flatten()[1] = 60
        copy_module.deepcopy(x)[1, 1] = 90
        x.ravel()[2] = 70
        x.transpose()[0, 1] = 80
        m.split(x, 3, axis=1)[0][0, 0] = -1
        arrays[m] = x
    assert_matches(arrays[tnp], arrays[np], exact=True)


def test_round_integers_to_even_multiples(tier):
    ints = np.arange(-25, 35, 5)
    for decimals in (-1, -2, 0, 1):
        assert_matches(xp.asarray(ints, device=tier).round(decimals), ints.round(decimals))


def test_method_errors_name_the_method():
    x = xp.asarray(A)
    with pytest.raises(ValueError, match="reshape"):
        x.reshape(5, 5)
    with pytest.raises(ValueError, match="order"):
        x.ravel("Z")
    with pytest.raises(ValueError, match="casting"):
        x.astype(xp.float32, casting="safe")
    with pytest.raises(TypeError, match="reshape: the shape must be integers"):
        x.reshape(2.5, 4)


# ----------------------------------------------------------------------------- the standard namespace

NUMPY_ONLY = ([("", name, STANDARD_SPELLING) for name in sorted(STANDARD_SPELLING)] +
              [("linalg", name, LINALG_SPELLING) for name in sorted(LINALG_SPELLING)] +
              [("fft", name, FFT_SPELLING) for name in sorted(FFT_SPELLING)])


@pytest.mark.parametrize("module, name, table", NUMPY_ONLY,
                         ids=[f"{m or 'tlaloc'}.{n}" for m, n, _ in NUMPY_ONLY])
def test_numpy_only_name_says_what_to_use(module, name, table):
    standard = getattr(xp, module) if module else xp
    numpy_like = getattr(tnp, module) if module else tnp
    with pytest.raises(AttributeError) as info:
        getattr(standard, name)
    assert table[name] in str(info.value)
    assert "tlaloc.numpy" in str(info.value)
    if name != "cond":                      # named for the hint; tlaloc.numpy has no cond
        assert hasattr(numpy_like, name), f"tlaloc.numpy{'.' + module if module else ''} lacks {name}"
    # the spelling it recommends exists
    target = table[name].split()[0].split("(")[0]
    if target.startswith("tlaloc.") and not target.startswith("tlaloc.numpy"):
        obj = xp
        for part in target.split(".")[1:]:
            obj = getattr(obj, part)


def test_unknown_name_is_a_plain_attribute_error():
    for module in (xp, xp.linalg, xp.fft):
        with pytest.raises(AttributeError, match="has no attribute 'no_such_thing'$"):
            module.no_such_thing
        assert not hasattr(module, "no_such_thing")


def test_import_tlaloc_does_not_import_tlaloc_numpy():
    code = ("import sys, tlaloc; assert 'tlaloc.numpy' not in sys.modules; "
            "import tlaloc.numpy; assert tlaloc.numpy.einsum; print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "ok", out.stderr


# ----------------------------------------------------------------------------- beyond the standard

@pytest.mark.parametrize("pytype", [bool, int, float, complex])
def test_python_types_are_dtypes(tier, pytype):
    assert_matches(xp.zeros(3, dtype=pytype, device=tier), np.zeros(3, dtype=pytype))
    assert_matches(xp.astype(xp.asarray([0.0, 1.5], device=tier), pytype),
                   np.asarray([0.0, 1.5]).astype(pytype))
    assert_matches(xp.asarray([1, 0], dtype=pytype, device=tier), np.asarray([1, 0], dtype=pytype))
    assert_matches(xp.full((2,), pytype(1), dtype=pytype, device=tier),
                   np.full((2,), pytype(1), dtype=pytype))


def test_reshape_list_and_0d_fill_value(tier):
    x = xp.asarray(A, device=tier)
    assert_matches(xp.reshape(x, [2, 6]), A.reshape([2, 6]))
    assert_matches(xp.full((2, 2), xp.asarray(3.5, device=tier), device=tier), np.full((2, 2), 3.5))
    assert_matches(xp.full((2,), xp.asarray(3, device=tier), device=tier), np.full((2,), np.asarray(3)))


# ----------------------------------------------------------------------------- random

def test_random_generator_signatures():
    rng, twin = tnp.random.default_rng(7), xp.random.Generator(7)
    assert_matches(rng.normal(1.0, 2.0, size=(2, 3)), np.asarray(twin.normal((2, 3), loc=1.0, scale=2.0)))
    assert_matches(rng.uniform(-1, 1, 4), np.asarray(twin.uniform(-1, 1, (4,))))
    assert_matches(rng.integers(0, 5, size=6, endpoint=True), np.asarray(twin.integers(0, 6, (6,))))
    assert_matches(rng.random(3), np.asarray(twin.random((3,))))
    draws = np.asarray(tnp.random.default_rng(1).integers(10, size=1000))
    assert draws.min() >= 0 and draws.max() <= 9 and len(np.unique(draws)) == 10
    x = tnp.arange(10)
    tnp.random.default_rng(3).shuffle(x)
    assert sorted(x.tolist()) == list(range(10)) and x.tolist() != list(range(10))
    assert rng.standard_normal((2,)).shape == (2,) and rng.exponential(2.0, size=3).shape == (3,)
    assert tnp.random.default_rng(rng) is rng
