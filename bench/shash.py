"""Hash and HMAC benchmarks: cryptoapi against hashlib and stdlib hmac, side by side.

Run: ``python -m bench.shash``.
"""

import hashlib
import hmac

import cryptoapi
from bench.common import report, side_by_side

DATA = bytes(range(64))
KEY = b"k" * 32


class OneShotHmac:
    """The core a one-piece ``hmac(sha256)`` over OpenSSL's one-shot HMAC would be: measured
    slower than the composition on hashlib states (OpenSSL 3 looks the digest up per call),
    so no such driver is registered (issue 13)."""

    __slots__ = ("_key",)

    def __init__(self, key: bytes) -> None:
        self._key = key

    def digest(self, data: bytes) -> bytes:
        return hmac.digest(self._key, data, "sha256")


def main() -> None:
    sha = cryptoapi.alloc_shash("sha256")
    ours, peer = side_by_side(
        lambda: sha.digest(DATA), lambda: hashlib.sha256(DATA).digest(), 200_000
    )
    report("sha256 digest(64 B), transform reused", ours, peer, "hashlib.sha256")
    ours, peer = side_by_side(
        lambda: sha.digest(DATA), lambda: hashlib.new("sha256", DATA).digest(), 200_000
    )
    report("sha256 digest(64 B), transform reused", ours, peer, "hashlib.new", "<= 1.5x")
    ours, peer = side_by_side(
        lambda: cryptoapi.alloc_shash("sha256").digest(DATA),
        lambda: hashlib.new("sha256", DATA).digest(),
        100_000,
    )
    report("alloc_shash('sha256') + digest(64 B)", ours, peer, "hashlib.new")

    mac = cryptoapi.alloc_shash("hmac(sha256)")
    mac.setkey(KEY)
    ours, peer = side_by_side(
        lambda: mac.digest(DATA), lambda: hmac.digest(KEY, DATA, "sha256"), 200_000
    )
    report("hmac(sha256) digest(64 B), keyed once", ours, peer, "hmac.digest", "<= 0.5x")
    one_piece = OneShotHmac(KEY)  # what a one-piece hmac-sha256-openssl core would run
    ours, peer = side_by_side(lambda: mac.digest(DATA), lambda: one_piece.digest(DATA), 200_000)
    report(f"{mac.driver_name} digest(64 B)", ours, peer, "one-shot core")

    def keyed_each_time() -> bytes:
        mac.setkey(KEY)
        return mac.digest(DATA)

    ours, peer = side_by_side(keyed_each_time, lambda: hmac.digest(KEY, DATA, "sha256"), 50_000)
    report("hmac(sha256) setkey + digest(64 B)", ours, peer, "hmac.digest")

    def first_lookup() -> object:
        return cryptoapi.Registry(selftests="off").lookup("hmac(sha512)")

    registry = cryptoapi.Registry(selftests="off")
    registry.lookup("hmac(sha512)")
    ours, peer = side_by_side(first_lookup, lambda: registry.lookup("hmac(sha512)"), 200, rounds=5)
    print(f"{'first lookup hmac(sha512)':<44} {ours:.1f} us; cached {peer:.3f} us")


if __name__ == "__main__":
    main()
