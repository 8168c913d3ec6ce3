"""The tables of a key daemon's state in PostgreSQL (:mod:`.pgstore`), in a schema of
their own, and how a database is checked before they are used.

Everything lives in the schema ``cryptoapi_keyd`` (:data:`NAMESPACE`), version
:data:`SCHEMA` (3; version 1 had no ``sas.sequence``, version 2 no ``sas.received``, which
the upgrades add):

- ``meta``: the rows ``application`` (:data:`APPLICATION`: whose tables these are) and
  ``schema`` (the version);
- ``sas``: one row an SA, its :data:`~.schema.SA_COLUMNS`, keyed by (satype, dst, spi),
  and ``pos``, its place in the SAD's order; ``sequence`` is the SA's sequence-number
  checkpoint and ``received`` an inbound SA's, never lowered by a write (:mod:`.checkpoint`);
- ``policies``: one row a policy: ``pos``, its index ``id``, ``added`` and the policy as the
  ``X_SPDADD`` message that adds it again;
- ``changes``: the change journal standbys follow: one row for each SA or policy row a
  commit wrote or deleted (its key, never its keys), numbered in commit order by ``seq``
  (one writer at a time, the holder of :data:`LOCK`, so numbers grow with commits).

``pos`` comes from one sequence: a row inserted (an add, or a record moved to newest,
deleted and inserted again) takes the next number, a row updated in place keeps its own,
so ``ORDER BY pos`` is the databases' order, as the SQLite store's ``rowid`` is
(:mod:`.schema`).

A database that has a ``cryptoapi_keyd`` schema whose ``meta`` does not name this
application, or names a version this code does not read, is refused, nothing touched: the
schema of another program is never written, and nothing outside this schema ever is.
Creating the schema and checking it run under a transaction advisory lock
(:data:`CREATE_LOCK`), so two daemons starting at once make it once.
"""

from cryptoapi.pfkey.daemon.rows import USAGE_COLUMNS
from cryptoapi.pfkey.daemon.schema import CHECKPOINT_COLUMNS, SA_COLUMNS

NAMESPACE = "cryptoapi_keyd"
APPLICATION = "cryptoapi keyd"
SCHEMA = 3
LOCK = 0x504B3256_0000_0001
"""The session advisory lock the active keyd holds (``pg_try_advisory_lock``)."""
CREATE_LOCK = 0x504B3256_0000_0002
"""The transaction advisory lock that serialises checking and creating the schema."""
CHANNEL = "cryptoapi_keyd"
"""The LISTEN/NOTIFY channel a commit notifies (its payload: the last change number)."""

_BYTES = frozenset(
    ("dst", "auth_key", "encrypt_key", "src_ext", "dst_ext", "hard", "soft", "extra")
)
_FLOATS = frozenset(("added", "used"))


def _type(column: str) -> str:
    if column in _BYTES:
        return "bytea"
    if column in _FLOATS:
        return "double precision"
    return "boolean" if column == "soft_expired" else "bigint"


_SA_DEFINITIONS = ", ".join(f"{column} {_type(column)}" for column in SA_COLUMNS)

CREATE_SQL = (
    f"CREATE SCHEMA {NAMESPACE}",
    f"CREATE TABLE {NAMESPACE}.meta (name text PRIMARY KEY, value text NOT NULL)",
    f"CREATE SEQUENCE {NAMESPACE}.position",
    f"CREATE TABLE {NAMESPACE}.sas ("
    f"pos bigint NOT NULL DEFAULT nextval('{NAMESPACE}.position'), {_SA_DEFINITIONS}, "
    "PRIMARY KEY (satype, dst, spi))",
    f"CREATE TABLE {NAMESPACE}.policies ("
    f"pos bigint NOT NULL DEFAULT nextval('{NAMESPACE}.position'), "
    "id bigint PRIMARY KEY, added double precision, message bytea NOT NULL)",
    f"CREATE TABLE {NAMESPACE}.changes (seq bigserial PRIMARY KEY, "
    "satype bigint, dst bytea, spi bigint, policy bigint)",
    f"INSERT INTO {NAMESPACE}.meta (name, value) VALUES "
    f"('application', '{APPLICATION}'), ('schema', '{SCHEMA}'), ('pruned', '0')",
)
"""The statements that make the schema at version :data:`SCHEMA`, in one transaction."""

