"""The compiled recording path (setup.py, tlaloc/_native.py, docs/native.md).

The modules on the per-call path may run compiled by Cython; their sources stay the reference.
These tests check that `TLALOC_PURE_PYTHON=1` imports the sources, that a module edited since
its build or a failed build falls back to its source with one warning, that a build without a
working compiler still installs, and that both implementations record identical graphs for
the fuzzer's random programs and a battery of transformations. The suite itself runs both
ways in CI (.ci/run).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings

import tlaloc

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.dirname(tlaloc.__file__)
MANIFEST = os.path.join(PACKAGE, "_native.json")


def _manifest():
    try:
        with open(MANIFEST) as f:
            return json.load(f)
    except OSError:
        return None


BUILT = (_manifest() or {}).get("modules", {})
needs_build = pytest.mark.skipif(
    not BUILT, reason="no compiled modules are built here (a source checkout; "
                      "`pip install -e .` builds them)")


def _python(code, env=None, cwd=None, timeout=300):
    full_env = {k: v for k, v in os.environ.items() if k != "TLALOC_PURE_PYTHON"}
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-c", code], env=full_env, cwd=cwd or ROOT,
                          capture_output=True, text=True, timeout=timeout)


_REPORT = """
import json, sys, warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import tlaloc
    import tlaloc._api.elementwise, tlaloc._graph, tlaloc._prims.core, tlaloc.backends.pjrt
mods = {m: f for m in sys.modules if m.startswith("tlaloc")
        and (f := getattr(sys.modules[m], "__file__", None))}   # (namespace packages: none)
print(json.dumps({"native": list(tlaloc.native_modules()), "files": mods,
                  "warnings": [str(w.message) for w in caught if "tlaloc" in str(w.message)]}))
