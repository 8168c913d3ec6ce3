"""The KAME/Linux security policy extension: ``sadb_x_policy`` and its IPsec requests.

Not in RFC 2367 (it leaves policy out of scope, §1.2); this is the layout Linux's
``pfkeyv2.h`` gives and ipsec-tools' ``setkey spdadd`` sends. Each ``sadb_x_ipsecrequest``
gives its own length in *bytes* (not 64-bit words) and, in tunnel mode, is followed by the
tunnel's source and destination sockaddrs.
"""

import struct
from dataclasses import dataclass
from typing import ClassVar

from cryptoapi.pfkey.wire.constants import ExtType, IpsecDir, IpsecLevel, IpsecMode, PolicyType
from cryptoapi.pfkey.wire.framing import ExtSpec, malformed, padded, wrap
from cryptoapi.pfkey.wire.sockaddr import SockAddr, decode_sockaddr

_POLICY = struct.Struct("<HBBII")
_REQUEST = struct.Struct("<HHBBHII")


@dataclass(frozen=True, slots=True)
class IpsecRequest:
    """``sadb_x_ipsecrequest``: one transform of a policy (protocol, mode, level, reqid),
    with the tunnel endpoints when it has them."""

    proto: int
    mode: int = IpsecMode.TRANSPORT
    level: int = IpsecLevel.REQUIRE
    reqid: int = 0
    tunnel: tuple[SockAddr, SockAddr] | None = None

    def encode(self) -> bytes:
        addrs = b""
        if self.tunnel is not None:
            src, dst = self.tunnel
            addrs = src.encode() + dst.encode()
        size = padded(_REQUEST.size + len(addrs))
        head = _REQUEST.pack(size, self.proto, self.mode, self.level, 0, self.reqid, 0)
        return (head + addrs).ljust(size, b"\0")


@dataclass(frozen=True, slots=True)
class Policy:
    """``sadb_x_policy``: what to do with matching traffic, for which direction."""

    exttype: ClassVar[int] = ExtType.X_POLICY
    type: int = PolicyType.IPSEC
    dir: int = IpsecDir.OUTBOUND
    id: int = 0
    priority: int = 0
    requests: tuple[IpsecRequest, ...] = ()

    def encode(self) -> bytes:
        head = _POLICY.pack(self.type, self.dir, 0, self.id, self.priority)
        return wrap(ExtType.X_POLICY, head + b"".join(r.encode() for r in self.requests))


def _decode_request(data: bytes, offset: int, end: int, exttype: int) -> IpsecRequest:
    size, proto, mode, level, _, reqid, _ = _REQUEST.unpack_from(data, offset)
    if size < _REQUEST.size or offset + size > end:
        raise malformed(exttype, f"IPsec request length {size} does not fit")
    tunnel = None
    if size > _REQUEST.size:
        src = decode_sockaddr(data, offset + 16, offset + size, "IPsec request tunnel source")
        dst = decode_sockaddr(
            data, offset + 16 + src.size, offset + size, "IPsec request tunnel destination"
        )
        if src.family != dst.family:
            raise malformed(exttype, "IPsec request tunnel ends are of different families")
        tunnel = (src, dst)
    elif mode == IpsecMode.TUNNEL:
        raise malformed(exttype, "a tunnel-mode IPsec request has no tunnel addresses")
    return IpsecRequest(proto, mode, level, reqid, tunnel)


def _decode_policy(data: bytes, start: int, end: int, exttype: int) -> Policy:
    type_, direction, _, ident, priority = _POLICY.unpack_from(data, start + 4)
    requests = []
    offset = start + 16
    while end - offset >= _REQUEST.size:  # less than a request left is padding (as Linux)
        request = _decode_request(data, offset, end, exttype)
        requests.append(request)
        offset += _REQUEST.unpack_from(data, offset)[0]
    return Policy(type_, direction, ident, priority, tuple(requests))


SPECS: dict[int, ExtSpec] = {
    ExtType.X_POLICY: (16, _decode_policy, _decode_policy),
}
"""Extension type -> (minimum length, checker, decoder): see ``wire.ExtSpec``."""
