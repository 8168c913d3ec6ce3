"""Fuzzing speed: cases per second; what drawing the random inputs costs (the seeded PRNG
against ``os.urandom`` and ``secrets``, and ``random.Random`` against numpy's PCG64, the
choice this project made); one campaign with ``--jobs 1``, ``--jobs 2`` and on a Dask
``LocalCluster`` of 2 workers, with the scheduler's overhead at 1,000 cases per task; and
the cost per case of each independent library's implementation against OpenSSL's.

Run: ``python -m bench.fuzz``.
"""

import argparse
import os
import random
import secrets
import time
from collections.abc import Callable

from bench.common import goal_note, verdict
from cryptoapi import Registry
from cryptoapi.cli.fuzz import run_campaign
from cryptoapi.selftest.fuzz import reference_for
from cryptoapi.selftest.fuzz.campaign import DEFAULT_CHUNK, Parameters
from cryptoapi.selftest.fuzz.cases import case_random, make_case
from cryptoapi.selftest.fuzz.engine import compare, run_case
from cryptoapi.selftest.fuzz.references import OPINION_PROVIDERS

DRIVERS = ("sha256-openssl", "hmac(sha256-openssl)", "gcm-aes-openssl", "cbc-aes-openssl")
CASES = 300
CAMPAIGN_CASES = 2000  # per driver: two tasks of DEFAULT_CHUNK cases each
LIBRARY_NAMES = ("sha256", "sha512", "gcm(aes)", "rfc7539(chacha20,poly1305)", "blake2b-512")


class UrandomRandom(random.Random):
    """The same generator, but its bytes come from the OS CSPRNG (the kernel's mistake)."""

    def randbytes(self, n: int) -> bytes:
        return os.urandom(n)


class SecretsRandom(random.Random):
    def randbytes(self, n: int) -> bytes:
        return secrets.token_bytes(n)


def loop_seconds(driver: str, generator: type[random.Random]) -> tuple[float, float]:
    """(whole loop, case generation alone) for CASES cases of ``driver``."""
    registry = Registry("off")
    impl = registry.lookup(driver)
    ref = reference_for(registry, impl)
    started = time.perf_counter()
    drawing = 0.0
    for index in range(CASES):
        tick = time.perf_counter()
        case = make_case(impl, generator(f"1:{impl.name}:{index}"), index)
        drawing += time.perf_counter() - tick
        compare(registry.new_transform, impl, ref, case)
    return time.perf_counter() - started, drawing


def per_byte_ns(draw: Callable[[int], bytes], size: int, rounds: int = 20000) -> float:
    started = time.perf_counter()
    for _ in range(rounds):
        draw(size)
    return (time.perf_counter() - started) / (rounds * size) * 1e9


def numpy_case_us(rounds: int = 2000) -> float | None:
    try:
        import numpy
    except ImportError:
        return None
    started = time.perf_counter()
    for index in range(rounds):
        generator = numpy.random.Generator(numpy.random.PCG64([1, index]))
        generator.bytes(64)
        int(generator.integers(0, 100))
    return (time.perf_counter() - started) / rounds * 1e6


def random_case_us(rounds: int = 2000) -> float:
    started = time.perf_counter()
    for index in range(rounds):
        generator = case_random(1, "gcm(aes)", index)
        generator.randbytes(64)
        generator.randrange(100)
    return (time.perf_counter() - started) / rounds * 1e6


def main() -> None:
    print(f"cases/s and the share of drawing inputs ({CASES} cases each):")
    for driver in DRIVERS:
        total, drawing = loop_seconds(driver, random.Random)
        urandom_total, _ = loop_seconds(driver, UrandomRandom)
        secrets_total, _ = loop_seconds(driver, SecretsRandom)
        share = 100 * drawing / total
        print(
            f"  {driver:<24} {CASES / total:8.0f} cases/s; PRNG {share:4.1f}% of the loop "
            f"{goal_note(share, '< 5%')}; loop with os.urandom {urandom_total / total:.2f}x, "
            f"with secrets {secrets_total / total:.2f}x"
        )
    rng = random.Random(1)
    for size in (16, 64, 1024):
        prng = per_byte_ns(rng.randbytes, size)
        urandom = per_byte_ns(os.urandom, size)
        tokens = per_byte_ns(secrets.token_bytes, size)
        print(
            f"  per byte at {size:5} B: PRNG {prng:6.2f} ns, os.urandom {urandom:6.2f} ns "
            f"({urandom / prng:5.1f}x, goal >= 5x: {verdict(urandom / prng, '>= 5x')}), "
            f"secrets {tokens:6.2f} ns ({tokens / prng:5.1f}x)"
        )
    ours, pcg = random_case_us(), numpy_case_us()
    shown = (
        "numpy not installed" if pcg is None else f"numpy PCG64 {pcg:.2f} us ({pcg / ours:.1f}x)"
    )
    print(f"  per-case generator (seed + 64 B + one int): random.Random {ours:.2f} us; {shown}")
    campaign_speeds()
    library_costs()


