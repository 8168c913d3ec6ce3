"""Durable key daemon state in PostgreSQL, for high availability: the SAs and policies of
a key manager in a database server that two or more keyds reach (``cryptoapi keyd --state
postgresql://...``), one of them active, the others standing by. :class:`PgStore` is a
:class:`~.backend.StateBackend` and keeps its promises; here is how PostgreSQL keeps them.

Durability. A commit (:meth:`PgStore.commit`, before any reply of the round is sent) writes
the current state of what the change journals name in one transaction, with
``synchronous_commit = on`` set for the session (whatever the server's default), so an
acknowledged change is in the server's WAL on disk. The SQL is :mod:`.pgschema`'s: its own
schema, versioned, checked for this application's marker before anything is used.

Keys of a deleted SA. Its row is deleted in the commit that acknowledges the deletion, so no
reader of the table sees its keys once the client has the reply, and the change journal
names SAs by (satype, dst, spi) only, never by their keys. (As in any MVCC database, the
dead row version stays in the table's file until VACUUM reclaims its space, and in the
server's WAL until it is recycled: keep the server's storage as private as the keys.)

One active. The active keyd holds the session advisory lock :data:`~.pgschema.LOCK` on the
connection it commits through. A second keyd started without ``--standby`` does not get it
and exits (EBUSY, naming the keyd that holds it). A standby (``--standby``) loads
everything, then follows: each commit inserts a row per changed SA or policy in
``changes`` and notifies :data:`~.pgschema.CHANNEL`. Every :data:`POLL` seconds the
standby tries the lock and takes the notifications that came; when one came (or
:data:`FOLLOW_EVERY` seconds passed without one), it reads the changes after the last it
applied and the current rows they name, in one snapshot (:class:`~.pgfollow.Copy`), so it
is at most about ``POLL`` behind (measured: 30 ms). When the active's session ends (the
keyd exits or is killed, its host dies and the server notices, or someone terminates its
backend), the lock is free: a standby takes it at its next poll, applies the changes it
has not seen (no other writer is left), starts the lifetime timers and serves writes. A
standby that finds no active at start becomes active at once. (The notifications are taken
at the poll, not the moment they arrive: the daemon's loop does not watch the database
connection's socket.)

No split brain. Every acknowledged write was committed through the session that holds the
lock, so once that session is gone nothing it did is acknowledged any more: a commit that
fails (the connection lost, or anything else) is not acknowledged (the daemon answers every
message of that round with :data:`FENCED_ERRNO`), the keyd is *fenced*, answers writes
with EAGAIN while it is, keeps serving reads with the SAs it has (a data path following it
carries on), and every :data:`RECONNECT_EVERY` seconds tries the database again; once back,
it reloads everything and stands by (and takes the lock if it is free). A commit lost with
its connection during COMMIT may still have been committed: it was answered EAGAIN, and
whoever retries finds it done (EEXIST for an ADD).

Sequence numbers. Becoming active (a takeover, or a start as the active), a keyd first
raises every SA's sequence-number checkpoint past the margin, durably and journaled, so
the data path that follows it starts every outbound SA above anything the old active's
could have sent (:mod:`.checkpoint`).

Writes while not active. A standby answers every PF_KEY message but GET, DUMP, REGISTER,
X_PROMISC, X_SPDGET and X_SPDDUMP with :data:`STANDBY_ERRNO` (EROFS: this keyd's state
is read-only); a fenced one with :data:`FENCED_ERRNO` (EAGAIN: try again, here or on the
new active).
"""

import enum
import errno
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cryptoapi.pfkey.daemon import checkpoint
from cryptoapi.pfkey.daemon import pgschema as sql
from cryptoapi.pfkey.daemon.backend import StateBackend
from cryptoapi.pfkey.daemon.pgconnect import connect, first_line, lock_holder, shown
from cryptoapi.pfkey.daemon.pgfollow import Copy, check_integrity
from cryptoapi.pfkey.daemon.pgwrite import Writer
from cryptoapi.pfkey.daemon.usage import USAGE_INTERVAL
from cryptoapi.pfkey.errors import PfkeyError
from cryptoapi.pfkey.wire.constants import MsgType
from cryptoapi.pfkey.wire.message import read_header

if TYPE_CHECKING:
    import psycopg

    from cryptoapi.pfkey.km.manager import KeyManager

log = logging.getLogger(__name__)

STANDBY_ERRNO = errno.EROFS
FENCED_ERRNO = errno.EAGAIN
READS = frozenset(
    int(t)
    for t in (
        MsgType.GET,
        MsgType.DUMP,
        MsgType.REGISTER,
        MsgType.X_PROMISC,
        MsgType.X_SPDGET,
        MsgType.X_SPDDUMP,
    )
)
"""The messages a keyd that is not active still answers."""
POLL = 0.1
"""Seconds between a standby's tries of the lock (a takeover waits at most this long)."""
FOLLOW_EVERY = 1.0
"""Seconds between a standby's reads of the journal when no notification woke it."""
KEEPALIVE = 0.5
"""Seconds between an idle active's checks that its session (and lock) is still there."""
RECONNECT_EVERY = 1.0
"""Seconds between a fenced keyd's tries of the database."""