"""


def _report(env=None, cwd=None):
    r = _python(_REPORT, env, cwd)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_pure_python_imports_every_module_from_its_source():
    report = _report({"TLALOC_PURE_PYTHON": "1"})
    assert report["native"] == []
    assert report["warnings"] == []
    for name, path in report["files"].items():
        assert path.endswith(".py"), (name, path)


@needs_build
def test_the_built_modules_are_the_ones_imported():
    report = _report()
    assert report["warnings"] == []
    assert report["native"], "no compiled module was imported"
    assert set(report["native"]) <= set(BUILT)
    for name in ("tlaloc._graph", "tlaloc._api.elementwise", "tlaloc._prims.core"):
        if name in BUILT:
            assert not report["files"][name].endswith(".py"), name


def test_the_flush_block_takes_the_branch_of_how_it_was_imported():
    # compiled, backends/_fpenv sets the control register itself; from source, fegetenv and
    # fesetenv through ctypes
    from tlaloc.backends import _fpenv
    assert _fpenv._COMPILED is (not _fpenv.__file__.endswith(".py"))
    with _fpenv.flush_subnormals():
        assert float(np.float32(1e-40) * np.float32(1.0)) == 0.0
    assert float(np.float32(1e-40) * np.float32(1.0)) != 0.0


@pytest.mark.parametrize("user_state", ["warn", "raise"])
def test_call_flushed_flushes_and_ignores_errors_for_the_call_only(user_state):
    # what an operation run as it is recorded calls its implementation through: compiled,
    # the control register and NumPy's error state are set through C, from source through
    # a flush block and the error state's own methods; both restore the caller's state,
    # also when the call raises
    from tlaloc.backends import _fpenv
    big, tiny = np.array([3e38], np.float32), np.array([1e-40], np.float32)
    with np.errstate(all=user_state), warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _fpenv.call_flushed(np.multiply, (big, big), {})[0] == np.inf
        assert _fpenv.call_flushed(np.multiply, (tiny, np.float32(1.0)), {})[0] == 0.0
        out = np.empty(1, np.float32)                   # keyword arguments pass through
        assert _fpenv.call_flushed(np.multiply, (tiny, tiny), {"out": out}) is out
        with pytest.raises(ValueError):
            _fpenv.call_flushed(np.add, (np.ones(3), np.ones(2)), {})   # shapes that differ
        assert np.geterr()["over"] == user_state
        assert float(tiny[0] * np.float32(1.0)) != 0.0      # the flush mode is restored
        with pytest.raises((RuntimeWarning, FloatingPointError)):
            big * big                                      # and so is the error state


def test_the_numpy_1_26_error_state_is_set_and_reset_as_numpy_2s_variable():
    # NumPy 1.26 has no error-state context variable: call_flushed's pure branch then sets
    # and resets np.errstate through the same two calls
    from tlaloc.backends import _fpenv
    with np.errstate(all="warn"):
        token = _fpenv._ErrstateVariable.set({"all": "ignore"})
        assert np.geterr()["over"] == "ignore" and np.geterr()["invalid"] == "ignore"
        _fpenv._ErrstateVariable.reset(token)
        assert np.geterr()["over"] == "warn"


def test_remembered_structures_keys_leave_the_cycle_collector_alone(lazy):
    """Compiled, the keys the devices keep for structures they have seen are untracked by
    the cycle collector (backends/_untrack.py), and what they hold stays alive; from source
    they stay tracked. Either way the table still finds the structure again."""
    import gc
    import weakref

    from tlaloc.backends import _untrack

    class Param:             # a parameter value a weak reference can follow
        value = (1, 2)

    x = tlaloc.asarray(np.arange(7.0, dtype=np.float32) + 1000.0)   # a shape no test uses
    for device in (tlaloc.device("cpu"), tlaloc.device("interpreter")):
        y = tlaloc.asarray(np.asarray(x), device=device)
        float(tlaloc.sum(tlaloc.sin(y) * 3.0))
        backend = device.backend
        table = backend._entries if hasattr(backend, "_entries") else backend._schedules
        key = list(table)[-1]           # this program's structure
        assert any(eqn[0].name == "sin" for eqn in key[2])
        equations = key[2]                # tuples holding primitives: tracked by CPython
        assert gc.is_tracked(key) is gc.is_tracked(equations) is (not _untrack._COMPILED)
        before = len(table)
        float(tlaloc.sum(tlaloc.sin(y) * 3.0))       # found again: no new entry
        assert len(table) == before
    # what an untracked tuple holds is kept by its reference, and freed with it
    p = Param()
    ref = weakref.ref(p)
    held = _untrack.untracked(((p,), (3,)))
    del p
    gc.collect()
    assert ref() is not None and held[0][0].value == (1, 2)
    del held
    gc.collect()
    assert ref() is None


def test_nodes_whose_parameters_hold_atoms_leave_the_cycle_collector_alone():
    """Compiled, a node whose parameters are atoms (or none) is untracked by the cycle
    collector (tlaloc/_graph.py, "Nodes and the cycle collector"), pending or computed; a
    node whose parameters hold an object stays tracked, so a cycle through it (a rule
    object that refers to its own result) is still collected. From source every node
    stays tracked."""
    import gc
    import weakref

    from tlaloc import _graph
    from tlaloc._prims import lax

    compiled = _graph._COMPILED
    x = tlaloc.asarray(np.arange(6.0))
    computed = x * 2.0                               # no parameters, run as recorded
    pending = tlaloc.asarray(np.arange(tlaloc.config.eager_max_size + 1.0)) * 2.0   # lazy
    for a in (x, computed, pending):
        assert gc.is_tracked(a._node) is not compiled
    assert pending._node.value is None and computed._node.value is not None

    class Rule:             # a parameter that refers back to the node holding it
        result = None

    rule = Rule()
    rule.result = tlaloc.Array._from_node(lax.custom_derivative_call(x._node, rule=rule))
    assert gc.is_tracked(rule.result._node)
    ref = weakref.ref(rule)
    del rule
    gc.collect()
    assert ref() is None, "a cycle through a node's parameters was not collected"


@pytest.fixture
def package_copy(tmp_path):
    """A copy of the installed package (sources, extension modules and manifest)."""
    shutil.copytree(PACKAGE, tmp_path / "tlaloc",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


@needs_build
def test_a_module_edited_since_its_build_runs_from_source(package_copy):
    module = "tlaloc._graph"
    source = package_copy / "tlaloc" / "_graph.py"
    source.write_text(source.read_text() + "\n# edited after the build\n")
    report = _report({"PYTHONPATH": str(package_copy)}, cwd=str(package_copy))
    assert report["files"][module].endswith("_graph.py")
    assert module not in report["native"]
    assert len(report["warnings"]) == 1 and "tlaloc._graph" in report["warnings"][0]
    assert "pip install -e ." in report["warnings"][0]
    # the modules compiled against its types (their .pxd cimports it) run from source too:
    # compiled, they would read the Python Node's fields at the compiled Node's offsets
    cimports = _manifest().get("cimports", {})
    dependents = set()
    while True:     # (those cimporting a dependent, too)
        more = {m for m, deps in cimports.items() if ({module} | dependents) & set(deps)}
        if more <= dependents:
            break
        dependents |= more
    assert dependents, "no module cimports tlaloc._graph: the case is not exercised"
    for m in dependents:
        assert m in report["warnings"][0]
        assert report["files"][m].endswith(".py"), m
    # the others still run compiled
    assert set(report["native"]) == set(_report()["native"]) - {module} - dependents
    r = _python("import tlaloc as xp; print(float(xp.sum(xp.ones(3) + 1.5)))",
                {"PYTHONPATH": str(package_copy)}, cwd=str(package_copy))
    assert r.returncode == 0 and r.stdout.split()[-1] == "7.5", r.stderr


@needs_build
def test_a_failed_build_warns_once_and_runs_as_python(package_copy):
    for so in package_copy.glob("tlaloc/**/*.so"):
        so.unlink()
    (package_copy / "tlaloc" / "_native.json").write_text(json.dumps(
        {"modules": {}, "failed": {"*": "CompileError: command 'gcc' failed"}}))
    report = _report({"PYTHONPATH": str(package_copy)}, cwd=str(package_copy))
    assert report["native"] == []
    assert len(report["warnings"]) == 1
    assert "did not build" in report["warnings"][0] and "gcc" in report["warnings"][0]
    forced = _report({"PYTHONPATH": str(package_copy), "TLALOC_PURE_PYTHON": "1"},
                     cwd=str(package_copy))
    assert forced["warnings"] == []


@pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None,
                    reason="no C compiler")
def test_a_build_without_a_working_compiler_still_installs(tmp_path):
    """setup.py with a compiler that always fails: the build succeeds, the manifest lists
    the failure, and the package imports as Python with the one warning."""
    pytest.importorskip("Cython")
    src = tmp_path / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(
        "__pycache__", "*.so", "_native.json", ".git", ".hypothesis", "*.egg-info", "build",
        ".asv", "docs", "benchmarks", "examples", "conformance"))
    # reuse the generated C files of this checkout's build, when there are any: the test
    # is about the compiler failing, not about waiting for Cython
    if os.path.isdir(os.path.join(ROOT, "build", "cython")):
        shutil.copytree(os.path.join(ROOT, "build", "cython"), src / "build" / "cython")
        for c in (src / "build" / "cython").rglob("*.c"):
            os.utime(c)
    env = {"CC": "false", "LDSHARED": "false"}
    r = subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"],
                       cwd=src, env={**os.environ, **env}, capture_output=True, text=True,
                       timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    manifest = json.loads((src / "tlaloc" / "_native.json").read_text())
    assert manifest["modules"] == {}
    assert manifest["failed"]
    assert not list((src / "tlaloc").glob("**/*.so"))
    report = _report({"PYTHONPATH": str(src)}, cwd=str(src))
    assert report["native"] == []
    assert len(report["warnings"]) == 1 and "did not build" in report["warnings"][0]


# ----------------------------------------------------------------------------- same graphs

_DUMP = r'''
import json, re, sys
import numpy as np
import tlaloc as xp
from tlaloc import _graph

ADDRESS = re.compile(r" at 0x[0-9a-f]+")


def dump(outputs):
    """The recorded graph behind `outputs`, node by node in recording order: primitive,
    parameters, abstract value, inputs (positions in this list), and the value's digest."""
    seen, order = {}, []
    def visit(n):
        if id(n) in seen:
            return
        for i in n.inputs:
            visit(i)
        seen[id(n)] = len(order)
        order.append(n)
    nodes = [a._node for a in outputs]
    for n in nodes:
        visit(n)
    rows = []
    for n in order:
        value = None
        if n.value is not None and not isinstance(n.value, type(_graph.DONATED)):
            v = np.asarray(n.value)
            value = [str(v.dtype), list(v.shape), v.tobytes().hex()[:64]]
        rows.append([n.prim.name if n.prim is not None else "leaf",
                     ADDRESS.sub("", repr(sorted((n.params or {}).items(), key=str))),
                     [list(n.aval.shape), str(n.aval.dtype), n.aval.names],
                     [seen[id(i)] for i in n.inputs], value])
    return {"nodes": rows, "outputs": [seen[id(n)] for n in nodes]}


