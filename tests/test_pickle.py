"""Pickling tlaloc arrays (docs/interop.md, "Pickling and processes"): by value, with dtype,
device kind and axis names; in another process; through multiprocessing.Pool and
scikit-learn's n_jobs=2 (joblib's loky and threading backends); and the documented errors
under grad and jit. Every subprocess and pool has a bounded timeout and is reaped."""
import copy
import json
import multiprocessing
import os
import pathlib
import pickle
import subprocess
import sys

import numpy as np
import pytest

import tlaloc as xp

from helpers import assert_matches

ROOT = pathlib.Path(__file__).resolve().parent.parent
DTYPES = ["bool", "int8", "int32", "int64", "uint8", "uint64", "float16", "bfloat16",
          "float32", "float64", "complex64", "complex128"]


def _values(dtype, shape):
    data = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) - 2.5
    if dtype == "bool":
        return data > 0
    if dtype.startswith("complex"):
        data = data + 1j * (data + 0.5)
    elif dtype.startswith(("int", "uint")):
        data = np.abs(data) + 0.5
    return data.astype(getattr(xp, dtype).numpy)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 0, 3), (2, 3)])
def test_round_trip_keeps_value_dtype_and_device(tier, dtype, shape):
    host = _values(dtype, shape)
    x = xp.asarray(host, dtype=getattr(xp, dtype), device=tier)
    y = pickle.loads(pickle.dumps(x))
    assert type(y) is xp.Array and y.dtype is x.dtype and y.device == x.device
    assert_matches(y, np.asarray(x), exact=True)


def test_names_and_pending_values(tier):
    x = xp.rename(xp.reshape(xp.arange(6.0, device=tier), (2, 3)), ("batch", "feature"))
    pending = xp.sin(x) * 2          # recorded, not computed: pickling computes it
    y = pickle.loads(pickle.dumps(pending, protocol=pickle.HIGHEST_PROTOCOL))
    assert y.names == ("batch", "feature") and y.device == x.device
    assert_matches(y, np.sin(np.arange(6.0).reshape(2, 3)) * 2)
    # the unpickled array is a full citizen: it computes, and writes do not reach the original
    y[0, 0] = 100.0
    assert_matches(xp.sum(y, axis="feature"), np.array([100.0 + 2 * (np.sin(1) + np.sin(2)),
                                                       2 * np.sin([3, 4, 5]).sum()]))
    assert float(pending[0, 0]) == 0.0


def test_containers_and_copy():
    x, w = xp.asarray([1.0, 2.0]), xp.asarray([[3, 4]], dtype=xp.int16)
    state = pickle.loads(pickle.dumps({"x": x, "nested": [w, (x, 3)]}))
    assert_matches(state["nested"][0], np.asarray([[3, 4]], dtype=np.int16))
    assert_matches(state["nested"][1][0], np.asarray([1.0, 2.0]))
    # copy.copy / copy.deepcopy are lazy copies (no evaluation, so they work under jit)
    c, d = copy.copy(x + 1), copy.deepcopy(x + 1)
    assert c is not x and d is not x
    assert_matches(c, np.asarray([2.0, 3.0])) and assert_matches(d, np.asarray([2.0, 3.0]))
    assert_matches(xp.jit(lambda a: copy.deepcopy(a) * 2)(x), np.asarray([2.0, 4.0]))


def test_under_grad_raises_derivative_lost():
    constant = xp.asarray([1.0, 2.0])

    def loss(w):
        pickle.dumps(constant)               # no dependence on w: allowed
        with pytest.raises(xp.DerivativeLostError, match="pickle"):
            pickle.dumps(w * 2)
        return xp.sum(w ** 2)
    assert_matches(xp.grad(loss)(xp.asarray([1.0, 3.0])), np.asarray([2.0, 6.0]))


def test_under_jit_raises_concretization_error():
    def f(x):
        with pytest.raises(xp.ConcretizationError):
            pickle.dumps(x + 1)
        return x + 1
    assert_matches(xp.jit(f)(xp.ones(2)), np.full(2, 2.0))


_LOADER = """
import pickle, sys
import tlaloc as xp
x = pickle.loads(sys.stdin.buffer.read())
print(x.dtype.name, x.device.platform, x.names, x.shape, float(xp.sum(xp.astype(x, xp.float64))))
"""


@pytest.mark.parametrize("device", ["cpu", "interpreter"])
def test_unpickles_in_another_process(device):
    x = xp.rename(xp.asarray(np.arange(6).reshape(2, 3), dtype=xp.float32, device=device),
                  ("row", None))
    out = subprocess.run([sys.executable, "-c", _LOADER], input=pickle.dumps(x * 0.5),
                         capture_output=True, timeout=120, env=_env())
    assert out.returncode == 0, out.stderr.decode()
    assert out.stdout.decode().split() == ["float32", device, "('row',", "None)", "(2,", "3)",
                                           "7.5"]


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "tests"),
                                         env.get("PYTHONPATH", "")])
    return env


def _square_sum(x):
    """Runs in a pool worker: receives a tlaloc array, returns one."""
    return xp.sum(x * x, axis=-1)


@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])   # fork: Linux's default
def test_multiprocessing_pool(method):
    data = [xp.asarray(np.arange(4.0) + i) for i in range(4)]
    ctx = multiprocessing.get_context(method)
    pool = ctx.Pool(2)
    try:
        results = pool.map_async(_square_sum, data).get(timeout=180)
    finally:
        pool.terminate()
        pool.join()
    assert [type(r) for r in results] == [xp.Array] * 4
    for i, r in enumerate(results):
        assert_matches(r, np.sum((np.arange(4.0) + i) ** 2))
    assert multiprocessing.active_children() == []


_SKLEARN = """
import json
import numpy as np
import joblib, sklearn
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV
import tlaloc as xp

rng = np.random.default_rng(0)
X = rng.standard_normal((60, 4))
y = X @ np.array([1.0, -2.0, 0.5, 3.0]) + 0.1 * rng.standard_normal(60)

def search(m, **parallel):
    s = GridSearchCV(Ridge(solver="svd"), {"alpha": [0.1, 1.0, 10.0]}, cv=3, **parallel)
    s.fit(m.asarray(X), m.asarray(y))
    return {"alpha": s.best_params_["alpha"], "best": float(s.best_score_),
            "coef": np.asarray(s.best_estimator_.coef_).tolist(),
            "coef type": type(s.best_estimator_.coef_).__name__}

out = {"numpy": search(np)}                        # the reference, in this process
with sklearn.config_context(array_api_dispatch=True):
    for backend in ("loky", "threading"):
        with joblib.parallel_backend(backend, n_jobs=2):
            out[backend] = search(xp, n_jobs=2)    # the folds' arrays go to the workers
from joblib.externals.loky import get_reusable_executor
get_reusable_executor().shutdown(wait=True)      # reap the loky workers
print(json.dumps(out))
"""


def test_scikit_learn_n_jobs_on_loky_and_threading():
    pytest.importorskip("sklearn")
    env = dict(_env(), SCIPY_ARRAY_API="1")
    out = subprocess.run([sys.executable, "-c", _SKLEARN], capture_output=True, text=True,
                         timeout=400, env=env)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout.strip().splitlines()[-1])
    for backend in ("loky", "threading"):
        ours, ref = r[backend], r["numpy"]
        assert ours["coef type"] == "Array", ours
        assert ours["alpha"] == ref["alpha"]
        np.testing.assert_allclose(ours["best"], ref["best"], rtol=1e-10)
        np.testing.assert_allclose(ours["coef"], ref["coef"], rtol=1e-10)
