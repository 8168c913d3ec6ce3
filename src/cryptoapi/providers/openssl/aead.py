"""OpenSSL's AEADs through ``cryptography``: AES-GCM, AES-CCM and ChaCha20-Poly1305 (300);
XChaCha20-Poly1305 is :mod:`~cryptoapi.providers.openssl.xchacha20poly1305`'s.

OpenSSL takes GCM IVs of 8 to 128 bytes only; SP 800-38D allows any non-empty IV, so other
lengths raise :class:`NeedFallback` and the transform serves them from the next
implementation. A forged message raises :class:`BadMessage` and releases no plaintext.
"""

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESCCM, AESGCM, ChaCha20Poly1305

from cryptoapi.alg import PRIORITY_OPENSSL, Buffer
from cryptoapi.errors import InvalidArgument, InvalidKey
from cryptoapi.providers.records import record
from cryptoapi.transforms.aead import Native, forged
from cryptoapi.transforms.base import NeedFallback

GCM_TAG = 16
GCM_IV_RANGE = range(8, 129)  # what OpenSSL (through cryptography) accepts
CHACHA_NONCE = range(12, 13)


class AesGcm:
    """``gcm(aes)``: full tags through AESGCM, truncated ones through the GCM mode."""

    def setkey(self, key: bytes, /) -> None:
        if len(key) not in (16, 24, 32):
            raise InvalidKey(f"gcm(aes) takes a 16-, 24- or 32-byte key, not {len(key)} bytes")
        self._aead = AESGCM(key)
        self._algorithm = algorithms.AES(key)

    def setauthsize(self, authsize: int, /) -> None:
        self._authsize = authsize

    def native(self) -> Native | None:
        """AESGCM itself, for the IVs OpenSSL takes, while the tag is full length."""
        if self._authsize != GCM_TAG:
            return None
        return Native(self._aead.encrypt, self._aead.decrypt, GCM_IV_RANGE, InvalidTag)

    # Each call reads the tag length once: a setauthsize in another thread then changes
    # which length a message gets, never the slicing of one (a 12-byte tag cut to 0).

    def encrypt(self, iv: bytes, plaintext: Buffer, assoc: Buffer, /) -> bytes:
        if len(iv) not in GCM_IV_RANGE:
            raise NeedFallback
        authsize = self._authsize
        sealed = self._aead.encrypt(iv, plaintext, assoc)
        return sealed if authsize == GCM_TAG else sealed[: authsize - GCM_TAG]

    def decrypt(self, iv: bytes, data: Buffer, assoc: Buffer, /) -> bytes:
        if len(iv) not in GCM_IV_RANGE:
            raise NeedFallback
        authsize = self._authsize
        try:
            if authsize == GCM_TAG:
                return self._aead.decrypt(iv, data, assoc)
            return self._decrypt_truncated(iv, bytes(data), assoc, authsize)
        except InvalidTag:
            raise forged("gcm(aes)") from None

    def _decrypt_truncated(self, iv: bytes, data: bytes, assoc: Buffer, authsize: int) -> bytes:
        body, tag = data[:-authsize], data[-authsize:]
        mode = modes.GCM(iv, tag, min_tag_length=authsize)
        context = Cipher(self._algorithm, mode).decryptor()
        context.authenticate_additional_data(assoc)
        plaintext = context.update(body)
        context.finalize()  # raises InvalidTag before the plaintext is returned
        return plaintext


def _check_ccm_length(iv: bytes, payload: int) -> None:
    """SP 800-38C A.1: the payload length must fit in q = 15 - len(nonce) bytes (OpenSSL
    fails on exactly 2^(8q) bytes instead of refusing it)."""
    if payload >> (8 * (15 - len(iv))):
        raise InvalidArgument(
            f"ccm(aes): {payload} bytes do not fit the length field of a {len(iv)}-byte nonce"
        )


class AesCcm:
    """``ccm(aes)`` with nonces of 7 to 13 bytes and even tags of 4 to 16 bytes."""

    def __init__(self) -> None:
        self._key = b""
        self._authsize = 16

    def setkey(self, key: bytes, /) -> None:
        if len(key) not in (16, 24, 32):
            raise InvalidKey(f"ccm(aes) takes a 16-, 24- or 32-byte key, not {len(key)} bytes")
        self._key = key
        self._aead = AESCCM(key, self._authsize)

    def setauthsize(self, authsize: int, /) -> None:
        self._authsize = authsize
        if self._key:
            self._aead = AESCCM(self._key, authsize)

    def encrypt(self, iv: bytes, plaintext: Buffer, assoc: Buffer, /) -> bytes:
        _check_ccm_length(iv, len(plaintext))
        try:
            return self._aead.encrypt(iv, plaintext, assoc)
        except ValueError as error:  # e.g. a payload too long for the nonce's length field
            raise InvalidArgument(f"ccm(aes): {error}") from None

    def decrypt(self, iv: bytes, data: Buffer, assoc: Buffer, /) -> bytes:
        _check_ccm_length(iv, len(data) - self._authsize)
        try:
            return self._aead.decrypt(iv, data, assoc)
        except InvalidTag:
            raise forged("ccm(aes)") from None
        except ValueError as error:
            raise InvalidArgument(f"ccm(aes): {error}") from None


class ChaChaPoly:
    """``rfc7539(chacha20,poly1305)``: RFC 8439 §2.8, 12-byte nonce, 16-byte tag."""

    name = "rfc7539(chacha20,poly1305)"

    def setkey(self, key: bytes, /) -> None:
        if len(key) != 32:
            raise InvalidKey(f"{self.name} takes a 32-byte key, not {len(key)} bytes")
        self._aead = ChaCha20Poly1305(key)
        self._key = key

    def setauthsize(self, authsize: int, /) -> None:
        """Only the 16-byte tag exists; the transform has already checked it."""

    def native(self) -> Native | None:
        """ChaCha20Poly1305 itself (the transform allows 12-byte nonces only)."""
        return Native(self._aead.encrypt, self._aead.decrypt, CHACHA_NONCE, InvalidTag)

    def encrypt(self, iv: bytes, plaintext: Buffer, assoc: Buffer, /) -> bytes:
        return self._aead.encrypt(iv, plaintext, assoc)

    def decrypt(self, iv: bytes, data: Buffer, assoc: Buffer, /) -> bytes:
        try:
            return self._aead.decrypt(iv, data, assoc)
        except InvalidTag:
            raise forged(self.name) from None


ALGORITHMS = (
    record("gcm(aes)", "gcm-aes-openssl", AesGcm, provider="openssl", priority=PRIORITY_OPENSSL),
    record("ccm(aes)", "ccm-aes-openssl", AesCcm, provider="openssl", priority=PRIORITY_OPENSSL),
    record(
        "rfc7539(chacha20,poly1305)",
        "rfc7539-chacha20-poly1305-openssl",
        ChaChaPoly,
        provider="openssl",
        priority=PRIORITY_OPENSSL,
    ),
)
