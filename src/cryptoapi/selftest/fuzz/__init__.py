"""Differential fuzzing of every implementation against its reference (see ``engine``),
with seeded, replayable cases (see ``cases``)."""

import os
from collections.abc import Callable

from cryptoapi.alg import Algorithm, AlgType
from cryptoapi.errors import AlgorithmNotFound
from cryptoapi.selftest.fuzz.engine import FuzzResult, Mismatch, fuzz
from cryptoapi.selftest.fuzz.references import OPINION_PROVIDERS, reference_driver
from cryptoapi.selftest.fuzz.target import FuzzTarget

__all__ = [
    "NOT_FUZZED",
    "FuzzResult",
    "FuzzTarget",
    "Mismatch",
    "fuzz",
    "make_fuzzer",
    "new_seed",
    "opinions_for",
    "plan",
    "reference_driver",
    "reference_for",
]


NOT_FUZZED = frozenset((AlgType.RNG,))
"""Types never fuzzed, on purpose: the drivers of ``stdrng`` are different DRBG mechanisms
(the same seed gives different bytes by design) and each is the only implementation of
itself, so there is nothing to compare; each is checked by its CAVP known answers and the
SP 800-90A §11.3 health test at registration instead."""


def new_seed() -> int:
    """A fresh run seed from the OS (the cases themselves never touch the OS CSPRNG)."""
    return int.from_bytes(os.urandom(8), "big") >> 1


def reference_for(registry: FuzzTarget, impl: Algorithm) -> Algorithm:
    """The declared reference of ``impl``'s name (``references.REFERENCES``); ``impl``
    itself if it is the reference or there is none (then only its self-consistency is
    checked)."""
    driver = reference_driver(impl.name)
    if driver in (impl.driver, impl.name):
        return impl
    try:
        return registry.lookup(driver, impl.type)
    except AlgorithmNotFound:
        return impl


def opinions_for(registry: FuzzTarget, impl: Algorithm) -> tuple[Algorithm, ...]:
    """The other independent implementations of ``impl``'s name that are installed: the
    one-piece drivers of ``references.OPINION_PROVIDERS`` (not this package's templates over
    their primitives), asked when ``impl`` and its reference disagree."""
    drivers = [
        info.driver
        for info in registry.algorithms()
        if info.name == impl.name and info.provider in OPINION_PROVIDERS
    ]
    found = (registry.lookup(driver, impl.type) for driver in drivers if driver != impl.driver)
    return tuple(alg for alg in found if not alg.inner)


def plan(
    registry: FuzzTarget, names: list[str], driver: str | None = None
) -> list[tuple[Algorithm, Algorithm]]:
    """(implementation, reference) pairs: every driver of every name (all by default)."""
    registry.instantiate_all(names)
    infos = registry.algorithms()
    wanted = set(names)
    pairs = []
    for info in infos:
        if (wanted and info.name not in wanted) or (driver and info.driver != driver):
            continue
        if str(info.selftest) == "failed" or info.type in NOT_FUZZED:
            continue
        impl = registry.lookup(info.driver)
        pairs.append((impl, reference_for(registry, impl)))
    return pairs


def make_fuzzer(registry: FuzzTarget, seed: int) -> Callable[[Algorithm, int], str | None]:
    """The ``full`` self-test mode's hook: ``n`` cases of one implementation against its
    reference, at registration; returns the mismatch report, or None."""

    def fuzz_at_registration(impl: Algorithm, iterations: int) -> str | None:
        if impl.type in NOT_FUZZED:
            return None
        result = fuzz(
            registry.new_transform, impl, reference_for(registry, impl), seed, iterations=iterations
        )
        return None if result.mismatch is None else result.mismatch.report()

    return fuzz_at_registration