class Role(enum.StrEnum):
    ACTIVE = "active"
    STANDBY = "standby"
    FENCED = "fenced"


class PgStore(StateBackend):
    """A key manager's SAs and policies in the PostgreSQL database at ``url``; active (the
    lock taken at once, EBUSY if another keyd holds it) or, with ``standby``, following
    until the lock is free (see the module docstring)."""

    def __init__(
        self,
        url: str,
        *,
        standby: bool = False,
        usage_interval: float = USAGE_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.url = url
        self.shown = shown(url)
        self.clock = clock
        self.db: psycopg.Connection[Any] | None = connect(url)
        self.role = Role.STANDBY
        self.since = clock()
        self.takeovers = 0
        self.last_change = 0
        self.woken = False
        self.error: str | None = None
        self._next = 0.0  # when the next poll, keepalive or reconnect is due
        self._next_follow = 0.0
        self._km: KeyManager | None = None
        self._copy: Copy | None = None
        self._usage_interval = usage_interval
        self._writer: Writer | None = None
        if not standby and not self._try_lock():
            holder = lock_holder(self._conn())
            self.close()
            raise PfkeyError(
                errno.EBUSY,
                f"{self.shown}: another keyd ({holder}) is active on this database; "
                "start this one with --standby",
            )
        self._locked = not standby

    # -- the backend -------------------------------------------------------------------

    def attach(self, km: "KeyManager") -> tuple[int, int]:
        """Load every SA and policy into the empty ``km``; then, as the active, start their
        timers and follow ``km``'s journals, or, standing by, follow the database."""
        self._km = km
        self._copy = Copy(km)
        self._load()
        if self._locked:
            self._activate(took_over=False)
        else:
            self._listen()
        return len(km.sad), len(km.spd)

    def commit(self) -> None:
        """Active: write what changed (EAGAIN, fenced, if it cannot be written). Standing
        by: try the lock, follow the changes when due. Fenced: try the database again."""
        try:
            if self.role is Role.ACTIVE:
                self._commit_active()
            elif self.role is Role.STANDBY:
                self._stand_by()
            elif self.clock() >= self._next:
                self._reconnect()
        except PfkeyError:
            raise
        except Exception as error:  # psycopg's, or the connection's socket's
            was_active = self.role is Role.ACTIVE
            self._fence(error)
            if was_active:
                raise PfkeyError(
                    FENCED_ERRNO, f"{self.shown}: not committed: {self.error}"
                ) from None

    def usage_wait(self) -> float | None:
        """Seconds until :meth:`commit` has something to do: usage to write or a keepalive
        (active), a poll (standby), a reconnection (fenced)."""
        until = max(self._next - self.clock(), 0.0)
        writer = self._writer
        if writer is not None and (usage := writer.usage.wait()) is not None:
            return min(usage, until)
        return until

    def close(self) -> None:
        """Write the usage that moved (active), free the lock, then close the session.
        Later calls do nothing.

        The lock is freed by a statement, not left to the session's end: the server ends a
        closed session's backend a moment after the client has gone, and a standby that
        polls in that moment would find the lock still held."""
        if self.db is None:
            return
        if self.role is Role.ACTIVE:
            try:
                if self._writer is not None:
                    self._writer.flush_usage(self._conn())
                self._conn().execute("SELECT pg_advisory_unlock(%s)", (sql.LOCK,))
            except Exception as error:  # closing goes on; the session's end frees the lock
                log.warning("%s: not closed cleanly: %s", self.shown, error)
        if self._writer is not None:
            self._writer.stop()
        self.db.close()
        self.db = None

    # -- what a keyd shows and refuses -------------------------------------------------

    def refusal(self, data: bytes) -> int:
        """The errno to answer ``data`` with instead of handling it: 0 while active, or
        for a message that only reads (see the module docstring)."""
        if self.role is Role.ACTIVE or len(data) < 16:
            return 0
        if read_header(data).type in READS:
            return 0
        return STANDBY_ERRNO if self.role is Role.STANDBY else FENCED_ERRNO

    def status(self) -> dict[str, Any]:
        """The role, since when (seconds), takeovers, the last change applied or written,
        the last database error."""
        return {
            "role": str(self.role),
            "database": self.shown,
            "for": round(self.clock() - self.since, 3),
            "takeovers": self.takeovers,
            "last_change": self.last_change,
            "commits": self._writer.commits if self._writer is not None else 0,
            "error": self.error,
        }

    def describe(self) -> str:
        """One line: the role and the database (SIGUSR1 logs it)."""
        info = self.status()
        extra = f"; last error: {info['error']}" if info["error"] else ""
        return (
            f"{info['role']} on {info['database']} for {info['for']} s, "
            f"{info['takeovers']} takeovers, change {info['last_change']}{extra}"
        )

    # -- roles -------------------------------------------------------------------------

    def _conn(self) -> "psycopg.Connection[Any]":
        if self.db is None:
            raise PfkeyError(FENCED_ERRNO, f"{self.shown}: no session")
        return self.db

    def _try_lock(self) -> bool:
        found = self._conn().execute("SELECT pg_try_advisory_lock(%s)", (sql.LOCK,)).fetchone()
        return bool(found and found[0])

    def _listen(self) -> None:
        self._conn().execute(f"LISTEN {sql.CHANNEL}")

    def _load(self) -> None:
        """Everything, in one snapshot, in place of what the key manager holds; the last
        change (nothing replaced if the database holds an SA the key manager refuses)."""
        db = self._conn()
        with db.transaction(), db.cursor(binary=True) as cursor:
            last, _ = cursor.execute(sql.LAST_CHANGE).fetchone() or (0, 0)
            self._replace_all(cursor)
        self.last_change = last
        self._next_follow = self.clock() + FOLLOW_EVERY

    def _replace_all(self, cursor: "psycopg.Cursor[Any]") -> None:
        copy = self._copy
        assert copy is not None
        sas = cursor.execute(sql.SELECT_SAS + " ORDER BY pos").fetchall()
        km = self._km
        if km is not None and not km.allow_unauthenticated:
            check_integrity(sas, self.shown)
        policies = cursor.execute(sql.SELECT_POLICIES + " ORDER BY pos").fetchall()
        copy.clear()
        copy.load(sas, policies)

    def _stand_by(self) -> None:
        """Take the lock if it is free (then become active); follow the changes when a
        notification or :data:`FOLLOW_EVERY` says so."""
        now = self.clock()
        if now < self._next:
            return
        self._next = now + POLL
        if self._try_lock():
            self._activate(took_over=True)
            return
        for _ in self._conn().notifies(timeout=0):  # those that came with the lock's answer too
            self.woken = True
        if self.woken or now >= self._next_follow:
            self._follow()

    def _follow(self) -> None:
        """Apply the changes after the last one applied, with the rows they name, from one
        snapshot; everything again if some of them were pruned."""
        db, copy = self._conn(), self._copy
        assert copy is not None
        self.woken = False
        self._next_follow = self.clock() + FOLLOW_EVERY
        with db.transaction(), db.cursor(binary=True) as cursor:
            last, pruned = cursor.execute(sql.LAST_CHANGE).fetchone() or (0, 0)
            if last <= self.last_change:
                return
            if pruned > self.last_change:
                self._replace_all(cursor)
            else:
                span = (self.last_change, last)
                copy.apply_sas(cursor.execute(sql.CHANGED_SAS, span).fetchall())
                copy.apply_policies(cursor.execute(sql.CHANGED_POLICIES, span).fetchall())
        self.last_change = last

    def _activate(self, *, took_over: bool) -> None:
        """The lock is ours: apply what is left to follow, raise every SA's sequence-number
        checkpoint past the margin (:func:`~.checkpoint.jump`: durably, before anything is
        acknowledged or handed to a data path), start the timers, note every change of the
        key manager from now on, serve writes."""
        km, copy = self._km, self._copy
        assert km is not None and copy is not None
        if took_over:
            self._follow()
            self.takeovers += 1
        checkpoint.jump(self._conn(), km)
        copy.start_timers()
        self._writer = Writer(km, self._usage_interval, self.clock)
        self._set_role(Role.ACTIVE)
        self._next = self.clock() + KEEPALIVE

    def _set_role(self, role: Role) -> None:
        if role is not self.role:
            log.warning("%s: %s -> %s", self.shown, self.role, role)
        self.role = role
        self.since = self.clock()

    def _fence(self, error: BaseException) -> None:
        """The session is lost (or a commit failed): close it, stop following the key
        manager's changes (they are not durable), answer writes EAGAIN until reconnected."""
        self.error = first_line(error)
        log.error("%s: fenced: %s", self.shown, self.error)
        if self._writer is not None:
            self._writer.stop()
            self._writer = None
        if self.db is not None:
            try:
                self.db.close()
            finally:
                self.db = None
        self._set_role(Role.FENCED)
        self._next = self.clock() + RECONNECT_EVERY

    def _reconnect(self) -> None:
        """A new session: reload everything and stand by (the next poll may take the lock)."""
        self._next = self.clock() + RECONNECT_EVERY
        try:
            self.db = connect(self.url)
            self._load()
            self._listen()
        except Exception as error:  # still unreachable, or refused: fenced as before
            self.error = first_line(error)
            if self.db is not None:
                self.db.close()
                self.db = None
            return
        self._set_role(Role.STANDBY)
        self._next = self.clock()

    # -- the active's commits ----------------------------------------------------------

    def _commit_active(self) -> None:
        writer = self._writer
        assert writer is not None
        if not writer.commit(self._conn()) and self.clock() >= self._next:
            self._conn().execute("SELECT 1")  # idle: is the session (and the lock) ours?
            self._next = self.clock() + KEEPALIVE
