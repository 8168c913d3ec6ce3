"""The state file's defences: one daemon per file, no following links or touching files
that are not ours, and keys of deleted SAs gone from every file on disk once the deletion
is acknowledged (``secure_delete`` plus a truncating WAL checkpoint).

Every wait is bounded (keyd.WAIT); sockets live in short directories under /tmp."""

import dataclasses
import errno
import hashlib
import os
import signal
import sqlite3
import stat
import subprocess
import time

import pytest

from cryptoapi.pfkey import ExtType, Key, KeyManager, Message, MsgType, Sa, decode
from cryptoapi.pfkey.daemon.client import PfkeyClient
from cryptoapi.pfkey.daemon.store import APPLICATION_ID, StateStore
from cryptoapi.pfkey.errors import PfkeyError
from tests.pfkey.conftest import lookup_message, make_registry, sa_message
from tests.pfkey.keyd import WAIT, keyd_command, start_keyd, stop


@pytest.fixture
def km(clock):
    return KeyManager(make_registry(), clock=clock)


def auth_key(spi: int, generation: int = 0) -> bytes:
    """A 256-bit key no other bytes on disk can match by chance."""
    return hashlib.sha256(f"auth {spi} {generation}".encode()).digest()


def enc_key(spi: int, generation: int = 0) -> bytes:
    return hashlib.sha256(f"encrypt {spi} {generation}".encode()).digest()[:16]


def add(spi: int, generation: int = 0, **options) -> bytes:
    return sa_message(
        spi, auth_key=auth_key(spi, generation), enc_key=enc_key(spi, generation), **options
    )


def leaked(directory: str, keys: list[bytes]) -> list[tuple[str, int]]:
    """(file, index in ``keys``) for every key of which any 8-byte piece is in a file of
    ``directory`` (the database, its WAL, shared memory and journal, whatever is there)."""
    found = []
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        if not stat.S_ISREG(os.lstat(path).st_mode):
            continue
        with open(path, "rb") as stream:
            data = stream.read()
        for index, key in enumerate(keys):
            if any(key[i : i + 8] in data for i in range(0, len(key), 8)):
                found.append((name, index))
    return found


def snapshot(path: str) -> tuple[bytes, int, int]:
    """A file's bytes, mode and inode: to show it was left alone."""
    info = os.lstat(path)
    with open(path, "rb") as stream:
        return stream.read(), stat.S_IMODE(info.st_mode), info.st_ino


def refused(path: str, code: int, problem: str) -> None:
    with pytest.raises(PfkeyError) as caught:
        StateStore(path)
    assert caught.value.errno == code, caught.value
    assert str(caught.value).startswith(path) and problem in str(caught.value)


# -- one daemon per state file ----------------------------------------------------------


def test_a_second_store_on_the_same_file_is_refused(where):
    state = os.path.join(where, "state.db")
    first = StateStore(state)
    try:
        refused(state, errno.EBUSY, f"already in use by another keyd (pid {os.getpid()})")
    finally:
        first.close()
    StateStore(state).close()  # the lock went with the first


def wait_exit_or_serve(process: subprocess.Popen[bytes], path: str) -> bool:
    """Whether ``process`` exited (True) or started serving on ``path`` (False)."""
    deadline = time.monotonic() + WAIT
    while process.poll() is None:
        if os.path.exists(path):
            return False
        assert time.monotonic() < deadline, "the second keyd neither exited nor served"
        time.sleep(0.02)
    return True


def test_a_second_keyd_on_the_same_state_exits_1_and_the_first_still_serves(where):
    path, other, state = (os.path.join(where, n) for n in ("s", "t", "state.db"))
    first = start_keyd(path, "--state", state)
    try:
        with PfkeyClient(path, timeout=WAIT) as client:
            assert decode(client.request(add(0x100))[0]).errno == 0
            env = dict(os.environ, CRYPTOAPI_SELFTESTS="off")
            command = [*keyd_command(), "--socket", other, "--state", state]
            second = subprocess.Popen(
                command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
            )
            try:
                exited = wait_exit_or_serve(second, other)
                err = second.stderr.read().decode() if exited and second.stderr else ""
            finally:
                status = stop(second, signal.SIGKILL)
            assert exited, "a second keyd serves the same state"
            assert status == 1
            dumped = client.request(Message(MsgType.DUMP))
            assert [decode(m).get(ExtType.SA, Sa).spi for m in dumped] == [0x100]
    finally:
        assert stop(first) == 0
    assert f"cryptoapi: {state}: already in use by another keyd (pid {first.pid})" in err
    assert "Traceback" not in err


# -- only our own file, never through a link --------------------------------------------


def foreign_database(path: str) -> None:
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE contacts (name, phone)")
        db.execute("INSERT INTO contacts VALUES ('ada', '555')")
    db.close()
    os.chmod(path, 0o644)


def empty_file(path: str) -> None:
    with open(path, "wb"):
        pass
    os.chmod(path, 0o644)


