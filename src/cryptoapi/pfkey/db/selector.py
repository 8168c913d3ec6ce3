"""Which policy a packet falls under (RFC 4301 §4.4.1, §5.1): Linux's
``xfrm_selector_match`` and ``xfrm_policy_lookup``, kept beside the SPD as Linux keeps them
in ``xfrm_policy.c``.

Selectors match as ``xfrm_selector_match`` does: same family, source and destination
within their prefixes, the upper-layer protocol if the policy names one, and each port if
the policy names it (ICMP type and code stand in for ports). Among matching policies of a
direction the lowest ``sadb_x_policy_priority`` wins, then the earliest (Linux keeps its
lists in that order). A :class:`PolicyTable` compiles a direction's selectors into masks
and integers once per change of the SPD (its ``generation``); a caller that sees many
packets of one flow caches the answers itself (the ESP data path:
:mod:`cryptoapi.esp.policies`).
"""

from typing import NamedTuple, Protocol

from cryptoapi.pfkey.db.spd import SecurityPolicy, SPDatabase


class Selector(Protocol):
    """What selectors look at in a packet (Linux's ``struct flowi``); the ESP data path's
    :class:`~cryptoapi.esp.ip.Flow` is one."""

    @property
    def family(self) -> int: ...
    @property
    def src(self) -> bytes: ...  # packed address
    @property
    def dst(self) -> bytes: ...
    @property
    def proto(self) -> int: ...  # upper-layer protocol
    @property
    def sport(self) -> int: ...  # 0 when the protocol has no ports
    @property
    def dport(self) -> int: ...


class CompiledSelector(NamedTuple):
    """A policy's selector as masks and integers, compared with a packet's at once."""

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


def _compile(policy: SecurityPolicy) -> CompiledSelector:
    bits = len(policy.src.addr) * 8
    src_mask = _mask(bits, policy.prefixlen_s)
    dst_mask = _mask(bits, policy.prefixlen_d)
    return CompiledSelector(
        policy.src.family,
        int.from_bytes(policy.src.addr, "big") & src_mask, src_mask,
        int.from_bytes(policy.dst.addr, "big") & dst_mask, dst_mask,
        policy.proto, policy.src.port, policy.dst.port, policy,
    )  # fmt: skip


def selector_match(rule: CompiledSelector, flow: Selector) -> bool:
    """Linux ``xfrm_selector_match``: ``flow`` falls under the compiled selector ``rule``."""
    return (
        rule.family == flow.family
        and int.from_bytes(flow.src, "big") & rule.src_mask == rule.src
        and int.from_bytes(flow.dst, "big") & rule.dst_mask == rule.dst
        and (not rule.proto or rule.proto == flow.proto)
        and (not rule.sport or rule.sport == flow.sport)
        and (not rule.dport or rule.dport == flow.dport)
    )


class PolicyTable:
    """The policies of one direction of an SPD, in the order they are matched."""

    def __init__(self, spd: SPDatabase, direction: int) -> None:
        self._spd = spd
        self._direction = direction
        self._generation = -1
        self._rules: list[CompiledSelector] = []

    def lookup(self, flow: Selector) -> SecurityPolicy | None:
        """Linux ``xfrm_policy_lookup``: the policy ``flow`` falls under in this
        direction, or None."""
        if self._generation != self._spd.generation:
            self._recompile()
        return next((rule.policy for rule in self._rules if selector_match(rule, flow)), None)

    def _recompile(self) -> None:
        ordered = [p for p in self._spd if p.dir == self._direction]
        ordered.sort(key=lambda p: p.priority)  # stable: insertion order among equals
        self._rules = [_compile(p) for p in ordered]
        self._generation = self._spd.generation
