"""libsodium's ChaCha20 (RFC 8439 §2.4; ``crypto_stream_chacha20_ietf_xor_ic``) and
XChaCha20 (``crypto_stream_xchacha20_xor_ic``) through pysodium, priority 200, with the
kernel's IV layouts (crypto/chacha_generic.c).

``chacha20``: IV = LE32 block counter || 96-bit nonce, the counter going to libsodium as
``ic``. ``xchacha20``: IV = 24-byte nonce || LE64 stream position; libsodium's XChaCha20 is
HChaCha20 then the original ChaCha20 with a 64-bit counter, whose two words are the
position's, so the position goes to libsodium whole as ``ic``. libsodium lets the counter
run past block 2^32 - 1 (carrying into the next state word); that would differ from the
other implementations, so such a keystream raises :class:`NeedFallback`
(:func:`library_counter`), as the other library drivers do.
"""

from collections.abc import Callable

import pysodium

from cryptoapi.alg import PRIORITY_PURE, Algorithm, Buffer
from cryptoapi.errors import InvalidKey
from cryptoapi.providers.generic.chacha20 import HNONCE_SIZE, KEY_SIZE, XNONCE_SIZE, library_counter
from cryptoapi.providers.records import record
from cryptoapi.providers.sodium import _libsodium  # noqa: F401  (libsodium present and initialized)


class SodiumChaCha20:
    """``chacha20``; encryption and decryption are the same XOR."""

    name = "chacha20"

    def setkey(self, key: bytes, /) -> None:
        if len(key) != KEY_SIZE:
            raise InvalidKey(f"{self.name} takes a 32-byte key, not {len(key)} bytes")
        self._key = bytes(key)

    def encrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        data = bytes(data)
        counter = library_counter("chacha20", iv, len(data))
        out: bytes = pysodium.crypto_stream_chacha20_ietf_xor_ic(data, iv[4:], counter, self._key)
        return out

    decrypt = encrypt


class SodiumXChaCha20(SodiumChaCha20):
    """``xchacha20``: the position's low word is the block counter, guarded as chacha20's."""

    name = "xchacha20"

    def encrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        data = bytes(data)
        position = iv[XNONCE_SIZE:]
        library_counter("xchacha20", position + iv[HNONCE_SIZE:XNONCE_SIZE], len(data))
        out: bytes = pysodium.crypto_stream_xchacha20_xor_ic(
            data, iv[:XNONCE_SIZE], int.from_bytes(position, "little"), self._key
        )
        return out

    decrypt = encrypt


def _sodium(name: str, create: Callable[[], object]) -> Algorithm:
    return record(name, f"{name}-sodium", create, provider="sodium", priority=PRIORITY_PURE)


ALGORITHMS = (_sodium("chacha20", SodiumChaCha20), _sodium("xchacha20", SodiumXChaCha20))
