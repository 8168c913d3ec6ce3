"""Register and unregister implementations: the table every other part reads (the
kernel's ``crypto/algapi.c``).

A batch (one provider's ``ALGORITHMS``, or one user record) goes in under one lock, as
``crypto_register_algs`` does: collisions are checked for the whole batch first, so a
rejected batch changes nothing, then each name's ranked list is rebuilt once. With
self-tests off that is the whole cost of a registration: a few dict updates and one
wake-up of waiters; no thread, no queue.

Readers take a name's ranked list without the lock: lists are replaced, never changed in
place, so a reader never sees one half-sorted.
"""

from __future__ import annotations

import time

from cryptoapi.alg import Algorithm, AlgType, SelfTest
from cryptoapi.errors import AlgorithmExists, AlgorithmNotFound, InvalidArgument
from cryptoapi.names import bounds_instances, parse
from cryptoapi.registry.sync import Monitor

TYPE_CHECKING = False  # not typing's: importing typing costs more than hashlib; mypy sets it true

if TYPE_CHECKING:
    from collections.abc import Callable, Container, Iterable

    from cryptoapi.registry.trace import TraceEvent
    from cryptoapi.transforms.shash import Shash

    Trace = Callable[[TraceEvent], None]


class Entry:
    """One registered implementation and the state of its own self-test.

    ``unbound`` marks an rng record not yet bound to the registry whose primitives it
    uses (a DRBG's hash or AES): the registry binds it before its first use, not at
    registration, so bringing every provider up costs no record copies.
    """

    __slots__ = ("alg", "order", "selftest", "selftest_us", "unbound")

    def __init__(self, alg: Algorithm, selftest: SelfTest, order: int) -> None:
        self.alg = alg
        self.selftest = selftest
        self.order = order
        self.selftest_us: float | None = None
        self.unbound = False


class Batch:
    """Records registered together, with what registering them needs worked out once:
    their drivers and names as sets (collisions are three set operations) and, per name,
    their order by rank. A provider's batch is built once per process and reused by every
    registry that loads the provider (the records are module constants)."""

    __slots__ = (
        "algs", "driver_order", "drivers", "has_base", "has_rng", "names", "ranked", "top_priority",
    )  # fmt: skip

    def __init__(self, algs: Iterable[Algorithm]) -> None:
        self.algs = tuple(algs)
        self.driver_order = tuple(alg.driver for alg in self.algs)
        self.drivers = frozenset(alg.driver for alg in self.algs)
        self.names = frozenset(alg.name for alg in self.algs)
        if len(self.drivers) != len(self.algs) or not self.drivers.isdisjoint(self.names):
            raise AlgorithmExists("a batch registers one driver twice or a name as a driver")
        grouped: dict[str, list[int]] = {}
        for index, alg in enumerate(self.algs):
            grouped.setdefault(alg.name, []).append(index)
        self.ranked = tuple(
            (name, tuple(sorted(indexes, key=lambda i: _static_rank(self.algs[i], i))))
            for name, indexes in grouped.items()
        )
        self.has_base = any(not alg.inner for alg in self.algs)
        self.has_rng = any(alg.type is AlgType.RNG for alg in self.algs)
        self.top_priority = max(
            (alg.priority for alg in self.algs if bounds_instances(alg.name)), default=0
        )  # the bound on template instances' priorities (below)


def _static_rank(alg: Algorithm, index: int) -> tuple[int, bool, int]:
    return -alg.priority, bool(alg.inner), index


