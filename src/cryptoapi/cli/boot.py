"""cryptoapi boot: bring up a fresh registry as a process start would, and show it.

Prints one line per provider import, registration and self-test, like the kernel's
initcall_debug, then the totals: wall time, CPU time, threads started and tests run.
--chart draws the boot chart (one lane per thread, a bar per event, coloured by kind and
result; an SVG has a tooltip on every bar) with matplotlib, an optional extra
(pip install 'cryptoapi[chart]').
"""

import argparse
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from cryptoapi._counts import counted
from cryptoapi.cli.bootreport import BootReport
from cryptoapi.cli.options import add_selftests_option
from cryptoapi.registry.registry import Registry
from cryptoapi.registry.trace import TraceEvent
from cryptoapi.selftest.manager import mode_from


def add_parser(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "boot",
        help="bring up a fresh registry and show what it did, when (initcall_debug style)",
        description=__doc__,
    )
    add_selftests_option(parser)
    parser.add_argument(
        "--chart", metavar="FILE", type=chart_file, help="draw the boot chart (.svg or .png)"
    )
    parser.add_argument("--quiet", action="store_true", help="print only the totals")
    parser.set_defaults(run=run)


def chart_file(path: str) -> str:
    """A file name matplotlib will draw the chart into: .svg or .png."""
    if not path.endswith((".svg", ".png")):
        raise argparse.ArgumentTypeError(f"the file must end in .svg or .png, not {path!r}")
    return path


def run(args: argparse.Namespace) -> int:
    report = boot(args.selftests)
    if not args.quiet:
        for event in report.events:
            print(format_event(event))
    print(format_totals(report))
    if args.chart:
        from cryptoapi.cli.bootchart import draw

        draw(report, args.chart)
        print(f"boot chart written to {args.chart}")
    return 0


def boot(selftests: str | None) -> BootReport:
    """A fresh registry with every provider registered, traced; template instances are
    built on demand later, as in the kernel, so they are not part of bring-up."""
    mode = mode_from(selftests)
    events: list[TraceEvent] = []
    with counting_thread_starts() as threads:
        started, cpu = time.perf_counter(), time.process_time()
        registry = Registry(mode, trace=events.append)
        registry.load_all()
        registry.wait_idle(registry.lookup_timeout)
        wall_ms = (time.perf_counter() - started) * 1e3
        cpu_ms = (time.process_time() - cpu) * 1e3
    return BootReport(str(mode), events, started, wall_ms, cpu_ms, threads())


@contextmanager
def counting_thread_starts() -> Iterator[Callable[[], int]]:
    """Count ``threading.Thread.start`` calls made inside the block."""
    count = 0
    original = threading.Thread.start

    def counted(thread: threading.Thread) -> None:
        nonlocal count
        count += 1
        original(thread)

    threading.Thread.start = counted  # type: ignore[method-assign, assignment]
    try:
        yield lambda: count
    finally:
        threading.Thread.start = original  # type: ignore[method-assign]


def format_event(event: TraceEvent) -> str:
    """One ``initcall_debug``-like line: ``calling``/``testing``/``loading`` what, how long."""
    if event.kind == "load":
        return f"loading  {event.driver} ... {event.result} after {event.duration_us:.0f} usecs"
    if event.kind == "register":
        return f"calling  {event.driver} ... returned 0 after {event.duration_us:.0f} usecs"
    return (
        f"testing  {event.driver} ... {event.result} after {event.duration_us:.0f} usecs"
        f" [{event.thread}]"
    )


def format_totals(report: BootReport) -> str:
    """The last line: how much happened and what it cost."""
    imports = report.imports
    registrations = sum(1 for e in report.events if e.kind == "register")
    loaded = f"{counted(imports, 'provider import')}, " if imports else ""
    return (
        f"boot ({report.mode}): {loaded}{counted(registrations, 'registration')}, "
        f"{counted(report.tests_run, 'test')} run, "
        f"{counted(report.threads_started, 'thread')} started; wall {report.wall_ms:.2f} ms, "
        f"CPU {report.cpu_ms:.2f} ms"
    )
