"""Durable key daemon state in SQLite: the SAs and policies of a key manager in one file,
embedded in the daemon. :class:`StateStore` is a :class:`~.backend.StateBackend`, the
interface the daemon calls and whose promises every backend keeps (PostgreSQL can be
another); here is how SQLite keeps them.

The daemon calls :meth:`StateStore.commit` after handling a batch of messages and before it
sends any reply, so every change a client has seen acknowledged is on disk: the SQLite
file is in WAL mode with ``synchronous=FULL`` by default, which syncs the WAL at each commit
and so survives a crash of the machine, not only of the daemon. ``synchronous=NORMAL``
(``--sync normal``) syncs only at checkpoints: a commit then survives the daemon being
killed (``kill -9``; the WAL is in the OS's hands) but not power loss.

What changed is found without scanning: the SA database and the SPD note the keys and
indexes they add, replace or remove in their change journals
(:class:`~cryptoapi.pfkey.db.journal.Journal`, started by :meth:`StateStore.attach`), as
Linux's ``km_state_notify`` tells key managers of each change. A commit writes the current
state of just those (as :mod:`.rows` maps records to rows) and clears the journals. The
rows come back in the order the databases had them (a record inserted as the newest gets a
new row, last: see :mod:`.schema`), so DUMP and SPDDUMP list after a restart, ``kill -9``
included, what they listed at the last commit, in the same order. A file of an older
schema is upgraded as it is opened.

Usage (bytes, allocations, first use) and the DYING state change in place, from the data
path and the lifetimes, so they are written on their own schedule
(:mod:`~cryptoapi.pfkey.daemon.usage`), into the same ``sas`` rows: the SAs that went DYING at the
next commit (in the daemon, before their EXPIRE is sent), the SAs whose counters moved at
most every ``usage_interval`` seconds (5; :meth:`StateStore.usage_wait` tells the daemon
when), and all of them at :meth:`StateStore.close`; never per packet. On restore they come
back: a DYING SA stays DYING and its soft limit does not fire again, and use-time limits
run from the recorded first use. What ``kill -9`` can lose is the counting since the last
periodic write (at most ``usage_interval`` seconds of it: after a restart the SA has
carried less than it has, and its byte and packet limits fall that much later), and, for a
key manager whose soft limits fire outside a daemon round (a data path's packets), a DYING
state set since the last commit (it then fires again, when reached again); never an
acknowledged SA or policy, and never a DYING state whose EXPIRE the daemon sent.

The file holds key material, so it is opened with care, before SQLite sees it
(:mod:`.privatedb`: one daemon per file under an ``flock``, never through a link or
someone else's file, never readable by others, made whole under a temporary name).

Keys of deleted SAs leave the disk before the deletion is acknowledged: ``secure_delete``
zeroes the freed cells in the pages written, and a commit that deletes an SA, or replaces one
with different keys, then runs ``PRAGMA wal_checkpoint(TRUNCATE)``, which copies those pages
into the database and truncates the WAL, whose older frames still held the keys (measured:
without it, every deleted key stays in ``-wal`` across ``kill -9``; the ``-shm`` index never
holds row data). A reader holding an old snapshot (an ``sqlite3`` shell) stops the
checkpoint: it is not waited for and is retried at every later commit. Commits that only add
do not checkpoint, so a bulk load costs no more than before; a commit that deletes costs the
checkpoint's writes and syncs of the database and WAL (measured: 0.1 ms on tmpfs, the rest
is fsync latency; a FLUSH or a round of expiries is one checkpoint). Many builds of SQLite,
Python's here among them, compile ``SQLITE_SECURE_DELETE`` in; the pragma makes sure of it.
(What a file system does with the blocks a truncation frees is beyond SQLite's reach, as it
is for ``secure_delete``.)
"""

import errno
import logging
import os
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from cryptoapi.pfkey.daemon.backend import StateBackend
from cryptoapi.pfkey.daemon.privatedb import (
    BUSY_TIMEOUT,
    SYNC_MODES,
    FileKind,
    claim,
    connect,
)
from cryptoapi.pfkey.daemon.restore import start_timers
from cryptoapi.pfkey.daemon.rows import (
    LIFETIME_COLUMNS,
    USAGE_COLUMNS,
    changed_rows,
    policy_row,
    sa_of_row,
    sa_row,
    usage_row,
)
from cryptoapi.pfkey.daemon.schema import (
    CHECKPOINT_COLUMNS,
    CREATE_SQL,
    SA_COLUMNS,
    SCHEMA,
    Transaction,
    upgrade,
)
from cryptoapi.pfkey.daemon.usage import USAGE_INTERVAL, UsageWriter
from cryptoapi.pfkey.db.journal import Journal
from cryptoapi.pfkey.db.sad import SaKey, SecurityAssociation
from cryptoapi.pfkey.db.spd import admit_policy
from cryptoapi.pfkey.errors import PfkeyError
from cryptoapi.pfkey.km.admit import integrity
from cryptoapi.pfkey.km.algorithms import AUTH, ENCRYPT
from cryptoapi.pfkey.wire.constants import ExtType, SaState, SaType
from cryptoapi.pfkey.wire.message import scan
from cryptoapi.pfkey.wire.policy import Policy

