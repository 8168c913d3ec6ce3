"""Outer IP (and UDP) headers rebuilt around an ESP payload, for the packet capture only.

A socket builds the outer header of what espd sends, and takes it off what it receives
(UDP always, raw IPv6 too), so the capture (:mod:`.pcap`) would otherwise hold bare ESP.
:func:`outer_packet` puts back a header with the addresses and ports the socket reported:
IPv4 (RFC 791: no options, identification 0, DF clear, TTL 64) or IPv6 (RFC 8200: traffic
class and flow label 0, hop limit 64), then UDP (RFC 768, RFC 3948 §2.1) or protocol 50
(RFC 4303). Checksums are computed (RFC 1071), so Wireshark shows them as good. The header
is a faithful reconstruction of what was sent, not a copy of the wire bytes: TTL, DSCP and
the IPv4 identification may differ from what the kernel put on the link.
"""

import struct

IPPROTO_UDP = 17
IPPROTO_ESP = 50
TTL = 64

_IPV4 = struct.Struct(">BBHHHBBH4s4s")
_IPV6 = struct.Struct(">IHBB16s16s")
_UDP = struct.Struct(">HHHH")


def checksum(data: bytes) -> int:
    """The Internet checksum (RFC 1071): the ones' complement of the ones' complement sum
    of the 16-bit words (an odd byte padded with zero)."""
    if len(data) % 2:
        data += b"\0"
    total: int = sum(struct.unpack(f">{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def ipv4(src: bytes, dst: bytes, proto: int, payload: bytes) -> bytes:
    """``payload`` behind a 20-byte IPv4 header."""
    length = _IPV4.size + len(payload)
    head = _IPV4.pack(0x45, 0, length, 0, 0, TTL, proto, 0, src, dst)
    return head[:10] + checksum(head).to_bytes(2, "big") + head[12:] + payload


def ipv6(src: bytes, dst: bytes, next_header: int, payload: bytes) -> bytes:
    """``payload`` behind a 40-byte IPv6 header."""
    return _IPV6.pack(6 << 28, len(payload), next_header, TTL, src, dst) + payload


def udp(src: bytes, dst: bytes, sport: int, dport: int, payload: bytes) -> bytes:
    """A UDP datagram; its checksum covers the pseudo-header of the family of ``src``
    (RFC 768; RFC 8200 §8.1), 0 transmitted as 0xffff."""
    length = _UDP.size + len(payload)
    if len(src) == 4:
        pseudo = src + dst + struct.pack(">BBH", 0, IPPROTO_UDP, length)
    else:
        pseudo = src + dst + struct.pack(">I3xB", length, IPPROTO_UDP)
    head = _UDP.pack(sport, dport, length, 0)
    value = checksum(pseudo + head + payload) or 0xFFFF
    return _UDP.pack(sport, dport, length, value) + payload


def outer_packet(src: bytes, dst: bytes, sport: int, dport: int, payload: bytes) -> bytes:
    """The IP packet carrying ``payload`` from ``src`` to ``dst`` (packed, 4 or 16 bytes):
    UDP from ``sport`` to ``dport`` when they are set, else protocol 50 (raw ESP)."""
    if sport > 0 and dport > 0:
        proto, body = IPPROTO_UDP, udp(src, dst, sport, dport, payload)
    else:
        proto, body = IPPROTO_ESP, payload
    if len(src) == 4:
        return ipv4(src, dst, proto, body)
    return ipv6(src, dst, proto, body)
