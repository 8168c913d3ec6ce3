"""What ``cryptoapi keyd-status`` shows: keyd's SAs, policies, clients and counters, as one
JSON object its status socket (:mod:`.control`) answers.

Counts and totals, not the SAs themselves (``setkey -D --socket`` lists them, with their
usage): the answer stays small whatever the database holds, and showing it costs the loop
one pass over the SAs. At most ``MAX_CLIENTS`` clients are listed.
"""

import os
import signal
import time
from collections import Counter
from collections.abc import Mapping, Sized
from typing import Any, Protocol

from cryptoapi._counts import counted
from cryptoapi.pfkey.km.manager import KeyManager
from cryptoapi.pfkey.wire.constants import SaState, SaType, name_of

MAX_CLIENTS = 100


class Client(Protocol):
    """A connection as the daemon keeps it (``server.Client``)."""

    @property
    def id(self) -> int: ...
    @property
    def queue(self) -> Sized: ...


class KeyDaemon(Protocol):
    """What the status reads of the daemon (``server.KeyDaemon``, which imports this)."""

    @property
    def km(self) -> KeyManager: ...
    @property
    def path(self) -> str: ...
    @property
    def clients(self) -> Mapping[int, Client]: ...
    @property
    def stopped_by(self) -> int | None: ...
    def stats(self) -> dict[str, int]: ...


def keyd_status(
    daemon: KeyDaemon, started: float, state: str | None, *, ha: dict[str, Any] | None = None
) -> dict[str, Any]:
    """keyd's status: role, pid, uptime (``started``: time.monotonic() at start), its
    sockets and state file, its SAs (by state, usage totals), policies, clients, counters;
    and ``ha``, its high-availability role (active, standby or fenced: ``PgStore.status``)
    when given."""
    km = daemon.km
    sas = list(km.sad.by_key.values())
    return {
        "role": "keyd",
        "pid": os.getpid(),
        "uptime": round(time.monotonic() - started, 3),
        "socket": daemon.path,
        "state": state,
        "sas": {
            "total": len(sas),
            "by_state": dict(Counter(name_of(sa.state, SaState) for sa in sas)),
            "bytes": sum(sa.nbytes for sa in sas),
            "packets": sum(sa.allocations for sa in sas),
        },
        "policies": len(km.spd),
        "clients": _clients(daemon),
        "counters": {**km.stats(), **daemon.stats()},
        **({"ha": ha} if ha is not None else {}),
    }


def _clients(daemon: KeyDaemon) -> list[dict[str, Any]]:
    """The connected clients (the first ``MAX_CLIENTS``): id, SA types registered for,
    promiscuous or not, messages queued for them."""
    registered = daemon.km.clients.registered
    promiscuous = daemon.km.clients.promiscuous
    return [
        {
            "id": client.id,
            "registered": sorted(name_of(t, SaType) for t in registered.get(client.id, ())),
            "promiscuous": client.id in promiscuous,
            "queued": len(client.queue),
        }
        for client in list(daemon.clients.values())[:MAX_CLIENTS]
    ]


def farewell(daemon: KeyDaemon, state: str | None) -> str:
    """keyd's last line: the signal that stopped it and what it left where."""
    by = signal_name(daemon.stopped_by)
    policies = counted(len(daemon.km.spd), "policy", "policies")
    held = f"{counted(len(daemon.km.sad), 'SA')} and {policies}"
    kept = f"committed to {state} (usage written)" if state else "not kept (no --state)"
    return f"stopping on {by}: {held} {kept}; {daemon.path} removed"


def signal_name(signum: int | None) -> str:
    """``SIGTERM`` for 15; ``request`` when no signal stopped the loop."""
    if signum is None:
        return "request"
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"
