"""GETSPI, UPDATE, DELETE, FLUSH and DUMP (RFC 2367 §3.1.1-2, §3.1.4, §3.1.9-10)."""

import errno

from cryptoapi.pfkey import (
    ExtType,
    Key,
    Lifetime,
    Message,
    MsgType,
    Sa,
    Sa2,
    SaState,
    SaType,
    decode,
)
from tests.pfkey.conftest import (
    AUTH_KEY,
    DST,
    ENC_KEY,
    SRC,
    address,
    dump_seqs,
    getspi,
    getspi_message,
    header,
    lookup_message,
    only,
    refused,
    sa_message,
)

# -- GETSPI and UPDATE -----------------------------------------------------------------


def test_getspi_creates_a_larval_sa_with_an_spi_in_range(km):
    reply = getspi(km)
    sa = reply.get(ExtType.SA, Sa)
    assert (reply.type, reply.errno, reply.seq) == (MsgType.GETSPI, 0, 5)
    assert 0x100 <= sa.spi <= 0x0FFFFFFF and sa.state == SaState.LARVAL
    assert km.sad.get(SaType.ESP, DST, sa.spi).state == SaState.LARVAL
    assert km.stats()["larval"] == 1
    inside = getspi(km, 0x5000, 0x5003).get(ExtType.SA, Sa).spi
    assert 0x5000 <= inside <= 0x5003


def test_getspi_never_repeats_an_spi_and_says_eexist_when_the_range_is_full(km):
    spis = {getspi(km, 0x700, 0x73F).get(ExtType.SA, Sa).spi for _ in range(64)}
    assert spis == set(range(0x700, 0x740))
    refused(km, getspi_message(0x700, 0x73F), errno.EEXIST)
    assert getspi(km, 0x700, 0x740).get(ExtType.SA, Sa).spi == 0x740
    assert getspi(km, 0x700, 0x73F, dst="10.1.1.1").errno == 0  # per destination


def test_getspi_refusals(km):
    refused(km, getspi_message(0x200, 0x100), errno.EINVAL)
    refused(km, getspi_message(0, 0), errno.EINVAL)  # SPI 0 is reserved
    tunnel9 = (address(5, SRC), address(6, DST), Sa2(9, 0))
    refused(km, Message(MsgType.GETSPI, SaType.ESP, extensions=tunnel9).encode(), errno.EINVAL)
    refused(
        km,
        Message(MsgType.GETSPI, SaType.ESP, extensions=(address(6, DST),)).encode(),
        errno.EINVAL,
    )
    refused(
        km,
        Message(MsgType.GETSPI, 9, extensions=(address(5, SRC), address(6, DST))).encode(),
        errno.EINVAL,
    )


def test_update_makes_a_larval_sa_mature(km):
    spi = getspi(km).get(ExtType.SA, Sa).spi
    reply = only(km, sa_message(spi, type=MsgType.UPDATE, seq=6))
    assert (reply.type, reply.errno, reply.seq) == (MsgType.UPDATE, 0, 6)
    assert reply.get(ExtType.SA, Sa).state == SaState.MATURE
    assert reply.get(ExtType.KEY_AUTH, Key) is None
    sa = km.sad.get(SaType.ESP, DST, spi)
    assert (sa.state, sa.auth_key, sa.seq) == (SaState.MATURE, AUTH_KEY, 5)


def test_update_refusals(km):
    refused(km, sa_message(0x999, type=MsgType.UPDATE), errno.ESRCH)
    spi = getspi(km).get(ExtType.SA, Sa).spi
    refused(km, sa_message(spi, type=MsgType.UPDATE, src="10.7.7.7"), errno.EINVAL)
    refused(km, sa_message(spi, type=MsgType.UPDATE, auth_key=bytes(3)), errno.EINVAL)
    km.handle(sa_message(0x1234))
    refused(km, sa_message(0x1234, type=MsgType.UPDATE, auth_key=bytes(32)), errno.EINVAL)
    refused(km, sa_message(0x1234, type=MsgType.UPDATE, auth=3, auth_key=bytes(20)), errno.EINVAL)


