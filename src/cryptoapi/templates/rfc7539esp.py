"""The ``rfc7539esp`` template: ChaCha20-Poly1305 for IPsec ESP, RFC 7634 §2.

The key is the 32-byte ChaCha20 key followed by a 4-byte salt (36 bytes of keying
material); the 8-byte IV travels in each packet; the 96-bit nonce is salt || IV; the tag is
16 bytes. Everything else is RFC 8439 §2.8, through the ``rfc7539`` core.

Associated data: ``assoc`` is the ESP AAD of RFC 7634 §2.1, SPI || sequence number (8 bytes)
or SPI || 64-bit extended sequence number (12 bytes); the IV is passed on its own and is
not part of it. (The kernel passes SPI || seq || IV as its assoc and skips the IV; the
bytes authenticated are the same.) Other lengths, which RFC 7634 §2.1 does not define, are
refused with InvalidArgument by the aead transform, for every implementation of the name.
"""

from cryptoapi.alg import Algorithm, AlgType, InnerLookup, Template, instance
from cryptoapi.templates.rfc7539 import KEY_SIZE, ChaChaPoly, chacha_and_poly
from cryptoapi.transforms.chachapoly import TAG_SIZE

SALT_SIZE = 4
IV_SIZE = 8


def create(lookup: InnerLookup, args: tuple[str, ...]) -> Algorithm:
    """Build ``rfc7539esp(chacha20,poly1305)`` from the best (or the named) implementations."""
    chacha, poly = chacha_and_poly("rfc7539esp", lookup, args)
    name = f"rfc7539esp({chacha.name},{poly.name})"
    return instance(
        "rfc7539esp",
        (chacha, poly),
        type=AlgType.AEAD,
        create=lambda: ChaChaPoly(chacha.create(), poly.create(), name, SALT_SIZE),
        ivsize=IV_SIZE,
        min_keysize=KEY_SIZE + SALT_SIZE,
        max_keysize=KEY_SIZE + SALT_SIZE,
        maxauthsize=TAG_SIZE,
        authsizes=(TAG_SIZE,),
    )


TEMPLATE = Template("rfc7539esp", create)
