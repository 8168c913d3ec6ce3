"""Segmentation offload done by espd: the packets that one TUN read with a virtio-net header
stands for, as a NIC with TSO/USO and checksum offload would put them on the wire.

With ``TUN_F_TSO4``/``TSO6``/``USO4``/``USO6`` the kernel can hand espd a TCP or UDP
super-segment of up to 64 KB in one read, and with ``TUN_F_CSUM`` a packet whose checksum
is only partly done. ESP protects whole packets, so :func:`split` does the hardware's work:

- a partial checksum (``F_NEEDS_CSUM``) is completed. The field holds the pseudo-header's
  sum, so the checksum is the ones' complement of the sum from ``csum_start`` to the end
  (RFC 1071). A UDP result of 0 is sent as 0xffff (RFC 768).
- TCP (``GSO_TCPV4``/``GSO_TCPV6``, as Linux ``tcp_gso_segment`` does): the payload after
  the TCP header is cut into ``gso_size`` pieces, each behind a copy of the headers with
  - the sequence number advanced by the bytes before it;
  - FIN and PSH only on the last piece, CWR only on the first (RFC 3168 §6.1.2);
  - its own lengths;
  - the IPv4 identification plus the piece's number (``inet_gso_segment``), and the IPv4
    header checksum redone;
  - a full TCP checksum.
- UDP (``GSO_UDP_L4``, as ``__udp_gso_segment``): each piece is one datagram with its own
  UDP length and checksum, under IP headers made as for TCP.

Only plain IP headers are segmented, as :func:`cryptoapi.esp.ip.flow` reads them: IPv4
(options allowed, no fragment) or IPv6 with the transport header next. Anything else is an
:class:`~cryptoapi.esp.vnet.OffloadError`.

This module is the readable reference. ``gso.c`` does the same in C, packet for packet and
error for error (the tests compare them): espd takes :func:`splitter`, which is the C one
where it builds (:mod:`.native`).
"""

import functools
import struct
from collections.abc import Callable

from cryptoapi.esp import ip
from cryptoapi.esp.native import native
from cryptoapi.esp.vnet import (
    F_NEEDS_CSUM,
    GSO_ECN,
    GSO_NONE,
    GSO_TCPV4,
    GSO_TCPV6,
    GSO_UDP_L4,
    SIZE,
    TCP_CHECKSUM,
    UDP_CHECKSUM,
    OffloadError,
    VnetHeader,
    read,
)

_SEQ = struct.Struct(">I")
_CHECKSUM = struct.Struct(">H")
_LENGTH_AND_ID = struct.Struct(">HH")
_LENGTH_AND_CHECKSUM = struct.Struct(">HH")


def plain(frame: bytes) -> bool:
    """Whether ``frame`` is one whole packet behind its virtio-net header: no segmentation,
    no partial checksum (what a read brings unless the device was given offloads)."""
    return len(frame) >= SIZE and not frame[1] and not frame[0] & F_NEEDS_CSUM


def split(frame: bytes) -> list[bytes]:
    """The packets that ``frame``, one read from a TUN device with a virtio-net header,
    stands for: itself without the header, its checksum completed, or its segments
    (OffloadError for a frame that describes none of these)."""
    if plain(frame):
        return [frame[SIZE:]]  # the common case
    head = read(frame)
    packet = frame[SIZE:]
    gso = head.gso_type & ~GSO_ECN
    if gso == GSO_NONE:
        return [_completed(packet, head)]
    if gso in (GSO_TCPV4, GSO_TCPV6):
        return _tcp_segments(packet, head)
    if gso == GSO_UDP_L4:
        return _udp_segments(packet, head)
    raise OffloadError(f"GSO type {head.gso_type:#x} is not one espd turns on")


Split = Callable[[bytes], list[bytes]]


def splitter() -> tuple[Split, str]:
    """The fastest :func:`split` there is, and its language: ``gso.c``'s, else this one."""
    found = native("gso.c")
    return (functools.partial(found.split, OffloadError), "C") if found else (split, "Python")


def _completed(packet: bytes, head: VnetHeader) -> bytes:
    """``packet`` with the partial checksum its header points at completed."""
    if not head.flags & F_NEEDS_CSUM:
        return packet
    field = head.csum_start + head.csum_offset
    if head.csum_offset not in (TCP_CHECKSUM, UDP_CHECKSUM) or field + 2 > len(packet):
        raise OffloadError(
            f"a partial checksum at {head.csum_start}+{head.csum_offset}"
            f" of a {len(packet)}-byte packet"
        )
    value = ip.checksum(packet[head.csum_start :])
    if head.csum_offset == UDP_CHECKSUM:
        value = value or 0xFFFF
    return packet[:field] + value.to_bytes(2, "big") + packet[field + 2 :]


