"""IPv4 and IPv6 headers as the ESP data path reads and writes them (RFC 791, RFC 8200).

Only plain headers are handled: an IPv4 header with options (IHL above 5) or an IPv6 header
followed by an extension header is refused by :func:`flow` (the data path drops and counts
such packets; documented in :mod:`cryptoapi.esp`). Fragments are passed with ports 0 (as
Linux's flow for a non-first fragment).

Checksums use the ones' complement sum of RFC 1071 computed as ``value % 0xffff`` of the
bytes read as one big-endian integer (2^16 = 1 modulo 0xffff), which CPython does in C.
"""

import socket
import struct
from typing import NamedTuple

AF_INET = socket.AF_INET
AF_INET6 = socket.AF_INET6
IPPROTO_IPIP = 4
IPPROTO_IPV6 = 41
IPPROTO_ESP = 50
IPPROTO_TCP = 6
IPPROTO_UDP = 17
IPPROTO_NONE = 59  # RFC 8200 §4.7: a dummy packet (RFC 4303 §2.6 TFC) carries this
IPV4_HEADER = 20
IPV6_HEADER = 40
UDP_HEADER = 8
TCP_HEADER = 20  # without options (RFC 9293 §3.1)
TCP_FIN = 0x01
TCP_PSH = 0x08
TCP_ACK = 0x10
TCP_CWR = 0x80
DF = 0x4000
OFFSET_MASK = 0x1FFF
ECN_MASK = 0x03
ECN_CE = 0x03
ECN_NOT_ECT = 0x00

# Upper-layer protocols whose first four bytes are the source and destination ports, and
# the ICMPs, whose type and code stand in for them (as in Linux's flowi).
_PORTED = frozenset((6, 17, 33, 132, 136))
_ICMP = frozenset((1, 58))

_V4 = struct.Struct(">BBHHHBBH4s4s")
_V4_PORTS = struct.Struct(">BBHHHBBH4s4sHH")
_V6 = struct.Struct(">IHBB16s16s")
_PORTS = struct.Struct(">HH")
_UDP = struct.Struct(">HHHH")


class Flow(NamedTuple):
    """What policy selectors look at in a packet, and where its payload starts."""

    family: int
    src: bytes  # packed address
    dst: bytes
    proto: int  # upper-layer protocol (next header)
    sport: int  # 0 when the protocol has no ports or the packet is a non-first fragment
    dport: int
    header: int  # bytes of IP header (20 or 40)
    tos: int  # IPv4 TOS or IPv6 traffic class (DSCP << 2 | ECN)
    ttl: int  # TTL or hop limit
    df: bool  # IPv4 don't-fragment (IPv6 never fragments in transit: True)


_new_flow = tuple.__new__  # a Flow without NamedTuple's Python-level __new__ (per packet)


def flow(packet: bytes) -> Flow | None:
    """The flow of a complete IP packet, or None if it is not a plain, whole IP packet."""
    size = len(packet)
    if size >= IPV4_HEADER + 4 and packet[0] == 0x45:
        _, tos, total, _, frag, ttl, proto, _, src, dst, sport, dport = _V4_PORTS.unpack_from(
            packet
        )  # the ports are read with the header, then kept only where they are ports
        if total != size:
            return None  # a length that disagrees with what arrived
        if frag & OFFSET_MASK or proto not in _PORTED:
            sport, dport = _ports(packet, IPV4_HEADER, proto) if not frag & OFFSET_MASK else (0, 0)
        fields = (AF_INET, src, dst, proto, sport, dport, IPV4_HEADER, tos, ttl, bool(frag & DF))
        return _new_flow(Flow, fields)
    if size >= IPV4_HEADER and packet[0] == 0x45:  # too short for ports
        _, tos, total, _, frag, ttl, proto, _, src, dst = _V4.unpack_from(packet)
        if total != size:
            return None
        fields = (AF_INET, src, dst, proto, 0, 0, IPV4_HEADER, tos, ttl, bool(frag & DF))
        return _new_flow(Flow, fields)
    if size >= IPV6_HEADER and packet[0] >> 4 == 6:
        return _flow6(packet)
    return None  # not IP, truncated, or IPv4 with options (IHL above 5)


