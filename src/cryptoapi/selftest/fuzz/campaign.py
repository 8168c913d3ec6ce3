"""A fuzzing campaign split into case ranges, so that any number of workers, in any order,
give the result one process gives.

A campaign is (seed, drivers, cases per driver, range size, minimum). Each driver's
cases 0..N-1 are split into a first range of ``minimum`` cases, then ranges each as large
as all before it, up to ``chunk`` cases (``split``): 0..1, 1..2, 2..4, 4..8, ... A range is
run by the engine (``fuzz(..., start=, iterations=stop)``), and every case in it is still
drawn from (seed, algorithm, case number), so where and in what order a range runs changes
nothing, and ``--seed S --case K`` replays case K of any run.

Ranges are scheduled in rounds (``split``'s order): every driver's first range, then every
driver's second, and so on. A time budget therefore spreads the cases over every driver:
each gets its ``minimum`` before any gets more, then every round doubles each driver's
cases, until the deadline. ``Campaign.shortfall`` names the drivers a budget left below
the minimum.

The run's ``inputs_digest`` of a driver composes over ranges: SHA-256 over the ranges'
digests (32 bytes each) in case order, where a range's digest is the engine's (SHA-256
over its cases' ``Case.inputs()``). The same seed, case count and range size therefore
give the same digest with ``--jobs 1``, ``--jobs N`` or a cluster.

The engine stops a driver at its first mismatch; across ranges the one reported is the
one with the lowest case number, and the cases counted are those of the ranges before it
plus its own up to and including the mismatch (what one process counts); later ranges
are ignored, and cancelled when they have not started (``Campaign.superseded``).

``resume.ResumeFile`` records each finished range, so that a rerun skips it.
"""

import hashlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from itertools import pairwise
from typing import Any

from cryptoapi.selftest.fuzz.engine import FuzzResult

DEFAULT_CHUNK = 1000
"""Cases per range: large enough that a cluster's cost per task (about a millisecond)
stays well under 10% of the work (``bench/fuzz.py`` measures it)."""

DEFAULT_MINIMUM = 1
"""Cases every driver runs before any runs more: the first round of a campaign. One case
of each of the 541 drivers took 5 to 14 s in one process on a busy 2-core machine (the
8192-bit FFDHE groups take a second a case against their generic reference; ten cases of
every driver took over 20 s), so a budget of 20 s reaches every driver; later rounds
double every driver's cases."""

DEADLINE_GRACE = 1.0
"""Seconds past the time budget after which unfinished ranges are cancelled."""


@dataclass(frozen=True)
class CaseRange:
    """Cases start..stop-1 of one driver."""

    driver: str
    start: int
    stop: int


@dataclass(frozen=True)
class Parameters:
    """What a campaign's results depend on; a resume file must have been written with
    the same."""

    seed: int
    iterations: int
    chunk: int
    drivers: tuple[str, ...]
    only_case: int | None = None
    minimum: int = DEFAULT_MINIMUM

    @property
    def required(self) -> int:
        """The cases a driver must run (or stop at a mismatch) for the campaign to have
        reached it: the first round's."""
        return 1 if self.only_case is not None else min(self.minimum, self.iterations)


@dataclass
class RangeResult:
    """What one range produced, and where it ran; ``complete`` unless the time budget
    cut it short."""

    task: CaseRange
    result: FuzzResult
    worker: str
    complete: bool = True


def split(parameters: Parameters) -> list[CaseRange]:
    """Every driver's ranges, in rounds: every driver's first range (its ``minimum``
    cases), then every driver's next, each driver's in case order (one range of one case
    with ``only_case``)."""
    if parameters.only_case is not None:
        case = parameters.only_case
        return [CaseRange(driver, case, case + 1) for driver in parameters.drivers]
    return [
        CaseRange(driver, start, stop)
        for start, stop in _bounds(parameters)
        for driver in parameters.drivers
    ]


def _bounds(parameters: Parameters) -> list[tuple[int, int]]:
    """(start, stop) of a driver's ranges: ``minimum`` cases, then each range as large as
    all before it (so each round doubles every driver's cases), up to ``chunk`` cases."""
    total, chunk = parameters.iterations, parameters.chunk
    edges = [0, parameters.required]
    while edges[-1] < total:
        edges.append(min(edges[-1] + min(edges[-1], chunk), total))
    return list(pairwise(edges))


def compose_digest(range_digests: Iterable[str]) -> str:
    """SHA-256 over the ranges' digests (hex, in case order), as 32-byte values."""
    return hashlib.sha256(b"".join(bytes.fromhex(d) for d in range_digests)).hexdigest()


@dataclass
class DriverRun:
    """One driver's campaign result: the engine's vocabulary, plus the cases per worker."""

    result: FuzzResult
    workers: dict[str, int] = field(default_factory=dict)


