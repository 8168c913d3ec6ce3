"""The ``rfc3686`` template: AES-CTR for IPsec ESP, RFC 3686.

The key is the cipher key followed by a 4-byte nonce (§5.1), the IV is 8 bytes carried in
each packet (§3), and the counter block is (§4)

    nonce (4 bytes) || IV (8 bytes) || block counter (4 bytes, big-endian, starting at 1)

which the inner ``ctr(...)`` skcipher takes as its IV. A packet holds at most 2^32 - 1
blocks (§4: the counter starts at one and must not wrap).
"""

from cryptoapi.alg import Algorithm, AlgType, Buffer, InnerLookup, Template, instance
from cryptoapi.errors import InvalidArgument
from cryptoapi.templates._modes import inner_of, require
from cryptoapi.transforms.skcipher import SkcipherCore

NONCE_SIZE = 4
IV_SIZE = 8
BLOCK = 16
FIRST_COUNTER = (1).to_bytes(4, "big")
MAX_DATA = BLOCK * (2**32 - 1)


class Rfc3686:
    """RFC 3686 over a CTR core with a 16-byte counter block."""

    __slots__ = ("_ctr", "_nonce")

    def __init__(self, ctr: SkcipherCore) -> None:
        self._ctr = ctr
        self._nonce = b""

    def setkey(self, key: bytes, /) -> None:
        self._ctr.setkey(key[:-NONCE_SIZE])
        self._nonce = key[-NONCE_SIZE:]

    def _counter_block(self, iv: bytes, data: Buffer) -> bytes:
        if len(data) > MAX_DATA:
            raise InvalidArgument("rfc3686: a packet holds at most 2^32 - 1 blocks (§4)")
        return self._nonce + iv + FIRST_COUNTER

    def encrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        return self._ctr.encrypt(self._counter_block(iv, data), data)

    def decrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        return self._ctr.decrypt(self._counter_block(iv, data), data)


def create(lookup: InnerLookup, args: tuple[str, ...]) -> Algorithm:
    """Build ``rfc3686(ctr(C))`` from the best (or the named) CTR implementation."""
    inner = inner_of("rfc3686", lookup, args, AlgType.SKCIPHER)
    require(inner.name.startswith("ctr("), "rfc3686", inner, "a ctr(...) skcipher")
    require(inner.ivsize == BLOCK, "rfc3686", inner, "a 16-byte counter block")
    return instance(
        "rfc3686",
        (inner,),
        type=AlgType.SKCIPHER,
        create=lambda: Rfc3686(inner.create()),
        blocksize=1,
        ivsize=IV_SIZE,
        min_keysize=inner.min_keysize + NONCE_SIZE,
        max_keysize=inner.max_keysize + NONCE_SIZE,
    )


TEMPLATE = Template("rfc3686", create)
