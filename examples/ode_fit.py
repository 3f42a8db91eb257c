"""Fit the parameters of an ODE by differentiating through its integrator.

The Lotka-Volterra predator-prey model

    prey'     =  a * prey - b * prey * predator
    predator' = -c * predator + d * prey * predator

is integrated with a fixed-step RK4 written as one `tlaloc.scan` (a loop of 200 steps is one
operation, compiled once). Noisy observations come from known parameters; starting from a
wrong guess, Adam (written with `tlaloc.tree.map`) fits the parameters through
`tlaloc.value_and_grad` of the integrator: reverse mode through the scan is a reverse scan.
When SciPy is installed, the fitted trajectory is checked against `solve_ivp`.

    python examples/ode_fit.py                  # 300 Adam steps
    python examples/ode_fit.py --iterations 50
"""
import argparse
import sys

import numpy as np

import tlaloc as xp

TRUE = {"a": 1.0, "b": 0.4, "c": 0.8, "d": 0.2}
STEPS, DT = 200, 0.05
Y0 = (2.0, 1.0)


def rates(y, p):
    prey, predator = y[0], y[1]
    return xp.stack([p["a"] * prey - p["b"] * prey * predator,
                     -p["c"] * predator + p["d"] * prey * predator])


def integrate(params, y0):
    """The states after each of STEPS RK4 steps of size DT, shape (STEPS, 2)."""
    def step(y, _):
        k1 = rates(y, params)
        k2 = rates(y + 0.5 * DT * k1, params)
        k3 = rates(y + 0.5 * DT * k2, params)
        k4 = rates(y + DT * k3, params)
        y = y + DT / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return y, y
    _, states = xp.scan(step, y0, None, length=STEPS)
    return states


def loss(log_params, y0, observed):
    params = xp.tree.map(xp.exp, log_params)    # positive rates
    return xp.mean((integrate(params, y0) - observed) ** 2)


@xp.jit
def adam_step(log_params, m, v, t, y0, observed):
    value, grads = xp.value_and_grad(loss)(log_params, y0, observed)
    b1, b2, lr = 0.9, 0.999, 0.05
    m = xp.tree.map(lambda m, g: b1 * m + (1 - b1) * g, m, grads)
    v = xp.tree.map(lambda v, g: b2 * v + (1 - b2) * g * g, v, grads)
    scale = lr * xp.sqrt(1 - b2 ** t) / (1 - b1 ** t)
    log_params = xp.tree.map(lambda p, m, v: p - scale * m / (xp.sqrt(v) + 1e-8),
                             log_params, m, v)
    return log_params, m, v, value


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=300)
    args = ap.parse_args(argv)

    y0 = xp.asarray(Y0)
    truth = integrate({k: xp.asarray(v) for k, v in TRUE.items()}, y0)
    rng = np.random.default_rng(0)
    observed = truth + xp.asarray(0.05 * rng.standard_normal(truth.shape))

    guess = {"a": 0.7, "b": 0.6, "c": 1.1, "d": 0.3}
    log_params = {k: xp.log(xp.asarray(v)) for k, v in guess.items()}
    m = xp.tree.map(xp.zeros_like, log_params)
    v = xp.tree.map(xp.zeros_like, log_params)
    for t in range(1, args.iterations + 1):
        log_params, m, v, value = adam_step(log_params, m, v, xp.asarray(float(t)), y0, observed)
        if t == 1 or t % 50 == 0 or t == args.iterations:
            print(f"step {t:4d}  loss {float(value):.5f}")

    fitted = {k: float(xp.exp(p)) for k, p in log_params.items()}
    print("fitted:", ", ".join(f"{k} = {fitted[k]:.3f} (true {TRUE[k]})" for k in TRUE))
    final = float(loss(log_params, y0, observed))
    if args.iterations >= 300 and final > 0.01:
        print(f"the fit did not converge: loss {final}", file=sys.stderr)
        return 1

    try:
        from scipy.integrate import solve_ivp
    except ImportError:
        return 0
    p = fitted
    times = DT * np.arange(1, STEPS + 1)
    sol = solve_ivp(lambda _, y: [p["a"] * y[0] - p["b"] * y[0] * y[1],
                                  -p["c"] * y[1] + p["d"] * y[0] * y[1]],
                    (0, times[-1]), Y0, t_eval=times, rtol=1e-10, atol=1e-10)
    ours = np.asarray(integrate({k: xp.asarray(x) for k, x in p.items()}, y0))
    gap = float(np.max(np.abs(ours - sol.y.T)))
    print(f"RK4 trajectory vs solve_ivp at the fitted parameters: max difference {gap:.2e}")
    return 0 if gap < 1e-3 else 1


if __name__ == "__main__":
    sys.exit(main())
