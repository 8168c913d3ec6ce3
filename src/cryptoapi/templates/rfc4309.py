"""The ``rfc4309`` template: AES-CCM for IPsec ESP, RFC 4309, over a ``ccm`` AEAD:
``rfc4309(ccm(aes))``.

Key: the AES key followed by a 3-byte salt (§7.1: 19, 27 or 35 bytes of keying material).
IV: the 8 bytes carried in each packet (§3.1). Nonce: salt || IV, 11 bytes (§4), so CCM's
length field has 4 bytes. Tags: 8, 12 or 16 bytes (§3).

Associated data follows the convention of ``rfc4106``: ``assoc`` is the AAD of §5, SPI ||
sequence number (8 bytes) or SPI || extended sequence number (12 bytes), without the IV,
which is passed on its own (the kernel's assoc carries the IV too and drops it). Other
lengths are refused with InvalidArgument by the aead transform, as for ``rfc4106``.
"""

from cryptoapi.alg import Algorithm, InnerLookup, Template
from cryptoapi.templates.rfc4106 import salted

SALT_SIZE = 3


def create(lookup: InnerLookup, args: tuple[str, ...]) -> Algorithm:
    """Build ``rfc4309(C)`` from the best (or the named) CCM AEAD C."""
    return salted("rfc4309", "ccm", lookup, args, saltsize=SALT_SIZE)


TEMPLATE = Template("rfc4309", create)
