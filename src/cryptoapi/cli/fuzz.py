"""cryptoapi fuzz: differential fuzzing of every implementation against its reference.

The run's seed is printed before anything else; --seed S replays a run exactly and
--case K replays one case. Each implementation's cases are split into ranges: its first
--min-cases, then each range as large as all before it, up to --chunk cases; they run
here, in --jobs J processes, or on a Dask cluster (--scheduler ADDRESS, or --cluster
local:N on this machine); the cases depend only on (seed, algorithm, case number), so the
run is the same either way. --resume FILE records finished ranges and skips them when
the same campaign runs again; a damaged FILE is refused (a torn last line, as a crash
leaves, is skipped with a warning).

--time SECONDS budgets the whole campaign. Ranges run in rounds: every implementation's
first --min-cases cases, then rounds that double every implementation's cases, until the
deadline or --iterations; so a budget spreads the cases over every implementation. On
stderr: a progress line (in place on a terminal, every 10 s otherwise), then what the
budget left out. A mismatch is shrunk and printed with the command that replays it. In
FIPS mode (cryptoapi --fips fuzz) a mismatch is fatal, as a failed self-test is: the
campaign stops at the first one and the command fails with FIPS's error (exit status 1).
The campaign's own registries run with self-tests off and outside FIPS mode: the fuzzer
is the test here.

exit status: 0 no mismatch, and every implementation ran --iterations cases, or at least
--min-cases when --time stopped it (a note on stderr counts those cut short); 1 a
mismatch, or an error such as a damaged resume file; 3 no mismatch, but --time ended
before some implementations ran --min-cases cases ("not reached: ..." on stderr names
them): a run that left implementations untested must not pass for one that tested them.
"""

import argparse
import os
import sys
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from cryptoapi._counts import counted
from cryptoapi.alg import Algorithm
from cryptoapi.cli import jsonout
from cryptoapi.cli.options import non_negative_int, positive_float, positive_int
from cryptoapi.cli.progress import Progress
from cryptoapi.cli.table import format_table
from cryptoapi.errors import FipsError, InvalidArgument
from cryptoapi.registry.registry import Registry
from cryptoapi.selftest.fuzz import (
    FuzzResult,
    fuzz,
    new_seed,
    opinions_for,
    plan,
    reference_for,
)
from cryptoapi.selftest.fuzz.campaign import (
    DEFAULT_CHUNK,
    DEFAULT_MINIMUM,
    Campaign,
    CaseRange,
    DriverRun,
    Parameters,
    RangeResult,
    gather,
)
from cryptoapi.selftest.fuzz.engine import Mismatch
from cryptoapi.selftest.fuzz.resume import ResumeFile
from cryptoapi.selftest.manager import fips_from

OnResult = Callable[[RangeResult], None]

EXIT_NOT_REACHED = 3
"""No mismatch, but the time budget ended before some implementations ran their minimum."""

SHOWN_NOT_REACHED = 10
"""Implementations named in the "not reached" line (``--json`` lists them all)."""


def add_parser(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "fuzz",
        help="fuzz every implementation against its reference (replayable)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--alg", action="append", default=[], metavar="NAME",
        help="only the implementations of this algorithm name (repeatable)",
    )  # fmt: skip
    parser.add_argument("--driver", help="only this implementation")
    parser.add_argument(
        "--iterations", type=positive_int, default=100, metavar="N",
        help="cases per implementation (default 100)",
    )  # fmt: skip
    parser.add_argument(
        "--time", type=positive_float, metavar="SECONDS",
        help="the whole campaign's budget: every implementation's first --min-cases, "
             "then further ranges round-robin; stop there and report what ran",
    )  # fmt: skip
    parser.add_argument(
        "--min-cases", type=positive_int, default=DEFAULT_MINIMUM, metavar="N",
        help="cases every implementation runs before any runs more, the first range of "
             f"each (default {DEFAULT_MINIMUM}); fewer under --time: exit status 3",
    )  # fmt: skip
    parser.add_argument("--seed", type=non_negative_int, help="replay the run with this seed")
    parser.add_argument("--case", type=non_negative_int, metavar="K", help="run only case K")
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--jobs", type=positive_int, default=1, metavar="J", help="processes (default 1)"
    )
    where.add_argument(
        "--scheduler", metavar="ADDRESS",
        help="run on the Dask cluster of this scheduler (tcp://host:8786)",
    )  # fmt: skip
    where.add_argument(
        "--cluster", type=local_cluster, metavar="local[:N]",
        help="run on a Dask LocalCluster of N worker processes (default: one per CPU)",
    )  # fmt: skip
    parser.add_argument(
        "--chunk", type=positive_int, default=DEFAULT_CHUNK, metavar="CASES",
        help=f"cases per range, the unit of work (default {DEFAULT_CHUNK})",
    )  # fmt: skip
    parser.add_argument(
        "--resume", type=Path, metavar="FILE",
        help="record finished ranges in FILE; skip those already there",
    )  # fmt: skip
    parser.add_argument(
        "--json",
        action="store_true",
        help='print {"schema": 1, "seed": S, "results": [...], "not_reached": [...]} (the '
        "seed goes to stderr)",
    )
    parser.set_defaults(run=run)


