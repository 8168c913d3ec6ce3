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
    """What changed since the last :meth:`clear`, for the store to write:

    - ``changed``: the keys, in the database's order (that of their first change, but a
      record inserted anew goes last), so records are stored, and come back, in it;
    - ``moved``: those of them whose stored row, if any, is deleted before the new one is
      written (a row only updated keeps its place, its rowid);
    - ``dropped``: whether key material left the database (an SA removed, or replaced by
      one with other keys), which tells the store to scrub its log."""

    changed: dict[K, None] = field(default_factory=dict)
    moved: dict[K, None] = field(default_factory=dict)
    dropped: bool = False

    def note(self, key: K, *, dropped: bool = False) -> None:
        """``key``'s record changed where it is, or went."""
        self.changed[key] = None
        self.dropped = self.dropped or dropped

    def note_newest(self, key: K, *, replaced: bool, dropped: bool = False) -> None:
        """``key``'s record was inserted as the newest: in place of another (``replaced``),
        or under a free key. A row the store may hold for the key (it replaced a record, or
        the key changed since the last clear: removed, then added again) is moved."""
        if replaced or key in self.changed:
            self.changed.pop(key, None)
            self.moved[key] = None
        self.changed[key] = None
        self.dropped = self.dropped or dropped

    def clear(self) -> None:
        self.changed.clear()
        self.moved.clear()
        self.dropped = False
