"""A campaign's resume file: JSON lines, the campaign's parameters first, then one finished
range a line, so that a rerun with the same file and parameters skips what is recorded and
gives the same final report (the digests, counts and mismatch reports are read back, not
recomputed).

Trust nothing read back. Each record is written whole, newline included, and fsync'd
before the next range is recorded, so a crash leaves at most the last line incomplete
(without its newline): that torn tail is skipped with a warning (``ResumeFile.torn_line``;
its range runs again) and cut off before the next record is appended. Every other line
must be a record this campaign could have written: well-typed fields, a driver of the
campaign, exactly one of its ranges (``campaign.split``), recorded once, with the cases
that range runs (all of them, or up to and including its mismatch), and a mismatch of this
seed. Anything else refuses the whole file with one line naming the file and the line
(``ResumeDamaged``, EINVAL): counting a record that cannot be trusted would report cases
that never ran. A file written with other parameters is refused too (``ResumeConflict``).
A range cut short by the time budget is not finished: it is not recorded, and runs again.
"""

import dataclasses
import json
import math
import os
import re
import types
from dataclasses import asdict
from functools import cache
from pathlib import Path
from typing import IO, Any, Union, get_args, get_origin, get_type_hints

from cryptoapi.errors import InvalidArgument
from cryptoapi.selftest.fuzz.campaign import CaseRange, Parameters, RangeResult, split
from cryptoapi.selftest.fuzz.engine import FuzzResult

DIGEST = re.compile(r"[0-9a-f]{64}")
"""A range's ``inputs_digest``: SHA-256, in lowercase hex."""


class ResumeConflict(InvalidArgument):
    """A resume file written by a campaign with other parameters (EINVAL)."""


class ResumeDamaged(InvalidArgument):
    """A resume file this campaign cannot have written (EINVAL): not UTF-8, a line that is
    not JSON, or a record that no range of the campaign produces."""


class _Invalid(ValueError):
    """Why one line cannot be a record of the campaign (becomes ``ResumeDamaged``)."""