def _transport(packet: bytes, proto: int) -> int:
    """Where the ``proto`` header of ``packet`` starts (OffloadError if it is not there)."""
    version = packet[0] >> 4 if packet else 0
    if version == 4 and len(packet) >= ip.IPV4_HEADER:
        start = (packet[0] & 0x0F) * 4
        fragment = int.from_bytes(packet[6:8], "big") & ~ip.DF
        if packet[9] == proto and start >= ip.IPV4_HEADER and not fragment:
            return start
    elif version == 6 and len(packet) >= ip.IPV6_HEADER and packet[6] == proto:
        return ip.IPV6_HEADER
    raise OffloadError(f"a super-segment that is not plain IP carrying protocol {proto}")


def _ip_headers(head: bytes, lengths: list[int]) -> list[bytes]:
    """``head``, the super-segment's IP header, for each segment in turn, carrying
    ``lengths[n]`` transport bytes: its length, and for IPv4 the identification plus
    ``n`` and the header checksum (what every copy sums alike summed once)."""
    if head[0] >> 4 == 6:
        extra = len(head) - ip.IPV6_HEADER
        return [head[:4] + (extra + length).to_bytes(2, "big") + head[6:] for length in lengths]
    template = bytearray(head)
    template[2:6] = bytes(4)  # length and identification, per segment
    template[10:12] = bytes(2)  # the checksum
    common = int.from_bytes(template, "big")
    ident = int.from_bytes(head[4:6], "big")
    headers = []
    for number, length in enumerate(lengths):
        copy = bytearray(template)
        total, this = len(head) + length, (ident + number) & 0xFFFF
        _LENGTH_AND_ID.pack_into(copy, 2, total, this)
        _CHECKSUM.pack_into(copy, 10, ip.checksum(b"", common + total + this))
        headers.append(bytes(copy))
    return headers


def _pieces(data: bytes, size: int) -> list[bytes]:
    """``data`` cut into ``size``-byte pieces, the last possibly shorter."""
    if size <= 0:
        raise OffloadError(f"a super-segment with segment size {size}")
    return [data[at : at + size] for at in range(0, len(data), size)]


def _tcp_segments(packet: bytes, head: VnetHeader) -> list[bytes]:
    start = _transport(packet, ip.IPPROTO_TCP)
    end = start + (packet[start + 12] >> 4) * 4 if len(packet) > start + 12 else 0
    if end < start + ip.TCP_HEADER or end > len(packet):
        raise OffloadError("a TCP super-segment whose TCP header is cut short")
    if len(packet) - end <= head.gso_size:
        return [_completed(packet, head)]
    template = bytearray(packet[start:end])
    seq = int.from_bytes(template[4:8], "big")
    flags = template[13]
    template[4:8] = bytes(4)
    template[13] = 0
    template[16:18] = b"\0\0"
    common = ip.pseudo_header_sum(packet, ip.IPPROTO_TCP, 0) + int.from_bytes(template, "big")
    pieces = _pieces(packet[end:], head.gso_size)
    lengths = [len(template) + len(piece) for piece in pieces]
    last = len(pieces) - 1
    segments = []
    for number, (ip_head, piece) in enumerate(
        zip(_ip_headers(packet[:start], lengths), pieces, strict=True)
    ):
        this = (seq + number * head.gso_size) & 0xFFFFFFFF
        kept = flags if number == last else flags & ~(ip.TCP_FIN | ip.TCP_PSH)
        kept = kept & ~ip.TCP_CWR if number else kept
        words = common + (this >> 16) + (this & 0xFFFF) + kept + lengths[number]
        tcp = bytearray(template)
        _SEQ.pack_into(tcp, 4, this)
        tcp[13] = kept
        _CHECKSUM.pack_into(tcp, 16, ip.checksum(piece, words))
        segments.append(ip_head + tcp + piece)
    return segments


def _udp_segments(packet: bytes, head: VnetHeader) -> list[bytes]:
    start = _transport(packet, ip.IPPROTO_UDP)
    if len(packet) < start + ip.UDP_HEADER:
        raise OffloadError("a UDP super-segment whose UDP header is cut short")
    if len(packet) - start - ip.UDP_HEADER <= head.gso_size:
        return [_completed(packet, head)]
    ports = packet[start : start + 4]
    common = ip.pseudo_header_sum(packet, ip.IPPROTO_UDP, 0) + int.from_bytes(ports, "big")
    pieces = _pieces(packet[start + ip.UDP_HEADER :], head.gso_size)
    lengths = [ip.UDP_HEADER + len(piece) for piece in pieces]
    segments = []
    for ip_head, piece, length in zip(
        _ip_headers(packet[:start], lengths), pieces, lengths, strict=True
    ):
        value = (
            ip.checksum(piece, common + 2 * length) or 0xFFFF
        )  # in the header and the pseudo-header
        segments.append(ip_head + ports + _LENGTH_AND_CHECKSUM.pack(length, value) + piece)
    return segments