if TYPE_CHECKING:
    from cryptoapi.pfkey.km.manager import KeyManager

__all__ = [
    "APPLICATION_ID",
    "KEY_DATABASE",
    "LIFETIME_COLUMNS",  # in .rows now; importable from here as before
    "SA_COLUMNS",  # in .schema
    "USAGE_COLUMNS",  # in .rows now
    "StateStore",
]

log = logging.getLogger(__name__)

APPLICATION_ID = 0x504B3256  # "PK2V": marks the file as a cryptoapi key database
KEY_DATABASE = FileKind("key database", "keyd", "keys", APPLICATION_ID, CREATE_SQL, SCHEMA, upgrade)
_UPSERT_SA = (
    f"INSERT INTO sas ({', '.join(SA_COLUMNS)}) VALUES ({', '.join('?' * len(SA_COLUMNS))}) "
    "ON CONFLICT (satype, dst, spi) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in SA_COLUMNS[3 : -len(CHECKPOINT_COLUMNS)])
    + "".join(f", {c} = max({c}, excluded.{c})" for c in CHECKPOINT_COLUMNS)  # never lowered
)
_DELETE_SA = "DELETE FROM sas WHERE satype = ? AND dst = ? AND spi = ?"
_UPSERT_POLICY = (
    "INSERT INTO policies (id, added, message) VALUES (?, ?, ?) "
    "ON CONFLICT (id) DO UPDATE SET added = excluded.added, message = excluded.message"
)
_DELETE_POLICY = "DELETE FROM policies WHERE id = ?"
_UPDATE_USAGE = (
    f"UPDATE sas SET {', '.join(f'{c} = ?' for c in USAGE_COLUMNS[: -len(CHECKPOINT_COLUMNS)])}"
    + "".join(f", {c} = max({c}, ?)" for c in CHECKPOINT_COLUMNS)
    + " WHERE satype = ? AND dst = ? AND spi = ?"
)
_Step = tuple[str, Sequence[Sequence[Any]]]
"""A statement and the rows it runs over, in one commit."""


