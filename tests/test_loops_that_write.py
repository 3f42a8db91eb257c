"""Loops that write into arrays (issue 20, part 3): each value is computed once, and a
repeating loop body reaches one cached program per group of iterations, whatever triggers
the evaluations. Counted through tlaloc.profile (the ops of every program run) and
cache_info (programs and structures), never timed; values compared with NumPy."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import tlaloc as xp


def _stencil_step(u):
    u[1:-1, 1:-1] = u[1:-1, 1:-1] + 0.2 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2]
                                           + u[1:-1, 2:] - 4 * u[1:-1, 1:-1])


def _grid(n=12):
    return np.random.default_rng(0).random((n, n))


def _numpy_stencil(steps, n=12):
    u = _grid(n)
    for _ in range(steps):
        _stencil_step(u)
    return u


def _settle():
    """Compute the pending arrays earlier tests left alive (in reference cycles not yet
    collected, say): the first cut would compute them too, and their ops would count as
    the loop's."""
    import gc
    from tlaloc import _graph
    gc.collect()
    left = [a._node for r in _graph._owners.refs if (a := r()) is not None and a._node.value is None]
    for node in left:
        try:
            _graph.evaluate([node])
        except (_graph.ConcretizationError, _graph.DonatedArrayError):
            pass    # a traced or donated array: no cut can compute it either


def _run(steps, device, read_every=0):
    """The stencil on tlaloc, reading one element every `read_every` steps (0: never: the
    depth bound's cuts are then the only evaluations before the final read). Returns the
    result and the ops of every program the profile saw."""
    _settle()
    u = xp.asarray(_grid(), device=device)
    with xp.profile() as prof:
        for k in range(steps):
            _stencil_step(u)
            if read_every and k % read_every == read_every - 1:
                float(u[3, 4])
        result = np.asarray(u)
    ops = [run.ops for ev in prof.evaluations for run in ev.programs]
    return result, ops


def _ops_per_step(device):
    u = xp.asarray(_grid(), device=device)
    xp.eval(u)
    _stencil_step(u)
    with xp.profile() as prof:
        xp.eval(u)
    return sum(run.ops for ev in prof.evaluations for run in ev.programs)


@pytest.mark.parametrize("read_every", [0, 1, 7])
def test_stencil_computes_each_value_once(lazy, tier, read_every):
    """History used to be recomputed by every cut (the array a loop writes into lost its
    owner to setitem's temporary result, so no cut computed it): 80 steps executed ~66
    steps of history per evaluation, quadratic in the step count."""
    xp.config.update(max_pending=48)
    steps = 60
    result, ops = _run(steps, tier, read_every)
    np.testing.assert_allclose(result, _numpy_stencil(steps), rtol=1e-12, atol=0)
    per_step = _ops_per_step(tier)
    # a read adds its own slice (and the cut's programs may return a few temporaries)
    reads = steps // read_every if read_every else 0
    assert sum(ops) <= steps * per_step + 2 * reads + per_step, (sum(ops), per_step, ops)


@pytest.mark.parametrize("read_every", [0, 7])
def test_stencil_reaches_one_cached_program_per_group_of_steps(read_every):
    """Compiled: the programs between evaluations repeat, so a long loop makes a handful
    of structures (the first group, the repeating one, the tail), not one per group."""
    xp.config.update(execution="compiled", compile_cache_dir="", max_pending=48)
    xp.reset_cache_info()
    result, ops = _run(120, xp.device("cpu"), read_every)
    np.testing.assert_allclose(result, _numpy_stencil(120), rtol=1e-12, atol=0)
    info = xp.cache_info()
    structures = info["compiles"] + info["disk_hits"]
    assert structures <= 4, info
    assert info["hits"] >= len(ops) - structures - 1, (info, ops)


def test_in_place_operators_keep_the_value_a_loop_goes_on_with(tier):
    """`x += y` rebinds x to a temporary result's node, as `x[i] = v` does: the cuts must
    compute it (owned by x), not recompute the chain behind it."""
    xp.config.update(max_pending=32)
    x = xp.asarray(np.linspace(0.0, 1.0, 6), device=tier)
    expected = np.linspace(0.0, 1.0, 6)
    with xp.profile() as prof:
        for _ in range(100):
            x *= 0.5
            x += 1.0
            expected *= 0.5
            expected += 1.0
        result = np.asarray(x)
    np.testing.assert_allclose(result, expected, rtol=1e-12)
    ops = sum(run.ops for ev in prof.evaluations for run in ev.programs)
    assert ops <= 2 * 100 + 10, ops


# A box written at fixed starts that covers most of its array (of 2^14 elements or more) is
# emitted as the update concatenated with the array around it (a new array in one loop),
# anything else as an in-place dynamic_update_slice: both must write exactly NumPy's values.
_BOXES = [
    ((20000,), (slice(1, None),)),                     # most of a vector
    ((9,), (slice(1, None),)),                         # ... a small one: in place
    ((20000,), (slice(2, 5000),)),                     # a quarter: in place
    ((130, 130), (slice(1, -1), slice(1, -1))),        # a stencil's interior
    ((6, 7), (slice(1, -1), slice(1, -1))),            # ... a small one
    ((131, 129), (slice(0, 130), slice(2, 129))),      # touching two edges
    ((130, 130), (2,)),                                # a row at a run-time position
    ((3, 100, 100), (slice(None), slice(1, 99), slice(0, 99))),
    ((130, 130), (slice(None), slice(None))),          # all of it
]


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "uint8", "bool", "complex64"])
@pytest.mark.parametrize("shape, key", _BOXES, ids=[str(b) for b in range(len(_BOXES))])
def test_box_writes_match_numpy_on_every_tier(tier, dtype, shape, key):
    rng = np.random.default_rng(3)
    a = (rng.random(shape) * 10).astype(dtype)
    v = (rng.random(a[key].shape) * 10 + 1).astype(dtype)
    x = xp.asarray(a, device=tier) * xp.ones_like(xp.asarray(a, device=tier))   # pending
    x[key] = xp.asarray(v, device=tier)
    x[key] = x[key] + xp.asarray(v, device=tier)      # reads the box it writes
    ref = a.copy()
    ref[key] = v
    ref[key] = ref[key] + v
    np.testing.assert_array_equal(np.asarray(x), ref)


