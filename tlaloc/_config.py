"""Process-wide settings, read once from the environment and changeable with `tlaloc.config`.

| setting            | environment variable     | default                      |
|--------------------|--------------------------|------------------------------|
| default_device     | TLALOC_DEVICE            | "cpu" (PJRT CPU)             |
| execution          | TLALOC_EXECUTION         | "auto" (tiered, see docs)    |
| max_pending        | TLALOC_MAX_PENDING       | 256: depth of pending graphs |
| eager_max_size     | TLALOC_EAGER_MAX_SIZE    | 16384: elements up to which  |
|                    |                          | host operations run at once  |
| compile_cache_dir  | TLALOC_CACHE_DIR         | user cache dir; "" disables  |
| explain_compiles   | TLALOC_EXPLAIN_COMPILES  | off: log why jit compiles    |
| cpu_devices        | TLALOC_CPU_DEVICES       | None: one CPU device (fixed  |
|                    |                          | when the CPU is first used)  |
"""
from __future__ import annotations

import os

VERSION = "0.1.0"   # tlaloc.__version__

EXECUTION_MODES = ("auto", "compiled", "interpreted")


class _Config:
    def __init__(self):
        self.default_device = os.environ.get("TLALOC_DEVICE", "cpu")
        self.execution = os.environ.get("TLALOC_EXECUTION", "auto")
        if self.execution not in EXECUTION_MODES:
            raise ValueError(f"TLALOC_EXECUTION must be one of {EXECUTION_MODES}, "
                             f"got {self.execution!r}")
        self.max_pending = int(os.environ.get("TLALOC_MAX_PENDING", "256"))
        # an operation whose operands are computed host arrays (CPU, interpreter) and whose
        # operands and result have at most this many elements runs as it is recorded
        # (backends/interpreter.py, run_now); 0 keeps every operation lazy
        self.eager_max_size = int(os.environ.get("TLALOC_EAGER_MAX_SIZE", "16384"))
        self.compile_cache_dir = os.environ.get("TLALOC_CACHE_DIR")
        self.explain_compiles = os.environ.get("TLALOC_EXPLAIN_COMPILES", "") not in ("", "0")
        devices = os.environ.get("TLALOC_CPU_DEVICES")
        self.cpu_devices = _cpu_devices(int(devices) if devices else None, "TLALOC_CPU_DEVICES")

    def update(self, **settings):
        """Change settings; returns the previous values so a caller can restore them."""
        previous = {}
        for name, value in settings.items():
            if not hasattr(self, name) or name.startswith("_"):
                raise TypeError(f"tlaloc.config.update: unknown setting {name!r}")
            if name == "execution" and value not in EXECUTION_MODES:
                raise ValueError(f"execution must be one of {EXECUTION_MODES}, got {value!r}")
            if name == "max_pending" and (not isinstance(value, int) or value < 1):
                raise ValueError(f"max_pending must be a positive int, got {value!r}")
            if name == "eager_max_size" and (not isinstance(value, int) or isinstance(value, bool)
                                             or value < 0):
                raise ValueError(f"eager_max_size must be an int >= 0, got {value!r}")
            if name == "cpu_devices":
                value = _cpu_devices(value, "cpu_devices")
                if _cpu_devices_fixed and value != self.cpu_devices:
                    raise RuntimeError("tlaloc.config.update: cpu_devices is fixed once the CPU "
                                       f"is first used (it is {self.cpu_devices}); set it (or "
                                       "TLALOC_CPU_DEVICES) before making any array")
            previous[name] = getattr(self, name)
            setattr(self, name, value)
        return previous

    def __repr__(self):
        items = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"tlaloc.config({items})"


_cpu_devices_fixed = False   # the CPU client exists: its device count can no longer change


def fix_cpu_devices() -> None:
    """Called by tlaloc/backends/_jaxlib.py when it makes the CPU client."""
    global _cpu_devices_fixed
    _cpu_devices_fixed = True


def cpu_devices_fixed() -> bool:
    return _cpu_devices_fixed


def _cpu_devices(value, what):
    """A CPU device count (None: the platform's default, one)."""
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
        raise ValueError(f"{what} must be a positive int, got {value!r}")
    return value


config = _Config()
