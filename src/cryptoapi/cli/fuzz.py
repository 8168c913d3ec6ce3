"""cryptoapi fuzz: differential fuzzing of every implementation against its reference.

The run's seed is printed before anything else; --seed S replays a run exactly and
--case K replays one case. --jobs J fuzzes implementations in J processes; the cases
depend only on (seed, algorithm, case number), so the run is the same either way. A
mismatch is shrunk and printed with the command that replays it; the exit status is 1.
"""

import argparse
import sys
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from cryptoapi.cli import jsonout
from cryptoapi.cli.options import non_negative_int, positive_float, positive_int
from cryptoapi.cli.table import format_table
from cryptoapi.registry.registry import Registry
from cryptoapi.selftest.fuzz import (
    FuzzResult,
    fuzz,
    new_seed,
    opinions_for,
    plan,
    reference_for,
)


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
        help="stop an implementation's cases after this long",
    )  # fmt: skip
    parser.add_argument("--seed", type=non_negative_int, help="replay the run with this seed")
    parser.add_argument("--case", type=non_negative_int, metavar="K", help="run only case K")
    parser.add_argument(
        "--jobs", type=positive_int, default=1, metavar="J", help="processes (default 1)"
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help='print {"schema": 1, "seed": S, "results": [...]} (the seed goes to stderr)',
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    seed = new_seed() if args.seed is None else args.seed
    print(f"cryptoapi fuzz: seed {seed}", file=sys.stderr if args.json else sys.stdout, flush=True)
    providers = {
        impl.driver: impl.provider for impl, _ in plan(Registry("off"), args.alg, args.driver)
    }
    jobs = [(driver, seed, args.iterations, args.time, args.case) for driver in providers]
    results = list(_run_jobs(jobs, args.jobs))
    if args.json:
        records = [_record(result, providers[result.driver]) for result in results]
        jsonout.dump({"seed": seed, "results": records})
    else:
        print(_table(results))
        print("\n" + _summary(results))
        for result in results:
            if result.mismatch is not None:
                print("\n" + result.mismatch.report())
    return 1 if any(result.mismatch for result in results) else 0


def _record(result: FuzzResult, provider: str) -> dict[str, object]:
    """One implementation's run in the commands' shared vocabulary: ``name`` (the
    algorithm), ``driver``, ``provider``, then the fuzzer's own keys."""
    fields = result.as_dict()
    return {"name": fields.pop("alg"), "driver": fields.pop("driver"), "provider": provider,
            **fields}  # fmt: skip


def _run_jobs(jobs: list[tuple[Any, ...]], workers: int) -> list[FuzzResult]:
    progress = _Progress(len(jobs))
    results = []
    if workers <= 1:
        for job in jobs:
            results.append(fuzz_driver(*job))
            progress.step()
    else:
        with ProcessPoolExecutor(workers) as pool:
            for result in pool.map(fuzz_driver, *zip(*jobs, strict=True)):
                results.append(result)
                progress.step()
    progress.done()
    return results


def fuzz_driver(
    driver: str, seed: int, iterations: int, seconds: float | None, only_case: int | None
) -> FuzzResult:
    """Fuzz one implementation in a registry of its own (also the job of a worker process)."""
    registry = Registry("off")
    impl = registry.lookup(driver)
    return fuzz(
        registry.new_transform,
        impl,
        reference_for(registry, impl),
        seed,
        iterations=iterations,
        seconds=seconds,
        only_case=only_case,
        others=opinions_for(registry, impl),
    )


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
        providers = dict.fromkeys(p for r in group for p in r.providers for p in p.split("+"))
        libraries = ", ".join(library(provider) for provider in providers)
        cases = sum(r.cases for r in group)
        rows.append((name, libraries, cases, sum(1 for r in group if r.mismatch)))
    return format_table(("name", "libraries compared", "cases", "disagreements"), rows)
