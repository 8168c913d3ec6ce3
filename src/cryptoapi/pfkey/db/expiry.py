"""SA lifetimes: when the soft and hard limits are reached (RFC 2367 §2.3.2, §3.1.8).

A lifetime limits bytes, allocations, seconds since the SA was added and seconds since its
first use; zero means no limit. Reaching a soft limit makes the SA DYING and sends an EXPIRE
with the soft lifetime; reaching a hard limit deletes the SA and sends an EXPIRE with the
hard lifetime. Soft always comes before hard for the same SA.

Time limits are timers in one heap ordered by (deadline, soft before hard), so checking
whether anything is due is O(1). A timer remembers the SA and its ``epoch``; when the SA is
gone or its lifetimes changed since, the timer is stale and is dropped. LARVAL SAs (from
GETSPI) time out silently, as Linux's do (``XFRM_ACQ_EXPIRES``).
"""

import heapq
import itertools
from dataclasses import dataclass, field

from cryptoapi.pfkey.db.sad import SecurityAssociation
from cryptoapi.pfkey.wire.extensions import Lifetime

SOFT = 0
HARD = 1
LARVAL = 2

Timer = tuple[float, int, int, SecurityAssociation, int]
"""(deadline, kind, tie-breaker, SA, the SA's epoch when set)."""


@dataclass
class Timers:
    """The pending time limits of every SA."""

    heap: list[Timer] = field(default_factory=list)
    _order: "itertools.count[int]" = field(default_factory=itertools.count)

    def __len__(self) -> int:
        return len(self.heap)

    def at(self, deadline: float, kind: int, sa: SecurityAssociation) -> None:
        heapq.heappush(self.heap, (deadline, kind, next(self._order), sa, sa.epoch))

    def added(self, sa: SecurityAssociation) -> None:
        """Set the add-time limits of a new (or newly updated) SA."""
        for kind, lifetime in ((SOFT, sa.soft), (HARD, sa.hard)):
            if lifetime is not None and lifetime.addtime:
                self.at(sa.added + lifetime.addtime, kind, sa)

    def first_use(self, sa: SecurityAssociation) -> None:
        """Set the use-time limits, counted from the SA's first use."""
        for kind, lifetime in ((SOFT, sa.soft), (HARD, sa.hard)):
            if lifetime is not None and lifetime.usetime:
                self.at(sa.used + lifetime.usetime, kind, sa)

    def due(self, now: float) -> list[tuple[int, SecurityAssociation]]:
        """The (kind, SA) of every timer due at ``now``, earliest first (stale ones too:
        the caller checks the SA is still current)."""
        heap = self.heap
        if not heap or heap[0][0] > now:
            return []
        fired = []
        while heap and heap[0][0] <= now:
            _, kind, _, sa, epoch = heapq.heappop(heap)
            if sa.epoch == epoch:
                fired.append((kind, sa))
        return fired

    def clear(self) -> None:
        self.heap.clear()


def over(limit: Lifetime | None, sa: SecurityAssociation) -> bool:
    """Whether ``sa``'s usage has reached the byte or allocation limit of ``limit``."""
    if limit is None:
        return False
    return bool(
        (limit.nbytes and sa.nbytes >= limit.nbytes)
        or (limit.allocations and sa.allocations >= limit.allocations)
    )
