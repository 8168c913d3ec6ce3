"""Active and standby keyds on one PostgreSQL database: the standby follows, refuses
writes (EROFS), serves dumps, and takes over when the active's session ends; an active
that loses its database refuses writes (EAGAIN) and comes back as a standby."""

import errno
import re
import signal
import time

from cryptoapi.pfkey import MsgType
from cryptoapi.pfkey.daemon.client import fields
from tests.ha.keyds import (
    add,
    client,
    delete,
    dump,
    keyd,
    kill9,
    role,
    setkey,
    status,
    wait_for,
)
from tests.pfkey.conftest import getspi_message
from tests.pfkey.keyd import short_dir

POLICIES = """
spdadd 10.0.0.1 10.0.0.2 any -P out ipsec esp/transport//require;
spdadd 10.0.0.3 10.0.0.4 any -P out ipsec esp/transport//require;
spdadd 10.0.0.5 10.0.0.6 any -P out ipsec esp/transport//require;
spddelete 10.0.0.3 10.0.0.4 any -P out;
"""
TAKEOVER = 1.0
"""Seconds a standby may take to serve writes after the active is killed (issue 23)."""


def test_a_standby_follows_refuses_writes_and_serves_dumps(database):
    with short_dir() as where, keyd(where, "a", database), keyd(where, "b", database, "--standby"):
        active, standby = client(where, "a"), client(where, "b")
        assert role(where, "a") == "active"
        assert role(where, "b") == "standby"
        for spi in range(0x100, 0x120):
            assert add(active, spi) == 0
        assert delete(active, 0x105) == 0
        assert fields(active.request(getspi_message(0x5000, 0x5000))[0])[1] == 0  # larval
        assert add(active, 0x5000, type=MsgType.UPDATE) == 0  # mature: moved to newest
        setkey(where, "a", "-c", script=POLICIES)
        wait_for(lambda: status(where, "b")["policies"] == 2)
        assert dump(standby) == dump(active)  # the same SAs in the same order
        assert _spd(where, "b") == _spd(where, "a")
        assert len(dump(standby)) == 32
        assert add(standby, 0x999) == errno.EROFS
        assert delete(standby, 0x100) == errno.EROFS
        assert dump(active) == dump(standby)  # nothing the standby refused reached the database


def test_the_role_is_logged_on_sigusr1(database):
    with short_dir() as where, keyd(where, "b", database, "--standby") as process:
        wait_for(lambda: role(where, "b") == "active")  # no active: the standby takes over
        process.send_signal(signal.SIGUSR1)
        time.sleep(0.3)
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=20)
    lines = err.decode().splitlines()
    assert any("(standby)" in line for line in lines)  # as it started
    assert any("standby -> active" in line for line in lines)
    assert any("role: active on postgresql://" in line and "1 takeovers" in line for line in lines)


def test_a_standby_that_loses_its_database_follows_again(database, pg_server):
    with (
        short_dir() as where,
        keyd(where, "a", database),
        keyd(where, "b", database, "--standby") as second,
    ):
        active, standby = client(where, "a"), client(where, "b")
        assert add(active, 0x600) == 0
        wait_for(lambda: len(dump(standby)) == 1)
        _terminate(pg_server, database, second.pid)
        assert add(active, 0x601) == 0  # the active goes on
        assert add(standby, 0x602) in (errno.EROFS, errno.EAGAIN)  # fenced for a moment
        wait_for(lambda: role(where, "b") == "standby")
        wait_for(lambda: dump(standby) == dump(active))
        assert add(active, 0x603) == 0
        wait_for(lambda: dump(standby) == dump(active))
        assert len(dump(standby)) == 3


def _spd(where, name):
    """``setkey -D -P``, without the pid of the setkey that asked."""
    return re.sub(r"pid=\d+", "", setkey(where, name, "-D", "-P"))


def _terminate(pg_server, database, keyd_pid):
    """End the database session of the keyd ``keyd_pid`` (as a lost connection would)."""
    [(ended,)] = pg_server.sql(
        database,
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s",
        (f"cryptoapi keyd pid {keyd_pid}",),
    )
    assert ended


def test_the_standby_takes_over_when_the_active_is_killed(database):
    with short_dir() as where, keyd(where, "a", database) as first:
        active = client(where, "a")
        for spi in range(0x200, 0x240):
            assert add(active, spi) == 0
        with keyd(where, "b", database, "--standby"):
            standby = client(where, "b")
            before = dump(active)
            wait_for(lambda: dump(standby) == before)
            killed = time.monotonic()
            kill9(first)
            wait_for(lambda: add(standby, 0x300) == 0, step=0.005)
            outage = time.monotonic() - killed
            print(f"takeover: writes served {outage * 1000:.0f} ms after kill -9")
            assert outage <= TAKEOVER
            assert role(where, "b") == "active"
            assert status(where, "b")["ha"]["takeovers"] == 1
            after = dump(standby)
            assert after[1:] == before  # no acknowledged SA lost (DUMP lists the newest first)


def test_an_active_that_loses_its_database_refuses_writes(database, pg_server):
    with short_dir() as where, keyd(where, "a", database) as first:
        active = client(where, "a")
        assert add(active, 0x400) == 0
        with keyd(where, "b", database, "--standby"):
            standby = client(where, "b")
            wait_for(lambda: len(dump(standby)) == 1)
            _terminate(pg_server, database, first.pid)
            assert add(active, 0x401) == errno.EAGAIN  # not committed: not acknowledged
            assert len(dump(active)) >= 1  # reads still served, with what it has
            wait_for(lambda: role(where, "b") == "active")
            assert add(standby, 0x402) == 0
            # the old active reconnects, reloads and stands by
            wait_for(lambda: role(where, "a") == "standby")
            assert add(active, 0x403) == errno.EROFS
            wait_for(lambda: dump(active) == dump(standby))
            spis = {int.from_bytes(sa[4:8], "big") for sa in dump(standby)}
            assert 0x402 in spis and 0x400 in spis
