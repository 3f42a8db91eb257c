"""Sharding on named axes over 4 CPU devices in one process (issue 15).

The device count is fixed when the CPU client is made and the rest of the suite runs on one
device, so `test_on_four_devices` runs this module again in a subprocess with
TLALOC_CPU_DEVICES=4; there the tests marked `four` run (and are skipped in the parent).
Every sharded result is compared with the same global program on the interpreter device
(which runs it unsharded), and the collectives of manual regions with NumPy too.
"""
import os

import numpy as np
import pytest

import tlaloc as xp
from helpers import rerun_with_cpu_devices

FOUR = os.environ.get("TLALOC_CPU_DEVICES") == "4"
four = pytest.mark.skipif(not FOUR, reason="runs in the 4-device subprocess")


@pytest.mark.skipif(FOUR, reason="this is the subprocess")
def test_on_four_devices():
    rerun_with_cpu_devices(__file__, 4)


RNG = np.random.default_rng(15)


def named(a, names, device=None):
    return xp.rename(xp.asarray(a, device=device), names)


def interp(a, names):
    return named(a, names, "interpreter")


@pytest.fixture
def mesh():
    return xp.Mesh({"data": 2, "model": 2})


# ----------------------------------------------------------------------------- devices and layouts

@four
def test_devices_and_mesh(mesh):
    cpus = xp.devices("cpu")
    assert len(cpus) == 4 and cpus == [xp.device(f"cpu:{i}") for i in range(4)]
    assert xp.devices()[-1] == xp.device("interpreter")
    assert xp.local_devices("cpu") == cpus
    assert mesh.devices == tuple(cpus) and mesh.shape == {"data": 2, "model": 2}
    assert xp.Mesh({"data": 2, "model": 2}).device is mesh.device    # one device per mesh
    assert xp.Mesh({"data": 2, "model": 2}, devices=cpus[::-1]).device is not mesh.device
    assert xp.process_index() == 0 and xp.process_count() == 1


@four
@pytest.mark.parametrize("layout, tile", [
    ({"batch": "data"}, (4, 6)),
    ({"batch": "data", "feat": "model"}, (4, 3)),
    ({"feat": ("data", "model")}, (8, 1.5)),      # 6 / 4 does not divide: refused below
    ({"batch": ("model", "data")}, (2, 6)),
    ({}, (8, 6)),
])
@pytest.mark.parametrize("dtype", ["float32", "int32", "bool", "complex64"])
def test_shard_shapes_indices_and_data(mesh, layout, tile, dtype):
    host = (RNG.standard_normal((8, 6)) * 10).astype(dtype)
    x = named(host, ("batch", "feat"))
    if tile[1] == 1.5:
        with pytest.raises(ValueError, match="do not divide"):
            xp.shard(x, mesh, layout)
        return
    y = xp.shard(x, mesh, layout)
    assert y.device is mesh.device and y.shape == (8, 6) and y.dtype == x.dtype
    assert y.names == ("batch", "feat")
    assert y.sharding.mapping == layout and y.sharding.mesh == mesh
    shards = y.addressable_shards
    assert [s.device for s in shards] == list(mesh.devices)
    seen = set()
    for position, s in enumerate(shards):
        assert s.data.shape == tile and s.data.device == s.device
        np.testing.assert_array_equal(np.asarray(s.data), host[s.index])
        seen.add(tuple((i.start, i.stop) for i in s.index))
    assert len(seen) == 48 // (tile[0] * tile[1])   # distinct tiles (copies repeat one)
    np.testing.assert_array_equal(np.asarray(y), host)
    # the device order follows the mesh: position (d, m) is device 2 * d + m
    if layout == {"batch": ("model", "data")}:
        assert [s.index[0].start for s in shards] == [0, 4, 2, 6]


@four
def test_relayout_on_the_mesh_and_under_grad(mesh):
    xh = RNG.standard_normal((8, 4)).astype(np.float32)
    x = xp.shard(named(xh, ("batch", "feat")), mesh, {"batch": "data"})
    y = xp.shard(x, mesh, {"batch": "model", "feat": "data"})     # device to device
    assert y.sharding.mapping == {"batch": "model", "feat": "data"}
    for s in y.addressable_shards:
        np.testing.assert_array_equal(np.asarray(s.data), xh[s.index])

    def f(a):   # a layout change inside the differentiated function keeps the derivative
        return xp.sum(xp.shard(a * a, mesh, {"feat": "model"}))

    np.testing.assert_allclose(np.asarray(xp.grad(f)(x)), 2 * xh, rtol=1e-6)


