"""Exported programs: export, serialize, deserialize and call, against the function itself
and NumPy; argument checks; corrupt bytes; a fresh process."""
import hashlib
import json
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tlaloc as xp
import tlaloc.special as special
from tlaloc import _export as export_module


def roundtrip(fun, *args):
    return xp.deserialize(xp.export(fun)(*args).serialize())


def _inputs(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype.startswith("int"):
        return rng.integers(-50, 50, shape).astype(dtype)
    if dtype.startswith("complex"):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "complex64", "bool"])
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 5)])
def test_roundtrip_matches_numpy(dtype, shape):
    a, b = _inputs(dtype, shape, 1), _inputs(dtype, shape, 2)
    if dtype == "bool":
        fun = lambda x, y: (x ^ y, xp.any(x & y))                                  # noqa: E731
        expected = (a ^ b, np.any(a & b))
    else:
        fun = lambda x, y: (x * y - x, xp.sum(x * x, axis=None))                  # noqa: E731
        expected = (a * b - a, np.sum(a * a))
    g = roundtrip(fun, xp.asarray(a), xp.asarray(b))
    out = g.call(xp.asarray(a), xp.asarray(b))
    assert isinstance(out, tuple) and len(out) == 2
    for got, want in zip(out, expected):
        assert got.dtype == xp.asarray(np.asarray(want)).dtype and got.shape == np.shape(want)
        tol = 1e-5 if dtype in ("float32", "complex64") else 1e-12
        np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol)


def test_structures_constants_and_captured_arrays():
    scale = xp.asarray(np.array([1.0, 2.0, 3.0]))     # captured: stored with the program

    def f(params, x, flag):
        h = xp.tanh(x @ params["w"] + params["b"]) * scale
        return {"h": h, "total": xp.sum(h), "x": x, "flag": flag, "scale": scale, "none": None}

    rng = np.random.default_rng(0)
    params = {"w": xp.asarray(rng.standard_normal((4, 3))), "b": xp.asarray(rng.standard_normal(3))}
    x = xp.asarray(rng.standard_normal((2, 4)))
    g = roundtrip(f, params, x, 7)
    params2 = {"w": xp.asarray(rng.standard_normal((4, 3))), "b": xp.asarray(rng.standard_normal(3))}
    x2 = xp.asarray(rng.standard_normal((2, 4)))
    out, want = g.call(params2, x2, 7), f(params2, x2, 7)
    assert sorted(out) == sorted(want)
    np.testing.assert_allclose(np.asarray(out["h"]), np.asarray(want["h"]), rtol=1e-12)
    np.testing.assert_allclose(float(out["total"]), float(want["total"]), rtol=1e-12)
    assert out["x"] is x2 and out["flag"] == 7 and out["none"] is None
    np.testing.assert_array_equal(np.asarray(out["scale"]), [1.0, 2.0, 3.0])
    xp.jit(lambda a: a * 2.0, donate_argnums=0)(out["scale"])   # consumes that result's buffer
    again = g.call(params2, x2, 7)                              # ... not the program's input
    np.testing.assert_allclose(np.asarray(again["h"]), np.asarray(want["h"]), rtol=1e-12)
    np.testing.assert_array_equal(np.asarray(again["scale"]), [1.0, 2.0, 3.0])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "complex128", "uint8", "int8"])
def test_captured_pending_arrays_of_every_dtype(dtype):
    """Captured arrays, pending or computed when the function is exported, are stored with
    the program (computed once, as jit does)."""
    d = getattr(xp, dtype)
    pending = xp.astype(xp.asarray(np.arange(6).reshape(2, 3) % 3), d)
    held = xp.asarray(np.array([1, 0, 1]), dtype=d)
    f = lambda x: x * pending + held                                  # noqa: E731
    x = xp.astype(xp.full((2, 3), 2), d)
    g = roundtrip(f, x)
    assert pending._node.value is not None      # computed once, at export
    got, want = g.call(x), f(x)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(got).astype(np.complex128),
                                  np.asarray(want).astype(np.complex128))


def test_int_dict_keys_keep_their_type():
    g = roundtrip(lambda d: {2: d[1] * 2.0, 3: d[1] + d[10]}, {1: xp.ones(2), 10: xp.ones(2)})
    out = g.call({1: xp.asarray([1.0, 2.0]), 10: xp.asarray([3.0, 4.0])})
    assert sorted(out) == [2, 3]
    np.testing.assert_array_equal(np.asarray(out[2]), [2.0, 4.0])
    np.testing.assert_array_equal(np.asarray(out[3]), [4.0, 6.0])
    with pytest.raises(TypeError, match="structured"):
        g.call({1: xp.ones(2), 11: xp.ones(2)})


