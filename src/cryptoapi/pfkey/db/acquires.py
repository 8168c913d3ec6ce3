"""Pending ACQUIREs (RFC 2367 §3.1.6): the SA requests key managers have not answered yet,
expiring as Linux's do and bounded, so no client can make the table grow."""

import collections
import errno

from cryptoapi.pfkey.errors import PfkeyError

ACQUIRE_EXPIRES = 30.0
"""Seconds a request waits for its GETSPI or cancel: Linux ``XFRM_ACQ_EXPIRES``, the default
of ``net.core.xfrm_acq_expires``, after which ``xfrm_timer_handler`` deletes the ACQ state."""
ACQUIRE_MAX = 1024
"""Requests pending at most. Linux has no global cap (one ACQ state per flow, and
``xfrm_state_find`` answers the flow's further packets with EAGAIN while it is pending), but
its states live in the kernel, not in a daemon any client can make grow: 1024 allows a
sustained 34 new requests a second for 30 s each, and costs under 0.5 MB when full."""

Pending = tuple[float, int, bytes, bytes]
"""A pending request: (deadline, satype, source and destination address extensions)."""


class Acquires:
    """The pending requests by ``sadb_msg_seq``, oldest first.

    Each expires ``expires`` seconds after it was made (by the manager's clock, so tests
    drive it); expired ones are dropped whenever the table is used, so none is ever seen and
    the table needs no timer. When ``limit`` are pending, a new request is refused with
    EAGAIN, as ``xfrm_state_find`` refuses a packet whose ACQUIRE is in progress: the older
    requests, which key managers may be answering already, are kept; the refused one can be
    made again once some are answered or expire. A repeated ``sadb_msg_seq`` replaces its
    request and starts its time again.
    """

    def __init__(self, limit: int = ACQUIRE_MAX, expires: float = ACQUIRE_EXPIRES) -> None:
        self.limit = limit
        self.expires = expires
        self.refused = 0
        """Requests refused because ``limit`` were pending."""
        self._pending: collections.OrderedDict[int, Pending] = collections.OrderedDict()

    def __len__(self) -> int:
        return len(self._pending)

    def add(self, seq: int, satype: int, source: bytes, destination: bytes, now: float) -> None:
        """Record a request made at ``now``; PfkeyError(EAGAIN) when ``limit`` are pending."""
        self.expire(now)
        self._pending.pop(seq, None)
        if len(self._pending) >= self.limit:
            self.refused += 1
            raise PfkeyError(
                errno.EAGAIN,
                f"{self.limit} ACQUIREs are pending: try again once some are answered "
                f"or expire (after {self.expires:g} s)",
            )
        self._pending[seq] = (now + self.expires, satype, source, destination)

    def pop(self, seq: int, default: None = None) -> Pending | None:
        """Remove and return the request ``seq`` (a GETSPI or a cancel answered it); None if
        there is none. (``default`` keeps ``dict.pop``'s form, which ``handlers`` uses.)"""
        return self._pending.pop(seq, default)

    def expire(self, now: float) -> None:
        """Drop the requests whose time is up at ``now`` (the oldest are first)."""
        pending = self._pending
        while pending and next(iter(pending.values()))[0] <= now:
            pending.popitem(last=False)
