"""The rows of a key daemon's state tables (:mod:`.schema`): an SA, its usage and a policy
as the values a row holds, and back; and, from the databases' change journals, which rows
a commit deletes and which it writes. No SQL here: every backend stores these rows
(SQLite: :mod:`.store`).
"""

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from cryptoapi.pfkey.daemon.schema import CHECKPOINT_COLUMNS, SA_COLUMNS
from cryptoapi.pfkey.db.journal import Journal
from cryptoapi.pfkey.db.sad import SecurityAssociation
from cryptoapi.pfkey.db.spd import SecurityPolicy
from cryptoapi.pfkey.wire.constants import MsgType
from cryptoapi.pfkey.wire.extensions import Lifetime, lifetime_at

LIFETIME_COLUMNS = ("hard", "soft")
"""Lifetimes are kept as the ``sadb_lifetime`` extension without its first field,
``sadb_lifetime_len`` (always 4 words): the form every schema so far has."""
_LIFETIME_LEN = b"\x04\x00"

USAGE_COLUMNS = ("state", "used", "nbytes", "allocations", "soft_expired", *CHECKPOINT_COLUMNS)
"""The SA columns that change in place (usage, DYING and the sequence-number checkpoints),
written by :mod:`.usage`; the checkpoints last, since their statements keep the greater of
the stored and the written value (a checkpoint is never lowered)."""

K = TypeVar("K")
V = TypeVar("V")
R = TypeVar("R")


def _lifetime_blob(lifetime: Lifetime | None) -> bytes | None:
    return None if lifetime is None else lifetime.encode()[len(_LIFETIME_LEN) :]


def _lifetime(blob: bytes | None) -> Lifetime | None:
    return None if blob is None else lifetime_at(_LIFETIME_LEN + blob, 0)


def sa_row(sa: SecurityAssociation) -> tuple[Any, ...]:
    """The ``SA_COLUMNS`` of ``sa``, its lifetimes as blobs."""
    return tuple(
        _lifetime_blob(getattr(sa, column)) if column in LIFETIME_COLUMNS else getattr(sa, column)
        for column in SA_COLUMNS
    )


def sa_of_row(row: Sequence[Any]) -> SecurityAssociation:
    """The SA a row of ``SA_COLUMNS`` holds."""
    values = dict(zip(SA_COLUMNS, row, strict=True))
    for column in LIFETIME_COLUMNS:
        values[column] = _lifetime(values[column])
    values["soft_expired"] = bool(values["soft_expired"])
    return SecurityAssociation(**values)


def usage_row(sa: SecurityAssociation) -> tuple[Any, ...]:
    """The ``USAGE_COLUMNS`` of ``sa``, then its key (satype, dst, spi)."""
    return (*(getattr(sa, column) for column in USAGE_COLUMNS), sa.satype, sa.dst, sa.spi)


def policy_row(policy: SecurityPolicy) -> tuple[int, float, bytes]:
    """The ``policies`` row of ``policy``: its index, when it was added, and the message
    that adds it again."""
    return policy.index, policy.added, policy.message(MsgType.X_SPDADD, 0, 0).encode()


def changed_rows(
    journal: Journal[K], current: Mapping[K, V], row: Callable[[V], R]
) -> tuple[list[K], list[R]]:
    """The keys of the rows to delete (records gone or moved, see
    :class:`~cryptoapi.pfkey.db.journal.Journal`) and the rows to write, for the records
    ``journal`` names, in its order: the database's, which new rows take as rowids."""
    deletes, upserts = [], []
    for key in journal.changed:
        record = current.get(key)
        if record is None or key in journal.moved:
            deletes.append(key)
        if record is not None:
            upserts.append(row(record))
    return deletes, upserts
