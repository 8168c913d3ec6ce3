"""Views of a registry (the kernel's ``crypto/proc.c``, ``/proc/crypto``).

Each record carries what ``c_show`` prints beyond the algorithm's own fields: ``refcnt``
(the kernel's ``cra_refcnt``: 1 for the registration, plus one per registered template
instance that holds it as an inner algorithm, as a ``crypto_spawn`` does; transforms in use
are not counted here) and ``order``, the registration sequence, by which ``/proc/crypto``
lists the newest first (``crypto_register_alg`` puts each at the head of
``crypto_alg_list``, which ``c_start`` walks).
"""

from __future__ import annotations

from cryptoapi.fips.approved import is_approved

TYPE_CHECKING = False  # not typing's: importing typing costs more than hashlib; mypy sets it true

if TYPE_CHECKING:
    from collections.abc import Iterable

    from cryptoapi.alg import AlgInfo
    from cryptoapi.registry.algapi import AlgTable, Entry


def algorithms(table: AlgTable) -> list[AlgInfo]:
    """Every registered implementation, by name, then priority, then registration."""
    with table.cond:
        return _infos(table, sorted(table.drivers.values(), key=_listing_order))


def infos(table: AlgTable, entries: Iterable[Entry]) -> list[AlgInfo]:
    """The records of ``entries`` as they are now."""
    with table.cond:
        return _infos(table, entries)


def selected(table: AlgTable, wanted: set[str]) -> list[Entry]:
    """The entries whose name or driver is in ``wanted`` (all of them if it is empty)."""
    with table.cond:
        return [
            e for e in table.drivers.values()
            if not wanted or e.alg.name in wanted or e.alg.driver in wanted
        ]  # fmt: skip


def _infos(table: AlgTable, entries: Iterable[Entry]) -> list[AlgInfo]:
    """The records, with their reference counts and registration order (lock held)."""
    users: dict[str, int] = {}
    for entry in table.drivers.values():
        for inner in entry.alg.inner:
            users[inner.driver] = users.get(inner.driver, 0) + 1
    return [_info(e, 1 + users.get(e.alg.driver, 0)) for e in entries]


def _info(entry: Entry, refcnt: int) -> AlgInfo:
    """``entry``'s record, with its reference count and whether FIPS mode offers it."""
    return entry.alg.info(
        entry.selftest, entry.selftest_us, refcnt=refcnt, order=entry.order,
        fips_allowed=is_approved(entry.alg),
    )  # fmt: skip


def _listing_order(entry: Entry) -> tuple[str, int, int]:
    return entry.alg.name, -entry.alg.priority, entry.order
