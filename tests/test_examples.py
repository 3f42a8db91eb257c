"""Every example runs as a standalone program."""
import os
import pathlib
import subprocess
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


@pytest.mark.parametrize("script,args", [
    ("quickstart.py", []),
    ("train_mlp.py", ["--steps", "60"]),
    ("numpy_style_code.py", []),
    ("gradient_fit.py", []),
    ("monte_carlo.py", ["--batches", "3", "--batch-size", "100000"]),
    ("profile_step.py", ["--steps", "20"]),
    ("ode_fit.py", ["--iterations", "300"]),
    ("variable_length.py", ["--steps", "30"]),
])
def test_example_runs(script, args):
    out = subprocess.run([sys.executable, str(EXAMPLES / script), *args], capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip()


def test_data_parallel_matches_one_device():
    """4 CPU devices in the example's process: one all-reduce of the gradients per step, and
    the loss curve of the single-device run (the example exits non-zero otherwise)."""
    out = subprocess.run([sys.executable, str(EXAMPLES / "data_parallel.py"), "--quick"],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    listed = out.stdout.split("collectives in the data-parallel step")[1].split("step")[0]
    assert listed.count("all-reduce") == 1 and "all-gather" not in listed
    assert "largest relative difference of the loss curves" in out.stdout


def test_train_mlp_learns():
    out = subprocess.run([sys.executable, str(EXAMPLES / "train_mlp.py"), "--steps", "150"],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.splitlines()
    losses = [float(l.split("loss")[1]) for l in lines if l.startswith("adam step")]
    assert losses[-1] < losses[0] / 3
    accuracy = [float(l.split()[-1]) for l in lines if l.startswith("adam test accuracy")][0]
    assert accuracy > 0.8
    assert "time per Adam step" in out.stdout


def test_quickstart_loop_reaches_the_compiled_program():
    """The demonstration's claims: compiled, later rounds of its loop run one cached
    executable; in the default mode none of its small programs is worth a compile."""
    import ast
    for mode in ("compiled", "auto"):
        env = dict(os.environ, TLALOC_EXECUTION=mode, TLALOC_CACHE_DIR="")
        out = subprocess.run([sys.executable, str(EXAMPLES / "quickstart.py")],
                             capture_output=True, text=True, timeout=600, env=env)
        assert out.returncode == 0, out.stderr[-2000:]
        table = out.stdout.split("tlaloc compile cache:", 1)[1]
        info = {l.split()[0]: ast.literal_eval(l.split()[1]) for l in table.strip().splitlines()}
        if mode == "compiled":
            assert info["hits"] >= 3 and info["compiles"] + info["disk_hits"] <= 3, info
        else:
            assert info["compiles"] == 0 and info["interpreted"] >= 6, info


def test_monte_carlo_estimates():
    """The Monte-Carlo example's estimates lie within 5 standard errors of pi and of the
    Black-Scholes price, its jitted batch compiles once, and keys reproduce the Generator."""
    out = subprocess.run([sys.executable, str(EXAMPLES / "monte_carlo.py"), "--batches", "4",
                          "--batch-size", "250000"], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.splitlines()
    errors = [float(l.split("(error ")[1].split()[0]) for l in lines if "(error " in l]
    assert len(errors) == 2 and all(e < 5 for e in errors), out.stdout
    assert "(1 compile of the jitted batch)" in out.stdout
    assert lines[-1].endswith("True")


def test_per_example_gradients_match_the_loop():
    """vmap(grad) of the MLP's loss gives the Python loop's gradients, their mean is the batch
    gradient, and the clipped mean update respects the norm bound."""
    out = subprocess.run([sys.executable, str(EXAMPLES / "per_example_gradients.py"),
                          "--batch", "32"], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    line = next(l for l in out.stdout.splitlines() if l.startswith("largest difference"))
    loop_gap, mean_gap = (float(part.split(": ")[-1]) for part in line.split(";"))
    assert loop_gap < 1e-5 and mean_gap < 1e-5, line
    clip = next(l for l in out.stdout.splitlines() if l.startswith("clipped at norm"))
    bound, norm = float(clip.split()[3].rstrip(":")), float(clip.split()[-1])
    assert norm <= bound * (1 + 1e-6), clip
