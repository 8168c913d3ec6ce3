"""The sockets ESP travels through: UDP (RFC 3948 encapsulation) and raw IP protocol 50.

- UDP: one socket per family bound to the wildcard address and ``--udp-port`` (4500), as
  strongSwan's kernel-libipsec sends ESP: from port 4500 to the peer's 4500. The kernel
  builds and strips the IP and UDP headers.
- raw ESP (``--raw-esp``): one ``SOCK_RAW`` socket of protocol 50 per family. The kernel
  builds the outer header of what is sent; an IPv4 raw socket delivers the whole packet,
  IP header included, an IPv6 one only the ESP payload (RFC 3542 §3).

The SA lookup on input needs the packet's destination address, which a wildcard-bound
socket does not otherwise tell: every socket asks for ``IP_PKTINFO`` / ``IPV6_RECVPKTINFO``
(RFC 3542 §6) and reads ``ipi_addr`` / ``ipi6_addr`` from the ancillary data of
``recvmsg``. Sends carry the SA's source address the same way (``ipi_spec_dst`` /
``ipi6_addr``), so the outer source is the SA's even on a host with several addresses.
Path MTU discovery is off (``IP_PMTUDISC_DONT``): an ESP packet larger than the link is
fragmented by the kernel rather than refused with EMSGSIZE (RFC 4303 §3.3.5 lets the outer
packet be fragmented).

Every socket asks for a receive buffer of :data:`RECEIVE_BUFFER` bytes (``SO_RCVBUFFORCE``
as root, else ``SO_RCVBUF`` within ``net.core.rmem_max``), as wireguard-go does: the
default (``rmem_default``, about 200 KB) holds some 90 full-size packets, one burst of a
TCP window, and a packet that finds the buffer full is lost. For raw ESP it is worse than
lost: Linux (6.x ``raw_v4_input``) skips a raw socket whose buffer is full, and with no
other taker the host answers the peer with ICMP protocol unreachable.

Offloads (UDP only, unless ``offload=False``; Linux ``net/ipv4/udp.c``, ``udp_offload.c``):

- GRO (``UDP_GRO``, ``setsockopt(SOL_UDP, UDP_GRO, 1)``): the kernel may hand one
  ``recvmsg`` a buffer of several datagrams of one flow coalesced, with a ``UDP_GRO``
  control message holding the segment size (an ``int``, ``udp_cmsg_recv``): every datagram
  is that long but the last, which may be shorter (``udp_gro_receive_segment`` ends a batch
  at a shorter one). :func:`segments` cuts it apart. Without the message the buffer is one
  datagram, as before.
- GSO (``UDP_SEGMENT``): :meth:`EspSocket.send_segments` sends several datagrams to one
  peer in one ``sendmsg``, the segment size in a ``UDP_SEGMENT`` control message (a
  ``__u16``, ``udp_cmsg_send``); the kernel cuts the buffer into datagrams of that size, the
  last possibly shorter. ``udp_send_skb`` refuses with EINVAL a segment that with its
  headers exceeds the route's MTU or a buffer of more than ``UDP_MAX_SEGMENTS`` (64 before
  Linux 6.9) segments, and with EIO a route that cannot offload the checksum (e.g. an
  xfrm route); ``ip_make_skb`` refuses more than 64 KB with EMSGSIZE. The caller keeps within
  :data:`GSO_MAX_SEGMENTS` and :data:`GSO_MAX_BYTES` and falls back to :meth:`EspSocket.send`
  per datagram when refused.

Each call is one system call from C where ``packetio.c`` builds (:func:`packet_io`): no
exception for an empty queue, no address conversions; the Python here is its reference,
and what runs without a compiler (raw ESP sockets always take it).

Errors are the caller's: :meth:`EspSocket.receive` returns None when nothing is waiting and
raises OSError otherwise (e.g. ECONNREFUSED queued by an ICMP error); :meth:`EspSocket.send`
and :meth:`EspSocket.send_segments` raise OSError (EAGAIN, ENOBUFS, ECONNREFUSED,
EHOSTUNREACH ...). The endpoint counts them and goes on.
"""

