import os

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

import tlaloc as xp

# CI runs a bounded number of examples; TLALOC_HYPOTHESIS_PROFILE=deep runs many more.
settings.register_profile("ci", max_examples=25, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("deep", max_examples=500, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("TLALOC_HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(autouse=True)
def _restore_config():
    saved = {k: getattr(xp.config, k) for k in vars(xp.config)}
    yield
    xp.config.update(**saved)


# Every program runs through each tier: compiled by XLA on PJRT CPU, and the NumPy
# reference interpreter (as a device of its own).
TIERS = ["compiled", "interpreter"]


@pytest.fixture(params=TIERS)
def tier(request):
    """Selects where the test's arrays are computed; returns the device to create them on."""
    if request.param == "compiled":
        xp.config.update(execution="compiled")
        return xp.device("cpu")
    return xp.device("interpreter")


@pytest.fixture
def lazy():
    """Every operation of the test is recorded: none runs as it is recorded, as operations
    on small computed host arrays otherwise do (config.eager_max_size). For tests of
    pending arrays, programs and the tiers."""
    xp.config.update(eager_max_size=0)


@pytest.fixture
def fixed_costs():
    """Installs the tier policy's predictions on the CPU device: fixed_costs() the priors
    alone (no machine's measurements), fixed_costs(compile_seconds=, interpret_seconds=)
    fixed numbers; the device's own model comes back after the test."""
    from tlaloc.backends import tiers

    class Fixed(tiers.CostModel):
        def __init__(self, compile_seconds, interpret_seconds):
            super().__init__(None)
            self.fixed = (compile_seconds, interpret_seconds)

        def predict_compile(self, ops):
            return self.fixed[0]

        def predict_interpret(self, nodes):
            return self.fixed[1]

    backend = xp.device("cpu").backend
    saved = backend.costs

    def install(compile_seconds=None, interpret_seconds=None):
        backend.costs = (tiers.CostModel(None) if compile_seconds is None
                         else Fixed(compile_seconds, interpret_seconds))
        return backend.costs
    yield install
    backend.costs = saved


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: longer tests")
    np.seterr(all="ignore")
