"""Durable key daemon state: the SAs and policies of a key manager in one SQLite file.

The daemon calls :meth:`StateStore.commit` after handling a batch of messages and before it
sends any reply, so every change a client has seen acknowledged is on disk: the SQLite
file is in WAL mode with ``synchronous=FULL`` by default, which syncs the WAL at each commit
and so survives a crash of the machine, not only of the daemon. ``synchronous=NORMAL``
(``--sync normal``) syncs only at checkpoints: a commit then survives the daemon being
killed (``kill -9``; the WAL is in the OS's hands) but not power loss.

What changed is found without scanning: the manager's SA dict is replaced by a
:class:`TrackedDict` that notes the keys assigned or deleted, and the SPD notes the indexes
it inserts or removes. A commit writes the current state of just those. Usage counters that
only :meth:`KeyManager.account` changes, and the DYING state a soft lifetime sets in place,
are not tracked: no socket message changes them, and a soft add-time limit fires again after
a restart, so the state comes back.

The file holds key material: it is created mode 0600 (SQLite gives its WAL and shared-memory
files the same mode) and deleted rows are overwritten (``secure_delete``).
"""

import errno
import os
import sqlite3
import struct
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from cryptoapi.pfkey.constants import ExtType, MsgType, SaState
from cryptoapi.pfkey.errors import PfkeyError
from cryptoapi.pfkey.extensions import Lifetime
from cryptoapi.pfkey.message import scan
from cryptoapi.pfkey.policy import Policy
from cryptoapi.pfkey.sad import SaKey, SecurityAssociation
from cryptoapi.pfkey.spd import admit_policy

if TYPE_CHECKING:
    from cryptoapi.pfkey.manager import KeyManager

APPLICATION_ID = 0x504B3256  # "PK2V": marks the file as a cryptoapi key database
SCHEMA = 1
_LIFETIME = struct.Struct("<IQQQ")

SA_COLUMNS = (
    "satype", "spi", "dst", "state", "replay", "auth", "encrypt", "flags",
    "auth_key", "auth_bits", "encrypt_key", "encrypt_bits", "mode", "reqid",
    "src_ext", "dst_ext", "hard", "soft", "extra", "added", "seq", "used",
    "nbytes", "allocations", "soft_expired",
)  # fmt: skip
"""The SecurityAssociation fields kept (all but ``epoch``, which only timers use)."""

_SCHEMA_SQL = f"""
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS sas ({", ".join(SA_COLUMNS)}, UNIQUE (satype, dst, spi));
CREATE TABLE IF NOT EXISTS policies (id INTEGER PRIMARY KEY, added REAL, message BLOB);
"""
_UPSERT_SA = (
    f"INSERT INTO sas ({', '.join(SA_COLUMNS)}) VALUES ({', '.join('?' * len(SA_COLUMNS))}) "
    "ON CONFLICT (satype, dst, spi) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in SA_COLUMNS[3:])
)
_DELETE_SA = "DELETE FROM sas WHERE satype = ? AND dst = ? AND spi = ?"
SYNC_MODES = ("FULL", "NORMAL")


class TrackedDict(dict[SaKey, SecurityAssociation]):
    """The SA dict of a key manager whose state is stored: assignments and deletions
    (the only ways the manager changes it) note the key in ``changed``, in the order of
    their first change (so new SAs are stored, and come back, in the order they came)."""

    __slots__ = ("changed",)

    def __init__(self, items: dict[SaKey, SecurityAssociation]) -> None:
        super().__init__(items)
        self.changed: dict[SaKey, None] = {}

    def __setitem__(self, key: SaKey, value: SecurityAssociation) -> None:
        self.changed[key] = None
        super().__setitem__(key, value)

    def __delitem__(self, key: SaKey) -> None:
        self.changed[key] = None
        super().__delitem__(key)

    def clear(self) -> None:
        self.changed.update(dict.fromkeys(self))
        super().clear()


def _lifetime_blob(lifetime: Lifetime | None) -> bytes | None:
    if lifetime is None:
        return None
    return struct.pack("<H", lifetime.exttype) + _LIFETIME.pack(
        lifetime.allocations, lifetime.nbytes, lifetime.addtime, lifetime.usetime
    )


def _lifetime(blob: bytes | None) -> Lifetime | None:
    if blob is None:
        return None
    return Lifetime(struct.unpack_from("<H", blob)[0], *_LIFETIME.unpack_from(blob, 2))


def _sa_row(sa: SecurityAssociation) -> tuple[Any, ...]:
    values = [getattr(sa, column) for column in SA_COLUMNS]
    values[16] = _lifetime_blob(sa.hard)
    values[17] = _lifetime_blob(sa.soft)
    return tuple(values)


