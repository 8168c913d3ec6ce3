"""Registry bring-up in each self-test mode, against a model of the kernel before its 2022
fix (with tests off, every registration still started a do-nothing thread and waited).

Run: ``python -m bench.boot [--rounds 30] [--full-cases 3]``. ``off``, ``lazy``, ``eager``
and the thread model are timed alternately in one run; imports are warmed first, so this
measures registration and testing, not module loading. Each bring-up starts after a garbage
collection, so none pays for the garbage of the one before (the thread model leaves a lot),
as ``timeit`` keeps the collector out of what it times.

``full`` is timed on its own, after them, because it is a boot, not a bring-up: it fuzzes
every implementation against its reference at registration, which at the mode's default
(100 cases per implementation) takes minutes on 2 cores, far past a lookup's 60 s timeout.
Its rows: registration alone (until ``load_all`` returns, its tests queued), then the whole
bring-up with ``--full-cases`` fuzz cases per implementation, waited for to the end; the
cost per case is what each further case adds over ``eager``. ``--full-cases 100`` times the
mode's default.
"""

import argparse
import gc
import random
import statistics
import threading
import time
from collections.abc import Callable, Sequence

from bench.common import goal_note
from cryptoapi import Registry
from cryptoapi.registry.trace import TraceEvent
from cryptoapi.selftest.manager import DEFAULT_FUZZ_ITERATIONS

FULL_ROUNDS = 2
FULL_TIMEOUT = 3600.0  # seconds: full mode is waited for to the end, however long it takes
OLD = "thread-per-registration (pre-2022 kernel)"


def bring_up(mode: str, trace: Callable[[TraceEvent], None] | None = None) -> float:
    gc.collect()
    started = time.perf_counter()
    registry = Registry(mode, trace=trace)
    registry.load_all()
    registry.wait_idle(registry.lookup_timeout)
    return (time.perf_counter() - started) * 1e6


def kthread_per_registration(event: TraceEvent) -> None:
    """The pre-fix kernel: a test thread per registration, even with nothing to test."""
    if event.kind == "register":
        thread = threading.Thread(target=lambda: None)
        thread.start()
        thread.join()


def baseline() -> float:
    return bring_up("off", trace=kthread_per_registration)


def full_bring_up(cases: int) -> tuple[float, float, int]:
    """Microseconds until ``full``'s registrations are done (tests queued) and until its
    last test and fuzz case has run; and the fuzz seed, which replays the cases."""
    gc.collect()
    started = time.perf_counter()
    registry = Registry("full", fuzz_iterations=cases, lookup_timeout=FULL_TIMEOUT)
    registry.load_all()
    registered = time.perf_counter()
    registry.wait_idle(FULL_TIMEOUT)
    done = time.perf_counter()
    return (registered - started) * 1e6, (done - started) * 1e6, registry.selftest.fuzz_seed


def modes(rounds: int) -> dict[str, list[float]]:
    """Every bring-up but ``full``'s, ``rounds`` times each, alternating."""
    runs: dict[str, Callable[[], float]] = {
        "off": lambda: bring_up("off"),
        "lazy": lambda: bring_up("lazy"),
        "eager": lambda: bring_up("eager"),
        OLD: baseline,
    }
    for run in runs.values():
        run()  # warm the imports
    times: dict[str, list[float]] = {label: [] for label in runs}
    order = list(runs)
    shuffler = random.Random(0)  # a fixed order per round: drift hits every mode alike
    for _ in range(rounds):
        shuffler.shuffle(order)
        for label in order:
            times[label].append(runs[label]())
    return times


def full(cases: int) -> tuple[list[float], list[float], list[int]]:
    """``full``'s registration and whole bring-up, :data:`FULL_ROUNDS` times after a warm-up
    (which imports the fuzzer and the references); and the seeds."""
    full_bring_up(cases)
    registered, total, seeds = [], [], []
    for _ in range(FULL_ROUNDS):
        registration, whole, seed = full_bring_up(cases)
        registered.append(registration)
        total.append(whole)
        seeds.append(seed)
    return registered, total, seeds


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.boot", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--rounds", type=int, default=30, help="rounds of the fast modes (30)")
    parser.add_argument(
        "--full-cases",
        type=int,
        default=3,
        help=f"fuzz cases per implementation in full mode (3; the mode's default is "
        f"{DEFAULT_FUZZ_ITERATIONS}, minutes on 2 cores)",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    options = parse_args(argv)
    rounds, cases = options.rounds, options.full_cases
    times = modes(rounds)
    registrations = len(Registry("off").algorithms())
    best = {label: min(values) for label, values in times.items()}
    print(f"bring-up of {registrations} implementations, best / median of {rounds} rounds:")
    for label, values in times.items():
        print(f"  {label:<44} {best[label]:9.1f} us  {statistics.median(values):9.1f} us")
    old_ratio, lazy_ratio = best[OLD] / best["off"], best["lazy"] / best["off"]
    print(f"thread-per-registration / off: {old_ratio:7.1f}x   {goal_note(old_ratio, '>= 100x')}")
    print(
        f"lazy / off:                    {lazy_ratio:7.3f}x   {goal_note(lazy_ratio, '<= 1.10x')}"
    )
    per_test = (best["eager"] - best["off"]) / registrations
    print(f"eager: {best['eager'] / 1e3:.2f} ms total, {per_test:.0f} us per test over off")

    registered, total, seeds = full(cases)
    print(
        f"full, timed on its own ({cases} fuzz cases per implementation, not the mode's "
        f"{DEFAULT_FUZZ_ITERATIONS}), best / median of {FULL_ROUNDS} rounds, seeds "
        f"{', '.join(map(str, seeds))}:"
    )
    print(
        f"  {'registration (load_all returns, tests queued)':<44} {min(registered):9.1f} us"
        f"  {statistics.median(registered):9.1f} us"
    )
    print(
        f"  {'bring-up, every test and fuzz case done':<44} {min(total) / 1e6:9.2f} s "
        f"  {statistics.median(total) / 1e6:9.2f} s"
    )
    per_case = (min(total) - best["eager"]) / (registrations * max(1, cases))
    estimate = best["eager"] + per_case * registrations * DEFAULT_FUZZ_ITERATIONS
    print(
        f"  fuzzing: {per_case / 1e3:.2f} ms per case per implementation over eager; at the "
        f"default {DEFAULT_FUZZ_ITERATIONS} cases, about {estimate / 1e6:.0f} s (estimated)"
    )


if __name__ == "__main__":
    main()
