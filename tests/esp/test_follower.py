"""espd's follower against a real key daemon (``cryptoapi keyd`` in a subprocess): the
initial dump with keys, then ADD/UPDATE (fetched with GET: broadcasts carry no keys),
DELETE, EXPIRE, FLUSH and the SPD messages, mirrored into a local key manager; a lost
daemon, and the copy brought back in line by difference after a reconnect.

Every wait is bounded (``WAIT``); sockets live in short directories under /tmp."""

import contextlib
import errno
import os
import select
import signal
import time

import pytest

from cryptoapi.esp.espd import follower as follower_module
from cryptoapi.esp.espd.follower import Follower
from cryptoapi.esp.espd.mirror import Mirror
from cryptoapi.esp.espd.notices import QUEUE, Notices
from cryptoapi.pfkey import (
    Address,
    EncryptAlg,
    ExtType,
    IpsecLevel,
    KeyManager,
    Lifetime,
    Message,
    MsgType,
    Policy,
    Sa,
    SaState,
    SaType,
    SockAddr,
    decode,
)
from cryptoapi.pfkey.daemon.client import PfkeyClient
from cryptoapi.pfkey.errors import PfkeyError
from cryptoapi.pfkey.km.routing import without_keys
from cryptoapi.pfkey.setkey import DaemonTransport, LocalTransport, apply, parse
from tests.pfkey.keyd import WAIT, running_keyd, short_dir, start_keyd, stop

GCM_KEY = "0x" + "11" * 20
CBC_KEY = "0x" + "22" * 16
HMAC_KEY = "0x" + "33" * 32

BASE = f"""
add 192.0.2.1 192.0.2.2 esp 0x1001 -m tunnel -r 32 -E aes-gcm-16 {GCM_KEY};
add 192.0.2.2 192.0.2.1 esp 0x2002 -m tunnel -E aes-cbc {CBC_KEY} -A hmac-sha256 {HMAC_KEY};
spdadd 10.1.0.1/32 10.2.0.1/32 any -P out ipsec esp/tunnel/192.0.2.1-192.0.2.2/require;
spdadd 10.2.0.1/32 10.1.0.1/32 any -P in ipsec esp/tunnel/192.0.2.2-192.0.2.1/require;
"""


@pytest.fixture
def where():
    with short_dir() as path:
        yield path


@pytest.fixture
def keyd():
    with running_keyd() as (path, _):
        yield path


@contextlib.contextmanager
def admin(path):
    """A client that changes keyd's database with setkey statements."""
    with PfkeyClient(path, timeout=WAIT) as client:

        def run(text):
            outcomes = apply(parse(text), DaemonTransport(client))
            errors = [line for o in outcomes for line in o.describe_errors()]
            assert not errors, errors

        yield run


def follow(path):
    key_manager = KeyManager()
    follower = Follower(path, Mirror(key_manager), timeout=WAIT)
    follower.connect()
    return key_manager, follower


def spis(key_manager):
    return sorted(sa.spi for sa in key_manager.sad)


def settle(follower, done):
    """Let ``follower`` take broadcasts until ``done()`` (bounded by WAIT)."""
    deadline = time.monotonic() + WAIT
    while not done():
        left = deadline - time.monotonic()
        assert left > 0, "the follower did not see the change in time"
        fd = follower.fileno()
        if fd is not None and not follower.pending():
            select.select([fd], [], [], min(left, 0.2))
        follower.on_readable()


def test_the_initial_dump_brings_keys_and_policies(keyd):
    with admin(keyd) as run:
        run(BASE)
    key_manager, follower = follow(keyd)
    try:
        assert spis(key_manager) == [0x1001, 0x2002]
        gcm = key_manager.sad.get(SaType.ESP, "192.0.2.2", 0x1001)
        cbc = key_manager.sad.get(SaType.ESP, "192.0.2.1", 0x2002)
        assert gcm.encrypt_key == bytes.fromhex("11" * 20) and gcm.replay == 32
        assert cbc.encrypt_key == bytes.fromhex("22" * 16)
        assert cbc.auth_key == bytes.fromhex("33" * 32)
        assert gcm.state == SaState.MATURE and gcm.mode == cbc.mode == 2  # tunnel
        assert sorted(p.dir for p in key_manager.spd) == [1, 2]
    finally:
        follower.close()


def test_an_empty_daemon_gives_an_empty_copy(keyd):
    key_manager, follower = follow(keyd)
    try:
        assert len(key_manager.sad) == len(key_manager.spd) == 0
    finally:
        follower.close()


