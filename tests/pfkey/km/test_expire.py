"""Lifetimes (RFC 2367 §2.3.2, §3.1.8): soft then hard EXPIRE, from each kind of limit."""

import errno

import pytest

from cryptoapi.pfkey import ExtType, Key, Lifetime, MsgType, PfkeyError, Sa, SaState, SaType, decode
from tests.pfkey.conftest import DST, getspi, header, lookup_message, only, sa_message


@pytest.fixture
def listening(km):
    only(km, header(MsgType.REGISTER, SaType.ESP))
    return km


def expires(messages):
    out = []
    for data in messages:
        m = decode(data)
        assert m.type == MsgType.EXPIRE and m.errno == 0
        assert m.get(ExtType.KEY_AUTH, Key) is None and m.get(ExtType.KEY_ENCRYPT, Key) is None
        which = "soft" if m.get(ExtType.LIFETIME_SOFT, Lifetime) else "hard"
        assert m.get(ExtType.LIFETIME_CURRENT, Lifetime) is not None
        out.append((which, m.get(ExtType.SA, Sa).spi))
    return out


def test_add_time_limits_give_soft_then_hard(listening, clock):
    km = listening
    km.handle(sa_message(0x100, soft=(0, 0, 60, 0), hard=(0, 0, 100, 0)))
    clock.advance(59)
    assert km.tick() == []
    clock.advance(1)
    assert expires(km.tick()) == [("soft", 0x100)]
    assert km.sad.get(SaType.ESP, DST, 0x100).state == SaState.DYING
    assert km.tick() == []  # soft fires once
    clock.advance(40)
    assert expires(km.tick()) == [("hard", 0x100)]
    assert len(km.sad) == 0
    assert km.stats()["expired_soft"] == km.stats()["expired_hard"] == 1


def test_both_limits_passed_at_once_come_soft_first(listening, clock):
    km = listening
    km.handle(sa_message(0x100, soft=(0, 0, 10, 0), hard=(0, 0, 20, 0)))
    km.handle(sa_message(0x101, soft=(0, 0, 5, 0), hard=(0, 0, 15, 0)))
    clock.advance(1000)
    assert expires(km.tick()) == [
        ("soft", 0x101),
        ("soft", 0x100),
        ("hard", 0x101),
        ("hard", 0x100),
    ]


def test_expires_follow_the_reply_of_the_message_handled_when_they_came_due(listening, clock):
    km = listening
    km.handle(sa_message(0x100, soft=(0, 0, 10, 0), hard=(0, 0, 20, 0)))
    clock.advance(15)
    out = km.handle(sa_message(0x200, seq=9))
    assert decode(out[0]).type == MsgType.ADD and decode(out[0]).seq == 9
    assert expires(out[1:]) == [("soft", 0x100)]
    clock.advance(10)
    reply, *rest = km.handle(lookup_message(MsgType.GET, 0x100))
    assert decode(reply).errno == errno.ESRCH  # the hard limit removed it first
    assert expires(rest) == [("hard", 0x100)]


def test_byte_and_allocation_limits(listening):
    km = listening
    km.handle(sa_message(0x100, soft=(0, 1000, 0, 0), hard=(0, 2000, 0, 0)))
    km.handle(sa_message(0x101, soft=(3, 0, 0, 0), hard=(5, 0, 0, 0)))
    assert km.account(SaType.ESP, DST, 0x100, nbytes=999) == []
    assert expires(km.account(SaType.ESP, DST, 0x100, nbytes=1)) == [("soft", 0x100)]
    assert expires(km.account(SaType.ESP, DST, 0x100, nbytes=5000)) == [("hard", 0x100)]
    assert expires(km.account(SaType.ESP, DST, 0x101, allocations=10)) == [
        ("soft", 0x101),
        ("hard", 0x101),
    ]
    with pytest.raises(PfkeyError) as gone:
        km.account(SaType.ESP, DST, 0x101, nbytes=1)
    assert gone.value.errno == errno.ESRCH


def test_use_time_counts_from_the_first_use(listening, clock):
    km = listening
    km.handle(sa_message(0x100, soft=(0, 0, 0, 30), hard=(0, 0, 0, 60)))
    clock.advance(1000)
    assert km.tick() == []  # never used: no use-time limit runs
    km.account(SaType.ESP, DST, 0x100, nbytes=1)
    clock.advance(30)
    assert expires(km.tick()) == [("soft", 0x100)]
    km.account(SaType.ESP, DST, 0x100, nbytes=1)  # later uses do not restart it
    clock.advance(30)
    assert expires(km.tick()) == [("hard", 0x100)]


