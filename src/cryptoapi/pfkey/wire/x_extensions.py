"""The KAME/Linux extensions: ``sadb_x_sa2``, NAT-T type and ports, security context,
key-manager private data and address, and the dump filter (Linux ``pfkeyv2.h``); and
FreeBSD's ``sadb_x_sa_replay`` (``sys/net/pfkeyv2.h``), under its own number here.

These are not in RFC 2367; it allows them (§2.3: "extensions not specified in this document")
and Linux sends and accepts them. NAT-T ports are network order on the wire.
"""

import struct
from dataclasses import dataclass
from typing import ClassVar

from cryptoapi.pfkey.wire.constants import ExtType, IpsecMode
from cryptoapi.pfkey.wire.framing import ExtSpec, check_type, framed, malformed, padded, wrap
from cryptoapi.pfkey.wire.sockaddr import SockAddr, decode_sockaddr

SADB_X_SA2 = struct.Struct("<HHBBHII")
"""``sadb_x_sa2``: header, mode, two reserved, sequence, reqid."""
SA2_RECEIVED = 0x01
"""In ``sadb_x_sa2_reserved1``: the sequence number is one received (see :class:`Sa2`)."""
_NAT_T_TYPE = struct.Struct("<B3x")
_NAT_T_PORT = struct.Struct("<2sH")
_SEC_CTX = struct.Struct("<BBH")
_RESERVED = struct.Struct("<I")
_FILTER = struct.Struct("<16s16sHBB")
_SA_REPLAY = struct.Struct("<I")

MAX_SEC_CTX_LEN = 4096
"""Linux refuses a security context longer than a page (``verify_sec_ctx_len``)."""

NAT_T_PORTS = (ExtType.X_NAT_T_SPORT, ExtType.X_NAT_T_DPORT)


@dataclass(frozen=True, slots=True)
class Sa2:
    """``sadb_x_sa2``: the IPsec mode (transport, tunnel, BEET), the request id and
    ``sadb_x_sa2_sequence`` (KAME's dumps fill it; Linux leaves it 0).

    ``received``: bit 0 of ``sadb_x_sa2_reserved1`` (:data:`SA2_RECEIVED`), cryptoapi's own:
    ``sequence`` is the highest number an inbound SA received rather than the last one
    sent (espd's usage reports and keyd's dumps, :mod:`cryptoapi.pfkey.daemon.checkpoint`).
    Linux and KAME send the byte as 0 and ignore it."""

    exttype: ClassVar[int] = ExtType.X_SA2
    mode: int = IpsecMode.ANY
    reqid: int = 0
    sequence: int = 0
    received: bool = False

    def encode(self) -> bytes:
        flags = SA2_RECEIVED if self.received else 0
        return framed(SADB_X_SA2, ExtType.X_SA2, self.mode, flags, 0, self.sequence, self.reqid)


@dataclass(frozen=True, slots=True)
class NatTType:
    """``sadb_x_nat_t_type``: the UDP encapsulation type (RFC 3948; ESPINUDP is 2)."""

    exttype: ClassVar[int] = ExtType.X_NAT_T_TYPE
    type: int

    def encode(self) -> bytes:
        return wrap(ExtType.X_NAT_T_TYPE, _NAT_T_TYPE.pack(self.type))


@dataclass(frozen=True, slots=True)
class NatTPort:
    """``sadb_x_nat_t_port``: the NAT-T source or destination UDP port."""

    exttype: int
    port: int

    def encode(self) -> bytes:
        check_type(self.exttype, NAT_T_PORTS, "NatTPort")
        return wrap(self.exttype, _NAT_T_PORT.pack(self.port.to_bytes(2, "big"), 0))


@dataclass(frozen=True, slots=True)
class SecCtx:
    """``sadb_x_sec_ctx``: an LSM security context string (SELinux is ``alg`` 1)."""

    exttype: ClassVar[int] = ExtType.X_SEC_CTX
    alg: int
    doi: int
    context: bytes

    def encode(self) -> bytes:
        if len(self.context) > MAX_SEC_CTX_LEN:
            raise malformed(ExtType.X_SEC_CTX, f"context longer than {MAX_SEC_CTX_LEN} bytes")
        head = _SEC_CTX.pack(self.alg, self.doi, len(self.context))
        return wrap(ExtType.X_SEC_CTX, head + self.context)


@dataclass(frozen=True, slots=True)
class KmPrivate:
    """``sadb_x_kmprivate``: opaque key-manager data, kept as given."""

    exttype: ClassVar[int] = ExtType.X_KMPRIVATE
    data: bytes = b""

    def encode(self) -> bytes:
        return wrap(ExtType.X_KMPRIVATE, _RESERVED.pack(0) + self.data)


@dataclass(frozen=True, slots=True)
class KmAddress:
    """``sadb_x_kmaddress``: the local and remote addresses IKE uses (for MIGRATE)."""

    exttype: ClassVar[int] = ExtType.X_KMADDRESS
    local: SockAddr
    remote: SockAddr

    def encode(self) -> bytes:
        body = _RESERVED.pack(0) + self.local.encode() + self.remote.encode()
        return wrap(ExtType.X_KMADDRESS, body)