def test_named_tuple_results_and_lapack():
    x = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
    g = roundtrip(lambda a: (xp.linalg.eigh(a), xp.linalg.inv(a)), xp.asarray(x))
    assert "lapack_" in g.mlir_module()
    (res, inv) = g.call(xp.asarray(x))
    assert type(res).__name__ == "EighResult" and res._fields == ("eigenvalues", "eigenvectors")
    np.testing.assert_allclose(np.asarray(res.eigenvalues), np.linalg.eigvalsh(x), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(inv), np.linalg.inv(x), rtol=1e-12)


def test_every_kind_of_operation_exports():
    """Sorting, scans, gathers and scatters, FFT, LAPACK, and the CHLO ops (special functions,
    inverse hyperbolics, nextafter) that the artifact carries as StableHLO composites."""
    rng = np.random.default_rng(0)
    a = xp.asarray(rng.standard_normal((6, 8)).astype(np.float32))
    idx = xp.asarray(np.array([3, 0, 5]))

    def f(x, i):
        y = xp.zeros_like(x)
        y[i] = x[i] * 2
        return (xp.sort(x, axis=1), xp.cumulative_sum(x, axis=0), xp.take(x, i, axis=0),
                xp.abs(xp.fft.rfft(x, axis=1)), special.erf(x), xp.asinh(x), y,
                xp.argmax(x, axis=1), xp.linalg.svdvals(x), xp.nextafter(x, x + 1))

    g = roundtrip(f, a, idx)
    b = xp.asarray(rng.standard_normal((6, 8)).astype(np.float32))
    for got, want in zip(g.call(b, idx), f(b, idx)):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-6, atol=2e-6)


def test_axis_names_are_part_of_the_signature():
    x = xp.asarray(np.ones((2, 3))).rename("batch", "feature")
    g = roundtrip(lambda x: xp.sum(x * 2.0, axis="feature"), x)
    out = g.call(x)
    assert out.names == ("batch",)
    np.testing.assert_array_equal(np.asarray(out), [6.0, 6.0])
    with pytest.raises(ValueError, match="axis names"):
        g.call(xp.asarray(np.ones((2, 3))))


def test_arguments_are_checked_at_the_call():
    g = roundtrip(lambda x, n: x * n, xp.ones((2, 3)), 3)
    np.testing.assert_array_equal(np.asarray(g.call(xp.ones((2, 3)), 3)), np.full((2, 3), 3.0))
    with pytest.raises(ValueError, match="shape"):
        g.call(xp.ones((3, 2)), 3)
    with pytest.raises(TypeError, match="dtype"):
        g.call(xp.ones((2, 3), dtype=xp.float32), 3)
    with pytest.raises(TypeError, match="tlaloc array"):
        g.call(np.ones((2, 3)), 3)
    with pytest.raises(ValueError, match="Python value 3"):
        g.call(xp.ones((2, 3)), 4)
    with pytest.raises(ValueError, match="Python value 3"):
        g.call(xp.ones((2, 3)), 3.0)
    with pytest.raises(TypeError, match="structured"):
        g.call(xp.ones((2, 3)))
    with pytest.raises(ValueError, match="PJRT devices"):
        g.call(xp.ones((2, 3), device="interpreter"), 3)


def test_export_refuses_what_it_cannot_carry():
    with pytest.raises(ValueError, match="computes no array"):
        xp.export(lambda x: x)(xp.ones(2))
    with pytest.raises(TypeError, match="arguments are tlaloc arrays"):
        xp.export(lambda x, o: x + 1)(xp.ones(2), object())
    with pytest.raises(TypeError, match="results are"):
        xp.export(lambda x: (x + 1, object()))(xp.ones(2))
    with pytest.raises(ValueError, match="static and donated"):
        xp.export(xp.jit(lambda x, n: x * n, static_argnums=1))(xp.ones(2), 2)
    with pytest.raises(TypeError, match="function"):
        xp.export(3)
    jitted = xp.jit(lambda x: x * 2.0)     # a plain jit exports its function
    np.testing.assert_array_equal(np.asarray(roundtrip(jitted, xp.ones(2)).call(xp.ones(2))), [2.0, 2.0])


def test_repeated_calls_compile_once():
    g = roundtrip(lambda x: xp.exp(x) + 1.0, xp.ones(5))
    xs = [xp.asarray(np.full(5, float(k))) for k in range(4)]    # leaves: nothing to compute
    g.call(xs[3])
    before = xp.cache_info()
    for k in range(3):
        np.testing.assert_allclose(np.asarray(g.call(xs[k])), np.exp(np.full(5, k)) + 1.0)
    after = xp.cache_info()
    assert after["compiles"] == before["compiles"] and after["misses"] == before["misses"]
    assert after["hits"] >= before["hits"] + 3


