"""libsodium's Poly1305 (RFC 8439 §2.5; ``crypto_onetimeauth_poly1305``) through pysodium's
handle, priority 200, keyed with the 32-byte one-time key r || s.

Only the one-shot function is used: libsodium's streaming Poly1305 state must be 16-byte
aligned, which a ctypes buffer does not promise. A running state keeps the message and
computes the tag when asked, as the OpenSSL and pycryptodome drivers' states do.
"""

import ctypes

from cryptoapi.alg import PRIORITY_PURE, Buffer
from cryptoapi.errors import InvalidKey
from cryptoapi.providers.records import record
from cryptoapi.providers.sodium._libsodium import SODIUM
from cryptoapi.providers.sodium.hashes import Buffered

KEY_SIZE = 32
TAG_SIZE = 16


class SodiumPoly1305:
    """``poly1305``: the tag of a whole message in one libsodium call."""

    def setkey(self, key: bytes, /) -> None:
        if len(key) != KEY_SIZE:
            raise InvalidKey(f"poly1305 takes a 32-byte key, not {len(key)} bytes")
        self._key = bytes(key)

    def _tag(self, message: bytes) -> bytes:
        out = ctypes.create_string_buffer(TAG_SIZE)
        SODIUM.crypto_onetimeauth_poly1305(out, message, len(message), self._key)
        return out.raw

    def init(self) -> Buffered:
        return Buffered(self._tag)

    def digest(self, data: Buffer, /) -> bytes:
        return self._tag(bytes(memoryview(data).cast("B")))


ALGORITHMS = (
    record(
        "poly1305", "poly1305-sodium", SodiumPoly1305, provider="sodium", priority=PRIORITY_PURE
    ),
)
