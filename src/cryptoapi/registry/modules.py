"""Lazy providers: import the provider modules a lookup needs, best first (the kernel's
``request_module`` answering one ``modules.alias`` line at a time).

For a name, the manifest lists the modules offering it with the priority of their driver;
a lookup imports the best one first and the next only when the better ones are unusable
(failed self-test, unregistered, or a caller asks for every implementation). An optional
dependency that is absent (``ModuleNotFoundError`` for a module outside cryptoapi) is
remembered for the process, so no later registry tries to import it again.
"""

from __future__ import annotations

import sys
import time

from cryptoapi.registry.algapi import Batch, validate

TYPE_CHECKING = False  # not typing's: importing typing costs more than hashlib; mypy sets it true

if TYPE_CHECKING:
    from collections.abc import Callable

    from cryptoapi.alg import Algorithm
    from cryptoapi.registry.manifest import Manifest
    from cryptoapi.registry.sync import Larvals, Monitor

    RegisterBatch = Callable[[Batch], object]

_ABSENT: set[str] = set()
"""Provider modules whose optional dependency is missing: they offer nothing, this process."""
_BATCHES: dict[str, Batch] = {}
"""Provider module -> its records, validated and ranked once per process (module constants)."""
_MERGED: dict[tuple[str, ...], Batch] = {}
"""Modules registered together (``load_all``) -> their records as one batch."""


class Loader:
    """Imports provider modules for one registry and registers each one's batch, once.

    ``register`` inserts a batch in one step (under ``lock``, the table's, which it takes
    again: the lock is reentrant); a module counts as loaded in the same step, so a
    provider two threads load at once, or one that ``load_all`` and a lookup both reach,
    is registered once.
    """

    def __init__(
        self,
        manifest: Manifest,
        larvals: Larvals,
        register: RegisterBatch,
        timeout: float,
        emit_load: Callable[[str, float, str], None] | None = None,
        *,
        lock: Monitor,
    ) -> None:
        self.manifest = manifest
        self._emit_load = emit_load
        self._larvals = larvals
        self._register = register
        self._timeout = timeout
        self._lock = lock
        self._loaded: set[str] = set()

    def best_unloaded(self, name: str) -> int:
        """The priority of the best provider of ``name`` not imported yet, else -1."""
        for priority, module in self.manifest.offers_for(name):
            if module not in self._loaded:
                return priority
        return -1

    def load_next(self, name: str) -> None:
        """Import the best provider of ``name`` not imported yet (if any)."""
        for _, module in self.manifest.offers_for(name):
            if module not in self._loaded:
                self.ensure_loaded(module)
                return

    def load_driver(self, driver: str) -> None:
        """Import the one module that can register ``driver`` (nothing for a name)."""
        module = self.manifest.by_driver.get(driver)
        if module is not None:
            self.ensure_loaded(module)

    def load_every(self, name: str) -> None:
        """Import every provider of ``name`` (or of the driver ``name``)."""
        for module in self.manifest.modules_for(name):
            self.ensure_loaded(module)

    def load_all(self) -> None:
        """Import every provider in the manifest, and register all that were not yet in
        one step (the kernel's ``crypto_register_algs``: one lock, one wake-up)."""
        pending = [module for module in self.manifest.providers if module not in self._loaded]
        if pending:
            started = time.perf_counter() if self._emit_load is not None else 0.0
            self._register_new([(module, batch_of(module)) for module in pending], started)

    def ensure_loaded(self, module: str) -> None:
        """Import ``module`` and register its records, once; concurrent askers wait."""
        if module not in self._loaded:
            self._larvals.run(f"load {module}", lambda: self._load(module), self._timeout)

    def _load(self, module: str) -> None:
        if module not in self._loaded:
            started = time.perf_counter() if self._emit_load is not None else 0.0
            self._register_new([(module, batch_of(module))], started)

    def _register_new(self, loaded: list[tuple[str, Batch]], started: float) -> None:
        """Register the batches of the modules in ``loaded`` not registered meanwhile:
        several as their one merged batch (:func:`merged`), ranked once per process."""
        with self._lock:
            fresh = [(module, batch) for module, batch in loaded if module not in self._loaded]
            if len(fresh) > 1:
                self._register(merged(tuple(module for module, _ in fresh)))
            elif fresh:
                self._register(fresh[0][1])
            self._loaded.update(module for module, _ in fresh)
        if self._emit_load is not None:  # the boot chart's provider bars
            for module, batch in fresh:
                self._emit_load(module, started, "ok" if batch.algs else "absent")


def merged(modules: tuple[str, ...]) -> Batch:
    """One batch of every record of ``modules`` (each already in ``_BATCHES``), made once per
    process and set of modules: bringing every provider up is then one insert with its
    ranking and its collision checks among the providers already done (the kernel's
    ``crypto_register_algs``); AlgorithmExists if two modules register one driver."""
    batch = _MERGED.get(modules)
    if batch is None:
        batch = _MERGED[modules] = Batch(alg for module in modules for alg in _BATCHES[module].algs)
    return batch


def batch_of(module: str) -> Batch:
    """``module``'s records, imported, validated and ranked once per process."""
    batch = _BATCHES.get(module)
    if batch is None:
        algorithms = _algorithms_of(module)
        for alg in algorithms:
            validate(alg)
        batch = _BATCHES[module] = Batch(algorithms)
    return batch


def _algorithms_of(module: str) -> tuple[Algorithm, ...]:
    """``module.ALGORITHMS``; nothing if an optional dependency is absent (remembered)."""
    if module in _ABSENT:
        return ()
    try:
        imported = sys.modules.get(module) or _import(module)
    except ModuleNotFoundError as missing:
        if missing.name and missing.name.startswith("cryptoapi"):
            raise
        _ABSENT.add(module)
        return ()
    algorithms: tuple[Algorithm, ...] = getattr(imported, "ALGORITHMS")  # noqa: B009
    return algorithms


def _import(module: str) -> object:
    __import__(module)  # not importlib.import_module: importlib costs 0.6 ms to import
    return sys.modules[module]
