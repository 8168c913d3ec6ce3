"""A keyd's session on PostgreSQL (:mod:`.pgstore`): the URL told from a file name and shown
without its password, the connection made with the settings the store's promises rest on,
the schema checked (or made) before anything else, and who holds the active's lock.

Every session has ``synchronous_commit = on`` (an acknowledged change is in the server's
WAL on disk, whatever the server's default) and repeatable-read snapshots (a standby reads
the changes and the rows they name as of one instant). Its ``application_name`` carries the
keyd's pid, so a keyd refused the lock can name the one that holds it. TCP keepalives and
``tcp_user_timeout`` bound how long a keyd waits on a server it cannot reach (a Unix socket
ignores them); how soon the *server* lets go of a lost keyd's session (and lock) is the
server's ``tcp_keepalives_*`` settings' business.
"""

import errno
import os
import urllib.parse
from typing import TYPE_CHECKING, Any

from cryptoapi.pfkey.daemon import pgschema as sql
from cryptoapi.pfkey.errors import PfkeyError

if TYPE_CHECKING:
    import psycopg

SCHEMES = ("postgresql://", "postgres://")
"""A ``--state`` that starts with one of these is a PostgreSQL URL, else an SQLite file."""
CONNECT_TIMEOUT = 5
"""Seconds to connect (libpq ``connect_timeout``)."""
USER_TIMEOUT_MS = 5000
"""Milliseconds a write to the server may stay unacknowledged (``tcp_user_timeout``)."""


def is_url(state: str) -> bool:
    """Whether ``--state`` names a PostgreSQL database rather than an SQLite file."""
    return state.startswith(SCHEMES)


def shown(url: str) -> str:
    """``url`` without its password, to log and show."""
    parts = urllib.parse.urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


def connect(url: str) -> "psycopg.Connection[Any]":
    """A session on ``url`` for a keyd: autocommit (transactions are explicit), durable
    commits, repeatable-read snapshots, and the keyd's pid in ``application_name`` (so
    another keyd can name the active one); PfkeyError (one line) if it cannot be had."""
    try:
        import psycopg
    except ImportError:
        raise PfkeyError(
            errno.ENOPKG, "a postgresql:// state needs psycopg: pip install 'cryptoapi[postgresql]'"
        ) from None
    try:
        db = psycopg.connect(
            url,
            autocommit=True,
            connect_timeout=CONNECT_TIMEOUT,
            keepalives=1,
            keepalives_idle=5,
            keepalives_interval=1,
            keepalives_count=3,
            tcp_user_timeout=USER_TIMEOUT_MS,
            application_name=f"cryptoapi keyd pid {os.getpid()}",
        )
    except psycopg.Error as error:
        raise PfkeyError(
            errno.ECONNREFUSED, f"cannot connect to {shown(url)}: {first_line(error)}"
        ) from None
    try:
        db.execute("SET synchronous_commit = on")
        db.execute("SET default_transaction_isolation = 'repeatable read'")
        _prepare(db, url)
    except psycopg.Error as error:
        db.close()
        raise PfkeyError(errno.EIO, f"{shown(url)}: {first_line(error)}") from None
    except BaseException:
        db.close()
        raise
    return db


def first_line(error: BaseException) -> str:
    """The first line of a driver's message (libpq's run over several)."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _prepare(db: "psycopg.Connection[Any]", url: str) -> None:
    """Make the schema if it is absent; refuse (EEXIST) a schema of that name that is not
    this application's, or of a version this code does not read (see :mod:`.pgschema`)."""
    with db.transaction():
        db.execute("SELECT pg_advisory_xact_lock(%s)", (sql.CREATE_LOCK,))
        found = db.execute(
            "SELECT to_regclass(%s) IS NOT NULL, EXISTS "
            "(SELECT 1 FROM pg_namespace WHERE nspname = %s)",
            (f"{sql.NAMESPACE}.meta", sql.NAMESPACE),
        ).fetchone()
        assert found is not None
        has_meta, has_schema = found
        if not has_schema:
            for statement in sql.CREATE_SQL:
                db.execute(statement)
            return
        marks = (
            dict(db.execute(f"SELECT name, value FROM {sql.NAMESPACE}.meta").fetchall())
            if has_meta
            else {}
        )
        if marks.get("application") != sql.APPLICATION:
            raise PfkeyError(
                errno.EEXIST,
                f"{shown(url)}: schema {sql.NAMESPACE} exists and is not a cryptoapi keyd's "
                "(no application marker): not touched",
            )
        version = int(marks.get("schema", "0"))
        while version in sql.UPGRADES:
            for statement in sql.UPGRADES[version]:
                db.execute(statement)
            version += 1
        if version != sql.SCHEMA:
            raise PfkeyError(
                errno.EPROTO, f"{shown(url)}: schema version {version} is not {sql.SCHEMA}"
            )
        db.execute(
            f"UPDATE {sql.NAMESPACE}.meta SET value = %s WHERE name = 'schema'", (str(version),)
        )


def lock_holder(db: "psycopg.Connection[Any]") -> str:
    """Who holds the active's lock, as its ``application_name`` says (``cryptoapi keyd pid
    N``), and from where."""
    found = db.execute(
        "SELECT a.application_name, a.client_addr FROM pg_locks l "
        "JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' "
        "AND l.granted AND l.classid = %s AND l.objid = %s AND l.objsubid = 1",
        (sql.LOCK >> 32, sql.LOCK & 0xFFFFFFFF),
    ).fetchone()
    if found is None:
        return "unknown"
    name, address = found
    return f"{name or 'a session'}" + (f" from {address}" if address else "")