def test_a_stencil_chain_matches_numpy_compiled():
    xp.config.update(execution="compiled")
    try:
        for n in (20, 140):        # in place, and concatenated (the same box each step)
            u = xp.asarray(_grid(n))
            for _ in range(7):
                _stencil_step(u)
            np.testing.assert_array_equal(np.asarray(u), _numpy_stencil(7, n))
    finally:
        xp.config.update(execution="auto")


@pytest.mark.parametrize("execution", ["auto", "interpreted", "compiled"])
def test_a_large_box_write_keeps_its_fixed_starts_in_every_mode(execution):
    """The fixed starts of `u[1:-1, 1:-1] = ...` decide the write's form (concatenated for a
    large box), so they must stay constants of the program in every mode: the default mode
    computes small operations at once, constants included, and a computed constant that
    became a program input made XLA write the box in place, copying each slice it read."""
    xp.config.update(execution=execution)
    try:
        u = xp.asarray(_grid(140))
        xp.eval(u)
        _stencil_step(u)
        text = xp.stablehlo(u)
        assert "stablehlo.concatenate" in text and "dynamic_update_slice" not in text
        signature = next(line for line in text.splitlines() if "func.func" in line)
        assert "tensor<i64>" not in signature      # no start among the program's inputs
        np.testing.assert_array_equal(np.asarray(u), _numpy_stencil(1, 140))
    finally:
        xp.config.update(execution="auto")


def test_a_loops_box_writes_share_their_computed_starts():
    """In the default mode the starts are computed as they are recorded: the writes of a
    loop share one constant per start, which the program holds once."""
    u = xp.asarray(_grid(140))
    xp.eval(u)
    for _ in range(3):
        _stencil_step(u)
    text = xp.stablehlo(u)
    assert text.count("dense<1> : tensor<i64>") == 1
    assert text.count("stablehlo.concatenate") == 6
    np.testing.assert_array_equal(np.asarray(u), _numpy_stencil(3, 140))


def test_a_computed_scalar_constant_is_an_equation_of_the_program():
    """A 0-d constant computed at once (an operand of a later pending operation) is one of
    the program's equations, in its key with its value, not an input."""
    from tlaloc import _graph
    from tlaloc._prims import lax
    from tlaloc import _dtypes as dt
    x = xp.asarray(_grid(140)) * 1.0        # pending (larger than an operation run at once)
    dev = x.device
    c1 = lax.constant(shape=(), dtype=dt.float64, value=1.0, device=dev)
    c2 = lax.constant(shape=(), dtype=dt.float64, value=2.0, device=dev)
    assert c1.value is not None             # computed when recorded
    p1 = _graph._Plan([lax.add(x._node, c1)], dev)
    p2 = _graph._Plan([lax.add(x._node, c2)], dev)
    assert c1 in p1.nodes and c1 not in p1.leaves
    assert p1.key != p2.key                 # the value is part of the structure
    assert len(p1.leaves) == len(p2.leaves)


@st.composite
def _large_box_writes(draw):
    """A float64 array of 2^14 or more elements, and one to three writes of a box (most of
    the array, so each takes the concatenated form) whose value is computed from shifted
    windows of the array: the stencil's pattern, drawn."""
    ndim = draw(st.integers(1, 3))
    low_size = {1: 16384, 2: 128, 3: 26}[ndim]
    shape = tuple(draw(st.integers(low_size, low_size + 12)) for _ in range(ndim))
    writes = []
    for _ in range(draw(st.integers(1, 3))):
        box = []
        for n in shape:
            lo = draw(st.integers(0, 2))
            hi = n - draw(st.integers(0, 2))
            box.append((lo, hi))
        shifts = draw(st.lists(st.sampled_from([-1, 0, 1]), min_size=ndim, max_size=ndim))
        writes.append((tuple(box), tuple(shifts), draw(st.sampled_from([0.5, -2.0, 3.0]))))
    return shape, writes


def _apply_box_writes(x, writes, shape):
    """x[box] = x[box] * c + x[box shifted], in place, for each write (x NumPy or tlaloc)."""
    for box, shifts, c in writes:
        here = tuple(slice(lo, hi) for lo, hi in box)
        shifted = tuple(slice(max(lo + s, 0), max(lo + s, 0) + (hi - lo))
                        if max(lo + s, 0) + (hi - lo) <= n else slice(lo, hi)
                        for (lo, hi), s, n in zip(box, shifts, shape))
        x[here] = x[here] * c + x[shifted]
    return x


@given(_large_box_writes())
def test_large_box_writes_match_numpy_compiled(case):
    shape, writes = case
    a = np.random.default_rng(len(writes)).standard_normal(shape)
    xp.config.update(execution="compiled")
    try:
        got = _apply_box_writes(xp.asarray(a), writes, shape)
        np.testing.assert_array_equal(np.asarray(got), _apply_box_writes(a.copy(), writes, shape))
    finally:
        xp.config.update(execution="auto")
