"""The ``xctr`` template: XCTR, the counter mode of HCTR2 (Crowley, Huckleberry, Biggers,
"Length-preserving encryption with HCTR2", 2021, §3; the kernel's ``crypto/xctr.c``).

    O_i = CIPH_K(IV ^ bin(i))        C_i = P_i ^ O_i        i = 1, 2, ...

where bin(i) is the block counter written little-endian over a whole block: XCTR XORs the
counter into the IV where CTR (SP 800-38A) adds it, so no carry ever runs and the mode is as
easy for little-endian hardware as CTR is for big-endian. The last block may be partial:
only as much of O_n as there is data is used, so XCTR takes messages of any length.

The kernel counts with 32 bits (its messages stay below 2^32 blocks); XORing the full
little-endian counter gives the same keystream for every message it accepts. All counter
blocks of a message are enciphered in one batch. HCTR2 runs :func:`xctr_keystream` with its
own IV S.
"""

from cryptoapi.alg import Algorithm, AlgType, Buffer, InnerLookup, Template, instance
from cryptoapi.templates._modes import CipherMode, byte_view, inner_of, require, xor
from cryptoapi.transforms.cipher import CipherCore

BLOCK = 16


def xctr_keystream(cipher: CipherCore, iv: bytes, length: int) -> bytes:
    """O_1 || O_2 ... cut to ``length`` bytes: CIPH_K(IV ^ bin(i)) for i from 1."""
    first = int.from_bytes(iv, "little")
    counters = b"".join(
        (first ^ i).to_bytes(BLOCK, "little") for i in range(1, -(-length // BLOCK) + 1)
    )
    return cipher.encrypt_blocks(counters)[:length]


class Xctr(CipherMode):
    """XCTR over a 16-byte block cipher core; encryption and decryption are the same XOR."""

    __slots__ = ()

    def encrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        view = byte_view(data)
        return xor(view, xctr_keystream(self._cipher, iv, len(view)))

    decrypt = encrypt


def create(lookup: InnerLookup, args: tuple[str, ...]) -> Algorithm:
    """Build ``xctr(C)`` from the best (or the named) 16-byte block cipher C."""
    inner = inner_of("xctr", lookup, args, AlgType.CIPHER)
    require(inner.blocksize == BLOCK, "xctr", inner, "a 16-byte block cipher")
    return instance(
        "xctr",
        (inner,),
        type=AlgType.SKCIPHER,
        create=lambda: Xctr(inner.create(), BLOCK),
        blocksize=1,
        ivsize=BLOCK,
        min_keysize=inner.min_keysize,
        max_keysize=inner.max_keysize,
    )


TEMPLATE = Template("xctr", create)
