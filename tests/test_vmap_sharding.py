"""tlaloc.vmap of programs over a mesh (4 CPU devices): layout constraints, manual regions
(shard_map) and their collectives, batched. The device count is fixed when the CPU client is
made, so the test runs this module again in a subprocess with TLALOC_CPU_DEVICES=4 (as
tests/test_sharding.py does). Each batched result is compared with the loop over the
examples, on the mesh and on the interpreter."""
import os
import subprocess
import sys

import numpy as np
import pytest

import tlaloc as xp

HERE = os.path.dirname(os.path.abspath(__file__))
FOUR = os.environ.get("TLALOC_CPU_DEVICES") == "4"
four = pytest.mark.skipif(not FOUR, reason="runs in the 4-device subprocess")


@pytest.mark.skipif(FOUR, reason="this is the subprocess")
def test_on_four_devices():
    env = dict(os.environ, TLALOC_CPU_DEVICES="4", TLALOC_EXECUTION="auto")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                           os.path.join(HERE, "test_vmap_sharding.py")], env=env, cwd=HERE,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    assert " passed" in done.stdout


SPLIT = {"batch": "data", "feat": "model"}


def _collectives(b):
    return (xp.psum(b, "data") * 2.0 + xp.pmax(b, ("data", "model")),
            xp.all_gather(b, "data", axis="batch"),
            xp.psum_scatter(b, "model", axis=1) + xp.ppermute(b, "data", [(0, 1)])[:, :1],
            xp.all_to_all(b, "model", 0, 1),
            xp.astype(xp.axis_index("data"), xp.float32) + xp.exp(-b * b))


@four
def test_vmap_of_a_manual_region_equals_the_loop():
    mesh = xp.Mesh({"data": 2, "model": 2})
    outs = (SPLIT, {"feat": "model"}, SPLIT, SPLIT, SPLIT)
    run = xp.shard_map(_collectives, mesh, (SPLIT,), outs)
    values = np.random.default_rng(0).standard_normal((3, 8, 4)).astype(np.float32)
    for device in (None, "interpreter"):
        xs = xp.rename(xp.asarray(values, device=device), (None, "batch", "feat"))
        if device is None:
            xs = xp.shard(xs, mesh, SPLIT)
        got = xp.vmap(run)(xs)
        want = [run(xs[i]) for i in range(3)]
        for k, g in enumerate(got):
            np.testing.assert_allclose(np.asarray(g), np.stack([np.asarray(w[k]) for w in want]),
                                       rtol=1e-6, atol=1e-6)


@four
def test_vmap_of_layout_constraints_and_a_named_axis():
    mesh = xp.Mesh({"data": 2, "model": 2})
    values = np.random.default_rng(1).standard_normal((8, 4, 6)).astype(np.float32)
    xs = xp.shard(xp.rename(xp.asarray(values), ("batch", "feat", "time")), mesh, SPLIT)
    f = lambda x: xp.with_sharding(xp.sin(x) * 2.0, {"feat": "model"})  # noqa: E731
    got = xp.vmap(f, axis="time")(xs)
    assert got.names == ("time", "batch", "feat")
    np.testing.assert_allclose(np.asarray(got), np.moveaxis(np.sin(values) * 2.0, 2, 0), rtol=1e-6)
    with pytest.raises(ValueError, match="also an axis of the mesh"):
        xp.vmap(f, axis="data")(xs)
