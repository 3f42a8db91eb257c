"""Fit a model by gradient descent with tlaloc.grad: a damped oscillation
y = a * exp(-b t) * cos(w t + p), fitted to noisy samples; the gradient is checked against
the readable derivative tlaloc prints. Run: python examples/gradient_fit.py
"""
import numpy as np

import tlaloc as xp


def model(params, t):
    a, b, w, p = params[0], params[1], params[2], params[3]
    return a * xp.exp(-b * t) * xp.cos(w * t + p)


def loss(params, t, y):
    return xp.mean((model(params, t) - y) ** 2)


def main():
    rng = np.random.default_rng(1)
    truth = np.array([2.0, 0.3, 3.0, 0.5])
    t_np = np.linspace(0, 6, 200)
    y_np = truth[0] * np.exp(-truth[1] * t_np) * np.cos(truth[2] * t_np + truth[3])
    y_np += rng.normal(scale=0.05, size=t_np.shape)
    t, y = xp.asarray(t_np), xp.asarray(y_np)

    params = xp.asarray([1.5, 0.2, 2.9, 0.3])
    value_and_grad = xp.jit(xp.value_and_grad(loss))
    lr, velocity = 0.05, xp.zeros(4)
    for step in range(1500):
        value, g = value_and_grad(params, t, y)
        velocity = 0.9 * velocity - lr * g          # momentum
        params = params + velocity
        if step % 300 == 0:
            print(f"step {step:4d}  loss {float(value):.5f}")
    print("fitted :", np.round(np.asarray(params), 3))
    print("truth  :", truth)
    assert float(loss(params, t, y)) < 0.005

    source = xp.grad_source(loss, params, t, y)
    print("\nthe gradient tlaloc computes, as Python:\n")
    print(source)
    namespace = {}
    exec(source, namespace)
    assert np.allclose(np.asarray(namespace["grad_loss"](params, t, y)),
                       np.asarray(xp.grad(loss)(params, t, y)))


if __name__ == "__main__":
    main()