class ResumeFile:
    """JSON lines: the parameters first, then one finished range a line (fsync'd)."""

    def __init__(self, path: Path, parameters: Parameters) -> None:
        self.path = path
        self.parameters = parameters
        self.torn_line: int | None = None  # the incomplete last line ``load`` skipped
        self._whole_size: int | None = None  # bytes up to it, kept when appending
        self._file: IO[str] | None = None

    def load(self) -> list[RangeResult]:
        """The finished ranges recorded (none for a new file); ResumeConflict for a file
        written with other parameters, ResumeDamaged for one that cannot be trusted."""
        if not self.path.exists():
            return []
        data = self.path.read_bytes()
        whole = data[: data.rfind(b"\n") + 1]
        if len(whole) < len(data):
            self.torn_line = whole.count(b"\n") + 1
            self._whole_size = len(whole)
        lines = self._text(whole).split("\n")[:-1]
        if not lines:
            return []
        self._check_header(lines[0])
        records = _Records(self.parameters)
        return [self._read(records, number, line) for number, line in enumerate(lines[1:], 2)]

    def record(self, done: RangeResult) -> None:
        """Append one finished range (a range cut short by the budget is not recorded)."""
        if not done.complete:
            return
        if self._file is None:
            self._file = self._open()
        self._write(_range_to_json(done))

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def _open(self) -> IO[str]:
        """The file for appending, without the torn tail ``load`` skipped, and with the
        header written first if it holds nothing else."""
        file = self.path.open("a")
        if self._whole_size is not None:
            file.truncate(self._whole_size)
        if os.fstat(file.fileno()).st_size == 0:
            self._file = file
            self._write({"campaign": _encode(asdict(self.parameters))})
        return file

    def _write(self, record: dict[str, Any]) -> None:
        assert self._file is not None
        self._file.write(json.dumps(record) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def _text(self, whole: bytes) -> str:
        try:
            return whole.decode()
        except UnicodeDecodeError as error:
            line = whole[: error.start].count(b"\n") + 1
            raise self._damaged(line, f"not UTF-8 (byte {error.start})") from None

    def _check_header(self, line: str) -> None:
        header = self._read(None, 1, line)
        if header == {"campaign": _encode(asdict(self.parameters))}:
            return
        if not isinstance(header, dict) or "campaign" not in header:
            raise self._damaged(1, "not a fuzzing campaign's header")
        raise ResumeConflict(
            f"--resume {self.path}: written by a campaign with other parameters "
            f"({header.get('campaign')}), not {asdict(self.parameters)}"
        )

    def _read(self, records: "_Records | None", number: int, line: str) -> Any:
        """Line ``number`` as JSON, and as a range of the campaign unless it is the header
        (``records`` None)."""
        try:
            value = json.loads(line)
            return value if records is None else records.read(number, value)
        except json.JSONDecodeError as error:
            raise self._damaged(number, f"not JSON ({error.msg} at column {error.colno})") from None
        except ValueError as error:
            raise self._damaged(number, str(error)) from None

    def _damaged(self, line: int, reason: str) -> ResumeDamaged:
        return ResumeDamaged(
            f"--resume {self.path}: line {line}: {reason}; the file is damaged or not this "
            "campaign's (move it away to start afresh)"
        )


class _Records:
    """Turns a campaign's record lines into ranges, checking each against the campaign."""

    def __init__(self, parameters: Parameters) -> None:
        self.parameters = parameters
        self.ranges = frozenset(split(parameters))
        self.seen: dict[CaseRange, int] = {}  # range -> the line that recorded it

    def read(self, number: int, record: Any) -> RangeResult:
        value = _decode(record)
        if not isinstance(value, dict) or set(value) != {"range", "worker", "result"}:
            raise _Invalid("not a range record (range, worker, result)")
        task = _typed(CaseRange, value["range"], "range")
        self._check_range(task)
        result = _typed(FuzzResult, value["result"], "result")
        self._check_result(task, result)
        self.seen[task] = number
        return RangeResult(task, result, _typed(str, value["worker"], "worker"))

    def _check_range(self, task: CaseRange) -> None:
        if task.driver not in self.parameters.drivers:
            raise _Invalid(f"driver {task.driver!r} is not in this campaign")
        if task not in self.ranges:
            raise _Invalid(
                f"cases {task.start}..{task.stop - 1} of {task.driver} are not one of this "
                "campaign's ranges"
            )
        if task in self.seen:
            raise _Invalid(f"the range of line {self.seen[task]} again")

    def _check_result(self, task: CaseRange, result: FuzzResult) -> None:
        if result.driver != task.driver:
            raise _Invalid(f"the result of {result.driver!r} in a range of {task.driver!r}")
        if not (math.isfinite(result.seconds) and result.seconds >= 0):
            raise _Invalid(f"{result.seconds} seconds")
        if not DIGEST.fullmatch(result.inputs_digest):
            raise _Invalid(f"inputs_digest {result.inputs_digest!r} is not a SHA-256")
        ran = self._cases_run(task, result)
        if result.cases != ran:
            raise _Invalid(
                f"{result.cases} cases counted where cases {task.start}..{task.stop - 1} ran {ran}"
            )

    def _cases_run(self, task: CaseRange, result: FuzzResult) -> int:
        """The cases ``task`` ran to give ``result``: all, or up to its mismatch."""
        mismatch = result.mismatch
        if mismatch is None:
            return task.stop - task.start
        index = mismatch.case.index
        if not task.start <= index < task.stop:
            raise _Invalid(f"a mismatch at case {index}, outside {task.start}..{task.stop - 1}")
        if (mismatch.seed, mismatch.driver) != (self.parameters.seed, task.driver):
            raise _Invalid(f"a mismatch of seed {mismatch.seed} and driver {mismatch.driver!r}")
        return index - task.start + 1


def _typed(hint: Any, value: Any, where: str) -> Any:
    """``value`` (decoded JSON) as the type ``hint`` (a dataclass, a union, a tuple, or a
    plain type), or _Invalid naming ``where``: every field of a record is checked."""
    if dataclasses.is_dataclass(hint):
        return _dataclass(hint, value, where)
    origin, args = get_origin(hint), get_args(hint)
    if origin in (Union, types.UnionType):
        return _first_fitting(args, value, where)
    if origin is tuple:
        return _tuple(args, value, where)
    if hint is float and _is(value, int):
        return float(value)
    if _is(value, hint):
        return value
    raise _Invalid(f"{where} is {type(value).__name__}, not {getattr(hint, '__name__', hint)}")


def _is(value: Any, kind: type) -> bool:
    """isinstance, except that a bool is no int (JSON's true is not 1)."""
    return isinstance(value, kind) and (kind is bool or not isinstance(value, bool))


def _dataclass(kind: Any, value: Any, where: str) -> Any:
    if not isinstance(value, dict):
        raise _Invalid(f"{where} is {type(value).__name__}, not a {kind.__name__} record")
    hints = _hints(kind)
    unknown = set(value) - set(hints)
    if unknown:
        raise _Invalid(f"{where} has unknown fields {sorted(unknown)}")
    missing = {f.name for f in dataclasses.fields(kind) if f.name not in value} - _defaulted(kind)
    if missing:
        raise _Invalid(f"{where} lacks {sorted(missing)}")
    return kind(**{k: _typed(hints[k], item, f"{where}.{k}") for k, item in value.items()})


@cache
def _hints(kind: Any) -> dict[str, Any]:
    return get_type_hints(kind)


def _defaulted(kind: Any) -> set[str]:
    missing = (dataclasses.MISSING, dataclasses.MISSING)
    return {f.name for f in dataclasses.fields(kind) if (f.default, f.default_factory) != missing}


def _first_fitting(options: tuple[Any, ...], value: Any, where: str) -> Any:
    for option in options:
        try:
            return _typed(option, value, where)
        except _Invalid:
            continue
    names = " or ".join(getattr(option, "__name__", str(option)) for option in options)
    raise _Invalid(f"{where} is {type(value).__name__}, not {names}")


def _tuple(args: tuple[Any, ...], value: Any, where: str) -> tuple[Any, ...]:
    if not isinstance(value, tuple):
        raise _Invalid(f"{where} is {type(value).__name__}, not a list")
    if len(args) == 2 and args[1] is Ellipsis:
        args = (args[0],) * len(value)
    if len(args) != len(value):
        raise _Invalid(f"{where} has {len(value)} items, not {len(args)}")
    items = enumerate(zip(args, value, strict=True))
    return tuple(_typed(arg, item, f"{where}[{i}]") for i, (arg, item) in items)


def _range_to_json(done: RangeResult) -> dict[str, Any]:
    record: dict[str, Any] = _encode(
        {"range": asdict(done.task), "worker": done.worker, "result": asdict(done.result)}
    )
    return record


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
        if list(value) == ["hex"] and isinstance(value["hex"], str):
            return bytes.fromhex(value["hex"])  # ValueError for what is not hex
        return {key: _decode(item) for key, item in value.items()}
    if isinstance(value, list):
        return tuple(_decode(item) for item in value)
    return value
