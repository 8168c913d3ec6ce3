"""The ``rfc7539`` template: AEAD_CHACHA20_POLY1305, RFC 8439 §2.8 (which obsoletes RFC 7539,
whose name the kernel's template keeps), from a ``chacha20`` skcipher and a ``poly1305``
shash: ``rfc7539(chacha20,poly1305)``. Key 32 bytes, nonce (IV) 12 bytes, tag 16 bytes.

The construction itself lives in :mod:`cryptoapi.transforms.chachapoly`; this
template feeds it through the inner algorithms' cores: the chacha20 skcipher with the
kernel's 16-byte IV (32-bit little-endian block counter || 96-bit nonce), and the keyed
poly1305 shash, keyed afresh with each message's one-time key. ``rfc7539esp`` reuses the
core with a salt taken from the key.
"""

import struct

from cryptoapi.alg import Algorithm, AlgType, Buffer, InnerLookup, Template, instance
from cryptoapi.errors import InvalidArgument, InvalidKey
from cryptoapi.transforms.chachapoly import (
    TAG_SIZE,
    KeystreamXor,
    chachapoly_decrypt,
    chachapoly_encrypt,
)
from cryptoapi.transforms.cores import HashState, ShashCore
from cryptoapi.transforms.skcipher import SkcipherCore

KEY_SIZE = 32
NONCE_SIZE = 12
CHACHA_IV_SIZE = 16  # the kernel's chacha20 IV: LE32 counter || nonce


class ChaChaPoly:
    """The AEAD core over a chacha20 and a poly1305 core. The key is the 32-byte ChaCha20
    key followed by ``saltsize`` bytes of salt; the 96-bit nonce is salt || IV."""

    __slots__ = ("_chacha", "_name", "_poly", "_salt", "_saltsize")

    def __init__(self, chacha: SkcipherCore, poly: ShashCore, name: str, saltsize: int = 0) -> None:
        self._chacha = chacha
        self._poly = poly
        self._name = name
        self._saltsize = saltsize
        self._salt = b""

    def setkey(self, key: bytes, /) -> None:
        if len(key) != KEY_SIZE + self._saltsize:
            raise InvalidKey(
                f"{self._name} key must be {KEY_SIZE + self._saltsize} bytes, got {len(key)}"
            )
        self._chacha.setkey(key[:KEY_SIZE])
        self._salt = key[KEY_SIZE:]

    def setauthsize(self, authsize: int, /) -> None:
        if authsize != TAG_SIZE:
            raise InvalidArgument(f"{self._name} has a 16-byte tag only, not {authsize}")

    def _keystream(self, iv: bytes) -> KeystreamXor:
        nonce = self._salt + iv
        encrypt = self._chacha.encrypt

        def keystream_xor(counter: int, data: Buffer) -> bytes:
            return encrypt(struct.pack("<I", counter) + nonce, data)

        return keystream_xor

    def _new_mac(self, one_time_key: bytes) -> HashState:
        self._poly.setkey(one_time_key)
        return self._poly.init()

    def encrypt(self, iv: bytes, plaintext: Buffer, assoc: Buffer, /) -> bytes:
        return chachapoly_encrypt(self._keystream(iv), self._new_mac, plaintext, assoc)

    def decrypt(self, iv: bytes, data: Buffer, assoc: Buffer, /) -> bytes:
        return chachapoly_decrypt(self._keystream(iv), self._new_mac, data, assoc, self._name)


def chacha_and_poly(
    template: str, lookup: InnerLookup, args: tuple[str, ...]
) -> tuple[Algorithm, Algorithm]:
    """The inner ``chacha20`` skcipher and ``poly1305`` shash of ``template(C,P)``."""
    if len(args) != 2:
        raise InvalidArgument(f"{template} takes a chacha20 and a poly1305, got {len(args)}")
    chacha = lookup(args[0], AlgType.SKCIPHER)
    poly = lookup(args[1], AlgType.SHASH)
    if chacha.name != "chacha20" or chacha.ivsize != CHACHA_IV_SIZE:
        raise InvalidArgument(f"{template} needs chacha20 with a 16-byte IV, not {chacha.driver}")
    if poly.name != "poly1305" or poly.digestsize != TAG_SIZE:
        raise InvalidArgument(f"{template} needs poly1305, not {poly.driver}")
    return chacha, poly


def create(lookup: InnerLookup, args: tuple[str, ...]) -> Algorithm:
    """Build ``rfc7539(chacha20,poly1305)`` from the best (or the named) implementations."""
    chacha, poly = chacha_and_poly("rfc7539", lookup, args)
    name = f"rfc7539({chacha.name},{poly.name})"
    return instance(
        "rfc7539",
        (chacha, poly),
        type=AlgType.AEAD,
        create=lambda: ChaChaPoly(chacha.create(), poly.create(), name),
        ivsize=NONCE_SIZE,
        min_keysize=KEY_SIZE,
        max_keysize=KEY_SIZE,
        maxauthsize=TAG_SIZE,
        authsizes=(TAG_SIZE,),
    )


TEMPLATE = Template("rfc7539", create)
