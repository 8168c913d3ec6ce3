"""A private SQLite file of one daemon: opened with care before SQLite sees it.

keyd's state file (:mod:`.store`) holds keys, and espd's sequence file
(:mod:`cryptoapi.esp.seqfloor`) decides which nonces are never used again; both are
claimed the same way:

- one daemon per file: an exclusive ``flock`` on it, held while the file is open (the
  kernel drops it when the process dies, so ``kill -9`` leaves no stale lock). A second
  daemon gets EBUSY naming the holder's pid (from ``/proc/locks``). ``flock`` and SQLite's
  POSIX byte-range locks are independent on Linux, and SQLite keeps its own (WAL mode,
  crash recovery) unchanged; the locked descriptor is closed only after the connection,
  since closing any descriptor of a file drops the process's POSIX locks on it;
- never through a link, never someone else's file: the path is opened ``O_NOFOLLOW``
  (a symbolic link is refused: ELOOP), must be a regular file of our uid (EPERM), and its
  header, read from that descriptor, must be an SQLite file carrying the kind's
  ``application_id`` (EINVAL otherwise: an empty file too, since we never leave one), all
  before anything is written or chmodded. A file others may read or write (mode & 0o077)
  is refused (EACCES), not chmodded, and so are such WAL, shared-memory or journal files;
- a new file is built whole under a temporary name (``mkstemp``: ``O_CREAT|O_EXCL``, mode
  0600, which SQLite gives its WAL and shared-memory files too) and hard-linked into place,
  so a file at the path is either absent or a complete file of its kind.
"""

import contextlib
import errno
import fcntl
import os
import sqlite3
import stat
import tempfile
from collections.abc import Callable
from typing import NamedTuple

from cryptoapi.pfkey.errors import PfkeyError

SQLITE_MAGIC = b"SQLite format 3\0"
"""The first 16 bytes of every SQLite database (https://sqlite.org/fileformat2.html §1.3)."""
HEADER_SIZE = 100
APPLICATION_ID_AT = 68  # the header's application_id: a big-endian u32 at offset 68
SIDECARS = ("-wal", "-shm", "-journal")
"""The files SQLite keeps beside the database (named by appending these)."""
BUSY_TIMEOUT = 5.0
"""Seconds a commit waits for a lock another process holds (Python's default)."""
SYNC_MODES = ("FULL", "NORMAL")


class FileKind(NamedTuple):
    """What a private file is: the words its refusals use, the ``application_id`` that
    marks it, its tables at version ``schema``, and how an older file is upgraded."""

    noun: str  # "key database"
    owner: str  # the daemon that keeps it: "keyd"
    contents: str  # what others must not read or change: "keys"
    application_id: int
    create_sql: str
    schema: int
    upgrade: Callable[[sqlite3.Connection], None]


def refusal(code: int, path: str, problem: str) -> PfkeyError:
    return PfkeyError(code, f"{path}: {problem}")


def cannot_open(path: str, error: OSError | sqlite3.Error) -> PfkeyError:
    if isinstance(error, OSError):
        code = error.errno or errno.EIO
        return PfkeyError(code, f"cannot open {path}: {error.strerror or error}")
    return PfkeyError(errno.EIO, f"cannot open {path}: {error}")


def claim(path: str, kind: FileKind) -> int:
    """A descriptor on the file of ``kind`` at ``path`` (made if absent), checked to be
    ours and locked (see the module docstring); PfkeyError otherwise, nothing changed."""
    try:
        return _claim(path, kind)
    except (OSError, sqlite3.Error) as error:
        raise cannot_open(path, error) from None


def _claim(path: str, kind: FileKind) -> int:
    try:
        fd = _open_nofollow(path)
    except FileNotFoundError:
        _create(path, kind)
        fd = _open_nofollow(path)
    try:
        info = os.fstat(fd)
        _check_owned(info, path)
        _check_header(os.pread(fd, HEADER_SIZE, 0), path, kind)
        _check_private(info, path, kind)
        _lock(fd, info, path, kind)
        _check_sidecars(path, kind)
    except BaseException:
        os.close(fd)
        raise
    return fd


def connect(path: str, fd: int, kind: FileKind, synchronous: str) -> sqlite3.Connection:
    """SQLite on the file ``fd`` claimed, once the path is seen to name it still: in WAL
    mode with ``synchronous``, brought to the kind's schema."""
    try:
        db = sqlite3.connect(
            path, isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT
        )
    except sqlite3.Error as error:
        raise cannot_open(path, error) from None
    try:
        _same_file(fd, path)
        _open(db, synchronous, kind)
    except sqlite3.DatabaseError as error:
        db.close()
        raise refusal(errno.EINVAL, path, f"is not a usable {kind.noun}: {error}") from None
    except BaseException:
        db.close()
        raise
    return db


