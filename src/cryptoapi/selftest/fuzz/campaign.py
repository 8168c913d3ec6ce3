"""A fuzzing campaign split into case ranges, so that any number of workers, in any order,
give the result one process gives.

A campaign is (seed, drivers, cases per driver, range size). Each driver's cases
0..N-1 are split into ranges of ``chunk`` cases (``split``); a range is run by the engine
(``fuzz(..., start=, iterations=stop)``), and every case in it is still drawn from
(seed, algorithm, case number), so where a range runs changes nothing.

The run's ``inputs_digest`` of a driver composes over ranges: SHA-256 over the ranges'
digests (32 bytes each) in case order, where a range's digest is the engine's (SHA-256
over its cases' ``Case.inputs()``). The same seed, case count and range size therefore
give the same digest with ``--jobs 1``, ``--jobs N`` or a cluster.

The engine stops a driver at its first mismatch; across ranges the one reported is the
one with the lowest case number, and the cases counted are those of the ranges before it
plus its own up to and including the mismatch (what one process counts); later ranges
are ignored, and cancelled when they have not started (``Campaign.superseded``).

``ResumeFile`` records each finished range as a JSON line, fsync'd before the next is
recorded; a rerun with the same file and parameters skips them and gives the same final
report (the digests, counts and mismatch reports are read back, not recomputed). A range
cut short by the time budget is not finished, and runs again on resume.
"""

import hashlib
import json
import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import IO, Any

from cryptoapi.errors import InvalidArgument
from cryptoapi.selftest.fuzz.cases import Case
from cryptoapi.selftest.fuzz.engine import FuzzResult, Mismatch

DEFAULT_CHUNK = 1000
"""Cases per range: large enough that a cluster's cost per task (about a millisecond)
stays well under 10% of the work (``bench/fuzz.py`` measures it)."""


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


@dataclass
class RangeResult:
    """What one range produced, and where it ran; ``complete`` unless the time budget
    cut it short."""

    task: CaseRange
    result: FuzzResult
    worker: str
    complete: bool = True


def split(parameters: Parameters) -> list[CaseRange]:
    """Every driver's ranges, in case order (one range of one case with ``only_case``)."""
    if parameters.only_case is not None:
        case = parameters.only_case
        return [CaseRange(driver, case, case + 1) for driver in parameters.drivers]
    step, total = parameters.chunk, parameters.iterations
    return [
        CaseRange(driver, start, min(start + step, total))
        for driver in parameters.drivers
        for start in range(0, total, step)
    ]


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
        """The pending ranges still wanted, in case order."""
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
        by_driver: dict[str, list[RangeResult]] = {}
        for done in self.done.values():
            by_driver.setdefault(done.task.driver, []).append(done)
        return [combine(by_driver[d]) for d in self.parameters.drivers if d in by_driver]


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


class ResumeFile:
    """JSON lines: the parameters first, then one finished range a line (fsync'd)."""

    def __init__(self, path: Path, parameters: Parameters) -> None:
        self.path = path
        self.parameters = parameters
        self._file: IO[str] | None = None

    def load(self) -> list[RangeResult]:
        """The finished ranges recorded (none for a new file); refuses a file written
        with other parameters."""
        if not self.path.exists() or self.path.stat().st_size == 0:
            return []
        lines = self.path.read_text().splitlines()
        header = json.loads(lines[0])
        if header != {"campaign": _encode(asdict(self.parameters))}:
            raise ResumeConflict(
                f"--resume {self.path}: written by a campaign with other parameters "
                f"({header.get('campaign')}), not {asdict(self.parameters)}"
            )
        # A line cut short by a crash is the range that had not finished recording.
        return [_range_from_json(json.loads(line)) for line in lines[1:] if _whole(line)]

    def record(self, done: RangeResult) -> None:
        """Append one finished range (a range cut short by the budget is not recorded)."""
        if not done.complete:
            return
        if self._file is None:
            new = not self.path.exists() or self.path.stat().st_size == 0
            self._file = self.path.open("a")
            if new:
                self._write({"campaign": _encode(asdict(self.parameters))})
        self._write(_range_to_json(done))

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def _write(self, record: dict[str, Any]) -> None:
        assert self._file is not None
        self._file.write(json.dumps(record) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())


class ResumeConflict(InvalidArgument):
    """A resume file written by a campaign with other parameters (EINVAL)."""


def _whole(line: str) -> bool:
    try:
        json.loads(line)
    except json.JSONDecodeError:
        return False
    return True


def _range_to_json(done: RangeResult) -> dict[str, Any]:
    result = asdict(done.result)
    record: dict[str, Any] = _encode(
        {"range": asdict(done.task), "worker": done.worker, "result": result}
    )
    return record


def _range_from_json(record: dict[str, Any]) -> RangeResult:
    value = _decode(record)
    fields_ = dict(value["result"])
    if fields_["mismatch"] is not None:
        mismatch = dict(fields_["mismatch"])
        mismatch["case"] = Case(**mismatch["case"])
        fields_["mismatch"] = Mismatch(**mismatch)
    result = FuzzResult(**{f.name: fields_[f.name] for f in fields(FuzzResult)})
    return RangeResult(CaseRange(**value["range"]), result, value["worker"])


def _encode(value: Any) -> Any:
    """JSON for results: bytes as {"hex": ...}, tuples as lists."""
    if isinstance(value, bytes):
        return {"hex": value.hex()}
    if isinstance(value, dict):
        return {key: _encode(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_encode(item) for item in value]
    return value


def _decode(value: Any) -> Any:
    """The inverse of ``_encode``: lists come back as tuples (results hold no lists)."""
    if isinstance(value, dict):
        if list(value) == ["hex"]:
            return bytes.fromhex(value["hex"])
        return {key: _decode(item) for key, item in value.items()}
    if isinstance(value, list):
        return tuple(_decode(item) for item in value)
    return value
