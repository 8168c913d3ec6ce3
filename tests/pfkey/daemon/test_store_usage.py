"""keyd ``--state`` and what changes in place: the replay window and ESN flag of an SA, its
usage counters and first use, and the DYING state, across a clean restart and ``kill -9``
(which loses at most the counting since the last periodic write)."""

import logging
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from cryptoapi.pfkey import (
    ExtType,
    KeyManager,
    Message,
    MsgType,
    Sa,
    SaFlags,
    SaReplay,
    SaState,
    SaType,
    decode,
)
from cryptoapi.pfkey.daemon.server import KeyDaemon
from cryptoapi.pfkey.daemon.store import StateStore
from cryptoapi.pfkey.daemon.usage import USAGE_INTERVAL
from tests.pfkey.conftest import DST, lookup_message, make_registry, sa_message
from tests.pfkey.keyd import WAIT

ROOT = str(Path(__file__).resolve().parents[3])  # the repository: tests/pfkey/daemon/


@pytest.fixture
def state(where):
    return os.path.join(where, "state.db")


def open_store(state, clock):
    """A key manager on ``clock`` restored from ``state`` (its store, usage on ``clock`` too)."""
    km = KeyManager(make_registry(), clock=clock)
    store = StateStore(state, clock=clock)
    store.attach(km)
    return km, store


def row(state, spi):
    """(state, nbytes, allocations, used, soft_expired) of an SA's row, read beside the
    store (as any reader of the file would)."""
    with sqlite3.connect(f"file:{state}?mode=ro", uri=True) as db:
        query = "SELECT state, nbytes, allocations, used, soft_expired FROM sas WHERE spi = ?"
        found = db.execute(query, (spi,)).fetchone()
    assert found is not None, spi
    return found


def use(km, spi, nbytes, allocations=1):
    """What the data path reports for packets on an SA (its first use sets ``used``)."""
    return km.account(SaType.ESP, DST, spi, nbytes=nbytes, allocations=allocations)


def test_a_4096_window_and_the_esn_flag_survive_a_restart(state, clock):
    km, store = open_store(state, clock)
    window = sa_message(0x1001, replay=255, extra=(SaReplay(4096),))
    plain = decode(sa_message(0x1002, replay=64))
    exts = tuple(
        replace(e, flags=SaFlags.ESN) if isinstance(e, Sa) else e for e in plain.extensions
    )
    esn = replace(plain, extensions=exts).encode()
    for message in (window, esn):
        assert decode(km.handle(message)[0]).errno == 0
    store.commit()
    store.close()
    again, store = open_store(state, clock)
    assert again.sad.get(SaType.ESP, DST, 0x1001).replay == 4096
    assert again.sad.get(SaType.ESP, DST, 0x1002).flags == SaFlags.ESN
    reply = decode(again.handle(lookup_message(MsgType.GET, 0x1001))[0])
    assert (reply.get(ExtType.SA, Sa).replay, reply.get(ExtType.SA_REPLAY, SaReplay)) == (
        255,
        SaReplay(4096),
    )
    store.close()


def test_counters_and_first_use_survive_a_clean_restart(state, clock):
    km, store = open_store(state, clock)
    km.handle(sa_message(0x1001, hard=(0, 0, 0, 100)))  # hard: 100 s after first use
    store.commit()
    clock.advance(10)
    use(km, 0x1001, 1000, 3)
    first_use = clock.now
    store.close()  # the clean stop: the counters are written though no commit was due
    clock.advance(40)
    again, store = open_store(state, clock)
    sa = again.sad.get(SaType.ESP, DST, 0x1001)
    assert (sa.nbytes, sa.allocations, sa.used) == (1000, 3, first_use)
    clock.advance(first_use + 100 - clock.now - 1)
    again.tick()
    assert again.sad.get(SaType.ESP, DST, 0x1001) is not None
    clock.advance(1)  # 100 s after the recorded first use, not after the restart
    again.tick()
    assert again.sad.get(SaType.ESP, DST, 0x1001) is None
    store.close()


def test_counters_are_written_at_most_every_interval_not_per_packet(state, clock):
    km, store = open_store(state, clock)
    km.handle(sa_message(0x1001))
    assert store.usage_wait() is None  # nothing committed since attach: nothing can be due
    store.commit()
    assert store.usage_wait() == USAGE_INTERVAL
    changes = store.db.total_changes
    for _ in range(100):  # packets, each followed by a daemon round's commit
        use(km, 0x1001, 100)
        store.commit()
        clock.advance(USAGE_INTERVAL / 200)
    assert store.db.total_changes == changes  # not one write in the interval
    assert row(state, 0x1001)[1:3] == (0, 0)
    assert store.usage_wait() == pytest.approx(USAGE_INTERVAL / 2)
    clock.advance(USAGE_INTERVAL / 2)
    store.commit()
    assert store.db.total_changes == changes + 1  # one row, once the interval is over
    assert row(state, 0x1001)[1:3] == (10_000, 100)
    assert store.usage_wait() is None  # written: nothing more until something commits
    store.commit()
    assert store.db.total_changes == changes + 1  # not written again: it did not move
    store.close()


