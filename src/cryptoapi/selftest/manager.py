"""The self-test manager: one policy switch for every implementation.

| mode    | when an implementation is tested                                         |
|---------|--------------------------------------------------------------------------|
| ``off``   | never: registering is an insert and a wake-up, no thread, no queue   |
| ``lazy``  | the first time it is allocated, by the allocating thread              |
| ``eager`` | at registration, on one bounded pool (``min(4, CPUs)`` workers)       |
| ``full``  | as ``eager``, plus differential fuzzing through :attr:`fuzzer`        |

The registry asks :meth:`SelfTestManager.initial_state` at registration, hands eager tests
to :meth:`submit`, and calls :meth:`test` when one is due. ``CRYPTOAPI_BREAK_SELFTEST``
names drivers whose tests must fail (their outputs are corrupted before comparison), so
anyone can watch the fallback to the next implementation work (or, in FIPS mode, the
error state: :attr:`SelfTestManager.fatal`).
"""

from __future__ import annotations

import os
import time

from cryptoapi.alg import Algorithm, SelfTest
from cryptoapi.errors import InvalidArgument, SelfTestFailed
from cryptoapi.selftest.kat import run_known_answers
from cryptoapi.selftest.vectors import vectors_for

TYPE_CHECKING = False  # not typing's: importing typing costs more than hashlib; mypy sets it true

if TYPE_CHECKING:
    from collections.abc import Callable
    from concurrent.futures import ThreadPoolExecutor
    from enum import StrEnum
    from typing import NoReturn

    Fuzzer = Callable[[Algorithm, int], str | None]
    """Runs ``n`` fuzz cases of an implementation; returns a mismatch report or None."""
    Fatal = Callable[[Algorithm, Exception], NoReturn]
    """Called on a failed test (known answers or fuzzing) instead of reporting it: FIPS
    mode's error state, which raises (no fallback to the next implementation)."""
else:
    from cryptoapi._strenum import StrEnum

DEFAULT_FUZZ_ITERATIONS = 100


class Mode(StrEnum):
    OFF = "off"
    LAZY = "lazy"
    EAGER = "eager"
    FULL = "full"


def mode_from(value: str | None) -> Mode:
    """The policy from an argument, else ``CRYPTOAPI_SELFTESTS``/``CRYPTOAPI_NOTESTS``."""
    if value is None:
        if os.environ.get("CRYPTOAPI_NOTESTS", "") not in ("", "0"):
            return Mode.OFF
        value = os.environ.get("CRYPTOAPI_SELFTESTS") or Mode.LAZY
    try:
        return Mode(value)
    except ValueError:
        choices = ", ".join(m.value for m in Mode)
        raise InvalidArgument(f"self-test mode {value!r} is not one of {choices}") from None


def fips_from(value: bool | None) -> bool:
    """FIPS mode (:mod:`cryptoapi.fips`) from an argument, else from ``CRYPTOAPI_FIPS`` (on
    unless empty or ``0``). Here, beside :func:`mode_from`, because FIPS mode is a self-test
    policy too (tests mandatory, failures fatal), and every registry asks it."""
    if value is None:
        return os.environ.get("CRYPTOAPI_FIPS", "") not in ("", "0")
    if not isinstance(value, bool):
        raise TypeError(f"fips must be a bool or None, not {type(value).__name__}")
    return value


def default_workers() -> int:
    return min(4, os.cpu_count() or 1)


def broken_from_env() -> frozenset[str]:
    """Drivers named in ``CRYPTOAPI_BREAK_SELFTEST`` (comma-separated)."""
    raw = os.environ.get("CRYPTOAPI_BREAK_SELFTEST", "")
    return frozenset(driver.strip() for driver in raw.split(",") if driver.strip())


class SelfTestManager:
    """Decides when implementations are tested, runs their tests and reports failures."""

    def __init__(
        self,
        mode: Mode,
        *,
        workers: int | None = None,
        fuzz_iterations: int = DEFAULT_FUZZ_ITERATIONS,
        broken: frozenset[str] | None = None,
    ) -> None:
        self.mode = mode
        self._workers = workers or None  # 0 or None: the default
        self.fuzz_iterations = fuzz_iterations
        self.fuzzer: Fuzzer | None = None
        self.fatal: Fatal | None = None  # set by a registry in FIPS mode
        self.fuzz_seed = 0  # set with the fuzzer: the seed that replays its cases
        self.broken = broken_from_env() if broken is None else broken
        self._pool: ThreadPoolExecutor | None = None

    @property
    def workers(self) -> int:
        """The eager pool's size: as asked, else ``min(4, CPUs)``, counted when first
        needed (``os.cpu_count`` reads sysfs: 10 us, most of a registry's bring-up)."""
        if self._workers is None:
            self._workers = default_workers()
        return self._workers

    @property
    def at_registration(self) -> bool:
        """Whether tests start when an implementation registers (eager and full)."""
        return self.mode in (Mode.EAGER, Mode.FULL)

    def initial_state(self) -> SelfTest:
        return SelfTest.UNTESTED if self.mode is Mode.OFF else SelfTest.PENDING

    def submit(self, job: Callable[[], object]) -> bool:
        """Queue an eager test on the bounded pool, created on first use. False when the
        interpreter is shutting down and takes no new work: the test is then not queued,
        and the implementation stays PENDING (tested on first use, never used untested)."""
        if self._pool is None:
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="cryptomgr")
        try:
            self._pool.submit(job)
        except RuntimeError:  # "cannot schedule new futures after interpreter shutdown"
            return False
        return True

    def test(self, alg: Algorithm) -> tuple[SelfTest, float]:
        """Run ``alg``'s known-answer tests (and fuzzing in ``full``): result, microseconds."""
        started = time.perf_counter()
        vectors = vectors_for(alg.name)
        result = self._run(alg, vectors) if vectors else SelfTest.UNTESTED
        return result, (time.perf_counter() - started) * 1e6

    def _run(self, alg: Algorithm, vectors: list[dict[str, str]]) -> SelfTest:
        try:
            run_known_answers(alg, vectors, corrupt=alg.driver in self.broken)
            if self.mode is Mode.FULL and self.fuzzer is not None:
                mismatch = self.fuzzer(alg, self.fuzz_iterations)
                if mismatch is not None:
                    raise SelfTestFailed(f"{alg.driver}: fuzzing found a mismatch: {mismatch}")
        except Exception as error:  # any exception from an implementation fails its test
            _report_failure(alg, error)
            if self.fatal is not None:
                self.fatal(alg, error)
            return SelfTest.FAILED
        return SelfTest.PASSED


def _report_failure(alg: Algorithm, error: Exception) -> None:
    import logging  # only on this path: logging costs more to import than a test run

    logging.getLogger("cryptoapi.selftest").error(
        "self-test failed for %s (%s); it will not be used: %s", alg.driver, alg.name, error
    )
