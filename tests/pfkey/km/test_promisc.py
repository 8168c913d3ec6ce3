"""SADB_X_PROMISC, written from Linux ``net/key/af_key.c``: ``pfkey_promisc`` (the mode and
the echo), ``pfkey_process`` (a copy of each message sent, before it is handled),
``pfkey_broadcast`` (a copy of each message sent to anyone) and ``pfkey_release``; in
process and over the key daemon's socket, and with ipsec-tools' ``setkey -x`` if it is
installed."""

import errno
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cryptoapi.pfkey import ExtType, Key, Message, MsgType, SaType, decode
from cryptoapi.pfkey.daemon.client import PfkeyClient, fields
from cryptoapi.pfkey.daemon.preload import library
from cryptoapi.pfkey.km.clients import ANONYMOUS
from cryptoapi.pfkey.km.routing import DumpReply, Notice, Reply
from tests.pfkey.conftest import ENC_KEY, header, lookup_message, sa_message
from tests.pfkey.keyd import WAIT, daemon_thread, start_keyd, stop

ON, OFF = 1, 0


def promisc(satype=ON, *, code=0, body=()):
    """A PROMISC message (header only unless ``body``), with ``sadb_msg_errno`` ``code``."""
    return Message(MsgType.X_PROMISC, satype, 7, 4242, code, tuple(body)).encode()


def monitor(km):
    """A client in promiscuous mode (its echo checked)."""
    client = km.connect()
    events = km.process(client, promisc(ON))
    assert [type(e) for e in events] == [Reply, Notice]  # the echo, and its copy
    return client


def copies(events, client):
    """What ``client`` gets of ``events`` it did not send."""
    return [e.data for e in events if isinstance(e, Notice) for c in e.to if c == client]


def has_keys(data):
    return decode(data).get(ExtType.KEY_ENCRYPT, Key) is not None


# -- pfkey_promisc ---------------------------------------------------------------------


def test_promisc_on_is_echoed_with_errno_reset_and_copied_to_itself(km):
    # "reset_errno ... new_hdr->sadb_msg_errno = 0", then BROADCAST_ALL: the socket, now
    # promiscuous, gets the echo twice
    client = km.connect()
    sent = promisc(ON, code=errno.EIO)
    reply, copy = km.process(client, sent)
    assert reply.data == copy.data and copy.to == (client,)
    echo = decode(reply.data)
    assert (echo.type, echo.satype, echo.errno, echo.seq, echo.pid) == (
        MsgType.X_PROMISC, ON, 0, 7, 4242,
    )  # fmt: skip
    assert km.clients.promiscuous == (client,)


@pytest.mark.parametrize("satype", [2, 3, 255])
def test_promisc_with_another_satype_is_einval_and_changes_nothing(km, satype):
    # "if (satype != 0 && satype != 1) return -EINVAL" before pfk->promisc is set
    client = km.connect()
    (reply,) = km.process(client, promisc(satype))
    assert isinstance(reply, Reply) and reply.data[2] == errno.EINVAL
    assert km.clients.promiscuous == ()


def test_promisc_off_is_copied_before_it_is_handled_then_nothing_is(km):
    client = monitor(km)
    copy, reply = km.process(client, promisc(OFF))  # pfkey_process copies it first
    assert isinstance(copy, Notice) and isinstance(reply, Reply)
    assert decode(reply.data).errno == 0 and km.clients.promiscuous == ()
    assert km.process(km.connect(), sa_message(0x1001))[1:] == []  # the ADD reply only


def test_promisc_with_a_body_is_sent_on_as_given(km):
    # no reset_errno: skb_clone of the message as it came, BROADCAST_ALL; the mode stays
    sender, listener = km.connect(), km.connect()
    watcher = monitor(km)
    km.process(listener, header(MsgType.REGISTER))
    body = [Key(ExtType.KEY_ENCRYPT, 128, ENC_KEY)]
    sent = promisc(5, code=errno.EIO, body=body)
    events = km.process(sender, sent)
    assert events[0] == Notice(sent, (watcher,))  # pfkey_process
    assert events[1] == Reply(sent)  # to the sender, errno and satype as given
    assert Notice(sent, (watcher,)) in events[2:]  # pfkey_broadcast's copy, keys and all
    (stripped,) = [e for e in events[2:] if isinstance(e, Notice) and listener in e.to]
    assert not has_keys(stripped.data) and decode(stripped.data).errno == errno.EIO
    assert km.clients.promiscuous == (watcher,)


# -- pfkey_process and pfkey_broadcast -------------------------------------------------


def test_a_monitor_gets_each_message_before_it_is_handled_and_its_reply(km):
    watcher = monitor(km)
    sender = km.connect()
    sent = sa_message(0x1001)
    events = km.process(sender, sent)
    request, reply = copies(events, watcher)
    assert request == sent and has_keys(request)  # as sent: the keys too
    assert reply == events[1].data and decode(reply).type == MsgType.ADD
    assert [e.data for e in events if isinstance(e, Reply)] == [reply]


def test_a_registered_monitor_gets_a_broadcast_twice(km):
    # "if you are meant to receive this pfkey message you receive it twice"
    watcher = monitor(km)
    km.process(watcher, header(MsgType.REGISTER))
    events = km.process(km.connect(), sa_message(0x1001))
    assert len(copies(events, watcher)) == 3  # the request, the copy, the notification


def test_a_monitor_sees_get_replies_with_their_keys_and_errors(km):
    # pfkey_get and pfkey_error send with BROADCAST_ONE: promiscuous sockets get copies
    watcher = monitor(km)
    sender = km.connect()
    km.process(sender, sa_message(0x1001))
    got = copies(km.process(sender, lookup_message(MsgType.GET, 0x1001)), watcher)
    assert [decode(m).type for m in got] == [MsgType.GET] * 2 and has_keys(got[1])
    missing = copies(km.process(sender, lookup_message(MsgType.GET, 0x2002)), watcher)
    assert [decode(m).errno for m in missing] == [0, errno.ESRCH]