import functools
import logging
import socket
import struct
from collections.abc import Sequence
from types import ModuleType
from typing import NamedTuple, Protocol

from cryptoapi.esp.native import native

log = logging.getLogger(__name__)

IPPROTO_ESP = 50
IP_PKTINFO = 8  # <linux/in.h>; the socket module does not export it
IP_MTU_DISCOVER = 10
IPV6_MTU_DISCOVER = 23  # <linux/in6.h>
PMTUDISC_DONT = 0
MAX_DATAGRAM = 65535
SOL_UDP = 17
UDP_SEGMENT = 103  # <linux/udp.h>
UDP_GRO = 104
SO_RCVBUFFORCE = 33  # <asm-generic/socket.h>; Python exports it from 3.12 only
RECEIVE_BUFFER = 4 << 20
"""Bytes of receive buffer each ESP socket asks for (the kernel doubles it for overhead)."""
GSO_MAX_SEGMENTS = 64
"""Datagrams per ``UDP_SEGMENT`` send: ``UDP_MAX_SEGMENTS`` of the kernels that allow fewest."""
GSO_MAX_BYTES = 0xFFFF - 20 - 8
"""Bytes per ``UDP_SEGMENT`` send: what one IPv4 packet of 64 KB carries after its IP and UDP
headers (the stricter family; ``ip_make_skb`` says EMSGSIZE past it)."""

_IN_PKTINFO = struct.Struct("=i4s4s")  # ipi_ifindex, ipi_spec_dst, ipi_addr
_IN6_PKTINFO = struct.Struct("=16si")  # ipi6_addr, ipi6_ifindex
_GRO_SIZE = struct.Struct("=i")  # UDP_GRO's control message: an int
_GSO_SIZE = struct.Struct("=H")  # UDP_SEGMENT's: a __u16
_ANCILLARY = socket.CMSG_SPACE(_IN6_PKTINFO.size) + socket.CMSG_SPACE(_GRO_SIZE.size)


class Datagram(Protocol):
    """What :meth:`EspSocket.send` needs of an outbound ESP packet (the data path's
    ``Outbound``): packed addresses, ports (0 for raw ESP) and the ESP bytes."""

    @property
    def src(self) -> bytes: ...
    @property
    def dst(self) -> bytes: ...
    @property
    def sport(self) -> int: ...
    @property
    def dport(self) -> int: ...
    @property
    def payload(self) -> bytes: ...


class Received(NamedTuple):
    """One ESP packet taken from a socket. ``packet`` is the whole IP packet when the
    socket delivered it (raw IPv4), else None; ``payload`` is the ESP part (for UDP the
    datagram's payload). Addresses are packed; ports are 0 for raw ESP."""

    packet: bytes | None
    payload: bytes
    src: bytes
    dst: bytes
    sport: int
    dport: int
    segment: int = 0
    """With UDP GRO, the size of the datagrams coalesced in ``payload`` (see
    :func:`segments`); 0 when ``payload`` is one datagram."""


_new_received = tuple.__new__  # a Received without NamedTuple's Python-level __new__


@functools.cache
def packet_io() -> ModuleType | None:
    """``packetio.c``'s reads, receives and sends, or None where it does not build."""
    return native("packetio.c")


def segments(payload: bytes, size: int) -> list[bytes]:
    """The datagrams of a ``UDP_GRO`` buffer: ``size`` bytes each, the last possibly
    shorter (the kernel coalesces equal sizes and ends a batch at a shorter one)."""
    if size <= 0 or size >= len(payload):
        return [payload]
    return [payload[start : start + size] for start in range(0, len(payload), size)]


