"""cryptoapi fuzz: differential fuzzing of every implementation against its reference.

The run's seed is printed before anything else; --seed S replays a run exactly and
--case K replays one case. Each implementation's cases are split into ranges of --chunk
cases, run here, in --jobs J processes, or on a Dask cluster (--scheduler ADDRESS, or
--cluster local:N on this machine); the cases depend only on (seed, algorithm, case
number), so the run is the same either way. --resume FILE records finished ranges and
skips them when the same campaign runs again. A mismatch is shrunk and printed with the
command that replays it; the exit status is 1.
"""

import argparse
import os
import sys
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from cryptoapi.cli import jsonout
from cryptoapi.cli.options import non_negative_int, positive_float, positive_int
from cryptoapi.cli.table import format_table
from cryptoapi.errors import InvalidArgument
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
    Campaign,
    CaseRange,
    DriverRun,
    Parameters,
    RangeResult,
    ResumeFile,
    gather,
)

OnResult = Callable[[RangeResult], None]


def add_parser(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "fuzz",
        help="fuzz every implementation against its reference (replayable)",
        description=__doc__,
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
        help="the whole campaign's budget: stop there and report what ran",
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
        help='print {"schema": 1, "seed": S, "results": [...]} (the seed goes to stderr)',
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
        impl.driver: impl.provider for impl, _ in plan(Registry("off"), args.alg, args.driver)
    }
    parameters = Parameters(seed, args.iterations, args.chunk, tuple(providers), args.case)
    runs = run_campaign(parameters, args, time.time() + args.time if args.time else None)
    if args.json:
        records = [_record(run, providers[run.result.driver]) for run in runs]
        jsonout.dump({"seed": seed, "results": records})
    else:
        results = [run.result for run in runs]
        print(_table(results))
        print("\n" + _summary(results))
        print("\n" + _workers(runs))
        for result in results:
            if result.mismatch is not None:
                print("\n" + result.mismatch.report())
    return 1 if any(run.result.mismatch for run in runs) else 0


def run_campaign(
    parameters: Parameters, args: argparse.Namespace, deadline: float | None
) -> list[DriverRun]:
    """Every range not already in the resume file, where the options say, recorded as
    each finishes; each driver's result."""
    resume = None if args.resume is None else ResumeFile(args.resume, parameters)
    campaign = Campaign(parameters, resume.load() if resume else ())
    progress = _Progress(len(campaign.to_run()))

    def finished(done: RangeResult) -> None:
        if resume is not None:
            resume.record(done)
        progress.step()

    try:
        _execute(campaign, args, deadline, finished)
    finally:
        if resume is not None:
            resume.close()
    progress.done()
    return campaign.results()


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
    """Fuzz one range of one implementation in a registry of its own (also the job of a
    worker process); no case once ``deadline`` (``time.time()``) has passed."""
    registry = Registry("off")
    impl = registry.lookup(task.driver)
    seconds = None if deadline is None else deadline - time.time()
    stop = task.start if seconds is not None and seconds <= 0 else task.stop
    result = fuzz(
        registry.new_transform,
        impl,
        reference_for(registry, impl),
        seed,
        start=task.start,
        iterations=stop,
        seconds=seconds,
        others=opinions_for(registry, impl),
    )
    complete = result.mismatch is not None or result.cases == task.stop - task.start
    return RangeResult(task, result, worker or f"local:{os.getpid()}", complete)


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


class _Progress:
    """A progress bar on a terminal; silent otherwise."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.done_count = 0
        self.shown = sys.stderr.isatty()

    def step(self) -> None:
        self.done_count += 1
        if self.shown:
            filled = 30 * self.done_count // max(self.total, 1)
            bar = "#" * filled + "." * (30 - filled)
            print(f"\r[{bar}] {self.done_count}/{self.total}", end="", file=sys.stderr, flush=True)

    def done(self) -> None:
        if self.shown:
            print(file=sys.stderr)


def _table(results: list[FuzzResult]) -> str:
    rows = [
        (r.alg, r.driver, r.reference, r.cases, int(r.mismatch is not None), r.cases_per_second)
        for r in results
    ]
    headers = ("name", "driver", "reference", "cases", "mismatches", "cases/s")
    failed = sum(1 for r in results if r.mismatch)
    return (
        f"{format_table(headers, rows)}\n\n{len(results)} implementations, {failed} with mismatches"
    )


def _summary(results: list[FuzzResult]) -> str:
    """Per algorithm: the libraries compared, the cases run, the implementations that
    disagreed (cryptofuzz's view: one operation, many libraries)."""
    from cryptoapi.selftest.fuzz.libraries import library

    by_name: dict[str, list[FuzzResult]] = {}
    for result in results:
        by_name.setdefault(result.alg, []).append(result)
    rows = []
    for name, group in by_name.items():
        parts = (part for r in group for provider in r.providers for part in provider.split("+"))
        providers = dict.fromkeys(parts)
        libraries = ", ".join(library(provider) for provider in providers)
        cases = sum(r.cases for r in group)
        rows.append((name, libraries, cases, sum(1 for r in group if r.mismatch)))
    return format_table(("name", "libraries compared", "cases", "disagreements"), rows)
