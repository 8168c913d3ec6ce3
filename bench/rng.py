"""Random bytes: the DRBGs of ``stdrng`` generating 32 B and 4 KiB, against ``os.urandom``
and ``secrets.token_bytes`` (the kernel's getrandom), side by side in one run.

Every driver without prediction resistance is timed, ``stdrng`` (the default,
``drbg_nopr_hmac_sha512``) first, then one with prediction resistance, whose every request
also draws entropy from ``os.urandom`` and reseeds. ``get_random_bytes`` is the same
default generator behind a registry method.

Run: ``python -m bench.rng``.
"""

import os
import secrets
from functools import partial

import cryptoapi
from bench.common import report, side_by_side
from cryptoapi import Registry
from cryptoapi.registry.manifest import DRBG_CORES

SIZES = (32, 4096)
ROUNDS = 7  # best of: the machines are noisy
registry = Registry()  # the default policy: the first allocation runs the health test


def drivers() -> list[str]:
    nopr = [f"drbg_nopr_{core}" for core in reversed(DRBG_CORES)]
    return ["stdrng", *nopr[1:], "drbg_pr_hmac_sha512"]


def main() -> None:
    for size in SIZES:
        number = 20_000 if size < 1024 else 2_000
        for driver in drivers():
            rng = registry.alloc_rng(driver)
            label = f"{rng.driver_name} generate {size} B"
            generate = partial(rng.generate, size)
            ours, urandom = side_by_side(generate, partial(os.urandom, size), number, ROUNDS)
            report(label, ours, urandom, "os.urandom")
            if driver == "stdrng":
                ours, token = side_by_side(
                    generate, partial(secrets.token_bytes, size), number, ROUNDS
                )
                report(label, ours, token, "secrets.token_bytes")
        get = partial(cryptoapi.get_random_bytes, size)
        ours, urandom = side_by_side(get, partial(os.urandom, size), number, ROUNDS)
        report(f"get_random_bytes({size})", ours, urandom, "os.urandom")


if __name__ == "__main__":
    main()
