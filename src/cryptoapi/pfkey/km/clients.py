"""The key manager's clients: what each REGISTERed for, and which are promiscuous.

Linux keeps both in each PF_KEY socket (``struct pfkey_sock``: ``registered``, a bit per SA
type, and ``promisc``); here the key manager keeps them per client, by an opaque id its
transport got from :meth:`Clients.connect` (a daemon: one per connection). The in-process
client :data:`ANONYMOUS` is always connected: it is the one ``KeyManager.handle`` speaks for.
"""

ANONYMOUS = 0
"""The client of ``KeyManager.handle``: connected from the start, never disconnected."""


class Clients:
    """Connected clients by id: their registrations (RFC 2367 §3.1.7) and promiscuous mode
    (``SADB_X_PROMISC``). Ids are never reused, so a late message for a client that has gone
    names nobody."""

    __slots__ = ("_by_type", "_last", "promiscuous", "registered")

    def __init__(self) -> None:
        self.registered: dict[int, set[int]] = {ANONYMOUS: set()}
        """The SA types each client registered for (ACQUIRE and EXPIRE are for them)."""
        self._by_type: dict[int, tuple[int, ...]] = {}
        """The connected clients registered for each type, 0: for any (read on every
        message; the anonymous client's set may be changed in place, so it is not here)."""
        self.promiscuous: tuple[int, ...] = ()
        """The clients in promiscuous mode, oldest first (read on every message)."""
        self._last = ANONYMOUS

    def __len__(self) -> int:
        return len(self.registered)

    def connect(self) -> int:
        """A new client's id."""
        self._last += 1
        self.registered[self._last] = set()
        return self._last

    def disconnect(self, client: int) -> None:
        """Forget ``client``: its registrations and promiscuous mode go with it (Linux
        ``pfkey_release``). The anonymous client stays; an unknown id is ignored."""
        if client == ANONYMOUS:
            raise ValueError("the anonymous client cannot be disconnected")
        if self.registered.pop(client, None):
            self._by_type = {
                t: kept for t, found in self._by_type.items() if (kept := _but(found, client))
            }
        self.set_promiscuous(client, False)

    def register(self, client: int, satype: int) -> bool:
        """Add ``satype`` to what ``client`` listens for; False if it did already."""
        types = self.registered[client]
        if satype in types:
            return False
        if client != ANONYMOUS:
            if not types:
                self._by_type[0] = (*self._by_type.get(0, ()), client)
            self._by_type[satype] = (*self._by_type.get(satype, ()), client)
        types.add(satype)
        return True

    def listeners(self, satype: int, sender: int | None = None) -> tuple[int, ...]:
        """The clients registered for ``satype`` (for any type when it is 0), but for
        ``sender``."""
        found = self._by_type.get(satype, ())
        if sender in found:
            found = _but(found, sender)
        anonymous = self.registered[ANONYMOUS]
        if sender != ANONYMOUS and (satype in anonymous if satype else anonymous):
            return (ANONYMOUS, *found)
        return found

    def listening(self, satype: int) -> bool:
        """Whether a client is registered for ``satype``."""
        return bool(self.listeners(satype))

    def set_promiscuous(self, client: int, on: bool) -> None:
        others = _but(self.promiscuous, client)
        self.promiscuous = (*others, client) if on else others

    def hears(self, satype: int) -> bool:
        """Whether a notification for ``satype`` reaches anyone (a listener of the type, or a
        promiscuous client, which gets a copy of everything)."""
        return bool(self.promiscuous) or self.listening(satype)


def _but(clients: tuple[int, ...], client: int) -> tuple[int, ...]:
    return tuple(c for c in clients if c != client)