def campaign_seconds(**where: object) -> tuple[float, float]:
    """(wall seconds, seconds spent inside the ranges) for the same campaign, run where
    ``where`` says (the ``fuzz`` command's options)."""
    options = {"jobs": 1, "scheduler": None, "cluster": None, "resume": None, **where}
    parameters = Parameters(seed=7, iterations=CAMPAIGN_CASES, chunk=DEFAULT_CHUNK,
                            drivers=DRIVERS)  # fmt: skip
    started = time.perf_counter()
    runs = run_campaign(parameters, argparse.Namespace(**options), None)
    wall = time.perf_counter() - started
    return wall, sum(run.result.seconds for run in runs)


def campaign_speeds() -> None:
    """Cases/s of one campaign in one process, two processes and a 2-worker LocalCluster
    (started before the clock runs: its start-up is paid once per campaign, not per case)."""
    from distributed import LocalCluster

    cases = CAMPAIGN_CASES * len(DRIVERS)
    one, _ = campaign_seconds(jobs=1)
    two, _ = campaign_seconds(jobs=2)
    # distributed's API carries no annotations: hence the ignore.
    local = LocalCluster(  # type: ignore[no-untyped-call]
        n_workers=2, threads_per_worker=1, dashboard_address=None
    )
    with local as cluster:
        on_cluster, busy = campaign_seconds(scheduler=cluster.scheduler_address)
    print(f"one campaign, {len(DRIVERS)} drivers x {CAMPAIGN_CASES} cases, "
          f"{DEFAULT_CHUNK} cases per task:")  # fmt: skip
    for label, seconds in (("--jobs 1", one), ("--jobs 2", two), ("--cluster local:2", on_cluster)):
        print(f"  {label:<18} {cases / seconds:8.0f} cases/s ({one / seconds:.2f}x --jobs 1)")
    overhead = 100 * (1 - busy / (2 * on_cluster))
    print(
        f"  scheduler overhead: cluster wall {100 * (on_cluster / two - 1):+.1f}% vs --jobs 2; "
        f"tasks busy {100 * busy / (2 * on_cluster):.1f}% of 2 workers' wall time "
        f"(overhead {overhead:.1f}%) {goal_note(overhead, '< 10%')}"
    )


def library_costs(cases: int = 300) -> None:
    """Microseconds per case of each independent library's driver, and OpenSSL's, for
    the same names and the same cases (the implementation alone, no reference)."""
    registry = Registry("off")
    registry.load_all()
    print(f"cost per case against OpenSSL's ({cases} cases, implementation alone):")
    for name in LIBRARY_NAMES:
        infos = [i for i in registry.algorithms() if i.name == name]
        openssl = [i.driver for i in infos if i.provider == "openssl"]
        others = [i.driver for i in infos if i.provider in OPINION_PROVIDERS]
        if not openssl or not others:
            continue
        base = case_us(registry, openssl[0], cases)
        shown = ", ".join(
            f"{driver} {cost:.1f} us ({cost / base:.2f}x)"
            for driver, cost in ((d, case_us(registry, d, cases)) for d in others)
        )
        print(f"  {name:<28} {openssl[0]} {base:.1f} us; {shown}")


def case_us(registry: Registry, driver: str, cases: int) -> float:
    impl = registry.lookup(driver)
    drawn = [make_case(impl, case_random(1, impl.name, i), i) for i in range(cases)]
    started = time.perf_counter()
    for case in drawn:
        run_case(registry.new_transform(impl), impl, case)
    return (time.perf_counter() - started) / cases * 1e6


if __name__ == "__main__":
    main()
