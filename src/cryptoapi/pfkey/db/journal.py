"""The change journal of a database: what was added, replaced or removed since its reader
last took the changes.

Linux tells key managers of every SA and policy change through one notifier
(``km_state_notify`` after ``xfrm_state_add``/``xfrm_state_update``/``xfrm_state_delete``,
``km_policy_notify`` likewise), and keeps no second copy of the databases to compare. Here
the reader is the daemon's state store: each database notes the key of every record it
changes in its journal (when one is kept), and the store writes the current state of
those keys and clears the journal.
"""

from dataclasses import dataclass, field
from typing import Generic, TypeVar

K = TypeVar("K")


@dataclass(slots=True)
class Journal(Generic[K]):
    """The keys changed since the last :meth:`clear`, in the order of their first change
    (so new records are stored, and come back, in the order they came), and whether key
    material left the database (``dropped``: an SA removed, or replaced by one with other
    keys), which tells the store to scrub its log."""

    changed: dict[K, None] = field(default_factory=dict)
    dropped: bool = False

    def note(self, key: K, *, dropped: bool = False) -> None:
        self.changed[key] = None
        self.dropped = self.dropped or dropped

    def clear(self) -> None:
        self.changed.clear()
        self.dropped = False
