"""BLAKE2b and BLAKE2s (RFC 7693) through ``hashlib.blake2b``/``hashlib.blake2s``
(priority 300), keyed as the kernel's blake2b is: a key of up to 64 (32) bytes, empty for
an unkeyed hash.

These run CPython's own C BLAKE2 (hashlib's ``_blake2`` module), not OpenSSL's code:
OpenSSL's BLAKE2 digests, as ``hashlib.new`` and ``cryptography`` expose them, take neither
a key nor a digest size. They are named and placed with the OpenSSL drivers all the same,
as the fast C implementation every pycryptodome driver has a twin in (``-openssl``,
priority 300). hashlib's objects already are the hash states a ``shash`` core needs
(update, digest, copy).
"""

import hashlib
from collections.abc import Callable
from functools import partial

from cryptoapi.alg import PRIORITY_OPENSSL, Buffer
from cryptoapi.errors import InvalidKey
from cryptoapi.providers.records import BLAKE2B_SIZES, record
from cryptoapi.transforms.cores import HashState

Constructor = Callable[..., HashState]


class HashlibBlake2:
    """The keyed ``shash`` core of one BLAKE2 variant and digest size."""

    __slots__ = ("_key", "_max_key", "_new", "_size")

    def __init__(self, new: Constructor, max_key: int, size: int) -> None:
        self._new, self._max_key, self._size = new, max_key, size
        self._key = b""

    def setkey(self, key: bytes, /) -> None:
        if len(key) > self._max_key:
            raise InvalidKey(f"BLAKE2 key must be at most {self._max_key} bytes, got {len(key)}")
        self._key = bytes(key)

    def init(self) -> HashState:
        return self._new(digest_size=self._size, key=self._key)

    def digest(self, data: Buffer, /) -> bytes:
        state = self.init()
        state.update(data)  # also for b"": a str raises TypeError whatever its length
        return state.digest()


ALGORITHMS = (
    *(
        record(
            name,
            f"{name}-openssl",
            partial(HashlibBlake2, hashlib.blake2b, 64, size),
            provider="openssl",
            priority=PRIORITY_OPENSSL,
        )
        for name, size in BLAKE2B_SIZES.items()
    ),
    record(
        "blake2s-256",
        "blake2s-256-openssl",
        partial(HashlibBlake2, hashlib.blake2s, 32, 32),
        provider="openssl",
        priority=PRIORITY_OPENSSL,
    ),
)
