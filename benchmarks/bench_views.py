"""Writes through views (docs/indexing.md, "Views"), in config execution "compiled", from
inputs to values on the host. Workloads, each written against a namespace `m` (tlaloc or
NumPy, in benchmarks/compare_views.py):

  * row_writes: `r = a[i]; r += 1.0` for each of the 64 rows of a 64 x 64 float32 array;
  * many_rows: `rows = list(a)` (256 live views of a 256 x 8 array), `r *= 2.0` through each;
  * covariances: scikit-learn's full-covariance update, per component k: cov[k] = a product,
    then reg added to its diagonal through `reshape(cov[k], (-1,))[:: n + 1]`; also under
    tlaloc.jit (the function writes into its argument).
"""
from __future__ import annotations

import numpy as np

import tlaloc as xp

try:
    from ._base import Configured
except ImportError:  # imported as a script's sibling (compare_views.py)
    from _base import Configured


def row_writes(m, a):
    for i in range(a.shape[0]):
        r = a[i]
        r += 1.0
    return a


def many_rows(m, a):
    rows = list(a)
    for r in rows:
        r *= 2.0
    return a


def covariances(m, cov, diff):
    n = cov.shape[1]
    for k in range(cov.shape[0]):
        cov[k, :, :] = (m.matrix_transpose(diff) @ diff) / (k + 1.0)
        flat = m.reshape(cov[k, :, :], (-1,))
        flat[:: n + 1] += 1e-6
    return cov


jit_covariances = xp.jit(lambda cov, diff: covariances(xp, cov, diff))


def inputs(m, name):
    """Fresh arguments of workload `name` for namespace `m` (the workloads write into them)."""
    rng = np.random.default_rng(0)
    if name == "row_writes":
        return (rng.standard_normal((64, 64)).astype(np.float32),)
    if name == "many_rows":
        return (rng.standard_normal((256, 8)).astype(np.float32),)
    return np.zeros((8, 16, 16)), rng.standard_normal((200, 16))


def arguments(m, name):
    return tuple(m.asarray(a) for a in inputs(m, name)) if m is xp else inputs(m, name)


WORKLOADS = {"row_writes": row_writes, "many_rows": many_rows, "covariances": covariances}


class WritesThroughViews(Configured):
    params = list(WORKLOADS) + ["covariances_jit"]
    param_names = ["workload"]

    def setup(self, workload):
        self.configure()
        self.name = "covariances" if workload == "covariances_jit" else workload
        self.run = (lambda *a: (jit_covariances(*a), a[0])[1]) if workload == "covariances_jit" \
            else (lambda *a: WORKLOADS[self.name](xp, *a))
        np.asarray(self.run(*arguments(xp, self.name)))   # compiles

    def time_to_host(self, workload):
        np.asarray(self.run(*arguments(xp, self.name)))
