"""The registry: register, unregister and look up implementations; build template instances.

A lookup by driver returns exactly that implementation; a lookup by name returns the
highest-priority one that is usable (tested per the self-test policy, never a failed one).
A name nobody registered is parsed as ``template(args)`` and built once from the best inner
implementations. Providers are imported on first need, from the static manifest.

Hot path: a resolved lookup is cached per (name, type), so a repeated ``alloc_*`` is one
dict read. Every change to the registry clears that cache under the lock.
"""

import importlib
import threading
from dataclasses import dataclass
from functools import partial
from typing import Any

from cryptoapi.alg import AlgInfo, Algorithm, AlgType, SelfTest, Template
from cryptoapi.errors import AlgorithmExists, AlgorithmNotFound, InvalidArgument
from cryptoapi.names import parse
from cryptoapi.registry.larval import Larvals
from cryptoapi.registry.manifest import Manifest
from cryptoapi.selftest.manager import SelfTestManager, mode_from
from cryptoapi.transforms.shash import Shash

DEFAULT_LOOKUP_TIMEOUT = 60.0


@dataclass(eq=False)
class _Entry:
    alg: Algorithm
    selftest: SelfTest
    order: int


class Registry:
    """A set of registered implementations with its own self-test policy.

    ``selftests`` is ``off``, ``lazy``, ``eager`` or ``full`` (default: the
    ``CRYPTOAPI_SELFTESTS`` environment variable, else ``lazy``). ``lookup_timeout`` bounds
    every wait on work another thread is doing (building, loading, testing).
    """

    def __init__(
        self,
        selftests: str | None = None,
        *,
        lookup_timeout: float = DEFAULT_LOOKUP_TIMEOUT,
        manifest: Manifest | None = None,
    ) -> None:
        self.selftest = SelfTestManager(mode_from(selftests))
        self.lookup_timeout = lookup_timeout
        self._manifest = manifest or Manifest()
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

    # -- registration ---------------------------------------------------------------

    def register(self, alg: Algorithm) -> None:
        """Register an implementation; raises AlgorithmExists on a name/driver collision."""
        _validate(alg)
        with self._cond:
            self._check_collision(alg, include_manifest=True)
            self._finish_registration(alg)

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
            entry = self._drivers.get(driver)
            if entry is None:
                raise AlgorithmNotFound(f"no driver {driver!r} is registered")
            doomed = {driver}
            for other in sorted(self._drivers.values(), key=lambda e: e.order):
                if any(inner.driver in doomed for inner in other.alg.inner):
                    doomed.add(other.alg.driver)
            for gone in doomed:
                self._remove(self._drivers.pop(gone))
            self._changed()

    def _finish_registration(self, alg: Algorithm) -> None:
        """The one step every registration ends in: insert, then wake whoever waits.

        With self-tests off this is all a registration costs: no thread, no queue.
        """
        self._order += 1
        entry = _Entry(alg, self.selftest.initial_state(), self._order)
        self._drivers[alg.driver] = entry
        ranked = [*self._names.get(alg.name, ()), entry]
        ranked.sort(key=lambda e: (-e.alg.priority, e.order))
        self._names[alg.name] = ranked
        if not alg.inner:
            self._built.clear()  # a new inner algorithm may make instances better
        self._changed()

    def _changed(self) -> None:
        for resolved in self._resolved.values():
            resolved.clear()
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

    def lookup(self, name: str, type: AlgType | str | None = None) -> Algorithm:
        """The implementation ``name`` (a name or driver) resolves to, tested per policy."""
        kind = None if type is None else AlgType(type)
        return self._resolved[kind].get(name) or self._resolve(name, kind)

    def _resolve(self, name: str, type: AlgType | None) -> Algorithm:
        parsed = parse(name)
        self._load_providers(name)
        if parsed.is_template and name not in self._built:
            self._larvals.run(f"build {name}", lambda: self._build(name), self.lookup_timeout)
        for entry in self._candidates(name, type):
            if self._usable(entry):
                with self._cond:
                    if self._drivers.get(entry.alg.driver) is entry:
                        self._resolved[type][name] = entry.alg
                return entry.alg
        what = f"{type} " if type else ""
        raise AlgorithmNotFound(f"no usable {what}algorithm or driver named {name!r}")

    def _candidates(self, name: str, type: AlgType | None) -> list[_Entry]:
        with self._cond:
            exact = self._drivers.get(name)
            entries = [exact] if exact else list(self._names.get(name, ()))
        return [e for e in entries if type is None or e.alg.type is type]

    def _usable(self, entry: _Entry) -> bool:
        if entry.selftest is SelfTest.PENDING:
            self._larvals.run(
                f"test {entry.alg.driver}", lambda: self._test(entry), self.lookup_timeout
            )
        return entry.selftest is not SelfTest.FAILED

    def _test(self, entry: _Entry) -> None:
        if entry.selftest is SelfTest.PENDING:
            result = self.selftest.test(entry.alg)
            with self._cond:
                entry.selftest = result
                self._changed()

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
            algorithms: tuple[Algorithm, ...] = importlib.import_module(module).ALGORITHMS
        except ModuleNotFoundError as missing:
            if missing.name and missing.name.startswith("cryptoapi"):
                raise
            algorithms = ()  # an optional dependency is absent: the provider offers nothing
        with self._cond:
            for alg in algorithms:
                _validate(alg)
                self._check_collision(alg, include_manifest=False)
            for alg in algorithms:
                self._finish_registration(alg)
            self._loaded.add(module)

    def _build(self, name: str) -> None:
        """Instantiate ``name`` from its template and register it unless already present."""
        parsed = parse(name)
        template = self._template(parsed.word)
        args = tuple(str(arg) for arg in parsed.args)
        alg = template.create(self.lookup, args)
        _validate(alg)
        with self._cond:
            if alg.driver not in self._drivers:
                self._check_collision(alg, include_manifest=False)
                self._finish_registration(alg)
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

    # -- views and allocation -------------------------------------------------------

    def algorithms(self) -> list[AlgInfo]:
        """Every registered implementation (all providers loaded), by name then priority."""
        self.load_all()
        with self._cond:
            entries = sorted(
                self._drivers.values(), key=lambda e: (e.alg.name, -e.alg.priority, e.order)
            )
            return [e.alg.info(e.selftest) for e in entries]

    def alloc_shash(self, name: str) -> Shash:
        """A hash or MAC transform for ``name`` (e.g. ``sha256``, ``hmac(sha256)``)."""
        return Shash(self._resolved_shash.get(name) or self._resolve(name, AlgType.SHASH))


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
