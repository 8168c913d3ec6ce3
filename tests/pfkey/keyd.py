"""Helpers for the key daemon tests: short socket paths, a daemon in a thread or in a
subprocess, and waits that are always bounded."""

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from typing import Any

from cryptoapi.pfkey import KeyManager
from cryptoapi.pfkey.daemon.client import PfkeyClient
from cryptoapi.pfkey.daemon.server import KeyDaemon
from cryptoapi.pfkey.errors import PfkeyError

WAIT = 20.0
"""The longest any test waits for anything (start, reply, exit)."""


@contextlib.contextmanager
def short_dir() -> Iterator[str]:
    """A private directory under /tmp (AF_UNIX paths must stay under 108 bytes)."""
    where = tempfile.mkdtemp(prefix="kd", dir="/tmp")
    try:
        yield where
    finally:
        shutil.rmtree(where, ignore_errors=True)


@contextlib.contextmanager
def daemon_thread(
    km: KeyManager, path: str, store: Any = None, gate: Any = None
) -> Iterator[KeyDaemon]:
    """A KeyDaemon serving in a thread; stopped (and checked stopped) on exit."""
    daemon = KeyDaemon(km, path, store=store, gate=gate)
    thread = threading.Thread(target=daemon.serve_forever, name="keyd", daemon=True)
    thread.start()
    try:
        yield daemon
    finally:
        daemon.stop()
        thread.join(WAIT)
        assert not thread.is_alive(), "the daemon thread did not stop"


def keyd_command() -> list[str]:
    """``python -m cryptoapi keyd``."""
    return [sys.executable, "-m", "cryptoapi", "keyd"]


def start_keyd(path: str, *extra: str) -> subprocess.Popen[bytes]:
    """A key daemon subprocess, returned once its socket accepts connections."""
    env = dict(os.environ, CRYPTOAPI_SELFTESTS="off")
    process = subprocess.Popen(
        [*keyd_command(), "--socket", path, *extra],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    wait_listening(path, process)
    return process


def wait_listening(path: str, process: "subprocess.Popen[Any]") -> None:
    """Until the daemon's socket at ``path`` takes a connection (bounded); AssertionError,
    with what it printed, if it exits first or does not start in time (then stopped)."""
    deadline = time.monotonic() + WAIT
    while True:
        try:
            PfkeyClient(path, timeout=1).close()
            return
        except PfkeyError:
            if process.poll() is not None:
                _, err = process.communicate(timeout=WAIT)
                text = err.decode() if isinstance(err, bytes) else err
                raise AssertionError(f"keyd exited: {text}") from None
            if time.monotonic() > deadline:
                stop(process)
                raise AssertionError("keyd did not start in time") from None
            time.sleep(0.02)


def stop(process: subprocess.Popen[bytes], sig: int = signal.SIGTERM) -> int:
    """Signal the daemon and wait (bounded) for it to exit; its exit status."""
    if process.poll() is None:
        process.send_signal(sig)
    try:
        return process.wait(WAIT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(WAIT)
        raise AssertionError("keyd did not exit in time") from None
    finally:
        if process.stderr is not None:
            process.stderr.close()


@contextlib.contextmanager
def running_keyd(*extra: str) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A key daemon on a socket in a short directory of its own while the block runs:
    (socket path, process); stopped after, whatever happens (stopping twice is harmless)."""
    with short_dir() as where:
        path = os.path.join(where, "keyd.sock")
        process = start_keyd(path, *extra)
        try:
            yield path, process
        finally:
            stop(process)
