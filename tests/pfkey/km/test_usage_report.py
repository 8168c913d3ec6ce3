"""X_USAGE: a data path in another process reports an SA's usage to the key manager.

``<base, SA, lifetime(C), address(SD)[, sa2]>`` (``MsgType.X_USAGE``): recorded in place,
never lowered, the first use starting the use-time lifetimes; a malformed report gets an
errno and leaves the database as it was.
"""

import errno

import pytest

from cryptoapi.pfkey import ExtType, Key, Lifetime, Message, MsgType, Sa, SaState, SaType, decode
from cryptoapi.pfkey.wire.x_extensions import Sa2
from tests.pfkey.conftest import (
    DST,
    SRC,
    address,
    getspi,
    only,
    refused,
    sa_message,
    usage_report,
)

SPI = 0x100


def report(spi=SPI, **fields):
    """The X_USAGE espd sends (:func:`~tests.pfkey.conftest.usage_report`)."""
    return usage_report(spi, **fields)


def usage_of(message):
    current = message.get(ExtType.LIFETIME_CURRENT, Lifetime)
    return current.nbytes, current.allocations, current.usetime


def test_a_report_records_usage_and_the_reply_shows_it(km, clock):
    km.handle(sa_message(SPI))
    reply = only(km, report(nbytes=840, packets=10, usetime=int(clock()), sequence=10))
    assert (reply.type, reply.errno, reply.seq, reply.pid) == (MsgType.X_USAGE, 0, 9, 4343)
    assert usage_of(reply) == (840, 10, int(clock()))
    assert reply.get(ExtType.KEY_AUTH, Key) is None  # no keys in a report's reply
    sa = km.sad.get(SaType.ESP, DST, SPI)
    assert (sa.nbytes, sa.allocations, sa.used, sa.sequence) == (840, 10, int(clock()), 10)
    (dumped,) = [decode(m) for m in km.handle(Message(MsgType.DUMP, SaType.ESP).encode())]
    assert usage_of(dumped) == (840, 10, int(clock()))
    assert dumped.get(ExtType.X_SA2, Sa2).sequence == 10  # KAME's seq=, as setkey -D shows


def test_a_report_never_lowers_what_keyd_has(km, clock):
    km.handle(sa_message(SPI))
    first = int(clock())
    only(km, report(nbytes=1000, packets=12, usetime=first, sequence=12))
    clock.advance(5)
    reply = only(km, report(nbytes=84, packets=1, usetime=int(clock()), sequence=1))
    assert usage_of(reply) == (1000, 12, first)  # an espd restarted with fresh counters
    assert km.sad.get(SaType.ESP, DST, SPI).sequence == 12


def test_the_first_reported_use_starts_the_use_time_lifetimes(km, clock):
    km.handle(Message(MsgType.REGISTER, SaType.ESP).encode())
    km.handle(sa_message(SPI, hard=(0, 0, 0, 30)))
    only(km, report(nbytes=84, packets=1, usetime=int(clock())))
    clock.advance(29)
    assert km.tick() == []
    clock.advance(1)
    (expire,) = [decode(m) for m in km.tick()]
    assert expire.type == MsgType.EXPIRE and expire.get(ExtType.LIFETIME_HARD, Lifetime)


def test_a_report_goes_to_its_sender_alone(km):
    """Usage is not a change of the SA: no broadcast to the other registered clients."""
    listener, sender = km.connect(), km.connect()
    km.process(listener, Message(MsgType.REGISTER, SaType.ESP).encode())
    km.handle(sa_message(SPI))
    events = km.process(sender, report(nbytes=84, packets=1))
    assert [type(e).__name__ for e in events] == ["Reply"]


def _lifetime(exttype):
    return Lifetime(exttype, 1, 84, 0, 0)


@pytest.mark.parametrize(
    ("why", "message", "code"),
    [
        ("no such SA", report(0x999, nbytes=84, packets=1), errno.ESRCH),
        ("another source", report(nbytes=84, packets=1, src="10.9.9.9"), errno.EINVAL),
        ("no current lifetime", None, errno.EINVAL),
        ("a key", report(extra=(Key(ExtType.KEY_AUTH, 256, bytes(32)),)), errno.EINVAL),
        ("a hard limit", report(extra=(_lifetime(ExtType.LIFETIME_HARD),)), errno.EINVAL),
        ("a first use in the future", report(usetime=2_000_000_000), errno.EINVAL),
    ],
)
def test_a_malformed_report_is_refused_and_changes_nothing(km, why, message, code):
    km.handle(sa_message(SPI))
    if message is None:
        exts = (Sa(SPI), address(5, SRC), address(6, DST))
        message = Message(MsgType.X_USAGE, SaType.ESP, 9, 4343, 0, exts).encode()
    refused(km, message, code)
    assert km.sad.get(SaType.ESP, DST, SPI).nbytes == 0


def test_a_larval_sa_takes_no_report(km):
    spi = getspi(km).get(ExtType.SA, Sa).spi
    assert km.sad.get(SaType.ESP, DST, spi).state == SaState.LARVAL
    refused(km, report(spi, nbytes=84, packets=1), errno.EINVAL)


def test_a_message_type_past_x_usage_is_still_refused(km):
    data = bytearray(report())
    data[1] = MsgType.X_USAGE + 1
    (reply,) = km.handle(bytes(data))
    assert reply[2] == errno.EINVAL  # sadb_msg_errno of the header-only reply