def local_cluster(text: str) -> int:
    """``local`` (one worker per CPU) or ``local:N``: the number of worker processes."""
    kind, _, count = text.partition(":")
    if kind != "local":
        raise argparse.ArgumentTypeError(f"must be local or local:N, not {text!r}")
    return positive_int(count) if count else os.cpu_count() or 1


def run(args: argparse.Namespace) -> int:
    seed = new_seed() if args.seed is None else args.seed
    print(f"cryptoapi fuzz: seed {seed}", file=sys.stderr if args.json else sys.stdout, flush=True)
    providers = {
        impl.driver: impl.provider
        for impl, _ in plan(Registry("off", fips=False), args.alg, args.driver)
    }
    parameters = Parameters(
        seed, args.iterations, args.chunk, tuple(providers), args.case, minimum=args.min_cases
    )
    campaign = execute_campaign(parameters, args, time.time() + args.time if args.time else None)
    runs = campaign.results()
    if args.json:
        records = [_record(run, providers[run.result.driver]) for run in runs]
        not_reached = [{"driver": d, "cases": n} for d, n in campaign.shortfall().items()]
        jsonout.dump({"seed": seed, "results": records, "not_reached": not_reached})
    else:
        _print_report(runs)
    _warn_coverage(campaign)
    return _status(campaign, runs)


def _print_report(runs: list[DriverRun]) -> None:
    results = [run.result for run in runs]
    print(_table(results))
    print("\n" + _summary(results))
    print("\n" + _workers(runs))
    for result in results:
        if result.mismatch is not None:
            print("\n" + result.mismatch.report())


def _status(campaign: Campaign, runs: list[DriverRun]) -> int:
    """1 for a mismatch, else 3 if an implementation was not reached, else 0."""
    if any(run.result.mismatch for run in runs):
        return 1
    return EXIT_NOT_REACHED if campaign.shortfall() else 0


def _warn_coverage(campaign: Campaign) -> None:
    """Say on stderr which implementations the time budget left below the minimum, or
    else how many it cut short of --iterations."""
    total = len(campaign.parameters.drivers)
    short = campaign.shortfall()
    if short:
        shown = ", ".join(f"{d} ({n})" for d, n in list(short.items())[:SHOWN_NOT_REACHED])
        more = len(short) - SHOWN_NOT_REACHED
        shown += f" and {more} more" if more > 0 else ""
        print(
            f"cryptoapi fuzz: not reached: {len(short)} of {total} implementations ran fewer "
            f"than {campaign.parameters.required} cases before --time ended (cases run): {shown}",
            file=sys.stderr,
        )
        return
    cut = len(campaign.unfinished())
    if cut:
        print(
            f"cryptoapi fuzz: --time ended: {cut} of {total} implementations ran fewer than "
            f"{campaign.parameters.iterations} cases (each ran at least "
            f"{campaign.parameters.required})",
            file=sys.stderr,
        )


def run_campaign(
    parameters: Parameters, args: argparse.Namespace, deadline: float | None
) -> list[DriverRun]:
    """Each driver's result of ``execute_campaign``."""
    return execute_campaign(parameters, args, deadline).results()


