"""The security policy database (SPD, RFC 4301 §4.4.1) as PF_KEY keeps it: KAME/Linux
``SADB_X_SPD*`` messages carrying ``sadb_x_policy`` (RFC 2367 leaves policy out, §1.2).

A policy is found by its direction and selector (addresses, prefix lengths, ports, upper-layer
protocol, security context), as Linux's ``xfrm_policy_insert`` and ``xfrm_policy_bysel_ctx``
compare them, or by its index (``sadb_x_policy_id``), which Linux numbers as a multiple of 8
plus the direction (``xfrm_gen_index``: in 0, out 1, fwd 2). Policies are kept in insertion
order and dumped newest first (``__xfrm_policy_link`` adds each at the head of the list
``xfrm_policy_walk`` follows; a policy SPDUPDATE replaces is a new one there, with the old
index); there is no packet path, so lifetimes are recorded but never expire. Every change
is noted in the database's :class:`~cryptoapi.pfkey.db.journal.Journal` once a reader keeps
one (``km_policy_notify``).

:func:`admit_policy` checks a message as Linux's ``pfkey_spdadd`` does, errno for errno:
no source or destination, different families, or no ``sadb_x_policy``: EINVAL; a policy type
above ``IPSEC`` (entrust, bypass) or a direction other than in/out/fwd: EINVAL; an IPsec
request with mode 0 (or unknown), a protocol other than AH/ESP/IPComp: EINVAL; more than
``XFRM_MAX_DEPTH`` (6) requests: ELOOP; a ``use`` request in tunnel or BEET mode in an
outbound policy: EINVAL (``parse_ipsecrequest``, as ``validate_tmpl`` refuses an optional
tunnel/BEET template outbound for XFRM). Unlike Linux, a request level above ``unique`` is
refused (EINVAL) rather than read as ``require``.

A request's level is kept as Linux's template shows it back (``parse_ipsecrequest`` makes
``use`` optional and gives ``unique`` its reqid; ``pfkey_xfrm_policy2msg`` shows anything
else as ``require``): ``default`` is kept as ``require``. Unlike Linux, a ``require`` or
``use`` request keeps the reqid it names (Linux drops it; setkey sends none there, and the
ESP data path here binds SAs by it). A ``unique`` request without one, or with one above
``IPSEC_MANUAL_REQID_MAX`` (0x3fff), gets the next free one from 0x4000 up
(:meth:`SPDatabase.unique_reqids`, ``gen_reqid``).

The header of every SPD message carries the policy's reference count in
``sadb_msg_reserved``, as ``pfkey_xfrm_policy2msg`` writes it: 1 in a dump (the SPD's own
reference: what Linux shows once the policy's one-second timer has run), 2 in the reply to
SPDADD, SPDUPDATE and SPDGET (the handler holds one more), 1 in that to SPDDELETE and
SPDDELETE2 (only the handler's is left).
"""

import errno
from collections.abc import Iterator
from dataclasses import dataclass, replace

from cryptoapi.pfkey.db.journal import Journal
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
IPSEC_MANUAL_REQID_MAX = 0x3FFF
"""The highest reqid a ``unique`` request may name; above it the SPD picks one."""
REQID_MAX = 0xFFFFFFFF
IN_SPD = 1
"""A policy's reference count at rest: the SPD's own reference."""
HELD = 2
"""Its count while a handler holds it too (SPDADD, SPDUPDATE, SPDGET)."""

DIRECTIONS = (IpsecDir.INBOUND, IpsecDir.OUTBOUND, IpsecDir.FWD)
REQUEST_PROTOCOLS = (IPPROTO_AH, IPPROTO_ESP, IPPROTO_COMP)
REQUEST_MODES = (IpsecMode.TRANSPORT, IpsecMode.TUNNEL, IpsecMode.BEET)

Selector = tuple[int, int, bytes, int, int, bytes, int, int, int, bytes]
"""(direction, family, source, source prefix, source port, destination, destination prefix,
destination port, upper-layer protocol (0 is any), security context extension or b"")."""


