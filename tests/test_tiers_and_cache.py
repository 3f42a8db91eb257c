"""Tiered execution and the persistent compile cache."""
import json
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tlaloc as xp

# these tests are about whole programs: every operation is recorded
pytestmark = pytest.mark.usefixtures("lazy")


def program(x):
    y = xp.sin(x) * 2.0 + xp.sqrt(xp.abs(x))
    return xp.sum(y * y, axis=0) / (1.0 + xp.max(y))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_every_tier_gives_the_same_numbers(dtype):
    data = np.random.default_rng(1).normal(size=(50, 7)).astype(dtype)
    results = {}
    for mode in ("interpreted", "compiled", "auto"):
        xp.config.update(execution=mode)
        results[mode] = np.asarray(program(xp.asarray(data)))
    results["interpreter device"] = np.asarray(program(xp.asarray(data, device="interpreter")))
    rtol = 1e-5 if dtype == "float32" else 1e-12
    for name, value in results.items():
        np.testing.assert_allclose(value, results["compiled"], rtol=rtol, err_msg=name)


def test_auto_tier_interprets_first_then_compiles_in_background(fixed_costs):
    # predictions that make one interpreted run worth a compile after the first
    fixed_costs(compile_seconds=1e-9, interpret_seconds=0.0)
    xp.config.update(execution="auto", compile_cache_dir="")
    xp.reset_cache_info()
    x = xp.asarray(np.linspace(0, 1, 9))
    first = np.asarray(program(x * 3.0))              # new structure: interpreted at once
    info = xp.cache_info()
    assert info["interpreted"] >= 1 and info["compiles"] == 0
    second = np.asarray(program(x * 3.0))             # repeat: compile starts in background
    xp.wait_for_compiles()
    third = np.asarray(program(x * 3.0))              # now the executable runs
    info = xp.cache_info()
    assert info["compiles"] == 1 and info["hits"] >= 1, info
    np.testing.assert_allclose(first, third, rtol=1e-12)
    np.testing.assert_allclose(second, third, rtol=1e-12)


def test_large_programs_compile_at_once(fixed_costs):
    fixed_costs()    # the priors: one interpreted run (~70M elements written) costs more than a compile
    xp.config.update(execution="auto", compile_cache_dir="")
    xp.reset_cache_info()
    x = xp.ones((3000, 3000), dtype=xp.float32)
    xp.eval(xp.exp(x) * 2.0 + xp.sin(x) - xp.cos(x) * x)
    info = xp.cache_info()
    assert info["compiles"] == 1 and info["interpreted"] == 0, info


def _loop_without_reads(steps):
    """Two independent chains growing by different depths per round (like a step counter
    beside an optimizer's state), never read inside the loop."""
    x = xp.asarray(np.linspace(0.0, 1.0, 8))
    v = xp.zeros(8)
    x_np, v_np = np.linspace(0.0, 1.0, 8), np.zeros(8)
    for _ in range(steps):
        v = v + 1.0
        x = xp.sin(x) * 0.9 + 0.1
        v_np = v_np + 1.0
        x_np = np.sin(x_np) * 0.9 + 0.1
    return (x, v), (x_np, v_np)


def test_depth_bound_cuts_repeat_so_a_loop_without_reads_compiles_once(fixed_costs):
    """The depth bound computes every held pending array at the same place of the loop body
    each time, so the programs between cuts repeat and reach the compiled tier."""
    fixed_costs(compile_seconds=1e-9, interpret_seconds=0.0)   # compile on the second sight
    xp.config.update(execution="auto", compile_cache_dir="", max_pending=40)
    _loop_without_reads(60)
    xp.wait_for_compiles()
    xp.reset_cache_info()
    (x, v), (x_np, v_np) = _loop_without_reads(200)
    xp.eval(x, v)
    info = xp.cache_info()
    assert info["hits"] >= 10 and info["misses"] <= 3, info   # the tail program may be new
    np.testing.assert_allclose(np.asarray(x), x_np, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(v), v_np, rtol=1e-12)


def test_depth_bound_keeps_no_array_alive_and_skips_unreadable_ones():
    import gc
    import weakref
    xp.config.update(max_pending=16)
    held = xp.asarray(np.ones(4)) * 2.0
    ref = weakref.ref(held)
    del held
    gc.collect()
    assert ref() is None
    # a held array whose input was donated cannot be computed: a cut leaves it to its reader
    x = xp.asarray(np.ones(4)) + 0.0
    xp.eval(x)
    stale = x * 3.0
    xp.jit(lambda a: a + 1.0, donate_argnums=0)(x)
    (y, _), (y_np, _) = _loop_without_reads(30)
    np.testing.assert_allclose(np.asarray(y), y_np, rtol=1e-12)
    with pytest.raises(xp.DonatedArrayError):
        np.asarray(stale)


def test_donating_a_scalar_spares_other_arrays_with_the_same_value():
    """0-d values share one device copy per value; a copy the table has since forgotten is
    still shared by the arrays that hold it. Donating one of them used to delete it under
    the others ("Buffer has been deleted or donated" when they were read again)."""
    xp.config.update(execution="compiled")
    x, y = xp.asarray(np.float64(1.0)), xp.asarray(np.float64(1.0))
    assert float(x + 1.0) == 2.0 and float(y + 2.0) == 3.0   # both hold the shared copy
    for k in range(100):                     # other values: the table forgets that copy
        float(xp.asarray(np.float64(k + 10.5)) * 1.0)
    assert float(xp.jit(lambda a: a * 3.0, donate_argnums=0)(x)) == 3.0
    assert float(y + 2.0) == 3.0


