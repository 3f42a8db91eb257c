"""tlaloc.tree: the trees jit, grad, export and the control-flow functions take."""
import collections

import numpy as np
import pytest

import tlaloc as xp
from tlaloc import tree
from helpers import assert_matches

Params = collections.namedtuple("Params", ["w", "b"])


class Layer:
    """A user class made a tree: `scale` is static (aux), the arrays are children."""

    def __init__(self, weight, bias, scale):
        self.weight, self.bias, self.scale = weight, bias, scale


tree.register(Layer, lambda l: ((l.weight, l.bias), l.scale),
              lambda scale, children: Layer(*children, scale))


def _example():
    return {"layers": [Params(1.0, 2.0), Params(3.0, (4.0, None))], "step": 5}


def test_leaves_structure_flatten_unflatten():
    t = _example()
    assert tree.leaves(t) == [1.0, 2.0, 3.0, 4.0, 5]
    leaves, s = tree.flatten(t)
    assert s == tree.structure(t) and s.num_leaves == 5
    assert tree.unflatten(s, leaves) == t
    assert tree.unflatten(s, [x * 2 for x in leaves]) == {
        "layers": [Params(2.0, 4.0), Params(6.0, (8.0, None))], "step": 10}
    assert tree.paths(s) == ["['layers'][0].w", "['layers'][0].b", "['layers'][1].w",
                             "['layers'][1].b[0]", "['step']"]
    assert tree.leaves(t, is_leaf=lambda n: isinstance(n, Params))[0] == Params(1.0, 2.0)


def test_map_over_several_trees_like_an_adam_step():
    params = {"w": xp.ones((2, 2)), "b": [xp.zeros(2), xp.asarray(1.0)]}
    grads = tree.map(lambda p: p * 0 + 0.5, params)
    m = tree.map(xp.zeros_like, params)
    m = tree.map(lambda m, g: 0.9 * m + 0.1 * g, m, grads)
    new = tree.map(lambda p, m: p - 0.01 * m, params, m)
    assert tree.structure(new) == tree.structure(params)
    assert_matches(new["w"], np.full((2, 2), 1 - 0.0005))
    assert_matches(new["b"][1], 1 - 0.0005)
    with pytest.raises(ValueError, match="structure"):
        tree.map(lambda a, b: a, params, {"w": 1.0})
    with pytest.raises(TypeError, match="function"):
        tree.map(3, params)


def test_registered_class_round_trips_and_keeps_aux():
    layer = Layer(xp.ones(3), xp.zeros(3), scale=2)
    leaves, s = tree.flatten(layer)
    assert len(leaves) == 2 and "Layer" in repr(s)
    doubled = tree.map(lambda a: a * 2, layer)
    assert isinstance(doubled, Layer) and doubled.scale == 2
    assert_matches(doubled.weight, np.full(3, 2.0))
    assert tree.structure(Layer(1, 2, 3)) != tree.structure(Layer(1, 2, 4))   # aux differs
    with pytest.raises(ValueError, match="already"):
        tree.register(Layer, lambda l: ((), None), lambda a, c: None)
    with pytest.raises(TypeError, match="class"):
        tree.register(3, lambda l: ((), None), lambda a, c: None)


def test_the_same_trees_go_through_jit_grad_and_loops():
    layer = Layer(xp.asarray([1.0, 2.0]), xp.asarray([0.5, 0.5]), scale=3)

    def loss(l):
        return xp.sum((l.weight * l.scale + l.bias) ** 2)

    g = xp.grad(loss)(layer)
    assert isinstance(g, Layer)
    assert_matches(g.weight, 2 * (np.array([1.0, 2.0]) * 3 + 0.5) * 3)
    assert float(xp.jit(loss)(layer)) == pytest.approx(float(loss(layer)))
    out = xp.fori_loop(0, 2, lambda i, l: tree.map(lambda a: a + 1, l), layer)
    assert isinstance(out, Layer) and out.scale == 3
    assert_matches(out.bias, np.array([2.5, 2.5]))


def test_unflatten_checks_the_leaf_count():
    s = tree.structure((1, 2))
    with pytest.raises(ValueError, match="2 leaves"):
        tree.unflatten(s, [1])
    with pytest.raises(TypeError, match="Structure"):
        tree.unflatten((1, 2), [1, 2])


def test_export_refuses_registered_classes_at_export_time():
    layer = Layer(xp.ones(2), xp.zeros(2), scale=1)
    with pytest.raises(TypeError, match="Layer.*registered"):
        xp.export(lambda l: l.weight + l.bias)(layer)
