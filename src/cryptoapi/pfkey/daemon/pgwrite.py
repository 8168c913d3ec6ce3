"""The active keyd's commits to PostgreSQL (:mod:`.pgstore`): what the key manager's change
journals name, as :mod:`.rows` maps it, with a row per change in the journal standbys
follow, in one durable transaction; and usage on its own schedule (:mod:`.usage`), as the
SQLite store writes them.

A commit is sent as one pipeline (psycopg's: the statements go out together and the
transaction costs about one round trip and one WAL flush), and ends with a notification on
:data:`~.pgschema.CHANNEL`, which PostgreSQL delivers to the standbys when it commits.
Every :data:`PRUNE_EVERY` commits, changes older than the newest :data:`KEEP_CHANGES` are
forgotten (a standby that had not read them reloads everything).
"""

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from cryptoapi.pfkey.daemon import pgschema as sql
from cryptoapi.pfkey.daemon.rows import changed_rows, policy_row, sa_row, usage_row
from cryptoapi.pfkey.daemon.usage import UsageWriter
from cryptoapi.pfkey.db.sad import SecurityAssociation

if TYPE_CHECKING:
    import psycopg

    from cryptoapi.pfkey.km.manager import KeyManager

KEEP_CHANGES = 100_000
"""Changes kept for standbys that lag."""
PRUNE_EVERY = 1000
"""Commits between two prunings of the change journal."""

_Step = tuple[str, Sequence[Sequence[Any]]]
"""A statement and the rows it runs over, in one commit."""


class Writer:
    """Writes ``km``'s changes from the moment it is made (its journals are started) until
    :meth:`stop`; usage at most every ``interval`` seconds of ``clock``."""

    def __init__(self, km: "KeyManager", interval: float, clock: Callable[[], float]) -> None:
        self.km = km
        self.usage = UsageWriter(interval, clock)
        for key, sa in km.sad.by_key.items():
            self.usage.stored(key, sa)
        self.sas = km.sad.track()
        self.policies = km.spd.track()
        km.on_dying = km.on_checkpoint = self.usage.dying
        self.commits = 0

    def stop(self) -> None:
        """Stop noting the key manager's changes (they are not written any more)."""
        self.km.sad.journal = None
        self.km.spd.journal = None
        self.km.on_dying = self.km.on_checkpoint = None

    def commit(self, db: "psycopg.Connection[Any]") -> bool:
        """Write every change since the last commit, and the usage due; False if there was
        nothing to write."""
        sas, policies, km = self.sas, self.policies, self.km
        usage = self.usage.due_now(km.sad.by_key, sas.changed)
        if not (sas.changed or policies.changed or usage):
            return False
        current = km.sad.by_key
        gone, written = changed_rows(sas, current, sa_row)
        steps: list[_Step] = [
            (sql.DELETE_SA, gone),
            (sql.UPSERT_SA, written),
            (sql.SA_CHANGE, [*gone, *((r[0], r[2], r[1]) for r in written)]),  # satype, dst, spi
        ]
        if policies.changed:
            indexes, policy_rows = changed_rows(policies, km.spd.by_index, policy_row)
            steps += (
                (sql.DELETE_POLICY, [(index,) for index in indexes]),
                (sql.UPSERT_POLICY, policy_rows),
                (sql.POLICY_CHANGE, [(index,) for index in policies.changed]),
            )
        self._transaction(db, steps, usage)
        stored = self.usage.stored
        for key in sas.changed:
            stored(key, current.get(key))
        sas.clear()
        policies.clear()
        return True

    def flush_usage(self, db: "psycopg.Connection[Any]") -> None:
        """Write now the usage that moved (at close)."""
        usage = self.usage.due_now(self.km.sad.by_key, self.sas.changed, force=True)
        if usage:
            self._transaction(db, [], usage)

    def _transaction(
        self, db: "psycopg.Connection[Any]", steps: list[_Step], usage: list[SecurityAssociation]
    ) -> None:
        """Each statement over its rows, the usage rows, their changes and the notification,
        in one durable transaction, pipelined."""
        usage_rows = [usage_row(sa) for sa in usage]
        steps = [
            *steps,
            (sql.UPDATE_USAGE, usage_rows),
            (sql.SA_CHANGE, [row[-3:] for row in usage_rows]),
        ]
        self.commits += 1
        with db.pipeline(), db.transaction(), db.cursor() as cursor:
            for statement, rows in steps:
                if rows:
                    cursor.executemany(statement, rows)
            if self.commits % PRUNE_EVERY == 0:
                cursor.execute(sql.PRUNE_CHANGES, (KEEP_CHANGES,))
            cursor.execute("SELECT pg_notify(%s, '')", (sql.CHANNEL,))
        self.usage.wrote(usage)
