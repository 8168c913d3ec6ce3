"""``python -m bench [NAME ...] [--timeout SECONDS]``: every benchmark in ``bench/`` (or the
ones named), each in its own process (``python -m bench.NAME``), one after the other.

A benchmark that fails (a non-zero exit, or still running after ``--timeout``: its process
group is sent SIGTERM, then SIGKILL) is reported and the others still run. Each one's output
is shown as it comes; at the end, a summary: each benchmark's status and wall time, every
row with a goal (met or missed), and every row skipped on this machine. The exit status is
1 if any benchmark failed; a missed goal is a result, not a failure (the machines are
noisy), and neither is a skipped row.

A benchmark is a module here with a ``__main__`` block; ``common`` is their helper. The
multi-process benchmarks keep their parts in ``system/`` (``bench.espd`` is the entry point
of ``bench.system.espd``), on the namespace harness the tests use (``tests/netns.py``).
"""

import argparse
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench.common import MET, MISSED, SKIPPED

HERE = Path(__file__).resolve().parent
GRACE = 30.0  # seconds between SIGTERM and SIGKILL: espd's benchmark removes its namespaces


@dataclass
class Outcome:
    name: str
    status: str = "ok"
    seconds: float = 0.0
    goals: list[str] = field(default_factory=list)
    skips: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return self.status != "ok"


def benchmarks() -> list[str]:
    """Every module of ``bench/`` that runs as a program, by name."""
    return sorted(
        path.stem
        for path in HERE.glob("[a-z]*.py")
        if 'if __name__ == "__main__":' in path.read_text(encoding="utf-8")
    )


def _stop(process: subprocess.Popen[str], fired: threading.Event) -> None:
    """SIGTERM to the benchmark's process group, then SIGKILL if it is still there."""
    fired.set()
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(GRACE)
            return
        except subprocess.TimeoutExpired:
            continue


def run(name: str, timeout: float) -> Outcome:
    """Run ``bench.NAME``, echoing its output and keeping its goal and skip rows."""
    outcome = Outcome(name)
    print(f"== bench.{name}", flush=True)
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-u", "-m", f"bench.{name}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        cwd=HERE.parent,  # where ``bench`` is a package
        text=True,
        errors="replace",
        start_new_session=True,  # its own group: a timeout stops what it started, too
    )
    fired = threading.Event()
    timer = threading.Timer(timeout, _stop, (process, fired))
    timer.start()
    try:
        assert process.stdout is not None
        for line in process.stdout:
            print(line, end="", flush=True)
            if MET in line or MISSED in line:
                outcome.goals.append(line.strip())
            elif SKIPPED in line:
                outcome.skips.append(line.strip())
        code = process.wait()
    except KeyboardInterrupt:
        _stop(process, fired)
        raise
    finally:
        timer.cancel()
    outcome.seconds = time.perf_counter() - started
    if fired.is_set():
        outcome.status = f"FAILED: still running after {timeout:g} s, stopped"
    elif code != 0:
        outcome.status = f"FAILED: exit status {code}"
    print(f"== bench.{name}: {outcome.status} ({outcome.seconds:.0f} s)\n", flush=True)
    return outcome


def summary(outcomes: Sequence[Outcome], seconds: float) -> None:
    failed = [o for o in outcomes if o.failed]
    print(f"== summary: {len(outcomes)} benchmarks, {len(failed)} failed, {seconds:.0f} s")
    for outcome in outcomes:
        print(f"  {outcome.name:<12} {outcome.status} ({outcome.seconds:.0f} s)")
    goals = [(o.name, line) for o in outcomes for line in o.goals]
    missed = sum(MISSED in line for _, line in goals)
    print(f"rows with a goal: {len(goals) - missed} met, {missed} missed")
    for name, line in goals:
        print(f"  {name:<12} {line}")
    skips = [(o.name, line) for o in outcomes for line in o.skips]
    if skips:
        print("skipped on this machine:")
        for name, line in skips:
            print(f"  {name:<12} {line}")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench",
        description=__doc__.split("\n\n")[1],
    )
    parser.add_argument("names", nargs="*", metavar="NAME", help="only these (default: all)")
    parser.add_argument(
        "--timeout", type=float, default=1200.0, help="seconds per benchmark (1200)"
    )
    parser.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    options = parse_args(argv)
    known = benchmarks()
    if options.list:
        print("\n".join(known))
        return 0
    unknown = sorted(set(options.names) - set(known))
    if unknown:
        print(f"python -m bench: no benchmark {', '.join(unknown)} (have: {', '.join(known)})")
        return 2
    started = time.perf_counter()
    outcomes = [run(name, options.timeout) for name in options.names or known]
    summary(outcomes, time.perf_counter() - started)
    return 1 if any(o.failed for o in outcomes) else 0


if __name__ == "__main__":
    raise SystemExit(main())