def test_the_artifact_targets_the_oldest_stablehlo_it_can():
    from jaxlib.mlir.dialects import stablehlo
    e = xp.export(lambda x: xp.sin(x) * 2.0)(xp.ones(3, dtype=xp.float32))
    header = _header(e.serialize())
    assert header["stablehlo"] == str(stablehlo.get_minimum_version())
    assert header["format"] == 1 and header["platform"] == "cpu"
    assert "func.func public @main" in e.mlir_module()


def _header(blob):
    n = len(export_module._MAGIC)
    (size,) = struct.unpack("<Q", blob[n:n + 8])
    return json.loads(blob[n + 8:n + 8 + size])


def _with_header(blob, header, payload=None):
    """`blob` with another header (and payload), its checksum recomputed."""
    n = len(export_module._MAGIC)
    (size,) = struct.unpack("<Q", blob[n:n + 8])
    payload = blob[n + 8 + size:] if payload is None else payload
    header = dict(header, sha256=hashlib.sha256(payload).hexdigest())
    text = json.dumps(header).encode()
    return blob[:n] + struct.pack("<Q", len(text)) + text + payload


def test_corrupt_bytes_raise_value_error():
    blob = xp.export(lambda x: xp.sum(x * x))(xp.ones(4)).serialize()
    header = _header(blob)
    artifact_bytes = header["artifact"]["nbytes"]
    magic = len(export_module._MAGIC)
    cases = {
        "not a tlaloc exported program": [b"", b"hello", b"\0" * 64],
        "corrupt exported program header": [blob[:magic + 3], blob[:magic + 20]],
        "format 2": [_with_header(blob, dict(header, format=2))],
        "checksum": [blob[:-10], blob[:-1] + bytes([blob[-1] ^ 1])],
        "corrupt exported program": [
            _with_header(blob, dict(header, out_avals=[[[], "float13"]])),
            _with_header(blob, dict(header, artifact={"offset": 0, "nbytes": 10**9})),
            _with_header(blob, dict(header, in_leaves=[{"array": [[4], "float64"]}])),
            _with_header(blob, dict(header, inputs=[["arg", 5]])),
            _with_header(blob, dict(header, outputs=[["out", 3, None]])),
            _with_header(blob, dict(header, outputs=[["nothing", 0]])),
        ],
        # intact bytes that are no StableHLO artifact (as from a jaxlib this one cannot read)
        "portable artifact": [_with_header(blob, header, b"\0" * artifact_bytes)],
    }
    for message, blobs in cases.items():
        for b in blobs:
            with pytest.raises(ValueError, match=message):
                xp.deserialize(b)
    with pytest.raises(TypeError, match="bytes"):
        xp.deserialize("a string")


def test_a_fresh_process_runs_the_program(tmp_path):
    rng = np.random.default_rng(3)
    w = rng.standard_normal((3, 2)).astype(np.float32)
    f = lambda x: xp.tanh(x @ xp.asarray(w))                     # noqa: E731
    path = tmp_path / "model.tlaloc"
    path.write_bytes(xp.export(f)(xp.ones((4, 3), dtype=xp.float32)).serialize())
    x = rng.standard_normal((4, 3)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    script = textwrap.dedent(f"""
        import numpy as np, tlaloc as xp
        g = xp.deserialize(open({str(path)!r}, "rb").read())
        out = g.call(xp.asarray(np.load({str(tmp_path / 'x.npy')!r})))
        np.save({str(tmp_path / 'out.npy')!r}, np.asarray(out))
    """)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    np.testing.assert_allclose(np.load(tmp_path / "out.npy"), np.tanh(x @ w), rtol=1e-5, atol=1e-6)


def test_differentiating_through_an_exported_program_raises():
    """The artifact is the forward program only: grad through it gave silent zeros."""
    w = xp.asarray(np.array([0.5, -1.0]))
    x = xp.asarray(np.array([[1.0, 2.0], [3.0, 4.0]]))
    exported = xp.export(lambda w, x: xp.sum(xp.tanh(x @ w)))(w, x)
    again = xp.deserialize(exported.serialize())
    for e in (exported, again):
        with pytest.raises(xp.DerivativeLostError, match="Exported.call: an exported program is not differentiable"):
            xp.grad(lambda w: e.call(w, x))(w)
        # what the message suggests works: export the gradient itself
    g = xp.export(xp.grad(lambda w, x: xp.sum(xp.tanh(x @ w))))(w, x)
    want = np.asarray(xp.grad(lambda w: xp.sum(xp.tanh(x @ w)))(w))
    np.testing.assert_allclose(np.asarray(xp.deserialize(g.serialize()).call(w, x)), want)
    # a non-differentiated argument is fine under grad
    out = xp.grad(lambda v: xp.sum(v) * exported.call(w, x))(w)
    np.testing.assert_allclose(np.asarray(out), np.full(2, float(exported.call(w, x))))