def test_adds_are_fetched_with_their_keys_and_deletes_follow(keyd):
    key_manager, follower = follow(keyd)
    try:
        with admin(keyd) as run:
            run(BASE)
            settle(follower, lambda: len(key_manager.sad) == 2 and len(key_manager.spd) == 2)
            sa = key_manager.sad.get(SaType.ESP, "192.0.2.2", 0x1001)
            assert sa.encrypt_key == bytes.fromhex("11" * 20)  # a broadcast has no keys
            assert follower.mirror.counters["sas_installed"] == 2
            run("delete 192.0.2.1 192.0.2.2 esp 0x1001;")
            settle(follower, lambda: spis(key_manager) == [0x2002])
            run("spddelete 10.1.0.1/32 10.2.0.1/32 any -P out;")
            settle(follower, lambda: [p.dir for p in key_manager.spd] == [1])
            run("flush esp; spdflush;")
            settle(follower, lambda: not key_manager.sad and not key_manager.spd)
    finally:
        follower.close()


def test_an_update_changes_the_lifetimes(keyd):
    key_manager, follower = follow(keyd)
    try:
        with admin(keyd) as run:
            run(BASE)
            settle(follower, lambda: len(key_manager.sad) == 2)
            run(f"update 192.0.2.1 192.0.2.2 esp 0x1001 -m tunnel -r 32 -lh 600"
                f" -E aes-gcm-16 {GCM_KEY};")  # fmt: skip
            sa_of = lambda: key_manager.sad.get(SaType.ESP, "192.0.2.2", 0x1001)  # noqa: E731
            # (keyd's dumps always carry the lifetimes, zero when unset, as Linux's do)
            settle(follower, lambda: sa_of().hard is not None and sa_of().hard.addtime == 600)
            assert sa_of().encrypt_key == bytes.fromhex("11" * 20)
    finally:
        follower.close()


def test_a_policy_removed_by_id_is_removed_here_by_selector(keyd):
    with admin(keyd) as run:
        run(BASE)
    key_manager, follower = follow(keyd)
    try:
        with PfkeyClient(keyd, timeout=WAIT) as client:
            dumped = client.request(Message(MsgType.X_SPDDUMP))
            policy = decode(dumped[0]).get(ExtType.X_POLICY, Policy)
            by_id = Policy(dir=policy.dir, id=policy.id)
            (reply,) = client.request(Message(MsgType.X_SPDDELETE2, extensions=(by_id,)))
            assert decode(reply).errno == 0
        settle(follower, lambda: len(key_manager.spd) == 1)
        assert [p.dir for p in key_manager.spd] == [3 - policy.dir]  # the other one is left
    finally:
        follower.close()


def test_a_hard_expire_deletes_the_copy(keyd):
    key_manager, follower = follow(keyd)
    try:
        with admin(keyd) as run:
            run(f"add 192.0.2.1 192.0.2.2 esp 0x1001 -m tunnel -lh 1 -E aes-gcm-16 {GCM_KEY};")
            settle(follower, lambda: len(key_manager.sad) == 1)
        settle(follower, lambda: not key_manager.sad)  # keyd's timer fires; its EXPIRE comes
        assert follower.mirror.counters["expires"] == 1
    finally:
        follower.close()


def expire(spi, which):
    """keyd's EXPIRE for an SA 192.0.2.1 -> 192.0.2.2 (``which``: hard or soft)."""
    sa = Sa(spi, 0, SaState.DYING, 0, EncryptAlg.X_AES_GCM_ICV16)
    exts = (
        sa,
        Lifetime(ExtType.LIFETIME_CURRENT),
        Lifetime(which, 0, 0, 1, 0),
        Address(ExtType.ADDRESS_SRC, SockAddr.of("192.0.2.1"), 255, 32),
        Address(ExtType.ADDRESS_DST, SockAddr.of("192.0.2.2"), 255, 32),
    )
    return Message(MsgType.EXPIRE, SaType.ESP, extensions=exts).encode()


def test_a_soft_expire_keeps_the_copy_and_a_hard_one_deletes_it():
    key_manager = KeyManager()
    mirror = Mirror(key_manager)
    apply(parse(BASE), LocalTransport(key_manager))
    assert mirror.notification(expire(0x1001, ExtType.LIFETIME_SOFT)) == []
    assert spis(key_manager) == [0x1001, 0x2002]
    assert mirror.notification(expire(0x1001, ExtType.LIFETIME_HARD)) == []
    assert spis(key_manager) == [0x2002]
    assert mirror.counters["expires"] == 2 and mirror.counters["sas_deleted"] == 1


