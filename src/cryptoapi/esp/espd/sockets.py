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

Errors are the caller's: :meth:`EspSocket.receive` returns None when nothing is waiting and
raises OSError otherwise (e.g. ECONNREFUSED queued by an ICMP error); :meth:`EspSocket.send`
raises OSError (EAGAIN, ENOBUFS, ECONNREFUSED, EHOSTUNREACH ...). The endpoint counts them
and goes on.
"""

import logging
import socket
import struct
from typing import NamedTuple, Protocol

log = logging.getLogger(__name__)

IPPROTO_ESP = 50
IP_PKTINFO = 8  # <linux/in.h>; the socket module does not export it
IP_MTU_DISCOVER = 10
IPV6_MTU_DISCOVER = 23  # <linux/in6.h>
PMTUDISC_DONT = 0
MAX_DATAGRAM = 65535

_IN_PKTINFO = struct.Struct("=i4s4s")  # ipi_ifindex, ipi_spec_dst, ipi_addr
_IN6_PKTINFO = struct.Struct("=16si")  # ipi6_addr, ipi6_ifindex
_ANCILLARY = socket.CMSG_SPACE(_IN6_PKTINFO.size)


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


class EspSocket:
    """A non-blocking UDP (``raw=False``) or raw protocol-50 socket of ``family``."""

    def __init__(self, family: int, *, raw: bool, port: int = 0) -> None:
        self.family = family
        self.raw = raw
        self.sock = _open(family, raw, port)
        self.port: int = 0 if raw else self.sock.getsockname()[1]  # the bound one (for 0)
        self._level, self._pktinfo = (
            (socket.IPPROTO_IP, IP_PKTINFO)
            if family == socket.AF_INET
            else (socket.IPPROTO_IPV6, socket.IPV6_PKTINFO)
        )

    def __repr__(self) -> str:
        kind = "raw ESP" if self.raw else f"UDP/{self.port}"
        return f"EspSocket({socket.AddressFamily(self.family).name}, {kind})"

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
        try:
            data, ancillary, _, address = self.sock.recvmsg(MAX_DATAGRAM, _ANCILLARY)
        except (BlockingIOError, InterruptedError):
            return None
        if self.raw and self.family == socket.AF_INET:
            header = (data[0] & 0x0F) * 4 if data else 0
            return Received(data, data[header:], data[12:16], data[16:20], 0, 0)
        src = socket.inet_pton(self.family, address[0])
        dst = self._destination(ancillary)
        return Received(None, data, src, dst, 0 if self.raw else address[1], self.port)

    def _destination(self, ancillary: list[tuple[int, int, bytes]]) -> bytes:
        """The packet's destination from its IP_PKTINFO / IPV6_PKTINFO (all zeros if the
        kernel gave none, which the SA lookup then does not match)."""
        for level, kind, data in ancillary:
            if level == self._level and kind == self._pktinfo:
                if self.family == socket.AF_INET:
                    return data[8:12]  # in_pktinfo: ifindex, spec_dst, then ipi_addr
                return data[:16]  # in6_pktinfo: ipi6_addr first
        return bytes(4 if self.family == socket.AF_INET else 16)

    def send(self, datagram: Datagram) -> None:
        """Send ``datagram.payload`` from its source address to its destination (and
        port). Raises OSError as the kernel refuses it."""
        if self.family == socket.AF_INET:
            info = _IN_PKTINFO.pack(0, datagram.src, bytes(4))
        else:
            info = _IN6_PKTINFO.pack(datagram.src, 0)
        host = socket.inet_ntop(self.family, datagram.dst)
        where = (host, 0 if self.raw else datagram.dport)
        self.sock.sendmsg([datagram.payload], [(self._level, self._pktinfo, info)], 0, where)


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
        if not raw:
            sock.bind(("0.0.0.0" if family == socket.AF_INET else "::", port))
    except BaseException:
        sock.close()
        raise
    return sock


def open_sockets(*, udp_port: int, raw: bool) -> list[EspSocket]:
    """The sockets of one kind, IPv4 and IPv6 where the host has it: UDP bound to
    ``udp_port``, or with ``raw`` raw ESP (espd opens both kinds with ``--raw-esp``: a UDP
    socket for SAs that carry NAT-T ports). An IPv6 socket the host refuses (no IPv6) is
    left out; an IPv4 one raises OSError (the caller names which kind)."""
    found: list[EspSocket] = []
    try:
        for family in (socket.AF_INET, socket.AF_INET6):
            try:
                found.append(EspSocket(family, raw=raw, port=udp_port))
            except OSError as error:
                if family == socket.AF_INET:
                    raise
                log.warning("no IPv6 %s socket: %s", "raw" if raw else "UDP", error)
    except BaseException:
        for sock in found:
            sock.close()
        raise
    return found