def test_update_of_a_mature_sa_changes_only_its_lifetimes(km):
    km.handle(sa_message(0x1234))
    hard = (0, 0, 600, 0)
    same_keys = sa_message(0x1234, type=MsgType.UPDATE, hard=hard, soft=(0, 0, 500, 0))
    assert only(km, same_keys).errno == 0
    no_keys = sa_message(0x1234, type=MsgType.UPDATE, auth_key=None, enc_key=None, hard=hard)
    assert only(km, no_keys).errno == 0
    sa = km.sad.get(SaType.ESP, DST, 0x1234)
    assert sa.hard == Lifetime(ExtType.LIFETIME_HARD, 0, 0, 600, 0)
    assert sa.soft == Lifetime(ExtType.LIFETIME_SOFT, 0, 0, 500, 0)
    assert (sa.auth_key, sa.encrypt_key, sa.state) == (AUTH_KEY, ENC_KEY, SaState.MATURE)


# -- DELETE, FLUSH, DUMP ---------------------------------------------------------------


def test_delete(km):
    km.handle(sa_message(0x100))
    reply = only(km, lookup_message(MsgType.DELETE, 0x100, seq=8))
    assert (reply.type, reply.errno, reply.seq) == (MsgType.DELETE, 0, 8)
    assert reply.get(ExtType.SA, Sa).spi == 0x100
    assert len(km.sad) == 0
    refused(km, lookup_message(MsgType.DELETE, 0x100), errno.ESRCH)
    refused(km, lookup_message(MsgType.GET, 0x100), errno.ESRCH)
    refused(
        km,
        Message(MsgType.DELETE, 3, extensions=(address(5, SRC), address(6, DST))).encode(),
        errno.EINVAL,
    )


def fill(km):
    for spi in range(0x100, 0x105):
        km.handle(sa_message(spi))
    for spi in range(0x200, 0x203):
        km.handle(sa_message(spi, satype=SaType.AH, encrypt=0, enc_key=None))


def test_flush_by_type_and_all(km):
    fill(km)
    reply = only(km, header(MsgType.FLUSH, SaType.AH, seq=12))
    assert (reply.type, reply.errno, reply.seq, reply.satype) == (MsgType.FLUSH, 0, 12, SaType.AH)
    assert len(km.sad) == 5
    refused(km, header(MsgType.FLUSH, SaType.RSVP), errno.EINVAL)
    assert only(km, header(MsgType.FLUSH, SaType.UNSPEC)).errno == 0
    assert len(km.sad) == 0


def test_dump_lists_newest_first_numbered_up_and_zero_last(km):
    """Linux pfkey_dump_sa: xfrm_state_walk from the head of state_all, where
    __xfrm_state_insert puts each new state; dump_sa numbers count + 1, pfkey_do_dump
    sends the last with 0."""
    fill(km)
    dumped = [decode(r) for r in km.handle(header(MsgType.DUMP, SaType.UNSPEC, seq=1, pid=31))]
    assert [m.seq for m in dumped] == dump_seqs(8) == [1, 2, 3, 4, 5, 6, 7, 0]
    assert all(m.type == MsgType.DUMP and m.pid == 31 and m.errno == 0 for m in dumped)
    assert [m.get(ExtType.SA, Sa).spi for m in dumped] == [
        *range(0x202, 0x1FF, -1),
        *range(0x104, 0xFF, -1),
    ]
    assert all(m.get(ExtType.KEY_AUTH, Key) is not None for m in dumped)
    ah = [decode(r) for r in km.handle(header(MsgType.DUMP, SaType.AH))]
    assert [m.seq for m in ah] == [1, 2, 0] and {m.satype for m in ah} == {SaType.AH}


def test_dump_of_nothing_is_enoent(km):
    refused(km, header(MsgType.DUMP, SaType.UNSPEC), errno.ENOENT)
    km.handle(sa_message(0x100))
    refused(km, header(MsgType.DUMP, SaType.AH), errno.ENOENT)
    refused(km, header(MsgType.DUMP, 7), errno.EINVAL)
