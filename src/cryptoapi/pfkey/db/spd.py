"""The security policy database (SPD, RFC 4301 §4.4.1) as PF_KEY keeps it: KAME/Linux
``SADB_X_SPD*`` messages carrying ``sadb_x_policy`` (RFC 2367 leaves policy out, §1.2).

A policy is found by its direction and selector (addresses, prefix lengths, ports, upper-layer
protocol, security context), as Linux's ``xfrm_policy_insert`` and ``xfrm_policy_bysel_ctx``
compare them, or by its index (``sadb_x_policy_id``), which Linux numbers as a multiple of 8
plus the direction (``xfrm_gen_index``: in 0, out 1, fwd 2). Policies are kept and dumped in
insertion order; there is no packet path, so lifetimes are recorded but never expire.

:func:`admit_policy` checks a message as Linux's ``pfkey_spdadd`` does, errno for errno:
no source or destination, different families, or no ``sadb_x_policy``: EINVAL; a policy type
above ``IPSEC`` (entrust, bypass) or a direction other than in/out/fwd: EINVAL; an IPsec
request with mode 0 (or unknown), a protocol other than AH/ESP/IPComp: EINVAL; more than
``XFRM_MAX_DEPTH`` (6) requests: ELOOP. Unlike Linux, a request level above ``unique`` is
refused (EINVAL) rather than read as ``require``.
"""

import errno
from collections.abc import Iterator
from dataclasses import dataclass

from cryptoapi.pfkey.errors import PfkeyError
from cryptoapi.pfkey.wire.constants import (
    IPPROTO_AH,
    IPPROTO_COMP,
    IPPROTO_ESP,
    IPSEC_PROTO_ANY,
    ExtType,
    IpsecDir,
    IpsecLevel,
    IpsecMode,
    PolicyType,
)
from cryptoapi.pfkey.wire.extensions import Address, Lifetime
from cryptoapi.pfkey.wire.framing import Extension, invalid
from cryptoapi.pfkey.wire.message import Message, Scan, addresses
from cryptoapi.pfkey.wire.policy import IpsecRequest, Policy
from cryptoapi.pfkey.wire.sockaddr import SockAddr
from cryptoapi.pfkey.wire.x_extensions import SecCtx

MAX_DEPTH = 6
"""At most this many IPsec requests (transforms) per policy (Linux ``XFRM_MAX_DEPTH``)."""

DIRECTIONS = (IpsecDir.INBOUND, IpsecDir.OUTBOUND, IpsecDir.FWD)
REQUEST_PROTOCOLS = (IPPROTO_AH, IPPROTO_ESP, IPPROTO_COMP)
REQUEST_MODES = (IpsecMode.TRANSPORT, IpsecMode.TUNNEL, IpsecMode.BEET)

Selector = tuple[int, int, bytes, int, int, bytes, int, int, int, bytes]
"""(direction, family, source, source prefix, source port, destination, destination prefix,
destination port, upper-layer protocol (0 is any), security context extension or b"")."""


@dataclass(slots=True, eq=False)
class SecurityPolicy:
    """One policy. Owned by its database: read it, do not change it."""

    index: int  # sadb_x_policy_id; 0 until the database numbers it
    dir: int
    type: int
    priority: int
    src: SockAddr  # with the selector's source port
    dst: SockAddr
    prefixlen_s: int
    prefixlen_d: int
    proto: int  # upper-layer protocol, 0 for any (Linux's xfrm form)
    requests: tuple[IpsecRequest, ...]
    hard: Lifetime | None
    soft: Lifetime | None
    sec_ctx: SecCtx | None
    added: float

    @property
    def selector(self) -> Selector:
        ctx = self.sec_ctx.encode() if self.sec_ctx is not None else b""
        return (
            self.dir, self.src.family,
            self.src.addr, self.prefixlen_s, self.src.port,
            self.dst.addr, self.prefixlen_d, self.dst.port,
            self.proto, ctx,
        )  # fmt: skip

    def message(self, type_: int, seq: int, pid: int) -> Message:
        """The policy as Linux sends it (``pfkey_xfrm_policy2msg``): addresses, hard, soft
        and current lifetimes, the policy with its index, then the security context."""
        proto = self.proto or IPSEC_PROTO_ANY
        exts: list[Extension] = [
            Address(ExtType.ADDRESS_SRC, self.src, proto, self.prefixlen_s),
            Address(ExtType.ADDRESS_DST, self.dst, proto, self.prefixlen_d),
            self.hard or Lifetime(ExtType.LIFETIME_HARD),
            self.soft or Lifetime(ExtType.LIFETIME_SOFT),
            Lifetime(ExtType.LIFETIME_CURRENT, 0, 0, int(self.added), 0),
            Policy(self.type, self.dir, self.index, self.priority, self.requests),
        ]
        if self.sec_ctx is not None:
            exts.append(self.sec_ctx)
        return Message(type_, 0, seq, pid, 0, tuple(exts))

    def __repr__(self) -> str:
        return (
            f"SecurityPolicy(index={self.index}, dir={self.dir}, type={self.type}, "
            f"{self.src}/{self.prefixlen_s} -> {self.dst}/{self.prefixlen_d}, "
            f"proto={self.proto}, requests={len(self.requests)})"
        )