def test_the_dying_state_is_written_at_the_next_commit_and_not_fired_again(state, clock):
    km, store = open_store(state, clock)
    km.handle(Message(MsgType.REGISTER, SaType.ESP).encode())
    km.handle(sa_message(0x1001, soft=(0, 1000, 30, 0)))  # soft: 1000 bytes or 30 s
    km.handle(sa_message(0x1002, soft=(0, 0, 30, 0)))
    store.commit()
    (expire,) = use(km, 0x1001, 2000)
    assert decode(expire).type == MsgType.EXPIRE
    assert store.pending() and store.usage_wait() == 0.0
    store.commit()  # before the EXPIRE would leave a daemon
    assert row(state, 0x1001)[0] == SaState.DYING and row(state, 0x1001)[4]
    store.close()
    again, store = open_store(state, clock)
    again.handle(Message(MsgType.REGISTER, SaType.ESP).encode())
    assert again.sad.get(SaType.ESP, DST, 0x1001).state == SaState.DYING
    clock.advance(31)
    expired = [decode(m).get(ExtType.SA, Sa).spi for m in again.tick()]
    assert expired == [0x1002]  # 0x1001's soft limit is behind it: no second EXPIRE
    store.close()


def test_the_daemon_wakes_to_write_counters_and_writes_them_when_it_stops(where, state, clock):
    km, store = open_store(state, clock)
    daemon = KeyDaemon(km, os.path.join(where, "k.sock"), store=store)
    try:
        assert daemon._timeout() is None  # idle, nothing to write: it sleeps
        km.handle(sa_message(0x1001))
        store.commit()  # a round
        assert daemon._timeout() == USAGE_INTERVAL  # it wakes when the counters are due
        use(km, 0x1001, 500, 5)
    finally:
        daemon.close()  # the clean stop path (SIGTERM: serve_forever, then close)
    assert row(state, 0x1001)[1:3] == (500, 5)


def test_a_failing_write_at_close_is_logged_and_the_store_still_closes(state, clock, caplog):
    km, store = open_store(state, clock)
    km.handle(sa_message(0x1001))
    store.commit()
    use(km, 0x1001, 10)
    store.db.execute("PRAGMA query_only = ON")  # every write fails from now on
    with caplog.at_level(logging.WARNING, logger="cryptoapi.pfkey.daemon.store"):
        store.close()
    assert "usage counters not written" in caplog.text
    assert km.on_dying is None
    again, store = open_store(state, clock)  # the lock was released
    assert again.sad.get(SaType.ESP, DST, 0x1001).nbytes == 0
    store.close()


CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from cryptoapi.pfkey import KeyManager, Message, MsgType, SaType
    from cryptoapi.pfkey.daemon.store import StateStore
    from tests.pfkey.conftest import DST, Clock, make_registry, sa_message

    clock = Clock()
    km = KeyManager(make_registry(), clock=clock)
    store = StateStore(sys.argv[1], clock=clock, usage_interval=5.0)
    store.attach(km)
    km.handle(Message(MsgType.REGISTER, SaType.ESP).encode())
    for spi in range(0x1001, 0x1011):  # sixteen acknowledged SAs
        km.handle(sa_message(spi, soft=(0, 1000, 30, 0)))
    store.commit()                         # t = 0: the interval is armed (due at 5)
    km.account(SaType.ESP, DST, 0x1002, nbytes=100, allocations=1)
    clock.advance(6)
    store.commit()                         # due: 0x1002's 100 bytes are written
    km.account(SaType.ESP, DST, 0x1002, nbytes=50, allocations=1)
    km.account(SaType.ESP, DST, 0x1001, nbytes=2000, allocations=1)  # soft: DYING
    store.commit()                         # 0x1001's DYING row; 0x1002 is not due
    km.account(SaType.ESP, DST, 0x1002, nbytes=7, allocations=1)
    print("killing", flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
    """
)


def test_kill_9_loses_at_most_the_counting_since_the_last_periodic_write(state, clock):
    env = dict(os.environ, CRYPTOAPI_SELFTESTS="off")
    child = subprocess.run(
        [sys.executable, "-c", CHILD, state],
        cwd=ROOT,
        env=env,
        capture_output=True,
        timeout=WAIT,
        check=False,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr.decode()
    assert child.stdout == b"killing\n"
    clock.advance(6)  # where the child's clock was
    again, store = open_store(state, clock)
    assert len(again.sad) == 16  # every acknowledged SA
    counted = again.sad.get(SaType.ESP, DST, 0x1002)
    assert (counted.nbytes, counted.allocations) == (100, 1)  # 50 + 7 bytes lost, no more
    assert counted.used == 1_000_000.0  # its first use, from before the interval
    dying = again.sad.get(SaType.ESP, DST, 0x1001)
    assert (dying.state, dying.soft_expired, dying.nbytes) == (SaState.DYING, True, 2000)
    again.handle(Message(MsgType.REGISTER, SaType.ESP).encode())
    clock.advance(25)  # past every SA's soft add-time limit (30 s)
    expired = {decode(m).get(ExtType.SA, Sa).spi for m in again.tick()}
    assert expired == set(range(0x1002, 0x1011))  # all but the one that was DYING
    store.close()
