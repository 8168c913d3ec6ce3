"""Receive offload done by espd: the packets decrypted in one turn, written to a TUN device
with a virtio-net header in as few writes as the kernel takes, as a NIC's GRO hands them up.

Consecutive TCP segments of one flow that follow on from one another are written as one
super-segment. Its virtio-net header says ``GSO_TCPV4``/``GSO_TCPV6``, ``gso_size`` is the
first segment's payload, and the TCP checksum is left partial. The kernel takes it as one
packet and delivers it, or forwards it and cuts it again, as one from a NIC's GRO.
The rules are those of Linux ``tcp_gro_receive``:

- the same addresses, ports, ack number, header length and TCP options; the same IPv4
  TOS, TTL and DF (IPv6: the first word and hop limit); flags ACK or ACK|PSH only;
- each sequence number follows on from the bytes before, and IPv4 identifications go up
  by one;
- every segment but the last carries ``gso_size`` bytes and the last at most that; a PSH
  or a shorter segment ends the run;
- at most 64 KB of IP packet.

Anything else is written as it came, with the plain header.

The kernel does not verify a checksum left partial (``CHECKSUM_PARTIAL`` counts as
checked), and neither does espd: every packet here was decrypted under an AEAD tag or an
HMAC that proves it is the bytes the peer protected, which a checksum could only confirm.
That is Linux WireGuard's reasoning for marking what it decrypts ``CHECKSUM_UNNECESSARY``
(``wg_packet_consume_data_done``), and wireguard-go's for its coalesced TUN writes. A
packet that is not coalesced is written plain and verified by the kernel as before.
"""

import struct
from collections.abc import Iterable
from typing import NamedTuple

from cryptoapi.esp import ip
from cryptoapi.esp.vnet import (
    F_NEEDS_CSUM,
    GSO_TCPV4,
    GSO_TCPV6,
    PLAIN,
    TCP_CHECKSUM,
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


class _Segment(NamedTuple):
    """A TCP segment that may join a run, and what deciding so needs."""

    packet: bytes
    key: tuple[object, ...]  # what every segment of a run has the same
    seq: int
    ident: int  # IPv4 identification (0 for IPv6)
    start: int  # where the TCP header starts
    end: int  # where the payload starts
    push: bool


class _Run:
    """Segments that continue one another, and what the next one must be."""

    __slots__ = ("ident", "key", "next_seq", "open", "segments", "size", "total", "v4")

    def __init__(self, first: _Segment) -> None:
        self.segments = [first]
        self.key = first.key
        self.v4 = first.start == ip.IPV4_HEADER
        self.size = len(first.packet) - first.end  # gso_size: each but the last this long
        self.total = len(first.packet)
        self.next_seq = (first.seq + self.size) & 0xFFFFFFFF
        self.ident = first.ident
        self.open = not first.push

    def take(self, segment: _Segment) -> bool:
        """Add ``segment`` if it continues the run (see the module doc); whether it did."""
        size = len(segment.packet) - segment.end
        if not (
            self.open
            and segment.seq == self.next_seq
            and segment.key == self.key
            and size <= self.size
            and self.total + size <= MAX_PACKET
            and (not self.v4 or segment.ident == (self.ident + 1) & 0xFFFF)
        ):
            return False
        self.segments.append(segment)
        self.total += size
        self.next_seq = (segment.seq + size) & 0xFFFFFFFF
        self.ident = segment.ident
        self.open = size == self.size and not segment.push
        return True


def coalesce(packets: Iterable[bytes]) -> list[Frame]:
    """The writes that deliver ``packets``, in order (see the module doc)."""
    frames: list[Frame] = []
    run: _Run | None = None
    for packet in packets:
        segment = _segment(packet)
        if segment is not None and run is not None and run.take(segment):
            continue
        if run is not None:
            frames.append(_frame(run.segments))
        if segment is None:
            frames.append(Frame(PLAIN + packet, 1))
            run = None
        else:
            run = _Run(segment)
    if run is not None:
        frames.append(_frame(run.segments))
    return frames


def _segment(packet: bytes) -> _Segment | None:
    """``packet`` as a segment that may join a run, or None: not plain IP and TCP with
    payload and flags ACK or ACK|PSH (one ``struct`` call reads what deciding needs)."""
    size = len(packet)
    if size < ip.IPV6_HEADER + 20:
        return None
    if packet[0] == 0x45:  # IPv4 without options
        _, tos, total, ident, frag, ttl, proto, _, pair, sport, dport, seq, ack, offset, flags = (
            _V4_TCP.unpack_from(packet)
        )
        if proto != ip.IPPROTO_TCP or frag & ~ip.DF or total != size:
            return None  # not TCP, a fragment, or a length that disagrees
        start = ip.IPV4_HEADER
        key: tuple[object, ...] = (tos, frag, ttl, pair, sport, dport, ack, offset)
    elif packet[0] >> 4 == 6:
        first, length, proto, hops, pair, sport, dport, seq, ack, offset, flags = (
            _V6_TCP.unpack_from(packet)
        )
        if proto != ip.IPPROTO_TCP or length + ip.IPV6_HEADER != size:
            return None
        start, ident = ip.IPV6_HEADER, 0
        key = (first, hops, pair, sport, dport, ack, offset)
    else:
        return None
    end = start + (offset >> 4) * 4
    if (
        flags not in (ip.TCP_ACK, ip.TCP_ACK | ip.TCP_PSH)
        or not start + ip.TCP_HEADER <= end < size
    ):
        return None
    if end > start + ip.TCP_HEADER:  # the options: the same in every segment of a run
        key += (packet[start + ip.TCP_HEADER : end],)
    return _Segment(packet, key, seq, ident, start, end, flags == ip.TCP_ACK | ip.TCP_PSH)


def _frame(run: list[_Segment]) -> Frame:
    """One write for ``run``: a segment alone as it is, several as a super-segment."""
    first = run[0]
    if len(run) == 1:
        return Frame(PLAIN + first.packet, 1)
    payload = b"".join(s.packet[s.end :] for s in run)
    head = bytearray(first.packet[: first.end])
    tcp_length = first.end - first.start + len(payload)
    if first.start == ip.IPV4_HEADER:
        head[2:4] = (first.end + len(payload)).to_bytes(2, "big")
        ip.with_ipv4_checksum(head)
        gso = GSO_TCPV4
    else:
        head[4:6] = tcp_length.to_bytes(2, "big")
        gso = GSO_TCPV6
    if run[-1].push:
        head[first.start + 13] |= ip.TCP_PSH
    partial = ip.pseudo_header_sum(head, ip.IPPROTO_TCP, tcp_length) % 0xFFFF
    head[first.start + TCP_CHECKSUM : first.start + TCP_CHECKSUM + 2] = partial.to_bytes(2, "big")
    size = len(first.packet) - first.end
    vnet = VnetHeader(F_NEEDS_CSUM, gso, first.end, size, first.start, TCP_CHECKSUM)
    return Frame(vnet.pack() + head + payload, len(run))
