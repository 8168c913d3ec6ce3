"""A key manager kept as a copy of the state in PostgreSQL (:mod:`.pgschema`): everything
loaded at once, then each batch of changes the change journal names, in commit order.

:class:`Copy` knows where each SA and policy sits in the databases' order (``pos``), so a
row updated in place replaces its record in place and a row inserted anew (an add, or a
record moved to newest) is linked last, as the active's SAD and SPD did: DUMP and SPDDUMP
on a standby list what the active's list, in the same order. A standby starts no lifetime
timer (the active's expiries reach it as changes); :meth:`Copy.start_timers` starts them
all when it becomes active, as the SQLite store does on restore (:mod:`.restore`).
"""

import errno
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from cryptoapi.pfkey.daemon.restore import start_timers
from cryptoapi.pfkey.daemon.rows import sa_of_row
from cryptoapi.pfkey.daemon.schema import SA_COLUMNS
from cryptoapi.pfkey.db.sad import SaKey
from cryptoapi.pfkey.db.spd import SecurityPolicy, admit_policy
from cryptoapi.pfkey.errors import PfkeyError
from cryptoapi.pfkey.km.admit import integrity
from cryptoapi.pfkey.km.algorithms import AUTH, ENCRYPT
from cryptoapi.pfkey.wire.constants import SaState, SaType
from cryptoapi.pfkey.wire.message import scan

if TYPE_CHECKING:
    from cryptoapi.pfkey.km.manager import KeyManager


def policy_of_row(added: float, message: bytes) -> SecurityPolicy:
    """The policy a ``policies`` row holds (its index is the one its message carries)."""
    return admit_policy(scan(message), added)


class Copy:
    """The SAs and policies of ``km`` as rows of the database, by position."""

    def __init__(self, km: "KeyManager") -> None:
        self.km = km
        self.sa_pos: dict[SaKey, int] = {}
        self.policy_pos: dict[int, int] = {}

    def clear(self) -> None:
        """Forget every SA and policy (a full reload follows)."""
        km = self.km
        for sa in list(km.sad.by_key.values()):
            km.remove(sa)
        for policy in list(km.spd.by_index.values()):
            km.spd.remove(policy)
        self.sa_pos.clear()
        self.policy_pos.clear()

    def load(self, sas: Iterable[Sequence[Any]], policies: Iterable[Sequence[Any]]) -> None:
        """Add every SA row (pos first) and policy row (pos, id, added, message), each in
        the order of ``pos``, to the empty key manager."""
        sad, spd = self.km.sad, self.km.spd
        for row in sas:
            sa = sa_of_row(row[1:])
            sad.add(sa)
            self.sa_pos[sa.key] = row[0]
        for pos, index, added, message in policies:
            spd.insert(policy_of_row(added, message))
            self.policy_pos[index] = pos

    def apply_sas(self, rows: Iterable[Sequence[Any]]) -> None:
        """Each changed SA: (satype, dst, spi, pos or None when gone, the row's columns)."""
        km, sa_pos = self.km, self.sa_pos
        by_key = km.sad.by_key
        for row in rows:
            key: SaKey = (row[0], bytes(row[1]), row[2])
            old = by_key.get(key)
            pos = row[3]
            if pos is None:
                if old is not None:
                    km.remove(old)
                sa_pos.pop(key, None)
                continue
            new = sa_of_row(row[4:])
            if old is None:
                km.sad.add(new)
            else:
                km.sad.replace(old, new, newest=sa_pos.get(key) != pos)
                old.epoch += 1  # its timers (an active's, before it stood by) are stale
            sa_pos[key] = pos

    def apply_policies(self, rows: Iterable[Sequence[Any]]) -> None:
        """Each changed policy: (id, pos or None when gone, added, message)."""
        spd, policy_pos = self.km.spd, self.policy_pos
        for index, pos, added, message in rows:
            old = spd.by_index.get(index)
            if pos is None:
                if old is not None:
                    spd.remove(old)
                policy_pos.pop(index, None)
                continue
            spd.insert(policy_of_row(added, message), replacing=old)
            policy_pos[index] = pos

    def start_timers(self) -> None:
        """Start every SA's lifetime (or larval) timer, as a restore does: the key manager
        is about to serve writes."""
        km = self.km
        for sa in km.sad.by_key.values():
            start_timers(km, sa)


def check_integrity(rows: Sequence[Sequence[Any]], where: str) -> None:
    """EINVAL, to load none of ``rows`` (SA rows, ``pos`` first), if one is an
    encryption-only ESP SA: for a key manager that does not allow them, as the SQLite
    store refuses them."""
    auth_at, encrypt_at = 1 + SA_COLUMNS.index("auth"), 1 + SA_COLUMNS.index("encrypt")
    state_at = 1 + SA_COLUMNS.index("state")
    for row in rows:
        if row[1] != SaType.ESP or row[state_at] == SaState.LARVAL:
            continue
        try:
            integrity(AUTH.get(row[auth_at]), ENCRYPT.get(row[encrypt_at]))
        except PfkeyError as error:
            raise PfkeyError(
                errno.EINVAL,
                f"{where}: holds SA {row[2]:#x}, which a keyd admitted with "
                f"--allow-unauthenticated-esp: give that option again ({error})",
            ) from None
