"""The data path's flow cache over the SPD: which policy each flow falls under, looked up
once per flow (RFC 4301 §4.4.1, §5.1).

Matching and ordering are the SPD's (:mod:`cryptoapi.pfkey.db.selector`, Linux's
``xfrm_selector_match`` and ``xfrm_policy_lookup``), and so is the choice of an SA for a
request (:mod:`cryptoapi.pfkey.db.statefind`, ``xfrm_state_find``; its names are importable
from here too, as they were before they moved). This module keeps what only a data path
needs: a flow's answer is cached until the SPD changes (its ``generation`` moves), so a
packet costs one dict lookup; the cache is bounded.
"""

from cryptoapi.esp.ip import Flow
from cryptoapi.pfkey.db.selector import PolicyTable
from cryptoapi.pfkey.db.spd import SecurityPolicy, SPDatabase
from cryptoapi.pfkey.db.statefind import endpoints, sa_mode, select_sa

__all__ = ["FLOW_CACHE", "FlowKey", "PolicyLookup", "endpoints", "sa_mode", "select_sa"]

FLOW_CACHE = 4096
"""Flows remembered per direction before the cache starts over."""

FlowKey = tuple[int, bytes, bytes, int, int, int]


class PolicyLookup:
    """The policy of each flow in one direction of an SPD."""

    def __init__(self, spd: SPDatabase, direction: int) -> None:
        self._spd = spd
        self._table = PolicyTable(spd, direction)
        self._generation = -1
        self._cache: dict[FlowKey, SecurityPolicy | None] = {}

    def find(self, flow: Flow) -> SecurityPolicy | None:
        """The policy ``flow`` falls under in this direction, or None."""
        if self._generation != self._spd.generation:
            self._cache.clear()
            self._generation = self._spd.generation
        key = flow[:6]
        try:
            return self._cache[key]
        except KeyError:
            pass
        found = self._table.lookup(flow)
        if len(self._cache) >= FLOW_CACHE:
            self._cache.clear()
        self._cache[key] = found
        return found
