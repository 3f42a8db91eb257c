"""Named axes: propagation, mismatch errors, named axis arguments, derivatives, capture."""
import numpy as np
import pytest

import tlaloc as xp


@pytest.fixture
def x():
    return xp.asarray(np.arange(6.0).reshape(2, 3), names=("batch", "feature"))


def test_names_at_creation_and_rename(x):
    assert x.names == ("batch", "feature")
    assert xp.zeros((2, 3), names=("a", None)).names == ("a", None)
    assert xp.zeros_like(x).names == x.names
    assert x.rename(None, "f").names == (None, "f")
    assert x.rename(feature="channel").names == ("batch", "channel")
    assert xp.ones(3).names == (None,)
    with pytest.raises(ValueError, match="twice"):
        x.rename("a", "a")
    with pytest.raises(ValueError, match="2 dimension"):
        x.rename("a")
    with pytest.raises(ValueError, match="no axis named"):
        x.rename(time="t")
    assert "names=('batch', 'feature')" in repr(x)


def test_positional_semantics_unchanged(x):
    plain = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(np.asarray(xp.sum(x * 2 + 1, axis=1)), (plain * 2 + 1).sum(axis=1))
    np.testing.assert_allclose(np.asarray(x @ xp.ones((3, 4))), plain @ np.ones((3, 4)))


def test_elementwise_unify_and_mismatch(x):
    assert (x + xp.ones(3)).names == ("batch", "feature")
    assert (xp.ones((2, 1)) * x).names == ("batch", "feature")
    assert xp.where(x > 1, x, 0.0).names == ("batch", "feature")
    other = xp.ones((2, 3), names=("time", "feature"))
    with pytest.raises(ValueError, match=r"multiply: axis names 'batch' and 'time'"):
        x * other
    with pytest.raises(ValueError, match=r"add: axis names"):
        xp.add(x, other)


def test_reductions_drop_reduced_names(x):
    assert xp.sum(x, axis=0).names == ("feature",)
    assert xp.mean(x, axis="feature").names == ("batch",)
    assert xp.max(x, axis=("batch",), keepdims=True).names == ("batch", "feature")
    assert xp.sum(x).names == ()
    assert xp.argmax(x, axis="feature").names == ("batch",)
    assert xp.std(x, axis="batch").names == ("feature",)
    np.testing.assert_allclose(np.asarray(xp.sum(x, axis="feature")), [3.0, 12.0])


@pytest.mark.parametrize("fn,kwargs", [
    ("sum", {}), ("prod", {}), ("max", {}), ("min", {}), ("mean", {}), ("var", {}), ("std", {}),
    ("all", {}), ("any", {}), ("argmax", {}), ("argmin", {}), ("count_nonzero", {}),
    ("sort", {}), ("argsort", {}), ("cumulative_sum", {}), ("cumulative_prod", {}),
    ("flip", {}), ("diff", {}), ("roll", {"shift": 1}),
])
def test_every_axis_argument_accepts_names(x, fn, kwargs):
    by_name = getattr(xp, fn)(x, axis="feature", **kwargs)
    by_position = getattr(xp, fn)(xp.asarray(np.arange(6.0).reshape(2, 3)), axis=1, **kwargs)
    np.testing.assert_allclose(np.asarray(by_name), np.asarray(by_position))


def test_structural_propagation(x):
    assert x.T.names == ("feature", "batch")
    assert xp.permute_dims(x, ("feature", "batch")).names == ("feature", "batch")
    assert xp.matrix_transpose(x).names == ("feature", "batch")
    assert x[0].names == ("feature",)
    assert x[:, 1:].names == ("batch", "feature")
    assert x[None, ..., 0].names == (None, "batch")
    assert xp.expand_dims(x, axis=1).names == ("batch", None, "feature")
    assert xp.squeeze(xp.expand_dims(x, axis=0), axis=0).names == ("batch", "feature")
    assert xp.concat([x, x], axis="batch").names == ("batch", "feature")
    assert xp.stack([x, x]).names == (None, "batch", "feature")
    assert xp.reshape(x, (2, 3, 1)).names == ("batch", "feature", None)
    assert xp.reshape(x, (6,)).names == (None,)
    assert xp.moveaxis(x, "batch", -1).names == ("feature", "batch")
    assert [u.names for u in xp.unstack(x, axis="batch")] == [("feature",), ("feature",)]
    assert xp.broadcast_to(xp.ones(3, names=("f",)), (2, 3)).names == (None, "f")


