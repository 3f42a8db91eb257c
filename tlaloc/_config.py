"""Process-wide settings, read once from the environment and changeable with `tlaloc.config`.

| setting            | environment variable     | default                      |
|--------------------|--------------------------|------------------------------|
| default_device     | TLALOC_DEVICE            | "cpu" (PJRT CPU)             |
| execution          | TLALOC_EXECUTION         | "auto" (tiered, see docs)    |
| max_pending        | TLALOC_MAX_PENDING       | 256: depth of pending graphs |
| compile_cache_dir  | TLALOC_CACHE_DIR         | user cache dir; "" disables  |
| explain_compiles   | TLALOC_EXPLAIN_COMPILES  | off: log why jit compiles    |
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
        self.compile_cache_dir = os.environ.get("TLALOC_CACHE_DIR")
        self.explain_compiles = os.environ.get("TLALOC_EXPLAIN_COMPILES", "") not in ("", "0")

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
            previous[name] = getattr(self, name)
            setattr(self, name, value)
        return previous

    def __repr__(self):
        items = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"tlaloc.config({items})"


config = _Config()
