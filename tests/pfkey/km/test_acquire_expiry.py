"""Pending ACQUIREs expire after Linux's XFRM_ACQ_EXPIRES (30 s, by the manager's clock) and
at most ACQUIRE_MAX are kept: one more is refused with EAGAIN."""

import errno

import pytest

from cryptoapi.pfkey import Comb, Message, MsgType, Proposal, SaType, decode
from cryptoapi.pfkey.db.acquires import ACQUIRE_EXPIRES, ACQUIRE_MAX
from cryptoapi.pfkey.errors import PfkeyError
from tests.pfkey.conftest import DST, SRC, address, getspi, header, only, refused

APP = 1 << 20
"""Where the tests' application sequence numbers start: above the manager's own (1, 2, ...),
which share the table."""


def ask(seq):
    """An application's ACQUIRE (§3.1.6) with ``sadb_msg_seq`` ``seq``."""
    exts = (address(5, SRC), address(6, DST), Proposal(0, (Comb(5, 12),)))
    return Message(MsgType.ACQUIRE, SaType.ESP, seq, 7, 0, exts).encode()


def pending(km):
    return km.stats()["acquires"]


@pytest.fixture
def listened(km):
    """The key manager with a key manager registered for ESP."""
    km.handle(header(MsgType.REGISTER, SaType.ESP))
    return km


def test_an_application_acquire_expires_after_xfrm_acq_expires(listened, clock):
    km = listened
    assert only(km, ask(51)).seq == 51  # forwarded to the listeners
    clock.advance(ACQUIRE_EXPIRES - 0.5)
    assert pending(km) == 1
    clock.advance(0.5)
    assert pending(km) == 0
    getspi(km, seq=51)  # a key manager answering late is not refused: nothing to consume
    assert pending(km) == 0


def test_a_kernel_acquire_expires_too(listened, clock):
    km = listened
    (request,) = km.acquire(SaType.ESP, SRC, DST)
    assert pending(km) == 1
    clock.advance(ACQUIRE_EXPIRES)
    assert pending(km) == 0
    cancel = Message(MsgType.ACQUIRE, SaType.ESP, decode(request).seq, 0, errno.ENOENT)
    assert km.handle(cancel.encode()) == []  # a late cancel finds nothing, says nothing


def test_a_full_table_refuses_the_newest_with_eagain_and_keeps_the_others(listened, clock):
    km = listened
    for seq in range(APP, APP + ACQUIRE_MAX):
        km.handle(ask(seq))
        clock.advance(0.001)
    assert pending(km) == ACQUIRE_MAX
    refused(km, ask(APP + ACQUIRE_MAX), errno.EAGAIN)
    with pytest.raises(PfkeyError) as caught:
        km.acquire(SaType.ESP, SRC, DST)
    assert caught.value.errno == errno.EAGAIN
    assert (pending(km), km.stats()["acquires_refused"]) == (ACQUIRE_MAX, 2)
    getspi(km, seq=APP)  # the oldest is answered: room for one
    assert only(km, ask(APP + ACQUIRE_MAX)).errno == 0
    refused(km, ask(APP + ACQUIRE_MAX + 1), errno.EAGAIN)
    clock.advance(ACQUIRE_EXPIRES - 0.001 * ACQUIRE_MAX / 2)  # the older half has expired
    assert ACQUIRE_MAX // 2 - 2 <= pending(km) <= ACQUIRE_MAX // 2 + 2
    assert only(km, ask(APP + ACQUIRE_MAX + 1)).errno == 0


def test_a_repeated_seq_starts_its_time_again(listened, clock):
    km = listened
    km.handle(ask(7))
    clock.advance(20)
    km.handle(ask(7))
    assert pending(km) == 1
    clock.advance(ACQUIRE_EXPIRES - 1)
    assert pending(km) == 1
    clock.advance(1)
    assert pending(km) == 0


def test_a_flood_of_requests_holds_the_table_to_its_bound(listened, clock):
    # the audit's case: requests pile up faster than they expire, then the listener leaves
    km = listened
    answers = {0: 0, errno.EAGAIN: 0}
    for seq in range(APP, APP + 4 * ACQUIRE_MAX):
        answers[only(km, ask(seq)).errno] += 1
        clock.advance(0.01)  # 100 a second: three times what the bound sustains
        assert len(km.acquires) <= ACQUIRE_MAX
    assert answers[errno.EAGAIN] > ACQUIRE_MAX  # the bound was reached, and held
    km.registered.clear()
    clock.advance(ACQUIRE_EXPIRES)
    assert pending(km) == 0
