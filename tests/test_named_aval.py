"""Named axes live in the abstract value: every axis-taking function accepts names, names
survive operators and transformations, and names never change the compiled program."""
import inspect

import numpy as np
import pytest

import tlaloc as xp

RNG = np.random.default_rng(0)
A = RNG.normal(size=(2, 3, 4))
NAMES = ("batch", "feat", "time")


def named(a=A, names=NAMES):
    return xp.asarray(a, names=names)


def plain(a=A):
    return xp.asarray(a)


def _idx(values):
    return xp.asarray(np.asarray(values))


# Every namespace function with an axis argument: how to call it with names and with
# positions. Each entry: (call with names, call with positions); `x` is a function giving
# the array (named or plain).
C3 = RNG.normal(size=(2, 3, 3))
COMPLEX = (RNG.normal(size=(2, 3, 4)) + 1j * RNG.normal(size=(2, 3, 4)))
CALLS = {
    "all": (lambda x: xp.all(x() > 0, axis="feat"), lambda x: xp.all(x() > 0, axis=1)),
    "any": (lambda x: xp.any(x() > 0, axis="feat"), lambda x: xp.any(x() > 0, axis=1)),
    "argmax": (lambda x: xp.argmax(x(), axis="time"), lambda x: xp.argmax(x(), axis=2)),
    "argmin": (lambda x: xp.argmin(x(), axis="time"), lambda x: xp.argmin(x(), axis=2)),
    "argsort": (lambda x: xp.argsort(x(), axis="feat"), lambda x: xp.argsort(x(), axis=1)),
    "concat": (lambda x: xp.concat([x(), x()], axis="feat"), lambda x: xp.concat([x(), x()], axis=1)),
    "count_nonzero": (lambda x: xp.count_nonzero(x() > 0, axis=("batch", "time")),
                      lambda x: xp.count_nonzero(x() > 0, axis=(0, 2))),
    "cumulative_prod": (lambda x: xp.cumulative_prod(x(), axis="time"),
                        lambda x: xp.cumulative_prod(x(), axis=2)),
    "cumulative_sum": (lambda x: xp.cumulative_sum(x(), axis="time"),
                       lambda x: xp.cumulative_sum(x(), axis=2)),
    "diff": (lambda x: xp.diff(x(), axis="feat"), lambda x: xp.diff(x(), axis=1)),
    "expand_dims": (lambda x: xp.expand_dims(x(), axis="feat"), lambda x: xp.expand_dims(x(), axis=1)),
    "flip": (lambda x: xp.flip(x(), axis="feat"), lambda x: xp.flip(x(), axis=1)),
    "max": (lambda x: xp.max(x(), axis="feat"), lambda x: xp.max(x(), axis=1)),
    "mean": (lambda x: xp.mean(x(), axis="feat"), lambda x: xp.mean(x(), axis=1)),
    "min": (lambda x: xp.min(x(), axis="feat"), lambda x: xp.min(x(), axis=1)),
    "moveaxis": (lambda x: xp.moveaxis(x(), "batch", "time"), lambda x: xp.moveaxis(x(), 0, 2)),
    "permute_dims": (lambda x: xp.permute_dims(x(), ("time", "batch", "feat")),
                     lambda x: xp.permute_dims(x(), (2, 0, 1))),
    "prod": (lambda x: xp.prod(x(), axis="feat"), lambda x: xp.prod(x(), axis=1)),
    "repeat": (lambda x: xp.repeat(x(), 2, axis="feat"), lambda x: xp.repeat(x(), 2, axis=1)),
    "roll": (lambda x: xp.roll(x(), 1, axis="time"), lambda x: xp.roll(x(), 1, axis=2)),
    "sort": (lambda x: xp.sort(x(), axis="feat"), lambda x: xp.sort(x(), axis=1)),
    "squeeze": (lambda x: xp.squeeze(xp.expand_dims(x(), axis=1).rename("batch", "one", "feat", "time")
                                     if x is named else xp.expand_dims(x(), axis=1), axis="one"),
                lambda x: xp.squeeze(xp.expand_dims(x(), axis=1), axis=1)),
    "stack": (lambda x: xp.stack([x(), x()], axis="feat"), lambda x: xp.stack([x(), x()], axis=1)),
    "std": (lambda x: xp.std(x(), axis="feat"), lambda x: xp.std(x(), axis=1)),
    "sum": (lambda x: xp.sum(x(), axis=("batch", "time")), lambda x: xp.sum(x(), axis=(0, 2))),
    "take": (lambda x: xp.take(x(), _idx([2, 0]), axis="feat"), lambda x: xp.take(x(), _idx([2, 0]), axis=1)),
    "take_along_axis": (lambda x: xp.take_along_axis(x(), _idx(np.zeros((2, 3, 2), int)), axis="time"),
                        lambda x: xp.take_along_axis(x(), _idx(np.zeros((2, 3, 2), int)), axis=2)),
    "tensordot": (lambda x: xp.tensordot(x(), x(A[0], ("feat", "time")), axes=(("feat", "time"), ("feat", "time"))),
                  lambda x: xp.tensordot(x(), x(A[0]), axes=((1, 2), (0, 1)))),
    "unstack": (lambda x: xp.unstack(x(), axis="feat"), lambda x: xp.unstack(x(), axis=1)),
    "var": (lambda x: xp.var(x(), axis="feat"), lambda x: xp.var(x(), axis=1)),
    "vecdot": (lambda x: xp.vecdot(x(), x(), axis="feat"), lambda x: xp.vecdot(x(), x(), axis=1)),
    "linalg.cross": (lambda x: xp.linalg.cross(x(C3, NAMES), x(C3, NAMES), axis="time"),
                     lambda x: xp.linalg.cross(x(C3), x(C3), axis=2)),
    "linalg.tensordot": (lambda x: xp.linalg.tensordot(x(), x(A[0], ("feat", "time")),
                                                       axes=(("feat", "time"), ("feat", "time"))),
                         lambda x: xp.linalg.tensordot(x(), x(A[0]), axes=((1, 2), (0, 1)))),
    "linalg.vecdot": (lambda x: xp.linalg.vecdot(x(), x(), axis="time"),
                      lambda x: xp.linalg.vecdot(x(), x(), axis=2)),
    "linalg.vector_norm": (lambda x: xp.linalg.vector_norm(x(), axis="time"),
                           lambda x: xp.linalg.vector_norm(x(), axis=2)),
    "special.softmax": (lambda x: xp.special.softmax(x(), axis="time"),
                        lambda x: xp.special.softmax(x(), axis=2)),
    "special.log_softmax": (lambda x: xp.special.log_softmax(x(), axis="time"),
                            lambda x: xp.special.log_softmax(x(), axis=2)),
    "special.logsumexp": (lambda x: xp.special.logsumexp(x(), axis="time"),
                          lambda x: xp.special.logsumexp(x(), axis=2)),
}
for _name in ("fft", "ifft", "hfft"):
    CALLS[f"fft.{_name}"] = (
        lambda x, f=_name: getattr(xp.fft, f)(x(COMPLEX, NAMES), axis="feat"),
        lambda x, f=_name: getattr(xp.fft, f)(x(COMPLEX), axis=1))
