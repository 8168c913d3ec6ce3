"""What a key daemon asks of its state store, and the durability every store keeps: the
interface a backend implements (SQLite, embedded: :class:`~.store.StateStore`; PostgreSQL,
for high availability, can be another).

The daemon (:mod:`.server`) calls four methods, no more:

- :meth:`StateBackend.attach` once, before it serves: load the stored SAs and policies into
  the empty key manager, with their timers, and follow its databases' change journals
  (:class:`~cryptoapi.pfkey.db.journal.Journal`, which the SAD and SPD note each add,
  replace and remove in, as Linux's ``km_state_notify`` tells key managers of each change);
- :meth:`StateBackend.commit` after handling a batch of messages and before it sends any
  reply: every change a client has seen acknowledged is durable when it returns. A commit
  writes the current state of just what the journals name, then clears them; SAs and
  policies come back in the order the databases had them, so DUMP and SPDDUMP list after a
  restart, ``kill -9`` included, what they listed at the last commit, in the same order;
- :meth:`StateBackend.usage_wait` when the loop is to sleep: usage (bytes, allocations,
  first use) and the DYING state change in place, from the data path and the lifetimes,
  and are written on their own schedule (:mod:`.usage`), never per packet;
- :meth:`StateBackend.close` at the end: the usage that moved is written, then the store
  lets go of its state.

Every backend keeps the same promises: an acknowledged SA or policy, or a DYING state
whose EXPIRE the daemon sent, is never lost; what ``kill -9`` may lose is the counting
since the last periodic usage write; the keys of a deleted SA leave the store's files
before the deletion is acknowledged; an SA of a kind the key manager would refuse now (an
encryption-only SA, for a keyd that does not allow them) is refused on load, nothing
loaded.
"""

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from cryptoapi.pfkey.km.manager import KeyManager


class StateBackend(Protocol):
    """The durable state of one key daemon's key manager (see the module docstring)."""

    def attach(self, km: "KeyManager") -> tuple[int, int]:
        """Load the stored SAs and policies into the (empty) key manager ``km``, with their
        timers, and follow its change journals from now on; (SAs, policies) loaded."""
        ...

    def commit(self) -> None:
        """Write every change since the last commit, durably, before this returns."""
        ...

    def usage_wait(self) -> float | None:
        """Seconds until :meth:`commit` has usage to write, or None while none can be due."""
        ...

    def close(self) -> None:
        """Write the usage that moved and let the state go; later calls do nothing."""
        ...