def test_jit_traces_functions_deeper_than_the_bound():
    xp.config.update(max_pending=64)

    # 150 steps: 300 operations, far past the bound. (A fused chain of 250-1000 steps on a
    # 3-element array makes XLA:CPU's LLVM backend take tens of GB: docs/runtime-notes-cpu.md.)
    @xp.jit
    def f(x):
        for _ in range(150):
            x = x * 1.001 + 0.01
        return x
    expected = np.ones(3)
    for _ in range(150):
        expected = expected * 1.001 + 0.01
    np.testing.assert_allclose(np.asarray(f(xp.ones(3))), expected, rtol=1e-12)


def test_config_rejects_unknown_modes():
    with pytest.raises(ValueError):
        xp.config.update(execution="sometimes")
    with pytest.raises(TypeError):
        xp.config.update(no_such_setting=1)


_CHILD = textwrap.dedent("""
    import json, sys
    import tlaloc as xp
    xp.config.update(execution="compiled")
    x = xp.reshape(xp.arange(12.0), (3, 4))
    y = xp.sum(xp.tanh(x @ xp.matrix_transpose(x)) * 1.5, axis=1)
    value = [float(v) for v in y.tolist()]
    print(json.dumps({"value": value, "info": xp.cache_info()}))
""")


def _run_child(cache_dir):
    env = dict(os.environ, TLALOC_CACHE_DIR=str(cache_dir))
    out = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_second_process_loads_executables_from_disk(tmp_path):
    cold = _run_child(tmp_path)
    warm = _run_child(tmp_path)
    assert cold["info"]["compiles"] == 1 and cold["info"]["disk_hits"] == 0
    assert warm["info"]["compiles"] == 0 and warm["info"]["disk_hits"] == 1
    assert warm["value"] == cold["value"]


def test_corrupt_entries_are_ignored(tmp_path):
    _run_child(tmp_path)
    entries = list(pathlib.Path(tmp_path).rglob("*.bin"))
    assert entries
    for i, path in enumerate(entries):
        data = path.read_bytes()
        # truncated, bit-flipped payload, and garbage
        path.write_bytes([data[: len(data) // 2], data[:-1] + bytes([data[-1] ^ 0xFF]), b"junk"][i % 3])
    again = _run_child(tmp_path)
    assert again["info"]["compiles"] == 1 and again["info"]["disk_hits"] == 0
    fixed = _run_child(tmp_path)            # the recompiled entry replaced the corrupt one
    assert fixed["info"]["disk_hits"] == 1


def test_concurrent_processes_share_the_cache(tmp_path):
    env = dict(os.environ, TLALOC_CACHE_DIR=str(tmp_path))
    procs = [subprocess.Popen([sys.executable, "-c", _CHILD], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(3)]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=180)
        assert p.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    assert len({json.dumps(r["value"]) for r in results}) == 1
    assert not list(pathlib.Path(tmp_path).rglob(".tmp-*"))
    assert _run_child(tmp_path)["info"]["disk_hits"] == 1


def test_unwritable_cache_dir_only_costs_a_recompile(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    xp.config.update(execution="compiled", compile_cache_dir=str(blocker / "cache"))
    x = xp.asarray([1.0, 2.0])
    np.testing.assert_allclose(np.asarray(xp.exp(x) + 41.5), np.exp([1.0, 2.0]) + 41.5)


@pytest.mark.parametrize("device", ["interpreter", "cpu"])
def test_interpreter_frees_each_intermediate_after_its_last_use(device):
    """A 30-op chain on an 8 MB array peaks at a few arrays' worth of memory in the NumPy
    tier, as the same NumPy code does, not at one array per operation."""
    import tracemalloc
    xp.config.update(execution="interpreted" if device == "cpu" else "auto")
    a = np.linspace(0.0, 1.0, 1_000_000)
    x = xp.asarray(a, device=device)
    y = x
    for k in range(30):
        y = y * 1.0001 + 0.5 if k % 2 else xp.sin(y)
    shared = y * 2.0     # an intermediate used twice, the second time by the last operation
    y = shared - xp.sqrt(xp.abs(shared))
    tracemalloc.start()
    try:
        value = np.asarray(y)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    expected = a
    for k in range(30):
        expected = expected * 1.0001 + 0.5 if k % 2 else np.sin(expected)
    expected = expected * 2.0 - np.sqrt(np.abs(expected * 2.0))
    np.testing.assert_allclose(value, expected, rtol=1e-12)
    assert peak < 6 * a.nbytes, f"peak {peak / a.nbytes:.1f} arrays"


@pytest.mark.parametrize("name", ["sqrt", "log", "exp", "sinh", "tanh", "abs"])
def test_depth_bound_leaves_a_primitive_formula_alone(tier, name):
    """A complex function's formula (_prims/formula.py) is traced on placeholders without
    values; with a bound below the formula's depth, the bound tried to compute them and
    raised ConcretizationError (found by tests/fuzz)."""
    xp.config.update(max_pending=3)
    z = np.array([3 + 4j, -1.5 - 0.25j], np.complex64)
    x = xp.asarray(z, device=tier)
    out = getattr(xp, name)(x + x)
    expected = {"abs": np.abs}.get(name, getattr(np, name))(z + z)
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-5)
