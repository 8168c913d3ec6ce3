"""keyd's PostgreSQL state (``--state postgresql://...``): the SQLite store's promises on a
real server (tests/ha/pgserver.py), and the faults at start."""

import errno
import os
import subprocess

from cryptoapi.pfkey.daemon import pgschema
from cryptoapi.pfkey.daemon.checkpoint import MARGIN
from cryptoapi.pfkey.daemon.client import fields
from cryptoapi.pfkey.daemon.pgconnect import connect
from tests.ha.keyds import (
    AUTH_KEY,
    WAIT,
    add,
    client,
    delete,
    dump,
    keyd,
    kill9,
    sequences,
    setkey,
)
from tests.pfkey.conftest import sa_message
from tests.pfkey.keyd import keyd_command, short_dir

SPIS = [0x2000 + i for i in range(40)]
POLICY = "spdadd 10.0.0.1 10.0.0.2 any -P out ipsec esp/transport//require;\n"


def _run_keyd(where: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*keyd_command(), "--socket", f"{where}/k.sock", *extra],
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
        env=dict(os.environ, CRYPTOAPI_SELFTESTS="off"),
    )


def test_acknowledged_adds_survive_kill_9(database):
    with short_dir() as where:
        with keyd(where, "a", database) as process:
            pfkey = client(where, "a")
            assert [add(pfkey, spi) for spi in SPIS] == [0] * len(SPIS)
            assert delete(pfkey, SPIS[3]) == 0
            setkey(where, "a", "-c", script=POLICY)
            before = dump(pfkey)
            kill9(process)
        with keyd(where, "a", database):
            pfkey = client(where, "a")
            assert dump(pfkey) == before  # every SA, in the same order
            assert len(before) == len(SPIS) - 1
            assert add(pfkey, SPIS[0]) == errno.EEXIST


def test_deleted_sa_keys_are_gone_from_the_table(database, pg_server):
    with short_dir() as where, keyd(where, "a", database):
        pfkey = client(where, "a")
        assert add(pfkey, 0x3001) == 0
        table = f"{pgschema.NAMESPACE}.sas"
        [(held,)] = pg_server.sql(
            database, f"SELECT count(*) FROM {table} WHERE auth_key = %s", (AUTH_KEY,)
        )
        assert held == 1
        assert delete(pfkey, 0x3001) == 0  # acknowledged: committed first
        rows = pg_server.sql(database, f"SELECT t::text FROM {table} t")
        assert rows == []
        changes = pg_server.sql(database, f"SELECT c::text FROM {pgschema.NAMESPACE}.changes c")
        assert changes and not any(AUTH_KEY.hex() in text for (text,) in changes)


def test_the_schema_is_versioned(database, pg_server):
    with short_dir() as where, keyd(where, "a", database):
        pass
    meta = dict(pg_server.sql(database, f"SELECT name, value FROM {pgschema.NAMESPACE}.meta"))
    assert meta["application"] == pgschema.APPLICATION
    assert meta["schema"] == str(pgschema.SCHEMA)
    pg_server.sql(
        database, f"UPDATE {pgschema.NAMESPACE}.meta SET value = '99' WHERE name = 'schema'"
    )
    with short_dir() as where:
        done = _run_keyd(where, "--state", database)
    assert done.returncode == 1
    assert f"schema version 99 is not {pgschema.SCHEMA}" in done.stderr


def test_a_schema_1_database_gains_the_sequence_checkpoints(database, pg_server):
    with short_dir() as where, keyd(where, "a", database):
        assert add(client(where, "a"), 0x2100) == 0
    sas = f"{pgschema.NAMESPACE}.sas"
    for column in ("sequence", "received"):  # as version 1 had it
        pg_server.sql(database, f"ALTER TABLE {sas} DROP COLUMN {column}")
    pg_server.sql(
        database, f"UPDATE {pgschema.NAMESPACE}.meta SET value = '1' WHERE name = 'schema'"
    )
    with short_dir() as where, keyd(where, "a", database):
        assert sequences(client(where, "a")) == {0x2100: MARGIN}  # 0, raised as it started
    meta = dict(pg_server.sql(database, f"SELECT name, value FROM {pgschema.NAMESPACE}.meta"))
    assert meta["schema"] == str(pgschema.SCHEMA) == "3"
    assert pg_server.sql(database, f"SELECT sequence, received FROM {sas}") == [(MARGIN, 0)]


def test_a_url_that_does_not_connect_is_one_line_and_exit_1():
    with short_dir() as where:
        done = _run_keyd(where, "--state", f"postgresql://nobody@/none?host={where}")
        assert done.returncode == 1
        assert done.stderr.count("\n") == 1
        assert done.stderr.startswith("cryptoapi: cannot connect to postgresql://nobody@/none")
        assert not os.path.exists(f"{where}/k.sock")  # never half started


def test_a_password_is_never_shown():
    with short_dir() as where:
        done = _run_keyd(where, "--state", f"postgresql://u:secret@/none?host={where}")
    assert done.returncode == 1
    assert "secret" not in done.stderr
    assert "u:***@" in done.stderr


def test_a_second_active_is_refused(database):
    with short_dir() as where, keyd(where, "a", database) as first:
        done = _run_keyd(where, "--state", database)
        assert done.returncode == 1
        assert f"cryptoapi keyd pid {first.pid}" in done.stderr
        assert "--standby" in done.stderr
        assert first.poll() is None


def test_another_programs_schema_is_never_touched(database, pg_server):
    pg_server.sql(database, f"CREATE SCHEMA {pgschema.NAMESPACE}")
    pg_server.sql(database, f"CREATE TABLE {pgschema.NAMESPACE}.theirs (x int)")
    with short_dir() as where:
        done = _run_keyd(where, "--state", database)
    assert done.returncode == 1
    assert "is not a cryptoapi keyd's" in done.stderr
    tables = pg_server.sql(
        database,
        "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
        (pgschema.NAMESPACE,),
    )
    assert tables == [("theirs",)]


def test_standby_needs_postgresql():
    with short_dir() as where:
        done = _run_keyd(where, "--state", f"{where}/keys.db", "--standby")
    assert done.returncode == 1
    assert "--standby needs a postgresql:// --state" in done.stderr


def test_commits_are_durable_whatever_the_servers_default(database, pg_server):
    [(name,)] = pg_server.sql(database, "SELECT current_database()")
    pg_server.sql(database, f"ALTER DATABASE {name} SET synchronous_commit = off")
    db = connect(database)
    try:
        assert db.execute("SHOW synchronous_commit").fetchone() == ("on",)
    finally:
        db.close()


def test_an_encryption_only_sa_is_refused_on_load_without_the_option(database):
    with short_dir() as where:
        with keyd(where, "a", database, "--allow-unauthenticated-esp"):
            pfkey = client(where, "a")
            reply = pfkey.request(sa_message(0x4001, auth=0, auth_key=None))
            assert fields(reply[0])[1] == 0
        done = _run_keyd(where, "--state", database)
    assert done.returncode == 1
    assert "--allow-unauthenticated-esp" in done.stderr
