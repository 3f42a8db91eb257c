"""The worker subprocess that runs programs, and the client that drives it.

A crash inside XLA (segfault, SIGFPE, abort) or a hang must not take the fuzzer down, so
programs run in a separate, persistent process that receives requests over a pipe. When it
dies, the client reports the signal and the tail of its stderr (faulthandler prints the
Python stack of a fatal signal there), and starts a fresh one for the next request; a request
that takes longer than its timeout kills it. Every worker is reaped: `close()` (or the
context manager) ends it, and a worker whose parent died exits by itself.

Protocol: length-prefixed pickles; a request is a dict with "kind" ("program" or
"derivative"), a reply is a dict ({"runs": [...]} or {"error": {...}}).
"""
from __future__ import annotations

import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MODULE = __package__ + ".worker"
# the directory the package is imported from ("tests" for the package "fuzz", the repository
# for "tests.fuzz")
ROOT = str(Path(__file__).resolve().parents[len(__package__.split("."))])
RESTART_EVERY = 300          # requests per worker process (bounds memory and leaks)


def _send(fd, obj):
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    data = struct.pack("<Q", len(data)) + data
    while data:
        n = os.write(fd, data)
        data = data[n:]


def _read_exactly(fd, n, deadline=None):
    chunks, got = [], 0
    while got < n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError
        chunk = os.read(fd, min(n - got, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _recv(fd, deadline=None):
    (n,) = struct.unpack("<Q", _read_exactly(fd, 8, deadline))
    return pickle.loads(_read_exactly(fd, n, deadline))


# ================================================================================ client

class Worker:
    """A persistent worker process; `request(msg, timeout)` returns one of
    ("reply", dict), ("crash", description), ("hang", description)."""

    def __init__(self):
        self.proc = None
        self.requests = 0
        self.started = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _start(self):
        down_r, down_w = os.pipe()
        up_r, up_w = os.pipe()
        env = dict(os.environ)
        for var in ("TLALOC_EXECUTION", "TLALOC_DEVICE", "TLALOC_MAX_PENDING"):
            env.pop(var, None)
        env["TLALOC_CACHE_DIR"] = ""          # no persistent cache: every compile is real
        paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
        env["PYTHONPATH"] = os.pathsep.join([ROOT] + paths)
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [sys.executable, "-X", "faulthandler", "-m", MODULE, str(down_r), str(up_w)],
            pass_fds=(down_r, up_w), stdin=subprocess.DEVNULL, stdout=self.log,
            stderr=self.log, env=env, cwd=ROOT)
        os.close(down_r)
        os.close(up_w)
        self.to_child, self.from_child = down_w, up_r
        self.requests = 0
        self.started += 1

    def _log_tail(self, offset, lines=40):
        """What the worker wrote since `offset`: from faulthandler's report of a fatal
        signal (the crashing thread comes first) when there is one, else the last lines."""
        self.log.seek(offset)
        text = self.log.read().decode("utf-8", "replace").splitlines()
        fatal = [i for i, line in enumerate(text) if line.startswith("Fatal Python error")]
        if fatal:
            return "\n".join(text[fatal[0]:fatal[0] + lines])
        return "\n".join(text[-lines:])

    def request(self, msg, timeout=60.0):
        if self.proc is not None and self.requests >= RESTART_EVERY:
            self.close()
        if self.proc is None:
            self._start()
        self.requests += 1
        self.log.seek(0, os.SEEK_END)
        offset = self.log.tell()
        try:
            _send(self.to_child, msg)
            return "reply", _recv(self.from_child, time.monotonic() + timeout)
        except TimeoutError:
            self._kill()
            tail = self._log_tail(offset)
            return "hang", f"no reply after {timeout:.0f} s (worker killed)\n{tail}"
        except (EOFError, BrokenPipeError, OSError):
            code = self._reap()
            return "crash", f"worker died: {describe_exit(code)}\n{self._log_tail(offset)}"

    def _reap(self):
        code = self.proc.wait()
        self._forget()
        return code

    def _kill(self):
        self.proc.kill()
        self.proc.wait()
        self._forget()

    def _forget(self):
        for fd in (self.to_child, self.from_child):
            try:
                os.close(fd)
            except OSError:
                pass
        self.proc = None

    def close(self):
        """End the worker (it exits when its request pipe closes) and reap it."""
        if self.proc is None:
            return
        try:
            os.close(self.to_child)
        except OSError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        try:
            os.close(self.from_child)
        except OSError:
            pass
        self.proc = None


def describe_exit(code) -> str:
    if code is not None and code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit status {code}"


# ================================================================================ server

def _watch_parent():
    """Exit when the parent goes away (a hung program would otherwise outlive it)."""
    import threading
    parent = os.getppid()

    def watch():
        while True:
            time.sleep(1.0)
            if os.getppid() != parent:
                os._exit(3)
    threading.Thread(target=watch, daemon=True).start()


def serve(read_fd, write_fd):
    import numpy as np
    np.seterr(all="ignore")
    _watch_parent()
    from . import execute
    while True:
        try:
            msg = _recv(read_fd)
        except EOFError:
            return
        try:
            reply = execute.handle(msg)
        except BaseException as exc:      # noqa: BLE001 - the reply carries any failure
            reply = {"error": execute.describe_exception(exc)}
        _send(write_fd, reply)


if __name__ == "__main__":
    serve(int(sys.argv[1]), int(sys.argv[2]))
