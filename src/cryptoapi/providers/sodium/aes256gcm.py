"""libsodium's AES-256-GCM (SP 800-38D; ``crypto_aead_aes256gcm``) through PyNaCl, priority
200, as a partial ``gcm(aes)``: where the CPU has AES-NI and CLMUL (ARMv8 crypto), else this
module offers nothing.

libsodium serves only 32-byte keys, 12-byte IVs and 16-byte tags; any other key, IV or tag
size raises :class:`NeedFallback`, so the transform serves it from the next ``gcm(aes)``
(and ``rfc4106``/``rfc4543`` instances over this driver do the same). Its self-test runs the
vectors it can serve (AES-256: GCM test case 16, draft-mcgrew-gcm-test-01's AES-256 ESP
cases) and skips the others. A forged message raises :class:`BadMessage` and releases no
plaintext.
"""

from nacl import bindings
from nacl._sodium import lib  # PyNaCl's cffi module: bindings export no availability check
from nacl.exceptions import CryptoError as SodiumError

from cryptoapi.alg import PRIORITY_PURE, Buffer
from cryptoapi.providers.records import record
from cryptoapi.transforms.aead import forged
from cryptoapi.transforms.base import NeedFallback

KEY_SIZE = 32
IV_SIZE = 12
TAG_SIZE = 16


class SodiumAesGcm:
    """``gcm(aes)`` for AES-256, 96-bit IVs and full tags; NeedFallback for the rest."""

    def __init__(self) -> None:
        self._authsize = TAG_SIZE

    def setkey(self, key: bytes, /) -> None:
        if len(key) != KEY_SIZE:
            raise NeedFallback(f"gcm-aes-sodium: libsodium has AES-256 only, not {len(key)} bytes")
        self._key = bytes(key)

    def setauthsize(self, authsize: int, /) -> None:
        self._authsize = authsize

    def encrypt(self, iv: bytes, plaintext: Buffer, assoc: Buffer, /) -> bytes:
        self._check(iv)
        sealed: bytes = bindings.crypto_aead_aes256gcm_encrypt(
            bytes(plaintext), bytes(assoc), iv, self._key
        )
        return sealed

    def decrypt(self, iv: bytes, data: Buffer, assoc: Buffer, /) -> bytes:
        self._check(iv)
        try:
            opened: bytes = bindings.crypto_aead_aes256gcm_decrypt(
                bytes(data), bytes(assoc), iv, self._key
            )
        except SodiumError:
            raise forged("gcm(aes)") from None
        return opened

    def _check(self, iv: bytes) -> None:
        if len(iv) != IV_SIZE or self._authsize != TAG_SIZE:
            raise NeedFallback(
                f"gcm-aes-sodium: libsodium takes 12-byte IVs and 16-byte tags, not a "
                f"{len(iv)}-byte IV with {self._authsize}-byte tags"
            )


ALGORITHMS = (
    (record("gcm(aes)", "gcm-aes-sodium", SodiumAesGcm, provider="sodium", priority=PRIORITY_PURE),)
    if lib.crypto_aead_aes256gcm_is_available() == 1
    else ()
)
