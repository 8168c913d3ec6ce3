"""The ``cbc`` template: the Cipher Block Chaining mode, SP 800-38A §6.2.

    C_1 = CIPH_K(P_1 ^ IV)        C_j = CIPH_K(P_j ^ C_(j-1))
    P_1 = CIPH^-1_K(C_1) ^ IV     P_j = CIPH^-1_K(C_j) ^ C_(j-1)

Encryption is a chain, one block after the other. Decryption is not: every block is
deciphered in one batch and the result XORed with IV || C_1 ... C_(n-1) at once. CBC takes
whole blocks and an IV of one block.
"""

from cryptoapi.alg import Algorithm, AlgType, Buffer, InnerLookup, Template, instance
from cryptoapi.templates._modes import CipherMode, byte_view, inner_of, xor


class Cbc(CipherMode):
    """CBC over a block cipher core."""

    __slots__ = ()

    def encrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        view = byte_view(data)
        size = self._blocksize
        encrypt_block = self._cipher.encrypt_block
        chain = iv
        out = []
        for start in range(0, len(view), size):
            chain = encrypt_block(xor(view[start : start + size], chain))
            out.append(chain)
        return b"".join(out)

    def decrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        view = byte_view(data)
        if not view:
            return b""
        return xor(self._cipher.decrypt_blocks(view), iv + view[: -self._blocksize])


def create(lookup: InnerLookup, args: tuple[str, ...]) -> Algorithm:
    """Build ``cbc(C)`` from the best (or the named) block cipher C."""
    inner = inner_of("cbc", lookup, args, AlgType.CIPHER)
    return instance(
        "cbc",
        (inner,),
        type=AlgType.SKCIPHER,
        create=lambda: Cbc(inner.create(), inner.blocksize),
        blocksize=inner.blocksize,
        ivsize=inner.blocksize,
        min_keysize=inner.min_keysize,
        max_keysize=inner.max_keysize,
    )


TEMPLATE = Template("cbc", create)
