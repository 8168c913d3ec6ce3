"""The registry: register, unregister and look up implementations; build template instances.

A lookup by driver returns exactly that implementation; a lookup by name returns the
highest-priority one that is usable (tested per the self-test policy, never a failed one).
A name nobody registered is parsed as ``template(args)`` and built once from the best inner
implementations. Providers are imported on first need, from the static manifest.

Hot path: a resolved lookup is cached per name and type, so a repeated ``alloc_*`` is one
dict read. Every change to the registry clears that cache under the lock.
"""

import bisect
import contextlib
import importlib
import itertools
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from typing import Any

from cryptoapi.alg import AlgInfo, Algorithm, AlgType, SelfTest, Template
from cryptoapi.errors import AlgorithmExists, AlgorithmNotFound, InvalidArgument, LookupTimeout
from cryptoapi.names import Name, parse
from cryptoapi.registry.larval import Larvals
from cryptoapi.registry.manifest import DEFAULT_MANIFEST, Manifest
from cryptoapi.registry.trace import TraceEvent
from cryptoapi.selftest.fault import faults_from_env, faulty
from cryptoapi.selftest.manager import DEFAULT_FUZZ_ITERATIONS, Mode, SelfTestManager, mode_from
from cryptoapi.transforms.aead import Aead
from cryptoapi.transforms.cipher import Cipher
from cryptoapi.transforms.kdf import Kdf
from cryptoapi.transforms.shash import Shash
from cryptoapi.transforms.skcipher import Skcipher

DEFAULT_LOOKUP_TIMEOUT = 60.0

Trace = Callable[[TraceEvent], None]


@dataclass(eq=False)
class _Entry:
    alg: Algorithm
    selftest: SelfTest
    order: int
    selftest_us: float | None = None


