"""espd's usage reports to keyd: each SA's bytes, packets, first use and last sequence
number, as ``ip -s xfrm state`` shows a kernel SA's, in keyd's ``setkey -D`` too.

The data path counts per packet on the SA record (``nbytes``, ``allocations``, ``used``)
and in its state (``seq`` sent, the replay window's ``top`` received); nothing here runs
per packet. Every ``interval`` seconds (:data:`REPORT_INTERVAL`), and once more at exit,
:meth:`UsageReports.send` compares each SA's usage with what keyd last took and sends an
``X_USAGE`` (:data:`~cryptoapi.pfkey.wire.constants.MsgType.X_USAGE`) for each SA that
moved, through the same non-blocking ``forward`` as the data path's notices
(:mod:`.notices`), after them. A report is made when it is sent, not queued: one keyd's
socket has no room for now stays "moved" and goes at the next turn, so a keyd that is not
reading costs no memory here and never pushes out an EXPIRE. After a reconnection every SA
with usage is reported again (a keyd that restarted from its state file has the usage of
its last write, at most a few seconds old, and never lowers what it has).

These reports are also the key daemon's sequence-number checkpoints
(:mod:`cryptoapi.pfkey.daemon.checkpoint`): every T = ``interval`` seconds, and at once
(:meth:`UsageReports.checkpoint`, at the end of the turn) when an outbound SA has sent
another N packets: espd's local floor file calls it at each reservation, one every ``step``
packets of an SA (:attr:`~cryptoapi.esp.seqfloor.SequenceFloors.on_reserve`), so the
trigger costs nothing per packet.
"""

import os
import time
from collections.abc import Callable, Iterator, Mapping

from cryptoapi.esp.state import EspState
from cryptoapi.pfkey.db.sad import SaKey
from cryptoapi.pfkey.km import replies
from cryptoapi.pfkey.km.manager import KeyManager
from cryptoapi.pfkey.wire.constants import SaState

REPORT_INTERVAL = 2.0
"""Seconds between two reports of an SA's usage (keyd writes usage every 5 s)."""

Usage = tuple[int, int, float, int]
"""(bytes, packets, first use, last sequence number): what keyd was last told."""


def last_sequence(state: EspState | None) -> tuple[int, bool]:
    """The SA's checkpoint: (its last sequence number sent, False) for an SA that has sent,
    else (the highest received, True); (0, False) for an SA without state."""
    if state is None or state.seq:
        return (0 if state is None else state.seq), False
    return state.replay.top, True


class UsageReports:
    """What keyd has been told of each SA's usage, and the reports of what moved since."""

    def __init__(
        self,
        key_manager: KeyManager,
        states: Callable[[], Mapping[SaKey, EspState]],
        connection: Callable[[], int | None],
        *,
        interval: float = REPORT_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.key_manager = key_manager
        self.states = states
        self.connection = connection
        """The key daemon connection's number, None while it is away (Follower.connection)."""
        self.interval = interval
        self.clock = clock
        self.reported: dict[SaKey, Usage] = {}
        self.sent = 0
        """Reports keyd's socket took, in all."""
        self._due = clock() + interval
        self._connection: int | None = None
        self._pid = os.getpid()

    def checkpoint(self) -> None:
        """Make the next report due now (an SA sent another N packets)."""
        self._due = float("-inf")

    def send(self, forward: Callable[[bytes], bool], *, final: bool = False) -> int:
        """Send the due reports (all that moved, if ``final``) while ``forward`` takes
        them; how many it took. Nothing while keyd is away or before the interval is over."""
        connection = self.connection()
        if connection is None or not (final or self.clock() >= self._due):
            return 0
        if connection != self._connection:  # a new connection: keyd hears everything again
            self.reported.clear()
            self._connection = connection
        taken = 0
        for key, usage, message in self._moved():
            if not forward(message):
                return taken  # no room now: the rest is still "moved" at the next turn
            self.reported[key] = usage
            taken += 1
        self.sent += taken
        self._due = self.clock() + self.interval
        self._forget_gone()
        return taken

    def _forget_gone(self) -> None:
        """Drop what was reported of SAs no longer in the database."""
        by_key = self.key_manager.sad.by_key
        for key in [key for key in self.reported if key not in by_key]:
            del self.reported[key]

    def _moved(self) -> Iterator[tuple[SaKey, Usage, bytes]]:
        """(key, usage, X_USAGE) for each usable SA whose usage moved since reported."""
        states = self.states()
        reported = self.reported
        for key, sa in self.key_manager.sad.by_key.items():
            if not sa.allocations or sa.state == SaState.LARVAL:
                continue
            state = states.get(key)
            sequence, received = last_sequence(
                state if state is not None and state.sa is sa else None
            )
            usage = (sa.nbytes, sa.allocations, sa.used, sequence)
            if reported.get(key) != usage:
                yield key, usage, replies.usage(sa, 0, self._pid, sequence, received=received)
