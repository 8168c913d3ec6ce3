"""The buffering every block-oriented hash and MAC shares: whole blocks go straight from
the caller's buffer to the block function, the partial tail is kept for the next update.

A subclass supplies its block function (``_compress``), how the message ends
(``_padding``) and the output encoding (``_output``); its chaining state is immutable (a
tuple or an int), so ``digest()`` finishes a throw-away result without touching ``self``
and ``copy()`` can share it. MD5, SHA-1/2 and SHA-3 derive from it (FIPS 180-4 §5.1, FIPS
202 §5.1), and so do GHASH and Poly1305.
"""

from collections.abc import Callable
from typing import Any, ClassVar, Self

from cryptoapi.alg import Buffer


class BlockHash:
    """A hashlib-like hash over fixed-size blocks; subclasses fill in the algorithm."""

    __slots__ = ("_buffer", "_length", "_state")

    name: ClassVar[str]
    digest_size: ClassVar[int]
    block_size: ClassVar[int]
    _initial_state: ClassVar[Any]

    def __init__(self, data: Buffer = b"") -> None:
        self._state = self._initial_state
        self._buffer = b""  # the partial block, always shorter than block_size
        self._length = 0  # bytes hashed so far
        self.update(data)  # even when empty, so that "" is rejected like any str

    def _compress(self, state: Any, data: Buffer, start: int, end: int) -> Any:
        """Process the whole blocks ``data[start:end]``; return the new chaining state."""
        raise NotImplementedError

    def _padding(self, buffered: int, length: int) -> bytes:
        """The bytes that complete the last ``buffered`` bytes of a ``length``-byte message."""
        raise NotImplementedError

    def _output(self, state: Any) -> bytes:
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
        """An independent hash with the same state: every field (a subclass's key tables
        too) is immutable, so the copy shares them."""
        other = object.__new__(type(self))
        for cls in type(self).__mro__:
            for slot in getattr(cls, "__slots__", ()):
                setattr(other, slot, getattr(self, slot))
        return other


class KeyedStateCore:
    """The shash core of a hash keyed by its construction (GHASH, POLYVAL: ``state(key)``
    builds the key's tables): the empty state is made once by ``setkey``, and every message
    starts from a copy of it."""

    __slots__ = ("_empty", "_state")

    def __init__(self, state: Callable[[bytes], BlockHash]) -> None:
        self._state = state

    def setkey(self, key: bytes, /) -> None:
        self._empty = self._state(key)  # the state's InvalidKey for a wrong key

    def init(self) -> BlockHash:
        return self._empty.copy()

    def digest(self, data: Buffer, /) -> bytes:
        state = self._empty.copy()
        state.update(data)
        return state.digest()
