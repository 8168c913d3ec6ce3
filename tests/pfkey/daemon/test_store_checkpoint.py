"""The sequence-number checkpoint in the SQLite state file (issue 23, item 3): a usage
report that raises an SA's sequence number is written at the next commit (not an interval
later), never lowered, kept across a restart; a schema 2 file gains the column."""

import sqlite3

from cryptoapi.pfkey import KeyManager, SaType
from cryptoapi.pfkey.daemon.schema import SCHEMA
from cryptoapi.pfkey.daemon.store import StateStore
from tests.pfkey.conftest import DST, only, sa_message, usage_report

SPI = 0x700


def stored_sequence(path):
    db = sqlite3.connect(path)
    try:
        return db.execute("SELECT sequence FROM sas WHERE spi = ?", (SPI,)).fetchone()[0]
    finally:
        db.close()


def test_a_reported_sequence_number_is_durable_at_the_next_commit(km, where):
    path = f"{where}/keys.db"
    store = StateStore(path, usage_interval=3600.0)  # the interval never comes
    try:
        store.attach(km)
        assert only(km, sa_message(SPI)).errno == 0
        store.commit()
        assert only(km, usage_report(SPI, packets=5, sequence=70000)).errno == 0
        assert store.pending()  # the checkpoint waits for no interval
        store.commit()
        assert stored_sequence(path) == 70000
        assert only(km, usage_report(SPI, packets=6, sequence=3)).errno == 0  # never lowered
        store.commit()
        assert stored_sequence(path) == 70000
    finally:
        store.close()


def written(km, path, *messages):
    """A state file at ``path`` holding ``km`` once ``messages`` are handled, closed."""
    store = StateStore(path)
    store.attach(km)
    for message in messages:
        assert only(km, message).errno == 0
    store.commit()
    store.close()


def reopened_sequence(registry, clock, path):
    """The checkpoint of SA ``SPI`` as a keyd restarted on ``path`` loads it."""
    again, store = KeyManager(registry, clock=clock), StateStore(path)
    try:
        store.attach(again)
        return again.sad.get(SaType.ESP, DST, SPI).sequence
    finally:
        store.close()


def test_a_checkpoint_survives_a_restart(km, registry, clock, where):
    path = f"{where}/keys.db"
    written(km, path, sa_message(SPI), usage_report(SPI, packets=1, sequence=12345))
    assert reopened_sequence(registry, clock, path) == 12345


def test_a_schema_2_file_gains_the_checkpoint_column(km, registry, clock, where):
    path = f"{where}/keys.db"
    written(km, path, sa_message(SPI))
    db = sqlite3.connect(path)  # as version 2 had it: no sequence column
    db.execute("ALTER TABLE sas DROP COLUMN sequence")
    db.execute("UPDATE meta SET value = 2 WHERE name = 'schema'")
    db.commit()
    db.close()
    assert reopened_sequence(registry, clock, path) == 0
    assert stored_sequence(path) == 0
    db = sqlite3.connect(path)
    assert db.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone()[0] == SCHEMA
    db.close()
