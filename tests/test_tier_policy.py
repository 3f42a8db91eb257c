"""The tier policy of execution="auto" (issue 20, part 2; tlaloc/backends/tiers.py): its
decisions under injected cost predictions, its guarantee (within 2x of the better fixed
tier for any number of repetitions), the per-machine cost fits and their persistence, and
the start-up rule that a program the interpreter runs needs no jaxlib."""
import json
import os
import subprocess
import sys
import textwrap
import types

import numpy as np
import pytest
from hypothesis import given, strategies as st

import tlaloc as xp
from tlaloc.backends import tiers

# these tests are about whole programs: every operation is recorded
pytestmark = pytest.mark.usefixtures("lazy")


def _program(x):
    return xp.sum(xp.sin(x) * 2.0 + xp.sqrt(xp.abs(x)))


def _runs(n, size):
    """n runs of one structure (each test uses its own size: a structure another test
    compiled would be a cache hit here)."""
    data = np.linspace(-1.0, 1.0, size)
    x = xp.asarray(data)
    expected = np.sum(np.sin(data) * 2.0 + np.sqrt(np.abs(data)))
    for _ in range(n):
        np.testing.assert_allclose(float(_program(x)), expected, rtol=1e-12)


# ----------------------------------------------------------------------------- the guarantee

def _policy_total(n, interpret, compile_seconds, execute):
    """Seconds of n runs under the policy (compiling in the caller's thread, the worst
    case), with exact predictions."""
    spent, total = 0.0, 0.0
    compiled = False
    for _ in range(n):
        if not compiled and tiers.should_compile(spent, interpret, compile_seconds):
            compiled = True
            total += compile_seconds
        if compiled:
            total += execute
        else:
            spent += interpret
            total += interpret
    return total


@given(n=st.integers(1, 2000), interpret=st.floats(1e-6, 1.0),
       compile_seconds=st.floats(1e-3, 10.0), speedup=st.floats(1.0, 1e4))
def test_policy_is_within_twice_the_better_fixed_tier(n, interpret, compile_seconds, speedup):
    execute = interpret / speedup
    best = min(n * interpret, compile_seconds + n * execute)
    assert _policy_total(n, interpret, compile_seconds, execute) <= 2.0 * best * (1 + 1e-9)


def test_policy_compiles_once_interpreting_would_cost_a_compile():
    assert not tiers.should_compile(0.0, 0.01, 0.04)       # first sight, cheap run
    assert tiers.should_compile(0.0, 0.05, 0.04)           # first sight, one run costs more
    assert not tiers.should_compile(0.02, 0.01, 0.04)
    assert tiers.should_compile(0.03, 0.01, 0.04)          # the next run reaches the compile


# ----------------------------------------------------------------------------- decisions

def test_a_run_predicted_to_cost_more_than_a_compile_compiles_at_once(fixed_costs):
    fixed_costs(compile_seconds=0.01, interpret_seconds=1.0)
    xp.config.update(execution="auto", compile_cache_dir="")
    xp.reset_cache_info()
    _runs(3, 31)
    info = xp.cache_info()
    assert info["interpreted"] == 0 and info["compiled_at_once"] == 1, info
    assert info["compiles"] == 1 and info["hits"] == 2, info
    assert info["predicted_compile_seconds"] == pytest.approx(0.01)


def test_structures_that_never_pay_are_never_compiled(fixed_costs):
    fixed_costs(compile_seconds=1e6, interpret_seconds=1e-6)
    xp.config.update(execution="auto", compile_cache_dir="")
    xp.reset_cache_info()
    _runs(30, 32)
    info = xp.cache_info()
    assert info["interpreted"] == 30 and info["compiles"] == 0 and info["misses"] == 0, info
    assert info["interpret_seconds"] > 0