def test_current_lifetime_reports_use(listening, clock):
    km = listening
    km.handle(sa_message(0x100))
    added = int(clock())
    clock.advance(5)
    km.account(SaType.ESP, DST, 0x100, nbytes=1500, allocations=2)
    got = only(km, lookup_message(MsgType.GET, 0x100))
    assert got.get(ExtType.LIFETIME_CURRENT, Lifetime) == Lifetime(
        ExtType.LIFETIME_CURRENT, 2, 1500, added, added + 5
    )


def test_without_listeners_limits_still_apply_but_nothing_is_sent(km, clock):
    km.handle(sa_message(0x100, soft=(0, 0, 10, 0), hard=(0, 0, 20, 0)))
    clock.advance(30)
    assert km.tick() == []
    assert len(km.sad) == 0
    assert km.stats()["expired_hard"] == 1


def test_update_and_delete_cancel_the_old_timers(listening, clock):
    km = listening
    km.handle(sa_message(0x100, hard=(0, 0, 10, 0)))
    update = sa_message(0x100, type=MsgType.UPDATE, hard=(0, 0, 100, 0))
    assert only(km, update).errno == 0
    clock.advance(50)
    assert km.tick() == []
    clock.advance(50)
    assert expires(km.tick()) == [("hard", 0x100)]

    km.handle(sa_message(0x200, hard=(0, 0, 10, 0)))
    km.handle(lookup_message(MsgType.DELETE, 0x200))
    km.handle(sa_message(0x200))  # same key, no lifetime
    clock.advance(20)
    assert km.tick() == []
    assert km.sad.get(SaType.ESP, DST, 0x200) is not None


def test_larval_sas_time_out_silently(listening, clock):
    km = listening
    spi = getspi(km).get(ExtType.SA, Sa).spi
    clock.advance(29)
    assert km.tick() == [] and km.stats()["larval"] == 1
    clock.advance(1)
    assert km.tick() == []
    assert km.sad.get(SaType.ESP, DST, spi) is None
    # one completed in time stays
    spi = getspi(km).get(ExtType.SA, Sa).spi
    km.handle(sa_message(spi, type=MsgType.UPDATE))
    clock.advance(100)
    km.tick()
    assert km.sad.get(SaType.ESP, DST, spi).state == SaState.MATURE


def _reported(spi, *, which, nbytes=0, allocations=0):
    """The EXPIRE a data path in another process sends when an SA reaches a limit."""
    from cryptoapi.pfkey import Message
    from tests.pfkey.conftest import SRC, address

    limit = ExtType.LIFETIME_HARD if which == "hard" else ExtType.LIFETIME_SOFT
    exts = (
        Sa(spi),
        Lifetime(ExtType.LIFETIME_CURRENT, allocations, nbytes, 0, 0),
        Lifetime(limit, allocations, nbytes, 0, 0),
        address(5, SRC),
        address(6, DST),
    )
    return Message(MsgType.EXPIRE, SaType.ESP, 0, 4343, 0, exts).encode()


def test_a_data_path_elsewhere_reports_soft_then_hard_limits(listening):
    """keyd's SAs, espd's packets: an EXPIRE from a client records the usage, makes the SA
    DYING (once) or deletes it, and goes on to the listeners."""
    km = listening
    km.handle(sa_message(0x100, soft=(100, 0, 0, 0), hard=(200, 0, 0, 0)))
    assert expires(km.handle(_reported(0x100, which="soft", allocations=100))) == [("soft", 0x100)]
    sa = km.sad.get(SaType.ESP, DST, 0x100)
    assert (sa.state, sa.allocations) == (SaState.DYING, 100)
    assert km.handle(_reported(0x100, which="soft", allocations=150)) == []  # once
    assert sa.allocations == 150
    assert expires(km.handle(_reported(0x100, which="hard", allocations=200))) == [("hard", 0x100)]
    assert len(km.sad) == 0
    (gone,) = km.handle(_reported(0x100, which="hard", allocations=201))
    assert decode(gone).errno == errno.ESRCH  # its own timer or another report came first
