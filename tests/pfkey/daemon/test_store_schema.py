"""State files of an older schema: opened, brought to this one in one transaction with
nothing lost, their policies in the order Linux dumped them (issue 11); a version this
code does not read is refused and left as it is."""

import errno
import os
import sqlite3

import pytest

from cryptoapi.pfkey import ExtType, KeyManager, Message, MsgType, Policy, decode
from cryptoapi.pfkey.daemon.schema import SCHEMA
from cryptoapi.pfkey.daemon.store import APPLICATION_ID, StateStore
from cryptoapi.pfkey.errors import PfkeyError
from tests.pfkey.conftest import getspi_message, header, lookup_message, only, sa_message, spd

SA_COLUMNS_1 = (
    "satype, spi, dst, state, replay, auth, encrypt, flags, auth_key, auth_bits, encrypt_key, "
    "encrypt_bits, mode, reqid, src_ext, dst_ext, hard, soft, extra, added, seq, used, "
    "nbytes, allocations, soft_expired"
)
"""The SA columns of schemas 1 and 2 (3 adds ``sequence``)."""
SCHEMA_1 = (
    f"PRAGMA application_id = {APPLICATION_ID}",
    "CREATE TABLE meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL)",
    f"CREATE TABLE sas ({SA_COLUMNS_1}, UNIQUE (satype, dst, spi))",
    "CREATE TABLE policies (id INTEGER PRIMARY KEY, added REAL, message BLOB)",
    "INSERT INTO meta VALUES ('schema', 1)",
)
"""The tables schema 1 made (its ``policies.id`` is the rowid: rows come back by index)."""

SPD_DUMP = Message(MsgType.X_SPDDUMP, 0, 3, 9).encode()


def workload(km, clock):
    """SAs, and policies whose order (newest first: B', A, C) is not that of their indexes
    (A 9, C 25, B' 33), each step a second after the last."""
    steps = (
        sa_message(0x301),
        getspi_message(0x400, 0x400),
        sa_message(0x302),
        sa_message(0x400, type=MsgType.UPDATE),
        spd(dplen=8),  # A
        spd(dplen=16),  # B
        spd(dplen=24),  # C
        spd(MsgType.X_SPDUPDATE, dplen=8, priority=5),  # A again: newer than C
        spd(MsgType.X_SPDDELETE, dplen=16),
        spd(dplen=16),  # B'
        lookup_message(MsgType.DELETE, 0x302),
    )
    for message in steps:
        assert only(km, message).errno == 0
        clock.advance(1)


def indexes(replies):
    return [decode(m).get(ExtType.X_POLICY, Policy).id for m in replies]


def schema_1_file(path, rows_from):
    """A schema 1 state file at ``path`` (ours, mode 0600) holding the rows of the state
    file ``rows_from``, as schema 1 would have stored them."""
    os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    db = sqlite3.connect(path, isolation_level=None)
    try:
        for statement in SCHEMA_1:
            db.execute(statement)
        db.execute("ATTACH DATABASE ? AS current", (rows_from,))
        db.execute(f"INSERT INTO sas SELECT {SA_COLUMNS_1} FROM current.sas ORDER BY rowid")
        db.execute("INSERT INTO policies SELECT id, added, message FROM current.policies")
        db.execute("DETACH DATABASE current")
    finally:
        db.close()


@pytest.fixture
def old(km, clock, where):
    """(path of a schema 1 file holding ``km``'s state, SA dump, SPD dump of ``km``)."""
    current = os.path.join(where, "current.db")
    store = StateStore(current)
    store.attach(km)
    workload(km, clock)
    store.commit()
    store.close()
    path = os.path.join(where, "old.db")
    schema_1_file(path, current)
    return path, km.handle(header(MsgType.DUMP)), km.handle(SPD_DUMP)


def restored(registry, clock, path):
    """A key manager with the state file at ``path`` loaded, and the store (open)."""
    km, store = KeyManager(registry, clock=clock), StateStore(path)
    store.attach(km)
    return km, store


def stored_schema(path):
    db = sqlite3.connect(path)
    try:
        version = db.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone()[0]
        ids = [row[0] for row in db.execute("SELECT id FROM policies ORDER BY rowid")]
    finally:
        db.close()
    return version, ids


def test_a_schema_1_file_opens_with_every_sa_and_policy_in_linux_order(old, registry, clock):
    path, sa_dump, spd_dump = old
    assert stored_schema(path)[1] == sorted(indexes(spd_dump))  # schema 1: by index
    km, store = restored(registry, clock, path)
    try:
        assert (len(km.sad), len(km.spd)) == (2, 3)
        assert km.handle(header(MsgType.DUMP)) == sa_dump
        # schema 1 kept no order: the upgrade orders by ``added``, when each was linked
        assert km.handle(SPD_DUMP) == spd_dump
    finally:
        store.close()
    assert stored_schema(path) == (SCHEMA, indexes(spd_dump)[::-1])


def test_an_upgraded_file_keeps_the_order_of_later_changes(old, registry, clock):
    """Once upgraded, the file is a schema 2 one: an SPDUPDATE is the newest across the
    next restart too, and a second open upgrades nothing."""
    path, _, spd_dump = old
    km, store = restored(registry, clock, path)
    try:
        oldest = indexes(spd_dump)[-1]
        assert only(km, spd(MsgType.X_SPDUPDATE, dplen=24, priority=9)).errno == 0
        store.commit()
        expected = km.handle(SPD_DUMP)
        assert indexes(expected)[0] == oldest
    finally:
        store.close()
    again, store = restored(registry, clock, path)
    try:
        assert again.handle(SPD_DUMP) == expected
    finally:
        store.close()


def refused_once(path, statement):
    """The PfkeyError opening ``path`` raises once ``statement`` has run on it."""
    db = sqlite3.connect(path)
    db.execute(statement)
    db.commit()
    db.close()
    with pytest.raises(PfkeyError) as refused:
        StateStore(path)
    assert refused.value.errno == errno.EINVAL
    return str(refused.value)


def test_a_failed_upgrade_changes_nothing(old):
    """The upgrade is one transaction: when a statement of it fails (here the new table's
    name is taken), the file is refused and stays a whole schema 1 file."""
    path, _, spd_dump = old
    assert "policies_2" in refused_once(path, "CREATE TABLE policies_2 (x)")
    assert stored_schema(path) == (1, sorted(indexes(spd_dump)))


def test_a_schema_this_code_does_not_read_is_refused_untouched(old):
    path, _, spd_dump = old
    problem = refused_once(path, "UPDATE meta SET value = 7 WHERE name = 'schema'")
    assert f"schema 7 is not {SCHEMA}" in problem
    assert stored_schema(path) == (7, sorted(indexes(spd_dump)))
