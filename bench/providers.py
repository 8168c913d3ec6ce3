"""The cost of one operation on each provider's driver, as a ratio to OpenSSL's
(``python -m bench.providers``): sha256 of 64 bytes and gcm(aes) encryption of 1400 bytes
(an ESP packet), for openssl, pycryptodome, sodium and wolfcrypt. A provider whose library
is not installed, or that lacks the name, shows ``-``."""

import timeit
from collections.abc import Callable

import cryptoapi
from cryptoapi.errors import AlgorithmNotFound

PROVIDERS = ("openssl", "pycryptodome", "sodium", "wolfcrypt")
ROUNDS = 2000


def _sha256(registry: cryptoapi.Registry, driver: str) -> Callable[[], object]:
    tfm = registry.alloc_shash(driver)
    data = bytes(64)
    return lambda: tfm.digest(data)


def _gcm(registry: cryptoapi.Registry, driver: str) -> Callable[[], object]:
    tfm = registry.alloc_aead(driver)
    tfm.setkey(bytes(16))
    iv, data = bytes(12), bytes(1400)
    return lambda: tfm.encrypt(iv, data, b"")


CASES: dict[str, tuple[str, Callable[[cryptoapi.Registry, str], Callable[[], object]]]] = {
    "sha256 64 B": ("sha256-{}", _sha256),
    "gcm(aes) 1400 B encrypt": ("gcm-aes-{}", _gcm),
}


def _microseconds(operation: Callable[[], object]) -> float:
    return min(timeit.repeat(operation, number=ROUNDS, repeat=3)) / ROUNDS * 1e6


def main() -> None:
    registry = cryptoapi.Registry(selftests="off")
    print(f"{'case':26}" + "".join(f"{p:>18}" for p in PROVIDERS))
    for case, (pattern, make) in CASES.items():
        cells, base = [], 0.0
        for provider in PROVIDERS:
            try:
                cost = _microseconds(make(registry, pattern.format(provider)))
            except AlgorithmNotFound:
                cells.append(f"{'-':>18}")
                continue
            base = base or cost
            cells.append(f"{cost:8.2f} us {cost / base:5.1f}x")
        print(f"{case:26}" + "".join(cells))


if __name__ == "__main__":
    main()