def _address(scan: Scan, exttype: int) -> Address:
    """The address extension, its sockaddr reduced to family, address and port (Linux
    keeps no flow label or scope in a selector)."""
    found = scan.decode(exttype)
    assert isinstance(found, Address)  # addresses() checked it is there
    addr = found.addr
    return Address(
        exttype, SockAddr(addr.family, addr.addr, addr.port), found.proto, found.prefixlen
    )


def _lifetime(scan: Scan, exttype: int) -> Lifetime | None:
    found = scan.decode(exttype)
    return found if isinstance(found, Lifetime) else None


def policy_of(scan: Scan) -> Policy:
    """The ``sadb_x_policy`` of a message (EINVAL without one)."""
    found = scan.decode(ExtType.X_POLICY)
    if not isinstance(found, Policy):
        raise invalid("the message needs an X_POLICY extension")
    return found


def direction(policy: Policy) -> int:
    """The policy's direction, if it is in, out or fwd (else EINVAL)."""
    if policy.dir not in DIRECTIONS:
        raise invalid(f"policy direction {policy.dir} is not in (1), out (2) or fwd (3)")
    return policy.dir


def admit_policy(scan: Scan, now: float) -> SecurityPolicy:
    """A policy from an SPDADD/SPDUPDATE/SPDDELETE message, or the PfkeyError refusing it."""
    addresses(scan)  # both present, one family (EINVAL otherwise)
    policy = policy_of(scan)
    if policy.type > PolicyType.IPSEC:
        raise invalid(f"policy type {policy.type} is not discard, none or ipsec")
    direction(policy)
    requests = policy.requests if policy.type == PolicyType.IPSEC else ()
    if len(requests) > MAX_DEPTH:
        raise PfkeyError(errno.ELOOP, f"{len(requests)} IPsec requests; at most {MAX_DEPTH}")
    for request in requests:
        _check_request(request)
    src = _address(scan, ExtType.ADDRESS_SRC)
    dst = _address(scan, ExtType.ADDRESS_DST)
    ctx = scan.decode(ExtType.X_SEC_CTX)
    return SecurityPolicy(
        policy.id, policy.dir, policy.type, policy.priority,
        src.addr, dst.addr, src.prefixlen, dst.prefixlen,
        0 if dst.proto == IPSEC_PROTO_ANY else dst.proto,
        requests,
        _lifetime(scan, ExtType.LIFETIME_HARD), _lifetime(scan, ExtType.LIFETIME_SOFT),
        ctx if isinstance(ctx, SecCtx) else None,
        now,
    )  # fmt: skip


def _check_request(request: IpsecRequest) -> None:
    if request.proto not in REQUEST_PROTOCOLS:
        raise invalid(f"IPsec request protocol {request.proto} is not AH, ESP or IPComp")
    if request.mode not in REQUEST_MODES:
        raise invalid(f"IPsec request mode {request.mode} is not transport, tunnel or BEET")
    if request.level > IpsecLevel.UNIQUE:
        raise invalid(f"IPsec request level {request.level} is not default/use/require/unique")


def index_dir(index: int) -> int:
    """The ``sadb_x_policy_dir`` an index encodes (Linux ``xfrm_policy_id2dir`` + 1), EINVAL
    if it encodes none."""
    low = index & 7
    if low > 2:
        raise invalid(f"policy id {index:#x} names no direction")
    return low + 1


class SPDatabase:
    """The policies by index and by (direction, selector); ``len()``, iteration in order.

    ``changed`` (None unless a store asks for it) collects the indexes of the policies added,
    replaced or removed since the store last saved them."""

    def __init__(self) -> None:
        self.by_index: dict[int, SecurityPolicy] = {}
        self.by_selector: dict[Selector, SecurityPolicy] = {}
        self.changed: set[int] | None = None
        self.generation = 0
        """Counts every insert and removal (readers of derived state compare it)."""
        self._generator = 8

    def __len__(self) -> int:
        return len(self.by_index)

    def __iter__(self) -> Iterator[SecurityPolicy]:
        return iter(list(self.by_index.values()))

    def find(self, selector: Selector) -> SecurityPolicy | None:
        return self.by_selector.get(selector)

    def insert(self, policy: SecurityPolicy, *, replacing: SecurityPolicy | None = None) -> None:
        """Add ``policy`` (numbered now unless it replaces one, whose index it takes)."""
        if replacing is not None:
            policy.index = replacing.index
            del self.by_selector[replacing.selector]
        elif policy.index == 0 or policy.index in self.by_index:
            policy.index = self._generator | (policy.dir - 1)
            self._generator += 8
        else:  # restored from a store: keep its index, number new ones after it
            self._generator = max(self._generator, (policy.index | 7) + 1)
        self.by_index[policy.index] = policy
        self.by_selector[policy.selector] = policy
        self.generation += 1
        if self.changed is not None:
            self.changed.add(policy.index)

    def remove(self, policy: SecurityPolicy) -> None:
        del self.by_index[policy.index]
        del self.by_selector[policy.selector]
        self.generation += 1
        if self.changed is not None:
            self.changed.add(policy.index)
