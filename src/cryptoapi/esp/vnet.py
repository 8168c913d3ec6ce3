"""The virtio-net header that a TUN device opened with ``IFF_VNET_HDR`` puts before every
packet it reads and expects before every packet written to it.

Layout: ``struct virtio_net_hdr`` of ``<linux/virtio_net.h>`` (virtio 1.x §5.1.6), ten
bytes in the host's byte order for a legacy TUN (``tun16_to_cpu``): flags, GSO type,
header length, GSO segment size, checksum start, checksum offset.

- ``F_NEEDS_CSUM``: the transport checksum is not done. The field at ``csum_start +
  csum_offset`` holds the pseudo-header's sum (Linux ``CHECKSUM_PARTIAL``), and the sum of
  everything from ``csum_start`` on completes it.
- a GSO type other than ``GSO_NONE``: the packet is a super-segment. Its payload is cut
  into ``gso_size`` pieces, each with the headers repeated (:mod:`.gso`). Written to the
  TUN, such a packet is a coalesced one (:mod:`.gro`).

``hdr_len`` is only a hint (Linux's ``tun_put_user`` reports the skb's linear length
there), so the headers' length is always read from the headers themselves.
"""

import struct
from typing import NamedTuple

HEADER = struct.Struct("=BBHHHH")
SIZE = HEADER.size
F_NEEDS_CSUM = 1
GSO_NONE = 0
GSO_TCPV4 = 1
GSO_UDP = 3  # UFO: IP fragmentation, never asked for (no TUN_F_UFO)
GSO_TCPV6 = 4
GSO_UDP_L4 = 5  # USO: one UDP datagram per segment
GSO_ECN = 0x80

PLAIN = bytes(SIZE)
"""The header of a packet with no offload: complete checksums, not a super-segment."""

TCP_CHECKSUM = 16
UDP_CHECKSUM = 6
"""Offsets of the checksum fields in the TCP and UDP headers (``csum_offset``)."""


class VnetHeader(NamedTuple):
    """One ``struct virtio_net_hdr``, its fields by name."""

    flags: int
    gso_type: int
    hdr_len: int
    gso_size: int
    csum_start: int
    csum_offset: int

    def pack(self) -> bytes:
        return HEADER.pack(*self)


class OffloadError(ValueError):
    """A packet whose virtio-net header or headers do not describe a packet that can be
    segmented or completed (the reason in the message); it is dropped and counted."""


def read(frame: bytes) -> VnetHeader:
    """The header at the start of ``frame`` (OffloadError when it is shorter)."""
    if len(frame) < SIZE:
        raise OffloadError(f"{len(frame)} bytes: shorter than a virtio-net header")
    return VnetHeader._make(HEADER.unpack_from(frame))