def test_a_broadcast_that_does_not_decode_is_counted_and_ignored():
    mirror = Mirror(KeyManager())
    assert mirror.notification(b"\x02\x03\x00\x03" + bytes(4)) == []
    assert mirror.counters["bad"] == 1


class Restartable:
    """A keyd at ``path`` that a test stops and starts again."""

    def __init__(self, path):
        self.path = path
        self.process = start_keyd(path)

    def start(self):
        self.process = start_keyd(self.path)

    def stop(self):
        stop(self.process)


@pytest.fixture
def restartable(where, monkeypatch):
    """A keyd holding BASE, which followers try to reconnect to every 0.05 s once lost;
    stopped at the end."""
    monkeypatch.setattr(follower_module, "RETRY", 0.05)
    daemon = Restartable(os.path.join(where, "keyd.sock"))
    try:
        with admin(daemon.path) as run:
            run(BASE)
        yield daemon
    finally:
        daemon.stop()


def reconnect(follower):
    """Let ``follower`` reconnect (bounded by WAIT): its second connection."""
    deadline = time.monotonic() + WAIT
    while follower.fileno() is None and time.monotonic() < deadline:
        time.sleep(follower.until_retry())
        follower.retry_if_due()
    assert follower.connects == 2


def test_a_lost_daemon_keeps_the_copy_and_a_reconnect_syncs_by_difference(restartable):
    path = restartable.path
    key_manager, follower = follow(path)
    kept = key_manager.sad.get(SaType.ESP, "192.0.2.2", 0x1001)
    restartable.stop()
    settle(follower, lambda: follower.retry_at is not None)
    assert follower.fileno() is None and spis(key_manager) == [0x1001, 0x2002]
    follower.retry_if_due()  # nobody listens: it stays disconnected
    assert follower.fileno() is None
    restartable.start()
    with admin(path) as run:  # the new daemon has one of the SAs, and a new one
        run(BASE.splitlines()[1] + "\n" + f"add 192.0.2.1 192.0.2.2 esp 0x3003 -m tunnel"
            f" -E aes-gcm-16 {GCM_KEY};")  # fmt: skip
    reconnect(follower)
    assert spis(key_manager) == [0x1001, 0x3003]
    assert not key_manager.spd  # the new daemon has no policies
    # unchanged SAs are the same records: the data path keeps their sequence numbers
    assert key_manager.sad.get(SaType.ESP, "192.0.2.2", 0x1001) is kept
    follower.close()


def test_connecting_to_no_daemon_fails_with_its_errno(where):
    follower = Follower(os.path.join(where, "none.sock"), Mirror(KeyManager()), timeout=1)
    with pytest.raises(PfkeyError) as caught:
        follower.connect()
    assert caught.value.errno in (errno.ENOENT, errno.ECONNREFUSED)


def test_dump_entries_without_keys_are_fetched_with_get_and_larval_ones_skipped():
    keyd_manager = KeyManager()  # stands in for keyd: its replies are what keyd sends
    apply(parse(BASE + "getspi 192.0.2.1 192.0.2.2 esp 0x5005;"), LocalTransport(keyd_manager))
    dumped = keyd_manager.handle(Message(MsgType.DUMP, SaType.ESP).encode())
    assert len(dumped) == 3  # the two SAs and the LARVAL one
    mirror = Mirror(KeyManager())
    fetch = mirror.sync_sad([without_keys(entry) for entry in dumped])
    assert [(m.type, m.get(ExtType.SA, Sa).spi) for m in fetch] == [
        (MsgType.GET, 0x2002),  # the newest first, as Linux dumps
        (MsgType.GET, 0x1001),
    ]
    assert not mirror.key_manager.sad  # nothing without keys
    for request in fetch:
        (reply,) = keyd_manager.handle(request.encode())
        assert mirror.install(reply)
    assert spis(mirror.key_manager) == [0x1001, 0x2002]
    record = mirror.key_manager.sad.get(SaType.ESP, "192.0.2.1", 0x2002)
    assert mirror.install(reply)  # the same again: left alone, not replaced
    assert mirror.key_manager.sad.get(SaType.ESP, "192.0.2.1", 0x2002) is record
    assert mirror.counters["sas_unchanged"] == 1