def key_database(path: str) -> None:
    StateStore(path).close()


@pytest.mark.parametrize("make", [foreign_database, empty_file, key_database])
def test_a_symlink_is_refused_and_its_target_left_alone(where, make):
    target_dir = os.path.join(where, "elsewhere")
    os.mkdir(target_dir)
    target, link = os.path.join(target_dir, "app.db"), os.path.join(where, "state.db")
    make(target)
    os.symlink(target, link)
    before = snapshot(target)
    refused(link, errno.ELOOP, "is a symbolic link")
    assert snapshot(target) == before
    assert os.listdir(target_dir) == ["app.db"]  # no WAL or journal made beside it
    assert sorted(os.listdir(where)) == ["elsewhere", "state.db"]


@pytest.mark.parametrize(
    ("make", "problem"),
    [
        (foreign_database, "another application's SQLite file"),
        (empty_file, "is empty"),
    ],
)
def test_a_file_that_is_not_ours_is_refused_and_left_alone(where, make, problem):
    path = os.path.join(where, "state.db")
    make(path)
    before = snapshot(path)
    refused(path, errno.EINVAL, problem)
    assert snapshot(path) == before
    assert os.listdir(where) == ["state.db"]


def test_a_fifo_is_refused_and_left_alone(where):
    path = os.path.join(where, "state.db")
    os.mkfifo(path, 0o644)
    refused(path, errno.EINVAL, "is not a regular file")
    assert stat.S_IMODE(os.lstat(path).st_mode) == 0o644


def test_a_file_of_another_user_is_refused(where, monkeypatch):
    path = os.path.join(where, "state.db")
    key_database(path)
    monkeypatch.setattr(os, "geteuid", lambda: os.getuid() + 1)
    refused(path, errno.EPERM, f"is owned by uid {os.getuid()}")


def test_a_key_database_others_may_read_is_refused_not_chmodded(where):
    path = os.path.join(where, "state.db")
    key_database(path)
    os.chmod(path, 0o640)
    before = snapshot(path)
    refused(path, errno.EACCES, "mode 0640 lets other users read its keys")
    assert snapshot(path) == before


def test_a_wal_others_may_read_is_refused(where):
    path = os.path.join(where, "state.db")
    key_database(path)
    with open(path + "-wal", "wb"):
        pass
    os.chmod(path + "-wal", 0o644)
    refused(path, errno.EACCES, f"{path}-wal: mode 0644")


def test_a_new_state_file_is_private_marked_and_made_whole(where):
    path = os.path.join(where, "state.db")
    old = os.umask(0)
    try:
        StateStore(path).close()
    finally:
        os.umask(old)
    data, mode, _ = snapshot(path)
    assert mode == 0o600
    assert data.startswith(b"SQLite format 3\0")
    assert int.from_bytes(data[68:72], "big") == APPLICATION_ID
    assert os.listdir(where) == ["state.db"]  # the temporary it was built under is gone
    StateStore(path).close()


# -- keys of deleted SAs leave the disk -------------------------------------------------

SPIS = range(0x100, 0x100 + 200)  # enough rows for several pages and splits


def loaded(km, where):
    state = os.path.join(where, "state.db")
    store = StateStore(state)
    store.attach(km)
    for spi in SPIS:
        assert decode(km.handle(add(spi))[0]).errno == 0
    store.commit()
    return store


def delete_some(km, clock, store):
    for spi in SPIS[::3]:
        km.handle(lookup_message(MsgType.DELETE, spi))
    return [k for spi in SPIS[::3] for k in (auth_key(spi), enc_key(spi))]


def replace_some(km, clock, store):
    """DELETE and a new ADD of the same SPI in one commit: the row is overwritten."""
    for spi in SPIS[::3]:
        km.handle(lookup_message(MsgType.DELETE, spi))
        km.handle(add(spi, 1))
    return [k for spi in SPIS[::3] for k in (auth_key(spi), enc_key(spi))]


def flush_all(km, clock, store):
    km.handle(Message(MsgType.FLUSH).encode())
    return [k for spi in SPIS for k in (auth_key(spi), enc_key(spi))]


def expire_some(km, clock, store):
    """Hard add-time lifetimes running out (the timers delete them)."""
    for spi in SPIS[::5]:
        km.handle(add(spi + 0x1000, hard=(0, 0, 10, 0)))
    store.commit()
    clock.advance(20)
    count = len(km.sad)
    km.tick()
    assert len(km.sad) == count - len(SPIS[::5])
    return [k for spi in SPIS[::5] for k in (auth_key(spi + 0x1000), enc_key(spi + 0x1000))]


@pytest.mark.parametrize("change", [delete_some, replace_some, flush_all, expire_some])
def test_a_commit_that_drops_keys_leaves_them_in_no_file(km, clock, where, change):
    store = loaded(km, where)
    try:
        gone = change(km, clock, store)
        assert leaked(where, gone)  # stored, so on disk until the commit that drops them
        store.commit()
        assert leaked(where, gone) == []
        kept = [sa.auth_key for sa in km.sad.by_key.values()][:5]
        assert len(leaked(where, kept)) == len(kept)  # the grep does find what is stored
    finally:
        store.close()


