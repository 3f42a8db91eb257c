"""The persistent compile cache: serialized executables on disk.

An entry's name is the SHA-256 of the program's StableHLO text together with everything the
executable depends on besides it (jaxlib version, platform and its version, device kind,
XLA_FLAGS, host CPU model; see `Runtime.cache_identity`). Each file holds a header, the
SHA-256 of its name and payload together, and the payload; an entry that is short, corrupt,
that jaxlib refuses, or that is another entry's file (copied or renamed over this one: a
valid executable of another program, which would compute that program's values) is ignored
(and later overwritten), never trusted. Writes go to a temporary file that is renamed into
place, so concurrent processes never see half an entry.

Location: config.compile_cache_dir (env TLALOC_CACHE_DIR); unset means
$XDG_CACHE_HOME/tlaloc or ~/.cache/tlaloc; the empty string disables the cache.
Only load a cache directory you trust: an executable is machine code.
"""
from __future__ import annotations

import os
import pathlib
import tempfile

from .._config import config

_MAGIC = b"tlaloc-exe-2\n"   # -1 entries hashed the payload alone: they are not read


def cache_dir():
    setting = config.compile_cache_dir
    if setting == "":
        return None
    if setting is None:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        setting = os.path.join(base, "tlaloc")
    return pathlib.Path(setting)


class DiskCache:
    def __init__(self, identity: str):
        self.identity = identity

    def _path(self, text: str):
        root = cache_dir()
        if root is None:
            return None
        import hashlib   # here: a process that only interprets never needs it
        digest = hashlib.sha256((self.identity + "\0" + text).encode()).hexdigest()
        return root / digest[:2] / f"{digest}.bin"

    @staticmethod
    def _checksum(path, payload: bytes) -> bytes:
        """The header's SHA-256: of the entry's name (its key's digest) and its payload."""
        import hashlib
        return hashlib.sha256(path.stem.encode() + b"\0" + payload).digest()

    def load(self, text: str, runtime):
        path = self._path(text)
        if path is None:
            return None
        try:
            data = path.read_bytes()
        except OSError:
            return None
        head = len(_MAGIC) + 32
        if len(data) < head or not data.startswith(_MAGIC):
            return None
        payload = data[head:]
        if self._checksum(path, payload) != data[len(_MAGIC):head]:
            return None
        try:
            return runtime.deserialize(payload)
        except Exception:  # an entry jaxlib refuses is as good as absent
            return None

    def store(self, text: str, runtime, executable) -> None:
        path = self._path(text)
        if path is None:
            return
        try:
            payload = runtime.serialize(executable)
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            with os.fdopen(fd, "wb") as f:
                f.write(_MAGIC + self._checksum(path, payload) + payload)
            os.replace(tmp, path)
        except Exception:
            # A cache that cannot be written (read-only home, full disk, an executable that
            # cannot be serialized) only costs a recompile next time.
            try:
                os.unlink(tmp)
            except Exception:
                pass
