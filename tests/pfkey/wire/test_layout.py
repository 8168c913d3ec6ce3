"""Messages assembled byte by byte from the C layouts (RFC 2367 §2, Linux pfkeyv2.h on
x86-64) decode as expected, and encode back to the same bytes.

Nothing here goes through the codec to build its input: every struct is packed by hand,
host order little-endian, SPI and ports big-endian.
"""

import socket
import struct

import pytest

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
    Policy,
    Proposal,
    Sa,
    Sa2,
    SaType,
    SecCtx,
    Sensitivity,
    SockAddr,
    SpiRange,
    Supported,
    decode,
)
from cryptoapi.pfkey.wire.message import SPECS

V4 = socket.inet_pton(socket.AF_INET, "192.0.2.1")
V4B = socket.inet_pton(socket.AF_INET, "198.51.100.7")
V6 = socket.inet_pton(socket.AF_INET6, "2001:db8::1")


def ext(words, exttype):
    return struct.pack("<HH", words, exttype)


def msg(type_, satype, seq, pid, body):
    return struct.pack("<BBBBHHII", 2, type_, 0, satype, 2 + len(body) // 8, 0, seq, pid) + body


def sockaddr_in(addr, port=0):
    return struct.pack("<H", 2) + struct.pack(">H", port) + addr + bytes(8)


def sockaddr_in6(addr, port=0, flow=0, scope=0):
    return struct.pack("<H", 10) + struct.pack(">HI", port, flow) + addr + struct.pack("<I", scope)


def test_struct_sizes_match_linux():
    sizes = {
        "<BBBBHHII": 16,  # sadb_msg
        "<HH4sBBBBI": 16,  # sadb_sa
        "<HHIQQQ": 32,  # sadb_lifetime
        "<HHBBH": 8,  # sadb_address
        "<HHHH": 8,  # sadb_key
        "<HHHHQ": 16,  # sadb_ident
        "<HHIBBBBI": 16,  # sadb_sens
        "<HHB3x": 8,  # sadb_prop
        "<BBHHHHHIIIQQQQQQ": 72,  # sadb_comb
        "<HHI": 8,  # sadb_supported, sadb_x_kmprivate, sadb_x_kmaddress
        "<BBHHH": 8,  # sadb_alg
        "<HHIII": 16,  # sadb_spirange
        "<HHBBHII": 16,  # sadb_x_sa2, sadb_x_ipsecrequest
        "<HHHBBII": 16,  # sadb_x_policy
        "<HH2sH": 8,  # sadb_x_nat_t_port
        "<HHBBH ": 8,  # sadb_x_sec_ctx (the same layout as sadb_address)
        "<HH16s16sHBB": 40,  # sadb_x_filter
    }
    for fmt, size in sizes.items():
        assert struct.calcsize(fmt) == size, fmt
    minimum = {t: spec[0] for t, spec in SPECS.items()}
    assert minimum[ExtType.SA] == 16 and minimum[ExtType.LIFETIME_SOFT] == 32
    assert minimum[ExtType.ADDRESS_DST] == 8 and minimum[ExtType.IDENTITY_SRC] == 16
    assert minimum[ExtType.X_POLICY] == 16 and minimum[ExtType.X_FILTER] == 40


def test_add_message_from_structs():
    spi = 0x12345678
    body = (
        ext(2, 1) + struct.pack(">I", spi) + struct.pack("<BBBBI", 64, 1, 5, 12, 0x80000000)
        + ext(4, 3) + struct.pack("<IQQQ", 10, 1 << 40, 3600, 600)
        + ext(4, 4) + struct.pack("<IQQQ", 5, 1 << 39, 3000, 500)
        + ext(3, 5) + struct.pack("<BBH", 6, 32, 0) + sockaddr_in(V4, 500)
        + ext(3, 6) + struct.pack("<BBH", 0, 24, 0) + sockaddr_in(V4B)
        + ext(5, 8) + struct.pack("<HH", 256, 0) + b"\xaa" * 32
        + ext(4, 9) + struct.pack("<HH", 160, 0) + b"\xbb" * 20 + bytes(4)
        + ext(2, 19) + struct.pack("<BBHII", 2, 0, 0, 0, 77)
    )  # fmt: skip
    data = msg(3, 3, 9, 1234, body)
    m = decode(data)
    assert (m.type, m.satype, m.seq, m.pid, m.errno) == (MsgType.ADD, SaType.ESP, 9, 1234, 0)
    assert m.extensions == (
        Sa(spi, 64, 1, 5, 12, 0x80000000),
        Lifetime(ExtType.LIFETIME_HARD, 10, 1 << 40, 3600, 600),
        Lifetime(ExtType.LIFETIME_SOFT, 5, 1 << 39, 3000, 500),
        Address(ExtType.ADDRESS_SRC, SockAddr(2, V4, 500), 6, 32),
        Address(ExtType.ADDRESS_DST, SockAddr(2, V4B, 0), 0, 24),
        Key(ExtType.KEY_AUTH, 256, b"\xaa" * 32),
        Key(ExtType.KEY_ENCRYPT, 160, b"\xbb" * 20),
        Sa2(2, 77, 0),
    )
    assert m.get(ExtType.SA, Sa).spi == spi
    assert str(m.get(ExtType.ADDRESS_SRC, Address).addr) == "192.0.2.1:500"
    assert m.encode() == data


def test_ipv6_address_and_nat_t_from_structs():
    body = (
        ext(5, 6) + struct.pack("<BBH", 17, 128, 0) + sockaddr_in6(V6, 4500, 0x12345, 3) + bytes(4)
        + ext(1, 20) + struct.pack("<B3x", 2)
        + ext(1, 21) + struct.pack(">H", 4500) + bytes(2)
        + ext(1, 22) + struct.pack(">H", 65000) + bytes(2)
        + ext(3, 23) + struct.pack("<BBH", 0, 32, 0) + sockaddr_in(V4)
    )  # fmt: skip
    data = msg(MsgType.UPDATE, 3, 1, 2, body)
    m = decode(data)
    assert m.extensions == (
        Address(ExtType.ADDRESS_DST, SockAddr(10, V6, 4500, 0x12345, 3), 17, 128),
        NatTType(2),
        NatTPort(ExtType.X_NAT_T_SPORT, 4500),
        NatTPort(ExtType.X_NAT_T_DPORT, 65000),
        Address(ExtType.X_NAT_T_OA, SockAddr(2, V4), 0, 32),
    )
    assert str(m.extensions[0].addr) == "[2001:db8::1]:4500"
    assert m.encode() == data


def test_register_reply_with_supported_lists_from_structs():
    auth = struct.pack("<BBHHH", 5, 0, 256, 256, 0) + struct.pack("<BBHHH", 2, 0, 128, 128, 0)
    enc = struct.pack("<BBHHH", 12, 16, 128, 256, 0)
    body = ext(3, 14) + bytes(4) + auth + ext(2, 15) + bytes(4) + enc
    data = msg(MsgType.REGISTER, 3, 5, 6, body)
    m = decode(data)
    assert m.extensions == (
        Supported(ExtType.SUPPORTED_AUTH, (AlgDesc(5, 0, 256, 256), AlgDesc(2, 0, 128, 128))),
        Supported(ExtType.SUPPORTED_ENCRYPT, (AlgDesc(12, 16, 128, 256),)),
    )
    assert m.encode() == data


def test_acquire_with_identities_sensitivity_and_proposal_from_structs():
    comb = struct.pack(
        "<BBHHHHHIIIQQQQQQ", 5, 12, 0, 256, 256, 128, 256, 0, 1, 2, 3, 4, 25200, 28800, 5, 6
    )
    body = (
        ext(3, 10) + struct.pack("<HHQ", 2, 0, 99) + b"a.example\0\0\0\0\0\0\0"[:8]
        + ext(4, 11) + struct.pack("<HHQ", 3, 0, 0) + b"me@b.example\0\0\0\0"
        + ext(4, 12) + struct.pack("<IBBBBI", 7, 1, 1, 2, 1, 0) + struct.pack("<QQ", 0xF0, 0x0F)
        + ext(1 + 9 * 2, 13) + struct.pack("<B3x", 32) + comb + comb
    )  # fmt: skip
    data = msg(MsgType.ACQUIRE, 3, 77, 0, body)
    m = decode(data)
    expected_comb = Comb(5, 12, 0, 256, 256, 128, 256, 1, 2, 3, 4, 25200, 28800, 5, 6)
    assert m.extensions == (
        Identity(ExtType.IDENTITY_SRC, 2, 99, b"a.exampl"),
        Identity(ExtType.IDENTITY_DST, 3, 0, b"me@b.example"),
        Sensitivity(7, 1, 2, (0xF0,), (0x0F,)),
        Proposal(32, (expected_comb, expected_comb)),
    )


def test_policy_with_tunnel_request_and_spd_extensions_from_structs():
    request_transport = struct.pack("<HHBBHII", 16, 50, 1, 2, 0, 0, 0)
    tunnel = sockaddr_in(V4) + sockaddr_in(V4B)
    request_tunnel = struct.pack("<HHBBHII", 16 + len(tunnel), 51, 2, 3, 0, 5, 0) + tunnel
    policy_body = struct.pack("<HBBII", 2, 2, 0, 0x40, 1000) + request_transport + request_tunnel
    body = (
        ext((4 + len(policy_body)) // 8, 18) + policy_body
        + ext(2, 16) + struct.pack("<III", 0x100, 0x200, 0)
        + ext(2, 17) + bytes(4) + b"kmdata!!"
        + ext(5, 25) + bytes(4) + sockaddr_in(V4) + sockaddr_in(V4B)
        + ext(5, 26) + struct.pack("<16s16sHBB", V4, V4B, 2, 24, 16)
        + ext(3, 24) + struct.pack("<BBH", 1, 1, 12) + b"system_u:obj"[:12] + bytes(4)
    )  # fmt: skip
    m = decode(msg(MsgType.X_SPDADD, 0, 1, 1, body))
    policy = m.get(ExtType.X_POLICY, Policy)
    assert policy == Policy(
        2,
        2,
        0x40,
        1000,
        (
            IpsecRequest(50, 1, 2, 0, None),
            IpsecRequest(51, 2, 3, 5, (SockAddr(2, V4), SockAddr(2, V4B))),
        ),
    )
    assert m.get(ExtType.SPIRANGE, SpiRange) == SpiRange(0x100, 0x200)
    assert m.get(ExtType.X_KMPRIVATE, KmPrivate) == KmPrivate(b"kmdata!!")
    kmaddress = m.get(ExtType.X_KMADDRESS, KmAddress)
    assert kmaddress == KmAddress(SockAddr(2, V4), SockAddr(2, V4B))
    assert m.get(ExtType.X_FILTER, Filter) == Filter(2, V4 + bytes(12), V4B + bytes(12), 24, 16)
    assert m.get(ExtType.X_SEC_CTX, SecCtx) == SecCtx(1, 1, b"system_u:obj")


def test_spi_and_ports_are_big_endian_and_the_rest_little_endian():
    data = Message(
        MsgType.ADD,
        SaType.ESP,
        0x01020304,
        0x0A0B0C0D,
        extensions=(
            Sa(0x11223344, 1, 1, 2, 3, 0x55667788),
            NatTPort(ExtType.X_NAT_T_SPORT, 0x1194),
        ),
    ).encode()
    assert data[8:16] == bytes.fromhex("040302010d0c0b0a")  # seq, pid: host order
    assert data[16:32] == bytes.fromhex("0200 0100 11223344 01 01 02 03 88776655".replace(" ", ""))
    assert data[32:40] == bytes.fromhex("0100 1500 1194 0000".replace(" ", ""))


@pytest.mark.parametrize(
    ("field", "raw", "expected"),
    [
        (
            "key bits not a whole byte",
            (2, 8, 12, 0, b"\x0f\xf0" + bytes(6)),
            Key(8, 12, b"\x0f\xf0"),
        ),
        ("key padded with more words", (4, 9, 64, 0, b"k" * 8 + bytes(16)), Key(9, 64, b"k" * 8)),
    ],
)
def test_key_material_is_exactly_the_announced_bits(field, raw, expected):
    words, exttype, bits, reserved, payload = raw
    body = struct.pack("<HHHH", words, exttype, bits, reserved) + payload
    assert decode(msg(MsgType.GET, 3, 0, 0, body)).extensions == (expected,)


def test_unknown_extension_types_above_the_known_range_are_skipped():
    body = ext(2, 27) + b"\xff" * 12 + ext(2, 1) + struct.pack(">I", 7) + bytes(8)
    body += ext(1, 0xFFFF) + bytes(4)
    m = decode(msg(MsgType.GET, 3, 0, 0, body))
    assert m.extensions == (Sa(7, 0, 0, 0, 0, 0),)