Part = tuple[int, int, bytes]
"""(start, end, bytes) of one part of a header."""


def flow_parts(packet: bytes) -> tuple[Part, Part, Part, int, int]:
    """The header of ``packet``, a whole IP packet :func:`flow` read, in three parts but for
    its length, IPv4 identification and checksums: IPv4's version and TOS; flags, fragment
    offset, TTL and protocol; addresses and ports. IPv6's first word; next header and hop
    limit; addresses and ports. Then where the stated length is, and what it leaves out
    (IPv6's fixed header). A packet with these bytes in these places and a stated length
    that is its own has the same flow, header fields and all, as each segment of one TSO
    super-segment has: a run of them is found by comparing bytes, with no parse each."""
    if packet[0] == 0x45:
        spans, length_at, extra = ((0, 2), (6, 10), (12, IPV4_HEADER + 4)), 2, 0
    else:
        spans, length_at, extra = ((0, 4), (6, 8), (8, IPV6_HEADER + 4)), 4, IPV6_HEADER
    (a, b), (c, d), (e, f) = spans
    return (a, b, packet[a:b]), (c, d, packet[c:d]), (e, f, packet[e:f]), length_at, extra


def _flow6(packet: bytes) -> Flow | None:
    first, length, proto, hops, src, dst = _V6.unpack_from(packet)
    if length != len(packet) - IPV6_HEADER or proto in EXTENSION_HEADERS:
        return None
    sport = dport = 0
    if length >= 4:
        sport, dport = _ports(packet, IPV6_HEADER, proto)
    tclass = (first >> 20) & 0xFF
    return _new_flow(
        Flow, (AF_INET6, src, dst, proto, sport, dport, IPV6_HEADER, tclass, hops, True)
    )


EXTENSION_HEADERS = frozenset((0, 43, 44, 60, 135, 139, 140, 253, 254))
"""IPv6 next-header values that are extension headers (RFC 8200 §4, IANA): a packet with one
is not handled. ESP and AH (50, 51) are read as the upper-layer protocol, as selectors do."""


def _ports(packet: bytes, offset: int, proto: int) -> tuple[int, int]:
    if proto in _PORTED:
        sport, dport = _PORTS.unpack_from(packet, offset)
        return sport, dport
    if proto in _ICMP:
        return packet[offset], packet[offset + 1]
    return 0, 0


def checksum(data: bytes, initial: int = 0) -> int:
    """The Internet checksum of ``data`` (RFC 1071), for a header whose checksum field is 0;
    ``initial`` is a sum of 16-bit words the checksum covers too (a pseudo-header's)."""
    if len(data) & 1:
        data += b"\0"
    value = int.from_bytes(data, "big") + initial
    total = value % 0xFFFF
    if total == 0 and value:
        total = 0xFFFF  # the ones' complement sum of nonzero words is never +0
    return 0xFFFF - total


def pseudo_header_sum(packet: bytes | bytearray, proto: int, length: int) -> int:
    """The sum of the pseudo-header words for ``packet``'s upper-layer ``proto`` of
    ``length`` bytes: addresses, protocol and length (RFC 793 §3.1, RFC 768; RFC 8200 §8.1,
    whose 32-bit fields sum to the same 16-bit words)."""
    addresses = packet[12:20] if packet[0] >> 4 == 4 else packet[8:40]
    return int.from_bytes(addresses, "big") + proto + length


def with_ipv4_checksum(head: bytearray) -> bytearray:
    """``head``, which starts with an IPv4 header, with that header's checksum redone
    (RFC 791: over the IHL words of the header only)."""
    head[10:12] = b"\0\0"
    head[10:12] = checksum(bytes(head[: (head[0] & 0x0F) * 4])).to_bytes(2, "big")
    return head


def ipv4_header(
    src: bytes, dst: bytes, proto: int, payload: int, *, tos: int, ttl: int, df: bool, ident: int
) -> bytes:
    """A 20-byte IPv4 header (no options) with its checksum, for ``payload`` bytes."""
    return ipv4_header_summed(
        address_sum(src, dst), src, dst, proto, payload, tos=tos, ttl=ttl, df=df, ident=ident
    )


