"""The ``ecb`` template: the Electronic Codebook mode, SP 800-38A §6.1.

    C_j = CIPH_K(P_j)        P_j = CIPH^-1_K(C_j)        for j = 1 ... n

Each block is enciphered on its own, so the whole message goes to the cipher as one batch.
ECB takes whole blocks and no IV.
"""

from cryptoapi.alg import Algorithm, AlgType, Buffer, InnerLookup, Template, instance
from cryptoapi.templates._modes import CipherMode, inner_of


class Ecb(CipherMode):
    """ECB over a block cipher core."""

    __slots__ = ()

    def encrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        return self._cipher.encrypt_blocks(data)

    def decrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        return self._cipher.decrypt_blocks(data)


def create(lookup: InnerLookup, args: tuple[str, ...]) -> Algorithm:
    """Build ``ecb(C)`` from the best (or the named) block cipher C."""
    inner = inner_of("ecb", lookup, args, AlgType.CIPHER)
    return instance(
        "ecb",
        (inner,),
        type=AlgType.SKCIPHER,
        create=lambda: Ecb(inner.create(), inner.blocksize),
        blocksize=inner.blocksize,
        min_keysize=inner.min_keysize,
        max_keysize=inner.max_keysize,
    )


TEMPLATE = Template("ecb", create)
