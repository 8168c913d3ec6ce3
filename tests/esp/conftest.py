"""Shared helpers for the ESP tests: plaintext packets built here (not by the data path's
own ``cryptoapi.esp.ip``, so a shared mistake cannot hide), the change of the data path's
counters across a call, and (white box) an SA's sequence-number state."""

import ipaddress
import struct
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from cryptoapi.esp import Datapath
from cryptoapi.esp.state import EspState
from cryptoapi.pfkey import KeyManager

IPPROTO_UDP = 17

_V4 = struct.Struct(">BBHHHBBH4s4s")
_V6 = struct.Struct(">IHBB16s16s")
_UDP = struct.Struct(">HHHH")


def internet_checksum(data: bytes) -> int:
    """RFC 1071, word by word."""
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f">{len(data) // 2}H", data))
    while total > 0xFFFF:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def packed(ip: str) -> bytes:
    return ipaddress.ip_address(ip).packed


def ip_packet(
    src: str, dst: str, proto: int, payload: bytes, *, ttl: int = 64, ident: int = 0x1234
) -> bytes:
    """An IPv4 (DF set, no options) or IPv6 (flow label 0) packet carrying ``payload``."""
    source, destination = packed(src), packed(dst)
    if len(source) == 4:
        length = 20 + len(payload)
        head = _V4.pack(0x45, 0, length, ident, 0x4000, ttl, proto, 0, source, destination)
        head = head[:10] + internet_checksum(head).to_bytes(2, "big") + head[12:]
        return head + payload
    return _V6.pack(0x6 << 28, len(payload), proto, ttl, source, destination) + payload


def udp_packet(src: str, dst: str, payload: bytes, sport: int = 40000, dport: int = 5001) -> bytes:
    """A UDP datagram in IPv4 or IPv6 with its checksum (RFC 768, RFC 8200 §8.1)."""
    source, destination = packed(src), packed(dst)
    length = 8 + len(payload)
    if len(source) == 4:
        pseudo = source + destination + struct.pack(">BBH", 0, IPPROTO_UDP, length)
    else:
        pseudo = source + destination + struct.pack(">I3xB", length, IPPROTO_UDP)
    header = _UDP.pack(sport, dport, length, 0)
    checksum = internet_checksum(pseudo + header + payload) or 0xFFFF
    return ip_packet(src, dst, IPPROTO_UDP, _UDP.pack(sport, dport, length, checksum) + payload)


def payloads() -> list[bytes]:
    """UDP payloads whose lengths give every padding length a 16-byte block can need
    (with the 28 or 48 bytes of IP and UDP header in tunnel mode, 8 in transport), and
    one of several blocks."""
    return [bytes((i * 7 + n) & 0xFF for i in range(n)) for n in (0, 1, 2, 3, 13, 14, 15, 16, 300)]


@contextmanager
def counted(stats: Callable[[], dict[str, int]]) -> Iterator[dict[str, int]]:
    """The change of every counter across the ``with`` block (filled in on exit)."""
    before = stats()
    delta: dict[str, int] = {}
    yield delta
    after = stats()
    delta.update({name: after[name] - before.get(name, 0) for name in after})
    delta.update({name: 0 for name in before if name not in after})


def sa_state(
    datapath: Datapath, key_manager: KeyManager, spi: int, dst: str | None = None
) -> EspState:
    """The data path's own state of the SA with ``spi`` (its last sequence number ``seq``,
    its ``replay`` window), to put an SA where only 2^32 packets would otherwise bring it."""
    found = [
        sa
        for sa in key_manager.sad
        if sa.spi == spi and (dst is None or sa.dst == ipaddress.ip_address(dst).packed)
    ]
    assert len(found) == 1, f"{len(found)} SAs have SPI {spi:#x} (to {dst or 'anywhere'})"
    return datapath.state_of(found[0])
