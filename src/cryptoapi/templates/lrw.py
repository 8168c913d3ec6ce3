"""The ``lrw`` template: LRW, the tweakable narrow-block mode of Liskov, Rivest and Wagner,
as IEEE P1619 drafted it (C. Guyot, "LRW-AES", IEEE P1619 pdf00017) and the kernel's
``crypto/lrw.c`` offers it: ``lrw(aes)``.

The key is K1 || K2: a cipher key and a 16-byte tweak key. The IV is the 16-byte index I of
the first block, a big-endian integer; block j of the message has index I + j (mod 2^128):

    T_j = K2 (x) (I + j)        C_j = CIPH_K1(P_j ^ T_j) ^ T_j

where (x) multiplies in GF(2^128) modulo x^128 + x^7 + x^2 + x + 1, a block read as a
big-endian integer whose bit i is the coefficient of x^i (the kernel's ``gf128mul_bbe``).

The masks follow from one another without a full multiplication each: I + j + 1 differs
from I + j in its trailing one bits and the zero above them, so T_(j+1) = T_j ^ K2 (x)
(2^(t+1) - 1), t the number of trailing ones of I + j: a table of 128 products made at
``setkey``, as the kernel's ``mulinc`` table is. Messages are whole blocks; all masks of a
message are computed first and its blocks processed in one batch.
"""

from collections.abc import Callable

from cryptoapi.alg import Algorithm, AlgType, Buffer, InnerLookup, Template, instance
from cryptoapi.errors import InvalidKey
from cryptoapi.templates._modes import CipherMode, byte_view, inner_of, require, xor
from cryptoapi.transforms.cipher import CipherCore

BLOCK = 16
TOP = 1 << 128
REDUCE = TOP | 0x87  # x^128 = x^7 + x^2 + x + 1
WRAP = TOP - 1


def gf128_mul(a: int, b: int) -> int:
    """a (x) b in GF(2^128), both big-endian block integers (shift and add)."""
    product = 0
    while b:
        if b & 1:
            product ^= a
        b >>= 1
        a <<= 1
        if a & TOP:
            a ^= REDUCE
    return product


def _trailing_ones(value: int) -> int:
    return ((value ^ (value + 1)) & WRAP).bit_length() - 1


class Lrw(CipherMode):
    """LRW over a 16-byte block cipher core keyed with K1, and the tweak key K2."""

    __slots__ = ("_k2", "_steps")

    def __init__(self, cipher: CipherCore) -> None:
        super().__init__(cipher, BLOCK)

    def setkey(self, key: bytes, /) -> None:
        if len(key) <= BLOCK:
            raise InvalidKey(
                f"lrw: the key is a cipher key and a 16-byte tweak key, not {len(key)} bytes"
            )
        self._cipher.setkey(key[:-BLOCK])
        k2 = int.from_bytes(key[-BLOCK:], "big")
        self._k2 = k2
        # K2 (x) (2^(t+1) - 1): what T changes by when t trailing ones carry into the index.
        self._steps = tuple(gf128_mul(k2, (2 << t) - 1) for t in range(8 * BLOCK))

    def _masks(self, iv: bytes, count: int) -> bytes:
        """T_0 ... T_(count-1) for the first index I = ``iv``."""
        index = int.from_bytes(iv, "big")
        mask = gf128_mul(self._k2, index)
        masks = []
        for _ in range(count):
            masks.append(mask.to_bytes(BLOCK, "big"))
            mask ^= self._steps[_trailing_ones(index)]
            index = (index + 1) & WRAP
        return b"".join(masks)

    def _crypt(self, iv: bytes, data: Buffer, process: Callable[[Buffer], bytes]) -> bytes:
        view = byte_view(data)
        masks = self._masks(iv, len(view) // BLOCK)
        return xor(process(xor(view, masks)), masks)

    def encrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        return self._crypt(iv, data, self._cipher.encrypt_blocks)

    def decrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        return self._crypt(iv, data, self._cipher.decrypt_blocks)


def create(lookup: InnerLookup, args: tuple[str, ...]) -> Algorithm:
    """Build ``lrw(C)`` from the best (or the named) 16-byte block cipher C."""
    inner = inner_of("lrw", lookup, args, AlgType.CIPHER)
    require(inner.blocksize == BLOCK, "lrw", inner, "a 16-byte block cipher")
    return instance(
        "lrw",
        (inner,),
        type=AlgType.SKCIPHER,
        create=lambda: Lrw(inner.create()),
        blocksize=BLOCK,
        ivsize=BLOCK,
        min_keysize=inner.min_keysize + BLOCK,
        max_keysize=inner.max_keysize + BLOCK,
    )


TEMPLATE = Template("lrw", create)
