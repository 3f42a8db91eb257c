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


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: longer tests")
    np.seterr(all="ignore")
