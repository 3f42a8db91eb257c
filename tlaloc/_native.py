"""Which of tlaloc's modules run compiled (docs/native.md).

The build compiles the modules on the per-call path with Cython (setup.py) and lists them,
with the digest of each one's source, in `_native.json` beside this file. Python imports an
extension module in place of the source of the same name; this module, imported first by
the package, decides per module whether that may happen:

* `TLALOC_PURE_PYTHON=1` (any value but empty or 0): every module is imported from source;
* a module whose source no longer has the digest it was compiled from (an edit in a
  development checkout) is imported from source, with one warning naming the rebuild;
* a build that failed left the package pure Python, with one warning at import.

Without a manifest (a source checkout on `sys.path`, never built) everything is Python and
nothing is said.
"""
import ast
import importlib.machinery
import importlib.util
import os
import sys
import warnings
import zlib

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))

PURE_PYTHON = os.environ.get("TLALOC_PURE_PYTHON", "") not in ("", "0")


def _source_path(module: str) -> str:
    return os.path.join(_PACKAGE_DIR, *module.split(".")[1:]) + ".py"


def _digest(path: str):
    """CRC-32 of a module's source followed by its Cython declarations (`.pxd`), as setup.py
    computes it; None without a source. A check for edits, not for tampering: zlib is loaded
    already (numpy imports it), hashlib would cost milliseconds at every `import tlaloc`."""
    try:
        with open(path, "rb") as f:
            crc = zlib.crc32(f.read())
    except OSError:
        return None
    try:
        with open(path[:-3] + ".pxd", "rb") as f:
            crc = zlib.crc32(f.read(), crc)
    except OSError:
        pass
    return f"crc32:{crc:08x}"


def _read_manifest():
    # The manifest is JSON of dicts of strings, which is also a Python literal: ast is loaded
    # already (numpy imports it), json is not.
    try:
        with open(os.path.join(_PACKAGE_DIR, "_native.json")) as f:
            manifest = ast.literal_eval(f.read())
    except (OSError, ValueError, SyntaxError):
        return None
    return manifest if isinstance(manifest, dict) else None


class _FromSource:
    """A meta-path finder that imports the listed tlaloc modules from their sources, ahead
    of the extension modules compiled from them."""

    def __init__(self, modules):
        self.modules = frozenset(modules)

    def find_spec(self, name, path=None, target=None):
        if name not in self.modules:
            return None
        loader = importlib.machinery.SourceFileLoader(name, _source_path(name))
        return importlib.util.spec_from_file_location(name, _source_path(name), loader=loader)


def _decide():
    """(compiled modules, modules held to their source, what to warn about or None)."""
    manifest = _read_manifest()
    if manifest is None:
        return frozenset(), frozenset(), None
    built = manifest.get("modules", {})
    if PURE_PYTHON:
        return frozenset(), frozenset(built), None
    stale = sorted(m for m, d in built.items() if _digest(_source_path(m)) != d)
    held = _with_dependents(set(stale), built, manifest.get("cimports", {}))
    compiled = frozenset(built) - held
    warning = None
    if stale:
        dependents = sorted(held - set(stale))
        also = (f", as do the modules compiled against them ({', '.join(dependents)})"
                if dependents else "")
        warning = (f"tlaloc: {len(stale)} compiled module(s) are older than their sources "
                   f"({', '.join(stale)}) and run as Python{also}; rebuild with "
                   "`pip install -e .`")
    elif manifest.get("failed"):
        why = "; ".join(f"{m}: {e}" for m, e in sorted(manifest["failed"].items()))
        warning = (f"tlaloc: the compiled recording path did not build ({why}); "
                   "running as pure Python (slower recording)")
    return compiled, frozenset(held), warning


def _with_dependents(held: set, built: dict, cimports: dict) -> set:
    """`held` and every compiled module that cimports (reads the fields of) a module that is
    held or did not compile: a compiled module beside the Python build of a type it was
    compiled against would read that type's fields at the wrong offsets."""
    grew = True
    while grew:
        grew = False
        for m, deps in cimports.items():
            if m in built and m not in held and any(d in held or d not in built for d in deps):
                held.add(m)
                grew = True
    return held


COMPILED, _HELD_TO_SOURCE, _WARNING = _decide()

if _HELD_TO_SOURCE:
    sys.meta_path.insert(0, _FromSource(_HELD_TO_SOURCE))
if _WARNING is not None:
    warnings.warn(_WARNING, RuntimeWarning, stacklevel=3)


def native_modules() -> tuple:
    """The tlaloc modules running as compiled extension modules in this process."""
    return tuple(sorted(m for m in COMPILED
                        if getattr(sys.modules.get(m), "__file__", "").endswith(
                            tuple(importlib.machinery.EXTENSION_SUFFIXES))))