def test_compile_starts_when_interpreting_has_cost_a_compile(fixed_costs, monkeypatch):
    fixed_costs(compile_seconds=1e-9, interpret_seconds=0.0)  # the first measured run pays
    monkeypatch.setattr(tiers, "spare_core", lambda: True)    # in the background
    xp.config.update(execution="auto", compile_cache_dir="")
    xp.reset_cache_info()
    _runs(2, 33)
    xp.wait_for_compiles()
    _runs(1, 33)
    info = xp.cache_info()
    assert info["compiled_after_interpreting"] == 1 and info["compiled_at_once"] == 0, info
    assert info["interpreted"] == 2 and info["hits"] == 1 and info["compiles"] == 1, info


def test_without_a_spare_core_the_compile_runs_in_the_callers_thread(fixed_costs, monkeypatch):
    fixed_costs(compile_seconds=1e-9, interpret_seconds=0.0)
    monkeypatch.setattr(tiers, "spare_core", lambda: False)
    xp.config.update(execution="auto", compile_cache_dir="")
    xp.reset_cache_info()
    _runs(2, 35)        # no background thread: the second run compiles, then executes
    info = xp.cache_info()
    assert info["interpreted"] == 1 and info["compiles"] == 1, info


def test_spare_core_counts_the_cores_this_process_may_use_and_the_load(monkeypatch):
    monkeypatch.setattr(os, "getloadavg", lambda: (0.9, 0.0, 0.0))   # the caller alone
    monkeypatch.setattr(tiers, "usable_cores", lambda: 1)
    assert not tiers.spare_core()
    monkeypatch.setattr(tiers, "usable_cores", lambda: 2)
    assert tiers.spare_core()
    monkeypatch.setattr(os, "getloadavg", lambda: (3.5, 0.0, 0.0))   # others keep it busy
    assert not tiers.spare_core()
    monkeypatch.setattr(tiers, "usable_cores", lambda: 8)
    assert tiers.spare_core()


def test_forced_tiers_ignore_the_policy(fixed_costs):
    fixed_costs(compile_seconds=0.0, interpret_seconds=1.0)   # would compile at once
    xp.config.update(execution="interpreted", compile_cache_dir="")
    xp.reset_cache_info()
    _runs(3, 36)
    assert xp.cache_info()["compiles"] == 0
    fixed_costs(compile_seconds=1e6, interpret_seconds=0.0)   # would never compile
    xp.config.update(execution="compiled")
    _runs(1, 37)
    assert xp.cache_info()["compiles"] == 1


def test_the_forced_interpreter_interprets_a_structure_compiled_before(fixed_costs):
    # execution="interpreted" forces the tier: a structure compiled while another mode was
    # set still runs in the interpreter (tlaloc.jit's calls are compiled whatever the mode)
    xp.config.update(execution="compiled", compile_cache_dir="")
    _runs(1, 39)
    xp.config.update(execution="interpreted")
    xp.reset_cache_info()
    _runs(3, 39)
    info = xp.cache_info()
    assert (info["interpreted"], info["hits"], info["compiles"]) == (3, 0, 0)
    jitted = xp.jit(_program)
    x = xp.asarray(np.linspace(-1.0, 1.0, 39))
    float(jitted(x))
    float(jitted(x))
    assert xp.cache_info()["interpreted"] == 3


# ----------------------------------------------------------------------------- the cost fits

def _node(prim, shape):
    """What the cost model reads of a plan's node (its primitive's name, its shape)."""
    return types.SimpleNamespace(prim=types.SimpleNamespace(name=prim),
                                 aval=types.SimpleNamespace(shape=shape))