class StateStore(StateBackend):
    """The SQLite file at ``path`` holding one key manager's SAs and policies, locked for
    this store until :meth:`close`. Usage is written at most every ``usage_interval``
    seconds of ``clock`` (monotonic; see the module docstring)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        synchronous: str = "FULL",
        usage_interval: float = USAGE_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.path = os.fspath(path)
        mode = synchronous.upper()
        if mode not in SYNC_MODES:
            raise PfkeyError(errno.EINVAL, f"synchronous must be FULL or NORMAL, not {mode}")
        self._fd = claim(self.path, KEY_DATABASE)
        try:
            self.db = connect(self.path, self._fd, KEY_DATABASE, mode)
        except BaseException:
            os.close(self._fd)
            raise
        self._sas: Journal[SaKey] | None = None
        self._policies: Journal[int] | None = None
        self._km: KeyManager | None = None
        self._scrub = False
        self._usage = UsageWriter(usage_interval, clock)

    def close(self) -> None:
        """Write the usage that moved (:meth:`flush_usage`), close the database, then release
        the lock (in that order: see the module docstring). Later calls do nothing. A
        failing write is logged, not raised: closing goes on (and may be cleaning up after
        the error that failed it)."""
        if self._fd < 0:
            return
        try:
            self.flush_usage()
        except PfkeyError as error:
            log.warning("%s: usage counters not written at close: %s", self.path, error)
        if self._km is not None:
            self._km.on_dying = self._km.on_checkpoint = None
        self.db.close()
        os.close(self._fd)
        self._fd = -1

    def sas(self) -> Iterator[SecurityAssociation]:
        """Every stored SA, oldest first (as the database had them)."""
        query = f"SELECT {', '.join(SA_COLUMNS)} FROM sas ORDER BY rowid"
        for row in self.db.execute(query):
            yield sa_of_row(row)

    def attach(self, km: "KeyManager") -> tuple[int, int]:
        """Load the stored SAs and policies into the (empty) key manager ``km``, with their
        timers, and read its databases' change journals from now on. Returns (SAs,
        policies) loaded. An encryption-only SA (stored by a keyd that allowed them) is
        refused, nothing loaded, unless ``km`` allows them too (EINVAL)."""
        sas = list(self.sas())
        if not km.allow_unauthenticated:
            for sa in sas:
                self._check_integrity(sa)
        for sa in sas:
            km.sad.add(sa)
            self._usage.stored(sa.key, sa)
            start_timers(km, sa)
        for index, added, message in self.db.execute(
            "SELECT id, added, message FROM policies ORDER BY rowid"
        ):
            found = scan(message)
            policy = admit_policy(found, added)
            stored = found.decode(ExtType.X_POLICY)
            assert isinstance(stored, Policy) and stored.id == index
            km.spd.insert(policy)
        self._sas = km.sad.track()
        self._policies = km.spd.track()
        self._km = km
        km.on_dying = km.on_checkpoint = self._usage.dying
        return len(km.sad), len(km.spd)

    def _check_integrity(self, sa: SecurityAssociation) -> None:
        if sa.satype != SaType.ESP or sa.state == SaState.LARVAL:
            return
        try:
            integrity(AUTH.get(sa.auth), ENCRYPT.get(sa.encrypt))
        except PfkeyError as error:
            problem = (
                f"holds SA {sa.spi:#x}, which an earlier keyd admitted with "
                f"--allow-unauthenticated-esp: give that option again, or delete the SA ({error})"
            )
            raise PfkeyError(errno.EINVAL, f"{self.path}: {problem}") from None

    def pending(self) -> bool:
        """Whether there are changes not committed yet (SAs gone DYING included)."""
        sas_changed = bool(self._sas and self._sas.changed)
        policies_changed = bool(self._policies and self._policies.changed)
        return sas_changed or policies_changed or bool(self._usage.dying_sas)

    def usage_wait(self) -> float | None:
        """Seconds until :meth:`commit` has usage to write, or None while none can be due:
        an event loop waits at most this long between commits (see the module docstring)."""
        return self._usage.wait() if self._km is not None else None

    def flush_usage(self) -> None:
        """Write now the usage of every SA whose usage moved since it was last written (one
        transaction), whether or not the interval is over; SAs with uncommitted changes are
        left to :meth:`commit`. Called by :meth:`close`."""
        sas, km = self._sas, self._km
        if sas is None or km is None:
            return
        usage = self._usage.due_now(km.sad.by_key, sas.changed, force=True)
        if usage:
            self._transaction([], usage)

    def commit(self) -> None:
        """Write every change since the last commit in one transaction (durable when this
        returns, per the ``synchronous`` mode). If it dropped keys, or an earlier scrub was
        blocked, checkpoint so that they are in no file either (see the module docstring)."""
        sas, policies, km = self._sas, self._policies, self._km
        if sas is None or policies is None or km is None:
            return
        dropped = sas.dropped
        usage = self._usage.due_now(km.sad.by_key, sas.changed)
        if sas.changed or policies.changed or usage:
            self._commit_changes(sas, policies, km, usage)
        if self._scrub or dropped:
            self._scrub = not self._checkpoint(warn=dropped)

    def _commit_changes(
        self,
        sas: Journal[SaKey],
        policies: Journal[int],
        km: "KeyManager",
        usage: list[SecurityAssociation],
    ) -> None:
        """The current state of each SA and policy the journals name, and the usage of
        ``usage``, in one transaction; then the journals are cleared."""
        current = km.sad.by_key
        # each table's deletions before its writes: a row moved gets a new rowid, last
        gone, written = changed_rows(sas, current, sa_row)
        steps: list[_Step] = [(_DELETE_SA, gone), (_UPSERT_SA, written)]
        if policies.changed:  # most commits carry SAs alone
            indexes, policy_rows = changed_rows(policies, km.spd.by_index, policy_row)
            steps += (
                (_DELETE_POLICY, [(index,) for index in indexes]),
                (_UPSERT_POLICY, policy_rows),
            )
        self._transaction(steps, usage)
        stored = self._usage.stored
        for key in sas.changed:
            stored(key, current.get(key))
        sas.clear()
        policies.clear()

    def _transaction(self, steps: list[_Step], usage: list[SecurityAssociation]) -> None:
        """Each statement of ``steps`` over its rows, then the usage rows of ``usage``, in
        one transaction; EIO if it fails. What it wrote is noted once it is committed."""
        db = self.db
        steps = [*steps, (_UPDATE_USAGE, [usage_row(sa) for sa in usage])]
        try:
            with Transaction(db):
                for statement, rows in steps:
                    if rows:  # an empty executemany still costs a statement lookup
                        db.executemany(statement, rows)
        except sqlite3.Error as error:
            raise PfkeyError(errno.EIO, f"cannot commit to {self.path}: {error}") from None
        self._usage.wrote(usage)

    def _checkpoint(self, *, warn: bool) -> bool:
        """``wal_checkpoint(TRUNCATE)``, not waiting for another process's reader or writer
        (a daemon stalled behind an ``sqlite3`` shell would serve nobody): True when the WAL
        is empty now. ``warn``: say so in the log when keys just dropped stay in it."""
        db = self.db
        db.execute("PRAGMA busy_timeout = 0")
        try:
            busy = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
        except sqlite3.Error:
            busy = 1  # locked: as busy; retried at the next commit
        finally:
            db.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT * 1000)}")
        if busy and warn:
            log.warning(
                "%s: another connection holds the WAL: keys of deleted SAs stay in %s-wal "
                "until it lets go (retried at every commit)",
                self.path,
                self.path,
            )
        return not busy
