"""Round trips: every message type and every extension encode and decode back, exactly."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cryptoapi.pfkey import (
    Address,
    AlgDesc,
    Comb,
    ExtType,
    Filter,
    Identity,
    IpsecRequest,
    Key,
    KmAddress,
    KmPrivate,
    Lifetime,
    Message,
    MsgType,
    NatTPort,
    NatTType,
    PfkeyError,
    Policy,
    Proposal,
    Sa,
    Sa2,
    SecCtx,
    Sensitivity,
    SockAddr,
    SpiRange,
    Supported,
    decode,
)
from tests.pfkey.strategies import EXTENSIONS, message

V4 = SockAddr.of("192.0.2.1", 500)
V6 = SockAddr.of("2001:db8::2", 4500)
EVERY = (
    Sa(0xC0FFEE, 32, 1, 5, 12, 1),
    Lifetime(ExtType.LIFETIME_CURRENT, 1, 2, 3, 4),
    Lifetime(ExtType.LIFETIME_HARD, 5, 6, 7, 8),
    Lifetime(ExtType.LIFETIME_SOFT, 9, 10, 11, 12),
    Address(ExtType.ADDRESS_SRC, V4, 6, 32),
    Address(ExtType.ADDRESS_DST, V4, 17, 24),
    Address(ExtType.ADDRESS_PROXY, V6, 0, 64),
    Key(ExtType.KEY_AUTH, 256, bytes(32)),
    Key(ExtType.KEY_ENCRYPT, 288, bytes(range(36))),
    Identity(ExtType.IDENTITY_SRC, 2, 1, b"gw.example"),
    Identity(ExtType.IDENTITY_DST, 3, 2, b"ops@example.org"),
    Sensitivity(1, 2, 3, (4,), (5, 6)),
    Proposal(64, (Comb(5, 12, 0, 256, 256, 128, 256), Comb(0, 20, 0, 0, 0, 160, 288))),
    Supported(ExtType.SUPPORTED_AUTH, (AlgDesc(5, 0, 256, 256),)),
    Supported(ExtType.SUPPORTED_ENCRYPT, (AlgDesc(12, 16, 128, 256), AlgDesc(20, 8, 160, 288))),
    SpiRange(0x100, 0xFFFF),
    KmPrivate(b"private!"),
    Policy(2, 2, 7, 100, (IpsecRequest(50, 2, 2, 1, (V4, V4)), IpsecRequest(51))),
    Sa2(2, 42, 0),
    NatTType(2),
    NatTPort(ExtType.X_NAT_T_SPORT, 4500),
    NatTPort(ExtType.X_NAT_T_DPORT, 4501),
    Address(ExtType.X_NAT_T_OA, V6, 0, 128),
    SecCtx(1, 1, b"system_u:object_r:ipsec_spd_t:s0"),
    KmAddress(V6, V6),
    Filter(2, V4.addr.ljust(16, b"\0"), V4.addr.ljust(16, b"\0"), 24, 32),
)


@pytest.mark.parametrize("msgtype", list(MsgType)[1:])
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_every_message_type_round_trips(msgtype, data):
    m = data.draw(message(types=st.just(int(msgtype))))
    wire = m.encode()
    assert len(wire) % 8 == 0
    assert wire[4:6] == (len(wire) // 8).to_bytes(2, "little")
    back = decode(wire)
    assert back == m
    assert back.encode() == wire


@pytest.mark.parametrize("exttype", sorted(EXTENSIONS))
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_every_extension_round_trips(exttype, data):
    ext = data.draw(EXTENSIONS[exttype])
    m = Message(MsgType.DUMP, 3, 1, 2, 0, (ext,))
    wire = m.encode()
    assert int.from_bytes(wire[18:20], "little") == exttype
    assert int.from_bytes(wire[16:18], "little") * 8 == len(wire) - 16
    assert decode(wire) == m


@pytest.mark.parametrize("msgtype", list(MsgType)[1:])
def test_every_message_type_with_every_extension(msgtype):
    assert sorted(e.exttype for e in EVERY) == list(range(1, 27))
    m = Message(msgtype, 3, 0xFFFFFFFF, 0x7FFFFFFF, 0, EVERY)
    wire = m.encode()
    assert decode(wire) == m
    assert decode(wire).encode() == wire


def test_message_get_finds_typed_extensions():
    m = Message(MsgType.GET, extensions=(Key(ExtType.KEY_AUTH, 8, b"k"),))
    assert m.get(ExtType.KEY_AUTH, Key) == Key(ExtType.KEY_AUTH, 8, b"k")
    assert m.get(ExtType.KEY_ENCRYPT, Key) is None
    with pytest.raises(TypeError):
        m.get(ExtType.KEY_AUTH, SockAddr)


def test_reprs_hide_keys():
    secret = bytes.fromhex("00112233445566778899aabbccddeeff")
    key = Key(ExtType.KEY_ENCRYPT, 128, secret)
    for text in (repr(key), repr(Message(MsgType.ADD, extensions=(key,)))):
        assert secret.hex() not in text and repr(secret) not in text
        assert "16 bytes" in text


def test_encode_refuses_what_cannot_be_encoded():
    with pytest.raises(PfkeyError):
        Key(ExtType.KEY_AUTH, 16, b"x").encode()  # 16 bits need 2 bytes
    with pytest.raises(PfkeyError):
        Key(ExtType.SA, 8, b"x").encode()  # not a key extension type
    with pytest.raises(PfkeyError):
        SockAddr(2, bytes(16)).encode()  # an IPv6 address under AF_INET
    with pytest.raises(PfkeyError):
        SockAddr.of("10.0.0.1", 70000)
    with pytest.raises(PfkeyError):
        SockAddr.of("not an address")