@dataclass(slots=True, eq=False, kw_only=True)
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

    def message(self, type_: int, seq: int, pid: int, *, refcnt: int = IN_SPD) -> Message:
        """The policy as Linux sends it (``pfkey_xfrm_policy2msg``): addresses, hard, soft
        and current lifetimes, the policy with its index, then the security context; the
        reference count ``refcnt`` in ``sadb_msg_reserved``."""
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
        return Message(type_, 0, seq, pid, 0, tuple(exts), reserved=refcnt)

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
    """A policy from an SPDADD/SPDUPDATE message (or a store), requests checked and kept as
    Linux keeps them (see the module docstring), or the PfkeyError refusing it."""
    policy = _checked(scan)
    requests = policy.requests if policy.type == PolicyType.IPSEC else ()
    if len(requests) > MAX_DEPTH:
        raise PfkeyError(errno.ELOOP, f"{len(requests)} IPsec requests; at most {MAX_DEPTH}")
    kept = tuple(_kept(request, policy.dir) for request in requests)
    return _record(scan, policy, kept, now)


def wanted_policy(scan: Scan, now: float) -> SecurityPolicy:
    """The direction and selector an SPDDELETE names, its requests unread (Linux
    ``pfkey_spddelete`` reads none), or the PfkeyError refusing it."""
    return _record(scan, _checked(scan), (), now)


def _checked(scan: Scan) -> Policy:
    addresses(scan)  # both present, one family (EINVAL otherwise)
    policy = policy_of(scan)
    if policy.type > PolicyType.IPSEC:
        raise invalid(f"policy type {policy.type} is not discard, none or ipsec")
    direction(policy)
    return policy


def _record(
    scan: Scan, policy: Policy, requests: tuple[IpsecRequest, ...], now: float
) -> SecurityPolicy:
    src = _address(scan, ExtType.ADDRESS_SRC)
    dst = _address(scan, ExtType.ADDRESS_DST)
    ctx = scan.decode(ExtType.X_SEC_CTX)
    return SecurityPolicy(
        index=policy.id, dir=policy.dir, type=policy.type, priority=policy.priority,
        src=src.addr, dst=dst.addr, prefixlen_s=src.prefixlen, prefixlen_d=dst.prefixlen,
        proto=0 if dst.proto == IPSEC_PROTO_ANY else dst.proto,
        requests=requests,
        hard=_lifetime(scan, ExtType.LIFETIME_HARD),
        soft=_lifetime(scan, ExtType.LIFETIME_SOFT),
        sec_ctx=ctx if isinstance(ctx, SecCtx) else None,
        added=now,
    )  # fmt: skip


def _kept(request: IpsecRequest, dir: int) -> IpsecRequest:
    """``request`` checked as ``parse_ipsecrequest`` checks it, as its template keeps it."""
    if request.proto not in REQUEST_PROTOCOLS:
        raise invalid(f"IPsec request protocol {request.proto} is not AH, ESP or IPComp")
    if request.mode not in REQUEST_MODES:
        raise invalid(f"IPsec request mode {request.mode} is not transport, tunnel or BEET")
    level = request.level
    if level > IpsecLevel.UNIQUE:
        raise invalid(f"IPsec request level {level} is not default/use/require/unique")
    tunnel_like = request.mode in (IpsecMode.TUNNEL, IpsecMode.BEET)
    if level == IpsecLevel.USE and tunnel_like and dir == IpsecDir.OUTBOUND:
        raise invalid(
            f"an outbound {IpsecMode(request.mode).name.lower()}-mode request cannot be "
            "'use' (optional): traffic would leave unprotected when the SA is missing"
        )
    if level == IpsecLevel.DEFAULT:
        return replace(request, level=IpsecLevel.REQUIRE)
    return request