def test_fits_learn_this_machines_costs_from_the_priors():
    model = tiers.CostModel(None)
    assert model.predict_compile(10) == pytest.approx(0.04 + 10 * 0.001)
    nodes = [_node("sin", (10, 100)), _node("add", ())]
    assert model.predict_interpret(nodes) == pytest.approx(2 * 5e-6 + 1001 * 1.5e-9)
    for ops in range(0, 400, 8):                  # a slower compiler: 0.1 s + 2 ms per op
        model.observe_compile(ops, 0.1 + 0.002 * ops)
    for k in range(60):                           # per primitive: sin dearer than add
        n = 1000 * k
        model.observe_interpret([(_node("sin", ()).prim, _node("sin", (n,)).aval, 3e-6 + 8e-9 * n),
                                 (_node("add", ()).prim, _node("add", (n,)).aval, 1e-6 + 1e-9 * n)])
    assert model.predict_compile(300) == pytest.approx(0.1 + 0.6, rel=0.1)
    assert model.predict_interpret([_node("sin", (50_000,))]) == pytest.approx(
        3e-6 + 8e-9 * 50_000, rel=0.1)
    assert model.predict_interpret([_node("add", (50_000,))]) == pytest.approx(
        1e-6 + 1e-9 * 50_000, rel=0.1)
    # a primitive never measured is predicted from the prior
    assert model.predict_interpret([_node("cos", (1000,))]) == pytest.approx(5e-6 + 1.5e-6)


def test_a_settled_fit_samples_its_observations_and_predictions_follow_them():
    model = tiers.CostModel(None)
    sin = _node("sin", ()).prim

    def observe(k, per_element):
        for i in range(k):
            n = 2000 * (i % 50)
            model.observe_interpret([(sin, _node("sin", (n,)).aval, 2e-6 + per_element * n)])

    observe(400, 4e-9)
    fit = model.interpret["sin"]
    assert fit.settled() and fit.offered > 0          # past settling, one in eight is taken
    assert fit.sums[5] < 200 * (1 - tiers._FADE ** 400) - 1
    assert model.predict_interpret([_node("sin", (10_000,))]) == pytest.approx(
        2e-6 + 4e-9 * 10_000, rel=0.1)
    observe(4000, 12e-9)                               # the machine got slower: it follows
    assert model.predict_interpret([_node("sin", (10_000,))]) == pytest.approx(
        2e-6 + 12e-9 * 10_000, rel=0.1)


def test_a_structures_first_interpreted_run_measures_each_primitive(fixed_costs):
    model = fixed_costs()
    xp.config.update(execution="interpreted")
    _runs(3, 38)
    assert {"sin", "multiply", "abs", "sqrt", "add", "reduce_sum"} <= set(model.interpret), \
        sorted(model.interpret)
    assert model.changed == 1            # the first run only: later ones time the whole run


def test_fits_persist_per_machine_and_bad_files_fall_back_to_the_priors(tmp_path):
    path = tmp_path / "costs.json"
    model = tiers.CostModel(path)
    for ops in range(0, 200, 10):
        model.observe_compile(ops, 0.2 + 0.004 * ops)
    model.observe_interpret([(_node("exp", ()).prim, _node("exp", (4000,)).aval, 1e-3)] * 20)
    model.save()
    again = tiers.CostModel(path)
    assert again.predict_compile(100) == pytest.approx(model.predict_compile(100))
    exp_node = [_node("exp", (4000,))]
    assert again.predict_interpret(exp_node) == pytest.approx(model.predict_interpret(exp_node))
    assert json.loads(path.read_text())["compile"]
    path.write_text("{not json")
    assert tiers.CostModel(path).predict_compile(10) == pytest.approx(0.05)
    path.write_text(json.dumps({"compile": [float("nan")] * 6, "interpret": {}}))
    assert tiers.CostModel(path).predict_compile(10) == pytest.approx(0.05)
    path.write_text(json.dumps({"compile": [0.0] * 6, "interpret": {"exp": [1, 2]}}))
    assert tiers.CostModel(path).predict_interpret(exp_node) == pytest.approx(5e-6 + 6e-6)
    blocked = tmp_path / "file"
    blocked.write_text("")
    unwritable = tiers.CostModel(blocked / "costs.json")
    unwritable.observe_compile(1, 1.0)
    unwritable.save()          # a folder that cannot be made only loses the head start