class Registry:
    """A set of registered implementations with its own self-test policy.

    ``selftests`` is ``off``, ``lazy``, ``eager`` or ``full`` (default: the
    ``CRYPTOAPI_SELFTESTS`` environment variable, else ``lazy``). ``lookup_timeout`` bounds
    every wait on work another thread is doing (building, loading, testing). ``workers``
    sizes the eager test pool; ``fuzz_iterations`` bounds the cases ``full`` mode fuzzes
    per implementation; ``trace`` receives a :class:`TraceEvent` per registration and test.
    """

    def __init__(
        self,
        selftests: str | None = None,
        *,
        lookup_timeout: float = DEFAULT_LOOKUP_TIMEOUT,
        manifest: Manifest | None = None,
        workers: int | None = None,
        fuzz_iterations: int = DEFAULT_FUZZ_ITERATIONS,
        trace: Trace | None = None,
    ) -> None:
        self.selftest = SelfTestManager(
            mode_from(selftests), workers=workers, fuzz_iterations=fuzz_iterations
        )
        self.lookup_timeout = lookup_timeout
        self._manifest = manifest or DEFAULT_MANIFEST
        self._trace = trace
        self._faults = faults_from_env()
        if self.selftest.mode is Mode.FULL:
            from cryptoapi.selftest.fuzz import make_fuzzer, new_seed

            fixed = os.environ.get("CRYPTOAPI_FUZZ_SEED")
            self.selftest.fuzz_seed = int(fixed) if fixed else new_seed()
            self.selftest.fuzzer = make_fuzzer(self, self.selftest.fuzz_seed)
        self._cond = threading.Condition()
        self._larvals = Larvals(self._cond)
        self._drivers: dict[str, _Entry] = {}
        self._names: dict[str, list[_Entry]] = {}
        # name -> resolved algorithm, one dict per type (None: any type)
        self._resolved: dict[AlgType | None, dict[str, Algorithm]] = {
            kind: {} for kind in (None, *AlgType)
        }
        self._resolved_shash = self._resolved[AlgType.SHASH]
        self._built: set[str] = set()
        self._loaded: set[str] = set()
        self._templates: dict[str, Template] = {}
        self._order = 0
        self._initial_state = self.selftest.initial_state()
        self._generation = 0  # bumped by every change; waiters compare it
        self._queued = 0  # eager tests submitted and not finished

    # -- registration ---------------------------------------------------------------

    def register(self, alg: Algorithm) -> None:
        """Register an implementation; raises AlgorithmExists on a name/driver collision."""
        self._register_all((alg,), include_manifest=True)

    def register_template(self, template: Template) -> None:
        """Make ``template(args)`` names buildable in this registry."""
        parse(template.name)
        with self._cond:
            if template.name in self._templates or template.name in self._manifest.templates:
                raise AlgorithmExists(f"template {template.name!r} is already registered")
            self._templates[template.name] = template

    def unregister(self, driver: str) -> None:
        """Remove a driver and every template instance built on it."""
        with self._cond:
            if driver not in self._drivers:
                raise AlgorithmNotFound(f"no driver {driver!r} is registered")
            doomed = {driver}
            for other in sorted(self._drivers.values(), key=lambda e: e.order):
                if any(inner.driver in doomed for inner in other.alg.inner):
                    doomed.add(other.alg.driver)
            for gone in doomed:
                self._remove(self._drivers.pop(gone))
            self._changed()

    def _register_all(
        self, algs: Iterable[Algorithm], *, include_manifest: bool, validate: bool = True
    ) -> None:
        """Check every record first, so a rejected batch changes nothing; then insert."""
        algs = tuple(algs)
        if validate:
            for alg in algs:
                _validate(alg)
        with self._cond:
            for alg in algs:
                self._check_collision(alg, include_manifest=include_manifest)
            entries = [self._finish_registration(alg) for alg in algs]
            self._changed()
            if self.selftest.at_registration:
                self._queued += len(entries)
        if self.selftest.at_registration:
            for entry in entries:
                self.selftest.submit(partial(self._run_queued_test, entry))

    def _finish_registration(self, alg: Algorithm) -> _Entry:
        """The step every registration ends in (the caller then wakes waiters once).

        With self-tests off this and one wake-up are all a registration costs: no
        thread, no queue. Called with the lock held.
        """
        started = time.perf_counter() if self._trace else 0.0
        self._order += 1
        entry = _Entry(alg, self._initial_state, self._order)
        self._drivers[alg.driver] = entry
        ranked = self._names.get(alg.name)
        if ranked is None:
            self._names[alg.name] = [entry]
        else:  # a new list, so lock-free readers never see one half-sorted
            ranked = [*ranked]
            bisect.insort(ranked, entry, key=_rank)
            self._names[alg.name] = ranked
        if not alg.inner:
            self._built.clear()  # a new inner algorithm may make instances better
        if self._trace:
            self._emit("register", alg.driver, started, "ok")
        return entry

    def _changed(self) -> None:
        for resolved in self._resolved.values():
            resolved.clear()
        self._generation += 1
        self._cond.notify_all()

    def _remove(self, entry: _Entry) -> None:
        ranked = [e for e in self._names[entry.alg.name] if e is not entry]
        if ranked:
            self._names[entry.alg.name] = ranked
        else:
            del self._names[entry.alg.name]
        self._built.clear()

    def _check_collision(self, alg: Algorithm, *, include_manifest: bool) -> None:
        drivers: Any = self._drivers
        names: Any = self._names
        if include_manifest:
            drivers = {*self._drivers, *self._manifest.by_driver}
            names = {*self._names, *self._manifest.by_name}
        if alg.driver in drivers:
            raise AlgorithmExists(f"driver {alg.driver!r} is already registered")
        if alg.driver in names:
            raise AlgorithmExists(f"driver {alg.driver!r} collides with an algorithm name")
        if alg.name in drivers:
            raise AlgorithmExists(f"name {alg.name!r} collides with a driver")

    # -- lookup ---------------------------------------------------------------------

    def lookup(self, name: str, type: AlgType | str | None = None, *, wait: float = 0) -> Algorithm:
        """The implementation ``name`` (a name or driver) resolves to, tested per policy.

        With ``wait`` > 0, a name nothing provides yet is waited for (up to ``wait``
        seconds, then LookupTimeout): any registration wakes the waiter to try again.
        """
        kind = None if type is None else _alg_type(type)
        alg = self._resolved[kind].get(name)
        if alg is not None:
            return alg
        if wait <= 0:
            return self._resolve(name, kind)
        return self._resolve_waiting(name, kind, wait)

    def _resolve_waiting(self, name: str, kind: AlgType | None, wait: float) -> Algorithm:
        deadline = time.monotonic() + wait
        while True:
            generation = self._generation
            try:
                return self._resolve(name, kind)
            except AlgorithmNotFound:
                with self._cond:
                    remaining = deadline - time.monotonic()
                    woken = remaining > 0 and self._cond.wait_for(
                        partial(self._changed_since, generation), remaining
                    )
                if not woken:
                    raise LookupTimeout(f"no {name!r} was registered within {wait:g} s") from None

    def _resolve(self, name: str, type: AlgType | None) -> Algorithm:
        parsed = parse(name)
        self._load_providers(name)
        if parsed.is_template and name not in self._built:
            self._larvals.run(f"build {name}", partial(self._build, name), self.lookup_timeout)
        found = self._first_usable(name, type)
        if found is None and parsed.is_template:
            # The instance built from the best inner implementations failed its test:
            # build the others too, so the name still works if any combination passes.
            self._drivers_of(parsed)
            found = self._first_usable(name, type)
        if found is None:
            what = f"{type} " if type else ""
            raise AlgorithmNotFound(f"no usable {what}algorithm or driver named {name!r}")
        return found

    def _first_usable(self, name: str, type: AlgType | None) -> Algorithm | None:
        for entry in self._candidates(name, type):
            if self._usable(entry):
                with self._cond:
                    if self._still_the_answer(entry, name, type):
                        self._resolved[type][name] = entry.alg
                return entry.alg
        return None

    def _still_the_answer(self, entry: _Entry, name: str, type: AlgType | None) -> bool:
        """Whether ``entry`` is what a lookup of ``name`` would return now: registered, and
        every better-ranked candidate failed. Registrations and tests that finished while
        ``entry`` was being tested may have changed the answer; only a current one is
        cached (a stale one would outlive the change that made it stale). Lock held."""
        if self._drivers.get(entry.alg.driver) is not entry:
            return False
        for better in self._candidates_locked(name, type):
            if better is entry:
                return True
            if better.selftest is not SelfTest.FAILED:
                return False
        return False

    def _changed_since(self, generation: int) -> bool:
        return self._generation != generation

    def _candidates(self, name: str, type: AlgType | None) -> list[_Entry]:
        with self._cond:
            return self._candidates_locked(name, type)

    def _candidates_locked(self, name: str, type: AlgType | None) -> list[_Entry]:
        exact = self._drivers.get(name)
        entries = [exact] if exact else self._names.get(name, ())
        return [e for e in entries if type is None or e.alg.type is type]

    def _usable(self, entry: _Entry) -> bool:
        """Whether ``entry``'s own test has run and did not fail (or tests are off): test it
        if a test is due, or wait for the one under way.

        The test larval belongs to the entry, not to the driver name: a driver unregistered
        and registered again is a new entry, and a lookup of it must not take the old
        entry's test (still running, or long finished) for its own. A PENDING entry is
        never usable, whoever ran or is running which test.
        """
        if entry.selftest is SelfTest.PENDING:
            self._larvals.run(
                f"test {entry.alg.driver} #{entry.order}",
                partial(self._test, entry),
                self.lookup_timeout,
            )
        return entry.selftest in _USABLE

    def _test(self, entry: _Entry) -> None:
        if entry.selftest is not SelfTest.PENDING:
            return
        started = time.perf_counter()
        result, micros = self.selftest.test(entry.alg)
        with self._cond:
            entry.selftest, entry.selftest_us = result, micros
            self._changed()
        if self._trace:
            self._emit("test", entry.alg.driver, started, str(result))

    def _run_queued_test(self, entry: _Entry) -> None:
        try:
            self._usable(entry)
        finally:
            with self._cond:
                self._queued -= 1
                self._cond.notify_all()

    def wait_idle(self, timeout: float | None = None) -> None:
        """Wait until every eager test submitted so far has finished."""
        with self._cond:
            done = self._cond.wait_for(lambda: self._queued == 0, timeout)
        if not done:
            raise LookupTimeout(f"self-tests still running after {timeout:g} s")

    def _emit(self, kind: str, driver: str, started: float, result: str) -> None:
        assert self._trace is not None
        micros = (time.perf_counter() - started) * 1e6
        thread = threading.current_thread().name
        self._trace(TraceEvent(kind, driver, started, micros, thread, result))

    # -- lazy providers and templates -----------------------------------------------

    def _load_providers(self, name: str) -> None:
        for module in self._manifest.modules_for(name):
            self._ensure_loaded(module)

    def _ensure_loaded(self, module: str) -> None:
        if module not in self._loaded:
            self._larvals.run(f"load {module}", partial(self._load, module), self.lookup_timeout)

    def _load(self, module: str) -> None:
        if module in self._loaded:
            return
        try:
            imported = sys.modules.get(module) or importlib.import_module(module)
            algorithms: tuple[Algorithm, ...] = imported.ALGORITHMS
        except ModuleNotFoundError as missing:
            if missing.name and missing.name.startswith("cryptoapi"):
                raise
            algorithms = ()  # an optional dependency is absent: the provider offers nothing
        # A provider's records are module constants: validated once per process.
        fresh = module not in _VALIDATED_PROVIDERS
        self._register_all(algorithms, include_manifest=False, validate=fresh)
        _VALIDATED_PROVIDERS.add(module)
        self._loaded.add(module)

    def _build(self, name: str) -> None:
        """Instantiate ``name`` from its template and register it unless already present."""
        parsed = parse(name)
        template = self._template(parsed.word)
        alg = template.create(self.lookup, tuple(str(arg) for arg in parsed.args))
        try:
            self._register_all((alg,), include_manifest=False)
        except AlgorithmExists:
            if alg.driver not in self._drivers:
                raise  # a real collision, not the same instance built for another name
        self._built.add(name)

    def _template(self, word: str) -> Template:
        template = self._templates.get(word)
        if template is not None:
            return template
        module = self._manifest.templates.get(word)
        if module is None:
            raise AlgorithmNotFound(f"no algorithm, driver or template named {word!r}")
        loaded: Template = importlib.import_module(module).TEMPLATE
        return loaded

    def load_all(self) -> None:
        """Import every provider in the manifest (listing and full self-tests need them)."""
        for module in self._manifest.providers:
            self._ensure_loaded(module)

    def instantiate_all(self, extra: Iterable[str] = ()) -> None:
        """Load every provider and build every standard instance over every implementation
        of its inner names, then look up the ``extra`` names (which may be drivers or
        compositions of them; AlgorithmNotFound if one does not exist)."""
        self.load_all()
        for name in self._manifest.instances:
            self._drivers_of(parse(name))
        for name in extra:
            self.lookup(name)

    def implementations(self, name: str) -> list[str]:
        """Every driver of ``name``, best first; for a template name, the template is first
        built over each combination of its arguments' implementations (``gcm(aes)``:
        ``gcm-aes-openssl``, ``gcm(aes-openssl)``, ``gcm(aes-generic)`` ...)."""
        return self._drivers_of(parse(name))

    def _drivers_of(self, name: Name) -> list[str]:
        self._load_providers(str(name))  # one-piece implementations (cmac-aes-openssl)
        if name.is_template:
            for args in itertools.product(*(self._drivers_of(arg) for arg in name.args)):
                with contextlib.suppress(AlgorithmNotFound):
                    self.lookup(str(Name(name.word, tuple(Name(a) for a in args))))
        with self._cond:
            return [entry.alg.driver for entry in self._names.get(str(name), ())]

    def run_selftests(self, names: Iterable[str] = ()) -> list[AlgInfo]:
        """Test every registered implementation now (of ``names`` only, if given) and
        return their records; in ``off`` mode nothing is tested."""
        wanted = set(names)
        with self._cond:
            entries = [
                e for e in self._drivers.values()
                if not wanted or e.alg.name in wanted or e.alg.driver in wanted
            ]  # fmt: skip
        for entry in entries:
            self._usable(entry)
        self.wait_idle(self.lookup_timeout)
        with self._cond:
            return [e.alg.info(e.selftest, e.selftest_us) for e in entries]

    # -- views and allocation -------------------------------------------------------

    def algorithms(self) -> list[AlgInfo]:
        """Every registered implementation (all providers loaded), by name then priority."""
        self.load_all()
        with self._cond:
            entries = sorted(
                self._drivers.values(), key=lambda e: (e.alg.name, -e.alg.priority, e.order)
            )
            return [e.alg.info(e.selftest, e.selftest_us) for e in entries]

    def alloc_shash(self, name: str) -> Shash:
        """A hash or MAC transform for ``name`` (e.g. ``sha256``, ``hmac(sha256)``)."""
        alg = self._resolved_shash.get(name) or self._resolve(name, AlgType.SHASH)
        return self.new_transform(alg) if self._faults else Shash(alg)

    def alloc_cipher(self, name: str) -> Cipher:
        """A single-block cipher transform (``aes``)."""
        return self.new_transform(self.lookup(name, AlgType.CIPHER))  # type: ignore[no-any-return]

    def alloc_skcipher(self, name: str) -> Skcipher:
        """A whole-message cipher transform (``cbc(aes)``, ``xts(aes)``, ``chacha20``)."""
        return self.new_transform(self.lookup(name, AlgType.SKCIPHER))  # type: ignore[no-any-return]

    def alloc_aead(self, name: str) -> Aead:
        """An AEAD transform (``gcm(aes)``, ``rfc4106(gcm(aes))``, ``xchacha20poly1305``)."""
        return self.new_transform(self.lookup(name, AlgType.AEAD))  # type: ignore[no-any-return]

    def alloc_kdf(self, name: str) -> Kdf:
        """A key-derivation transform (``kdf108ctr(hmac(sha256))``, ``hkdf(hmac(sha256))``)."""
        return self.new_transform(self.lookup(name, AlgType.KDF))  # type: ignore[no-any-return]

    def new_transform(self, alg: Algorithm) -> Any:
        """A transform of exactly ``alg``, as users get it (with its fallback and any
        ``CRYPTOAPI_FAULT`` injected), without a lookup: the fuzzer drives these."""
        if alg.driver in self._faults:
            alg = faulty(alg)
        if alg.type is AlgType.SHASH:
            return Shash(alg)
        if alg.type is AlgType.KDF:
            return Kdf(alg)
        return _WITH_FALLBACK[alg.type](alg, partial(self._fallback_core, alg))

    def _fallback_core(self, alg: Algorithm) -> Any:
        """A core of the next usable implementation of ``alg``'s name, for the parameters
        ``alg`` lacks; template compositions are built for it if need be."""
        self._drivers_of(parse(alg.name))
        for entry in self._candidates(alg.name, alg.type):
            if entry.alg.driver != alg.driver and self._usable(entry):
                return entry.alg.create()
        raise AlgorithmNotFound(f"no implementation of {alg.name} besides {alg.driver}")


