"""Data-parallel training of the MLP of train_mlp.py: the batch is split over the devices of
a mesh (its "batch" axis over the mesh axis "data"), the parameters are replicated, and the
same jitted SGD step runs as one SPMD program. XLA's partitioner inserts the gradient
all-reduce (tlaloc.collectives shows it); the loss curve equals the single-device run's.

    python examples/data_parallel.py                 # 4 CPU devices in this process
    python examples/data_parallel.py --processes 2   # 2 processes on loopback, 1 device each
    python examples/data_parallel.py --quick         # a few steps (the test suite's run)
"""
import argparse
import json
import os
import socket
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_mlp import init_params, load_data, loss_fn, tree_map  # noqa: E402

BATCH = 64


def batches(x, y, steps):
    """The same minibatches for every run: (x, y) rows of step i."""
    n = (len(x) // BATCH) * BATCH
    for i in range(steps):
        start = (i * BATCH) % n
        yield x[start:start + BATCH], y[start:start + BATCH]


def make_step(xp):
    @xp.jit
    def step(params, x, y):
        loss, grads = xp.value_and_grad(loss_fn)(params, x, y)
        return tree_map(lambda p, g: p - 0.1 * g, params, grads), loss
    return step


def train(xp, place, steps, rows=slice(None)):
    """Loss per step; `place(array, layout)` puts arrays where the run keeps them, `rows`
    picks this process's rows of each batch."""
    rng = np.random.default_rng(0)
    _, (x, y), _ = load_data(rng)
    params = tree_map(lambda p: place(p, {}), init_params(rng, [x.shape[1], 64, y.shape[1]]))
    step = make_step(xp)
    losses, found = [], None
    for xb, yb in batches(x, y, steps):
        xb = place(xp.rename(xp.asarray(xb[rows]), ("batch", "feat")), {"batch": "data"})
        yb = place(xp.rename(xp.asarray(yb[rows]), ("batch", "class")), {"batch": "data"})
        if found is None:
            found = [str(c) for c in xp.collectives(step, params, xb, yb)]
        params, loss = step(params, xb, yb)
        losses.append(float(loss))
    return losses, found


def one_process(steps, devices):
    import tlaloc as xp
    xp.config.update(cpu_devices=devices)
    single, _ = train(xp, lambda a, layout: a, steps)
    mesh = xp.Mesh({"data": devices})
    sharded, found = train(xp, lambda a, layout: xp.shard(a, mesh, layout), steps)
    return single, sharded, found


def worker(pid, port, n, steps):
    import tlaloc as xp
    xp.distributed.initialize(f"127.0.0.1:{port}", n, pid, timeout_s=60)
    mesh = xp.Mesh({"data": n})
    rows = slice(pid * BATCH // n, (pid + 1) * BATCH // n)       # this process's rows

    def place(a, layout):
        if layout:
            return xp.from_process_local(a, mesh, layout)
        return xp.shard(a, mesh, layout)

    losses, found = train(xp, place, steps, rows)
    print(json.dumps({"losses": losses, "collectives": found}), flush=True)


def several_processes(steps, n):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ)
    env.pop("TLALOC_CPU_DEVICES", None)
    procs = [subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker", str(pid),
                               "--port", str(port), "--processes", str(n), "--steps", str(steps)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for pid in range(n)]
    outs = []
    try:
        for p in procs:
            stdout, stderr = p.communicate(timeout=300)
            if p.returncode != 0:
                raise RuntimeError(f"worker failed:\n{stderr[-3000:]}")
            outs.append(json.loads(stdout.strip().splitlines()[-1]))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    import tlaloc as xp
    single, _ = train(xp, lambda a, layout: a, steps)
    return single, outs[0]["losses"], outs[0]["collectives"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--devices", type=int, default=4)
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="10 steps")
    parser.add_argument("--worker", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    steps = 10 if args.quick else args.steps
    if args.worker is not None:
        return worker(args.worker, args.port, args.processes, steps)
    if args.processes > 1:
        single, parallel, found = several_processes(steps, args.processes)
        where = f"{args.processes} processes"
    else:
        single, parallel, found = one_process(steps, args.devices)
        where = f"{args.devices} devices"
    print(f"collectives in the data-parallel step ({where}):")
    for c in found:
        print(f"  {c}")
    for i in range(0, steps, max(1, steps // 5)):
        print(f"step {i:4d}  loss one device {single[i]:.6f}  {where} {parallel[i]:.6f}")
    worst = max(abs(a - b) / max(abs(a), 1e-6) for a, b in zip(single, parallel))
    print(f"largest relative difference of the loss curves: {worst:.2e}")
    if worst > 1e-4:
        raise SystemExit("the data-parallel loss curve differs from the single-device run")


if __name__ == "__main__":
    main()
