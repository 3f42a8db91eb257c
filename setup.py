"""The build: tlaloc is a pure-Python package; where Cython and a C compiler are at hand, the
modules on the per-call path (recording, dispatch, plans; `NATIVE_MODULES`) are also compiled
to extension modules, which Python then imports in place of their sources (docs/native.md).

The sources stay the reference: `TLALOC_PURE_PYTHON=1` imports them instead, and a build that
fails (no compiler, a Cython error) still installs the pure-Python package; tlaloc then warns
once at import. The build writes `tlaloc/_native.json`, which lists each compiled module with
the digest of the source it was compiled from (a module whose source has changed since is
imported from its source: see tlaloc/_native.py) and any failure.
"""
import json
import os
import sys
import zlib

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

NATIVE_MODULES = [
    "tlaloc._array",
    "tlaloc._context",
    "tlaloc._devices",
    "tlaloc._dtypes",
    "tlaloc._graph",
    "tlaloc._jit",
    "tlaloc._operators",
    "tlaloc._runtime_api",
    "tlaloc._tree",
    "tlaloc._api._core",
    "tlaloc._api._ops",
    "tlaloc._api.array_methods",
    "tlaloc._api.creation",
    "tlaloc._api.data_types",
    "tlaloc._api.elementwise",
    "tlaloc._api.indexing",
    "tlaloc._api.linear_algebra",
    "tlaloc._api.manipulation",
    "tlaloc._api.searching",
    "tlaloc._api.set_functions",
    "tlaloc._api.sorting",
    "tlaloc._api.statistical",
    "tlaloc._api.utility",
    "tlaloc._api.views",
    "tlaloc._prims.core",
    "tlaloc._prims.elementwise",
    "tlaloc._prims.formula",
    "tlaloc._prims.indexing",
    "tlaloc._prims.lax",
    "tlaloc._prims.linalg",
    "tlaloc._prims.reduce",
    "tlaloc._prims.shape",
    "tlaloc._prims.sort",
    "tlaloc.backends._fpenv",
    "tlaloc.backends._untrack",
    "tlaloc.backends.interpreter",
    "tlaloc.backends.pjrt",
    "tlaloc.backends.tiers",
    "tlaloc.linalg",
]

HERE = os.path.dirname(os.path.abspath(__file__))
MANIFEST = "_native.json"


def source_of(module: str) -> str:
    return os.path.join(*module.split(".")) + ".py"


def digest(path: str) -> str:
    """CRC-32 of a module's source followed by its Cython declarations (`.pxd`), if any
    (tlaloc/_native.py checks it at import, where a cheap check matters)."""
    crc = 0
    for p in (path, path[:-3] + ".pxd"):
        if p == path or os.path.exists(os.path.join(HERE, p)):
            with open(os.path.join(HERE, p), "rb") as f:
                crc = zlib.crc32(f.read(), crc)
    return f"crc32:{crc:08x}"


def cimports(module: str) -> list:
    """The tlaloc modules whose types a module's `.pxd` cimports: its compiled build reads
    their objects' fields at fixed offsets, so it may run only beside their compiled builds
    (tlaloc/_native.py holds it to its source otherwise)."""
    pxd = os.path.join(HERE, source_of(module)[:-3] + ".pxd")
    if not os.path.exists(pxd):
        return []
    with open(pxd) as f:
        return sorted({line.split()[1] for line in f
                       if line.startswith("from tlaloc.") and " cimport " in line})


class OptionalBuildExt(build_ext):
    """build_ext that never fails the install: a module that does not compile is left to
    its source, and the reason goes into the manifest (and so into tlaloc's one warning)."""

    def finalize_options(self):
        super().finalize_options()
        if self.parallel is None:       # one compiler process per core
            self.parallel = os.cpu_count() or 1

    def run(self):
        self.built, self.failed = {}, {}
        if cython_error is not None:
            self.failed["*"] = cython_error
        else:
            try:
                super().run()
            except Exception as e:    # e.g. no compiler at all (setuptools' CCompilerError)
                self.failed["*"] = f"{type(e).__name__}: {e}"
        self.write_manifest()

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as e:
            self.failed[ext.name] = f"{type(e).__name__}: {e}"
            print(f"warning: tlaloc: {ext.name} did not compile ({e}); it runs as Python",
                  file=sys.stderr)
        else:
            self.built[ext.name] = digest(source_of(ext.name))

    def write_manifest(self):
        if "*" in self.failed:
            self.built = {}
        package_dir = os.path.dirname(self.get_ext_fullpath("tlaloc._native_probe"))
        os.makedirs(package_dir, exist_ok=True)
        with open(os.path.join(package_dir, MANIFEST), "w") as f:
            json.dump({"modules": self.built, "failed": self.failed,
                       "cimports": {m: deps for m in self.built if (deps := cimports(m))}},
                      f, indent=1, sort_keys=True)

    def get_outputs(self):
        # the manifest is a build output: it belongs in the wheel
        package_dir = os.path.dirname(self.get_ext_fullpath("tlaloc._native_probe"))
        return super().get_outputs() + [os.path.join(package_dir, MANIFEST)]


def native_extensions():
    """The extensions, or ([], why not) when Cython is not importable."""
    try:
        from Cython.Build import cythonize
    except ImportError as e:
        return [], f"Cython is not installed ({e})"
    # No debug information (Python's own flags ask for -g): the extensions are a fifth of
    # the size (8.8 MB against 51 MB), and compile faster; their symbols stay, for profilers.
    # MSVC takes no -g0, and gives no debug information unless asked.
    flags = [] if sys.platform == "win32" else ["-g0"]
    extensions = [Extension(m, [source_of(m)], extra_compile_args=flags)
                  for m in NATIVE_MODULES]
    try:
        return cythonize(extensions, quiet=True, build_dir=os.path.join("build", "cython"),
                         compiler_directives={
                             "language_level": 3,
                             "binding": True,   # functions keep signatures, __doc__, __module__
                             # annotations are documentation, as in Python: Cython must not
                             # turn `x: float` into a C double or `t: tuple` into an exact check
                             "annotation_typing": False,
                         }), None
    except Exception as e:            # a Cython compile error: every module stays Python
        return [], f"Cython failed: {type(e).__name__}: {e}"


extensions, cython_error = native_extensions()
if cython_error is not None:
    print(f"warning: tlaloc: {cython_error}; the package installs as pure Python",
          file=sys.stderr)

setup(ext_modules=extensions or [Extension("tlaloc._native_probe", [])],
      cmdclass={"build_ext": OptionalBuildExt})
