"""The ``ctr`` template: the Counter mode, SP 800-38A §6.5, with the counter of §B.1.

    O_j = CIPH_K(T_j)        C_j = P_j ^ O_j        (and the same XOR to decrypt)

The IV is the first counter block T_1; each next block adds one to the whole block as a
big-endian integer, modulo 2^(8 * blocksize), as the kernel's ctr template does (§B.1's
standard incrementing function with m = b). The last block may be partial: only as much
of O_n as there is data is used, so CTR takes messages of any length.

All counter blocks of a message are enciphered in one batch.
"""

from cryptoapi.alg import Algorithm, AlgType, Buffer, InnerLookup, Template, instance
from cryptoapi.templates._modes import CipherMode, byte_view, inner_of, require, xor

MIN_COUNTER_BLOCK = 4  # as the kernel: at least a 32-bit counter


class Ctr(CipherMode):
    """CTR over a block cipher core; encryption and decryption are the same XOR."""

    __slots__ = ()

    def encrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        view = byte_view(data)
        size = self._blocksize
        first = int.from_bytes(iv, "big")
        modulus = 1 << (8 * size)
        counters = b"".join(
            ((first + j) % modulus).to_bytes(size, "big") for j in range(-(-len(view) // size))
        )
        keystream = self._cipher.encrypt_blocks(counters)
        return xor(view, keystream[: len(view)])

    decrypt = encrypt


def create(lookup: InnerLookup, args: tuple[str, ...]) -> Algorithm:
    """Build ``ctr(C)`` from the best (or the named) block cipher C."""
    inner = inner_of("ctr", lookup, args, AlgType.CIPHER)
    require(inner.blocksize >= MIN_COUNTER_BLOCK, "ctr", inner, "a block of 4 bytes or more")
    return instance(
        "ctr",
        (inner,),
        type=AlgType.SKCIPHER,
        create=lambda: Ctr(inner.create(), inner.blocksize),
        blocksize=1,
        ivsize=inner.blocksize,
        min_keysize=inner.min_keysize,
        max_keysize=inner.max_keysize,
    )


TEMPLATE = Template("ctr", create)
