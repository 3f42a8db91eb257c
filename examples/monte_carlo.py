"""Monte-Carlo estimates with tlaloc.random: pi, and the price of a European call option
against the Black-Scholes formula.

    python examples/monte_carlo.py [--batches 20] [--batch-size 1000000]

Each batch is one call of a jitted step that draws from a Generator: the step compiles once,
its key is an input and the next key an output, so every call draws new numbers. Batches are
reduced on the device; only a few scalars come back to Python. The estimates print with their
standard errors, and a second pass with keys from `split` shows the functional API gives the
same numbers.
"""
from __future__ import annotations

import argparse
import math
import time

import tlaloc as xp


def black_scholes_call(s0, strike, rate, vol, t):
    d1 = (math.log(s0 / strike) + (rate + vol * vol / 2) * t) / (vol * math.sqrt(t))
    d2 = d1 - vol * math.sqrt(t)
    phi = lambda x: 0.5 * math.erfc(-x / math.sqrt(2))  # noqa: E731
    return s0 * phi(d1) - strike * math.exp(-rate * t) * phi(d2)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batches", type=int, default=20)
    ap.add_argument("--batch-size", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    n = args.batch_size
    s0, strike, rate, vol, t = 100.0, 105.0, 0.03, 0.2, 1.0

    rng = xp.random.Generator(args.seed)

    @xp.jit
    def batch():
        # pi: the fraction of uniform points of the unit square inside the quarter circle
        u = rng.uniform(shape=(2, n), dtype=xp.float32)
        inside = xp.sum(xp.astype(u[0] * u[0] + u[1] * u[1] < 1.0, xp.float32))
        # the call's discounted payoff under geometric Brownian motion
        z = rng.normal((n,), dtype=xp.float32)
        st = s0 * xp.exp((rate - vol * vol / 2) * t + vol * math.sqrt(t) * z)
        payoff = math.exp(-rate * t) * xp.maximum(st - strike, 0.0)
        return inside, xp.sum(payoff), xp.sum(payoff * payoff)

    compiles = len(xp.compile_log())
    start = time.perf_counter()
    inside = total = total_sq = 0.0
    for _ in range(args.batches):
        a, b, c = batch()
        inside += float(a)
        total += float(b)
        total_sq += float(c)
    seconds = time.perf_counter() - start
    m = args.batches * n
    pi_hat = 4 * inside / m
    pi_se = 4 * math.sqrt(pi_hat / 4 * (1 - pi_hat / 4) / m)
    price = total / m
    price_se = math.sqrt(max(total_sq / m - price * price, 0.0) / m)
    exact = black_scholes_call(s0, strike, rate, vol, t)
    print(f"samples: {m:,} in {args.batches} batches, {seconds:.2f} s "
          f"({len(xp.compile_log()) - compiles} compile of the jitted batch)")
    print(f"pi    ~ {pi_hat:.5f} +- {pi_se:.5f}   (error {abs(pi_hat - math.pi) / pi_se:.2f} standard errors)")
    print(f"call  ~ {price:.4f} +- {price_se:.4f}   Black-Scholes {exact:.4f} "
          f"(error {abs(price - exact) / price_se:.2f} standard errors)")

    # The functional API with explicit keys: a Generator's draw is the one made with the
    # second half of split(key), the key advancing to the first half.
    key = xp.random.key(args.seed)
    key, sub = xp.random.split(key)
    again = xp.random.uniform(sub, shape=(2, n), dtype=xp.float32)
    first = xp.random.Generator(args.seed).uniform(shape=(2, n), dtype=xp.float32)
    same = bool(xp.all(again == first))
    print(f"functional keys reproduce the Generator's first draw: {same}")


if __name__ == "__main__":
    main()