def address_sum(src: bytes, dst: bytes) -> int:
    """The part of an IPv4 header checksum the addresses contribute (constant per SA)."""
    return int.from_bytes(src + dst, "big") % 0xFFFF


def ipv4_header_summed(
    addresses: int,
    src: bytes,
    dst: bytes,
    proto: int,
    payload: int,
    *,
    tos: int,
    ttl: int,
    df: bool,
    ident: int,
) -> bytes:
    """:func:`ipv4_header` with the addresses' part of the checksum given (RFC 1624's
    incremental form: a sum of 16-bit words is a sum of partial sums)."""
    total = IPV4_HEADER + payload
    ident &= 0xFFFF
    flags = DF if df else 0
    words = addresses + (0x4500 | tos) + total + ident + flags + (ttl << 8 | proto)
    words = (words & 0xFFFF) + (words >> 16)
    words = (words & 0xFFFF) + (words >> 16)
    return _V4.pack(0x45, tos, total, ident, flags, ttl, proto, 0xFFFF - words, src, dst)


def ipv6_header(
    src: bytes, dst: bytes, proto: int, payload: int, *, tclass: int, hops: int
) -> bytes:
    """A 40-byte IPv6 header (flow label 0) for ``payload`` bytes."""
    return _V6.pack(0x60000000 | tclass << 20, payload, proto, hops, src, dst)


def udp_header(
    family: int,
    src: bytes,
    dst: bytes,
    *,
    sport: int,
    dport: int,
    payload: bytes,
    ipv4_checksum: bool = False,
) -> bytes:
    """A UDP header for ``payload``: checksum 0 over IPv4 (RFC 3948 §2.1 allows it for
    ESP in UDP) unless ``ipv4_checksum``, the real one over IPv6, where zero is not
    allowed (RFC 8200 §8.1); a computed 0 is sent as 0xffff (RFC 768)."""
    length = UDP_HEADER + len(payload)
    if family == AF_INET:
        if not ipv4_checksum:
            return _UDP.pack(sport, dport, length, 0)
        pseudo = src + dst + b"\0\x11" + length.to_bytes(2, "big")
    else:
        pseudo = src + dst + length.to_bytes(4, "big") + b"\0\0\0\x11"
    total = checksum(pseudo + _UDP.pack(sport, dport, length, 0) + payload)
    return _UDP.pack(sport, dport, length, total or 0xFFFF)


def udp_length(packet: bytes, header: int) -> int:
    """The length field of the UDP header at ``header`` (RFC 768)."""
    return int.from_bytes(packet[header + 4 : header + 6], "big")


def with_protocol(packet: bytes, header: int, proto: int, payload: bytes) -> bytes:
    """``packet``'s own IP header, carrying ``payload`` as protocol ``proto`` now (lengths
    and the IPv4 checksum redone): transport mode's header, on output and on input."""
    if header == IPV4_HEADER:
        head = bytearray(packet[:IPV4_HEADER])
        head[2:4] = (IPV4_HEADER + len(payload)).to_bytes(2, "big")
        head[9] = proto
        return bytes(with_ipv4_checksum(head)) + payload
    head = bytearray(packet[:IPV6_HEADER])
    head[4:6] = len(payload).to_bytes(2, "big")
    head[6] = proto
    return bytes(head) + payload


def with_ecn(packet: bytes, ecn: int) -> bytes:
    """``packet`` with its ECN field set to ``ecn`` (IPv4 checksum redone)."""
    if packet[0] >> 4 == 4:
        head = bytearray(packet[:IPV4_HEADER])
        head[1] = (head[1] & ~ECN_MASK) | ecn
        return bytes(with_ipv4_checksum(head)) + packet[IPV4_HEADER:]
    first = int.from_bytes(packet[:4], "big")
    first = (first & ~(ECN_MASK << 20)) | ecn << 20
    return first.to_bytes(4, "big") + packet[4:]
