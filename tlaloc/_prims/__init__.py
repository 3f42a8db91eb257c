"""All primitives. Importing this package declares them in `core.REGISTRY`."""
from . import core, elementwise, reduce, shape  # noqa: F401
from . import indexing, scan, sort  # noqa: F401
from . import fft, linalg, special  # noqa: F401 (special: erf, lgamma, ...; tlaloc.special
#                                    itself is imported on first use)
from . import control  # noqa: F401
from . import sharding  # noqa: F401
from .core import REGISTRY, Primitive

__all__ = ["REGISTRY", "Primitive"]
