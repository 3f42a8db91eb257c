"""`__array_namespace_info__`: what this implementation offers."""
from __future__ import annotations

from .. import _dtypes as dt
from .._devices import available_devices, default_device, device as as_device

_KINDS = {
    "bool": (dt.bool,),
    "signed integer": dt.SIGNED,
    "unsigned integer": dt.UNSIGNED,
    "integral": dt.INTEGER,
    "real floating": (dt.float32, dt.float64),
    "complex floating": dt.COMPLEX,
    "numeric": dt.INTEGER + (dt.float32, dt.float64) + dt.COMPLEX,
}


class Info:
    def capabilities(self):
        return {"boolean indexing": False, "data-dependent shapes": False, "max dimensions": None}

    def default_device(self):
        return default_device()

    def default_dtypes(self, *, device=None):
        if device is not None:
            _device("default_dtypes", device)  # validates
        return dt.DEFAULTS.as_dict()

    def devices(self):
        return tuple(available_devices())  # a tuple since 2025.12

    def dtypes(self, *, device=None, kind=None):
        """The standard's dtypes (float16 and bfloat16 are extensions, listed only when
        asked for by name through `kind`)."""
        if device is not None:
            _device("dtypes", device)
        standard = (dt.bool,) + _KINDS["numeric"]
        if kind is None:
            group = standard
        elif isinstance(kind, str) and kind in _KINDS:
            group = _KINDS[kind]
        else:
            group = tuple(d for d in standard if dt.isdtype(d, kind))
        return {d.name: d for d in group}


def __array_namespace_info__():
    return Info()


def _device(name, device):
    try:
        return as_device(device)
    except (TypeError, ValueError) as e:
        raise type(e)(f"{name}: {e}") from None
