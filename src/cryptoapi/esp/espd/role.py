"""espd on a standby gateway: it carries nothing until the keyd it follows is active, then
starts at the sequence numbers that keyd's takeover raised (issue 23, item 4).

How espd learns its keyd's role: it asks keyd's status socket (the ``--control`` socket,
``keyd.sock`` -> ``keyd.ctl``; the JSON of ``cryptoapi keyd-status``, whose ``ha.role`` is
``active``, ``standby`` or ``fenced``; a keyd on SQLite has no ``ha`` and is active) every
:data:`POLL` seconds, from the endpoint's loop. The status socket rather than a PF_KEY
message: it exists already, needs no message type of our own, and its answer is one small
JSON object; the cost is one Unix-socket round trip per poll (about 0.2 ms), off the packet
path.

- **Standby (or no answer yet)**: :attr:`KeydRole.carrying` is False; the endpoint drops
  what the TUN and the ESP sockets give it (counted ``EspdStandbyDropped``), so no packet
  is sent with a sequence number the active gateway may be using. The follower keeps the
  local copy of the SAs and policies current meanwhile (the standby keyd serves dumps).
- **Active**: before the first packet, espd follows keyd anew (a fresh DUMP): the dump's
  ``sadb_x_sa2_sequence`` carries every SA's checkpoint, which keyd raised by the margin
  when it took over (:mod:`cryptoapi.pfkey.daemon.checkpoint`), and the data path starts
  each outbound SA above it. Then it carries.
- **Fenced** (the active keyd lost its database) and **away** (no answer): nothing
  changes: an active gateway keeps carrying with the SAs it has (issue 23: "keeps carrying
  traffic with what it has"); a standby one keeps waiting.
- **Standby again** (its keyd came back as a standby): espd stops carrying.

Moving the tunnel address to the new active host is the deployment's (README: keepalived's
``notify_master`` or a cloud API call); espd binds its sockets to the wildcard address, so
an address added on takeover is served at once.
"""

import logging
import time
from collections.abc import Callable
from typing import Any

from cryptoapi.esp.espd.follower import Follower
from cryptoapi.pfkey.daemon.control import query

log = logging.getLogger(__name__)

POLL = 0.1
"""Seconds between two questions to keyd's status socket (a takeover is seen this late)."""
QUERY_TIMEOUT = 0.5
"""Seconds one question may take (keyd answers from its loop)."""
ACTIVE = "active"
STANDBY = "standby"


def role_of(status: dict[str, Any]) -> str:
    """The role a keyd's status names (a keyd without ``ha``, on SQLite, is active)."""
    ha = status.get("ha")
    return str(ha.get("role", ACTIVE)) if isinstance(ha, dict) else ACTIVE


class KeydRole:
    """Whether the endpoint carries traffic: while the keyd at ``control`` is active."""

    def __init__(
        self,
        control: str,
        follower: Follower,
        *,
        poll: float = POLL,
        clock: Callable[[], float] = time.monotonic,
        ask: Callable[[str, float], dict[str, Any]] = query,
    ) -> None:
        self.control = control
        self.follower = follower
        self.poll_every = poll
        self.clock = clock
        self.ask = ask
        self.carrying = False
        self.role = "unknown"
        self.activations = 0
        self._next = 0.0

    def poll(self) -> None:
        """Ask keyd its role, when due, and start or stop carrying (see the module doc)."""
        now = self.clock()
        if now < self._next:
            return
        self._next = now + self.poll_every
        try:
            role = role_of(self.ask(self.control, QUERY_TIMEOUT))
        except (OSError, ValueError):
            role = "away"
        if role != self.role:
            log.warning("the key daemon at %s is %s", self.control, role)
            self.role = role
        if role == ACTIVE and not self.carrying:
            self._activate()
        elif role == STANDBY and self.carrying:
            log.warning("the key daemon stands by: carrying nothing until it is active")
            self.carrying = False

    def _activate(self) -> None:
        """Follow keyd anew (its raised checkpoints), then carry; try again at the next
        poll if keyd cannot be followed now."""
        self.follower.close()
        self.follower.retry()
        if self.follower.connection() is None:
            return
        self.carrying = True
        self.activations += 1
        log.warning("the key daemon is active: carrying traffic (sequence numbers above "
                    "its checkpoints)")  # fmt: skip
