"""The key daemon under abuse: accept failing for want of descriptors, empty datagrams, and
dumps nobody reads. Every wait is bounded (keyd.WAIT)."""

import contextlib
import errno
import os
import random
import resource
import signal
import socket
import time

import pytest

from cryptoapi.pfkey import ExtType, KeyManager, Message, MsgType, Sa, SaType, decode
from cryptoapi.pfkey.daemon.client import PfkeyClient, fields
from cryptoapi.pfkey.daemon.server import DUMP_PAUSE
from tests.pfkey.conftest import Clock, dump_seqs, lookup_message, make_registry, sa_message, spd
from tests.pfkey.keyd import WAIT, daemon_thread, short_dir, start_keyd, stop

COUNT = 5000
"""SAs in the database the dump tests dump: several times what a client's queue may hold."""
FIRST_SPI = 0x10000


@pytest.fixture
def where():
    with short_dir() as path:
        yield path


@pytest.fixture
def km():
    return KeyManager(make_registry(), clock=Clock(), rng=random.Random(5))


@pytest.fixture
def loaded(km):
    """The key manager with COUNT ESP SAs."""
    for spi in range(FIRST_SPI, FIRST_SPI + COUNT):
        km.handle(sa_message(spi))
    assert len(km.sad) == COUNT
    return km


def until(condition, what):
    """Poll ``condition`` until it holds (at most WAIT seconds)."""
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.005)


# -- accept failing: EMFILE --------------------------------------------------------------


def lowest_free_fd(pid):
    """The descriptor number the process would get next."""
    taken = {int(fd) for fd in os.listdir(f"/proc/{pid}/fd")}
    return min(set(range(len(taken) + 1)) - taken)


def sockets_of(pid):
    """How many sockets the process has open."""
    count = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(FileNotFoundError):  # closed meanwhile
            count += os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:")
    return count


def test_accept_failing_with_emfile_keeps_the_daemon_serving(where):
    path = os.path.join(where, "s")
    daemon = start_keyd(path, "--control", "none")  # its descriptors, counted below
    register = Message(MsgType.REGISTER, SaType.ESP)
    try:
        with PfkeyClient(path, timeout=WAIT) as first:
            assert decode(first.request(register)[0]).errno == 0  # every probe done now
            # listener, wake-up pair, first: start_keyd's test connection is closed, so no
            # descriptor below the limit will be freed while it is in force
            until(lambda: sockets_of(daemon.pid) == 4, "the daemon to hold 4 sockets")
            soft, hard = resource.prlimit(daemon.pid, resource.RLIMIT_NOFILE)
            resource.prlimit(daemon.pid, resource.RLIMIT_NOFILE, (lowest_free_fd(daemon.pid), hard))
            try:
                waiting = PfkeyClient(path, timeout=WAIT)  # queued: the daemon cannot take it
                episode = time.monotonic() + 0.8  # retries after 0.1, 0.3 and 0.7 s
                while time.monotonic() < episode:  # asking again is EEXIST: UNSPEC only asks
                    assert decode(first.request(Message(MsgType.REGISTER))[0]).errno == 0
            finally:
                resource.prlimit(daemon.pid, resource.RLIMIT_NOFILE, (soft, hard))
            with waiting, PfkeyClient(path, timeout=WAIT) as later:
                assert decode(waiting.request(register)[0]).errno == 0
                assert decode(later.request(register)[0]).errno == 0
            assert decode(first.request(Message(MsgType.REGISTER))[0]).errno == 0
        daemon.send_signal(signal.SIGTERM)
        _, log = daemon.communicate(timeout=WAIT)
        assert daemon.returncode == 0, log
    finally:
        stop(daemon, signal.SIGKILL)
    lines = log.decode().splitlines()
    assert sum("cannot accept clients" in line for line in lines) == 1
    (recovered,) = [line for line in lines if "accepting clients again" in line]
    assert int(recovered.split("after ")[1].split()[0]) >= 2  # failed, retried: one warning
    assert not os.path.exists(path)


# -- empty datagrams -------------------------------------------------------------------


def test_an_empty_datagram_gets_emsgsize_and_the_client_keeps_everything(km, where):
    path = os.path.join(where, "s")
    with (
        daemon_thread(km, path),
        PfkeyClient(path, timeout=WAIT) as client,
        PfkeyClient(path, timeout=WAIT) as other,
    ):
        client.request(Message(MsgType.REGISTER, SaType.ESP))
        pid = client.pid
        client.send(lookup_message(MsgType.GET, 0x1001, seq=7, pid=pid))
        client.send(b"")
        client.send(lookup_message(MsgType.GET, 0x1001, seq=8, pid=pid))
        got = [fields(client.receive()) for _ in range(3)]
        assert got == [
            (MsgType.GET, errno.ESRCH, SaType.ESP, 7, pid),
            (0, errno.EMSGSIZE, 0, 0, 0),  # no header to echo: zeros but the errno
            (MsgType.GET, errno.ESRCH, SaType.ESP, 8, pid),
        ]
        other.request(sa_message(0x1001, seq=0, pid=other.pid))
        note = decode(client.notification(WAIT))  # still registered
        assert (note.type, note.get(ExtType.SA, Sa).spi) == (MsgType.ADD, 0x1001)
        assert km.stats()["registered"] == 1  # the manager keeps the registration


def test_end_of_file_is_still_end_of_file_after_an_empty_datagram(km, where):
    path = os.path.join(where, "s")
    with daemon_thread(km, path) as daemon:
        for shut in (PfkeyClient.close, lambda c: c.sock.shutdown(socket.SHUT_WR)):
            client = PfkeyClient(path, timeout=WAIT)
            client.request(Message(MsgType.REGISTER, SaType.ESP))
            client.send(b"")
            shut(client)
            until(lambda: not daemon.clients and not km.stats()["registered"], "the drop")
            client.close()


