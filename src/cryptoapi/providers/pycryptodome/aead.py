"""pycryptodome's AEADs through ``Crypto.Cipher`` (priority 200): AES-GCM (SP 800-38D),
AES-CCM (SP 800-38C), ChaCha20-Poly1305 (RFC 8439 §2.8) and XChaCha20-Poly1305
(draft-irtf-cfrg-xchacha-03 §2).

A third implementation, independent of OpenSSL and of the generic references, so that when
those two disagree the differential fuzzer can name the odd one out. pycryptodome takes
every GCM IV length SP 800-38D allows and truncated tags (``mac_len``), CCM nonces of 7 to
13 bytes with even tags of 4 to 16 bytes, and a 24-byte ChaCha20-Poly1305 nonce as
XChaCha20-Poly1305, so no parameter needs a fallback here.

Decryption deciphers, then verifies the tag: pycryptodome's ``ValueError`` from ``verify``
becomes :class:`BadMessage` and the plaintext is dropped, never returned. Its other
``ValueError``s (a message too long for a CCM nonce's length field) are InvalidArgument.
"""

from collections.abc import Callable
from typing import Any

from Crypto.Cipher import AES, ChaCha20_Poly1305

from cryptoapi.alg import PRIORITY_PURE, Algorithm, Buffer
from cryptoapi.errors import InvalidArgument, InvalidKey
from cryptoapi.providers.pycryptodome.ciphers import check_aes_key
from cryptoapi.providers.records import record
from cryptoapi.transforms.aead import forged


class _Aead:
    """Encrypt then append the tag; split, decipher, then verify. Subclasses say how a
    pycryptodome cipher object is made for one message (``_cipher``)."""

    name = ""

    def __init__(self) -> None:
        self._key = b""
        self._authsize = 16

    def setauthsize(self, authsize: int, /) -> None:
        """Keep the tag length; the transform has already checked it."""
        self._authsize = authsize

    def _cipher(self, iv: bytes, msg_len: int, assoc_len: int) -> Any:
        raise NotImplementedError

    def encrypt(self, iv: bytes, plaintext: Buffer, assoc: Buffer, /) -> bytes:
        try:
            cipher = self._cipher(iv, len(plaintext), len(assoc))
            cipher.update(assoc)
            ciphertext, tag = cipher.encrypt_and_digest(plaintext)
        except ValueError as error:
            raise InvalidArgument(f"{self.name}: {error}") from None
        return ciphertext + tag  # type: ignore[no-any-return]

    def decrypt(self, iv: bytes, data: Buffer, assoc: Buffer, /) -> bytes:
        split = len(data) - self._authsize
        body, tag = data[:split], data[split:]
        try:
            cipher = self._cipher(iv, split, len(assoc))
            cipher.update(assoc)
            plaintext = cipher.decrypt(body)
        except ValueError as error:
            raise InvalidArgument(f"{self.name}: {error}") from None
        try:
            cipher.verify(tag)
        except ValueError:  # "MAC check failed": the plaintext is dropped
            raise forged(self.name) from None
        return plaintext  # type: ignore[no-any-return]


class AesGcm(_Aead):
    """``gcm(aes)``: any non-empty IV, tags of 4, 8 and 12 to 16 bytes."""

    name = "gcm(aes)"

    def setkey(self, key: bytes, /) -> None:
        check_aes_key(key, self.name)
        self._key = key

    def _cipher(self, iv: bytes, msg_len: int, assoc_len: int) -> Any:
        return AES.new(self._key, AES.MODE_GCM, nonce=iv, mac_len=self._authsize)


class AesCcm(_Aead):
    """``ccm(aes)`` with nonces of 7 to 13 bytes and even tags of 4 to 16 bytes; the
    lengths are declared up front so pycryptodome need not buffer the message."""

    name = "ccm(aes)"

    def setkey(self, key: bytes, /) -> None:
        check_aes_key(key, self.name)
        self._key = key

    def _cipher(self, iv: bytes, msg_len: int, assoc_len: int) -> Any:
        # pycryptodome's type hints omit msg_len, which its CCM mode documents and takes.
        return AES.new(  # type: ignore[call-overload]
            self._key,
            AES.MODE_CCM,
            nonce=iv,
            mac_len=self._authsize,
            msg_len=msg_len,
            assoc_len=assoc_len,
        )


class ChaChaPoly(_Aead):
    """``rfc7539(chacha20,poly1305)``: 12-byte nonce, 16-byte tag."""

    name = "rfc7539(chacha20,poly1305)"

    def setkey(self, key: bytes, /) -> None:
        if len(key) != 32:
            raise InvalidKey(f"{self.name} takes a 32-byte key, not {len(key)} bytes")
        self._key = key

    def _cipher(self, iv: bytes, msg_len: int, assoc_len: int) -> Any:
        return ChaCha20_Poly1305.new(key=self._key, nonce=iv)


class XChaChaPoly(ChaChaPoly):
    """``xchacha20poly1305``: pycryptodome derives the HChaCha20 subkey itself from a
    24-byte nonce (its own HChaCha20, unlike OpenSSL's driver, which borrows the generic)."""

    name = "xchacha20poly1305"


def _pycryptodome(name: str, driver: str, create: Callable[[], object]) -> Algorithm:
    return record(name, driver, create, provider="pycryptodome", priority=PRIORITY_PURE)


ALGORITHMS = (
    _pycryptodome("gcm(aes)", "gcm-aes-pycryptodome", AesGcm),
    _pycryptodome("ccm(aes)", "ccm-aes-pycryptodome", AesCcm),
    _pycryptodome(
        "rfc7539(chacha20,poly1305)", "rfc7539-chacha20-poly1305-pycryptodome", ChaChaPoly
    ),
    _pycryptodome("xchacha20poly1305", "xchacha20poly1305-pycryptodome", XChaChaPoly),
)
