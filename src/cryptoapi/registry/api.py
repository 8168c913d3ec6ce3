"""Look up, test on first use, and allocate (the kernel's ``crypto/api.c``).

A lookup by driver returns exactly that implementation; a lookup by name returns the
highest-priority one that is usable: its own self-test passed (or tests are off, or it has
no vectors), never a failed or untested one. Before an entry of priority P is accepted,
every provider that offers the name at P or above is imported (best first), so the answer
is the best usable one of the whole manifest, while a lookup that the best provider
answers imports nothing else.

A resolved lookup is cached per name and type, so a repeated ``alloc_*`` is one dict read;
only a current answer is cached, and every change to the table clears the cache.
"""

from __future__ import annotations

import time

from cryptoapi.alg import AlgType, SelfTest
from cryptoapi.errors import AlgorithmNotFound, InvalidArgument, LookupTimeout
from cryptoapi.names import parse
from cryptoapi.registry.sync import Circular, Larvals

TYPE_CHECKING = False  # not typing's: importing typing costs more than hashlib; mypy sets it true

if TYPE_CHECKING:
    from collections.abc import Callable, Collection

    from cryptoapi.alg import Algorithm
    from cryptoapi.registry.algapi import AlgTable, Entry
    from cryptoapi.registry.modules import Loader
    from cryptoapi.selftest.manager import SelfTestManager

    Bind = Callable[[Algorithm], Algorithm]
    Build = Callable[[str], None]
    Everything = Callable[[str], object]
    Templates = Callable[[], Collection[str]]


USABLE = frozenset((SelfTest.PASSED, SelfTest.UNTESTED))
"""States a lookup may return: passed its own test, or untested because tests are off (or,
as in the kernel's ``alg_test`` for an algorithm with no test entry, it has no vectors)."""


