"""Which policy a packet falls under (RFC 4301 §4.4.1, §5.1), and which SA serves it.

Selectors match as Linux's ``xfrm_selector_match`` does: same family, source and
destination within their prefixes, the upper-layer protocol if the policy names one, and
each port if the policy names it (ICMP type and code stand in for ports). Among matching
policies of a direction the lowest ``sadb_x_policy_priority`` wins, then the earliest
(Linux keeps its lists in that order). A flow's answer is cached until the SPD changes
(its ``generation`` moves), so a packet costs one dict lookup; the cache is bounded.

An outbound SA for a policy's request is chosen as Linux's ``xfrm_state_find`` does: an
ESP SA between the request's tunnel endpoints (tunnel mode) or the packet's addresses
(transport), of the request's mode (an SA added without a mode counts as transport, as
Linux stores it) and reqid, MATURE before DYING, then the most recently added.
"""

from typing import NamedTuple

from cryptoapi.esp.ip import Flow
from cryptoapi.pfkey.db.sad import SADatabase, SecurityAssociation
from cryptoapi.pfkey.db.spd import SecurityPolicy, SPDatabase
from cryptoapi.pfkey.wire.constants import IpsecMode, SaState, SaType
from cryptoapi.pfkey.wire.policy import IpsecRequest

FLOW_CACHE = 4096
"""Flows remembered per direction before the cache starts over."""

FlowKey = tuple[int, bytes, bytes, int, int, int]


class _Compiled(NamedTuple):
    family: int
    src: int
    src_mask: int
    dst: int
    dst_mask: int
    proto: int
    sport: int
    dport: int
    policy: SecurityPolicy


def _mask(bits: int, prefix: int) -> int:
    return ((1 << prefix) - 1) << (bits - prefix) if prefix else 0


def _compile(policy: SecurityPolicy) -> _Compiled:
    bits = len(policy.src.addr) * 8
    src_mask = _mask(bits, policy.prefixlen_s)
    dst_mask = _mask(bits, policy.prefixlen_d)
    return _Compiled(
        policy.src.family,
        int.from_bytes(policy.src.addr, "big") & src_mask, src_mask,
        int.from_bytes(policy.dst.addr, "big") & dst_mask, dst_mask,
        policy.proto, policy.src.port, policy.dst.port, policy,
    )  # fmt: skip


def _matches(rule: _Compiled, flow: Flow) -> bool:
    return (
        rule.family == flow.family
        and int.from_bytes(flow.src, "big") & rule.src_mask == rule.src
        and int.from_bytes(flow.dst, "big") & rule.dst_mask == rule.dst
        and (not rule.proto or rule.proto == flow.proto)
        and (not rule.sport or rule.sport == flow.sport)
        and (not rule.dport or rule.dport == flow.dport)
    )


class PolicyLookup:
    """The policy of each flow in one direction of an SPD."""

    def __init__(self, spd: SPDatabase, direction: int) -> None:
        self._spd = spd
        self._direction = direction
        self._generation = -1
        self._rules: list[_Compiled] = []
        self._cache: dict[FlowKey, SecurityPolicy | None] = {}

    def find(self, flow: Flow) -> SecurityPolicy | None:
        """The policy ``flow`` falls under in this direction, or None."""
        if self._generation != self._spd.generation:
            self._recompile()
        key = flow[:6]
        try:
            return self._cache[key]
        except KeyError:
            pass
        found = next((rule.policy for rule in self._rules if _matches(rule, flow)), None)
        if len(self._cache) >= FLOW_CACHE:
            self._cache.clear()
        self._cache[key] = found
        return found

    def _recompile(self) -> None:
        ordered = [p for p in self._spd if p.dir == self._direction]
        ordered.sort(key=lambda p: p.priority)  # stable: insertion order among equals
        self._rules = [_compile(p) for p in ordered]
        self._cache.clear()
        self._generation = self._spd.generation


def sa_mode(sa: SecurityAssociation) -> int:
    """The SA's mode, an SA added without one counting as transport (as Linux stores it)."""
    return sa.mode or IpsecMode.TRANSPORT


def endpoints(request: IpsecRequest, flow: Flow) -> tuple[bytes, bytes]:
    """The (source, destination) packed addresses of the SA a request needs for ``flow``."""
    if request.mode == IpsecMode.TUNNEL and request.tunnel is not None:
        return request.tunnel[0].addr, request.tunnel[1].addr
    return flow.src, flow.dst


def select_sa(
    sad: SADatabase, request: IpsecRequest, src: bytes, dst: bytes
) -> SecurityAssociation | None:
    """The SA that serves ``request`` from ``src`` to ``dst``, or None."""
    best: SecurityAssociation | None = None
    for sa in sad.between(SaType.ESP, src, dst):
        if sa_mode(sa) != request.mode or sa.reqid != request.reqid:
            continue
        if sa.state not in (SaState.MATURE, SaState.DYING):
            continue
        if best is None or (best.state, -best.added) >= (sa.state, -sa.added):
            best = sa
    return best
