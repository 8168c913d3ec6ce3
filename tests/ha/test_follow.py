"""A standby's copy of the active's state, in one process (the session's server): every
kind of change arrives, in order, and a standby that lagged past the pruned journal
reloads everything."""

import pytest

from cryptoapi.pfkey import KeyManager, MsgType
from cryptoapi.pfkey.daemon import pgwrite
from cryptoapi.pfkey.daemon.pgstore import PgStore, Role
from cryptoapi.pfkey.daemon.rows import sa_row
from tests.pfkey.conftest import getspi_message, make_registry, only, sa_message


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        self.now += 1.0  # every look at the clock finds a poll due
        return self.now


@pytest.fixture
def pair(database):
    active_km, standby_km = KeyManager(make_registry()), KeyManager(make_registry())
    active = PgStore(database, clock=Clock())
    standby = PgStore(database, standby=True, clock=Clock())
    active.attach(active_km)
    standby.attach(standby_km)
    yield active, active_km, standby, standby_km
    active.close()
    standby.close()


def _policies(km):
    return [(p.index, p.selector, p.requests) for p in km.spd]


def _same(active_km, standby_km):
    """The same stored fields of every SA (not the timers' epoch), in the same order, and
    the same policies."""
    sas_a, sas_b = [sa_row(sa) for sa in active_km.sad], [sa_row(sa) for sa in standby_km.sad]
    return sas_a == sas_b and _policies(active_km) == _policies(standby_km)


def _change(km, store, message):
    assert only(km, message).errno == 0
    store.commit()


def test_every_kind_of_change_is_followed_in_order(pair):
    active, active_km, standby, standby_km = pair
    for spi in (0x10, 0x11, 0x12):
        _change(active_km, active, sa_message(spi))
    _change(active_km, active, getspi_message(0x20, 0x20))
    _change(active_km, active, sa_message(0x20, type=MsgType.UPDATE))  # larval to newest
    _change(active_km, active, sa_message(0x11, type=MsgType.DELETE))
    standby.commit()
    assert standby.role is Role.STANDBY
    assert _same(active_km, standby_km)
    assert [sa.spi for sa in standby_km.sad] == [0x10, 0x12, 0x20]


def test_a_standby_behind_the_pruned_journal_reloads_everything(pair, monkeypatch):
    monkeypatch.setattr(pgwrite, "PRUNE_EVERY", 2)
    monkeypatch.setattr(pgwrite, "KEEP_CHANGES", 1)
    active, active_km, standby, standby_km = pair
    for spi in range(0x30, 0x36):
        _change(active_km, active, sa_message(spi))
    standby.commit()
    assert _same(active_km, standby_km)
    assert len(standby_km.sad) == 6


def test_the_standby_takes_over_when_the_active_closes(pair):
    active, active_km, standby, standby_km = pair
    _change(active_km, active, sa_message(0x40))
    active.close()
    standby.commit()
    assert standby.role is Role.ACTIVE
    assert [sa.spi for sa in standby_km.sad] == [0x40]
    assert only(standby_km, sa_message(0x41)).errno == 0
    standby.commit()  # written as the active's were


def test_a_closing_active_frees_the_lock_before_its_session_ends(pair, monkeypatch):
    """The server ends a closed session a moment after the client has gone; a standby
    that polls in that moment must find the lock free. Here the session stays open."""
    active, _, standby, _ = pair
    session = active.db
    monkeypatch.setattr(session, "close", lambda: None)
    active.close()
    standby.commit()
    assert standby.role is Role.ACTIVE
    monkeypatch.undo()
    session.close()
