"""Hypothesis profiles and the backend fixture of the conformance suite.

The suite draws a bounded number of examples per table entry so that it fits a CI budget:
10 by default (the "ci" profile, about a minute per 100 entries and backend on 2 cores), 200
with TLALOC_HYPOTHESIS_PROFILE=deep; TLALOC_CONFORMANCE_EXAMPLES=N overrides both.
"""
import os

import array_api_strict
import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, settings

import tlaloc as xp

_PROFILE = os.environ.get("TLALOC_HYPOTHESIS_PROFILE", "ci")
EXAMPLES = int(os.environ.get("TLALOC_CONFORMANCE_EXAMPLES", 200 if _PROFILE == "deep" else 10))

# CI draws the same examples on every run (derandomize): a red build is a regression, not a
# new draw; the deep profile explores.
settings.register_profile(
    "conformance", max_examples=EXAMPLES, deadline=None, database=None,
    derandomize=_PROFILE != "deep",
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                           HealthCheck.filter_too_much, HealthCheck.function_scoped_fixture])
CONFORMANCE_SETTINGS = settings.get_profile("conformance")

array_api_strict.set_array_api_strict_flags(api_version="2025.12")

BACKENDS = ["compiled", "interpreter"]


@pytest.fixture(params=BACKENDS)
def backend(request):
    """The device a test's arrays live on: "compiled" is PJRT CPU forced to compile every
    program with XLA; "interpreter" is the NumPy reference interpreter device."""
    saved = {k: getattr(xp.config, k) for k in vars(xp.config)}
    if request.param == "compiled":
        xp.config.update(execution="compiled", default_device="cpu")
        dev = xp.device("cpu")
    else:
        xp.config.update(default_device="interpreter")
        dev = xp.device("interpreter")
    old = np.seterr(all="ignore")
    yield dev
    np.seterr(**old)
    xp.config.update(**saved)
