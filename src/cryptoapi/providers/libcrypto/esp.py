"""ESP's combined modes over libcrypto from C: ``rfc4106(gcm(aes))`` (RFC 4106) and
``rfc7539esp(chacha20,poly1305)`` (RFC 7634), priority 310, OpenSSL as the ``openssl``
provider's drivers of these names (300) are, in the system's build rather than the one
``cryptography`` bundles.

What ranks them first is :class:`~cryptoapi.transforms.aead.EspRuns`: besides one packet
per call, the extension seals and opens a whole run of ESP packets in one call, each packet
framed around the very ``seal`` and ``open`` the self-test manager checks here, which the
ESP data path's per-SA fast path takes (:mod:`cryptoapi.esp.fastpath`; ``bench/esp.py``
measures it). Key: the cipher key followed by the 4-byte salt, which the extension keeps
and puts before each 8-byte IV. Without a C compiler or OpenSSL's headers this module
offers nothing and the ``openssl`` drivers serve.
"""

from typing import Any, ClassVar

from cryptoapi.alg import PRIORITY_LIBCRYPTO
from cryptoapi.providers.libcrypto.core import EXTENSION, ExtensionCore
from cryptoapi.providers.records import record
from cryptoapi.transforms.aead import ESP_IV, split_esp_key


class _EspAead(ExtensionCore):
    """One SA's key in the extension (which puts the salt before the IV: no prefix)."""

    __slots__ = ()

    native_ivs = ESP_IV
    ciphers: ClassVar[dict[int, str]] = {}
    """libcrypto's name of the cipher, by the length of the key without its salt."""

    def setkey(self, key: bytes, /) -> None:
        self._secret = split_esp_key(self.name, bytes(key), tuple(self.ciphers))
        self._rekey()

    def _made(self, cipher_key: bytes, salt: bytes, /) -> Any:
        return EXTENSION.Key(self.ciphers[len(cipher_key)], cipher_key, salt, self._authsize)


class Rfc4106Gcm(_EspAead):
    """RFC 4106: AES-GCM, nonce salt || IV; ICV 8, 12 or 16 bytes."""

    __slots__ = ()

    name = "rfc4106(gcm(aes))"
    ciphers: ClassVar[dict[int, str]] = {16: "AES-128-GCM", 24: "AES-192-GCM", 32: "AES-256-GCM"}


class Rfc7539Esp(_EspAead):
    """RFC 7634: ChaCha20-Poly1305, nonce salt || IV; the 16-byte ICV."""

    __slots__ = ()

    name = "rfc7539esp(chacha20,poly1305)"
    ciphers: ClassVar[dict[int, str]] = {32: "ChaCha20-Poly1305"}


ALGORITHMS = (
    record(
        "rfc4106(gcm(aes))",
        "rfc4106-gcm-aes-libcrypto",
        Rfc4106Gcm,
        provider="libcrypto",
        priority=PRIORITY_LIBCRYPTO,
    ),
    record(
        "rfc7539esp(chacha20,poly1305)",
        "rfc7539esp-chacha20-poly1305-libcrypto",
        Rfc7539Esp,
        provider="libcrypto",
        priority=PRIORITY_LIBCRYPTO,
    ),
)
