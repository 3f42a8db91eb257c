"""Lowering of recorded programs to StableHLO text."""
from .stablehlo import lower_program, tensor_type, scalar_literal

__all__ = ["lower_program", "tensor_type", "scalar_literal"]
