"""The tables of a key daemon's state file (:mod:`.store`), and how a file of an older
version is brought up to this one when it is opened.

Version 4 (:data:`SCHEMA`):

- ``meta``: the row ``schema``, the version;
- ``sas``: one row an SA, its :data:`SA_COLUMNS`, unique by (satype, dst, spi);
- ``policies``: one row a policy: its index ``id`` (unique), ``added``, and the policy as
  the ``X_SPDADD`` message that adds it again.

Both come back in ``rowid`` order, the order the SAD and SPD keep: a record inserted as
the newest (an add; an SPDUPDATE, or the UPDATE of a larval SA, which Linux links anew)
has its row deleted and inserted again, and SQLite gives a new row a rowid above all
others (https://sqlite.org/autoinc.html); a row updated in place keeps its rowid. The
rowid serves rather than a sequence column of our own because it needs no counter kept or
read back, no index and nothing more written, and the SAs already rely on it.

Version 3 adds the column ``sequence`` to ``sas`` (0 in the rows of an older file): an
SA's sequence-number checkpoint, the last sequence number its data path reported
(``X_USAGE``), raised past the checkpoint margin when a standby takes over
(:mod:`.checkpoint`). It is written with the usage and never lowered (issue 23). Version 4
adds ``received``, an inbound SA's checkpoint: the highest sequence number its data path
reported received, never raised by a takeover, where the next data path's replay window
starts.

Version 1 declared ``policies.id INTEGER PRIMARY KEY``, which makes the index the rowid
itself, so policies came back in index order, not in Linux's (issue 11). :func:`upgrade`
rebuilds that table with a rowid of its own, in the transaction that changes the version:
a crash leaves a whole version 1 or a whole version 2 file. Version 1 kept no order, so
the rows are put in the order of ``added``, the time each policy was linked (a policy
SPDUPDATE makes is a new one, added then, as ``xfrm_policy_insert`` sets
``curlft.add_time``): the order it was dumped in, unless the wall clock went back. Equal
times go by index.
"""

import sqlite3

SCHEMA = 4

SA_COLUMNS = (
    "satype", "spi", "dst", "state", "replay", "auth", "encrypt", "flags",
    "auth_key", "auth_bits", "encrypt_key", "encrypt_bits", "mode", "reqid",
    "src_ext", "dst_ext", "hard", "soft", "extra", "added", "seq", "used",
    "nbytes", "allocations", "soft_expired", "sequence", "received",
)  # fmt: skip
"""The SecurityAssociation fields kept (all but ``epoch``, which only timers use)."""
CHECKPOINT_COLUMNS = ("sequence", "received")
"""The last of :data:`SA_COLUMNS`: the checkpoints, which every statement that writes them
keeps the greater of the stored and the written value of (never lowered)."""

_POLICY_COLUMNS = "(id INTEGER NOT NULL UNIQUE, added REAL, message BLOB)"

CREATE_SQL = f"""
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS sas ({", ".join(SA_COLUMNS)}, UNIQUE (satype, dst, spi));
CREATE TABLE IF NOT EXISTS policies {_POLICY_COLUMNS};
"""
"""The tables of a new file, at version :data:`SCHEMA`."""

_POLICIES_IN_ADDED_ORDER = (
    f"CREATE TABLE policies_2 {_POLICY_COLUMNS}",
    # rowids given explicitly: the order an INSERT ... SELECT inserts in is not documented
    "INSERT INTO policies_2 (rowid, id, added, message) "
    "SELECT row_number() OVER (ORDER BY added, id), id, added, message FROM policies",
    "DROP TABLE policies",
    "ALTER TABLE policies_2 RENAME TO policies",
)
_SEQUENCE_CHECKPOINTS = ("ALTER TABLE sas ADD COLUMN sequence NOT NULL DEFAULT 0",)
_RECEIVED_CHECKPOINTS = ("ALTER TABLE sas ADD COLUMN received NOT NULL DEFAULT 0",)
UPGRADES = {1: _POLICIES_IN_ADDED_ORDER, 2: _SEQUENCE_CHECKPOINTS, 3: _RECEIVED_CHECKPOINTS}
"""The statements that bring a file of each older version to the next one."""


class Transaction:
    """``with Transaction(db):`` runs its body between ``BEGIN IMMEDIATE`` (the write lock
    at once) and ``COMMIT``, or rolls it back if the body or the commit fails, so the file
    never holds half of it. (A class, not a generator: it is on every commit's path.)"""

    __slots__ = ("db",)

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        try:
            if kind is None:
                self.db.execute("COMMIT")
        finally:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")


def upgrade(db: sqlite3.Connection) -> None:
    """Bring the file to version :data:`SCHEMA`, in one transaction (nothing to do if it
    is there); DatabaseError, the file untouched, if its version is none this reads."""
    with Transaction(db):
        found = version = _version(db)
        while version in UPGRADES:
            for statement in UPGRADES[version]:
                db.execute(statement)
            version += 1
        if version != SCHEMA:
            raise sqlite3.DatabaseError(f"schema {found} is not {SCHEMA}")
        if version != found:
            db.execute("UPDATE meta SET value = ? WHERE name = 'schema'", (SCHEMA,))


def _version(db: sqlite3.Connection) -> int:
    row = db.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone()
    if row is None:
        raise sqlite3.DatabaseError("it names no schema version")
    return int(row[0])