@four
def test_zero_d_and_empty(mesh):
    s = xp.shard(xp.asarray(np.float32(3.5)), mesh, {})
    assert s.sharding.mapping == {} and float(s * 2) == 7.0
    e = xp.shard(named(np.zeros((0, 4), np.float32), ("batch", "feat")), mesh, {"batch": "data"})
    assert [sh.data.shape for sh in e.addressable_shards] == [(0, 4)] * 4
    assert np.asarray(xp.sum(e, axis=0)).tolist() == [0.0] * 4


def _program(x, w, b):
    h = xp.tanh(x @ w + b)                      # a broadcast add of the bias
    return xp.sum(h * h, axis="hidden"), xp.max(h, axis="batch"), xp.mean(h), h


@four
@pytest.mark.parametrize("layouts", [
    ({"batch": "data"}, {}, {}),
    ({"batch": "data"}, {"hidden": "model"}, {"hidden": "model"}),
    ({"batch": ("data", "model")}, {}, {}),
    ({"feat": "model"}, {"feat": "model"}, {}),   # contraction over a split axis: all-reduce
])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_results_equal_the_unsharded_program(mesh, layouts, dtype):
    xh = RNG.standard_normal((8, 4)).astype(dtype)
    wh = RNG.standard_normal((4, 6)).astype(dtype)
    bh = RNG.standard_normal((6,)).astype(dtype)
    names = (("batch", "feat"), ("feat", "hidden"), ("hidden",))
    args = [xp.shard(named(a, n), mesh, l) for a, n, l in zip((xh, wh, bh), names, layouts)]
    ref = _program(*[interp(a, n) for a, n in zip((xh, wh, bh), names)])
    got = _program(*args)
    tol = 1e-5 if dtype == "float32" else 1e-12
    for g, r in zip(got, ref):
        assert g.device is mesh.device and g.names == r.names
        np.testing.assert_allclose(np.asarray(g), np.asarray(r), rtol=tol, atol=tol)
    h = got[3]
    assert h.sharding.mesh == mesh   # results come back laid out as XLA propagated them
    if layouts[0] == {"batch": "data"}:
        assert h.sharding.mapping.get("batch") == "data"


