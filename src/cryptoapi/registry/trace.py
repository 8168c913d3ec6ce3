"""Trace events: what the registry did, when, on which thread (for ``cryptoapi boot``)."""

from dataclasses import dataclass


@dataclass(frozen=True)
class TraceEvent:
    """One registration or self-test, like a line of the kernel's ``initcall_debug``."""

    kind: str  # "load" (a provider module), "register" or "test"
    driver: str
    start: float  # time.perf_counter() seconds
    duration_us: float
    thread: str
    result: str  # "ok" for a registration; the self-test result for a test
