"""Views of a registry (the kernel's ``crypto/proc.c``, ``/proc/crypto``)."""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: importing typing costs more than hashlib; mypy sets it true

if TYPE_CHECKING:
    from collections.abc import Iterable

    from cryptoapi.alg import AlgInfo
    from cryptoapi.registry.algapi import AlgTable, Entry


def algorithms(table: AlgTable) -> list[AlgInfo]:
    """Every registered implementation, by name, then priority, then registration."""
    with table.cond:
        entries = sorted(table.drivers.values(), key=_listing_order)
        return [e.alg.info(e.selftest, e.selftest_us) for e in entries]


def infos(table: AlgTable, entries: Iterable[Entry]) -> list[AlgInfo]:
    """The records of ``entries`` as they are now."""
    with table.cond:
        return [e.alg.info(e.selftest, e.selftest_us) for e in entries]


def selected(table: AlgTable, wanted: set[str]) -> list[Entry]:
    """The entries whose name or driver is in ``wanted`` (all of them if it is empty)."""
    with table.cond:
        return [
            e for e in table.drivers.values()
            if not wanted or e.alg.name in wanted or e.alg.driver in wanted
        ]  # fmt: skip


def _listing_order(entry: Entry) -> tuple[str, int, int]:
    return entry.alg.name, -entry.alg.priority, entry.order
