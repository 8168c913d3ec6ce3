"""Registry bring-up in each self-test mode, against a model of the kernel before its 2022
fix (with tests off, every registration still started a do-nothing thread and waited).

Run: ``python -m bench.boot``. All modes are timed alternately in one run; imports are
warmed first, so this measures registration and testing, not module loading. ``full``
fuzzes every implementation at each bring-up (about a minute), so it runs in the first
``FULL_ROUNDS`` rounds only. Each bring-up starts after a garbage collection, so none pays
for the garbage of the one before (the thread model leaves a lot), as ``timeit`` keeps the
collector out of what it times.
"""

import gc
import random
import statistics
import threading
import time
from collections.abc import Callable

from cryptoapi import Registry
from cryptoapi.registry.trace import TraceEvent

FULL_ROUNDS = 2


def bring_up(mode: str, trace: Callable[[TraceEvent], None] | None = None) -> float:
    gc.collect()
    started = time.perf_counter()
    registry = Registry(mode, trace=trace)
    registry.load_all()
    registry.wait_idle(60)
    return (time.perf_counter() - started) * 1e6


def kthread_per_registration(event: TraceEvent) -> None:
    """The pre-fix kernel: a test thread per registration, even with nothing to test."""
    if event.kind == "register":
        thread = threading.Thread(target=lambda: None)
        thread.start()
        thread.join()


def baseline() -> float:
    return bring_up("off", trace=kthread_per_registration)


def main(rounds: int = 30) -> None:
    runs: dict[str, Callable[[], float]] = {
        "off": lambda: bring_up("off"),
        "lazy": lambda: bring_up("lazy"),
        "eager": lambda: bring_up("eager"),
        "full": lambda: bring_up("full"),
        "thread-per-registration (pre-2022 kernel)": baseline,
    }
    for run in runs.values():
        run()  # warm the imports
    times: dict[str, list[float]] = {label: [] for label in runs}
    order = list(runs)
    shuffler = random.Random(0)  # a fixed order per round: drift hits every mode alike
    for round_number in range(rounds):
        shuffler.shuffle(order)
        for label in order:
            if label != "full" or round_number < FULL_ROUNDS:
                times[label].append(runs[label]())
    best = {label: min(values) for label, values in times.items()}
    median = {label: statistics.median(values) for label, values in times.items()}
    registrations = len(Registry("off").algorithms())
    print(
        f"bring-up of {registrations} implementations, best / median of {rounds} rounds "
        f"({FULL_ROUNDS} for full):"
    )
    for label in runs:
        print(f"  {label:<44} {best[label]:9.1f} us  {median[label]:9.1f} us")
    old = best["thread-per-registration (pre-2022 kernel)"]
    print(f"thread-per-registration / off: {old / best['off']:7.1f}x   (goal >= 100x)")
    print(f"lazy / off:                    {best['lazy'] / best['off']:7.3f}x   (goal <= 1.10x)")
    per_test = (best["eager"] - best["off"]) / registrations
    print(f"eager: {best['eager'] / 1e3:.2f} ms total, {per_test:.0f} us per test over off")


if __name__ == "__main__":
    main()
