"""Sequence-number floors that outlive the process: no outbound SA sends a number twice.

An ESP packet's sequence number is its counter-mode IV (:mod:`cryptoapi.esp.encap`): with
AES-GCM, AES-CCM, AES-CTR or ChaCha20-Poly1305 a number sent twice under one key is a
nonce used twice, which leaks the XOR of two plaintexts and, for GCM and Poly1305, the
authentication key (RFC 4106 §3.1, RFC 7634 §2). A peer's replay window (RFC 4303 §3.4.3)
also drops every number it has seen, so a sender that starts again at 1 is not heard.
The keys of an SA outlive the process that used them: they come back from a setkey file,
or from keyd's state. So its sequence numbers must too.

The rule, as a firewall cluster checkpoints its counters: before an SA sends number *n*,
a *floor* of at least *n* is durable for its keys. The floor moves ahead in steps of
``step`` numbers (:data:`STEP`): one SQLite commit (``synchronous=FULL``: the WAL is
synced) each ``step`` packets, none per packet. A process that starts again, after an exit,
``kill -9`` or power loss, sends its first packet after the floor: it skips at most
``step - 1`` numbers it never used (the peer's window accepts any higher number), and it
never repeats one. Should the floor be lost all the same (the file deleted, a host
restored from a snapshot), the IVs still differ: each process xors them with a random
value of its own (:class:`~cryptoapi.esp.state.EspState`), as Linux's ``seqiv`` does.

A floor is kept per SA *keys*, not per SPI: a digest of the SA type, destination, SPI,
algorithms and keys (:func:`fingerprint`; never the keys themselves). An SA added again
with the same keys (a ``setkey -F`` and the same file, a keyd restart) goes on from its
floor; one with new keys starts from 1. Floors are never deleted, because an SA deleted
and added again with its old keys must still go on from it; a row is 24 bytes.

The file is claimed as keyd's is (:mod:`cryptoapi.pfkey.daemon.privatedb`): made mode 0600
and whole, never through a symbolic link, never another user's, one process at a time.
"""

import errno
import hashlib
import os
import sqlite3
import threading
from collections.abc import Callable

from cryptoapi.pfkey.daemon.privatedb import FileKind, claim, connect
from cryptoapi.pfkey.daemon.schema import Transaction
from cryptoapi.pfkey.db.sad import SecurityAssociation
from cryptoapi.pfkey.errors import PfkeyError

STEP = 1 << 16
"""Sequence numbers reserved by one commit: at about 100,000 packets a second, a commit
(a millisecond or so) every 0.65 s; a restart skips at most this many numbers, 1/65,536
of a 32-bit sequence space."""
APPLICATION_ID = 0x45535146  # "ESQF": marks the file as espd's sequence floors
SCHEMA = 1
_CREATE_SQL = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS floors (keys BLOB PRIMARY KEY, floor BLOB NOT NULL);
"""
_DOMAIN = b"cryptoapi esp sequence floor v1\0"
_SELECT = "SELECT floor FROM floors WHERE keys = ?"
_UPSERT = (
    "INSERT INTO floors (keys, floor) VALUES (?, ?) "
    "ON CONFLICT (keys) DO UPDATE SET floor = excluded.floor"
)


def _no_upgrade(db: sqlite3.Connection) -> None:
    """Version 1 is the only one so far: a file of another version is refused."""
    row = db.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone()
    if row is None or row[0] != SCHEMA:
        found = "none" if row is None else row[0]
        raise sqlite3.DatabaseError(f"schema version {found}, this espd reads {SCHEMA}")


FLOOR_FILE = FileKind(
    "sequence floor file", "espd", "sequence floors", APPLICATION_ID, _CREATE_SQL, SCHEMA,
    _no_upgrade,
)  # fmt: skip


def fingerprint(sa: SecurityAssociation) -> bytes:
    """What a floor is kept under: SHA-256 over the SA's identity, algorithms and keys
    (each key with its length, so no two SAs share an encoding)."""
    digest = hashlib.sha256(_DOMAIN)
    numbers = (sa.satype, sa.spi, sa.encrypt, sa.auth)
    lengths = (len(sa.dst), len(sa.encrypt_key), len(sa.auth_key))
    digest.update(b" ".join(b"%d" % n for n in (*numbers, *lengths)) + b"\0")
    for part in (sa.dst, sa.encrypt_key, sa.auth_key):
        digest.update(part)
    return digest.digest()[:16]


class SequenceFloors:
    """The floor file at ``path`` (made if absent), claimed by this process until
    :meth:`close`. Errors are :class:`~cryptoapi.pfkey.errors.PfkeyError` with an errno."""

    def __init__(self, path: str | os.PathLike[str], *, step: int = STEP) -> None:
        if step < 1:
            raise PfkeyError(errno.EINVAL, f"a floor step must be at least 1, not {step}")
        self.path = os.fspath(path)
        self.step = step
        self.on_reserve: Callable[[], None] | None = None
        """Called after each reservation, i.e. once every ``step`` packets of an SA (espd
        makes its next usage report, the key daemon's sequence checkpoint, due at once)."""
        self._lock = threading.Lock()  # one connection: one statement at a time
        self._fd = claim(self.path, FLOOR_FILE)
        try:
            self._db = connect(self.path, self._fd, FLOOR_FILE, "FULL")
        except BaseException:
            os.close(self._fd)
            raise

    def floor(self, keys: bytes) -> int:
        """The highest sequence number that may have been sent under ``keys`` (0: none)."""
        with self._lock:
            row = self._db.execute(_SELECT, (keys,)).fetchone()
        return 0 if row is None else int.from_bytes(row[0], "big")

    def reserve(self, keys: bytes, upto: int) -> None:
        """Make ``upto`` the floor of ``keys``, durably, before any number up to it is
        sent; EIO if it cannot be written (then nothing past the old floor may be)."""
        try:
            with self._lock, Transaction(self._db):
                self._db.execute(_UPSERT, (keys, upto.to_bytes(8, "big")))
        except sqlite3.Error as error:
            raise PfkeyError(errno.EIO, f"cannot write {self.path}: {error}") from None
        if self.on_reserve is not None:
            self.on_reserve()

    def close(self) -> None:
        """Close the file, then release it (the lock goes with the descriptor, last)."""
        if self._fd < 0:
            return
        self._db.close()
        os.close(self._fd)
        self._fd = -1
