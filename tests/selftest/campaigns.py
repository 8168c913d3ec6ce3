"""Helpers for the campaign and resume-file tests: one range run here, as a worker runs it."""

from cryptoapi import Registry
from cryptoapi.selftest.fuzz import fuzz, reference_for
from cryptoapi.selftest.fuzz.campaign import CaseRange, RangeResult

DRIVER = "hmac(sha256-openssl)"


def run_range(task: CaseRange, seed: int = 5, registry: Registry | None = None) -> RangeResult:
    """``task`` fuzzed against its reference (no other opinions), named worker "here"."""
    registry = registry or Registry("off")
    impl = registry.lookup(task.driver)
    ref = reference_for(registry, impl)
    result = fuzz(registry.new_transform, impl, ref, seed, start=task.start, iterations=task.stop)
    return RangeResult(task, result, "here")
