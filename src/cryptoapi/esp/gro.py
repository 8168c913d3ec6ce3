"""Receive offload done by espd: the packets decrypted in one turn, written to a TUN device
with a virtio-net header in as few writes as the kernel takes, as a NIC's GRO hands them up.

Consecutive TCP segments of one flow that follow on from one another are written as one
super-segment. Its virtio-net header says ``GSO_TCPV4``/``GSO_TCPV6``, ``gso_size`` is the
first segment's payload, and the TCP checksum is left partial. The kernel takes it as one
packet and delivers it, or forwards it and cuts it again, as one from a NIC's GRO.
The rules are those of Linux ``tcp_gro_receive``:

- the same addresses, ports, ack number, header length, window and TCP options; the same
  IPv4 TOS, TTL and DF (IPv6: the first word and hop limit); flags ACK or ACK|PSH only;
- each sequence number follows on from the bytes before, and IPv4 identifications go up
  by one;
- every segment but the last carries ``gso_size`` bytes and the last at most that; a PSH
  or a shorter segment ends the run;
- at most 64 KB of IP packet.

Consecutive UDP datagrams of one flow are written as one ``GSO_UDP_L4`` packet (USO, Linux
5.0's ``SKB_GSO_UDP_L4``), as wireguard-go does for its TUN writes since 2024: the same
addresses, ports and IP fields as above, identifications going up by one, every datagram
as long as the first but the last, which may be shorter (and ends the run), at most 64 KB,
none without a checksum (IPv4's 0, which a split would fill in). The kernel cuts it again
(``__udp_gso_segment``) before a socket without ``UDP_GRO`` reads it, and takes it whatever
``TUNSETOFFLOAD`` said, which is about the packets it hands espd.

Anything else is written as it came, with the plain header.

The kernel does not verify a checksum left partial (``CHECKSUM_PARTIAL`` counts as
checked), and neither does espd: every packet here was decrypted under an AEAD tag or an
HMAC that proves it is the bytes the peer protected, which a checksum could only confirm.
That is Linux WireGuard's reasoning for marking what it decrypts ``CHECKSUM_UNNECESSARY``
(``wg_packet_consume_data_done``), and wireguard-go's for its coalesced TUN writes. A
packet that is not coalesced is written plain and verified by the kernel as before.
"""

import functools
import struct
from collections.abc import Callable, Sequence
from typing import NamedTuple

from cryptoapi.esp import ip
from cryptoapi.esp.native import native
from cryptoapi.esp.vnet import (
    F_NEEDS_CSUM,
    GSO_TCPV4,
    GSO_TCPV6,
    GSO_UDP_L4,
    PLAIN,
    TCP_CHECKSUM,
    UDP_CHECKSUM,
    VnetHeader,
)

MAX_PACKET = 0xFFFF


class Frame(NamedTuple):
    """One write to the TUN: the virtio-net header and a packet standing for ``packets``."""

    data: bytes
    packets: int


_V4_TCP = struct.Struct(">BBHHHBBH8sHHIIBB")
"""An IPv4 header without options, then the TCP header's first 14 bytes."""
_V6_TCP = struct.Struct(">IHBB32sHHIIBB")
"""An IPv6 header, then the TCP header's first 14 bytes."""
_V4_UDP = struct.Struct(">BBHHHBBH8sHHHH")
"""An IPv4 header without options, then the UDP header."""
_V6_UDP = struct.Struct(">IHBB32sHHHH")
"""An IPv6 header, then the UDP header."""
_SEGMENT_FLAGS = (ip.TCP_ACK, ip.TCP_ACK | ip.TCP_PSH)


def coalesce(packets: Sequence[bytes]) -> list[Frame]:
    """The writes that deliver ``packets``, in order (see the module doc)."""
    frames: list[Frame] = []
    at = 0
    while at < len(packets):
        taken = _run(packets, at) or _udp_run(packets, at)
        frames.append(_frame(packets[at : at + taken]) if taken else Frame(PLAIN + packets[at], 1))
        at += taken or 1
    return frames


