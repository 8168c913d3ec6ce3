"""Helpers for the HA tests: keyd subprocesses on a PostgreSQL state, PF_KEY requests to
them, and waits that are always bounded."""

import contextlib
import errno
import os
import signal
import struct
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from cryptoapi.pfkey import Message, MsgType, SaType
from cryptoapi.pfkey.daemon.client import PfkeyClient, fields
from cryptoapi.pfkey.daemon.control import query
from cryptoapi.pfkey.wire.constants import ExtType
from cryptoapi.pfkey.wire.extensions import Lifetime, Sa
from cryptoapi.pfkey.wire.message import decode
from cryptoapi.pfkey.wire.x_extensions import Sa2
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
    """The SAs a DUMP lists (the messages, without their headers' seq and pid), without
    what a keyd raises whenever it becomes active: ``sadb_x_sa2_sequence``, the checkpoint,
    and the current lifetime's packets and bytes (:func:`dump_with_sequences` keeps them)."""
    return [_zero_raised(entry) for entry in dump_with_sequences(pfkey)]


def held(pfkey: PfkeyClient) -> dict[int, tuple[object, ...]]:
    """What each dumped SA is, by SPI: its extensions but its use (the current lifetime)
    and its checkpoint (sa2's sequence), which traffic and takeovers move."""
    return {
        message.get(ExtType.SA, Sa).spi: tuple(  # type: ignore[union-attr]
            replace(ext, sequence=0) if isinstance(ext, Sa2) else ext
            for ext in message.extensions
            if ext.exttype != ExtType.LIFETIME_CURRENT
        )
        for message in _dumped(pfkey)
    }


def dump_with_sequences(pfkey: PfkeyClient) -> list[bytes]:
    replies = pfkey.request(Message(MsgType.DUMP, SaType.ESP, 0, 0, 0, ()))
    if fields(replies[0])[1] == errno.ENOENT:
        return []
    return [reply[16:] for reply in replies]


def sequences(pfkey: PfkeyClient) -> dict[int, int]:
    """Each dumped SA's ``sadb_x_sa2_sequence``, by SPI."""
    return _by_spi(pfkey, ExtType.X_SA2, Sa2, "sequence")


def packets(pfkey: PfkeyClient) -> dict[int, int]:
    """Each dumped SA's packets (``sadb_lifetime_allocations`` of its current lifetime)."""
    return _by_spi(pfkey, ExtType.LIFETIME_CURRENT, Lifetime, "allocations")


def _by_spi(pfkey: PfkeyClient, exttype: int, kind: type, name: str) -> dict[int, int]:
    """The field ``name`` of each dumped SA's extension ``exttype`` (a ``kind``), by SPI."""
    found: dict[int, int] = {}
    for message in _dumped(pfkey):
        sa, extension = message.get(ExtType.SA, Sa), message.get(exttype, kind)
        if sa is not None and extension is not None:
            found[sa.spi] = getattr(extension, name)
    return found


def _dumped(pfkey: PfkeyClient) -> list[Message]:
    replies = pfkey.request(Message(MsgType.DUMP, SaType.ESP, 0, 0, 0, ()))
    return [] if fields(replies[0])[1] == errno.ENOENT else [decode(r) for r in replies]


def _zero_raised(entry: bytes) -> bytes:
    """``entry`` (extensions) with its sa2's sequence (bytes 8-12 of the extension) and its
    current lifetime's allocations and bytes (bytes 4-16) zeroed."""
    raised = {ExtType.X_SA2: (8, 12), ExtType.LIFETIME_CURRENT: (4, 16)}
    start, data = 0, bytearray(entry)
    while start < len(data):
        words, exttype = struct.unpack_from("=HH", data, start)
        if exttype in raised:
            low, high = raised[exttype]
            data[start + low : start + high] = bytes(high - low)
        start += words * 8
    return bytes(data)


def status(where: str, name: str) -> dict[str, Any]:
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
    return str(status(where, name)["ha"]["role"])


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
