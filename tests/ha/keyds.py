"""Helpers for the HA tests: keyd subprocesses on a PostgreSQL state, PF_KEY requests to
them, and waits that are always bounded."""

import contextlib
import errno
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator

from cryptoapi.pfkey import Message, MsgType, SaType
from cryptoapi.pfkey.daemon.client import PfkeyClient, fields
from cryptoapi.pfkey.daemon.control import query
from tests.pfkey.conftest import AUTH_KEY, sa_message
from tests.pfkey.keyd import WAIT, start_keyd, stop

__all__ = ["AUTH_KEY", "WAIT", "stop"]


@contextlib.contextmanager
def keyd(where: str, name: str, url: str, *extra: str) -> Iterator[subprocess.Popen[bytes]]:
    """A keyd on ``url`` at ``where/name.sock`` (status at ``name.ctl``), stopped after."""
    process = start_keyd(f"{where}/{name}.sock", "--state", url, *extra)
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(WAIT)
        if process.stderr is not None:
            process.stderr.close()


def client(where: str, name: str) -> PfkeyClient:
    return PfkeyClient(f"{where}/{name}.sock", timeout=WAIT)


def add(pfkey: PfkeyClient, spi: int, *, type: int = MsgType.ADD) -> int:
    """The errno of the reply to an ADD (or another SA message) of ``spi``."""
    return fields(pfkey.request(sa_message(spi, type=type))[0])[1]


def delete(pfkey: PfkeyClient, spi: int) -> int:
    return add(pfkey, spi, type=MsgType.DELETE)


def dump(pfkey: PfkeyClient) -> list[bytes]:
    """The SAs a DUMP lists (the messages, without their headers' seq and pid)."""
    replies = pfkey.request(Message(MsgType.DUMP, SaType.ESP, 0, 0, 0, ()))
    if fields(replies[0])[1] == errno.ENOENT:
        return []
    return [reply[16:] for reply in replies]


def status(where: str, name: str) -> dict:
    """The keyd's status (its status socket is made just after its PF_KEY socket: waited
    for)."""
    deadline = time.monotonic() + WAIT
    while True:
        try:
            return query(f"{where}/{name}.ctl")
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def role(where: str, name: str) -> str:
    return status(where, name)["ha"]["role"]


def wait_for(condition: Callable[[], bool], timeout: float = WAIT, step: float = 0.01) -> float:
    """Seconds until ``condition()`` held (AssertionError after ``timeout``)."""
    start = time.monotonic()
    while not condition():
        if time.monotonic() - start > timeout:
            raise AssertionError(f"not within {timeout} s: {condition}")
        time.sleep(step)
    return time.monotonic() - start


def kill9(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGKILL)
    process.wait(WAIT)


def setkey(where: str, name: str, *args: str, script: str = "") -> str:
    """Run setkey against the keyd (a script on standard input with ``-c``); its output."""
    done = subprocess.run(
        [sys.executable, "-m", "cryptoapi", "setkey", "--socket", f"{where}/{name}.sock", *args],
        input=script.encode(),
        check=True,
        capture_output=True,
        timeout=WAIT,
        env=dict(os.environ, CRYPTOAPI_SELFTESTS="off"),
    )
    return done.stdout.decode()
