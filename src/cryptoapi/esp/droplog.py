"""Why packets are dropped, in words: one rate-limited log line per cause and SA or peer.

The data path counts every drop under Linux's ``xfrm_stat`` names (:mod:`.stats`), but a
counter says neither which SA nor why. For the drops an operator can fix (keys that differ,
SPIs that differ, a policy missing on one side) the data path also calls
:meth:`DropLog.report`, which writes one line naming the SA (SPI, peer) or the flow and the
likely reason::

    ICV failed on SPI 0x1001 from 198.51.100.2: keys differ?
    unknown SPI 0x2002 from 192.0.2.2: no SA here for it (SPIs differ, or it was deleted?)
    no outbound policy for 10.1.0.1 -> 10.9.0.1: packet passed in clear

Rate limit (as the kernel's ``net_ratelimit``, per cause rather than global): at most one
line per (cause, SA or peer) per ``interval`` seconds, and at most ``BURST`` lines per cause
per interval whatever the SAs or peers (a sender spraying SPIs gets ``BURST`` lines, not one
per packet). What was held back is counted and said on the next line for that cause and
SA or peer (``(12 more since the last such line)``). The check is one clock call and one
dict lookup, on the drop path only: an accepted packet never comes here. The line is built
only when it is written. Nothing here raises on packet content, and no payload byte is ever
logged: only SPIs, addresses and counts.
"""

import ipaddress
import logging
from collections.abc import Callable, Hashable

log = logging.getLogger(__name__)

INTERVAL = 10.0
"""Seconds between two lines for one cause and SA or peer."""
BURST = 10
"""Lines per cause per interval, whatever the SAs or peers."""
SLOTS = 4096
"""(cause, SA or peer) pairs remembered; past that the stale ones are forgotten."""

WORDS: dict[str, str] = {
    "XfrmInNoStates": "unknown SPI {0:#x} from {1}: no SA here for it "
    "(SPIs differ, or it was deleted?)",
    "XfrmInStateProtoError": "ICV failed on SPI {0:#x} from {1}: keys differ?",
    "EspInBadPadding": "bad ESP padding on SPI {0:#x} from {1} (the ICV was good): "
    "the peer's ESP is broken?",
    "XfrmInStateSeqError": "replayed or too old packet on SPI {0:#x} from {1}: "
    "the peer restarted its sequence numbers, or a replay?",
    "XfrmInNoPols": "no inbound policy for {0} -> {1} (SPI {2:#x} from {3}): packet dropped",
    "XfrmInTmplMismatch": "the inbound policy for {0} -> {1} does not accept SPI {2:#x} "
    "from {3} (mode, reqid or tunnel endpoints differ?): packet dropped",
    "EspInPlainRequired": "plaintext packet {0} -> {1} where the inbound policy requires "
    "ESP: packet dropped (the peer has no outbound policy?)",
    "EspOutNoPolicy": "no outbound policy for {0} -> {1}: packet {2}",
    "XfrmOutNoStates": "no SA for the outbound policy {0} -> {1} (an ACQUIRE went to the "
    "key managers): packet dropped",
}
"""What each reported cause means, with its details in order (addresses as text)."""


def shown(value: object) -> object:
    """A detail as the line shows it: packed IPv4/IPv6 addresses as text."""
    if isinstance(value, bytes) and len(value) in (4, 16):
        return str(ipaddress.ip_address(value))
    return value


class DropLog:
    """Rate-limited drop lines (see the module doc); ``clock`` is in seconds."""

    def __init__(self, clock: Callable[[], float], *, interval: float = INTERVAL) -> None:
        self.clock = clock
        self.interval = interval
        self._due: dict[tuple[str, Hashable], float] = {}
        self._held: dict[tuple[str, Hashable], int] = {}
        self._spilled: dict[str, int] = {}  # held back by the cause's BURST
        self._windows: dict[str, tuple[float, int]] = {}

    def report(self, cause: str, key: Hashable, *details: object) -> bool:
        """One drop of ``cause`` for the SA or peer ``key``: logged (True) unless a line
        for them, or ``BURST`` for the cause, went out within ``interval``."""
        now = self.clock()
        slot = (cause, key)
        if now < self._due.get(slot, now):  # a slot with a line: bounded by SLOTS
            self._held[slot] = self._held.get(slot, 0) + 1
            return False
        if not self._burst_allows(cause, now):  # counted per cause: a spray of SPIs or
            self._spilled[cause] = self._spilled.get(cause, 0) + 1  # peers adds no entry
            return False
        if len(self._due) >= SLOTS:
            self._forget(now)
        self._due[slot] = now + self.interval
        log.warning("%s%s", WORDS[cause].format(*map(shown, details)), self._held_text(slot, cause))
        return True

    def _burst_allows(self, cause: str, now: float) -> bool:
        """Room for one more line of ``cause`` in its current interval (and take it)."""
        start, lines = self._windows.get(cause, (now, 0))
        if now - start >= self.interval:
            start, lines = now, 0
        if lines >= BURST:
            return False
        self._windows[cause] = (start, lines + 1)
        return True

    def _held_text(self, slot: tuple[str, Hashable], cause: str) -> str:
        held = self._held.pop(slot, 0)
        spilled = self._spilled.pop(cause, 0)
        parts = [f"{held} more since the last such line"] if held else []
        if spilled:
            parts.append(f"{spilled} more of this kind for other SAs or peers")
        return f" ({'; '.join(parts)})" if parts else ""

    def _forget(self, now: float) -> None:
        """Keep the table bounded: the pairs whose interval is over go (all, if none is)."""
        self._due = {slot: due for slot, due in self._due.items() if due > now}
        if len(self._due) >= SLOTS:
            self._due.clear()
        self._held = {slot: n for slot, n in self._held.items() if slot in self._due}
