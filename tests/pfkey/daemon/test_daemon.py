"""The key daemon: PF_KEY over a private Unix socket, replies and notifications routed as
Linux routes them, clean stop on SIGTERM, and state that survives ``kill -9``.

Every wait is bounded (keyd.WAIT); sockets live in short directories under /tmp."""

import errno
import os
import random
import signal
import sqlite3
import stat
import threading

import pytest

from cryptoapi.pfkey import (
    ExtType,
    Key,
    KeyManager,
    Message,
    MsgType,
    Policy,
    Sa,
    SaState,
    SaType,
    decode,
)
from cryptoapi.pfkey.daemon.client import PfkeyClient
from cryptoapi.pfkey.daemon.server import KeyDaemon
from cryptoapi.pfkey.daemon.store import SA_COLUMNS, StateStore
from cryptoapi.pfkey.db.sad import SecurityAssociation
from cryptoapi.pfkey.errors import PfkeyError
from cryptoapi.pfkey.km.routing import without_keys
from tests.pfkey.conftest import (
    address,
    getspi_message,
    lookup_message,
    make_registry,
    sa_message,
    spd,
)
from tests.pfkey.keyd import WAIT, daemon_thread, start_keyd, stop

KEYS = (ExtType.KEY_AUTH, ExtType.KEY_ENCRYPT)


def has_keys(message):
    return any(message.get(t, Key) is not None for t in KEYS)


@pytest.fixture
def km(clock):
    return KeyManager(make_registry(), clock=clock, rng=random.Random(3))


# -- in a thread: routing ---------------------------------------------------------------


def test_two_clients_registered_one_gets_notifications_without_keys(km, where):
    path = os.path.join(where, "s")
    with (
        daemon_thread(km, path),
        PfkeyClient(path, timeout=WAIT) as a,
        PfkeyClient(path, timeout=WAIT) as b,
    ):
        (reply,) = a.request(Message(MsgType.REGISTER, SaType.ESP))
        assert decode(reply).get(ExtType.SUPPORTED_ENCRYPT, object) is not None
        (added,) = b.request(sa_message(0x1001, seq=0, pid=b.pid))
        assert decode(added).errno == 0
        note = decode(a.notification(WAIT))
        assert (note.type, note.errno, note.get(ExtType.SA, Sa).spi) == (MsgType.ADD, 0, 0x1001)
        assert not has_keys(note)
        (got,) = b.request(lookup_message(MsgType.GET, 0x1001))
        assert has_keys(decode(got))  # the sender gets its keys; nobody else hears of a GET
        b.request(getspi_message(0x2000, 0x2000))
        b.request(sa_message(0x2000, type=MsgType.UPDATE))
        b.request(lookup_message(MsgType.DELETE, 0x1001))
        b.request(sa_message(0x3000, satype=SaType.AH, encrypt=0, enc_key=None))  # not ESP
        b.request(spd())
        b.request(Message(MsgType.FLUSH))
        b.request(Message(MsgType.X_SPDFLUSH))
        a.request(Message(MsgType.GET, SaType.ESP))  # a round trip: every note has arrived
        notes = [decode(n) for n in a.notifications]
        assert [n.type for n in notes] == [
            MsgType.UPDATE, MsgType.DELETE, MsgType.X_SPDADD, MsgType.FLUSH, MsgType.X_SPDFLUSH,
        ]  # fmt: skip
        assert not any(has_keys(n) for n in notes)
        assert not b.notifications  # b did not register
        a.close()
        b.request(sa_message(0x4000))  # a's registration goes with it
        assert km.stats()["registered"] == 0


def test_concurrent_clients_and_a_registered_client_that_does_not_read(km, where):
    path = os.path.join(where, "s")
    count = 1500
    errors = []

    def load(first):
        try:
            with PfkeyClient(path, timeout=WAIT) as client:
                for spi in range(first, first + count):
                    (reply,) = client.request(sa_message(spi, seq=0, pid=client.pid))
                    assert decode(reply).errno == 0
        except BaseException as error:  # reported below
            errors.append(error)

    with daemon_thread(km, path), PfkeyClient(path, timeout=WAIT) as listener:
        listener.request(Message(MsgType.REGISTER, SaType.ESP))
        loaders = [threading.Thread(target=load, args=(f,)) for f in (0x10000, 0x20000)]
        for thread in loaders:
            thread.start()
        for thread in loaders:
            thread.join(WAIT)
        assert not errors and not any(t.is_alive() for t in loaders)
        assert len(km.sad) == 2 * count
        spis = {
            decode(listener.notification(WAIT)).get(ExtType.SA, Sa).spi for _ in range(2 * count)
        }
        assert len(spis) == 2 * count  # every add reached the listener, who read late
        dumped = listener.request(Message(MsgType.DUMP, SaType.ESP))
        assert len(dumped) == 2 * count and decode(dumped[-1]).seq == 0