for _name in ("rfft", "ihfft"):
    CALLS[f"fft.{_name}"] = (lambda x, f=_name: getattr(xp.fft, f)(x(), axis="feat"),
                             lambda x, f=_name: getattr(xp.fft, f)(x(), axis=1))
CALLS["fft.irfft"] = (lambda x: xp.fft.irfft(x(COMPLEX, NAMES), axis="feat"),
                      lambda x: xp.fft.irfft(x(COMPLEX), axis=1))
for _name in ("fftn", "ifftn", "irfftn"):
    CALLS[f"fft.{_name}"] = (
        lambda x, f=_name: getattr(xp.fft, f)(x(COMPLEX, NAMES), axes=("feat", "time")),
        lambda x, f=_name: getattr(xp.fft, f)(x(COMPLEX), axes=(1, 2)))
CALLS["fft.rfftn"] = (lambda x: xp.fft.rfftn(x(), axes=("feat", "time")),
                      lambda x: xp.fft.rfftn(x(), axes=(1, 2)))
for _name in ("fftshift", "ifftshift"):
    CALLS[f"fft.{_name}"] = (lambda x, f=_name: getattr(xp.fft, f)(x(), axes=("feat",)),
                             lambda x, f=_name: getattr(xp.fft, f)(x(), axes=(1,)))