class StateStore:
    """The SQLite file at ``path`` holding one key manager's SAs and policies."""

    def __init__(self, path: str | os.PathLike[str], *, synchronous: str = "FULL") -> None:
        self.path = os.fspath(path)
        mode = synchronous.upper()
        if mode not in SYNC_MODES:
            raise PfkeyError(errno.EINVAL, f"synchronous must be FULL or NORMAL, not {mode}")
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                os.fchmod(fd, 0o600)
            finally:
                os.close(fd)
        except OSError as error:
            code = error.errno or errno.EIO
            raise PfkeyError(code, f"cannot open {self.path}: {error.strerror}") from None
        self.db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        try:
            self._open(mode)
        except sqlite3.DatabaseError as error:
            self.db.close()
            raise PfkeyError(
                errno.EINVAL, f"{self.path} is not a usable key database: {error}"
            ) from None
        self._sas: TrackedDict | None = None
        self._spd_changed: set[int] | None = None
        self._km: KeyManager | None = None

    def _open(self, synchronous: str) -> None:
        db = self.db
        app = db.execute("PRAGMA application_id").fetchone()[0]
        tables = db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        if app != APPLICATION_ID and tables:
            raise sqlite3.DatabaseError("it is another application's database")
        db.execute("PRAGMA journal_mode = WAL")
        db.execute(f"PRAGMA synchronous = {synchronous}")
        db.execute("PRAGMA secure_delete = ON")
        db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        db.executescript(_SCHEMA_SQL)
        db.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (SCHEMA,))
        schema = db.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone()[0]
        if schema != SCHEMA:
            raise sqlite3.DatabaseError(f"schema {schema} is not {SCHEMA}")

    def close(self) -> None:
        self.db.close()

    def sas(self) -> Iterator[SecurityAssociation]:
        """Every stored SA, in the order they were first stored."""
        query = f"SELECT {', '.join(SA_COLUMNS)} FROM sas ORDER BY rowid"
        for row in self.db.execute(query):
            values = dict(zip(SA_COLUMNS, row, strict=True))
            values["hard"] = _lifetime(values["hard"])
            values["soft"] = _lifetime(values["soft"])
            values["soft_expired"] = bool(values["soft_expired"])
            yield SecurityAssociation(**values)

    def attach(self, km: "KeyManager") -> tuple[int, int]:
        """Load the stored SAs and policies into the (empty) key manager ``km``, with their
        timers, and track its changes from now on. Returns (SAs, policies) loaded."""
        restored: dict[SaKey, SecurityAssociation] = {}
        for sa in self.sas():
            restored[sa.key] = sa
            if sa.state == SaState.LARVAL:
                km.larval(sa)
            else:
                km.timers.added(sa)
                if sa.used:
                    km.timers.first_use(sa)
        for index, added, message in self.db.execute(
            "SELECT id, added, message FROM policies ORDER BY rowid"
        ):
            found = scan(message)
            policy = admit_policy(found, added)
            stored = found.decode(ExtType.X_POLICY)
            assert isinstance(stored, Policy) and stored.id == index
            km.spd.insert(policy)
        self._sas = km.sad.by_key = TrackedDict(restored)
        self._spd_changed = km.spd.changed = set()
        self._km = km
        return len(restored), len(km.spd)

    def pending(self) -> bool:
        """Whether there are changes not committed yet."""
        return bool(self._sas and self._sas.changed) or bool(self._spd_changed)

    def commit(self) -> None:
        """Write every change since the last commit in one transaction (durable when this
        returns, per the ``synchronous`` mode)."""
        sas, spd_changed, km = self._sas, self._spd_changed, self._km
        if sas is None or spd_changed is None or km is None:
            return
        if not (sas.changed or spd_changed):
            return
        upserts, deletes = [], []
        for key in sas.changed:
            sa = sas.get(key)
            if sa is None:
                deletes.append(key)
            else:
                upserts.append(_sa_row(sa))
        try:
            self._write(deletes, upserts, spd_changed, km)
        except sqlite3.Error as error:
            raise PfkeyError(errno.EIO, f"cannot commit to {self.path}: {error}") from None
        sas.changed.clear()
        spd_changed.clear()

    def _write(
        self,
        deletes: list[SaKey],
        upserts: list[tuple[Any, ...]],
        spd_changed: set[int],
        km: "KeyManager",
    ) -> None:
        """One transaction: the SA rows, then the policy rows."""
        db = self.db
        policies = km.spd.by_index
        db.execute("BEGIN IMMEDIATE")
        try:
            db.executemany(_DELETE_SA, deletes)
            db.executemany(_UPSERT_SA, upserts)
            for index in spd_changed:
                policy = policies.get(index)
                db.execute("DELETE FROM policies WHERE id = ?", (index,))
                if policy is not None:
                    message = policy.message(MsgType.X_SPDADD, 0, 0).encode()
                    db.execute(
                        "INSERT INTO policies VALUES (?, ?, ?)",
                        (index, policy.added, message),
                    )
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