def test_expire_goes_to_the_registered_clients_only(km, clock, where):
    path = os.path.join(where, "s")
    with (
        daemon_thread(km, path),
        PfkeyClient(path, timeout=WAIT) as a,
        PfkeyClient(path, timeout=WAIT) as b,
    ):
        a.request(Message(MsgType.REGISTER, SaType.ESP))
        b.request(sa_message(0x1001, hard=(0, 0, 10, 0), soft=(0, 0, 5, 0)))
        a.notification(WAIT)  # the ADD
        clock.advance(20)
        b.request(lookup_message(MsgType.GET, 0x1001))  # the next message runs the timers
        soft, hard = decode(a.notification(WAIT)), decode(a.notification(WAIT))
        assert [(m.type, m.seq) for m in (soft, hard)] == [(MsgType.EXPIRE, 0)] * 2
        assert soft.get(ExtType.LIFETIME_SOFT, object) is not None
        assert hard.get(ExtType.LIFETIME_HARD, object) is not None
        assert not b.notifications and len(km.sad) == 0


def test_malformed_datagrams_get_error_replies(km, where):
    path = os.path.join(where, "s")
    with daemon_thread(km, path), PfkeyClient(path, timeout=WAIT) as client:
        client.send(b"\x02")
        assert client.receive()[2] == errno.EMSGSIZE
        client.send(b"\x02" * 16)
        assert client.receive()[2] == errno.EINVAL
        assert len(km.sad) == 0


def test_only_the_owner_may_connect(km, where, monkeypatch):
    path = os.path.join(where, "s")
    with daemon_thread(km, path):
        monkeypatch.setattr(os, "geteuid", lambda: 12345)
        with PfkeyClient(path, timeout=WAIT) as client, pytest.raises(PfkeyError) as caught:
            client.request(Message(MsgType.DUMP))
        monkeypatch.undo()
        assert caught.value.errno in (errno.EPIPE, errno.ECONNRESET)


def test_the_socket_path_is_checked(km, where):
    path = os.path.join(where, "s")
    with open(path, "w"):
        pass
    with pytest.raises(PfkeyError) as caught:
        KeyDaemon(km, path)
    assert caught.value.errno == errno.EEXIST
    os.unlink(path)
    with daemon_thread(km, path):
        with pytest.raises(PfkeyError) as caught:
            KeyDaemon(KeyManager(make_registry()), path)
        assert caught.value.errno == errno.EADDRINUSE
    assert not os.path.exists(path)
    with pytest.raises(PfkeyError) as caught:
        PfkeyClient(path, timeout=1)
    assert caught.value.errno == errno.ENOENT


def test_without_keys_strips_key_extensions():
    data = sa_message(0x1001)
    stripped = decode(without_keys(data))
    assert not has_keys(stripped) and stripped.get(ExtType.SA, Sa).spi == 0x1001
    assert has_keys(decode(data))


# -- the state store --------------------------------------------------------------------


def workload(km):
    """Every kind of change a client can make, through handle()."""
    km.handle(Message(MsgType.REGISTER, SaType.ESP).encode())
    for spi in range(0x100, 0x110):
        km.handle(sa_message(spi, hard=(0, 0, 50, 0), soft=(0, 0, 40, 0)))
    proxy = address(ExtType.ADDRESS_PROXY, "2001:db8::9")
    v6 = {"src": "2001:db8::1", "dst": "2001:db8::2", "extra": (proxy,)}
    km.handle(sa_message(0x200, satype=SaType.AH, encrypt=0, enc_key=None, **v6))
    km.handle(getspi_message(0x300, 0x300))
    km.handle(getspi_message(0x301, 0x301))
    km.handle(sa_message(0x301, type=MsgType.UPDATE))
    km.handle(lookup_message(MsgType.DELETE, 0x105))
    km.handle(spd())
    km.handle(spd(dir=1, requests=()))
    km.handle(spd(MsgType.X_SPDUPDATE, dir=1, priority=7))
    km.handle(spd(dir=3))
    km.handle(spd(MsgType.X_SPDDELETE, dir=3))


def stored(km):
    """The SAs' state but for ``epoch``, which only timers use."""
    drop = SecurityAssociation.__slots__.index("epoch")
    return [row[:drop] + row[drop + 1 :] for row in km.sad.snapshot()]


def policies(km):
    return [(p.index, p.selector, p.priority, p.requests, p.added) for p in km.spd]