def combine(ranges: list[RangeResult]) -> DriverRun:
    """One driver's result from its ranges: up to and including the first mismatch."""
    ordered = sorted(ranges, key=lambda r: r.task.start)
    counted = []
    for done in ordered:
        counted.append(done)
        if done.result.mismatch is not None:
            break
    first = ordered[0].result
    workers: Counter[str] = Counter()
    for done in counted:
        if done.result.cases:
            workers[done.worker] += done.result.cases
    result = replace(
        first,
        cases=sum(r.result.cases for r in counted),
        seconds=sum(r.result.seconds for r in counted),
        mismatch=counted[-1].result.mismatch,
        inputs_digest=compose_digest(r.result.inputs_digest for r in counted),
    )
    return DriverRun(result, dict(workers))


class Campaign:
    """The ranges still to run and those done; which ranges a mismatch makes useless."""

    def __init__(self, parameters: Parameters, done: Iterable[RangeResult] = ()) -> None:
        self.parameters = parameters
        self.done: dict[CaseRange, RangeResult] = {}
        self._first_mismatch: dict[str, int] = {}
        for finished in done:
            self.add(finished)
        self.pending = [task for task in split(parameters) if task not in self.done]

    def wanted(self, task: CaseRange) -> bool:
        """False once a mismatch before ``task`` is known: its result would be ignored."""
        first = self._first_mismatch.get(task.driver)
        return first is None or task.start <= first

    def to_run(self) -> list[CaseRange]:
        """The pending ranges still wanted, in rounds (``split``'s order)."""
        return [task for task in self.pending if self.wanted(task)]

    def add(self, done: RangeResult) -> None:
        self.done[done.task] = done
        if done.result.mismatch is not None:
            index = done.result.mismatch.case.index
            driver = done.task.driver
            self._first_mismatch[driver] = min(index, self._first_mismatch.get(driver, index))

    def superseded(self, futures: dict[Any, CaseRange]) -> list[Any]:
        """The futures (of ``futures``: future → range) whose range is no longer wanted."""
        return [future for future, task in futures.items() if not self.wanted(task)]

    def results(self) -> list[DriverRun]:
        """Each driver's result, in the parameters' driver order (drivers that ran)."""
        return list(self._runs().values())

    def _runs(self) -> dict[str, DriverRun]:
        by_driver: dict[str, list[RangeResult]] = {}
        for done in self.done.values():
            by_driver.setdefault(done.task.driver, []).append(done)
        return {d: combine(by_driver[d]) for d in self.parameters.drivers if d in by_driver}

    def unfinished(self) -> dict[str, int]:
        """Drivers that ran fewer cases than asked and found no mismatch (a time budget
        stopped them): driver → cases run, 0 for one never reached, in driver order."""
        runs = self._runs()
        cases = {d: runs[d].result.cases if d in runs else 0 for d in self.parameters.drivers}
        asked = 1 if self.parameters.only_case is not None else self.parameters.iterations
        return {
            driver: count
            for driver, count in cases.items()
            if count < asked and (driver not in runs or runs[driver].result.mismatch is None)
        }

    def shortfall(self) -> dict[str, int]:
        """Of ``unfinished``, the drivers below the first round's ``required`` cases: those
        the campaign did not reach."""
        required = self.parameters.required
        return {driver: count for driver, count in self.unfinished().items() if count < required}

    def progress(self) -> str:
        """Where the campaign is, in one line: cases run, drivers reached and finished."""
        drivers = self.parameters.drivers
        reached = {task.driver for task in self.done}
        open_ = {task.driver for task in self.to_run() if task not in self.done}
        cases = sum(done.result.cases for done in self.done.values())
        finished = sum(1 for d in drivers if d in reached and d not in open_)
        total = len(drivers)
        return (
            f"{cases} cases; implementations reached {len(reached)}/{total}, "
            f"finished {finished}/{total}"
        )


def gather(
    campaign: Campaign,
    futures: dict[Any, CaseRange],
    completed: Iterator[Any],
    *,
    deadline: float | None,
    clock: Callable[[], float],
    on_result: Callable[[RangeResult], None],
) -> None:
    """Collect results from ``completed`` (an ``as_completed`` over ``futures``) into
    ``campaign``; cancel ranges a mismatch made useless and, a grace period past
    ``deadline``, all that have not finished. A range stops on its own at the deadline
    (one that starts later runs no case), so the grace only lets the cut-short ranges
    report what they ran before the rest are dropped."""
    cancelled = False
    for future in completed:
        futures.pop(future)
        if future.cancelled():
            continue
        done: RangeResult = future.result()
        campaign.add(done)
        on_result(done)
        for stale in campaign.superseded(futures):
            stale.cancel()
        if not cancelled and deadline is not None and clock() > deadline + DEADLINE_GRACE:
            cancelled = True
            for pending in futures:
                pending.cancel()