def execute_campaign(
    parameters: Parameters, args: argparse.Namespace, deadline: float | None
) -> Campaign:
    """Every range not already in the resume file, where the options say, in rounds
    (``campaign.split``), recorded as each finishes; the campaign, with what it did."""
    resume = None if args.resume is None else ResumeFile(args.resume, parameters)
    campaign = Campaign(parameters, _recorded(resume))
    progress = Progress(
        "cryptoapi fuzz", budget=None if deadline is None else deadline - time.time()
    )

    fatal = fips_from(None)

    def finished(done: RangeResult) -> None:
        if resume is not None:
            resume.record(done)
        progress.update(campaign.progress)
        if fatal and done.result.mismatch is not None:
            raise _fips_error(done.result.mismatch)

    try:
        _execute(campaign, args, deadline, finished)
    finally:
        progress.close()
        if resume is not None:
            resume.close()
    return campaign


def _fips_error(mismatch: Mismatch) -> FipsError:
    """In FIPS mode (``cryptoapi --fips fuzz``) a mismatch is fatal, as a failed self-test
    is: the campaign stops at once, with the mismatch's report (its replay command too)."""
    return FipsError(
        f"FIPS error state: the fuzzing of {mismatch.alg} ({mismatch.driver}) found a "
        f"mismatch:\n{mismatch.report()}"
    )


def _recorded(resume: ResumeFile | None) -> list[RangeResult]:
    """The finished ranges ``resume`` holds, with a warning for a torn last line skipped."""
    if resume is None:
        return []
    done = resume.load()
    if resume.torn_line is not None:
        print(
            f"cryptoapi fuzz: warning: --resume {resume.path}: line {resume.torn_line} is "
            "incomplete (a crash while recording?): skipped, its range runs again",
            file=sys.stderr,
        )
    return done


def _execute(
    campaign: Campaign, args: argparse.Namespace, deadline: float | None, on_result: OnResult
) -> None:
    if args.scheduler is not None or args.cluster is not None:
        cluster = _cluster()
        cluster.run_on_cluster(
            campaign, fuzz_range, deadline=deadline, on_result=on_result,
            scheduler=args.scheduler, local_workers=args.cluster,
        )  # fmt: skip
    elif args.jobs > 1:
        _run_in_processes(campaign, deadline, on_result, args.jobs)
    else:
        _run_here(campaign, deadline, on_result)


def _cluster() -> Any:
    """``fuzz_cluster``, imported only now: it imports Dask's ``distributed``."""
    try:
        from cryptoapi.cli import fuzz_cluster
    except ModuleNotFoundError as error:
        if error.name not in ("distributed", "dask"):
            raise
        raise InvalidArgument(
            "--scheduler and --cluster need Dask's distributed package "
            "(pip install 'cryptoapi[cluster]')"
        ) from None
    return fuzz_cluster


def _run_here(campaign: Campaign, deadline: float | None, on_result: OnResult) -> None:
    for task in campaign.pending:
        if deadline is not None and time.time() > deadline:
            break
        if campaign.wanted(task):
            done = fuzz_range(task, campaign.parameters.seed, deadline)
            campaign.add(done)
            on_result(done)


def _run_in_processes(
    campaign: Campaign, deadline: float | None, on_result: OnResult, processes: int
) -> None:
    seed = campaign.parameters.seed
    with ProcessPoolExecutor(processes) as pool:
        tasks = campaign.to_run()
        futures = {pool.submit(fuzz_range, task, seed, deadline): task for task in tasks}
        gather(
            campaign, futures, as_completed(futures),
            deadline=deadline, clock=time.time, on_result=on_result,
        )  # fmt: skip


def fuzz_range(
    task: CaseRange, seed: int, deadline: float | None, worker: str | None = None
) -> RangeResult:
    """Fuzz one range of one implementation (also the job of a worker process); no case
    once ``deadline`` (``time.time()``) has passed."""
    target = _target(task.driver, os.environ.get("CRYPTOAPI_FAULT", ""))
    seconds = None if deadline is None else deadline - time.time()
    stop = task.start if seconds is not None and seconds <= 0 else task.stop
    result = fuzz(
        target.registry.new_transform,
        target.impl,
        target.reference,
        seed,
        start=task.start,
        iterations=stop,
        seconds=seconds,
        others=target.others,
    )
    complete = result.mismatch is not None or result.cases == task.stop - task.start
    return RangeResult(task, result, worker or f"local:{os.getpid()}", complete)


@dataclass(frozen=True)
class _Target:
    """An implementation, with what it is compared to, in the registry that made them."""

    registry: Registry
    impl: Algorithm
    reference: Algorithm
    others: tuple[Algorithm, ...]