AXIS_PARAMETERS = {"axis", "axes", "source", "destination"}


def _axis_taking_functions():
    found = []
    for module, prefix in ((xp, ""), (xp.linalg, "linalg."), (xp.fft, "fft."),
                           (xp.special, "special.")):
        for name in sorted(dir(module)):
            fn = getattr(module, name)
            if name.startswith("_") or not inspect.isfunction(fn):
                continue
            if not fn.__module__.startswith("tlaloc") or fn.__module__ == "tlaloc._api._core":
                continue   # helpers imported into the module, not its functions
            try:
                parameters = inspect.signature(fn).parameters
            except (TypeError, ValueError):
                continue
            if AXIS_PARAMETERS & set(parameters):
                found.append(prefix + name)
    return found


# Axis-taking functions whose names are covered where they can run: the collectives only
# inside a shard_map on a mesh of several devices, and vmap's `axis` is the name it maps.
COVERED_ELSEWHERE = {
    "all_gather": "tests/test_sharding.py (axis='batch', axis='b' on 4 CPU devices)",
    "psum_scatter": "tests/test_sharding.py (axis='h', axis='feat' on 4 CPU devices)",
    "vmap": "tests/test_vmap.py (vmap(f, axis='batch'))",
}


def test_every_axis_taking_function_has_named_axis_coverage():
    missing = sorted(set(_axis_taking_functions()) - set(CALLS) - set(COVERED_ELSEWHERE))
    assert not missing, f"axis-taking functions without named-axis coverage: {missing}"


def _values(result):
    if isinstance(result, (tuple, list)):
        return [np.asarray(r) for r in result]
    return [np.asarray(result)]


@pytest.mark.parametrize("name", sorted(CALLS))
def test_axis_names_give_the_positional_result(name):
    by_name, by_position = CALLS[name]
    for a, b in zip(_values(by_name(named)), _values(by_position(plain))):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_unknown_axis_name_names_the_function_and_the_name():
    with pytest.raises(ValueError, match=r"sort: .*'nope'"):
        xp.sort(named(), axis="nope")
    with pytest.raises(ValueError, match=r"take: .*'nope'"):
        xp.take(named(), _idx([0]), axis="nope")
    with pytest.raises(TypeError, match="sum"):
        xp.sum(named(), axis=1.5)


def test_tile_and_take_keep_names():
    x = xp.asarray(np.arange(6.0).reshape(2, 3), names=("batch", "feat"))
    i = _idx([2, 0])
    assert xp.tile(x, (2, 1)).names == ("batch", "feat")
    assert xp.tile(x, (2, 1, 1)).names == (None, "batch", "feat")
    assert xp.take(x, _idx([1, 0]), axis=0).names == ("batch", "feat")
    out = xp.take(x, i, axis="feat")
    assert out.names == ("batch", "feat")
    np.testing.assert_array_equal(np.asarray(out), np.arange(6.0).reshape(2, 3)[:, [2, 0]])


