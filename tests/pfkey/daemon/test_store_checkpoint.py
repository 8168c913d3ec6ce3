"""The sequence-number checkpoints in the SQLite state file (issue 23, item 3): a usage
report that raises an SA's sequence number is written at the next commit (not an interval
later), never lowered, kept across a restart; an inbound SA's (received) is kept apart; a
schema 2 or 3 file gains the columns."""

import sqlite3

import pytest

from cryptoapi.pfkey import KeyManager, SaType
from cryptoapi.pfkey.daemon.schema import SCHEMA
from cryptoapi.pfkey.daemon.store import StateStore
from tests.pfkey.conftest import DST, only, sa_message, usage_report

SPI = 0x700


def stored_sequence(path, column="sequence"):
    db = sqlite3.connect(path)
    try:
        return db.execute(f"SELECT {column} FROM sas WHERE spi = ?", (SPI,)).fetchone()[0]
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


def test_a_received_checkpoint_is_kept_apart_and_survives_a_restart(km, registry, clock, where):
    path = f"{where}/keys.db"
    written(km, path, sa_message(SPI), usage_report(SPI, packets=1, sequence=777, received=True))
    assert (stored_sequence(path), stored_sequence(path, "received")) == (0, 777)
    again, store = KeyManager(registry, clock=clock), StateStore(path)
    try:
        store.attach(again)
        sa = again.sad.get(SaType.ESP, DST, SPI)
        assert (sa.sequence, sa.received) == (0, 777)
    finally:
        store.close()


@pytest.mark.parametrize(
    ("version", "missing"), [(2, ("sequence", "received")), (3, ("received",))]
)
def test_an_older_file_gains_the_checkpoint_columns(km, registry, clock, where, version, missing):
    path = f"{where}/keys.db"
    written(km, path, sa_message(SPI))
    db = sqlite3.connect(path)  # as that version had it
    for column in missing:
        db.execute(f"ALTER TABLE sas DROP COLUMN {column}")
    db.execute("UPDATE meta SET value = ? WHERE name = 'schema'", (version,))
    db.commit()
    db.close()
    assert reopened_sequence(registry, clock, path) == 0
    assert (stored_sequence(path), stored_sequence(path, "received")) == (0, 0)
    db = sqlite3.connect(path)
    assert db.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone()[0] == SCHEMA
    db.close()
