"""hypothesis.extra.array_api on tlaloc: its strategies build tlaloc arrays (with full, where,
isnan, unique_values, ... of the namespace), dtypes, shapes and indices; each draw is checked
against NumPy on the same values, in float32 and float64, on both backends."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from hypothesis.extra.array_api import make_strategies_namespace

import tlaloc as xp

from helpers import assert_matches

xps = make_strategies_namespace(xp)
FLOATS = st.sampled_from([xp.float32, xp.float64])
SHAPES = xps.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)


@pytest.fixture(params=["cpu", "interpreter"])
def default_device(request):
    """The strategies create arrays on the default device: set it for the test."""
    previous = xp.config.update(default_device=request.param)
    yield xp.device(request.param)
    xp.config.update(**previous)


FLOAT_ARRAYS = xps.arrays(FLOATS, SHAPES, elements={"allow_nan": True, "allow_subnormal": False})
# the fixture sets the default device once for all of a test's examples, which is what it means
same_device = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])


@same_device
@given(data=st.data())
def test_arrays_are_tlaloc_arrays_with_the_drawn_dtype_and_shape(default_device, data):
    dtype = data.draw(FLOATS)
    shape = data.draw(SHAPES)
    x = data.draw(xps.arrays(dtype, shape, unique=data.draw(st.booleans())))
    assert isinstance(x, xp.Array) and x.dtype is dtype and x.shape == shape
    assert x.device == default_device


@same_device
@given(data=st.data())
def test_operations_on_drawn_arrays_match_numpy(default_device, data):
    x = data.draw(FLOAT_ARRAYS)
    a = np.asarray(x)
    assert_matches(xp.sort(xp.reshape(x, (-1,))), np.sort(a.reshape(-1)))
    assert_matches(xp.where(xp.isnan(x), 0.0, x), np.where(np.isnan(a), a.dtype.type(0), a))
    if x.size:
        with np.errstate(all="ignore"):
            assert_matches(xp.max(x), np.max(a))
            assert_matches(xp.exp(x), np.exp(a))


@same_device
@given(data=st.data())
def test_drawn_indices_match_numpy(default_device, data):
    x = data.draw(xps.arrays(FLOATS, xps.array_shapes(min_dims=1, max_dims=3, min_side=1)))
    key = data.draw(xps.indices(x.shape, allow_newaxis=True, allow_ellipsis=True))
    assert_matches(x[key], np.asarray(x)[key], exact=True)


@same_device
@given(data=st.data())
def test_broadcastable_shapes_broadcast_as_numpy(default_device, data):
    shape = data.draw(SHAPES)
    other = data.draw(xps.broadcastable_shapes(shape, min_dims=0, max_dims=3, min_side=0))
    x = data.draw(xps.arrays(FLOATS, shape))
    y = data.draw(xps.arrays(x.dtype, other))
    with np.errstate(all="ignore"):
        assert_matches(x + y, np.asarray(x) + np.asarray(y), exact=True)


@given(dtype=xps.scalar_dtypes())
def test_scalar_dtypes_are_tlaloc_dtypes(dtype):
    assert isinstance(dtype, xp.DType)
    assert xp.zeros((), dtype=dtype).dtype is dtype