def test_the_store_brings_back_every_sa_and_policy(km, clock, where):
    state = os.path.join(where, "state.db")
    store = StateStore(state)
    assert store.attach(km) == (0, 0)
    workload(km)
    assert store.pending()
    store.commit()
    assert not store.pending()
    store.close()
    assert stat.S_IMODE(os.stat(state).st_mode) == 0o600
    again = KeyManager(make_registry(), clock=clock)
    store = StateStore(state)
    assert store.attach(again) == (len(km.sad), len(km.spd)) == (18, 2)
    assert stored(again) == stored(km)
    assert policies(again) == policies(km)
    assert again.sad.get(SaType.ESP, "10.0.0.2", 0x300).state == SaState.LARVAL
    # timers come back: registered again, the add-time lifetimes expire in order
    again.handle(Message(MsgType.REGISTER, SaType.ESP).encode())
    clock.advance(60)
    kinds = [decode(m).get(ExtType.LIFETIME_HARD, object) is not None for m in again.tick()]
    assert kinds == [False] * 15 + [True] * 15  # 15 ESP SAs with lifetimes: soft, then hard
    assert again.sad.get(SaType.ESP, "10.0.0.2", 0x300) is None  # LARVAL timed out
    # new policies are numbered after the restored ones
    added = decode(again.handle(spd(dir=3))[0]).get(ExtType.X_POLICY, Policy)
    assert added.id > max(p.index for p in km.spd)
    store.commit()
    store.close()


def test_the_store_keeps_every_field_but_the_epoch_and_the_reported_sequence():
    assert set(SA_COLUMNS) | {"epoch", "sequence"} == set(SecurityAssociation.__slots__)


def test_flushes_are_stored(km, clock, where):
    state = os.path.join(where, "state.db")
    store = StateStore(state, synchronous="normal")
    store.attach(km)
    workload(km)
    store.commit()
    km.handle(Message(MsgType.FLUSH).encode())
    km.handle(Message(MsgType.X_SPDFLUSH).encode())
    store.commit()
    store.close()
    store = StateStore(state)
    assert store.attach(KeyManager(make_registry(), clock=clock)) == (0, 0)
    store.close()


def test_a_file_that_is_not_a_key_database_is_refused(where):
    garbage = os.path.join(where, "garbage")
    with open(garbage, "wb") as stream:
        stream.write(b"not a database" * 100)
    other = os.path.join(where, "other.db")
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE t (x)")
    for path in (garbage, other):
        with pytest.raises(PfkeyError) as caught:
            StateStore(path)
        assert caught.value.errno == errno.EINVAL and path in str(caught.value)
    with pytest.raises(PfkeyError):
        StateStore(os.path.join(where, "x.db"), synchronous="OFF")


# -- as a process: signals and kill -9 ---------------------------------------------------


def test_socket_is_private_and_sigterm_removes_it(where):
    path = os.path.join(where, "s")
    daemon = start_keyd(path)
    try:
        assert stat.S_ISSOCK(os.stat(path).st_mode)
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        with PfkeyClient(path, timeout=WAIT) as client:
            assert decode(client.request(Message(MsgType.REGISTER, SaType.ESP))[0]).errno == 0
            assert stop(daemon, signal.SIGTERM) == 0
            with pytest.raises(PfkeyError) as caught:
                client.receive()
            assert caught.value.errno in (errno.EPIPE, errno.ECONNRESET)
        assert not os.path.exists(path)
    finally:
        stop(daemon, signal.SIGKILL)


def test_kill_9_in_the_middle_of_a_load_loses_no_acknowledged_sa(where):
    seed = random.randrange(1 << 32)
    print(f"kill -9 test seed: {seed}")  # shown on failure
    rng = random.Random(seed)
    path, state = os.path.join(where, "s"), os.path.join(where, "state.db")
    daemon = start_keyd(path, "--state", state)
    acked = []
    load = 100_000
    killer = threading.Timer(rng.uniform(0.15, 0.5), daemon.send_signal, (signal.SIGKILL,))
    try:
        with PfkeyClient(path, timeout=WAIT) as client:
            (reply,) = client.request(sa_message(0xFFF, seq=0, pid=client.pid))
            assert decode(reply).errno == 0  # probed and stored: the load starts warm
            acked.append(0xFFF)
            killer.start()
            try:
                for spi in range(0x1000, 0x1000 + load):
                    (reply,) = client.request(sa_message(spi, seq=0, pid=client.pid))
                    assert decode(reply).errno == 0
                    acked.append(spi)
            except PfkeyError:
                pass  # the daemon is gone
        killer.join(WAIT)
        assert daemon.wait(WAIT) == -signal.SIGKILL
    finally:
        killer.cancel()
        stop(daemon, signal.SIGKILL)
    assert 1 < len(acked) < load, f"seed {seed}: {len(acked)} acknowledged"
    assert os.path.exists(path)  # killed: nobody removed the socket
    assert stat.S_IMODE(os.stat(state).st_mode) == 0o600
    daemon = start_keyd(path, "--state", state)  # clears the stale socket
    try:
        with PfkeyClient(path, timeout=WAIT) as client:
            dumped = {
                decode(m).get(ExtType.SA, Sa).spi for m in client.request(Message(MsgType.DUMP))
            }
    finally:
        assert stop(daemon) == 0
    missing = set(acked) - dumped
    assert not missing, f"seed {seed}: acknowledged SAs lost: {sorted(missing)[:5]}"
    assert dumped - set(acked) <= {acked[-1] + 1}  # at most the one in flight at the kill