UPGRADES: dict[int, tuple[str, ...]] = {
    1: (f"ALTER TABLE {NAMESPACE}.sas ADD COLUMN sequence bigint NOT NULL DEFAULT 0",),
    2: (f"ALTER TABLE {NAMESPACE}.sas ADD COLUMN received bigint NOT NULL DEFAULT 0",),
}
"""The statements that bring each older version to the next one: version 2 keeps each SA's
sequence-number checkpoint (``sequence``, :mod:`.checkpoint`), version 3 an inbound SA's
(``received``)."""
TAKEOVER_JUMP = (
    f"UPDATE {NAMESPACE}.sas SET sequence = LEAST(sequence + %s, "
    "CASE WHEN flags & %s <> 0 THEN %s ELSE %s END), "
    "allocations = LEAST(allocations + %s, %s), nbytes = nbytes + %s "
    "RETURNING satype, dst, spi, sequence, allocations, nbytes"
)
"""Every SA's checkpoint raised by the margin (%s), at most to the end of its sequence
space (%s: the ESN flag; then the ESN and the 32-bit ends), and its packet and byte counts
by theirs (%s, at most %s, a u32; %s): a takeover's first statement. It returns the raised
values, which the new active takes as they are (not its own copy plus the margin: a
standby's copy of a checkpoint may be older than the row, which the jump is not journaled
for)."""

SELECT_SAS = f"SELECT pos, {', '.join(SA_COLUMNS)} FROM {NAMESPACE}.sas"
SELECT_POLICIES = f"SELECT pos, id, added, message FROM {NAMESPACE}.policies"
UPSERT_SA = (
    f"INSERT INTO {NAMESPACE}.sas ({', '.join(SA_COLUMNS)}) "
    f"VALUES ({', '.join(['%s'] * len(SA_COLUMNS))}) "
    "ON CONFLICT (satype, dst, spi) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in SA_COLUMNS[3 : -len(CHECKPOINT_COLUMNS)])
    + "".join(f", {c} = GREATEST(sas.{c}, excluded.{c})" for c in CHECKPOINT_COLUMNS)
)
DELETE_SA = f"DELETE FROM {NAMESPACE}.sas WHERE satype = %s AND dst = %s AND spi = %s"
UPSERT_POLICY = (
    f"INSERT INTO {NAMESPACE}.policies (id, added, message) VALUES (%s, %s, %s) "
    "ON CONFLICT (id) DO UPDATE SET added = excluded.added, message = excluded.message"
)
DELETE_POLICY = f"DELETE FROM {NAMESPACE}.policies WHERE id = %s"
SA_CHANGE = f"INSERT INTO {NAMESPACE}.changes (satype, dst, spi) VALUES (%s, %s, %s)"
POLICY_CHANGE = f"INSERT INTO {NAMESPACE}.changes (policy) VALUES (%s)"
PRUNE = f"DELETE FROM {NAMESPACE}.changes WHERE seq <= %s"
SET_PRUNED = f"UPDATE {NAMESPACE}.meta SET value = %s WHERE name = 'pruned'"
UPDATE_USAGE = (
    f"UPDATE {NAMESPACE}.sas SET "
    + ", ".join(f"{c} = %s" for c in USAGE_COLUMNS[: -len(CHECKPOINT_COLUMNS)])
    + "".join(f", {c} = GREATEST({c}, %s)" for c in CHECKPOINT_COLUMNS)
    + " WHERE satype = %s AND dst = %s AND spi = %s"
)
PRUNE_CHANGES = (
    f"WITH gone AS (DELETE FROM {NAMESPACE}.changes WHERE seq <= "
    f"(SELECT max(seq) - %s FROM {NAMESPACE}.changes) RETURNING seq) "
    f"UPDATE {NAMESPACE}.meta SET value = (SELECT max(seq) FROM gone)::text "
    "WHERE name = 'pruned' AND EXISTS (SELECT 1 FROM gone)"
)
"""Forget the changes older than the newest %s (a standby that had not read them since
reloads everything: ``meta.pruned`` names the last one forgotten)."""
LAST_CHANGE = (
    f"SELECT coalesce((SELECT max(seq) FROM {NAMESPACE}.changes), 0), "
    f"(SELECT value::bigint FROM {NAMESPACE}.meta WHERE name = 'pruned')"
)
CHANGED_SAS = (
    f"SELECT c.satype, c.dst, c.spi, s.pos, {', '.join(f's.{c}' for c in SA_COLUMNS)} "
    f"FROM (SELECT DISTINCT satype, dst, spi FROM {NAMESPACE}.changes "
    "WHERE seq > %s AND seq <= %s AND policy IS NULL) c "
    f"LEFT JOIN {NAMESPACE}.sas s ON s.satype = c.satype AND s.dst = c.dst AND s.spi = c.spi "
    "ORDER BY s.pos NULLS FIRST"
)
"""The SAs named by the changes in a range, each once: those gone (no ``pos``) first, then
the others in the SAD's order, with their rows."""
CHANGED_POLICIES = (
    "SELECT c.policy, p.pos, p.added, p.message "
    f"FROM (SELECT DISTINCT policy FROM {NAMESPACE}.changes "
    "WHERE seq > %s AND seq <= %s AND policy IS NOT NULL) c "
    f"LEFT JOIN {NAMESPACE}.policies p ON p.id = c.policy ORDER BY p.pos NULLS FIRST"
)
