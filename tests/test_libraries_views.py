"""Library code that writes through views, on tlaloc arrays, compared with the same calls on
NumPy arrays: SciPy's oaconvolve adds each block's overlap into a view of its result
(`ret_overpart += overpart`), and scikit-learn's full-covariance GaussianMixture adds
reg_covar to each covariance's diagonal through a flattened view of a slice. Both gave wrong
answers silently before writes through views reached the base (docs/indexing.md, "Views").

SciPy and scikit-learn read SCIPY_ARRAY_API when SciPy is first imported, which the test
session may have done already, so the calls run in a subprocess started with it set
(`python tests/test_libraries_views.py`), which prints one JSON line per case.
"""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import traceback

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
DTYPES = ("float32", "float64")
# float32 results agree to rounding (the libraries' own FFT-size and summation order are
# the same; the last bits of an FFT differ between NumPy's pocketfft and XLA's)
TOLERANCE = {"float32": (2e-5, 2e-5), "float64": (1e-12, 1e-12)}


def _oaconvolve(m, dtype):
    import scipy.signal
    rng = np.random.default_rng(0)
    a = rng.standard_normal(64).astype(dtype)
    v = rng.standard_normal(7).astype(dtype)
    return {"full": scipy.signal.oaconvolve(m.asarray(a), m.asarray(v), mode="full")}


def _gaussian_mixture(m, dtype):
    import sklearn
    from sklearn.mixture import GaussianMixture
    sklearn.set_config(array_api_dispatch=True)
    rng = np.random.default_rng(1)
    X = np.concatenate([rng.standard_normal((30, 3)),
                        rng.standard_normal((30, 3)) @ np.diag([1.0, 0.5, 2.0]) + 4.0])
    gm = GaussianMixture(n_components=2, covariance_type="full", init_params="random_from_data",
                         random_state=0, max_iter=20).fit(m.asarray(X.astype(dtype)))
    return {"means_": gm.means_, "covariances_": gm.covariances_, "weights_": gm.weights_,
            "precisions_cholesky_": gm.precisions_cholesky_}


CASES = {"scipy.signal.oaconvolve": _oaconvolve,
         "sklearn.mixture.GaussianMixture full": _gaussian_mixture}


def _worker():
    """Run every case on NumPy and on tlaloc; print one JSON line per case and dtype."""
    import tlaloc
    np.seterr(all="ignore")
    for name, fn in CASES.items():
        for dtype in DTYPES:
            try:
                expected, actual = fn(np, dtype), fn(tlaloc, dtype)
            except Exception:
                problems = [traceback.format_exc()]
                expected = {}
            else:
                problems = []
            for key, e in expected.items():
                a = actual[key]
                if not isinstance(a, tlaloc.Array):
                    problems.append(f"{key}: {type(a).__name__}, not a tlaloc array")
                a_np = np.asarray(a)
                if a_np.dtype != e.dtype or a_np.shape != e.shape:
                    problems.append(f"{key}: {a_np.dtype}{a_np.shape} != {e.dtype}{e.shape}")
                    continue
                rtol, atol = TOLERANCE[dtype]
                try:
                    np.testing.assert_allclose(a_np, e, rtol=rtol, atol=atol)
                except AssertionError as err:
                    problems.append(f"{key}: {err}")
            print(json.dumps({"case": name, "dtype": dtype, "problems": problems}))


@pytest.fixture(scope="module")
def results():
    pytest.importorskip("scipy")
    pytest.importorskip("sklearn")
    env = dict(os.environ, SCIPY_ARRAY_API="1")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    proc = subprocess.run([sys.executable, __file__], env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, f"the worker failed:\n{proc.stdout}\n{proc.stderr}"
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    return {(r["case"], r["dtype"]): r["problems"] for r in lines}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(CASES))
def test_library_writes_through_views(results, name, dtype):
    assert (name, dtype) in results, "the worker did not run this case"
    problems = results[(name, dtype)]
    assert not problems, "\n".join(problems)


if __name__ == "__main__":
    _worker()
