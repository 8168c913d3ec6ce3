"""XChaCha20-Poly1305, draft-irtf-cfrg-xchacha-03 §2: ChaCha20-Poly1305 with a 192-bit nonce.

§2.3 (and §2 for the AEAD): the first 16 nonce bytes and the key give a subkey through
HChaCha20 (§2.2); the AEAD of RFC 8439 §2.8 then runs under that subkey with the 96-bit
nonce 0x00000000 || nonce[16:24]. Key 32 bytes, nonce 24 bytes, tag 16 bytes.
"""

from cryptoapi.alg import PRIORITY_GENERIC, Buffer
from cryptoapi.errors import InvalidArgument, InvalidKey
from cryptoapi.providers.generic.chacha20 import (
    HNONCE_SIZE,
    KEY_SIZE,
    XNONCE_SIZE,
    chacha20_xor,
    hchacha20,
)
from cryptoapi.providers.generic.poly1305 import Poly1305
from cryptoapi.providers.records import record
from cryptoapi.transforms.chachapoly import (
    TAG_SIZE,
    KeystreamXor,
    chachapoly_decrypt,
    chachapoly_encrypt,
)

NAME = "xchacha20poly1305"


class XChaCha20Poly1305:
    """The AEAD core: the subkey is derived per message, from the key and the nonce."""

    __slots__ = ("_key",)

    def setkey(self, key: bytes, /) -> None:
        if len(key) != KEY_SIZE:
            raise InvalidKey(f"{NAME} key must be 32 bytes, got {len(key)}")
        self._key = bytes(key)

    def setauthsize(self, authsize: int, /) -> None:
        if authsize != TAG_SIZE:
            raise InvalidArgument(f"{NAME} has a 16-byte tag only, not {authsize}")

    def _keystream(self, nonce24: bytes) -> KeystreamXor:
        """ChaCha20 under HChaCha20(key, nonce[:16]) with nonce 0^32 || nonce[16:24]."""
        subkey = hchacha20(self._key, nonce24[:HNONCE_SIZE])
        nonce = bytes(4) + nonce24[HNONCE_SIZE:XNONCE_SIZE]

        def keystream_xor(counter: int, data: Buffer) -> bytes:
            return chacha20_xor(subkey, counter, nonce, data)

        return keystream_xor

    def encrypt(self, iv: bytes, plaintext: Buffer, assoc: Buffer, /) -> bytes:
        return chachapoly_encrypt(self._keystream(iv), Poly1305, plaintext, assoc)

    def decrypt(self, iv: bytes, data: Buffer, assoc: Buffer, /) -> bytes:
        return chachapoly_decrypt(self._keystream(iv), Poly1305, data, assoc, NAME)


ALGORITHMS = (
    record(
        NAME, f"{NAME}-generic", XChaCha20Poly1305, provider="generic", priority=PRIORITY_GENERIC
    ),
)