def test_a_monitor_that_sends_gets_its_own_message_too(km):
    watcher = monitor(km)
    events = km.process(watcher, lookup_message(MsgType.GET, 0x2002))
    assert [type(e) for e in events] == [Notice, Reply, Notice]
    assert [c.to for c in events if isinstance(c, Notice)] == [(watcher,), (watcher,)]


def test_a_message_refused_at_its_header_is_not_copied(km):
    # pfkey_sendmsg: pfkey_get_base_msg fails before pfkey_process, so nothing is broadcast
    watcher = monitor(km)
    bad_version = b"\x01" + sa_message(0x1001)[1:]
    events = km.process(km.connect(), bad_version)
    assert [type(e) for e in events] == [Reply] and events[0].data[2] == errno.EINVAL
    assert copies(km.process(km.connect(), b"\x02\x03"), watcher) == []


def test_a_monitor_hears_expires_nobody_registered_for(km, clock):
    # key_notify_sa_expire broadcasts whether or not a socket is registered
    watcher = monitor(km)
    km.process(km.connect(), sa_message(0x1001, hard=(0, 0, 10, 0)))
    clock.advance(11)
    (expire,) = km.run_timers()
    assert (expire.data[1], expire.to) == (MsgType.EXPIRE, (watcher,))


def test_a_monitor_gets_a_copy_of_each_dump_message(km):
    watcher = monitor(km)
    sender = km.connect()
    for spi in (0x1001, 0x1002):
        km.process(sender, sa_message(spi))
    copy, dump = km.process(sender, header(MsgType.DUMP), lazily=True)
    assert copy.to == (watcher,) and isinstance(dump, DumpReply)
    assert dump.copies == (watcher,) and len(dump.dump) == 2


def test_promiscuous_mode_goes_with_the_client(km):
    # pfkey_release takes the socket out of the table
    watcher = monitor(km)
    km.disconnect(watcher)
    assert km.clients.promiscuous == ()
    assert [type(e) for e in km.process(km.connect(), sa_message(0x1001))] == [Reply]


def test_handle_can_be_promiscuous_too(km):
    (echo, copy) = km.handle(promisc(ON))
    assert echo == copy
    sent = sa_message(0x1001)
    request, reply, again = km.handle(sent)
    assert request == sent and reply == again
    assert km.clients.promiscuous == (ANONYMOUS,)


# -- over the key daemon's socket ------------------------------------------------------


def test_a_promiscuous_client_of_keyd_sees_another_clients_add_and_dump(km, where):
    path = os.path.join(where, "s")
    with (
        daemon_thread(km, path),
        PfkeyClient(path, timeout=WAIT) as watcher,
        PfkeyClient(path, timeout=WAIT) as other,
    ):
        other.request(sa_message(0x1002, seq=0, pid=other.pid))  # before: not copied
        watcher.send(promisc(ON))
        echoes = [fields(watcher.receive()) for _ in range(2)]
        assert echoes == [(MsgType.X_PROMISC, 0, ON, 7, 4242)] * 2
        sent = sa_message(0x1001, seq=0, pid=other.pid)
        (added,) = other.request(sent)
        request, reply = watcher.receive(), watcher.receive()
        assert request == sent and reply == added
        assert len(other.request(Message(MsgType.DUMP, SaType.ESP))) == 2
        request, *dumped = [watcher.receive() for _ in range(3)]
        assert fields(request)[:2] == (MsgType.DUMP, 0) and len(request) == 16
        assert [fields(m)[:2] for m in dumped] == [(MsgType.DUMP, 0)] * 2
        assert all(has_keys(m) for m in dumped)  # dump_sa's messages: keys for the owner
        assert not other.notifications  # not registered, not promiscuous: nothing else


# -- ipsec-tools ---------------------------------------------------------------------------

SETKEY = shutil.which("setkey")
COMPILER = shutil.which("cc") or shutil.which("gcc")


@pytest.mark.skipif(SETKEY is None, reason="ipsec-tools' setkey is not installed")
@pytest.mark.skipif(COMPILER is None, reason="no C compiler for pfkey-exec's preload library")
def test_setkey_x_sees_an_add_made_by_another_client(where):
    # an unmodified setkey reaches keyd through `cryptoapi pfkey-exec` (its preload library,
    # built first so that the sleeps below do not include the build)
    path = os.path.join(where, "s")
    cache = os.path.join(where, "cache")
    library(Path(cache) / "cryptoapi")
    keyd = start_keyd(path)
    env = dict(os.environ, XDG_CACHE_HOME=cache)
    pfkey_exec = [sys.executable, "-m", "cryptoapi", "pfkey-exec", "--socket", path, "--"]
    watch = subprocess.Popen(
        [*pfkey_exec, SETKEY, "-x"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    try:
        time.sleep(2.0)  # Python starts, setkey -x turns promiscuous mode on, then reads
        with PfkeyClient(path, timeout=WAIT) as other:
            (added,) = other.request(sa_message(0x1001, seq=0, pid=other.pid))
            assert decode(added).errno == 0
        time.sleep(1.0)
    finally:
        watch.terminate()
        out = watch.communicate(timeout=WAIT)[0].decode()
        stop(keyd)
    # setkey -x prints the ADD as "type=3" (or "SADB_ADD"), its SPI as "spi=4097(...)"
    assert ("SADB_ADD" in out or "type=3 " in out) and "spi=4097" in out, out
