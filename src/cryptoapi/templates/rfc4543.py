"""The ``rfc4543`` template: AES-GMAC for IPsec ESP, RFC 4543 (ENCR_NULL_AUTH_AES_GMAC), over
a ``gcm`` AEAD: ``rfc4543(gcm(aes))``. Authentication without confidentiality.

Key: the AES key followed by a 4-byte salt; IV: 8 bytes per packet; nonce: salt || IV;
tag: 16 bytes (§3). The payload is not encrypted: GMAC is GCM with an empty plaintext, and
everything is AAD (§3): SPI, sequence number, IV and the payload.

Our convention (as for ``rfc4106``): ``assoc`` is SPI || sequence number (8 bytes) or SPI ||
extended sequence number (12 bytes), the IV is passed on its own, and

    encrypt(iv, payload, assoc) = payload || GMAC(nonce, AAD = assoc || iv || payload)

so the IV is authenticated, as RFC 4543 requires and as the kernel's rfc4543 does (its assoc
carries SPI || seq || IV). ``decrypt`` verifies the tag before it returns the payload.
Other assoc lengths are refused with InvalidArgument by the aead transform, as for
``rfc4106``.
"""

from cryptoapi.alg import Algorithm, Buffer, InnerLookup, Template
from cryptoapi.templates.rfc4106 import SaltedNonce, salted

SALT_SIZE = 4
TAG_SIZE = 16


class Gmac(SaltedNonce):
    """GMAC over the inner GCM core: the payload passes in clear and in the AAD."""

    __slots__ = ()

    def encrypt(self, iv: bytes, plaintext: Buffer, assoc: Buffer, /) -> bytes:
        payload = bytes(plaintext)
        tag = self._inner.encrypt(self._salt + iv, b"", b"".join((assoc, iv, payload)))
        return payload + tag

    def decrypt(self, iv: bytes, data: Buffer, assoc: Buffer, /) -> bytes:
        data = bytes(data)
        payload, tag = data[:-TAG_SIZE], data[-TAG_SIZE:]
        self._inner.decrypt(self._salt + iv, tag, b"".join((assoc, iv, payload)))  # or BadMessage
        return payload


def create(lookup: InnerLookup, args: tuple[str, ...]) -> Algorithm:
    """Build ``rfc4543(G)`` from the best (or the named) GCM AEAD G."""
    return salted(
        "rfc4543", "gcm", lookup, args, saltsize=SALT_SIZE, core=Gmac, authsizes=(TAG_SIZE,)
    )


TEMPLATE = Template("rfc4543", create)