class AlgTable:
    """Drivers, ranked names and the per-type cache of resolved lookups, under one lock.

    ``initial`` is the self-test state a new entry starts in; ``reserved`` raises
    AlgorithmExists for a record that collides with something not registered yet (the
    manifest's offers); ``trace`` receives an event per registration and test.
    """

    def __init__(
        self,
        initial: SelfTest,
        reserved: Callable[[Algorithm], None],
        trace: Trace | None = None,
    ) -> None:
        self.cond = Monitor()
        self.drivers: dict[str, Entry] = {}
        self.names: dict[str, list[Entry]] = {}
        # name -> resolved algorithm, one dict per type (None: any type)
        self.resolved: dict[AlgType | None, dict[str, Algorithm]] = {
            kind: {} for kind in (None, *AlgType)
        }
        # name -> the one transform of an unkeyed hash, shared (it holds no state)
        self.shared: dict[str, Shash] = {}
        self.generation = 0  # bumped by every change; waiters compare it
        self.base_generation = 0  # bumped when an algorithm with no inner one arrives
        self.top_priority = 0  # the highest priority ever registered (a bound, never lowered)
        self._initial = initial
        self._reserved = reserved
        self._trace = trace
        self._order = 0

    def register(self, batch: Batch, *, check_reserved: bool) -> list[Entry]:
        """Insert a batch of valid records in one step (one lock, one wake-up: ``load_all``
        registers every provider as one merged batch); AlgorithmExists, and nothing
        changes, if any record collides with the table or, with ``check_reserved``, the
        manifest's offers."""
        with self.cond:
            self._check(batch, check_reserved=check_reserved)
            entries = self._insert(batch)
            self.changed()
        return entries

    def _check(self, batch: Batch, *, check_reserved: bool) -> None:
        # From the tables' key views: isdisjoint then walks the batch, not the whole table.
        drivers, names = self.drivers.keys(), self.names.keys()
        clash = (
            not drivers.isdisjoint(batch.drivers)
            or not names.isdisjoint(batch.drivers)
            or not drivers.isdisjoint(batch.names)
        )
        if clash:
            for alg in batch.algs:
                check_collision(alg, self.drivers, self.names)
        if check_reserved:
            for alg in batch.algs:
                self._reserved(alg)

    def _insert(self, batch: Batch) -> list[Entry]:
        """Entries for the batch, each name's ranked list rebuilt once (lock held)."""
        started = time.perf_counter() if self._trace else 0.0
        first = self._order + 1
        self._order += len(batch.algs)
        initial = self._initial
        entries = [Entry(alg, initial, first + i) for i, alg in enumerate(batch.algs)]
        if batch.has_rng:
            for entry in entries:
                entry.unbound = entry.alg.type is AlgType.RNG
        self.drivers.update(zip(batch.driver_order, entries, strict=True))
        names = self.names
        for name, indexes in batch.ranked:
            new = [entries[i] for i in indexes]
            old = names.get(name)
            names[name] = sorted((*old, *new), key=rank) if old else new
        self.top_priority = max(self.top_priority, batch.top_priority)
        if batch.has_base:
            self.base_generation += 1  # a new inner algorithm may make instances better
        if self._trace:
            for entry in entries:
                self._emit("register", entry.alg.driver, started, "ok")
        return entries

    def unregister(self, driver: str) -> None:
        """Remove a driver and every entry built on it, directly or through others."""
        with self.cond:
            if driver not in self.drivers:
                raise AlgorithmNotFound(f"no driver {driver!r} is registered")
            doomed = {driver}
            for other in sorted(self.drivers.values(), key=_order):
                if any(inner.driver in doomed for inner in other.alg.inner):
                    doomed.add(other.alg.driver)
            for gone in doomed:
                self._remove(self.drivers.pop(gone))
            self.base_generation += 1
            self.changed()

    def _remove(self, entry: Entry) -> None:
        ranked = [e for e in self.names[entry.alg.name] if e is not entry]
        if ranked:
            self.names[entry.alg.name] = ranked
        else:
            del self.names[entry.alg.name]

    def changed(self) -> None:
        """Drop every cached answer and wake every waiter (lock held)."""
        for resolved in self.resolved.values():
            resolved.clear()
        self.shared.clear()
        self.generation += 1
        self.cond.notify_all()

    def candidates(self, name: str, type: AlgType | None) -> list[Entry]:
        """The entries a lookup of ``name`` (a driver or a name) may return, best first."""
        with self.cond:
            return self.candidates_locked(name, type)

    def candidates_locked(self, name: str, type: AlgType | None) -> list[Entry]:
        exact = self.drivers.get(name)
        entries = [exact] if exact else self.names.get(name, ())
        return [e for e in entries if type is None or e.alg.type is type]

    def emit_load(self, module: str, started: float, result: str) -> None:
        """A provider module imported and registered ("ok") or absent ("absent")."""
        if self._trace:
            self._emit("load", module, started, result)

    def emit_test(self, driver: str, started: float, result: str) -> None:
        if self._trace:
            self._emit("test", driver, started, result)

    def _emit(self, kind: str, driver: str, started: float, result: str) -> None:
        import threading  # only when tracing, as the dataclass below

        from cryptoapi.registry.trace import TraceEvent

        assert self._trace is not None
        micros = (time.perf_counter() - started) * 1e6
        thread = threading.current_thread().name
        self._trace(TraceEvent(kind, driver, started, micros, thread, result))


def check_collision(alg: Algorithm, drivers: Container[str], names: Container[str]) -> None:
    """AlgorithmExists naming what ``alg`` collides with: a driver, or a name."""
    if alg.driver in drivers:
        raise AlgorithmExists(f"driver {alg.driver!r} is already registered")
    if alg.driver in names:
        raise AlgorithmExists(f"driver {alg.driver!r} collides with an algorithm name")
    if alg.name in drivers:
        raise AlgorithmExists(f"name {alg.name!r} collides with a driver")


def rank(entry: Entry) -> tuple[int, bool, int]:
    """Higher priority first; among equals a one-piece implementation before a template
    instance (a dedicated driver beats a composition of parts of the same priority), then
    the earlier registration."""
    return -entry.alg.priority, bool(entry.alg.inner), entry.order


def _order(entry: Entry) -> int:
    return entry.order


def validate(alg: Algorithm) -> None:
    """Reject a record that is not an Algorithm or whose names, type, priority or
    constructor are malformed (InvalidArgument, TypeError)."""
    if not isinstance(alg, Algorithm):
        raise TypeError(f"register() takes an Algorithm, not {type(alg).__name__}")
    parse(alg.name)
    parse(alg.driver)
    if alg.name == alg.driver:
        raise InvalidArgument(f"driver name must differ from the algorithm name {alg.name!r}")
    if not isinstance(alg.type, AlgType):
        raise InvalidArgument(f"{alg.driver}: type {alg.type!r} is not an AlgType")
    if not isinstance(alg.priority, int) or alg.priority < 0:
        raise InvalidArgument(f"{alg.driver}: priority must be a non-negative int")
    if not callable(alg.create):
        raise InvalidArgument(f"{alg.driver}: create must be callable")