@cache
def _target(driver: str, faults: str) -> _Target:
    """``driver``'s target, made once per process: a campaign runs a driver's ranges in
    rounds, and making it (3 ms, mostly asking every implementation for an opinion) cost as
    much as the cases of a small range. One registry serves the process's drivers; a new
    one for another ``faults`` (``CRYPTOAPI_FAULT``, which a registry reads when made)."""
    registry = _registry(faults)
    impl = registry.lookup(driver)
    return _Target(registry, impl, reference_for(registry, impl), opinions_for(registry, impl))


@cache
def _registry(faults: str) -> Registry:
    """The process's registry without self-tests, for ``faults`` (see ``_target``)."""
    return Registry("off", fips=False)


def _record(run: DriverRun, provider: str) -> dict[str, object]:
    """One implementation's run in the commands' shared vocabulary: ``name`` (the
    algorithm), ``driver``, ``provider``, then the fuzzer's own keys and the cases each
    worker ran."""
    fields = run.result.as_dict()
    return {"name": fields.pop("alg"), "driver": fields.pop("driver"), "provider": provider,
            **fields, "workers": run.workers}  # fmt: skip


def _workers(runs: list[DriverRun]) -> str:
    """The line saying how many cases ran where."""
    cases: Counter[str] = Counter()
    for run in runs:
        cases.update(run.workers)
    shown = ", ".join(f"{worker} {count}" for worker, count in sorted(cases.items()))
    return f"cases per worker: {shown or 'none'}"


def _by_name(results: list[FuzzResult]) -> dict[str, list[FuzzResult]]:
    """The results grouped by algorithm name, in the order the names first appear."""
    by_name: dict[str, list[FuzzResult]] = {}
    for result in results:
        by_name.setdefault(result.alg, []).append(result)
    return by_name


def _table(results: list[FuzzResult]) -> str:
    """One line per implementation, under a line per algorithm naming the reference its
    implementations were compared with: a name, a composed driver and a composed reference
    on one line took 160 columns and more; this fits in 100."""
    headings: dict[int, str] = {}  # row index -> the line printed above it
    rows: list[tuple[str, int, int, float]] = []
    for name, group in _by_name(results).items():
        shared = {r.reference for r in group}
        reference = shared.pop() if len(shared) == 1 else None
        headings[len(rows)] = f"{name}, against {reference}" if reference else name
        rows += [
            (f"  {_implementation(r, reference)}", r.cases, int(r.mismatch is not None),
             r.cases_per_second)
            for r in group
        ]  # fmt: skip
    header, *lines = format_table(
        ("implementation", "cases", "mismatches", "cases/s"), rows
    ).splitlines()
    table = [header]
    for index, line in enumerate(lines):
        if index in headings:
            table.append(headings[index])
        table.append(line)
    failed = sum(1 for r in results if r.mismatch)
    totals = f"{counted(len(results), 'implementation')}, {failed} with mismatches"
    return "\n".join(table) + f"\n\n{totals}"


def _implementation(result: FuzzResult, reference: str | None) -> str:
    """The driver, and its reference where its name's implementations had several."""
    if reference is not None:
        return result.driver
    against = "itself" if result.reference == result.driver else result.reference
    return f"{result.driver}, against {against}"


def _summary(results: list[FuzzResult]) -> str:
    """Per algorithm: the libraries compared, the cases run, the implementations that
    disagreed (cryptofuzz's view: one operation, many libraries). Libraries go by their
    provider's name, on the line under the algorithm's, and with their versions in a
    legend below, once each: the versions in every row made rows 210 columns wide, and a
    composed name beside six libraries 110."""
    from cryptoapi.selftest.fuzz.libraries import library

    rows: list[tuple[str, int | str, int | str]] = []
    seen: dict[str, None] = {}
    for name, group in _by_name(results).items():
        parts = (part for r in group for provider in r.providers for part in provider.split("+"))
        providers = dict.fromkeys(parts)
        seen.update(providers)
        cases = sum(r.cases for r in group)
        rows.append((name, "", ""))
        rows.append(("  " + " ".join(providers), cases, sum(1 for r in group if r.mismatch)))
    table = format_table(("name, libraries compared", "cases", "disagreements"), rows)
    legend = "\n".join(f"  {provider}: {library(provider)}" for provider in seen)
    return f"{table}\n\nlibraries:\n{legend}" if legend else table