class Api:
    """Lookups of one registry: providers loaded best first, templates built on demand
    (through ``build``), implementations tested per policy before they are returned.

    What it needs of the template builder (the kernel's ``algboss.c``): ``build(name)``
    instantiates a template name if not done yet; ``everything(name)`` loads every provider
    of a name and builds every composition of it (the fallback when the best ones failed);
    ``templates()`` names the templates users registered. The builder looks the inner names
    up through this Api in turn: the registry closes that cycle by making its builder on
    first use, with this Api's lookup (:attr:`Registry._boss
    <cryptoapi.registry.registry.Registry._boss>`). ``bind(alg)`` is ``alg`` as this
    registry serves it (an rng record bound to its lookup).
    """

    def __init__(
        self,
        table: AlgTable,
        loader: Loader,
        larvals: Larvals,
        manager: SelfTestManager,
        timeout: float,
        *,
        build: Build,
        everything: Everything,
        templates: Templates,
        bind: Bind,
    ) -> None:
        self.table = table
        self.loader = loader
        self.manager = manager
        self.timeout = timeout
        self.queued = 0  # eager tests submitted and not finished
        self._larvals = larvals
        self.build = build
        self.everything = everything
        self.templates = templates
        self.bind = bind

    def lookup(self, name: str, type: AlgType | str | None = None, *, wait: float = 0) -> Algorithm:
        """The implementation ``name`` resolves to; with ``wait`` > 0, a name nothing
        provides yet is waited for (any registration wakes the waiter to try again)."""
        kind = None if type is None else alg_type(type)
        alg = self.table.resolved[kind].get(name)
        if alg is not None:
            return alg
        if wait <= 0:
            return self.resolve(name, kind)
        return self._resolve_waiting(name, kind, wait)

    def _resolve_waiting(self, name: str, kind: AlgType | None, wait: float) -> Algorithm:
        deadline = time.monotonic() + wait
        cond = self.table.cond
        while True:
            generation = self.table.generation
            try:
                return self.resolve(name, kind)
            except AlgorithmNotFound:
                with cond:
                    remaining = deadline - time.monotonic()
                    woken = remaining > 0 and cond.wait_for(
                        self._changed_since(generation), remaining
                    )
                if not woken:
                    raise LookupTimeout(f"no {name!r} was registered within {wait:g} s") from None

    def _changed_since(self, generation: int) -> Callable[[], bool]:
        """Whether the table changed since it was at ``generation``, as a wait predicate."""
        return lambda: self.table.generation != generation

    def resolve(self, name: str, type: AlgType | None) -> Algorithm:
        """The answer for ``name``, found the slow way (loading, building, testing); a name
        found nowhere may be a spelling of a real one (``SHA-256``), answered as that one
        is, or a near miss, which the error names (:mod:`~cryptoapi.registry.aliases`)."""
        try:
            return self._resolve(name, type)
        except AlgorithmNotFound as error:
            from cryptoapi.registry.aliases import Vocabulary, respelled  # not found only

            vocabulary = Vocabulary(self.table, self.loader.manifest, self.templates())
            canonical = respelled(name, vocabulary, error)
        found = self.resolve(canonical, type)
        with self.table.cond:  # cached as long as the canonical name's answer is
            if self.table.resolved[type].get(canonical) is found:
                self.table.resolved[type][name] = found
        return found

    def _resolve(self, name: str, type: AlgType | None) -> Algorithm:
        parsed = parse(name)
        self.loader.load_driver(name)
        found = self._first_usable(name, type)
        if parsed.is_template and not self._unbeatable(found, parsed.word):
            self.build(name)
            found = self._first_usable(name, type)
        if found is None and parsed.is_template:
            # The instance built from the best inner implementations failed its test:
            # build the others too, so the name still works if any combination passes.
            self.everything(name)
            found = self._first_usable(name, type)
        if found is None:
            what = f"{type} " if type else ""
            raise AlgorithmNotFound(f"no usable {what}algorithm or driver named {name!r}")
        return found

    def _unbeatable(self, found: Algorithm | None, template: str) -> bool:
        """Whether no instance of the project's ``template`` could rank above ``found``,
        a one-piece implementation of its name (``gcm-aes-openssl`` for ``gcm(aes)``): an
        instance's priority is the mean of its inner algorithms' (:func:`~cryptoapi.alg.
        instance`), so never above the highest priority registered or offered, and a
        one-piece driver wins a tie. Then the template is not built, as the kernel builds
        one only for a name no registered algorithm answers. A template registered by a
        user may rank its instances as it likes: it is always built."""
        if found is None or template not in self.loader.manifest.templates:
            return False
        return found.priority >= max(self.table.top_priority, self.loader.manifest.top_priority)

    def _first_usable(self, name: str, type: AlgType | None) -> Algorithm | None:
        """The best usable candidate, importing the next provider of ``name`` whenever it
        might offer one at least as good as the best candidate left."""
        while True:
            floor = self.loader.best_unloaded(name)
            for entry in self.table.candidates(name, type):
                if entry.alg.priority <= floor:
                    break  # a provider not imported yet may offer a better one
                if self.usable(entry):
                    self._cache(entry, name, type)
                    return entry.alg
            else:
                if floor < 0:
                    return None
            self.loader.load_next(name)

    def _cache(self, entry: Entry, name: str, type: AlgType | None) -> None:
        with self.table.cond:
            if self._still_the_answer(entry, name, type):
                self.table.resolved[type][name] = entry.alg

    def _still_the_answer(self, entry: Entry, name: str, type: AlgType | None) -> bool:
        """Whether ``entry`` is what a lookup of ``name`` would return now: registered, and
        every better-ranked candidate failed. Registrations and tests that finished while
        ``entry`` was being tested may have changed the answer; only a current one is
        cached (a stale one would outlive the change that made it stale). Lock held."""
        if self.table.drivers.get(entry.alg.driver) is not entry:
            return False
        if entry.alg.priority <= self.loader.best_unloaded(name):
            return False
        for better in self.table.candidates_locked(name, type):
            if better is entry:
                return True
            if better.selftest is not SelfTest.FAILED:
                return False
        return False

    def usable(self, entry: Entry) -> bool:
        """Whether ``entry``'s own test has run and did not fail (or tests are off): test it
        if a test is due, or wait for the one under way.

        The test larval belongs to the entry, not to the driver name: a driver unregistered
        and registered again is a new entry, and a lookup of it must not take the old
        entry's test (still running, or long finished) for its own. A PENDING entry is
        never usable, whoever ran or is running which test.

        Nor is an entry whose test is what asks (:class:`Circular`): a partial driver's
        fuzzing asks for its fallback, and the lookups that find one may reach the driver
        itself, or a candidate whose own test is waiting on it. The kernel's lookup masks
        out such algorithms (``CRYPTO_ALG_NEED_FALLBACK``); here they are passed over, so
        the fallback is the next usable implementation, as it is with tests off.
        """
        if entry.unbound:
            self._bind(entry)
        if entry.selftest is SelfTest.PENDING:
            try:
                self._larvals.run(
                    f"test {entry.alg.driver} #{entry.order}",
                    lambda: self._test(entry),
                    self.timeout,
                )
            except Circular:
                return False
        return entry.selftest in USABLE

    def _bind(self, entry: Entry) -> None:
        """Bind ``entry``'s rng record to this registry (``bind``), once."""
        with self.table.cond:
            if entry.unbound:
                entry.alg = self.bind(entry.alg)
                entry.unbound = False

    def _test(self, entry: Entry) -> None:
        if entry.selftest is not SelfTest.PENDING:
            return
        started = time.perf_counter()
        result, micros = self.manager.test(entry.alg)
        with self.table.cond:
            entry.selftest, entry.selftest_us = result, micros
            self.table.changed()
        self.table.emit_test(entry.alg.driver, started, str(result))

    def submit_tests(self, entries: list[Entry]) -> None:
        """Queue the eager tests of new entries on the manager's pool."""
        with self.table.cond:
            self.queued += len(entries)
        refused = sum(not self.manager.submit(self._queued_test(entry)) for entry in entries)
        if refused:
            with self.table.cond:
                self.queued -= refused
                self.table.cond.notify_all()

    def _queued_test(self, entry: Entry) -> Callable[[], None]:
        """The pool's job for ``entry``: its test, then one fewer queued."""

        def job() -> None:
            try:
                self.usable(entry)
            finally:
                with self.table.cond:
                    self.queued -= 1
                    self.table.cond.notify_all()

        return job

    def wait_idle(self, timeout: float | None = None) -> None:
        """Wait until every eager test submitted so far has finished."""
        with self.table.cond:
            done = self.table.cond.wait_for(lambda: self.queued == 0, timeout)
        if not done:
            raise LookupTimeout(f"self-tests still running after {timeout:g} s")

    def fallback_core(self, alg: Algorithm, passed: frozenset[str] = frozenset()) -> Algorithm:
        """The next usable implementation of ``alg``'s name, for the parameters ``alg``
        lacks (NeedFallback; the transform makes its core and can name its driver), other
        than those ``passed`` over already; every provider is loaded and every composition
        built for it if need be."""
        self.everything(alg.name)
        for entry in self.table.candidates(alg.name, alg.type):
            driver = entry.alg.driver
            if driver != alg.driver and driver not in passed and self.usable(entry):
                return entry.alg
        raise AlgorithmNotFound(f"no implementation of {alg.name} besides {alg.driver}")


def alg_type(type: AlgType | str) -> AlgType:
    """``type`` as an AlgType; TypeError or InvalidArgument naming the choices."""
    if not isinstance(type, str):
        raise TypeError(f"type must be an AlgType or its name, not {type.__class__.__name__}")
    try:
        return AlgType(type)
    except ValueError:
        choices = ", ".join(kind.value for kind in AlgType)
        raise InvalidArgument(f"type {type!r} is not one of {choices}") from None