# -- dumps -------------------------------------------------------------------------------


def queued(daemon):
    return [len(c.queue) for c in list(daemon.clients.values())]


def test_a_dump_nobody_reads_holds_a_bounded_queue_and_resumes_when_read(loaded, where):
    km = loaded
    path = os.path.join(where, "s")
    with (
        daemon_thread(km, path) as daemon,
        PfkeyClient(path, timeout=WAIT) as idle,
        PfkeyClient(path, timeout=WAIT) as other,
    ):
        idle.send(Message(MsgType.DUMP, SaType.ESP, 9, idle.pid))
        until(lambda: km.stats()["messages"] > COUNT, "the DUMP to be handled")
        other.request(lookup_message(MsgType.GET, FIRST_SPI))  # that round is over
        assert max(queued(daemon)) <= DUMP_PAUSE
        stats = daemon.stats()
        assert stats["dumping"] == 1 and stats["queued"] <= DUMP_PAUSE
        dumped = [decode(idle.receive()) for _ in range(COUNT)]
        assert [m.seq for m in dumped] == dump_seqs(COUNT)
        assert [m.get(ExtType.SA, Sa).spi for m in dumped] == list(
            range(FIRST_SPI + COUNT - 1, FIRST_SPI - 1, -1)
        )  # newest first
        assert {m.type for m in dumped} == {MsgType.DUMP}
        assert daemon.stats()["dumping"] == 0
        idle.request(Message(MsgType.REGISTER, SaType.ESP))  # read again once it is done


def test_a_client_that_leaves_in_the_middle_of_its_dump_is_dropped(loaded, where):
    km = loaded
    path = os.path.join(where, "s")
    with daemon_thread(km, path) as daemon, PfkeyClient(path, timeout=WAIT) as other:
        idle = PfkeyClient(path, timeout=WAIT)
        idle.send(Message(MsgType.DUMP, SaType.ESP, 9, idle.pid))
        until(lambda: daemon.stats()["dumping"] == 1, "the dump to start")
        idle.close()
        until(lambda: daemon.stats()["clients"] == 1, "the client to be dropped")
        assert daemon.stats() == {
            "clients": 1, "queued": 0, "dumping": 0, "dropped": 0, "accept_failures": 0,
        }  # fmt: skip
        assert len(other.request(Message(MsgType.DUMP, SaType.ESP))) == COUNT


def test_pipelined_requests_are_answered_in_order_around_dumps(loaded, where):
    km = loaded
    for direction in (1, 2, 3):
        km.handle(spd(dir=direction))
    path = os.path.join(where, "s")
    with daemon_thread(km, path), PfkeyClient(path, timeout=WAIT) as client:
        pid = client.pid
        client.send(Message(MsgType.DUMP, SaType.ESP, 10, pid))
        client.send(lookup_message(MsgType.GET, FIRST_SPI, seq=11, pid=pid))
        client.send(Message(MsgType.X_SPDDUMP, 0, 12, pid))
        client.send(Message(MsgType.DUMP, SaType.AH, 13, pid))
        client.send(Message(MsgType.DUMP, SaType.ESP, 14, pid))
        got = [fields(client.receive()) for _ in range(2 * COUNT + 5)]
    down = dump_seqs(COUNT)
    assert [(t, e, s) for t, e, _, s, _ in got[:COUNT]] == [(MsgType.DUMP, 0, s) for s in down]
    assert got[COUNT] == (MsgType.GET, 0, SaType.ESP, 11, pid)
    assert [(t, s) for t, _, _, s, _ in got[COUNT + 1 : COUNT + 4]] == [
        (MsgType.X_SPDDUMP, 1), (MsgType.X_SPDDUMP, 2), (MsgType.X_SPDDUMP, 0),
    ]  # fmt: skip
    assert got[COUNT + 4] == (MsgType.DUMP, errno.ENOENT, SaType.AH, 13, pid)
    assert [s for _, _, _, s, _ in got[COUNT + 5 :]] == down


def test_a_lazy_dump_is_what_handle_returns(km):
    for spi in range(0x100, 0x140):
        km.handle(sa_message(spi, hard=(0, 0, 100, 0)))
    km.handle(sa_message(0x200, satype=SaType.AH, encrypt=0, enc_key=None))
    for direction in (1, 2):
        km.handle(spd(dir=direction))
    messages = [
        Message(MsgType.DUMP, SaType.ESP, 1, 2),
        Message(MsgType.DUMP, SaType.UNSPEC, 3, 4),
        Message(MsgType.DUMP, SaType.AH, 5, 6),
        Message(MsgType.DUMP, 10, 7, 8),  # EINVAL
        Message(MsgType.X_SPDDUMP, 0, 9, 10),
        Message(MsgType.DUMP, SaType.X_IPCOMP, 11, 12),  # ENOENT
    ]
    for message in messages:
        data = message.encode()
        rest, dump = km.handle_lazily(data)
        lazily = (list(dump) if dump is not None else []) + rest
        assert lazily == km.handle(data), message
    rest, dump = km.handle_lazily(messages[0].encode())
    assert (rest, len(dump)) == ([], 0x40)
    next(dump)
    assert len(dump) == 0x3F  # built one at a time
    for short in (b"", bytes((2, MsgType.DUMP)), bytes((2, MsgType.DUMP, 0, 3, 2, 0))):
        assert km.handle_lazily(short) == (km.handle(short), None)