class EspSocket:
    """A non-blocking UDP (``raw=False``) or raw protocol-50 socket of ``family``; with
    ``offload`` a UDP one turns on GRO and GSO where the kernel has them (``gro``,
    ``gso``: see the module docstring)."""

    def __init__(self, family: int, *, raw: bool, port: int = 0, offload: bool = True) -> None:
        self.family = family
        self.raw = raw
        self.sock = _open(family, raw, port)
        self.port: int = 0 if raw else self.sock.getsockname()[1]  # the bound one (for 0)
        self._level, self._pktinfo = (
            (socket.IPPROTO_IP, IP_PKTINFO)
            if family == socket.AF_INET
            else (socket.IPPROTO_IPV6, socket.IPV6_PKTINFO)
        )
        wanted = offload and not raw
        self.gro = wanted and _turn_on(self.sock, UDP_GRO, 1)
        self.gso = wanted and _turn_on(self.sock, UDP_SEGMENT, 0)  # 0: per send, by cmsg
        self._fd = self.sock.fileno()
        self._io = None if raw else packet_io()

    def __repr__(self) -> str:
        kind = "raw ESP" if self.raw else f"UDP/{self.port}"
        return f"EspSocket({socket.AddressFamily(self.family).name}, {kind})"

    def offloads(self) -> str:
        """What the socket offloads, in words: ``GSO and GRO``, one of them, or ``none``."""
        used = [name for name, on in (("GSO", self.gso), ("GRO", self.gro)) if on]
        return " and ".join(used) or "none"

    def fileno(self) -> int:
        return self.sock.fileno()

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> "EspSocket":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def receive(self) -> Received | None:
        """The next packet, or None when none is waiting."""
        if self._io is not None:
            got = self._io.receive(self._fd, self.family, MAX_DATAGRAM, self.port)
            return None if got is None else _new_received(Received, got)
        try:
            data, ancillary, _, address = self.sock.recvmsg(MAX_DATAGRAM, _ANCILLARY)
        except (BlockingIOError, InterruptedError):
            return None
        if self.raw and self.family == socket.AF_INET:
            header = (data[0] & 0x0F) * 4 if data else 0
            return Received(data, data[header:], data[12:16], data[16:20], 0, 0)
        src = socket.inet_pton(self.family, address[0])
        dst, segment = self._ancillary(ancillary)
        sport = 0 if self.raw else address[1]
        return Received(None, data, src, dst, sport, self.port, segment)

    def _ancillary(self, ancillary: list[tuple[int, int, bytes]]) -> tuple[bytes, int]:
        """The packet's destination from its IP_PKTINFO / IPV6_PKTINFO (all zeros if the
        kernel gave none, which the SA lookup then does not match) and the UDP_GRO segment
        size (0 if none: one datagram)."""
        dst = bytes(4 if self.family == socket.AF_INET else 16)
        segment = 0
        for level, kind, data in ancillary:
            if level == self._level and kind == self._pktinfo:
                # in_pktinfo: ifindex, spec_dst, then ipi_addr; in6_pktinfo: ipi6_addr first
                dst = data[8:12] if self.family == socket.AF_INET else data[:16]
            elif level == SOL_UDP and kind == UDP_GRO:
                (segment,) = _GRO_SIZE.unpack_from(data)
        return dst, segment

    def send(self, datagram: Datagram) -> None:
        """Send ``datagram.payload`` from its source address to its destination (and
        port). Raises OSError as the kernel refuses it."""
        if self._io is not None:
            payloads = [datagram.payload]
            self._io.send(self._fd, self.family, payloads, datagram.src, datagram.dst,
                          datagram.dport, 0)  # fmt: skip
            return
        self.sock.sendmsg([datagram.payload], [self._source(datagram)], 0, self._peer(datagram))

    def send_segments(self, datagrams: Sequence[Datagram]) -> None:
        """Send ``datagrams`` (one source, destination and port; all as long as the first
        but the last, which may be shorter; at most :data:`GSO_MAX_SEGMENTS` and
        :data:`GSO_MAX_BYTES`) in one ``sendmsg`` with ``UDP_SEGMENT``: the kernel sends them
        as that many datagrams. Raises OSError as the kernel refuses it (EIO, EINVAL: it
        cannot segment these; see the module docstring)."""
        first = datagrams[0]
        payloads = [datagram.payload for datagram in datagrams]  # one iovec each: no join
        if self._io is not None:
            self._io.send(self._fd, self.family, payloads, first.src, first.dst, first.dport,
                          len(first.payload))  # fmt: skip
            return
        size = (SOL_UDP, UDP_SEGMENT, _GSO_SIZE.pack(len(first.payload)))
        self.sock.sendmsg(payloads, [self._source(first), size], 0, self._peer(first))

    def _source(self, datagram: Datagram) -> tuple[int, int, bytes]:
        """The control message that sends from ``datagram.src`` (IP_PKTINFO's
        ``ipi_spec_dst``, IPV6_PKTINFO's ``ipi6_addr``)."""
        if self.family == socket.AF_INET:
            info = _IN_PKTINFO.pack(0, datagram.src, bytes(4))
        else:
            info = _IN6_PKTINFO.pack(datagram.src, 0)
        return (self._level, self._pktinfo, info)

    def _peer(self, datagram: Datagram) -> tuple[str, int]:
        host = socket.inet_ntop(self.family, datagram.dst)
        return (host, 0 if self.raw else datagram.dport)