_VALIDATED_PROVIDERS: set[str] = set()
_USABLE = frozenset((SelfTest.PASSED, SelfTest.UNTESTED))
"""States a lookup may return: passed its own test, or untested because tests are off (or,
as in the kernel's ``alg_test`` for an algorithm with no test entry, it has no vectors)."""
_WITH_FALLBACK: dict[AlgType, type[Cipher | Skcipher | Aead]] = {
    AlgType.CIPHER: Cipher,
    AlgType.SKCIPHER: Skcipher,
    AlgType.AEAD: Aead,
}


def _rank(entry: _Entry) -> tuple[int, bool, int]:
    """Higher priority first; among equals a one-piece implementation before a template
    instance (a dedicated driver beats a composition of parts of the same priority), then
    the earlier registration."""
    return -entry.alg.priority, bool(entry.alg.inner), entry.order


def _alg_type(type: AlgType | str) -> AlgType:
    if not isinstance(type, str):
        raise TypeError(f"type must be an AlgType or its name, not {type.__class__.__name__}")
    try:
        return AlgType(type)
    except ValueError:
        choices = ", ".join(kind.value for kind in AlgType)
        raise InvalidArgument(f"type {type!r} is not one of {choices}") from None


def _validate(alg: Algorithm) -> None:
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


_default: Registry | None = None
_default_lock = threading.Lock()


def default_registry() -> Registry:
    """The registry the module-level functions use, created on first use."""
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = Registry()
    return _default
