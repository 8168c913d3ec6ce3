"""The key manager's interface to its handlers: what the PF_KEY handlers need of a key
manager, as a Protocol (:class:`KeyManagerCore`). The handlers are typed against it, not
against :class:`~cryptoapi.pfkey.km.manager.KeyManager`, so the manager imports its handlers
and nothing imports back (the layers import downward only). The core itself is
:mod:`~cryptoapi.pfkey.km.manager`; this was ``pfkey/core.py``."""

import random
from collections.abc import Callable
from typing import Protocol

from cryptoapi.pfkey.db.acquires import Acquires
from cryptoapi.pfkey.db.expiry import Timers
from cryptoapi.pfkey.db.sad import SADatabase, SecurityAssociation
from cryptoapi.pfkey.db.spd import SPDatabase
from cryptoapi.pfkey.km.clients import Clients
from cryptoapi.pfkey.km.probe import AlgorithmProbe
from cryptoapi.pfkey.wire.extensions import Lifetime


class KeyManagerCore(Protocol):
    """The databases, their timers and the few operations the handlers call."""

    sad: SADatabase
    spd: SPDatabase
    probe: AlgorithmProbe
    timers: Timers
    rng: random.Random
    clients: Clients
    sender: int
    """The client whose message is being handled."""
    acquires: Acquires
    allow_unauthenticated: bool
    """Whether encryption-only ESP SAs are admitted (unsafe; see ``admit.integrity``)."""
    keeps_policy_ids: bool
    """Whether SPDADD/SPDUPDATE keep the ``sadb_x_policy_id`` they carry (a copy of another
    key manager's SPD, as espd keeps keyd's)."""
    larval_timeout: float
    """Seconds a LARVAL SA from GETSPI waits for its UPDATE."""
    on_checkpoint: Callable[[SecurityAssociation], None] | None
    """Called with each SA whose reported sequence number rose (a state store writes it at
    its next commit: the checkpoint of :mod:`cryptoapi.pfkey.daemon.checkpoint`)."""

    def remove(self, sa: SecurityAssociation) -> None: ...
    def larval(self, sa: SecurityAssociation) -> None: ...
    def expire(self, sa: SecurityAssociation, reached: Lifetime) -> list[bytes]: ...
    def soft_expire(self, sa: SecurityAssociation) -> list[bytes]: ...
