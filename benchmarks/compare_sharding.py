"""Data-parallel MLP training step: tlaloc against jax on the same mesh, in the same run.

Each configuration runs in fresh processes (the CPU device count is fixed when a client is
made): 1, 2 and 4 CPU devices in one process, and 2 processes of 1 device on loopback. The
step is SGD on a 2-layer MLP, the batch split over mesh axis "data", the parameters
replicated; both sides jit it. Prints the fastest and the median step time of each and
their ratios (on a shared machine the fastest step is the steadier figure).

    python benchmarks/compare_sharding.py [--steps 50] [--batch 1024] [--hidden 256]
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time

import numpy as np

FEATURES, CLASSES = 64, 10


def data(batch, hidden):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, FEATURES)).astype(np.float32)
    y = np.eye(CLASSES, dtype=np.float32)[rng.integers(0, CLASSES, batch)]
    w1 = (rng.standard_normal((FEATURES, hidden)) * 0.1).astype(np.float32)
    w2 = (rng.standard_normal((hidden, CLASSES)) * 0.1).astype(np.float32)
    return x, y, w1, w2


def timed(step, state, steps, block):
    for _ in range(5):
        state = step(*state)
    block(state)
    times = []
    for _ in range(steps):
        t = time.perf_counter()
        state = step(*state)
        block(state)
        times.append(time.perf_counter() - t)
    return min(times), statistics.median(times)


def make_step(xp, grad, jit):
    """The SGD step on `xp`'s namespace (tlaloc, or jax.numpy with jax.grad and jax.jit)."""
    def loss(w1, w2, x, y):
        logits = xp.tanh(x @ w1) @ w2
        return xp.mean(xp.sum((logits - y) ** 2, axis=-1))

    @jit
    def step(w1, w2, x, y):
        g1, g2 = grad(loss, argnums=(0, 1))(w1, w2, x, y)
        return w1 - 0.01 * g1, w2 - 0.01 * g2, x, y
    return step


def run_tlaloc(n, pid, port, nproc, args):
    import tlaloc as xp
    if nproc > 1:
        xp.distributed.initialize(f"127.0.0.1:{port}", nproc, pid, timeout_s=60)
    else:
        xp.config.update(cpu_devices=n)
    mesh = xp.Mesh({"data": n * nproc})
    x, y, w1, w2 = data(args.batch, args.hidden)
    rows = slice(pid * args.batch // nproc, (pid + 1) * args.batch // nproc)
    put = (lambda a, l: xp.from_process_local(a, mesh, l)) if nproc > 1 else \
        (lambda a, l: xp.shard(a, mesh, l))
    xs = put(xp.rename(xp.asarray(x[rows]), ("batch", "feat")), {"batch": "data"})
    ys = put(xp.rename(xp.asarray(y[rows]), ("batch", "class")), {"batch": "data"})
    state = (xp.shard(xp.asarray(w1), mesh, {}), xp.shard(xp.asarray(w2), mesh, {}), xs, ys)
    step = make_step(xp, xp.grad, xp.jit)
    kinds = [c.kind for c in xp.collectives(step, *state)]
    return timed(step, state, args.steps, lambda s: xp.eval(*s)), kinds


def run_jax(n, pid, port, nproc, args):
    import jax
    if nproc > 1:
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
        jax.distributed.initialize(f"127.0.0.1:{port}", nproc, pid)
    else:
        jax.config.update("jax_num_cpu_devices", n)
    import jax.numpy as jnp
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    mesh = Mesh(np.array(jax.devices()), ("data",))
    x, y, w1, w2 = data(args.batch, args.hidden)
    rows = NamedSharding(mesh, P("data"))
    whole = NamedSharding(mesh, P())
    xs = jax.make_array_from_callback(x.shape, rows, lambda i: x[i])
    ys = jax.make_array_from_callback(y.shape, rows, lambda i: y[i])
    state = (jax.device_put(w1, whole), jax.device_put(w2, whole), xs, ys)
    step = make_step(jnp, jax.grad, jax.jit)
    return timed(step, state, args.steps, jax.block_until_ready), []


def child(args):
    run = run_tlaloc if args.child == "tlaloc" else run_jax
    (fastest, median), kinds = run(args.devices, args.pid, args.port, args.processes, args)
    print(json.dumps({"fastest": fastest, "median": median, "collectives": kinds}), flush=True)


def launch(side, devices, processes, args):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, NPROC=str(max(8, devices)))   # XLA:CPU's pool (see docs/distributed.md)
    env.pop("TLALOC_CPU_DEVICES", None)
    cmd = [sys.executable, os.path.abspath(__file__), "--child", side, "--devices", str(devices),
           "--processes", str(processes), "--port", str(port), "--steps", str(args.steps),
           "--batch", str(args.batch), "--hidden", str(args.hidden)]
    procs = [subprocess.Popen(cmd + ["--pid", str(p)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env) for p in range(processes)]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=600)
        if p.returncode != 0:
            raise RuntimeError(f"{side} {devices}x{processes} failed:\n{err[-2000:]}")
        results.append(json.loads(out.strip().splitlines()[-1]))
    # a step of several processes ends when the slowest one's does
    return (max(r["fastest"] for r in results), max(r["median"] for r in results),
            results[0]["collectives"])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--child", default=None)
    parser.add_argument("--devices", type=int, default=1)
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--pid", type=int, default=0)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    if args.child:
        return child(args)
    print(f"data-parallel MLP step, batch {args.batch}, hidden {args.hidden}, {args.steps} steps; "
          "ms: fastest step / median step")
    print(f"{'configuration':<26}{'tlaloc':>16}{'jax':>16}{'ratio':>14}  collectives (tlaloc)")
    for devices, processes in ((1, 1), (2, 1), (4, 1), (1, 2)):
        t, tm, kinds = launch("tlaloc", devices, processes, args)
        j, jm, _ = launch("jax", devices, processes, args)
        label = f"{devices} device(s) x {processes} process(es)"
        print(f"{label:<26}{t * 1e3:>8.2f} /{tm * 1e3:>6.2f}{j * 1e3:>8.2f} /{jm * 1e3:>6.2f}"
              f"{t / j:>7.2f} /{tm / jm:>5.2f}  {', '.join(kinds) or '-'}")


if __name__ == "__main__":
    main()
