"""tlaloc.profile, tlaloc.explain, memory_stats, cache_info's table, source locations."""
import gzip
import json
import logging
import os
import subprocess
import sys

import numpy as np
import pytest

import tlaloc as xp

HERE = os.path.basename(__file__)


def _line_of(marker):
    with open(__file__) as f:
        for i, text in enumerate(f, 1):
            if marker in text and "_line_of" not in text:
                return f"{HERE}:{i}"
    raise AssertionError(marker)


def _step_loop(steps):
    w = xp.asarray(np.ones(4, dtype=np.float32))
    losses = []
    for _ in range(steps):
        w = w * 0.5 + 1.0
        losses.append(float(xp.sum(w)))   # MARK-float
    return losses


def test_float_every_step_is_one_evaluation_per_step_at_that_line():
    with xp.profile() as prof:
        _step_loop(6)
    line = _line_of("MARK-float")
    at_line = [e for e in prof.evaluations if e.line == line]
    assert len(at_line) == 6
    assert all(e.trigger == "float()" for e in at_line)
    rows = [r for r in prof.summary().rows if r["line"] == line]
    assert len(rows) == 1 and rows[0]["evaluations"] == 6
    assert line in str(prof.summary())


def test_profile_never_changes_results():
    expected = _step_loop(5)
    with xp.profile():
        got = _step_loop(5)
    assert got == expected


def test_saved_trace_has_each_phase_with_its_line(tmp_path):
    xp.config.update(execution="compiled")
    try:
        with xp.profile() as prof:
            x = xp.asarray(np.arange(7, dtype=np.float32))
            y = xp.sin(x) * 3.0 + 1.0
            value = y.tolist()   # MARK-trace
    finally:
        xp.config.update(execution="auto")
    assert len(value) == 7
    path = prof.save(tmp_path / "step.trace.json.gz")
    with gzip.open(path, "rt") as f:
        events = json.load(f)["traceEvents"]
    names = [str(e.get("name", "")) for e in events]
    line = _line_of("MARK-trace")
    for phase in ("evaluate", "plan", "execute", "device-to-host"):
        assert any(n.startswith(f"tlaloc.{phase}") and line in n for n in names), (phase, names)
    # the compile is there unless the disk cache had the executable
    assert any(n.startswith("tlaloc.compile") for n in names)


def test_summary_groups_by_line_slowest_first():
    with xp.profile() as prof:
        a = xp.asarray(np.ones(3))
        float(xp.sum(a))          # MARK-one
        for _ in range(3):
            float(xp.sum(a * 2))  # MARK-three
    rows = prof.summary().rows
    assert [r["seconds"] for r in rows] == sorted((r["seconds"] for r in rows), reverse=True)
    by_line = {r["line"]: r for r in rows}
    assert by_line[_line_of("MARK-one")]["evaluations"] == 1
    assert by_line[_line_of("MARK-three")]["evaluations"] == 3


def test_nested_profiles_raise():
    with xp.profile():
        with pytest.raises(RuntimeError, match="do not nest"):
            with xp.profile():
                pass
    with xp.profile():      # the outer one ended cleanly: a new one starts
        pass


def test_save_to_unwritable_path_raises(tmp_path):
    with xp.profile() as prof:
        float(xp.sum(xp.ones(3)))
    with pytest.raises(OSError, match="cannot write"):
        prof.save(tmp_path / "no" / "such" / "folder" / "t.json.gz")


def test_plot_without_matplotlib_says_what_to_install(monkeypatch, tmp_path):
    with xp.profile() as prof:
        float(xp.sum(xp.ones(3)))
    for name in list(sys.modules):
        if name == "matplotlib" or name.startswith("matplotlib."):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)   # import matplotlib -> ImportError
    with pytest.raises(ImportError, match="pip install matplotlib"):
        prof.plot(tmp_path / "t.png")


