"""Durable key daemon state: the SAs and policies of a key manager in one SQLite file.

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
state of just those and clears the journals. The rows come back in the order the databases
had them (a record inserted as the newest gets a new row, last: see :mod:`.schema`), so
DUMP and SPDDUMP list after a restart, ``kill -9`` included, what they listed at the last
commit, in the same order. A file of an older schema is upgraded as it is opened.

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

The file holds key material, so it is opened with care, before SQLite sees it:

- one daemon per file: an exclusive ``flock`` on it, held while the store is open (the
  kernel drops it when the process dies, so ``kill -9`` leaves no stale lock). A second
  daemon gets EBUSY naming the holder's pid (from ``/proc/locks``). ``flock`` and SQLite's
  POSIX byte-range locks are independent on Linux, and SQLite keeps its own (WAL mode,
  crash recovery) unchanged; the locked descriptor is closed only after the connection,
  since closing any descriptor of a file drops the process's POSIX locks on it;
- never through a link, never someone else's file: the path is opened ``O_NOFOLLOW``
  (a symbolic link is refused: ELOOP), must be a regular file of our uid (EPERM), and its
  header, read from that descriptor, must be an SQLite file carrying our
  ``application_id`` (EINVAL otherwise: an empty file too, since we never leave one), all
  before anything is written or chmodded. A key database others may read (mode & 0o077) is
  refused (EACCES), not chmodded, and so are such WAL, shared-memory or journal files;
- a new file is built whole under a temporary name (``mkstemp``: ``O_CREAT|O_EXCL``, mode
  0600, which SQLite gives its WAL and shared-memory files too) and hard-linked into place,
  so a file at the path is either absent or a complete key database of ours.

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

import contextlib
import errno
import fcntl
import logging
import os
import sqlite3
import stat
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from cryptoapi.pfkey.daemon.schema import CREATE_SQL, SA_COLUMNS, SCHEMA, Transaction, upgrade
from cryptoapi.pfkey.daemon.usage import USAGE_INTERVAL, UsageWriter
from cryptoapi.pfkey.db.journal import Journal
from cryptoapi.pfkey.db.sad import SaKey, SecurityAssociation
from cryptoapi.pfkey.db.spd import SecurityPolicy, admit_policy
from cryptoapi.pfkey.errors import PfkeyError
from cryptoapi.pfkey.wire.constants import ExtType, MsgType, SaState
from cryptoapi.pfkey.wire.extensions import Lifetime, lifetime_at
from cryptoapi.pfkey.wire.message import scan
from cryptoapi.pfkey.wire.policy import Policy

if TYPE_CHECKING:
    from cryptoapi.pfkey.manager import KeyManager

log = logging.getLogger(__name__)

APPLICATION_ID = 0x504B3256  # "PK2V": marks the file as a cryptoapi key database
SQLITE_MAGIC = b"SQLite format 3\0"
"""The first 16 bytes of every SQLite database (https://sqlite.org/fileformat2.html §1.3)."""
HEADER_SIZE = 100
APPLICATION_ID_AT = 68  # the header's application_id: a big-endian u32 at offset 68
SIDECARS = ("-wal", "-shm", "-journal")
"""The files SQLite keeps beside the database (named by appending these)."""
BUSY_TIMEOUT = 5.0
"""Seconds a commit waits for a lock another process holds (Python's default)."""
LIFETIME_COLUMNS = ("hard", "soft")
"""Lifetimes are kept as the ``sadb_lifetime`` extension without its first field,
``sadb_lifetime_len`` (always 4 words): the form every schema so far has."""
_LIFETIME_LEN = b"\x04\x00"

_UPSERT_SA = (
    f"INSERT INTO sas ({', '.join(SA_COLUMNS)}) VALUES ({', '.join('?' * len(SA_COLUMNS))}) "
    "ON CONFLICT (satype, dst, spi) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in SA_COLUMNS[3:])
)
_DELETE_SA = "DELETE FROM sas WHERE satype = ? AND dst = ? AND spi = ?"
_UPSERT_POLICY = (
    "INSERT INTO policies (id, added, message) VALUES (?, ?, ?) "
    "ON CONFLICT (id) DO UPDATE SET added = excluded.added, message = excluded.message"
)
_DELETE_POLICY = "DELETE FROM policies WHERE id = ?"
USAGE_COLUMNS = ("state", "used", "nbytes", "allocations", "soft_expired")
"""The SA columns that change in place (usage and DYING), written by :mod:`.usage`."""
_UPDATE_USAGE = (
    f"UPDATE sas SET {', '.join(f'{c} = ?' for c in USAGE_COLUMNS)} "
    "WHERE satype = ? AND dst = ? AND spi = ?"
)
SYNC_MODES = ("FULL", "NORMAL")
_Step = tuple[str, Sequence[Sequence[Any]]]
"""A statement and the rows it runs over, in one commit."""
K = TypeVar("K")
V = TypeVar("V")
R = TypeVar("R")


def _lifetime_blob(lifetime: Lifetime | None) -> bytes | None:
    return None if lifetime is None else lifetime.encode()[len(_LIFETIME_LEN) :]


def _lifetime(blob: bytes | None) -> Lifetime | None:
    return None if blob is None else lifetime_at(_LIFETIME_LEN + blob, 0)


def _cannot_open(path: str, error: OSError | sqlite3.Error) -> PfkeyError:
    if isinstance(error, OSError):
        code = error.errno or errno.EIO
        return PfkeyError(code, f"cannot open {path}: {error.strerror or error}")
    return PfkeyError(errno.EIO, f"cannot open {path}: {error}")


def _open(db: sqlite3.Connection, synchronous: str) -> None:
    """Check the (claimed) database through SQLite, set the connection up, and bring an
    older file to this schema (:func:`~.schema.upgrade`)."""
    app = db.execute("PRAGMA application_id").fetchone()[0]
    if app != APPLICATION_ID:
        raise sqlite3.DatabaseError("it is another application's database")
    db.execute("PRAGMA journal_mode = WAL")
    db.execute(f"PRAGMA synchronous = {synchronous}")
    db.execute("PRAGMA secure_delete = ON")
    upgrade(db)


def _sa_row(sa: SecurityAssociation) -> tuple[Any, ...]:
    """The ``SA_COLUMNS`` of ``sa``, its lifetimes as blobs."""
    return tuple(
        _lifetime_blob(getattr(sa, column)) if column in LIFETIME_COLUMNS else getattr(sa, column)
        for column in SA_COLUMNS
    )


def _usage_row(sa: SecurityAssociation) -> tuple[Any, ...]:
    """The parameters of ``_UPDATE_USAGE`` for ``sa``."""
    return (*(getattr(sa, column) for column in USAGE_COLUMNS), sa.satype, sa.dst, sa.spi)


def _policy_row(policy: SecurityPolicy) -> tuple[int, float, bytes]:
    """The ``policies`` row of ``policy``: its index, when it was added, and the message
    that adds it again."""
    return policy.index, policy.added, policy.message(MsgType.X_SPDADD, 0, 0).encode()


def _rows(
    journal: Journal[K], current: Mapping[K, V], row: Callable[[V], R]
) -> tuple[list[K], list[R]]:
    """The keys of the rows to delete (records gone or moved, see
    :class:`~cryptoapi.pfkey.db.journal.Journal`) and the rows to write, for the records
    ``journal`` names, in its order: the database's, which new rows take as rowids."""
    deletes, upserts = [], []
    for key in journal.changed:
        record = current.get(key)
        if record is None or key in journal.moved:
            deletes.append(key)
        if record is not None:
            upserts.append(row(record))
    return deletes, upserts


def _refusal(code: int, path: str, problem: str) -> PfkeyError:
    return PfkeyError(code, f"{path}: {problem}")


def _claim(path: str) -> int:
    """A descriptor on the key database at ``path`` (made if absent), checked to be ours
    and locked (see the module docstring); PfkeyError otherwise, with nothing changed."""
    try:
        fd = _open_nofollow(path)
    except FileNotFoundError:
        _create(path)
        fd = _open_nofollow(path)
    try:
        info = os.fstat(fd)
        _check_owned(info, path)
        _check_header(os.pread(fd, HEADER_SIZE, 0), path)
        _check_private(info, path)
        _lock(fd, info, path)
        _check_sidecars(path)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_nofollow(path: str) -> int:
    # O_NONBLOCK: a FIFO or a device at the path must not block the open (it is refused
    # next, as not a regular file).
    flags = os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NOCTTY | os.O_NONBLOCK
    try:
        return os.open(path, flags)
    except OSError as error:
        if error.errno == errno.ELOOP and os.path.islink(path):
            problem = "is a symbolic link; give the state file's own path"
            raise _refusal(errno.ELOOP, path, problem) from None
        raise


def _check_owned(info: os.stat_result, name: str) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise _refusal(errno.EINVAL, name, "is not a regular file")
    if info.st_uid != os.geteuid():
        problem = f"is owned by uid {info.st_uid}, not by uid {os.geteuid()}"
        raise _refusal(errno.EPERM, name, problem)


def _check_private(info: os.stat_result, name: str) -> None:
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077:
        problem = f"mode {mode:04o} lets other users read its keys; chmod 600 it if it is ours"
        raise _refusal(errno.EACCES, name, problem)


def _check_header(header: bytes, path: str) -> None:
    """Ours: an SQLite header with our application_id (set when the file was made, so it
    is in the database file itself, whatever its WAL holds)."""
    if not header:
        problem = (
            "is empty, not a key database (keyd makes its state file itself: "
            "remove this one or name a new path)"
        )
        raise _refusal(errno.EINVAL, path, problem)
    if len(header) < HEADER_SIZE or not header.startswith(SQLITE_MAGIC):
        raise _refusal(errno.EINVAL, path, "is not a usable key database: not an SQLite file")
    found = int.from_bytes(header[APPLICATION_ID_AT : APPLICATION_ID_AT + 4], "big")
    if found != APPLICATION_ID:
        problem = "is not a usable key database: it is another application's SQLite file"
        raise _refusal(errno.EINVAL, path, problem)


def _lock(fd: int, info: os.stat_result, path: str) -> None:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _lock_holder(info)
        who = "" if holder is None else f" (pid {holder})"
        raise _refusal(errno.EBUSY, path, f"already in use by another keyd{who}") from None


def _lock_holder(info: os.stat_result) -> int | None:
    """The pid holding a ``flock`` on the file ``info`` describes, from ``/proc/locks``
    (``N: FLOCK ADVISORY WRITE pid major:minor:inode start end``), if it can be found."""
    wanted = f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}:{info.st_ino}"
    try:
        with open("/proc/locks", encoding="ascii", errors="replace") as stream:
            lines = stream.read().splitlines()
    except OSError:
        return None
    for line in lines:
        fields = line.split()
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5] == wanted:
            return int(fields[4]) if fields[4].isdigit() else None
    return None


