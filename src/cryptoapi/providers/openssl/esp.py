"""OpenSSL's ESP combined modes in one piece: ``rfc4106(gcm(aes))`` (RFC 4106) and
``rfc7539esp(chacha20,poly1305)`` (RFC 7634) through ``cryptography``'s AESGCM and
ChaCha20Poly1305, priority 300.

The templates build the same names from the parts (``rfc4106(gcm-aes-openssl)``, and
``rfc7539esp`` from ChaCha20 and Poly1305 separately, which runs Poly1305 as a second
call); a one-piece driver of equal priority ranks first, and saves the ESP data path a
layer of Python per packet (measured in ``bench/esp.py``). Key: the cipher key followed by
the 4-byte salt; nonce: salt || the 8-byte IV; ``assoc`` as in the templates (the ESP AAD,
whose length the aead transform checks for every implementation).
"""

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305

from cryptoapi.alg import PRIORITY_OPENSSL, Buffer
from cryptoapi.providers.openssl.aead import GCM_TAG, AesGcm
from cryptoapi.providers.records import record
from cryptoapi.transforms.aead import ESP_IV, Native, forged, split_esp_key

CHACHA_KEY = 32


class Rfc4106Gcm:
    """RFC 4106: AES-GCM with a 12-byte nonce, salt || IV; ICV 8, 12 or 16 bytes."""

    __slots__ = ("_aead", "_authsize", "_gcm", "_salt")

    name = "rfc4106(gcm(aes))"

    def __init__(self) -> None:
        self._gcm = AesGcm()
        self._salt = b""
        self._authsize = GCM_TAG

    def setkey(self, key: bytes, /) -> None:
        aes_key, salt = split_esp_key(self.name, key, (16, 24, 32))
        self._gcm.setkey(aes_key)
        self._aead = AESGCM(aes_key)
        self._gcm.setauthsize(self._authsize)
        self._salt = salt

    def setauthsize(self, authsize: int, /) -> None:
        self._authsize = authsize
        self._gcm.setauthsize(authsize)

    def native(self) -> Native | None:
        """AESGCM itself with the salt as nonce prefix, while the ICV is full length."""
        if self._authsize != GCM_TAG:
            return None
        return Native(self._aead.encrypt, self._aead.decrypt, ESP_IV, InvalidTag, prefix=self._salt)

    def encrypt(self, iv: bytes, plaintext: Buffer, assoc: Buffer, /) -> bytes:
        if self._authsize == GCM_TAG:  # the common ICV: straight to OpenSSL, one call
            return self._aead.encrypt(self._salt + iv, plaintext, assoc)
        return self._gcm.encrypt(self._salt + iv, plaintext, assoc)

    def decrypt(self, iv: bytes, data: Buffer, assoc: Buffer, /) -> bytes:
        if self._authsize == GCM_TAG:
            try:
                return self._aead.decrypt(self._salt + iv, data, assoc)
            except InvalidTag:
                raise forged(self.name) from None
        return self._gcm.decrypt(self._salt + iv, data, assoc)


class Rfc7539Esp:
    """RFC 7634: ChaCha20-Poly1305 with nonce salt || IV and the 16-byte tag."""

    __slots__ = ("_aead", "_salt")

    name = "rfc7539esp(chacha20,poly1305)"

    def setkey(self, key: bytes, /) -> None:
        chacha_key, salt = split_esp_key(self.name, key, (CHACHA_KEY,))
        self._aead = ChaCha20Poly1305(chacha_key)
        self._salt = salt

    def setauthsize(self, authsize: int, /) -> None:
        """Only the 16-byte tag exists; the transform has already checked it."""

    def native(self) -> Native | None:
        """ChaCha20Poly1305 itself with the salt as nonce prefix."""
        return Native(self._aead.encrypt, self._aead.decrypt, ESP_IV, InvalidTag, prefix=self._salt)

    def encrypt(self, iv: bytes, plaintext: Buffer, assoc: Buffer, /) -> bytes:
        return self._aead.encrypt(self._salt + iv, plaintext, assoc)

    def decrypt(self, iv: bytes, data: Buffer, assoc: Buffer, /) -> bytes:
        try:
            return self._aead.decrypt(self._salt + iv, data, assoc)
        except InvalidTag:
            raise forged(self.name) from None


ALGORITHMS = (
    record(
        "rfc4106(gcm(aes))",
        "rfc4106-gcm-aes-openssl",
        Rfc4106Gcm,
        provider="openssl",
        priority=PRIORITY_OPENSSL,
    ),
    record(
        "rfc7539esp(chacha20,poly1305)",
        "rfc7539esp-chacha20-poly1305-openssl",
        Rfc7539Esp,
        provider="openssl",
        priority=PRIORITY_OPENSSL,
    ),
)
