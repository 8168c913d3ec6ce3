"""cryptoapi selftest: run the known-answer self-test of every implementation, report.

Every provider is loaded and every standard template instance built over every inner
implementation (and any NAME given, e.g. 'cts(cbc(aes))'), then tested. It prints the
failures, each with its reason, and a summary line; -v prints the whole table too. The
exit status is 1 if any implementation failed. A full run (--selftests full) fuzzes too
and takes minutes: while it runs, stderr shows how many of the implementations registered
so far are tested, a line rewritten in place on a terminal, a line every 10 s otherwise.
"""

import argparse
import contextlib
import logging
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

from cryptoapi._counts import counted
from cryptoapi.alg import AlgInfo, SelfTest
from cryptoapi.cli import jsonout
from cryptoapi.cli.options import SELFTEST_MODES, add_selftests_option
from cryptoapi.cli.progress import Progress
from cryptoapi.cli.table import format_table
from cryptoapi.registry.registry import Registry
from cryptoapi.registry.trace import TraceEvent

SELFTEST_LOGGER = "cryptoapi.selftest"
"""Where the self-test manager reports each failure and its reason."""


def add_parser(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "selftest",
        help="run the known-answer self-test of every implementation",
        description=__doc__,
    )
    parser.add_argument(
        "names", nargs="*", metavar="NAME", help="only these algorithm names or drivers"
    )
    add_selftests_option(parser, default="eager")
    # the spelling the README used before every command said --selftests
    parser.add_argument(
        "--mode", dest="selftests", choices=SELFTEST_MODES, default=argparse.SUPPRESS,
        help=argparse.SUPPRESS,
    )  # fmt: skip
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="print every implementation's result"
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help='print {"schema": 1, "selftests": MODE, "algorithms": [...]}, with each '
        "failure's reason",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    counts = _TestCounts(Progress("cryptoapi selftest"))
    # Only a full run shows progress: it takes minutes, the other modes seconds.
    trace = counts if args.selftests == "full" else None
    with failure_reasons() as reasons:
        registry = Registry(args.selftests, trace=trace)
        try:
            registry.instantiate_all(args.names)
            infos = registry.run_selftests(args.names)
        finally:
            counts.progress.close()
    elapsed_ms = (time.perf_counter() - started) * 1e3
    mode = str(registry.selftest.mode)
    if args.json:
        _print_json(infos, reasons, mode)
    else:
        _print_text(infos, reasons, mode, elapsed_ms, verbose=args.verbose)
    return 1 if any(info.selftest is SelfTest.FAILED for info in infos) else 0


class _TestCounts:
    """The registry's trace (any thread): implementations registered and tested so far,
    shown on ``progress``."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.registered = self.tested = 0
        self._lock = threading.Lock()  # test events come from the pool's threads

    def __call__(self, event: TraceEvent) -> None:
        with self._lock:
            self.registered += event.kind == "register"
            self.tested += event.kind == "test"
        self.progress.update(self.status)

    def status(self) -> str:
        return f"{self.tested}/{counted(self.registered, 'implementation')} tested"


class _FailureLog(logging.Handler):
    """Keeps each failed driver's reason, from the manager's log record
    ``self-test failed for DRIVER (NAME); it will not be used: REASON``."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.reasons: dict[str, str] = {}

    def emit(self, record: logging.LogRecord) -> None:
        if isinstance(record.args, tuple) and len(record.args) == 3:
            driver, _name, reason = record.args
            self.reasons[str(driver)] = str(reason)


@contextlib.contextmanager
def failure_reasons() -> Iterator[dict[str, str]]:
    """Collect the self-test failures logged inside the block (from any thread), driver
    to reason, instead of letting logging print them as they happen."""
    handler = _FailureLog()
    logger = logging.getLogger(SELFTEST_LOGGER)
    logger.addHandler(handler)
    try:
        yield handler.reasons
    finally:
        logger.removeHandler(handler)


def _print_json(infos: list[AlgInfo], reasons: dict[str, str], mode: str) -> None:
    """The list's records plus ``reason`` (null unless failed); the failures also go to
    stderr, one line each, for whoever reads the JSON from a pipe."""
    for info in _failed(infos):
        reason = _reason(info, reasons)
        print(f"cryptoapi: self-test failed for {info.driver}: {reason}", file=sys.stderr)
    records = [
        {**info.as_dict(), "reason": _reason(info, reasons) if _is_failed(info) else None}
        for info in _sorted(infos)
    ]
    jsonout.dump({"selftests": mode, "algorithms": records})


def _print_text(
    infos: list[AlgInfo], reasons: dict[str, str], mode: str, elapsed_ms: float, *, verbose: bool
) -> None:
    if verbose:
        print(_table(infos) + "\n")
    for info in _failed(infos):
        print(f"FAILED  {info.driver} ({info.name}): {_reason(info, reasons)}")
    print(_summary(infos, elapsed_ms, mode))


def _failed(infos: list[AlgInfo]) -> list[AlgInfo]:
    return [info for info in _sorted(infos) if _is_failed(info)]


def _is_failed(info: AlgInfo) -> bool:
    return info.selftest is SelfTest.FAILED


def _reason(info: AlgInfo, reasons: dict[str, str]) -> str:
    """Why ``info`` failed, without the driver's name that the reason usually starts with
    (the line names it already)."""
    reason = reasons.get(info.driver, "no reason was logged")
    return reason.removeprefix(f"{info.driver}: ")


def _sorted(infos: list[AlgInfo]) -> list[AlgInfo]:
    return sorted(infos, key=lambda i: (i.name, -i.priority, i.driver))


def _table(infos: list[AlgInfo]) -> str:
    rows = [
        (i.name, i.driver, i.provider, i.priority, str(i.selftest), i.selftest_us or 0.0)
        for i in _sorted(infos)
    ]
    return format_table(("name", "driver", "provider", "priority", "result", "time_us"), rows)


def _summary(infos: list[AlgInfo], elapsed_ms: float, mode: str) -> str:
    counts = {result: 0 for result in SelfTest}
    for info in infos:
        counts[info.selftest] += 1
    parts = ", ".join(f"{n} {result}" for result, n in counts.items() if n)
    tested = counted(len(infos), "implementation")
    return f"selftest ({mode}): {tested}: {parts}; {elapsed_ms:.1f} ms"
