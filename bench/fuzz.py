"""Fuzzing speed: cases per second; what drawing the random inputs costs (the seeded PRNG
against ``os.urandom`` and ``secrets``, and ``random.Random`` against numpy's PCG64, the
choice this project made); and the ``--jobs 2`` speed-up.

Run: ``python -m bench.fuzz``.
"""

import os
import random
import secrets
import time
from collections.abc import Callable

from cryptoapi import Registry
from cryptoapi.cli.fuzz import _run_jobs
from cryptoapi.selftest.fuzz import reference_for
from cryptoapi.selftest.fuzz.cases import case_random, make_case
from cryptoapi.selftest.fuzz.engine import compare

DRIVERS = ("sha256-openssl", "hmac(sha256-openssl)", "gcm-aes-openssl", "cbc-aes-openssl")
CASES = 300


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
        print(
            f"  {driver:<24} {CASES / total:8.0f} cases/s; PRNG {100 * drawing / total:4.1f}% "
            f"of the loop (goal < 5%); loop with os.urandom {urandom_total / total:.2f}x, "
            f"with secrets {secrets_total / total:.2f}x"
        )
    rng = random.Random(1)
    for size in (16, 64, 1024):
        prng = per_byte_ns(rng.randbytes, size)
        urandom = per_byte_ns(os.urandom, size)
        tokens = per_byte_ns(secrets.token_bytes, size)
        print(
            f"  per byte at {size:5} B: PRNG {prng:6.2f} ns, os.urandom {urandom:6.2f} ns "
            f"({urandom / prng:5.1f}x, goal >= 5x), "
            f"secrets {tokens:6.2f} ns ({tokens / prng:5.1f}x)"
        )
    ours, pcg = random_case_us(), numpy_case_us()
    shown = (
        "numpy not installed" if pcg is None else f"numpy PCG64 {pcg:.2f} us ({pcg / ours:.1f}x)"
    )
    print(f"  per-case generator (seed + 64 B + one int): random.Random {ours:.2f} us; {shown}")
    registry = Registry("off")
    registry.load_all()
    drivers = [i.driver for i in registry.algorithms() if i.provider == "openssl"]
    jobs = [(driver, 7, 100, None, None) for driver in drivers]
    started = time.perf_counter()
    _run_jobs(jobs, 1)
    one = time.perf_counter() - started
    started = time.perf_counter()
    _run_jobs(jobs, 2)
    two = time.perf_counter() - started
    print(f"  --jobs 2 vs --jobs 1 over {len(jobs)} drivers: {one / two:.2f}x faster")


if __name__ == "__main__":
    main()