@four
def test_special_values_and_integers(mesh):
    xh = np.array([[0.0, -0.0, np.inf, -np.inf], [np.nan, 1e-45, -1.0, 3.0]], np.float32)
    x = xp.shard(named(xh, ("batch", "feat")), mesh, {"batch": "data", "feat": "model"})
    r = interp(xh, ("batch", "feat"))
    xp.config.update(execution="compiled")
    one = named(xh, ("batch", "feat"), "cpu:0")     # the unsharded program, compiled by XLA
    for f in (lambda a: xp.exp(a) - a, lambda a: xp.maximum(a, 0.0), lambda a: xp.sum(a, axis=1)):
        np.testing.assert_array_equal(np.asarray(f(x)), np.asarray(f(one)))   # bit for bit
    for f in (lambda a: xp.exp(a) * 2 + a, lambda a: xp.maximum(a, 0.0), lambda a: xp.sum(a, axis=1)):
        np.testing.assert_allclose(np.asarray(f(x)), np.asarray(f(r)), rtol=1e-6)
    ih = np.arange(-8, 8, dtype=np.int32).reshape(4, 4)
    i = xp.shard(named(ih, ("batch", "feat")), mesh, {"batch": "data"})
    np.testing.assert_array_equal(np.asarray(i // 3 + xp.sum(i, axis="batch")),
                                  ih // 3 + ih.sum(axis=0))


@four
def test_with_sharding_constrains_an_intermediate(mesh):
    xh = RNG.standard_normal((8, 4)).astype(np.float32)
    x = xp.shard(named(xh, ("batch", "feat")), mesh, {"batch": "data"})
    y = xp.with_sharding(xp.exp(x), {"feat": "model"})
    text = xp.stablehlo(y)     # the module the mesh compiles: its layouts by mesh axis name
    assert 'sdy.mesh @mesh = <["data"=2, "model"=2]>' in text
    assert '{sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}' in text
    assert '"sdy.sharding_constraint"' in text and '[{}, {"model"}]' in text
    assert y.sharding.mapping == {"feat": "model"}
    np.testing.assert_allclose(np.asarray(y), np.exp(xh), rtol=1e-6)
    # off a mesh the layout is checked and the value returned
    r = interp(xh, ("batch", "feat"))
    assert xp.with_sharding(r, {"feat": "model"}) is r
    with pytest.raises(ValueError, match="no axis named 'hidden'"):
        xp.with_sharding(r, {"hidden": "model"})


@four
def test_to_device_gathers(mesh):
    xh = RNG.standard_normal((8, 4)).astype(np.float32)
    x = xp.shard(named(xh, ("batch", "feat")), mesh, {"batch": "data", "feat": "model"})
    for target in ("cpu:0", "interpreter"):
        y = x.to_device(target)
        assert y.device == xp.device(target)
        np.testing.assert_array_equal(np.asarray(y), xh)
    back = xp.asarray(xh, device="cpu:1").to_device(mesh.device)   # replicated on the mesh
    assert back.sharding.mapping == {}
    np.testing.assert_array_equal(np.asarray(back + x), 2 * xh)


# ----------------------------------------------------------------------------- manual regions

def _blocks(a, rows, cols):
    """NumPy: the (data, model) grid of blocks of `a` split rows x cols."""
    return [[b for b in np.split(r, cols, axis=1)] for r in np.split(a, rows, axis=0)]


SPLIT = {"batch": "data", "feat": "model"}


@four
def test_collectives_in_manual_regions_equal_numpy(mesh):
    xh = RNG.standard_normal((8, 4)).astype(np.float32)
    B = _blocks(xh, 2, 2)            # B[d][m]: the block of device (d, m), shape (4, 2)

    def f(b):
        return (xp.psum(b, "data"), xp.pmean(b, "model"), xp.pmax(b, ("data", "model")),
                xp.pmin(b, "data"), xp.all_gather(b, "data", axis="batch"),
                xp.psum_scatter(b, "model", axis=1), xp.ppermute(b, "data", [(0, 1)]),
                xp.all_to_all(b, "model", 0, 1),
                xp.astype(xp.axis_index("data") * 10 + xp.axis_index("model"), xp.float32)
                + xp.zeros_like(b))

    outs = (SPLIT, SPLIT, SPLIT, SPLIT, {"feat": "model"}, SPLIT, SPLIT, SPLIT, SPLIT)
    run = xp.shard_map(f, mesh, (SPLIT,), outs)
    got = run(xp.shard(named(xh, ("batch", "feat")), mesh, SPLIT))
    ref = run(interp(xh, ("batch", "feat")))

    def grid(fn):   # NumPy: the global result from each device's block fn(d, m)
        return np.concatenate([np.concatenate([fn(d, m) for m in range(2)], axis=1)
                               for d in range(2)], axis=0)

    every = np.stack([B[d][m] for d in range(2) for m in range(2)])
    expected = [
        grid(lambda d, m: B[0][m] + B[1][m]),
        grid(lambda d, m: (B[d][0] + B[d][1]) / 2),
        grid(lambda d, m: every.max(axis=0)),
        grid(lambda d, m: np.minimum(B[0][m], B[1][m])),
        np.concatenate([np.concatenate([B[0][m], B[1][m]], axis=0) for m in range(2)], axis=1),
        grid(lambda d, m: np.split(B[d][0] + B[d][1], 2, axis=1)[m]),
        grid(lambda d, m: B[0][m] if d == 1 else np.zeros_like(B[d][m])),
        # all_to_all over model: device m gets part m (rows) of each device's block, side by side
        np.concatenate([np.concatenate([np.concatenate(
            [np.split(B[d][j], 2, axis=0)[m] for j in range(2)], axis=1) for m in range(2)],
            axis=1) for d in range(2)], axis=0),
        grid(lambda d, m: np.full((4, 2), 10 * d + m, np.float32)),
    ]
    for g, r, e in zip(got, ref, expected):
        assert g.shape == e.shape, (g.shape, e.shape)
        np.testing.assert_allclose(np.asarray(g), e, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(np.asarray(r), e, rtol=1e-6, atol=1e-6)


@four
def test_manual_region_reads_outer_values_and_composes(mesh):
    xh = RNG.standard_normal((8, 4)).astype(np.float32)
    scale = xp.shard(xp.asarray(np.float32(3.0)), mesh, {})

    def f(b):   # the mean over the batch, by a local sum and a psum; reads `scale` from outside
        return xp.psum(xp.sum(b, axis="batch"), "data") / 8 * scale

    x = xp.shard(named(xh, ("batch", "feat")), mesh, {"batch": "data"})
    m = xp.shard_map(f, mesh, ({"batch": "data"},), {})(x)
    np.testing.assert_allclose(np.asarray(m), xh.mean(axis=0) * 3, rtol=1e-5)
    j = xp.jit(xp.shard_map(f, mesh, ({"batch": "data"},), {}))
    np.testing.assert_allclose(np.asarray(j(x)), xh.mean(axis=0) * 3, rtol=1e-5)
    kinds = [c.kind for c in xp.collectives(xp.shard_map(f, mesh, ({"batch": "data"},), {}), x)]
    assert kinds == ["all-reduce"]


# ----------------------------------------------------------------------------- derivatives, jit

def _loss(w1, w2, x):
    h = xp.tanh(x @ w1)
    h = xp.with_sharding(h, {"batch": "data", "hidden": "model"})
    return xp.sum((h @ w2) ** 2) / x.shape[0]


@four
def test_grad_through_a_sharded_matmul_chain(mesh):
    xh = RNG.standard_normal((8, 4)).astype(np.float32)
    w1h = RNG.standard_normal((4, 16)).astype(np.float32)
    w2h = RNG.standard_normal((16, 3)).astype(np.float32)
    names = (("feat", "hidden"), ("hidden", "out"), ("batch", "feat"))
    layouts = ({"hidden": "model"}, {"hidden": "model"}, {"batch": "data"})
    args = [xp.shard(named(a, n), mesh, l) for a, n, l in zip((w1h, w2h, xh), names, layouts)]
    ref_args = [interp(a, n) for a, n in zip((w1h, w2h, xh), names)]
    grad = xp.grad(_loss, argnums=(0, 1))
    for g, r in zip(grad(*args), grad(*ref_args)):
        assert g.sharding.mapping == {"hidden": "model"}
        np.testing.assert_allclose(np.asarray(g), np.asarray(r), rtol=2e-5, atol=2e-5)
    # the reduction over the split batch is one all-reduce per weight gradient
    found = xp.collectives(grad, *args)
    assert found and {c.kind for c in found} == {"all-reduce"}
    assert all(c.where.startswith("test_sharding.py:") for c in found)


def _region_loss(mesh):
    """A loss through a manual region using every linear collective, its result copies equal."""
    def body(b, w):
        h = xp.psum(xp.tanh(b @ w), "model")                 # the contraction over split f
        g = xp.all_gather(h, "data", axis="b")               # (8, 6) on every device
        p = xp.ppermute(h, "data", [(0, 1), (1, 0)])
        a = xp.all_to_all(h, "model", 1, 0)
        sc = xp.psum_scatter(g, "model", axis="h")
        local = xp.sum(p * h) + xp.sum(a ** 3) + xp.sum(sc * sc)
        return xp.sum(g ** 2) + xp.psum(local, ("data", "model")), h

    run = xp.shard_map(body, mesh, ({"b": "data", "f": "model"}, {"f": "model"}),
                       ({}, {"b": "data"}))

    def loss(x, w):
        s, h = run(x, w)
        return s + xp.sum(xp.sin(h))
    return loss


@four
def test_derivatives_through_a_manual_region(mesh):
    xh = RNG.standard_normal((8, 4))
    wh = RNG.standard_normal((4, 6))
    loss = _region_loss(mesh)

    def on(device):
        return named(xh, ("b", "f"), device), named(wh, ("f", "h"), device)

    xi, wi = on("interpreter")
    ref = xp.grad(loss, argnums=(0, 1))(xi, wi)
    xm, wm = on("cpu:0")
    got = xp.grad(loss, argnums=(0, 1))(xp.shard(xm, mesh, {"b": "data", "f": "model"}),
                                        xp.shard(wm, mesh, {"f": "model"}))
    for g, r in zip(got, ref):
        np.testing.assert_allclose(np.asarray(g), np.asarray(r), rtol=1e-10, atol=1e-10)

    def value(a, b):   # central differences of the interpreter's forward program
        return float(loss(named(a, ("b", "f"), "interpreter"), named(b, ("f", "h"), "interpreter")))

    eps = 1e-6
    for k, (arr, g) in enumerate(zip((xh, wh), ref)):
        fd = np.zeros_like(arr)
        for i in np.ndindex(*arr.shape):
            d = np.zeros_like(arr)
            d[i] = eps
            args = [(xh, wh), (xh + d, wh), (xh - d, wh)] if k == 0 else \
                [(xh, wh), (xh, wh + d), (xh, wh - d)]
            fd[i] = (value(*args[1]) - value(*args[2])) / (2 * eps)
        np.testing.assert_allclose(np.asarray(g), fd, rtol=1e-5, atol=1e-4)
    # forward mode: the derivative along a direction, on the mesh
    tx = named(RNG.standard_normal((8, 4)), ("b", "f"))
    _, tangent = xp.jvp(loss, (xp.shard(xm, mesh, {"b": "data", "f": "model"}),
                               xp.shard(wm, mesh, {"f": "model"})),
                        (xp.shard(tx, mesh, {"b": "data", "f": "model"}),
                         xp.shard(xp.zeros_like(wm), mesh, {"f": "model"})))
    np.testing.assert_allclose(float(tangent), float(xp.sum(ref[0] * tx.to_device("interpreter"))),
                               rtol=1e-9)


@four
def test_result_copies_that_differ_are_refused_on_the_interpreter(mesh):
    run = xp.shard_map(lambda b: xp.sum(b), mesh, ({"b": "data"},), {})
    with pytest.raises(ValueError, match="result 0 is laid out with copies over the mesh axes "
                                         "\\('data', 'model'\\), but its blocks differ"):
        float(run(named(np.arange(8.0), ("b",), "interpreter")))


@four
@pytest.mark.parametrize("kind", ["pmax", "pmin"])
def test_derivatives_of_pmax_and_pmin(mesh, kind):
    xh = np.array([3.0, 1.0, 2.0, 5.0, 5.0, 0.5, 2.0, -1.0])   # a tie between two devices
    run = xp.shard_map(lambda b: getattr(xp, kind)(b * b, ("data", "model")), mesh,
                       ({"b": ("data", "model")},), {})

    def loss(x):
        return xp.sum(xp.sin(run(x)))

    ref = xp.grad(loss)(named(xh, ("b",), "interpreter"))
    got = xp.grad(loss)(xp.shard(named(xh, ("b",)), mesh, {"b": ("data", "model")}))
    np.testing.assert_allclose(np.asarray(got), np.asarray(ref), rtol=1e-12)
    blocks = (xh * xh).reshape(4, 2)
    pick = blocks.max(axis=0) if kind == "pmax" else blocks.min(axis=0)
    ties = (blocks == pick).sum(axis=0)
    expected = np.where(blocks == pick, np.cos(pick) * 2 * xh.reshape(4, 2) / ties, 0)
    np.testing.assert_allclose(np.asarray(ref), expected.reshape(-1), rtol=1e-12)
    t = named(np.linspace(0.1, 1, 8), ("b",))
    _, tangent = xp.jvp(loss, (xp.shard(named(xh, ("b",)), mesh, {"b": ("data", "model")}),),
                        (xp.shard(t, mesh, {"b": ("data", "model")}),))
    np.testing.assert_allclose(float(tangent), float(np.sum(expected.reshape(-1) * np.asarray(t))),
                               rtol=1e-12)


@four
def test_jit_signature_includes_layouts_and_donation_keeps_state(mesh):
    xh = RNG.standard_normal((8, 4)).astype(np.float32)
    step = xp.jit(lambda w, x: w - 0.1 * xp.sum(x, axis="batch"), donate_argnums=(0,))
    w = xp.shard(named(np.ones(4, np.float32), ("feat",)), mesh, {"feat": "model"})
    expected = np.ones(4, np.float32)
    new_compiles = []
    for layout in ({"batch": "data"}, {"batch": "model"}, {"batch": "data"}):
        x = xp.shard(named(xh, ("batch", "feat")), mesh, layout)
        where = [s.data._node.value.unsafe_buffer_pointer() for s in w.addressable_shards]
        before = xp.cache_info()["compiles"]
        old, w = w, step(w, x)
        new_compiles.append(xp.cache_info()["compiles"] - before)
        expected = expected - 0.1 * xh.sum(axis=0)
        assert w.sharding.mapping == {"feat": "model"}   # state stays laid out as it was
        # donated: updated in place on every device, and the old array is gone
        assert [s.data._node.value.unsafe_buffer_pointer() for s in w.addressable_shards] == where
        with pytest.raises(xp.DonatedArrayError):
            np.asarray(old)
    assert new_compiles == [1, 1, 0]     # the inputs' layouts key the compiled program
    np.testing.assert_allclose(np.asarray(w), expected, rtol=1e-5)


@four
def test_export_on_a_mesh_runs_on_the_same_mesh_shape(mesh):
    xh = RNG.standard_normal((8, 4)).astype(np.float32)
    wh = RNG.standard_normal((4, 6)).astype(np.float32)
    bias = xp.shard(xp.asarray(np.float32(0.5)), mesh, {})      # captured: a program input

    def f(x, w):
        h = xp.with_sharding(xp.tanh(x @ w) + bias, {"batch": "data", "hidden": "model"})
        m = xp.shard_map(lambda b: xp.psum(b, "data"), mesh, ({"batch": "data"},), {})(h)
        return h, m

    x = xp.shard(named(xh, ("batch", "feat")), mesh, {"batch": "data"})
    w = xp.shard(named(wh, ("feat", "hidden")), mesh, {"hidden": "model"})
    blob = xp.export(f)(x, w).serialize()
    g = xp.deserialize(blob)
    assert "sdy" in g.mlir_module()
    other = xp.Mesh({"data": 2, "model": 2}, devices=xp.devices("cpu")[::-1])   # same shape
    for m in (mesh, other):
        h, s = g.call(xp.shard(named(xh, ("batch", "feat")), m, {"batch": "data"}),
                      xp.shard(named(wh, ("feat", "hidden")), m, {"hidden": "model"}))
        assert h.device is m.device and h.names == ("batch", "hidden")
        ref = np.tanh(xh @ wh) + 0.5
        np.testing.assert_allclose(np.asarray(h), ref, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(np.asarray(s), ref[:4] + ref[4:], rtol=1e-5, atol=1e-6)


# ----------------------------------------------------------------------------- bad input

@four
def test_bad_input(mesh):
    x = named(np.zeros((8, 6), np.float32), ("batch", "feat"))
    with pytest.raises(ValueError, match="no names"):
        xp.shard(xp.zeros((8, 6)), mesh, {"batch": "data"})
    with pytest.raises(ValueError, match="no axis named 'hidden'"):
        xp.shard(x, mesh, {"hidden": "data"})
    with pytest.raises(ValueError, match="mesh has no axis named 'rows'"):
        xp.shard(x, mesh, {"batch": "rows"})
    with pytest.raises(ValueError, match="'data' is used for two array axes"):
        xp.shard(x, mesh, {"batch": "data", "feat": "data"})
    with pytest.raises(ValueError, match="size 6, which the mesh axes .* do not divide"):
        xp.shard(named(np.zeros((8, 6)), ("batch", "feat")), xp.Mesh({"a": 4}), {"feat": "a"})
    with pytest.raises(TypeError, match="must be a dict"):
        xp.shard(x, mesh, ("data", None))
    with pytest.raises(TypeError, match="tlaloc.Mesh"):
        xp.shard(x, {"data": 2}, {})
    other = xp.Mesh({"data": 2, "model": 2}, devices=xp.devices("cpu")[::-1])
    a = xp.shard(x, mesh, {"batch": "data"})
    b = xp.shard(x, other, {"batch": "data"})
    with pytest.raises(ValueError, match="different devices.*mesh"):
        a + b
    with pytest.raises(ValueError, match="needs 8 devices.*4 CPU device"):
        xp.Mesh({"data": 4, "model": 2})
    with pytest.raises(ValueError, match="needs 4 devices, got 2"):
        xp.Mesh({"data": 4}, devices=xp.devices("cpu")[:2])
    with pytest.raises(ValueError, match="listed twice"):
        xp.Mesh({"data": 2}, devices=[xp.device("cpu:0")] * 2)
    with pytest.raises(ValueError, match="positive int size"):
        xp.Mesh({"data": 0})
    run = xp.shard_map(lambda b: xp.psum(b, "rows"), mesh, ({"batch": "data"},), {"batch": "data"})
    with pytest.raises(ValueError, match="mesh has no axis named 'rows'"):
        run(a)
    with pytest.raises(ValueError, match="one layout dict per argument"):
        xp.shard_map(lambda b: b, mesh, ({}, {}), {})(a)
    with pytest.raises(ValueError, match="on Device\\(cpu:0\\)"):
        xp.shard_map(lambda b: b, mesh, ({},), {})(x)
    with pytest.raises(ValueError, match="psum_scatter: axis .* do not divide"):
        xp.shard_map(lambda b: xp.psum_scatter(b, "model", axis="feat"), mesh,
                     ({"batch": "data", "feat": "model"},), {"batch": "data"})(
            xp.shard(named(np.zeros((8, 2), np.float32), ("batch", "feat")), mesh,
                     {"batch": "data"}))
    with pytest.raises(NotImplementedError, match="exported on one device; running it on a mesh"):
        xp.export(lambda v: v * 2)(x).call(a)
    exported = xp.export(lambda v: v * 2)(a)
    with pytest.raises(ValueError, match="exported for a mesh .* the arguments are on Device\\(cpu:0\\)"):
        exported.call(x)
    with pytest.raises(ValueError, match="laid out as .* exported for"):
        exported.call(xp.shard(x, mesh, {"batch": "model"}))
    with pytest.raises(ValueError, match="sends from or to one device twice"):
        xp.shard_map(lambda b: xp.ppermute(b, "data", [(0, 1), (1, 1)]), mesh,
                     ({"batch": "data"},), {"batch": "data"})(a)


def test_bad_input_on_one_device():
    with pytest.raises(RuntimeError, match="only inside a function that tlaloc.shard_map runs"):
        xp.psum(xp.zeros(3), "data")
    with pytest.raises(ValueError, match="positive int"):
        xp.config.update(cpu_devices=0)
    if not FOUR:
        with pytest.raises(ValueError, match="needs 2 devices.*TLALOC_CPU_DEVICES=2"):
            xp.Mesh({"data": 2})
        xp.zeros(2) + 1   # the CPU is in use: the device count is fixed
        np.asarray(xp.zeros(2, device="cpu") + 1)
        with pytest.raises(RuntimeError, match="cpu_devices is fixed"):
            xp.config.update(cpu_devices=4)
    x = named(np.zeros((4, 2), np.float32), ("batch", "feat"))
    assert x.sharding is None
    [s] = x.addressable_shards
    assert s.device == x.device and s.index == (slice(0, 4), slice(0, 2)) and s.data is x


@four
def test_host_computations_leave_a_mesh_arrays_layout(mesh):
    """On the CPU devices, sort, masks and unique_* are computed by NumPy (tlaloc/_api/
    _core.py, on_host); a mesh's arrays keep the recorded forms, and their layouts."""
    host = RNG.standard_normal((8, 6))
    x = xp.shard(named(host, ("batch", "feat")), mesh, {"batch": "data"})
    s = xp.sort(x, axis=1)
    assert s.sharding.mapping == {"batch": "data"}
    np.testing.assert_array_equal(np.asarray(s), np.sort(host, axis=1))
    np.testing.assert_array_equal(np.asarray(xp.argsort(x, axis=0)),
                                  np.argsort(host, axis=0, kind="stable"))
    np.testing.assert_array_equal(np.asarray(x[x > 0.5]), host[host > 0.5])