def test_names_survive_operators_and_structure():
    x = named()
    assert (x * 2 + 1).names == NAMES
    assert (-x).names == NAMES and abs(x).names == NAMES
    assert (1.0 - x).names == NAMES
    assert (x > 0).names == NAMES
    assert xp.reshape(x, (2, 3, 2, 2)).names == ("batch", "feat", None, None)
    assert xp.permute_dims(x, (2, 0, 1)).names == ("time", "batch", "feat")
    w = xp.ones((4, 5), names=("time", "hidden"))
    assert (x @ w).names == ("batch", "feat", "hidden")
    assert xp.sum(x, axis="feat").names == ("batch", "time")
    assert x[:, 0].names == ("batch", "time")
    assert x[0, 1:].names == ("feat", "time")
    y = xp.asarray(A, names=NAMES)
    y[0] = 1.0
    assert y.names == NAMES
    y += 1
    assert y.names == NAMES
    assert xp.concat([x, x], axis="time").names == NAMES
    assert xp.stack([x, x], axis=0).names == (None,) + NAMES


def test_names_survive_grad_and_jit():
    x = named()
    g = xp.grad(lambda a: xp.sum(xp.sin(a) * 2))(x)
    assert g.names == NAMES
    f = xp.jit(lambda a: xp.sin(a) + 1)
    assert f(x).names == NAMES
    assert f(x).names == NAMES
    assert xp.jit(lambda a: xp.mean(a, axis="feat"))(x).names == ("batch", "time")


def test_names_conflicts_raise_naming_the_function():
    x = named()
    other = xp.asarray(A, names=("batch", "time", "feat"))
    with pytest.raises(ValueError, match="subtract: axis names"):
        x - other


def test_named_program_shares_the_unnamed_executable():
    a = RNG.normal(size=(3, 5))
    b = RNG.normal(size=(3, 5))

    def program(u, v):
        return xp.sum(xp.exp(u) * v + xp.sin(u), axis=1)

    for _ in range(3):   # the unnamed program, compiled (the tiered mode compiles aside)
        xp.eval(program(xp.asarray(a), xp.asarray(b)))
        xp.wait_for_compiles()
    before = xp.cache_info()
    out = program(xp.asarray(a, names=("row", "col")), xp.asarray(b, names=("row", "col")))
    assert out.names == ("row",)
    xp.eval(out)
    after = xp.cache_info()
    assert after["misses"] == before["misses"], (before, after)   # no new program
    renamed = program(xp.rename(xp.asarray(a), "r", "c"), xp.asarray(b))
    xp.eval(renamed)
    assert renamed.names == ("r",)
    np.testing.assert_allclose(np.asarray(renamed), np.asarray(out))


def test_jit_on_named_arguments_shares_the_unnamed_executable():
    """Traced arguments carry their names in the abstract value (no rename node), so the
    compiled program is the one the unnamed arguments use."""
    f = xp.jit(lambda u, v: xp.sum(u * v + 1.0, axis=0))
    a, b = RNG.normal(size=(4, 6)), RNG.normal(size=(4, 6))
    xp.eval(f(xp.asarray(a), xp.asarray(b)))
    before = xp.cache_info()
    out = f(xp.asarray(a, names=("row", "col")), xp.asarray(b))
    assert out.names == ("col",)
    xp.eval(out)
    assert xp.cache_info()["compiles"] == before["compiles"]
    assert xp.cache_info()["misses"] == before["misses"]


def test_random_axis_arguments_take_names():
    key = xp.random.key(3)
    logits = xp.asarray(RNG.normal(size=(3, 5)), names=("batch", "class"))
    by_name = xp.random.categorical(key, logits, axis="class")
    assert by_name.names == ("batch",)
    np.testing.assert_array_equal(np.asarray(by_name),
                                  np.asarray(xp.random.categorical(key, logits, axis=1)))
    x = xp.asarray(np.arange(12.0).reshape(3, 4), names=("r", "c"))
    p = xp.random.permutation(key, x, axis="c")
    assert p.names == ("r", "c")
    np.testing.assert_array_equal(np.asarray(p), np.asarray(xp.random.permutation(key, x, axis=1)))
    with pytest.raises(ValueError, match="permutation: axis: the array has no axis named 'z'"):
        xp.random.permutation(key, x, axis="z")