def _check_sidecars(path: str) -> None:
    """SQLite reuses a WAL, shared-memory or journal file it finds: each must be ours and
    private too (SQLite itself refuses to open one through a symbolic link)."""
    for suffix in SIDECARS:
        try:
            info = os.lstat(path + suffix)
        except FileNotFoundError:
            continue
        _check_owned(info, path + suffix)
        _check_private(info, path + suffix)


def _create(path: str) -> None:
    """Make an empty key database at ``path``: built under a temporary name in the same
    directory (``mkstemp``: O_CREAT|O_EXCL, mode 0600) and hard-linked into place only when
    whole, so a crash never leaves an empty or half-made file there. If a file appeared at
    ``path`` meanwhile, it is left alone (and checked like any other)."""
    directory = os.path.dirname(path) or "."
    fd, temporary = tempfile.mkstemp(dir=directory, prefix=os.path.basename(path) + ".")
    try:
        try:
            os.fchmod(fd, 0o600)  # ours, just made: exactly 0600 whatever the umask
        finally:
            os.close(fd)
        _initialize(temporary)
        with contextlib.suppress(FileExistsError):
            os.link(temporary, path)
        _sync_directory(directory)
    finally:
        os.unlink(temporary)


def _initialize(path: str) -> None:
    """The schema and the application_id, in one transaction of a rollback journal (the
    WAL comes when the store opens the file), so both are in the database file itself."""
    db = sqlite3.connect(path, isolation_level=None)
    try:
        db.executescript(
            f"BEGIN; PRAGMA application_id = {APPLICATION_ID}; {CREATE_SQL}"
            f"INSERT INTO meta VALUES ('schema', {SCHEMA}); COMMIT;"
        )
    finally:
        db.close()