def test_contractions(x):
    w = xp.ones((3, 4), names=("feature", "hidden"))
    assert (x @ w).names == ("batch", "hidden")
    assert xp.tensordot(x, w, axes=(("feature",), ("feature",))).names == ("batch", "hidden")
    with pytest.raises(ValueError, match="contracted axes are named 'feature' and 'time'"):
        x @ xp.ones((3, 4), names=("time", "hidden"))
    assert xp.vecdot(x, x, axis="feature").names == ("batch",)
    out = xp.contract(x, w, over="feature")
    assert out.names == ("batch", "hidden")
    np.testing.assert_allclose(np.asarray(out), np.asarray(x) @ np.ones((3, 4)))
    batched = xp.contract(xp.ones((2, 3, 5), names=("b", "i", "j")),
                          xp.ones((5, 2), names=("j", "b")), over="j")
    assert batched.names == ("b", "i") and batched.shape == (2, 3)


def test_align_and_broadcast_by_name(x):
    v = xp.asarray([10.0, 20.0], names=("batch",))
    a, b = xp.named.broadcast(x, v)
    assert a.names == ("batch", "feature") and b.names == ("batch", "feature") and b.shape == (2, 1)
    np.testing.assert_allclose(np.asarray(a + b), np.arange(6.0).reshape(2, 3) + [[10.0], [20.0]])
    aligned = xp.align_to(x, "feature", "batch")
    assert aligned.shape == (3, 2)
    with pytest.raises(ValueError, match="not in"):
        xp.align_to(x, "feature")


def test_linalg_and_fft_keep_batch_names():
    m = xp.asarray(np.eye(3)[None].repeat(2, axis=0) * 2.0, names=("batch", "row", "col"))
    assert xp.linalg.inv(m).names == ("batch", "row", "col")
    assert xp.linalg.det(m).names == ("batch",)
    assert xp.fft.fft(xp.ones((2, 4), names=("b", "t")), axis=-1).names == ("b", "t")


def test_derivatives_carry_primal_names(x):
    g = xp.grad(lambda a: xp.sum(xp.sin(a)))(x)
    assert g.names == x.names
    params = {"w": xp.ones((3, 4), names=("feature", "hidden"))}
    g = xp.grad(lambda p: xp.sum(x @ p["w"]))(params)
    assert g["w"].names == ("feature", "hidden")


def test_jit_signature_includes_names(x):
    f = xp.jit(lambda a: xp.sum(a, axis=0))
    assert f(x).names == ("feature",)
    assert f(x).names == ("feature",)
    y = x.rename("time", "feature")
    assert f(y).names == ("feature",)
    assert xp.compile_log()[-1]["cause"].startswith(("argument", "first call"))


def test_annotations_checked_at_call_time(x):
    @xp.typechecked
    def pool(a: xp.Array[xp.Named["batch", "feature"], xp.float64]) -> xp.Array[xp.Named["batch"]]:
        return xp.mean(a, axis="feature")

    assert pool(x).names == ("batch",)
    with pytest.raises(ValueError, match="expected axes named"):
        pool(x.T)
    with pytest.raises(TypeError, match="dtype"):
        pool(xp.astype(x, xp.float32))


def test_small_model_with_names_only():
    rng = np.random.default_rng(0)
    data = xp.asarray(rng.normal(size=(8, 3)), names=("batch", "feature"))
    target = xp.asarray(rng.normal(size=(8,)), names=("batch",))
    params = {"w": xp.asarray(rng.normal(size=(3, 4)), names=("feature", "hidden")),
              "v": xp.asarray(rng.normal(size=(4,)), names=("hidden",))}

    def loss(p):
        hidden = xp.tanh(xp.contract(data, p["w"], over="feature"))
        pred = xp.contract(hidden, p["v"], over="hidden")
        return xp.mean((pred - target) ** 2, axis="batch")

    first = float(loss(params))
    for _ in range(50):
        g = xp.grad(loss)(params)
        params = {k: params[k] - 0.1 * g[k] for k in params}
    assert params["w"].names == ("feature", "hidden")
    assert float(loss(params)) < first


def test_contractions_that_would_repeat_a_name_raise():
    q = xp.ones((3, 4), names=("query", "feature"))
    with pytest.raises(ValueError, match="two axes named 'query'"):
        q @ q.T
    with pytest.raises(ValueError, match="tensordot: the result would have two axes named 'query'"):
        xp.tensordot(q, q, axes=([1], [1]))
    k = xp.rename(q, query="key")
    assert (q @ k.T).names == ("query", "key")
    assert xp.tensordot(q, k, axes=([1], [1])).names == ("query", "key")