def test_expires_that_fall_due_while_the_mirror_works_reach_the_data_path():
    # the local key manager runs its timers on every message: an EXPIRE due when the mirror
    # installs or looks up an SA comes back with that reply and must not be dropped
    now = [1000.0]
    key_manager = KeyManager(clock=lambda: now[0])
    key_manager.registered.add(SaType.ESP)
    heard: list[bytes] = []
    mirror = Mirror(key_manager, heard.extend)
    apply(parse(BASE.replace("-r 32", "-r 32 -ls 5")), LocalTransport(key_manager))
    now[0] += 10  # the soft lifetime of 0x1001 is due; nothing has ticked
    assert mirror.notification(expire(0x2002, ExtType.LIFETIME_HARD)) == []  # a local DELETE
    expired = [decode(m) for m in heard]
    assert [(m.type, m.get(ExtType.SA, Sa).spi) for m in expired] == [(MsgType.EXPIRE, 0x1001)]
    assert expired[0].get(ExtType.LIFETIME_SOFT, Lifetime) is not None


def test_a_stalled_daemon_makes_no_notice_wait_and_keeps_the_connection():
    """keyd stopped (SIGSTOP) while espd reports: its socket fills, and the notices queue
    (the oldest dropped past QUEUE, counted); no report waits (one blocked for up to 5 s
    and then dropped the connection), and once keyd runs again it takes the queue."""
    with running_keyd() as (path, process):
        key_manager, follower = follow(path)
        key_manager.registered.add(SaType.ESP)
        (acquire,) = key_manager.acquire(SaType.ESP, "192.0.2.1", "198.18.0.1")
        notices = Notices(follower.report)
        process.send_signal(signal.SIGSTOP)
        try:
            started = time.monotonic()
            for _ in range(4 * QUEUE):
                notices([acquire])
                notices.flush()
            waited = time.monotonic() - started
            assert follower.client is not None, "a full socket dropped the connection"
            assert waited < 3.0, f"reporting to a stopped keyd took {waited:.1f} s"  # was 5 s
            assert notices.pending() == QUEUE and notices.counters["dropped"] > 0
        finally:
            process.send_signal(signal.SIGCONT)
        deadline = time.monotonic() + WAIT
        while notices.pending():
            assert time.monotonic() < deadline, "keyd never took the queued notices"
            follower.on_readable()  # its broadcasts of them come back: take them
            notices.flush()
        assert follower.client is not None
        follower.close()


def _ids(policies):
    """(direction, source, destination) -> policy id."""
    return {(p.dir, p.src.addr, p.dst.addr): p.index for p in policies}


def _keyd_ids(path):
    with PfkeyClient(path, timeout=WAIT) as client:
        dumped = [decode(m) for m in client.request(Message(MsgType.X_SPDDUMP))]
    out = {}
    for message in dumped:
        policy = message.get(ExtType.X_POLICY, Policy)
        src = message.get(ExtType.ADDRESS_SRC, Address)
        dst = message.get(ExtType.ADDRESS_DST, Address)
        out[(policy.dir, src.addr.addr, dst.addr.addr)] = policy.id
    return out


MORE = """
spdadd 10.1.0.2/32 10.2.0.2/32 any -P out ipsec esp/tunnel/192.0.2.1-192.0.2.2/require;
spdadd 10.2.0.2/32 10.1.0.2/32 any -P in ipsec esp/tunnel/192.0.2.2-192.0.2.1/require;
"""


def test_policy_ids_are_keyds_across_a_flush_an_update_and_a_restart(restartable):
    """The local copy keeps keyd's policy ids (an ACQUIRE names the policy by id, and the
    IKE daemon looks it up in keyd's SPD): after the first dump, an SPDFLUSH and new adds,
    an SPDUPDATE, and a restarted keyd that numbered its policies anew."""
    path = restartable.path
    key_manager, follower = follow(path)
    assert _ids(key_manager.spd) == _keyd_ids(path) and len(key_manager.spd) == 2
    with admin(path) as run:
        run("spdflush;\n" + MORE + BASE.split("\n", 3)[3])  # new ids, other order
    settle(follower, lambda: _ids(key_manager.spd) == _keyd_ids(path))
    assert len(key_manager.spd) == 4
    with admin(path) as run:
        run(MORE.split("\n")[1].replace("spdadd", "spdupdate").replace("require", "unique"))
    levels = lambda: {r.level for p in key_manager.spd for r in p.requests}  # noqa: E731
    settle(follower, lambda: IpsecLevel.UNIQUE in levels())
    assert _ids(key_manager.spd) == _keyd_ids(path)
    restartable.stop()
    settle(follower, lambda: follower.retry_at is not None)
    restartable.start()
    with admin(path) as run:  # numbered from the start again, in another order
        run(MORE + BASE.split("\n", 3)[3])
    reconnect(follower)
    assert _ids(key_manager.spd) == _keyd_ids(path) and len(key_manager.spd) == 4
    follower.close()
