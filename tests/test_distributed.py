"""Several processes on loopback (issue 15): jaxlib's distributed runtime, gloo collectives.

Each test starts worker processes (this file run as a script), on a free port, with bounded
timeouts; every process is reaped. Workers print one JSON line of results each, which the
test compares with NumPy on the global data (the same data every worker builds).
"""
import json
import os
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

HERE = os.path.abspath(__file__)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(n, role, port, *extra, only=None, env=None):
    """Processes 0..n-1 of a run (or just those in `only`), with `env` added."""
    base = dict(os.environ, TLALOC_EXECUTION="compiled")
    base.pop("TLALOC_CPU_DEVICES", None)
    env = dict(base, **(env or {}))
    return [subprocess.Popen([sys.executable, HERE, role, str(port), str(n), str(pid), *extra],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
            for pid in (range(n) if only is None else only)]


def _reap(procs, timeout):
    """(returncode, stdout, stderr) of each process; kills whatever outlives `timeout`."""
    deadline = time.monotonic() + timeout
    out = []
    for p in procs:
        try:
            stdout, stderr = p.communicate(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            stdout, stderr = p.communicate()
            out.append((None, stdout, stderr))
            continue
        out.append((p.returncode, stdout, stderr))
    return out


def _results(done):
    found = []
    for code, stdout, stderr in done:
        assert code == 0, stderr[-3000:]
        found.append(json.loads(stdout.strip().splitlines()[-1]))
    return found


ROWS, FEAT = 8, 3


def _global_data():
    return np.arange(ROWS * FEAT, dtype=np.float32).reshape(ROWS, FEAT) / 7 - 1


@pytest.mark.parametrize("n, per_process", [(2, 1), (4, 1), (2, 2)])
def test_processes_compute_the_global_program(n, per_process):
    env = {"TLALOC_CPU_DEVICES": str(per_process)} if per_process > 1 else None
    done = _reap(_start(n, "compute", _free_port(), env=env), timeout=120)
    results = _results(done)
    g = _global_data()
    for pid, r in enumerate(results):
        assert r["process"] == [pid, n]
        assert r["devices"] == n * per_process and r["local"] == per_process
        rows = ROWS // n // per_process     # each device's rows
        first = pid * per_process
        assert r["shards"] == [[[(first + k) * rows, (first + k + 1) * rows], [0, FEAT]]
                               for k in range(per_process)]
        np.testing.assert_allclose(r["sum0"], g.sum(axis=0), rtol=1e-5)
        np.testing.assert_allclose(r["gathered"], g, rtol=1e-6)
        np.testing.assert_allclose(r["psum"], g.reshape(n * per_process, rows, FEAT).sum(axis=0),
                                   rtol=1e-5)
        np.testing.assert_allclose(r["grad"], 2 * g.T @ (g @ np.ones((FEAT, 2), np.float32)),
                                   rtol=1e-4)
        assert r["collectives"] and all(k == "all-reduce" for k in r["collectives"])


def test_a_peer_that_never_connects_is_an_error_within_the_timeout():
    port = _free_port()
    start = time.monotonic()
    only = _start(2, "join", port, "3", only=[0])      # process 1 is never started
    [(code, stdout, stderr)] = _reap(only, timeout=60)
    assert code is not None, "the lone process hung"
    assert time.monotonic() - start < 45
    assert "DistributedError" in stdout + stderr and "could not join" in stdout + stderr


@pytest.mark.parametrize("survivor_waits", [1, 7])
def test_a_peer_that_dies_is_an_error_in_the_others_within_the_timeout(survivor_waits):
    """Process 1 dies after a first program; process 0 runs the next one after
    `survivor_waits` s. Before the heartbeat timeout (4 s) that program's collective fails
    (a Python exception); after it, jaxlib ends the idle survivor (an abort). Never a hang."""
    start = time.monotonic()
    done = _start(2, "die", _free_port(), "4", env={"SURVIVOR_WAITS": str(survivor_waits)})
    done = _reap(done, timeout=90)
    codes = [d[0] for d in done]
    assert None not in codes, f"a process hung: {codes}"
    assert time.monotonic() - start < 80
    code, stdout, stderr = done[0]
    assert code != 0 and "computed after the peer died" not in stdout
    if survivor_waits == 1:
        assert code == 4 and "error:" in stdout and "Gloo" in stdout


# ----------------------------------------------------------------------------- workers

def _worker_compute(port, n, pid):
    import tlaloc as xp
    xp.distributed.initialize(f"127.0.0.1:{port}", n, pid, timeout_s=30)
    mesh = xp.Mesh({"data": len(xp.devices("cpu"))})    # every device of every process
    g = _global_data()
    rows = ROWS // n
    local = xp.rename(xp.asarray(g[pid * rows:(pid + 1) * rows]), ("batch", "feat"))
    x = xp.from_process_local(local, mesh, {"batch": "data"})
    assert x.shape == (ROWS, FEAT)
    shards = [[[s.start, s.stop] for s in sh.index] for sh in x.addressable_shards]
    sum0 = xp.sum(x, axis="batch")
    psum = xp.shard_map(lambda b: xp.psum(b, "data"), mesh, ({"batch": "data"},), {})(x)
    w = xp.shard(xp.rename(xp.ones((FEAT, 2)), ("feat", "out")), mesh, {})

    def loss(w, x):
        return xp.sum((x @ w) ** 2)

    grad = xp.grad(loss)(w, x)
    kinds = [c.kind for c in xp.collectives(xp.grad(loss), w, x)]
    print(json.dumps({"process": [xp.process_index(), xp.process_count()],
                      "devices": len(xp.devices("cpu")), "local": len(xp.local_devices("cpu")),
                      "shards": shards, "sum0": np.asarray(sum0).tolist(),
                      "gathered": np.asarray(x).tolist(), "psum": np.asarray(psum).tolist(),
                      "grad": np.asarray(grad).tolist(), "collectives": kinds}), flush=True)


def _worker_join(port, n, pid, timeout):
    import tlaloc as xp
    try:
        xp.distributed.initialize(f"127.0.0.1:{port}", n, pid, timeout_s=int(timeout))
    except xp.distributed.DistributedError as e:
        print(f"DistributedError: {e}", flush=True)
        sys.exit(3)


def _worker_die(port, n, pid, timeout):
    import tlaloc as xp
    xp.distributed.initialize(f"127.0.0.1:{port}", n, pid, timeout_s=int(timeout))
    mesh = xp.Mesh({"data": n})
    x = xp.from_process_local(xp.rename(xp.ones((2, 2)), ("batch", "feat")), mesh,
                              {"batch": "data"})
    float(xp.sum(x))          # both processes run one program together
    if pid == 1:
        os._exit(0)           # dies without leaving the run
    time.sleep(float(os.environ.get("SURVIVOR_WAITS", "1")))
    try:
        float(xp.sum(x * 2))
    except Exception as e:    # noqa: BLE001 - whichever error the runtime raises is the point
        print(f"error: {type(e).__name__}: {e}", flush=True)
        os._exit(4)
    print("computed after the peer died", flush=True)


if __name__ == "__main__":
    role, args = sys.argv[1], sys.argv[2:]
    {"compute": _worker_compute, "join": _worker_join, "die": _worker_die}[role](
        int(args[0]), int(args[1]), int(args[2]), *args[3:])
