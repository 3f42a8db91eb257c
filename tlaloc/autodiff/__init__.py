"""Derivatives over the recorded graph (see docs/derivatives.md)."""
from .api import (checkpoint, custom_jvp, custom_vjp, grad, hessian, jacfwd, jacobian, jacrev,
                  jvp, stop_gradient, value_and_grad, vjp)

__all__ = ["checkpoint", "custom_jvp", "custom_vjp", "grad", "hessian", "jacfwd", "jacobian",
           "jacrev", "jvp", "stop_gradient", "value_and_grad", "vjp"]
