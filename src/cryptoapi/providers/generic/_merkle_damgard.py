"""The Merkle-Damgård strengthening shared by MD5 (RFC 1321 §3.1-3.2) and SHA-1/SHA-2
(FIPS 180-4 §5.1): a ``1`` bit, zeros, then the message length in bits as an 8- or 16-byte
big- or little-endian integer, on top of :class:`BlockHash`'s buffering. The chaining
state is a tuple of words.
"""

from typing import ClassVar, Literal

from cryptoapi.providers.generic._block_hash import BlockHash

State = tuple[int, ...]


class MerkleDamgardHash(BlockHash):
    """Merkle-Damgård padding: ``0x80``, zeros, then the bit length (mod 2**(8*bytes))."""

    __slots__ = ()

    _length_bytes: ClassVar[int] = 8  # 16 for SHA-384/512
    _length_order: ClassVar[Literal["big", "little"]] = "big"  # little for MD5

    def _padding(self, buffered: int, length: int) -> bytes:
        zeros = (-(buffered + 1 + self._length_bytes)) % self.block_size
        bits = (length * 8) % (1 << (8 * self._length_bytes))
        return b"\x80" + bytes(zeros) + bits.to_bytes(self._length_bytes, self._length_order)
