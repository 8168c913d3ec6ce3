"""libsodium's AEADs (priority 200): ``crypto_aead_chacha20poly1305_ietf`` (RFC 8439 §2.8)
and ``crypto_aead_xchacha20poly1305_ietf`` (draft-irtf-cfrg-xchacha-03 §2), 16-byte tags.

A forged message raises :class:`BadMessage` and releases no plaintext. (libsodium's
AES-256-GCM, a partial ``gcm(aes)``, is in :mod:`cryptoapi.providers.sodium.aes256gcm`.)
"""

from collections.abc import Callable

from nacl import bindings
from nacl.exceptions import CryptoError as SodiumError

from cryptoapi.alg import PRIORITY_PURE, Algorithm, Buffer
from cryptoapi.errors import InvalidKey
from cryptoapi.providers.records import record
from cryptoapi.transforms.aead import forged

Seal = Callable[[bytes, bytes | None, bytes, bytes], bytes]


class _SodiumAead:
    """A libsodium combined-mode AEAD: ``seal(message, aad, nonce, key)`` returns
    ciphertext || 16-byte tag, ``open`` the plaintext or raises libsodium's CryptoError."""

    name = ""
    keysize = 32
    seal: Seal
    open: Seal

    def __init__(self) -> None:
        self._key = b""

    def setkey(self, key: bytes, /) -> None:
        if len(key) != self.keysize:
            raise InvalidKey(f"{self.name} takes a {self.keysize}-byte key, not {len(key)} bytes")
        self._key = bytes(key)

    def setauthsize(self, authsize: int, /) -> None:
        """Nothing to keep: both names have 16-byte tags only (the transform checked)."""

    def encrypt(self, iv: bytes, plaintext: Buffer, assoc: Buffer, /) -> bytes:
        return type(self).seal(bytes(plaintext), bytes(assoc) or None, iv, self._key)

    def decrypt(self, iv: bytes, data: Buffer, assoc: Buffer, /) -> bytes:
        try:
            return type(self).open(bytes(data), bytes(assoc) or None, iv, self._key)
        except SodiumError:
            raise forged(self.name) from None


class ChaChaPoly(_SodiumAead):
    """``rfc7539(chacha20,poly1305)``: 12-byte nonce, 16-byte tag."""

    name = "rfc7539(chacha20,poly1305)"
    seal = staticmethod(bindings.crypto_aead_chacha20poly1305_ietf_encrypt)
    open = staticmethod(bindings.crypto_aead_chacha20poly1305_ietf_decrypt)


class XChaChaPoly(_SodiumAead):
    """``xchacha20poly1305``: 24-byte nonce, libsodium's own HChaCha20."""

    name = "xchacha20poly1305"
    seal = staticmethod(bindings.crypto_aead_xchacha20poly1305_ietf_encrypt)
    open = staticmethod(bindings.crypto_aead_xchacha20poly1305_ietf_decrypt)


def _sodium(name: str, driver: str, create: Callable[[], object]) -> Algorithm:
    return record(name, driver, create, provider="sodium", priority=PRIORITY_PURE)


ALGORITHMS = (
    _sodium("rfc7539(chacha20,poly1305)", "rfc7539-chacha20-poly1305-sodium", ChaChaPoly),
    _sodium("xchacha20poly1305", "xchacha20poly1305-sodium", XChaChaPoly),
)
