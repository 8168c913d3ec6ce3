"""libsodium's SHA-256 and SHA-512 (FIPS 180-4; ``crypto_hash_sha256``/``_sha512``),
priority 200.

PyNaCl exposes them one-shot only, so a running state keeps the message and hashes it whole
when a digest is asked for: memory grows with the message, which is fine for what this
provider is for (a third opinion on fuzzer-sized inputs), and why it ranks below OpenSSL.
"""

from collections.abc import Callable

from nacl import bindings

from cryptoapi.alg import PRIORITY_PURE, Algorithm, Buffer
from cryptoapi.transforms.shash import hashlib_like, unkeyed_shash


class Buffered:
    """A hashlib-like state over a one-shot hash: ``update`` appends, ``digest`` hashes."""

    __slots__ = ("_hash", "_message")

    def __init__(self, hash_: Callable[[bytes], bytes], message: bytes = b"") -> None:
        self._hash = hash_
        self._message = bytearray(message)

    def update(self, data: Buffer, /) -> None:
        self._message += memoryview(data).cast("B")  # a str has no buffer: TypeError

    def digest(self) -> bytes:
        return self._hash(bytes(self._message))

    def copy(self) -> "Buffered":
        return Buffered(self._hash, bytes(self._message))


def _sodium_hash(
    name: str, hash_: Callable[[bytes], bytes], digestsize: int, block: int
) -> Algorithm:
    return unkeyed_shash(
        name=name,
        driver=f"{name}-sodium",
        provider="sodium",
        priority=PRIORITY_PURE,
        new=hashlib_like(lambda: Buffered(hash_)),
        digestsize=digestsize,
        blocksize=block,
    )


ALGORITHMS = (
    _sodium_hash("sha256", bindings.crypto_hash_sha256, 32, 64),
    _sodium_hash("sha512", bindings.crypto_hash_sha512, 64, 128),
)
