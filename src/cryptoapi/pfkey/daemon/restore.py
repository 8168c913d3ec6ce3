"""What every state backend does with an SA it loads into a key manager that is to serve
writes (SQLite's :mod:`.store` at start, PostgreSQL's :mod:`.pgstore` when it becomes
active): start its timers, as they were when it was stored."""

from typing import TYPE_CHECKING

from cryptoapi.pfkey.db.sad import SecurityAssociation
from cryptoapi.pfkey.wire.constants import SaState

if TYPE_CHECKING:
    from cryptoapi.pfkey.km.manager import KeyManager


def start_timers(km: "KeyManager", sa: SecurityAssociation) -> None:
    """The larval timeout of a LARVAL SA; else its lifetimes, from when it was added and,
    if it was used, from its first use."""
    if sa.state == SaState.LARVAL:
        km.larval(sa)
    else:
        km.timers.added(sa)
        if sa.used:
            km.timers.first_use(sa)
