"""The gradient of an MLP loss with tlaloc.grad (forward and backward fused into one
program, compiled during setup)."""
from __future__ import annotations

import tlaloc as xp

from ._base import Configured
from ._workloads import block_all, cached_device_array, mlp_host_data, mlp_loss


class MLPGrad(Configured):
    """grad of mean((tanh(X @ W1 + b1) @ W2 + b2 - Y)**2) with respect to (W1, b1, W2, b2);
    sizes in _workloads.MLP_SIZES (batch 256, 128 -> 256 -> 16)."""

    def setup(self):
        self.configure()
        params, X, Y = mlp_host_data()
        self.params = tuple(cached_device_array(p.shape, 10 + i) for i, p in enumerate(params))
        self.X = cached_device_array(X.shape, 20)
        self.Y = cached_device_array(Y.shape, 21)
        self.grad = xp.grad(lambda p, X, Y: mlp_loss(xp, p, X, Y))
        block_all(self.grad(self.params, self.X, self.Y))
        block_all([mlp_loss(xp, self.params, self.X, self.Y)])

    def time_mlp_grad(self):
        block_all(self.grad(self.params, self.X, self.Y))

    def time_mlp_loss(self):
        block_all([mlp_loss(xp, self.params, self.X, self.Y)])