def index_dir(index: int) -> int:
    """The ``sadb_x_policy_dir`` an index encodes (Linux ``xfrm_policy_id2dir`` + 1), EINVAL
    if it encodes none."""
    low = index & 7
    if low > 2:
        raise invalid(f"policy id {index:#x} names no direction")
    return low + 1


class SPDatabase:
    """The policies by index and by (direction, selector); ``len()``, iteration in order.

    ``journal`` (None until a store calls :meth:`track`) collects the indexes of the
    policies added, replaced or removed since the store last saved them."""

    def __init__(self) -> None:
        self.by_index: dict[int, SecurityPolicy] = {}
        self.by_selector: dict[Selector, SecurityPolicy] = {}
        self.journal: Journal[int] | None = None
        self.generation = 0
        """Counts every insert and removal (readers of derived state compare it)."""
        self._generator = 8
        self._reqid = IPSEC_MANUAL_REQID_MAX  # the last reqid unique_reqids gave

    def track(self) -> Journal[int]:
        """Note every change from now on, for a reader that stores the policies."""
        self.journal = Journal()
        return self.journal

    def unique_reqids(self, policy: SecurityPolicy) -> SecurityPolicy:
        """``policy`` with a reqid for each ``unique`` request that has none or one above
        ``IPSEC_MANUAL_REQID_MAX``: the next after the last one given that no policy uses,
        from 0x4000 up, wrapping there after 2^32 - 1 (Linux ``gen_reqid``); ENOBUFS when
        none is left."""
        wanted = [
            r.level == IpsecLevel.UNIQUE and not 0 < r.reqid <= IPSEC_MANUAL_REQID_MAX
            for r in policy.requests
        ]
        if not any(wanted):
            return policy
        used = {r.reqid for p in self.by_index.values() for r in p.requests}
        requests = tuple(
            replace(r, reqid=self._new_reqid(used)) if new else r
            for r, new in zip(policy.requests, wanted, strict=True)
        )
        return replace(policy, requests=requests)

    def _new_reqid(self, used: set[int]) -> int:
        for _ in range(len(used) + 1):  # a free one within as many steps as there are used
            self._reqid = self._reqid + 1 if self._reqid < REQID_MAX else IPSEC_MANUAL_REQID_MAX + 1
            if self._reqid not in used:
                used.add(self._reqid)
                return self._reqid
        raise PfkeyError(errno.ENOBUFS, "no reqid is left for a unique request")

    def __len__(self) -> int:
        return len(self.by_index)

    def __iter__(self) -> Iterator[SecurityPolicy]:
        return iter(list(self.by_index.values()))

    def find(self, selector: Selector) -> SecurityPolicy | None:
        return self.by_selector.get(selector)

    def insert(self, policy: SecurityPolicy, *, replacing: SecurityPolicy | None = None) -> None:
        """Add ``policy`` with the index it carries if that is free (restored from a store,
        or copied from another key manager's SPD), else the index of the policy it
        replaces, else a new one."""
        if replacing is not None:  # the new policy is the newest (__xfrm_policy_link)
            del self.by_selector[replacing.selector]
            del self.by_index[replacing.index]
        if policy.index and policy.index not in self.by_index:
            self._generator = max(self._generator, (policy.index | 7) + 1)
        elif replacing is not None:
            policy.index = replacing.index
        else:
            policy.index = self._generator | (policy.dir - 1)
            self._generator += 8
        self.by_index[policy.index] = policy
        self.by_selector[policy.selector] = policy
        self.generation += 1
        if self.journal is not None:  # the newest: stored after every other (and so restored)
            if replacing is not None and replacing.index != policy.index:
                self.journal.note(replacing.index)
            self.journal.note_newest(policy.index, replaced=replacing is not None)

    def remove(self, policy: SecurityPolicy) -> None:
        del self.by_index[policy.index]
        del self.by_selector[policy.selector]
        self.generation += 1
        if self.journal is not None:
            self.journal.note(policy.index)
