"""The ``cipher`` transform: one block at a time (the kernel's crypto_cipher), the building
block of the mode templates.

A core has ``setkey(key)``, ``encrypt_block``/``decrypt_block`` (exactly one block) and
``encrypt_blocks``/``decrypt_blocks`` (ECB over whole blocks, so modes can batch).
"""

from typing import Protocol

from cryptoapi.alg import Buffer
from cryptoapi.errors import InvalidArgument
from cryptoapi.transforms.base import check_buffer
from cryptoapi.transforms.keyed import KeyedTransform


class CipherCore(Protocol):
    def setkey(self, key: bytes, /) -> None: ...
    def encrypt_block(self, block: Buffer, /) -> bytes: ...
    def decrypt_block(self, block: Buffer, /) -> bytes: ...
    def encrypt_blocks(self, data: Buffer, /) -> bytes: ...
    def decrypt_blocks(self, data: Buffer, /) -> bytes: ...


class Cipher(KeyedTransform[CipherCore]):
    """A single-block cipher transform, as ``alloc_cipher(name)`` returns it."""

    __slots__ = ()

    def encrypt(self, block: Buffer) -> bytes:
        return self._core.encrypt_block(self._check(block))

    def decrypt(self, block: Buffer) -> bytes:
        return self._core.decrypt_block(self._check(block))

    def _check(self, block: Buffer) -> Buffer:
        block = check_buffer(block, "block")
        if len(block) != self._alg.blocksize:
            raise InvalidArgument(
                f"{self.alg_name}: a block is {self._alg.blocksize} bytes, got {len(block)}"
            )
        return block
