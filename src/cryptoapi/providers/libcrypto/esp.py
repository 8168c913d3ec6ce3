"""ESP's combined modes over libcrypto from C: ``rfc4106(gcm(aes))`` (RFC 4106) and
``rfc7539esp(chacha20,poly1305)`` (RFC 7634), priority 310, the same library as the
``openssl`` provider's drivers of these names (300).

What ranks them first is :class:`~cryptoapi.transforms.aead.EspRuns`: besides one packet
per call, the extension seals and opens a whole run of ESP packets in one call, each packet
framed around the very ``seal`` and ``open`` the self-test manager checks here, which the
ESP data path's per-SA fast path takes (:mod:`cryptoapi.esp.fastpath`; ``bench/esp.py``
measures it). Key: the cipher key followed by the 4-byte salt, which the extension keeps
and puts before each 8-byte IV. Without a C compiler or OpenSSL's headers this module
offers nothing and the ``openssl`` drivers serve.
"""

from typing import Any, ClassVar

from cryptoapi.alg import PRIORITY_LIBCRYPTO, Buffer
from cryptoapi.providers.libcrypto.extension import load
from cryptoapi.providers.records import record
from cryptoapi.transforms.aead import ESP_IV, Native, forged, split_esp_key

_EXTENSION = load()
Key = _EXTENSION.Key
Forged: type[Exception] = _EXTENSION.Forged

FULL_ICV = 16


class _EspAead:
    """One SA's key in the extension, remade whole by ``setkey`` and ``setauthsize``."""

    __slots__ = ("_authsize", "_key", "_secret")

    name = ""
    ciphers: ClassVar[dict[int, str]] = {}
    """libcrypto's name of the cipher, by the length of the key without its salt."""

    def __init__(self) -> None:
        self._authsize = FULL_ICV
        self._secret: tuple[bytes, bytes] | None = None
        self._key: Any = None  # the extension's Key

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} ICV {self._authsize}>"  # never the key

    def setkey(self, key: bytes, /) -> None:
        self._secret = split_esp_key(self.name, bytes(key), tuple(self.ciphers))
        self._rekey()

    def setauthsize(self, authsize: int, /) -> None:
        self._authsize = authsize
        self._rekey()

    def _rekey(self) -> None:
        if self._secret is not None:
            cipher_key, salt = self._secret
            self._key = Key(self.ciphers[len(cipher_key)], cipher_key, salt, self._authsize)

    def native(self) -> Native | None:
        """The extension's calls (it puts the salt before the IV: no prefix), with its
        calls for whole runs of ESP packets."""
        key = self._key
        if key is None:
            return None
        return Native(key.seal, key.open, ESP_IV, Forged, runs=key)

    def encrypt(self, iv: bytes, plaintext: Buffer, assoc: Buffer, /) -> bytes:
        sealed: bytes = self._key.seal(bytes(iv), bytes(plaintext), bytes(assoc))
        return sealed

    def decrypt(self, iv: bytes, data: Buffer, assoc: Buffer, /) -> bytes:
        try:
            plaintext: bytes = self._key.open(bytes(iv), bytes(data), bytes(assoc))
        except Forged:
            raise forged(self.name) from None
        return plaintext


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