def _turn_on(sock: socket.socket, option: int, value: int) -> bool:
    """Set a ``SOL_UDP`` offload option; False (logged) where the kernel has none."""
    try:
        sock.setsockopt(SOL_UDP, option, value)
    except OSError as error:
        name = "UDP_GRO" if option == UDP_GRO else "UDP_SEGMENT"
        log.info("no %s on this kernel: %s", name, error.strerror or error)
        return False
    return True


def _grow_receive_buffer(sock: socket.socket) -> None:
    """Ask for :data:`RECEIVE_BUFFER` bytes of receive buffer: past ``rmem_max`` where the
    process may (CAP_NET_ADMIN), else as much as ``rmem_max`` allows."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, RECEIVE_BUFFER)
    except PermissionError:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RECEIVE_BUFFER)


def _open(family: int, raw: bool, port: int) -> socket.socket:
    kind, proto = (socket.SOCK_RAW, IPPROTO_ESP) if raw else (socket.SOCK_DGRAM, 0)
    sock = socket.socket(family, kind | socket.SOCK_NONBLOCK | socket.SOCK_CLOEXEC, proto)
    try:
        if family == socket.AF_INET:
            sock.setsockopt(socket.IPPROTO_IP, IP_PKTINFO, 1)
            sock.setsockopt(socket.IPPROTO_IP, IP_MTU_DISCOVER, PMTUDISC_DONT)
        else:
            if not raw:  # (a raw IPv6 socket takes no IPv4 anyway, and refuses the option)
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_RECVPKTINFO, 1)
            sock.setsockopt(socket.IPPROTO_IPV6, IPV6_MTU_DISCOVER, PMTUDISC_DONT)
        _grow_receive_buffer(sock)
        if not raw:
            sock.bind(("0.0.0.0" if family == socket.AF_INET else "::", port))
    except BaseException:
        sock.close()
        raise
    return sock


def open_sockets(*, udp_port: int, raw: bool, offload: bool = True) -> list[EspSocket]:
    """The sockets of one kind, IPv4 and IPv6 where the host has it: UDP bound to
    ``udp_port`` (with GSO and GRO where the kernel has them, unless not ``offload``), or
    with ``raw`` raw ESP (espd opens both kinds with ``--raw-esp``: a UDP socket for SAs
    that carry NAT-T ports). An IPv6 socket the host refuses (no IPv6) is left out; an IPv4
    one raises OSError (the caller names which kind)."""
    found: list[EspSocket] = []
    try:
        for family in (socket.AF_INET, socket.AF_INET6):
            try:
                found.append(EspSocket(family, raw=raw, port=udp_port, offload=offload))
            except OSError as error:
                if family == socket.AF_INET:
                    raise
                log.warning("no IPv6 %s socket: %s", "raw" if raw else "UDP", error)
    except BaseException:
        for sock in found:
            sock.close()
        raise
    return found