xp.config.update(max_pending=10 ** 9)
dev = xp.device("interpreter")
results = []
for source in json.load(sys.stdin):
    namespace = {"xp": xp, "np": np}
    try:
        exec(compile(source, "<program>", "exec"), namespace)
        outs = namespace["program"](dev)
        results.append(dump([o for o in outs if isinstance(o, xp.Array)]))
    except Exception as e:
        results.append({"error": f"{type(e).__name__}: {e}"})
print(json.dumps(results))
'''


def _record_in_both(sources):
    outputs = {}
    for mode, env in (("native", {}), ("pure", {"TLALOC_PURE_PYTHON": "1"})):
        full_env = {k: v for k, v in os.environ.items() if k != "TLALOC_PURE_PYTHON"}
        full_env.update(env)
        r = subprocess.run([sys.executable, "-c", _DUMP], input=json.dumps(sources),
                           env=full_env, cwd=ROOT, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr[-3000:]
        outputs[mode] = json.loads(r.stdout.strip().splitlines()[-1])
    return outputs["native"], outputs["pure"]


def _assert_same(sources, native, pure):
    assert len(native) == len(pure) == len(sources)
    for source, a, b in zip(sources, native, pure):
        assert a == b, f"the two implementations recorded different graphs for:\n{source}"


def _fuzz_programs(count):
    from tests.fuzz.programs import programs
    sources = []

    @settings(max_examples=count, derandomize=True, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck), deadline=None)
    @given(programs())
    def collect(program):
        sources.append(program.source())

    collect()
    return sources


FUZZ_PROGRAMS = int(os.environ.get("TLALOC_NATIVE_PROGRAMS", "120"))


@needs_build
def test_random_programs_record_identical_graphs():
    sources = _fuzz_programs(FUZZ_PROGRAMS)
    assert len(sources) >= FUZZ_PROGRAMS // 2
    native, pure = _record_in_both(sources)
    _assert_same(sources, native, pure)
    assert sum("error" not in r for r in native) >= len(sources) // 2


_BATTERY = [textwrap.dedent(s) for s in [
    """
    def program(dev):
        x = xp.reshape(xp.arange(12.0, device=dev), (3, 4))
        g = xp.grad(lambda a: xp.sum(xp.sin(a) * a ** 3))(x)
        t = xp.jvp(lambda a: xp.exp(a) @ a.T, (x,), (xp.ones_like(x),))[1]
        return [g, t]
    """,
    """
    def program(dev):
        x = xp.reshape(xp.linspace(0, 1, 24, device=dev), (4, 6))
        per_row = xp.vmap(lambda r: xp.sum(r * r) / xp.max(r + 1))(x)
        h = xp.hessian(lambda v: xp.sum(xp.tanh(v) ** 2))(x[0])
        return [per_row, h]
    """,
    """
    def program(dev):
        x = xp.reshape(xp.arange(20.0, device=dev), (4, 5))
        y = x[1:-1, ::2] * 2
        x[0, :] = -x[3, :]
        z = xp.where(x > 3, x, y[0, 0])
        v = x.T
        v[1] = 7.0
        return [x, y, z, xp.cumulative_sum(z, axis=1), xp.sort(z, axis=0)[::-1]]
    """,
    """
    def program(dev):
        x = xp.asarray([[1, 2, 3], [4, 5, 6]], dtype=xp.int16, device=dev)
        a = x + 1.5 if False else (x << 2) | 1
        b = xp.astype(a, xp.float32) / 3
        c = xp.matmul(b, xp.ones((3, 2), dtype=xp.float32, device=dev))
        return [a, b, c, xp.mean(c, axis=0, keepdims=True), xp.argmax(b, axis=1)]
    """,
    """
    def program(dev):
        x = xp.linspace(0.5, 2.0, 8, device=dev)
        total = xp.fori_loop(0, 5, lambda i, c: c * 0.5 + xp.sin(c), x)
        final, ys = xp.scan(lambda c, v: (c + v, c * v), xp.zeros((), device=dev), x)
        picked = xp.cond(True, lambda v: v * 2, lambda v: v - 1, x)
        return [total, final, ys, picked]
    """,
    """
    def program(dev):
        x = xp.rename(xp.reshape(xp.arange(6.0, device=dev), (2, 3)), "batch", "feature")
        y = xp.rename(xp.arange(3.0, device=dev), "feature")
        return [x * y, xp.sum(x, axis="feature")]
    """,
]]


@needs_build
def test_transformations_record_identical_graphs():
    native, pure = _record_in_both(_BATTERY)
    for source, r in zip(_BATTERY, native):
        assert "error" not in r, f"{r}\n{source}"
    _assert_same(_BATTERY, native, pure)
