"""A running hash over a library state whose ``update`` takes only ``bytes`` (PyNaCl's
BLAKE2b, wolfCrypt's hashes): every input is viewed as its bytes first, as hashlib's states
take any buffer, and a ``str`` (which has no buffer) raises TypeError."""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: importing typing costs more than hashlib; mypy sets it true

if TYPE_CHECKING:
    from typing import Protocol, Self

    from cryptoapi.alg import Buffer

    class BytesHash(Protocol):
        """What the wrapped library state has."""

        def update(self, data: bytes, /) -> None: ...
        def digest(self) -> bytes: ...
        def copy(self) -> BytesHash: ...


class BytesOnlyState:
    """The hashlib-like state (``update``, ``digest``, ``copy``) over ``native``."""

    __slots__ = ("_native",)

    def __init__(self, native: BytesHash) -> None:
        self._native = native

    def update(self, data: Buffer, /) -> None:
        self._native.update(bytes(memoryview(data).cast("B")))  # a str: TypeError

    def digest(self) -> bytes:
        return self._native.digest()

    def copy(self) -> Self:
        return type(self)(self._native.copy())
