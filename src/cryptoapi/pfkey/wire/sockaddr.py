"""Socket addresses as PF_KEY carries them: Linux x86-64 ``sockaddr_in`` / ``sockaddr_in6``.

RFC 2367 §2.3.3 puts a ``struct sockaddr`` after each address extension. On Linux the family
is a host-order ``u16`` (AF_INET 2, AF_INET6 10); port, address and IPv6 flow label are in
network order; the IPv6 scope id is host order::

    sockaddr_in   (16 bytes): family u16 | port be16 | addr 4 | zero 8
    sockaddr_in6  (28 bytes): family u16 | port be16 | flowinfo be32 | addr 16 | scope_id u32
"""

import ipaddress
import struct
from dataclasses import dataclass

from cryptoapi.pfkey.errors import PfkeyError
from cryptoapi.pfkey.wire.constants import AF_INET, AF_INET6, E_MALFORMED

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_IN = struct.Struct("<H2s4s8x")  # port kept as raw bytes: it is big-endian
_IN6 = struct.Struct("<H2s4s16sI")
SOCKADDR_IN_LEN = _IN.size  # 16
SOCKADDR_IN6_LEN = _IN6.size  # 28
_BE16 = struct.Struct(">H")
_BE32 = struct.Struct(">I")
_FAMILY = struct.Struct("<H")

SOCKADDR_LEN = {AF_INET: SOCKADDR_IN_LEN, AF_INET6: SOCKADDR_IN6_LEN}
"""Unpadded sockaddr size per family."""
ADDR_LEN = {AF_INET: 4, AF_INET6: 16}
MAX_PREFIXLEN = {AF_INET: 32, AF_INET6: 128}


@dataclass(frozen=True, slots=True, repr=False)
class SockAddr:
    """An IPv4 or IPv6 socket address: ``addr`` is the packed address (4 or 16 bytes)."""

    family: int
    addr: bytes
    port: int = 0
    flowinfo: int = 0
    scope_id: int = 0

    @classmethod
    def of(cls, ip: "str | IPAddress | bytes", port: int = 0) -> "SockAddr":
        """The sockaddr of ``ip`` (text, :mod:`ipaddress` object or packed bytes)."""
        packed = to_packed(ip)
        family = AF_INET if len(packed) == 4 else AF_INET6
        if not 0 <= port <= 0xFFFF:
            raise PfkeyError(E_MALFORMED, f"port {port} is not in 0..65535")
        return cls(family, packed, port)

    @property
    def ip(self) -> IPAddress:
        """The address as an :mod:`ipaddress` object."""
        return ipaddress.ip_address(self.addr)

    @property
    def size(self) -> int:
        """The encoded size without padding: 16 (IPv4) or 28 (IPv6) bytes."""
        return SOCKADDR_LEN[self.family]

    def __repr__(self) -> str:
        if len(self.addr) in (4, 16):
            where = str(ipaddress.ip_address(self.addr))
        else:
            where = self.addr.hex()
        extra = "".join(
            f", {name}={value}"
            for name, value in (("flowinfo", self.flowinfo), ("scope_id", self.scope_id))
            if value
        )
        return f"SockAddr(family={self.family}, addr={where}, port={self.port}{extra})"

    def __str__(self) -> str:
        if self.family == AF_INET6:
            return f"[{self.ip}]:{self.port}" if self.port else str(self.ip)
        return f"{self.ip}:{self.port}" if self.port else str(self.ip)

    def encode(self) -> bytes:
        """The sockaddr bytes (16 or 28), unpadded."""
        port = _BE16.pack(self.port)
        if self.family == AF_INET and len(self.addr) == 4:
            return _IN.pack(AF_INET, port, self.addr)
        if self.family == AF_INET6 and len(self.addr) == 16:
            flow = _BE32.pack(self.flowinfo)
            return _IN6.pack(AF_INET6, port, flow, self.addr, self.scope_id)
        raise PfkeyError(
            E_MALFORMED, f"sockaddr family {self.family} with a {len(self.addr)}-byte address"
        )


def to_packed(ip: "str | IPAddress | bytes") -> bytes:
    """The packed form (4 or 16 bytes) of an address given as text, object or bytes."""
    if isinstance(ip, bytes):
        if len(ip) not in (4, 16):
            raise PfkeyError(E_MALFORMED, f"a packed address has 4 or 16 bytes, not {len(ip)}")
        return ip
    try:
        return ipaddress.ip_address(ip).packed
    except ValueError:
        raise PfkeyError(E_MALFORMED, f"{ip!r} is not an IPv4 or IPv6 address") from None


def peek_family(data: bytes, offset: int, end: int) -> int:
    """The ``sa_family`` at ``offset``, or -1 when fewer than 2 bytes remain."""
    if offset + 2 > end:
        return -1
    family: int = _FAMILY.unpack_from(data, offset)[0]
    return family


def decode_sockaddr(data: bytes, offset: int, end: int, what: str) -> SockAddr:
    """Decode the sockaddr at ``offset`` that must end by ``end``; EINVAL otherwise."""
    family = peek_family(data, offset, end)
    size = SOCKADDR_LEN.get(family)
    if size is None:
        raise PfkeyError(E_MALFORMED, f"{what}: address family {family} is not AF_INET/AF_INET6")
    if offset + size > end:
        raise PfkeyError(E_MALFORMED, f"{what}: {end - offset} bytes cannot hold a sockaddr")
    if family == AF_INET:
        _, port, addr = _IN.unpack_from(data, offset)
        return SockAddr(AF_INET, addr, int.from_bytes(port, "big"))
    _, port, flow, addr, scope = _IN6.unpack_from(data, offset)
    return SockAddr(AF_INET6, addr, int.from_bytes(port, "big"), int.from_bytes(flow, "big"), scope)