def test_replacing_an_sa_by_one_with_other_keys_counts_as_dropping_keys(km):
    """No handler does it today (UPDATE keeps a MATURE SA's keys; a LARVAL SA has none),
    but a manager that did would leave the old keys in the WAL if this were not noted."""
    km.handle(add(0x100))
    km.handle(add(0x101, 1))
    first, other = km.sad.by_key.values()
    journal = km.sad.track()
    same_keys = dataclasses.replace(first, hard=None)
    km.sad.replace(first, same_keys)  # same keys: nothing dropped
    assert (list(journal.changed), journal.dropped) == ([first.key], False)
    km.sad.replace(same_keys, dataclasses.replace(other, spi=first.spi))
    assert journal.dropped


def test_adds_alone_do_not_checkpoint(km, where):
    store = loaded(km, where)
    try:
        assert os.path.getsize(os.path.join(where, "state.db-wal")) > 0
    finally:
        store.close()


def test_a_checkpoint_a_reader_blocks_is_retried_at_the_next_commit(km, where):
    store = loaded(km, where)
    reader = sqlite3.connect(os.path.join(where, "state.db"))
    try:
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM sas").fetchone()  # holds an old snapshot
        gone = delete_some(km, None, store)
        started = time.monotonic()
        store.commit()
        assert time.monotonic() - started < 2  # the daemon does not wait for the reader
        assert leaked(where, gone)  # the reader's snapshot still needs those frames
        reader.rollback()
        store.commit()  # nothing new to write: the checkpoint alone
        assert leaked(where, gone) == []
    finally:
        reader.close()
        store.close()


def test_keys_of_deleted_sas_are_in_no_file_after_kill_9(where):
    path, state = os.path.join(where, "s"), os.path.join(where, "state.db")
    daemon = start_keyd(path, "--state", state)
    try:
        with PfkeyClient(path, timeout=WAIT) as client:
            for spi in range(0x100, 0x140):
                assert decode(client.request(add(spi))[0]).errno == 0
            assert decode(client.request(lookup_message(MsgType.DELETE, 0x105))[0]).errno == 0
            assert decode(client.request(lookup_message(MsgType.DELETE, 0x106))[0]).errno == 0
            assert decode(client.request(add(0x106, 1))[0]).errno == 0  # new keys, same SPI
        daemon.send_signal(signal.SIGKILL)
        assert daemon.wait(WAIT) == -signal.SIGKILL
    finally:
        stop(daemon, signal.SIGKILL)
    gone = [auth_key(0x105), enc_key(0x105), auth_key(0x106), enc_key(0x106)]
    assert leaked(where, gone) == []
    assert leaked(where, [auth_key(0x107), auth_key(0x106, 1)])  # what is kept is found
    daemon = start_keyd(path, "--state", state)
    try:
        with PfkeyClient(path, timeout=WAIT) as client:
            dumped = [decode(m) for m in client.request(Message(MsgType.DUMP))]
    finally:
        assert stop(daemon) == 0
    keys = {
        m.get(ExtType.SA, Sa).spi: (
            m.get(ExtType.KEY_AUTH, Key).key,
            m.get(ExtType.KEY_ENCRYPT, Key).key,
        )
        for m in dumped
    }
    expected = {spi: (auth_key(spi), enc_key(spi)) for spi in range(0x100, 0x140) if spi != 0x105}
    expected[0x106] = (auth_key(0x106, 1), enc_key(0x106, 1))
    assert keys == expected


def test_an_encryption_only_sa_in_the_state_needs_the_same_opt_in(tmp_path, clock):
    """A keyd that allowed encryption-only ESP stored one; a keyd without the option must
    not bring it back silently: it refuses the file (EINVAL naming the SA), loading nothing,
    and loads it with the option."""
    path = tmp_path / "state.db"
    unsafe = KeyManager(make_registry(), clock=clock, allow_unauthenticated=True)
    store = StateStore(path)
    store.attach(unsafe)
    assert not decode(unsafe.handle(add(0x1001))[0]).errno
    cbc_only = sa_message(0x1002, auth=0, auth_key=None, enc_key=enc_key(0x1002))
    assert not decode(unsafe.handle(cbc_only)[0]).errno
    store.commit()
    store.close()
    safe = KeyManager(make_registry(), clock=clock)
    store = StateStore(path)
    with pytest.raises(PfkeyError) as refused:
        store.attach(safe)
    assert refused.value.errno == errno.EINVAL and "0x1002" in str(refused.value)
    assert len(safe.sad) == 0
    store.close()
    again = KeyManager(make_registry(), clock=clock, allow_unauthenticated=True)
    store = StateStore(path)
    assert store.attach(again) == (2, 0)
    store.close()
