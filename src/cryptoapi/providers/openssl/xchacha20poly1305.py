"""OpenSSL's XChaCha20-Poly1305 through ``cryptography``, priority 200: the generic
HChaCha20 derives each message's subkey in Python, then OpenSSL seals with ChaCha20-Poly1305
(draft-irtf-cfrg-xchacha-03 §2). In a module of its own so that the other AEADs' first use
does not import the generic ChaCha20.
"""

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

from cryptoapi.alg import PRIORITY_PURE, Buffer
from cryptoapi.providers.generic.chacha20 import hchacha20
from cryptoapi.providers.openssl.aead import ChaChaPoly
from cryptoapi.providers.records import record
from cryptoapi.transforms.aead import forged


class XChaChaPoly(ChaChaPoly):
    """``xchacha20poly1305`` (§2.3): subkey from HChaCha20 over the first 16 nonce bytes,
    then ChaCha20-Poly1305 with nonce 0^4 || the last 8."""

    name = "xchacha20poly1305"

    def native(self) -> None:
        """None: each message derives its own subkey in Python first."""

    def encrypt(self, iv: bytes, plaintext: Buffer, assoc: Buffer, /) -> bytes:
        return ChaCha20Poly1305(hchacha20(self._key, iv[:16])).encrypt(
            bytes(4) + iv[16:], plaintext, assoc
        )

    def decrypt(self, iv: bytes, data: Buffer, assoc: Buffer, /) -> bytes:
        try:
            return ChaCha20Poly1305(hchacha20(self._key, iv[:16])).decrypt(
                bytes(4) + iv[16:], data, assoc
            )
        except InvalidTag:
            raise forged(self.name) from None


ALGORITHMS = (
    record(
        "xchacha20poly1305",
        "xchacha20poly1305-openssl",
        XChaChaPoly,
        provider="openssl",
        priority=PRIORITY_PURE,
    ),
)