Coalesce = Callable[[Sequence[bytes]], list[Frame]]


def coalescer() -> tuple[Coalesce, str]:
    """The fastest :func:`coalesce` there is, and its language: ``gro.c``'s, else this one."""
    found = native("gro.c")
    return (functools.partial(found.coalesce, Frame), "C") if found else (coalesce, "Python")


def _run(packets: Sequence[bytes], at: int) -> int:
    """How many packets from ``packets[at]`` on make one run (see the module doc): 0 if
    that one cannot start one. The first is read field by field (:func:`_opening`); each
    next one is compared with it as bytes, but for what changes from segment to segment
    (lengths, identification, checksums, sequence number) and the flags, which are read."""
    first = packets[at]
    opening = _opening(first)
    if opening is None:
        return 0
    start, end, seq, ident = opening
    size = len(first) - end  # gso_size: each segment but the last this long
    if first[start + 13] & ip.TCP_PSH:
        return 1
    (a, b, one), (c, d, two), (e, f, three), length_at, extra = ip.flow_parts(first)
    acked = first[start + 8 : start + 13]  # ack number and header length
    window, options = first[start + 14 : start + 16], first[start + 20 : end]
    taken, total, next_seq = 1, len(first), (seq + size) & 0xFFFFFFFF
    for index in range(at + 1, len(packets)):  # (no copy of the rest: O(1) a packet)
        packet = packets[index]
        length = len(packet) - end
        flags = packet[start + 13] if length > 0 else 0
        if (
            flags not in _SEGMENT_FLAGS
            or length > size
            or total + length > MAX_PACKET
            or packet[e:f] != three  # addresses and ports (ip.flow_parts)
            or packet[start + 8 : start + 13] != acked
            or packet[c:d] != two
            or packet[a:b] != one
            or packet[start + 14 : start + 16] != window
            or (options and packet[start + 20 : end] != options)
            or (packet[length_at] << 8 | packet[length_at + 1]) + extra != len(packet)
            or int.from_bytes(packet[start + 4 : start + 8], "big") != next_seq
            or (extra == 0 and packet[4] << 8 | packet[5] != (ident + taken) & 0xFFFF)
        ):
            break
        taken += 1
        total += length
        next_seq = (next_seq + length) & 0xFFFFFFFF
        if length < size or flags & ip.TCP_PSH:
            break
    return taken


def _udp_run(packets: Sequence[bytes], at: int) -> int:
    """As :func:`_run`, for UDP datagrams (see the module doc): how many from
    ``packets[at]`` on make one run, 0 if that one cannot start one."""
    first = packets[at]
    start = _udp_opening(first)
    if start is None:
        return 0
    end = start + ip.UDP_HEADER
    size = len(first) - end  # gso_size
    (a, b, one), (c, d, two), (e, f, three), length_at, extra = ip.flow_parts(first)
    ident = first[4] << 8 | first[5]
    taken, total = 1, len(first)
    for index in range(at + 1, len(packets)):
        packet = packets[index]
        length = len(packet) - end
        if (
            not 0 < length <= size
            or total + length > MAX_PACKET
            or packet[e:f] != three  # addresses and ports (ip.flow_parts)
            or packet[c:d] != two
            or packet[a:b] != one
            or (packet[length_at] << 8 | packet[length_at + 1]) + extra != len(packet)
            or (packet[start + 4] << 8 | packet[start + 5]) != length + ip.UDP_HEADER
            or packet[start + 6 : end] == b"\0\0"
            or (extra == 0 and packet[4] << 8 | packet[5] != (ident + taken) & 0xFFFF)
        ):
            break
        taken += 1
        total += length
        if length < size:
            break
    return taken