def _sync_directory(directory: str) -> None:
    """Make the new directory entry durable (SQLite does this for its WAL, not for us)."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class StateStore:
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
        try:
            self._fd = _claim(self.path)
        except (OSError, sqlite3.Error) as error:
            raise _cannot_open(self.path, error) from None
        try:
            self.db = self._connect(mode)
        except BaseException:
            os.close(self._fd)
            raise
        self._sas: Journal[SaKey] | None = None
        self._policies: Journal[int] | None = None
        self._km: KeyManager | None = None
        self._scrub = False
        self._usage = UsageWriter(usage_interval, clock)

    def _connect(self, synchronous: str) -> sqlite3.Connection:
        """SQLite on the file claimed, once the path is seen to name it still."""
        try:
            db = sqlite3.connect(
                self.path, isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT
            )
        except sqlite3.Error as error:
            raise _cannot_open(self.path, error) from None
        try:
            self._same_file()
            _open(db, synchronous)
        except sqlite3.DatabaseError as error:
            db.close()
            problem = f"is not a usable key database: {error}"
            raise _refusal(errno.EINVAL, self.path, problem) from None
        except BaseException:
            db.close()
            raise
        return db

    def _same_file(self) -> None:
        """The path still names the file claimed: not replaced while SQLite opened it.
        (A narrow race remains between the two opens; closing it needs SQLite to open a
        descriptor, which its Python binding cannot.)"""
        mine, named = os.fstat(self._fd), os.stat(self.path, follow_symlinks=False)
        if (mine.st_dev, mine.st_ino) != (named.st_dev, named.st_ino):
            raise _refusal(errno.EBUSY, self.path, "was replaced while it was being opened")

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
            self._km.on_dying = None
        self.db.close()
        os.close(self._fd)
        self._fd = -1

    def sas(self) -> Iterator[SecurityAssociation]:
        """Every stored SA, oldest first (as the database had them)."""
        query = f"SELECT {', '.join(SA_COLUMNS)} FROM sas ORDER BY rowid"
        for row in self.db.execute(query):
            values = dict(zip(SA_COLUMNS, row, strict=True))
            for column in LIFETIME_COLUMNS:
                values[column] = _lifetime(values[column])
            values["soft_expired"] = bool(values["soft_expired"])
            yield SecurityAssociation(**values)

    def attach(self, km: "KeyManager") -> tuple[int, int]:
        """Load the stored SAs and policies into the (empty) key manager ``km``, with their
        timers, and read its databases' change journals from now on. Returns (SAs,
        policies) loaded."""
        for sa in self.sas():
            km.sad.add(sa)
            self._usage.stored(sa.key, sa)
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
        self._sas = km.sad.track()
        self._policies = km.spd.track()
        self._km = km
        km.on_dying = self._usage.dying
        return len(km.sad), len(km.spd)

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
        gone, written = _rows(sas, current, _sa_row)
        steps: list[_Step] = [(_DELETE_SA, gone), (_UPSERT_SA, written)]
        if policies.changed:  # most commits carry SAs alone
            indexes, policy_rows = _rows(policies, km.spd.by_index, _policy_row)
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
        steps = [*steps, (_UPDATE_USAGE, [_usage_row(sa) for sa in usage])]
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