@dataclass(frozen=True, slots=True)
class Filter:
    """``sadb_x_filter``: restrict a DUMP to source/destination prefixes of one family.

    The addresses are the 16-byte wire fields (an IPv4 address fills the first 4); shorter
    ones are zero-padded when encoding, so they decode as 16 bytes."""

    exttype: ClassVar[int] = ExtType.X_FILTER
    family: int
    saddr: bytes = bytes(16)
    daddr: bytes = bytes(16)
    splen: int = 0
    dplen: int = 0

    def encode(self) -> bytes:
        saddr = self.saddr.ljust(16, b"\0")
        daddr = self.daddr.ljust(16, b"\0")
        if len(saddr) != 16 or len(daddr) != 16:
            raise malformed(ExtType.X_FILTER, "addresses are at most 16 bytes")
        body = _FILTER.pack(saddr, daddr, self.family, self.splen, self.dplen)
        return wrap(ExtType.X_FILTER, body)


@dataclass(frozen=True, slots=True)
class SaReplay:
    """``sadb_x_sa_replay`` (FreeBSD): ``u16 len`` (1), ``u16 exttype``, ``u32 replay``, the
    replay window in packets. It states a window ``sadb_sa_replay`` (8 bits) cannot: on
    ADD/UPDATE it overrides ``sadb_sa_replay``; GET and DUMP carry it for windows above
    255 (see :attr:`~cryptoapi.pfkey.wire.constants.ExtType.SA_REPLAY` for its number)."""

    exttype: ClassVar[int] = ExtType.SA_REPLAY
    replay: int

    def encode(self) -> bytes:
        return wrap(ExtType.SA_REPLAY, _SA_REPLAY.pack(self.replay))


def _decode_sa2(data: bytes, start: int, end: int, exttype: int) -> Sa2:
    _, _, mode, flags, _, sequence, reqid = SADB_X_SA2.unpack_from(data, start)
    return Sa2(mode, reqid, sequence, bool(flags & SA2_RECEIVED))


def _decode_nat_t_type(data: bytes, start: int, end: int, exttype: int) -> NatTType:
    return NatTType(_NAT_T_TYPE.unpack_from(data, start + 4)[0])


def _decode_nat_t_port(data: bytes, start: int, end: int, exttype: int) -> NatTPort:
    port = _NAT_T_PORT.unpack_from(data, start + 4)[0]
    return NatTPort(exttype, int.from_bytes(port, "big"))


def _check_sec_ctx(data: bytes, start: int, end: int, exttype: int) -> None:
    """Linux ``verify_sec_ctx_len``: at most a page, and the extension is exactly the header
    plus the padded context; EINVAL otherwise."""
    size = _SEC_CTX.unpack_from(data, start + 4)[2]
    if size > MAX_SEC_CTX_LEN:
        raise malformed(exttype, f"context of {size} bytes is longer than {MAX_SEC_CTX_LEN}")
    if end - start != padded(8 + size):
        raise malformed(exttype, f"is {end - start} bytes; a {size}-byte context needs more")


def _decode_sec_ctx(data: bytes, start: int, end: int, exttype: int) -> SecCtx:
    alg, doi, size = _SEC_CTX.unpack_from(data, start + 4)
    return SecCtx(alg, doi, data[start + 8 : start + 8 + size])


def _decode_kmprivate(data: bytes, start: int, end: int, exttype: int) -> KmPrivate:
    return KmPrivate(data[start + 8 : end])


def _decode_kmaddress(data: bytes, start: int, end: int, exttype: int) -> KmAddress:
    local = decode_sockaddr(data, start + 8, end, "X_KMADDRESS local")
    remote = decode_sockaddr(data, start + 8 + local.size, end, "X_KMADDRESS remote")
    if local.family != remote.family:
        raise malformed(exttype, "local and remote addresses are of different families")
    return KmAddress(local, remote)


def _decode_sa_replay(data: bytes, start: int, end: int, exttype: int) -> SaReplay:
    return SaReplay(_SA_REPLAY.unpack_from(data, start + 4)[0])


def _decode_filter(data: bytes, start: int, end: int, exttype: int) -> Filter:
    saddr, daddr, family, splen, dplen = _FILTER.unpack_from(data, start + 4)
    return Filter(family, saddr, daddr, splen, dplen)


SPECS: dict[int, ExtSpec] = {
    ExtType.X_KMPRIVATE: (8, None, _decode_kmprivate),
    ExtType.X_SA2: (16, None, _decode_sa2),
    ExtType.X_NAT_T_TYPE: (8, None, _decode_nat_t_type),
    ExtType.X_NAT_T_SPORT: (8, None, _decode_nat_t_port),
    ExtType.X_NAT_T_DPORT: (8, None, _decode_nat_t_port),
    ExtType.X_SEC_CTX: (8, _check_sec_ctx, _decode_sec_ctx),
    ExtType.X_KMADDRESS: (8, _decode_kmaddress, _decode_kmaddress),
    ExtType.X_FILTER: (40, None, _decode_filter),
    ExtType.SA_REPLAY: (8, None, _decode_sa_replay),
}
"""Extension type -> (minimum length, checker, decoder): see ``wire.ExtSpec``."""
