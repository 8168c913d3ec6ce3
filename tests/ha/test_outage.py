"""The database server goes away and comes back (its own server: the others' tests go on
on the session's): the active answers writes EAGAIN meanwhile and keeps serving reads; once
the server is back, one keyd is active again and the other follows."""

import errno

import pytest

from tests.ha import pgserver
from tests.ha.keyds import add, client, dump, keyd, role, wait_for
from tests.pfkey.keyd import short_dir


@pytest.fixture(scope="module")
def own_server():
    reason = pgserver.unavailable()
    if reason is not None:
        pytest.skip(reason)
    with pgserver.running() as server:
        yield server


def test_a_database_that_goes_away_and_comes_back(own_server):
    database = own_server.new_database()
    with short_dir() as where, keyd(where, "a", database), keyd(where, "b", database, "--standby"):
        active, standby = client(where, "a"), client(where, "b")
        assert add(active, 0x700) == 0
        wait_for(lambda: len(dump(standby)) == 1)
        pgserver.stop(own_server)
        assert add(active, 0x701) == errno.EAGAIN  # nothing acknowledged that is not durable
        assert add(active, 0x702) == errno.EAGAIN
        assert len(dump(active)) >= 1  # reads go on, with what it has
        wait_for(lambda: role(where, "b") == "fenced")
        pgserver.start(own_server)
        wait_for(lambda: {role(where, "a"), role(where, "b")} == {"active", "standby"})
        new_active = active if role(where, "a") == "active" else standby
        assert add(new_active, 0x703) == 0
        wait_for(lambda: dump(active) == dump(standby))
        assert len(dump(active)) == 2  # 0x700 and 0x703: the refused ones never were
