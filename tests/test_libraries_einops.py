"""einops on tlaloc arrays (einops.array_api, its entry point for array API libraries), each
call against the same call on NumPy arrays through einops' NumPy backend, in float32 and
float64, on both backends (docs/interop.md)."""
import numpy as np
import pytest

import tlaloc as xp

from helpers import assert_matches

einops = pytest.importorskip("einops")
from einops import array_api as ea  # noqa: E402

X = np.random.default_rng(0).standard_normal((4, 6, 10))

# name -> (call on tlaloc via einops.array_api, the same call on NumPy via einops)
CASES = {
    "rearrange transpose": lambda E, x: E.rearrange(x, "a b c -> c a b"),
    "rearrange merge": lambda E, x: E.rearrange(x, "a b c -> (a b) c"),
    "rearrange split": lambda E, x: E.rearrange(x, "a b (c d) -> a d b c", d=2),
    "rearrange ellipsis": lambda E, x: E.rearrange(x, "a ... -> ... a"),
    "rearrange new axis": lambda E, x: E.rearrange(x, "a b c -> a 1 b c"),
    "reduce mean": lambda E, x: E.reduce(x, "a b (c d) -> a c", "mean", d=5),
    "reduce max": lambda E, x: E.reduce(x, "a b c -> b", "max"),
    "reduce min": lambda E, x: E.reduce(x, "a b c -> a c", "min"),
    "reduce sum keep": lambda E, x: E.reduce(x, "a b c -> a 1 c", "sum"),
    "reduce prod": lambda E, x: E.reduce(x[:2, :2, :3], "a b c -> c", "prod"),
    "reduce pooling": lambda E, x: E.reduce(x, "a (b h) (c w) -> a b c", "max", h=2, w=5),
    "repeat": lambda E, x: E.repeat(x[0], "b c -> b c r", r=3),
    "repeat tile": lambda E, x: E.repeat(x[0], "b c -> (r b) c", r=2),
    "pack": lambda E, x: E.pack([x, x[:, :, :3]], "a b *")[0],
    "unpack": lambda E, x: E.unpack(x, [[4], [6]], "a b *")[1],
}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", list(CASES))
def test_einops_matches_numpy(tier, name, dtype):
    fn = CASES[name]
    data = X.astype(dtype)
    expected = fn(einops, data)
    actual = fn(ea, xp.asarray(data, device=tier))
    assert isinstance(actual, xp.Array) and actual.device == tier
    assert_matches(actual, expected)


def test_einops_under_grad():
    x = xp.asarray(X)
    g = xp.grad(lambda x: xp.sum(ea.reduce(x, "a b c -> a c", "max") ** 2))(x)
    flat = X.transpose(0, 2, 1)                      # (a, c, b): max over b
    want = np.zeros_like(X)
    idx = flat.argmax(-1)
    for a in range(4):
        for c in range(10):
            want[a, idx[a, c], c] = 2 * flat[a, c].max()
    assert_matches(g, want)
