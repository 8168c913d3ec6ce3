"""When the state store writes SA usage: the counters and the DYING state, off the packet path.

The data path counts on the SA record itself (``nbytes``, ``allocations``, the first use in
``used``) and the key manager makes an SA DYING in place at its soft limit; neither goes
through the SA database's ``add``/``replace``/``remove``, so its change journal
(:class:`~cryptoapi.pfkey.db.journal.Journal`) notes neither.
:class:`UsageWriter` picks the SAs whose usage row to write, and when:

- at a soft expiry: the key manager calls :meth:`UsageWriter.dying` (its ``on_dying``
  hook) and the SA is written at the store's next commit, which in the daemon comes before
  the EXPIRE leaves (the timers run, then the round commits, then it sends);
- at a sequence-number checkpoint: a usage report that raised an SA's ``sequence`` (or
  ``received``) calls
  :meth:`UsageWriter.dying` too (as the key manager's ``on_checkpoint`` hook), so the
  checkpoint is durable at the next commit, not an interval later
  (:mod:`~cryptoapi.pfkey.daemon.checkpoint`);
- at most every ``interval`` seconds (:data:`USAGE_INTERVAL`): the first commit after the
  interval is over compares every SA's usage with what was last written and writes those
  that moved (one tuple comparison an SA: 10-15 ms for 100,000 SAs, measured; writing
  them all, when all moved, is one transaction of 100,000 small UPDATEs), and
  :meth:`UsageWriter.wait` tells an event loop when that falls due, so an idle daemon
  wakes once to write, then sleeps (the interval is armed only by a commit, and every
  change happens in a round that commits);
- at shutdown (``force``): :meth:`~cryptoapi.pfkey.daemon.store.StateStore.close` writes every SA
  whose usage moved.

Nothing is written per packet. SAs with a pending change are skipped: their whole row is
written by the same commit.
"""

from collections.abc import Callable, Iterable, Mapping

from cryptoapi.pfkey.db.sad import SaKey, SecurityAssociation

USAGE_INTERVAL = 5.0
"""Seconds between writes of usage counters (at most): what a ``kill -9`` can lose."""

Usage = tuple[int, int, float, bool, int, int]
"""(nbytes, allocations, used, soft_expired, sequence, received): what is compared to find
an SA that moved."""
UNUSED: Usage = (0, 0, 0.0, False, 0, 0)
"""The usage of an SA that has carried nothing (and is not DYING): not kept in ``written``."""


def usage_of(sa: SecurityAssociation) -> Usage:
    return (sa.nbytes, sa.allocations, sa.used, sa.soft_expired, sa.sequence, sa.received)


class UsageWriter:
    """The usage a store last wrote per SA, the SAs that went DYING since, and when the next
    periodic write is due (``clock``: monotonic seconds)."""

    def __init__(self, interval: float, clock: Callable[[], float]) -> None:
        self.interval = interval
        self.clock = clock
        self.written: dict[SaKey, Usage] = {}
        """The usage in each SA's row, where it is not :data:`UNUSED`."""
        self.dying_sas: list[SecurityAssociation] = []
        self.due: float | None = None
        """When the next periodic write is due; None until a commit arms it."""

    def dying(self, sa: SecurityAssociation) -> None:
        """The key manager's ``on_dying`` and ``on_checkpoint`` hooks: write ``sa`` at the
        next commit."""
        self.dying_sas.append(sa)

    def wait(self) -> float | None:
        """Seconds until a commit has usage to write (0 when an SA went DYING), or None
        when nothing can be due until something commits."""
        if self.dying_sas:
            return 0.0
        if self.due is None:
            return None
        return max(self.due - self.clock(), 0.0)

    def due_now(
        self,
        sas: Mapping[SaKey, SecurityAssociation],
        changed: Mapping[SaKey, None],
        *,
        force: bool = False,
    ) -> list[SecurityAssociation]:
        """The SAs whose usage to write in this commit: those that went DYING and, once the
        interval is over (or ``force``), every SA whose usage moved. A commit that is not
        due arms the interval, if it is not armed already."""
        now = self.clock()
        scan = force or (self.due is not None and now >= self.due)
        if scan:
            self.due = None
        elif self.due is None:
            self.due = now + self.interval
        if not scan and not self.dying_sas:
            return []  # the common commit: nothing to write (no allocation)
        found: dict[SaKey, SecurityAssociation] = {}
        for sa in self.dying_sas:
            key = sa.key
            if sas.get(key) is sa and key not in changed:
                found[key] = sa
        self.dying_sas.clear()
        if scan:
            found.update(self._moved(sas, changed))
        return list(found.values())

    def _moved(
        self, sas: Mapping[SaKey, SecurityAssociation], changed: Mapping[SaKey, None]
    ) -> Iterable[tuple[SaKey, SecurityAssociation]]:
        written = self.written
        for key, sa in sas.items():
            usage = (
                sa.nbytes,
                sa.allocations,
                sa.used,
                sa.soft_expired,
                sa.sequence,
                sa.received,
            )  # usage_of, inline: every SA, every interval
            if usage != written.get(key, UNUSED) and key not in changed:
                yield key, sa

    def wrote(self, sas: Iterable[SecurityAssociation]) -> None:
        """Note the usage just committed in the rows of ``sas``."""
        for sa in sas:
            self.stored(sa.key, sa)

    def stored(self, key: SaKey, sa: SecurityAssociation | None) -> None:
        """Note the row of ``key`` as just committed: ``sa``'s usage, or gone (None). Cheap
        for an SA that has carried nothing (every SA of a bulk load)."""
        if sa is not None and (
            sa.used or sa.soft_expired or sa.nbytes or sa.allocations or sa.sequence or sa.received
        ):
            self.written[key] = usage_of(sa)
        elif key in self.written:
            del self.written[key]
