"""Every function of the 2025.12 namespace (linalg and fft included) and every Array operator
against array-api-strict on the same hypothesis-drawn inputs, on both backends (XLA on PJRT
CPU, forced to compile, and the NumPy reference interpreter). The table of functions, with
each one's argument strategy and comparison, is in _table.py / _table_ext.py; differences
that are intended are listed, with their reasons, in docs/conformance.md."""
import array_api_strict as xs
import pytest
from hypothesis import given, strategies as st

import tlaloc as xp

from ._harness import run_entry
from ._table import all_entries
from .conftest import CONFORMANCE_SETTINGS

ENTRIES = all_entries()


def _ids(entries):
    seen = {}
    out = []
    for e in entries:
        seen[e.name] = seen.get(e.name, 0) + 1
        out.append(e.name if seen[e.name] == 1 else f"{e.name}#{seen[e.name]}")
    return out


@pytest.mark.parametrize("entry", ENTRIES, ids=_ids(ENTRIES))
def test_matches_array_api_strict(entry, backend):
    @CONFORMANCE_SETTINGS
    @given(st.data())
    def check(data):
        drawn = data.draw(entry.args, label="(args, kwargs)")
        run_entry(entry, drawn, backend)

    check()


ARRAY_MEMBERS = [
    "__abs__", "__add__", "__and__", "__array_namespace__", "__bool__", "__complex__",
    "__dlpack__", "__dlpack_device__", "__eq__", "__float__", "__floordiv__", "__ge__",
    "__getitem__", "__gt__", "__index__", "__int__", "__invert__", "__le__", "__lshift__",
    "__lt__", "__matmul__", "__mod__", "__mul__", "__ne__", "__neg__", "__or__", "__pos__",
    "__pow__", "__rshift__", "__setitem__", "__sub__", "__truediv__", "__xor__", "to_device",
    "T", "mT", "device", "dtype", "ndim", "shape", "size",
    # reflected and in-place forms
    "__radd__", "__rsub__", "__rmul__", "__rtruediv__", "__rfloordiv__", "__rmod__",
    "__rpow__", "__rand__", "__ror__", "__rxor__", "__rlshift__", "__rrshift__", "__rmatmul__",
    "__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__", "__imod__",
    "__ipow__", "__iand__", "__ior__", "__ixor__", "__ilshift__", "__irshift__", "__imatmul__",
]
NOT_FUNCTIONS = {"Device", "ArrayAPIStrictFlags", "get_array_api_strict_flags",
                 "set_array_api_strict_flags", "reset_array_api_strict_flags",
                 "__array_api_version__", "__version__", "linalg", "fft",
                 "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                 "uint64", "float32", "float64", "complex64", "complex128"}


def test_every_function_and_operator_has_an_entry():
    """The table covers the whole namespace (as array-api-strict exports it for 2025.12),
    both extensions, and every member of the array object."""
    covered = set()
    for e in ENTRIES:
        covered.add(e.name)
        covered.update(e.covers)
    wanted = {n for n in xs.__all__ if n not in NOT_FUNCTIONS}
    wanted = {("constants" if n in ("e", "pi", "inf", "nan", "newaxis") else n) for n in wanted}
    wanted |= {f"linalg.{n}" for n in xs.linalg.__all__}
    wanted |= {f"fft.{n}" for n in xs.fft.__all__}
    wanted |= {f"Array.{n}" for n in ARRAY_MEMBERS}
    missing = sorted(wanted - covered)
    assert not missing, f"no table entry for {missing}"
    strict_only = {"ArrayAPIStrictFlags", "get_array_api_strict_flags",
                   "set_array_api_strict_flags", "reset_array_api_strict_flags"}
    absent = [n for n in xs.__all__ if n not in strict_only and not hasattr(xp, n)]
    absent += [f"linalg.{n}" for n in xs.linalg.__all__ if not hasattr(xp.linalg, n)]
    absent += [f"fft.{n}" for n in xs.fft.__all__ if not hasattr(xp.fft, n)]
    assert not absent, f"not in tlaloc: {absent}"