def test_costs_live_in_the_disk_caches_folder(tmp_path):
    xp.config.update(compile_cache_dir=str(tmp_path))
    path = tiers.machine_costs_path("cpu")
    assert path.parent == tmp_path and path.name.startswith("costs-")
    assert tiers.machine_costs("cpu") is tiers.machine_costs("cpu")   # one per file
    assert tiers.machine_costs("cpu").path == path
    xp.config.update(compile_cache_dir="")
    assert tiers.machine_costs_path("cpu") is None


def test_operations_run_at_once_read_no_costs(tmp_path):
    """The cost model is read from the disk cache's folder by the first program that asks
    the tier policy, not by the device's first use: a script of small operations run as
    they are recorded never reads it."""
    code = textwrap.dedent("""
        import sys
        import numpy as np
        import tlaloc as xp
        from tlaloc.backends import tiers
        x = xp.asarray(np.arange(12.0).reshape(3, 4))
        value = float(xp.sum(xp.sin(x) - xp.mean(x, axis=1, keepdims=True)))
        before = len(tiers._shared)
        xp.config.update(eager_max_size=0)
        float(xp.sum(xp.cos(x) * 2.0))              # a program: the policy is asked
        print(before, len(tiers._shared))
    """)
    env = dict(os.environ, TLALOC_CACHE_DIR=str(tmp_path), TLALOC_EXECUTION="auto")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0", "1"]


# ----------------------------------------------------------------------------- start-up

_START = textwrap.dedent("""
    import json, sys
    import tlaloc as xp
    after_import = "jaxlib" in sys.modules
    optional = ["tlaloc.linalg", "tlaloc.fft", "tlaloc.special", "tlaloc._profile",
                "tlaloc._explain", "tlaloc.autodiff", "tlaloc.random", "tlaloc._jit",
                "tlaloc._vmap", "tlaloc._export", "tlaloc._dynamic", "tlaloc.control_flow",
                "tlaloc._sharding", "tlaloc._collectives", "tlaloc.distributed", "tlaloc.tree",
                "ml_dtypes"]
    loaded_at_import = [m for m in optional if m in sys.modules]
    from tlaloc import profile                     # first use imports them
    assert callable(profile) and callable(xp.linalg.inv) and "special" in dir(xp)
    x = xp.asarray([1.0, 2.0, 3.0])
    value = float(xp.sum(xp.sin(x) * 2.0))
    xp.eval(xp.cos(x), x * 2.0)                 # eval waits for values: host ones need no jaxlib
    repr(xp.exp(x))
    after_interpreted = "jaxlib" in sys.modules
    xp.config.update(execution="compiled")
    value2 = float(xp.sum(xp.cos(x) * 2.0))
    print(json.dumps([after_import, after_interpreted, "jaxlib" in sys.modules, value, value2,
                      loaded_at_import]))
""")


