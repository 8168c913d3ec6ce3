"""The ``cts`` template: CBC with ciphertext stealing, as the kernel's ``cts(cbc(aes))``.

This is CBC-CS3 of the SP 800-38A Addendum (§2.3) and the CBC-CTS of RFC 3962 §5: the
message is CBC-encrypted with its short last block P_n* of d bytes padded with zeros, then
the last two ciphertext blocks are swapped and the (new) last one cut to d bytes:

    C_1 ... C_(n-2) || C_n || C_(n-1)[:d]

They are swapped even when d is a whole block; a message of exactly one block is plain
CBC. Decryption deciphers C_n alone first: D(C_n) = C_(n-1) ^ (P_n* || 0...), whose head
XOR C_(n-1)[:d] is P_n* and whose tail completes C_(n-1); the rest is one CBC decryption.
Messages are at least one block long.

The template works over a ``cbc(...)`` skcipher, as in the kernel.
"""

from cryptoapi.alg import Algorithm, AlgType, Buffer, InnerLookup, Template, instance
from cryptoapi.templates._modes import byte_view, inner_of, require, xor
from cryptoapi.transforms.skcipher import SkcipherCore


class Cts:
    """CBC-CS3 over a CBC core with ``blocksize``-byte blocks."""

    __slots__ = ("_blocksize", "_cbc")

    def __init__(self, cbc: SkcipherCore, blocksize: int) -> None:
        self._cbc = cbc
        self._blocksize = blocksize

    def setkey(self, key: bytes, /) -> None:
        self._cbc.setkey(key)

    def _split(self, size: int) -> tuple[int, int]:
        """Where the last two blocks start, and the length d of the last one."""
        blocks = -(-size // self._blocksize)
        cut = self._blocksize * (blocks - 2)
        return cut, size - cut - self._blocksize

    def encrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        view = byte_view(data)
        size = self._blocksize
        if len(view) == size:
            return self._cbc.encrypt(iv, view)
        cut, d = self._split(len(view))
        out = self._cbc.encrypt(iv, bytes(view) + bytes(size - d))
        return out[:cut] + out[cut + size :] + out[cut : cut + d]

    def decrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        view = byte_view(data)
        size = self._blocksize
        if len(view) == size:
            return self._cbc.decrypt(iv, view)
        cut, d = self._split(len(view))
        short = bytes(view[cut + size :])  # C_(n-1)[:d]
        deciphered = self._cbc.decrypt(bytes(size), view[cut : cut + size])  # D(C_n)
        last = xor(deciphered[:d], short)
        return self._cbc.decrypt(iv, bytes(view[:cut]) + short + deciphered[d:]) + last


def create(lookup: InnerLookup, args: tuple[str, ...]) -> Algorithm:
    """Build ``cts(cbc(C))`` from the best (or the named) CBC implementation."""
    inner = inner_of("cts", lookup, args, AlgType.SKCIPHER)
    require(inner.name.startswith("cbc("), "cts", inner, "a cbc(...) skcipher")
    require(inner.ivsize == inner.blocksize > 1, "cts", inner, "an IV of one block")
    return instance(
        "cts",
        (inner,),
        type=AlgType.SKCIPHER,
        create=lambda: Cts(inner.create(), inner.blocksize),
        blocksize=inner.blocksize,
        ivsize=inner.ivsize,
        min_keysize=inner.min_keysize,
        max_keysize=inner.max_keysize,
        min_datasize=inner.blocksize,
    )


TEMPLATE = Template("cts", create)
