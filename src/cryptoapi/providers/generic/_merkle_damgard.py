"""Shared skeleton of the block hashes: buffering, padding, finalisation, copy.

:class:`BlockHash` cuts the input into ``block_size`` blocks and keeps the partial tail, so
an algorithm only supplies its initial state, its block function and its output encoding.
:class:`MerkleDamgardHash` adds the Merkle-Damgård strengthening shared by MD5 (RFC 1321
§3.1-3.2) and SHA-1/SHA-2 (FIPS 180-4 §5.1): a ``1`` bit, zeros, then the message length
in bits as an 8- or 16-byte big- or little-endian integer. The SHA-3 sponge reuses
:class:`BlockHash` with its own pad10*1 (FIPS 202 §5.1).

The chaining state is an immutable tuple of ints: ``digest()`` finishes a throw-away result
without touching ``self``, and ``copy()`` can share it.
"""

from typing import ClassVar, Literal, Self

from cryptoapi.alg import Buffer

State = tuple[int, ...]


class BlockHash:
    """A hashlib-like hash over fixed-size blocks; subclasses fill in the algorithm."""

    __slots__ = ("_buffer", "_length", "_state")

    name: ClassVar[str]
    digest_size: ClassVar[int]
    block_size: ClassVar[int]
    _initial_state: ClassVar[State]

    def __init__(self, data: Buffer = b"") -> None:
        self._state = self._initial_state
        self._buffer = b""  # the partial block, always shorter than block_size
        self._length = 0  # bytes hashed so far
        self.update(data)  # even when empty, so that "" is rejected like any str

    def _compress(self, state: State, data: Buffer, start: int, end: int) -> State:
        """Process the whole blocks ``data[start:end]``; return the new chaining state."""
        raise NotImplementedError

    def _padding(self, buffered: int, length: int) -> bytes:
        """The bytes that complete the last ``buffered`` bytes of a ``length``-byte message."""
        raise NotImplementedError

    def _output(self, state: State) -> bytes:
        """The digest encoded from the final state."""
        raise NotImplementedError

    def update(self, data: Buffer, /) -> None:
        """Absorb more message: whole blocks go straight from ``data``, the tail is kept."""
        view = memoryview(data)  # rejects str with TypeError, as hashlib does
        if view.format != "B" or view.ndim != 1:
            view = view.cast("B")
        size = len(view)
        self._length += size
        block_size = self.block_size
        start = 0
        if self._buffer:
            start = block_size - len(self._buffer)
            if size < start:
                self._buffer += view
                return
            block = self._buffer + view[:start]
            self._state = self._compress(self._state, block, 0, block_size)
        end = size - (size - start) % block_size
        if end > start:
            self._state = self._compress(self._state, view, start, end)
        self._buffer = bytes(view[end:])

    def digest(self) -> bytes:
        """The digest of everything so far; the state stays open for more updates."""
        tail = self._buffer + self._padding(len(self._buffer), self._length)
        return self._output(self._compress(self._state, tail, 0, len(tail)))

    def hexdigest(self) -> str:
        return self.digest().hex()

    def copy(self) -> Self:
        """An independent hash with the same state (the state and buffer are immutable)."""
        other = object.__new__(type(self))
        other._state = self._state
        other._buffer = self._buffer
        other._length = self._length
        return other


class MerkleDamgardHash(BlockHash):
    """Merkle-Damgård padding: ``0x80``, zeros, then the bit length (mod 2**(8*bytes))."""

    __slots__ = ()

    _length_bytes: ClassVar[int] = 8  # 16 for SHA-384/512
    _length_order: ClassVar[Literal["big", "little"]] = "big"  # little for MD5

    def _padding(self, buffered: int, length: int) -> bytes:
        zeros = (-(buffered + 1 + self._length_bytes)) % self.block_size
        bits = (length * 8) % (1 << (8 * self._length_bytes))
        return b"\x80" + bytes(zeros) + bits.to_bytes(self._length_bytes, self._length_order)