def _open(db: sqlite3.Connection, synchronous: str, kind: FileKind) -> None:
    """Check the (claimed) database through SQLite, set the connection up, and bring an
    older file to this schema."""
    app = db.execute("PRAGMA application_id").fetchone()[0]
    if app != kind.application_id:
        raise sqlite3.DatabaseError("it is another application's database")
    db.execute("PRAGMA journal_mode = WAL")
    db.execute(f"PRAGMA synchronous = {synchronous}")
    db.execute("PRAGMA secure_delete = ON")
    kind.upgrade(db)


def _same_file(fd: int, path: str) -> None:
    """The path still names the file claimed: not replaced while SQLite opened it.
    (A narrow race remains between the two opens; closing it needs SQLite to open a
    descriptor, which its Python binding cannot.)"""
    mine, named = os.fstat(fd), os.stat(path, follow_symlinks=False)
    if (mine.st_dev, mine.st_ino) != (named.st_dev, named.st_ino):
        raise refusal(errno.EBUSY, path, "was replaced while it was being opened")


def _open_nofollow(path: str) -> int:
    # O_NONBLOCK: a FIFO or a device at the path must not block the open (it is refused
    # next, as not a regular file).
    flags = os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NOCTTY | os.O_NONBLOCK
    try:
        return os.open(path, flags)
    except OSError as error:
        if error.errno == errno.ELOOP and os.path.islink(path):
            problem = "is a symbolic link; give the state file's own path"
            raise refusal(errno.ELOOP, path, problem) from None
        raise


def _check_owned(info: os.stat_result, name: str) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise refusal(errno.EINVAL, name, "is not a regular file")
    if info.st_uid != os.geteuid():
        problem = f"is owned by uid {info.st_uid}, not by uid {os.geteuid()}"
        raise refusal(errno.EPERM, name, problem)


def _check_private(info: os.stat_result, name: str, kind: FileKind) -> None:
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077:
        problem = (
            f"mode {mode:04o} lets other users read its {kind.contents}; chmod 600 it if it is ours"
        )
        raise refusal(errno.EACCES, name, problem)


def _check_header(header: bytes, path: str, kind: FileKind) -> None:
    """Ours: an SQLite header with the kind's application_id (set when the file was made,
    so it is in the database file itself, whatever its WAL holds)."""
    if not header:
        problem = (
            f"is empty, not a {kind.noun} ({kind.owner} makes its state file itself: "
            "remove this one or name a new path)"
        )
        raise refusal(errno.EINVAL, path, problem)
    if len(header) < HEADER_SIZE or not header.startswith(SQLITE_MAGIC):
        raise refusal(errno.EINVAL, path, f"is not a usable {kind.noun}: not an SQLite file")
    found = int.from_bytes(header[APPLICATION_ID_AT : APPLICATION_ID_AT + 4], "big")
    if found != kind.application_id:
        problem = f"is not a usable {kind.noun}: it is another application's SQLite file"
        raise refusal(errno.EINVAL, path, problem)


def _lock(fd: int, info: os.stat_result, path: str, kind: FileKind) -> None:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _lock_holder(info)
        who = "" if holder is None else f" (pid {holder})"
        raise refusal(errno.EBUSY, path, f"already in use by another {kind.owner}{who}") from None


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


def _check_sidecars(path: str, kind: FileKind) -> None:
    """SQLite reuses a WAL, shared-memory or journal file it finds: each must be ours and
    private too (SQLite itself refuses to open one through a symbolic link)."""
    for suffix in SIDECARS:
        try:
            info = os.lstat(path + suffix)
        except FileNotFoundError:
            continue
        _check_owned(info, path + suffix)
        _check_private(info, path + suffix, kind)


def _create(path: str, kind: FileKind) -> None:
    """Make an empty file of ``kind`` at ``path``: built under a temporary name in the same
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
        _initialize(temporary, kind)
        with contextlib.suppress(FileExistsError):
            os.link(temporary, path)
        _sync_directory(directory)
    finally:
        os.unlink(temporary)


def _initialize(path: str, kind: FileKind) -> None:
    """The schema and the application_id, in one transaction of a rollback journal (the
    WAL comes when the file is opened), so both are in the database file itself."""
    db = sqlite3.connect(path, isolation_level=None)
    try:
        db.executescript(
            f"BEGIN; PRAGMA application_id = {kind.application_id}; {kind.create_sql}"
            f"INSERT INTO meta VALUES ('schema', {kind.schema}); COMMIT;"
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