def _udp_opening(packet: bytes) -> int | None:
    """Where the UDP header starts in a datagram that may start a run, or None: not plain
    IP and UDP with payload, or without a checksum."""
    size = len(packet)
    if size < ip.IPV6_HEADER + ip.UDP_HEADER:
        return None
    if packet[0] == 0x45:  # IPv4 without options
        _, _, total, _, frag, _, proto, _, _, _, _, length, checksum = _V4_UDP.unpack_from(packet)
        if proto != ip.IPPROTO_UDP or frag & ~ip.DF or total != size:
            return None
        start = ip.IPV4_HEADER
    elif packet[0] >> 4 == 6:
        _, payload, proto, _, _, _, _, length, checksum = _V6_UDP.unpack_from(packet)
        if proto != ip.IPPROTO_UDP or payload + ip.IPV6_HEADER != size:
            return None
        start = ip.IPV6_HEADER
    else:
        return None
    if length != size - start or length <= ip.UDP_HEADER or not checksum:
        return None
    return start


def _opening(packet: bytes) -> tuple[int, int, int, int] | None:
    """(TCP header start, payload start, sequence number, IPv4 identification) of a packet
    that may start a run, or None: not plain IP and TCP with payload and flags ACK or
    ACK|PSH (one ``struct`` call reads what deciding needs)."""
    size = len(packet)
    if size < ip.IPV6_HEADER + 20:
        return None
    if packet[0] == 0x45:  # IPv4 without options
        _, _, total, ident, frag, _, proto, _, _, _, _, seq, _, offset, flags = _V4_TCP.unpack_from(
            packet
        )
        if proto != ip.IPPROTO_TCP or frag & ~ip.DF or total != size:
            return None  # not TCP, a fragment, or a length that disagrees
        start = ip.IPV4_HEADER
    elif packet[0] >> 4 == 6:
        _, length, proto, _, _, _, _, seq, _, offset, flags = _V6_TCP.unpack_from(packet)
        if proto != ip.IPPROTO_TCP or length + ip.IPV6_HEADER != size:
            return None
        start, ident = ip.IPV6_HEADER, 0
    else:
        return None
    end = start + (offset >> 4) * 4
    if flags not in _SEGMENT_FLAGS or not start + ip.TCP_HEADER <= end < size:
        return None
    return start, end, seq, ident


def _frame(run: Sequence[bytes]) -> Frame:
    """One write for ``run`` (what :func:`_run` or :func:`_udp_run` took): a packet alone
    as it is, several as one super-segment or one USO packet."""
    first = run[0]
    if len(run) == 1:
        return Frame(PLAIN + first, 1)
    start = ip.IPV4_HEADER if first[0] == 0x45 else ip.IPV6_HEADER
    v4 = start == ip.IPV4_HEADER
    if first[9 if v4 else 6] == ip.IPPROTO_UDP:
        proto, end, field, gso = ip.IPPROTO_UDP, start + ip.UDP_HEADER, UDP_CHECKSUM, GSO_UDP_L4
    else:
        proto, end, field = ip.IPPROTO_TCP, start + (first[start + 12] >> 4) * 4, TCP_CHECKSUM
        gso = GSO_TCPV4 if v4 else GSO_TCPV6
    payload = b"".join([packet[end:] for packet in run])
    head = bytearray(first[:end])
    length = end - start + len(payload)  # of the TCP segment or UDP datagram
    if v4:
        head[2:4] = (end + len(payload)).to_bytes(2, "big")
        ip.with_ipv4_checksum(head)
    else:
        head[4:6] = length.to_bytes(2, "big")
    if proto == ip.IPPROTO_UDP:
        head[start + 4 : start + 6] = length.to_bytes(2, "big")
    elif run[-1][start + 13] & ip.TCP_PSH:
        head[start + 13] |= ip.TCP_PSH
    partial = ip.pseudo_header_sum(head, proto, length) % 0xFFFF
    head[start + field : start + field + 2] = partial.to_bytes(2, "big")
    vnet = VnetHeader(F_NEEDS_CSUM, gso, end, len(first) - end, start, field)
    return Frame(vnet.pack() + head + payload, len(run))