def test_plot_writes_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    with xp.profile() as prof:
        _step_loop(3)
    path = prof.plot(tmp_path / "t.png")
    with open(path, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_shape_change_is_explained():
    with xp.explain() as ex:
        for n in (23, 24):
            x = xp.asarray(np.ones(n, dtype=np.float32))
            float(xp.sum(xp.expm1(x) * xp.tanh(x)))   # MARK-shape
    records = [r for r in ex.records if r.line == _line_of("MARK-shape")]
    assert len(records) == 2
    assert "input 0 shape (23,) -> (24,)" in str(records[1]), str(records[1])
    assert str(records[1]).startswith("float() at ")


def test_static_parameter_change_is_explained():
    b = xp.asarray(np.ones((2, 7), dtype=np.float32))
    with xp.explain() as ex:
        xp.eval(xp.sum(b * 2, axis=0))
        xp.eval(xp.sum(b * 2, axis=1))
    text = str(ex.records[-1])
    assert "tlaloc.eval()" in text and "axes (0,) -> (1,)" in text, text


def test_explain_jit_says_why_it_traced_again():
    f = xp.jit(lambda x: xp.tanh(x) * 3.0 - x)
    with xp.explain() as ex:
        f(xp.ones(5))
        f(xp.ones(6))
    text = str(ex.records[-1])
    assert "jit call of" in text and "traced again" in text, text
    assert "shape (5,) -> (6,)" in text, text


def test_explain_environment_variable_logs():
    code = ("import logging, tlaloc as xp; logging.basicConfig(level=logging.INFO); "
            "float(xp.sum(xp.ones(3)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "TLALOC_EXPLAIN": "1"}, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "tlaloc.explain" in out.stderr and "float() at <string>:1" in out.stderr


def test_locations_reach_the_stablehlo_and_the_hlo(lazy):
    with xp.explain():
        x = xp.asarray(np.ones(5, dtype=np.float32))
        y = xp.cos(x) + 1.0   # MARK-loc
        text = xp.stablehlo(y)
    line = _line_of("MARK-loc").split(":")[1]
    assert f':{line}:1))' in text and 'loc("' in text
    assert HERE in text
    # without observation, no locations (the recording stays as cheap as before)
    z = xp.cos(xp.asarray(np.ones(5, dtype=np.float32))) + 1.0
    assert " loc(" not in xp.stablehlo(z)


def test_memory_stats_follow_buffers():
    xp.config.update(execution="compiled")
    try:
        before = xp.memory_stats("cpu")
        big = xp.asarray(np.ones(1 << 18, dtype=np.float32)) * 2.0
        xp.eval(big)
        during = xp.memory_stats("cpu")
        assert during["live_bytes"] >= before["live_bytes"] + (1 << 20) - 4096
        assert during["peak_bytes"] >= during["live_bytes"]
        del big
        after = xp.memory_stats("cpu")
        assert after["live_bytes"] <= during["live_bytes"] - (1 << 20)
        assert "peak" in str(after)
    finally:
        xp.config.update(execution="auto")
    s = xp.memory_stats("interpreter")
    assert s["live_bytes"] >= 0


def test_cache_info_is_a_dict_that_prints_as_a_table():
    info = xp.cache_info()
    assert isinstance(info, dict) and isinstance(info["hits"], int)
    text = str(info)
    assert text == repr(info)
    for key in ("hits", "misses", "compiles", "compile_seconds", "interpreted"):
        assert key in text
    assert "XLA compilations" in text


def test_memory_counting_starts_when_asked_for():
    """Counting is off until memory_stats (or a profile) asks, and then counts what follows."""
    code = ("import numpy as np, tlaloc as xp\n"
            "from tlaloc.backends import _memory\n"
            "xp.config.update(execution='compiled')\n"
            "a = xp.asarray(np.ones(1 << 16, np.float32)) * 2.0; xp.eval(a)\n"
            "off = _memory.ENABLED\n"
            "s0 = xp.memory_stats('cpu')\n"
            "b = xp.asarray(np.ones(1 << 16, np.float32)) * 3.0; xp.eval(b)\n"
            "s1 = xp.memory_stats('cpu')\n"
            "print(off, _memory.ENABLED, s1['live_bytes'] - s0['live_bytes'] >= 1 << 18)\n")
    env = dict(os.environ)
    env.pop("TLALOC_MEMORY_STATS", None)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env=env)
    assert out.stdout.split() == ["False", "True", "True"], out.stderr