def test_start_up_imports_neither_jaxlib_nor_the_optional_modules(tmp_path):
    """`import tlaloc` and an interpreted first evaluation need no jaxlib (the PJRT client
    is made by the first compile or transfer), and the extensions, profiling and
    explanations are imported on first use."""
    env = dict(os.environ, TLALOC_CACHE_DIR=str(tmp_path), TLALOC_EXECUTION="auto")
    out = subprocess.run([sys.executable, "-c", _START], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    after_import, after_interpreted, after_compiled, value, value2, loaded = json.loads(
        out.stdout.strip().splitlines()[-1])
    assert (after_import, after_interpreted, after_compiled) == (False, False, True), \
        "jaxlib was imported before a program needed it (import it inside the functions)"
    assert loaded == [], f"imported by `import tlaloc`, though optional: {loaded}"
    assert value == pytest.approx(float(np.sum(np.sin([1.0, 2.0, 3.0]) * 2.0)), rel=1e-12)
    assert value2 == pytest.approx(float(np.sum(np.cos([1.0, 2.0, 3.0]) * 2.0)), rel=1e-12)


_EVERY_DEFERRED_NAME = textwrap.dedent("""
    import tlaloc as xp
    from tlaloc import grad, jit, tree, process_count     # from-imports find them too
    names = sorted(xp._ON_FIRST_USE)
    assert set(names) <= set(dir(xp))
    found = {n: getattr(xp, n) for n in names}
    assert found["grad"] is grad and found["jit"] is jit and found["tree"] is tree
    assert found["process_count"] is xp.distributed.process_count is process_count
    assert xp.grad(lambda x: (x * x).sum())(xp.asarray([1.0, 2.0])).tolist() == [2.0, 4.0]
    print(len(names))
""")


def test_every_name_imported_on_first_use_is_found(tmp_path):
    """Each subsystem `import tlaloc` leaves out (derivatives, jit, vmap, export, control
    flow, sharding, the extensions) is there at its first use, by attribute or by
    `from tlaloc import`."""
    env = dict(os.environ, TLALOC_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", _EVERY_DEFERRED_NAME], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.split()[-1]) > 40


_BFLOAT16_FROM_THE_CALLER = textwrap.dedent("""
    import numpy as np, ml_dtypes
    import tlaloc as xp
    host = np.array([1.5, -2.0, 3.0], dtype=ml_dtypes.bfloat16)
    x = xp.asarray(host)                    # before tlaloc has asked for ml_dtypes itself
    assert x.dtype is xp.bfloat16 and xp.from_dlpack(np.zeros(2, np.float32)).dtype is xp.float32
    assert xp.asarray(host.astype(np.float32), dtype=np.dtype(ml_dtypes.bfloat16)).dtype \
        is xp.bfloat16
    print(np.asarray(x * 2).tolist(), (x < 0).tolist(), xp.astype(x, xp.int32).tolist())
""")


def test_bfloat16_arrays_made_before_tlaloc_loads_ml_dtypes():
    """tlaloc imports ml_dtypes when bfloat16 is first used; a caller's NumPy bfloat16 array
    (ml_dtypes imported by the caller) is still read as tlaloc's bfloat16."""
    out = subprocess.run([sys.executable, "-c", _BFLOAT16_FROM_THE_CALLER],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[0] == "[3.0, -4.0, 6.0] [False, True, False] [1, -2, 3]"


_STDLIB_AT_START = textwrap.dedent("""
    import sys
    import numpy
    before = set(sys.modules)
    import tlaloc as xp
    print(" ".join(sorted(set(sys.modules) - before)))
    x = xp.asarray(numpy.linspace(0.0, 1.0, 50))
    float(xp.sum(xp.sin(x) * 2.0 - xp.mean(x)))      # interpreted: the first evaluation
    print(" ".join(sorted(set(sys.modules) - before)))
""")


def test_start_up_loads_no_standard_library_module_it_does_not_need(tmp_path):
    """Modules that cost milliseconds and serve only rare paths (exported bytes, explained
    compiles, error messages, a library search, compiles: a background one, a disk cache
    key) are imported where those paths run, neither by `import tlaloc` nor by a first
    evaluation in the interpreter."""
    env = dict(os.environ, TLALOC_CACHE_DIR=str(tmp_path), TLALOC_EXECUTION="auto")
    out = subprocess.run([sys.executable, "-c", _STDLIB_AT_START], capture_output=True,
                         text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    at_import, after_evaluation = (set(line.split()) for line in out.stdout.splitlines()[-2:])
    deferred = {"json", "hashlib", "logging", "subprocess", "ctypes.util", "traceback",
                "concurrent.futures"}
    assert not at_import & deferred, f"imported by `import tlaloc`: {sorted(at_import & deferred)}"
    assert "tlaloc.backends.pjrt" in after_evaluation          # (the evaluation ran on it)
    assert not after_evaluation & deferred, \
        f"imported by a first interpreted evaluation: {sorted(after_evaluation & deferred)}"
