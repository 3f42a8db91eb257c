"""A first look at tlaloc: ordinary Array API code, computed lazily.

Run: python examples/quickstart.py
"""
import numpy as np

import tlaloc as xp


def standardize(x, xp):
    """Code written against the standard: works on NumPy, tlaloc, or any other namespace."""
    mean = xp.mean(x, axis=0)
    std = xp.std(x, axis=0, correction=1)
    return (x - mean) / std


def main():
    rng = np.random.default_rng(0)
    data = rng.normal(loc=3.0, scale=2.0, size=(20_000, 4)).astype(np.float32)

    x = xp.asarray(data)                       # a tlaloc array (float32, on the CPU)
    z = standardize(x, xp)                     # recorded: nothing has been computed yet
    # (operations on arrays of at most 16,384 elements whose operands are computed run at
    # once instead, as NumPy's do: config.eager_max_size; here x is larger)
    cov = z.T @ z / (z.shape[0] - 1)           # still recorded; shapes are known already
    print("shape of cov:", cov.shape, "dtype:", cov.dtype)

    text = xp.stablehlo(cov)                   # the program, as StableHLO text (computes nothing)
    lines = text.splitlines()
    print(f"program that will compute cov ({len(lines)} lines of StableHLO; first 6):")
    print("\n".join(lines[:6]))
    print(f"  ... {len(lines) - 6} more lines")
    print("  (it returns two values: cov, and z, because this code still holds z and uses it")
    print("   again below: intermediates you keep are returned, never computed twice)\n")

    print("correlation matrix:")
    print(cov)                                 # printing evaluates: one fused program
    expected = np.corrcoef(data, rowvar=False)
    print("max difference from NumPy's corrcoef:", float(np.max(np.abs(np.asarray(cov) - expected))))

    # A loop whose scalars change every step records the same program for every 50 steps
    # (Python scalars are program inputs; the very first round differs, since w starts as a
    # constant). The default mode runs a structure in the NumPy interpreter until its runs
    # have cost about what compiling it would (here a few ms against ~0.1 s: it never
    # compiles); with execution="compiled" (TLALOC_EXECUTION=compiled) later rounds run one
    # cached executable.
    w = xp.zeros((4,), dtype=xp.float32)
    for step in range(300):
        lr = 0.5 / (1 + step)
        w = w - lr * (w - xp.mean(z, axis=0) - 1.0)
        if step % 50 == 49:
            print(f"step {step + 1}: w (tends to mean(z) + 1 = 1) = {w}")
            if step == 149:
                xp.wait_for_compiles()   # only so that this demo's output is deterministic
    print("rounds of 50 steps ran as one program each; how they ran:")
    print(xp.cache_info())     # a dict whose printout explains each count


if __name__ == "__main__":
    main()
