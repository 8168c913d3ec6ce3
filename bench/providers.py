"""The cost of one operation on each provider's driver, as a ratio to OpenSSL's
(``python -m bench.providers``): hashes and MACs of 64 bytes, ciphers and MACs over 1400
bytes (an ESP packet), for openssl, pycryptodome, sodium and wolfcrypt. A provider whose
library is not installed, or that lacks the name, shows ``-``. Where a provider has no
one-piece driver of a composed name (``hmac(sha256)``), its row is the template over that
provider's hash; the override table names the one-piece drivers that exist."""

import timeit
from collections.abc import Callable

import cryptoapi
from cryptoapi.errors import AlgorithmNotFound

PROVIDERS = ("openssl", "pycryptodome", "sodium", "wolfcrypt")
ROUNDS = 2000
Maker = Callable[[cryptoapi.Registry, str], Callable[[], object]]


PACKET = bytes(1400)


def _sha256(registry: cryptoapi.Registry, driver: str) -> Callable[[], object]:
    tfm = registry.alloc_shash(driver)
    data = bytes(64)
    return lambda: tfm.digest(data)


def _keyed_hash(keysize: int, size: int) -> Maker:
    def make(registry: cryptoapi.Registry, driver: str) -> Callable[[], object]:
        tfm = registry.alloc_shash(driver)
        tfm.setkey(bytes(range(keysize)))
        data = bytes(size)
        return lambda: tfm.digest(data)

    return make


def _aead(keysize: int) -> Maker:
    def make(registry: cryptoapi.Registry, driver: str) -> Callable[[], object]:
        tfm = registry.alloc_aead(driver)
        tfm.setkey(bytes(keysize))
        iv = bytes(tfm.ivsize)
        return lambda: tfm.encrypt(iv, PACKET, b"")

    return make


def _stream(registry: cryptoapi.Registry, driver: str) -> Callable[[], object]:
    tfm = registry.alloc_skcipher(driver)
    tfm.setkey(bytes(32))
    iv = bytes(tfm.ivsize)
    return lambda: tfm.encrypt(iv, PACKET)


CASES: dict[str, tuple[str, Maker]] = {
    "sha256 64 B": ("sha256-{}", _sha256),
    "gcm(aes) 1400 B encrypt": ("gcm-aes-{}", _aead(16)),
    "gcm(aes) AES-256 1400 B": ("gcm-aes-{}", _aead(32)),
    "chacha20 1400 B": ("chacha20-{}", _stream),
    "xchacha20 1400 B": ("xchacha20-{}", _stream),
    "poly1305 1400 B": ("poly1305-{}", _keyed_hash(32, 1400)),
    "hmac(sha256) 64 B": ("hmac(sha256-{})", _keyed_hash(32, 64)),
    "hmac(sha512) 64 B": ("hmac(sha512-{})", _keyed_hash(64, 64)),
    "blake2b-256 64 B": ("blake2b-256-{}", _keyed_hash(0, 64)),
}

ONE_PIECE = {
    ("hmac(sha256-{})", "sodium"): "hmac-sha256-sodium",
    ("hmac(sha512-{})", "sodium"): "hmac-sha512-sodium",
}
"""(case pattern, provider) -> the provider's one-piece driver of that composed name."""


def _microseconds(operation: Callable[[], object]) -> float:
    return min(timeit.repeat(operation, number=ROUNDS, repeat=3)) / ROUNDS * 1e6


def main() -> None:
    registry = cryptoapi.Registry(selftests="off")
    print(f"{'case':26}" + "".join(f"{p:>18}" for p in PROVIDERS))
    for case, (pattern, make) in CASES.items():
        cells, base = [], 0.0
        for provider in PROVIDERS:
            try:
                driver = ONE_PIECE.get((pattern, provider), pattern.format(provider))
                cost = _microseconds(make(registry, driver))
            except AlgorithmNotFound:
                cells.append(f"{'-':>18}")
                continue
            base = base or cost
            cells.append(f"{cost:8.2f} us {cost / base:5.1f}x")
        print(f"{case:26}" + "".join(cells))


if __name__ == "__main__":
    main()
