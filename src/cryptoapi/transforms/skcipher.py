"""The ``skcipher`` transform: encrypt or decrypt a whole message with an IV.

A core has ``setkey(key)``, ``encrypt(iv, data)`` and ``decrypt(iv, data)``. The transform
checks the IV and data lengths once for every implementation of the name (see
:class:`cryptoapi.alg.Algorithm` for the rules), so all of them agree on what is valid.
"""

from typing import Protocol

from cryptoapi.alg import Buffer
from cryptoapi.errors import InvalidArgument
from cryptoapi.transforms.base import NeedFallback, check_buffer
from cryptoapi.transforms.keyed import KeyedTransform


class SkcipherCore(Protocol):
    def setkey(self, key: bytes, /) -> None: ...
    def encrypt(self, iv: bytes, data: Buffer, /) -> bytes: ...
    def decrypt(self, iv: bytes, data: Buffer, /) -> bytes: ...


class Skcipher(KeyedTransform[SkcipherCore]):
    """A symmetric cipher over whole messages, as ``alloc_skcipher(name)`` returns it."""

    __slots__ = ()

    @property
    def ivsize(self) -> int:
        return self._alg.ivsize

    def encrypt(self, iv: Buffer, data: Buffer) -> bytes:
        iv, data = self._check(iv, data)
        try:
            return self._core.encrypt(iv, data)
        except NeedFallback as reason:
            return self._encrypt_by_backup(iv, data, reason)

    def decrypt(self, iv: Buffer, data: Buffer) -> bytes:
        iv, data = self._check(iv, data)
        try:
            return self._core.decrypt(iv, data)
        except NeedFallback as reason:
            return self._decrypt_by_backup(iv, data, reason)

    # Methods of their own, as in the aead transform: a closure in encrypt or decrypt would
    # make their arguments cells on every call.

    def _encrypt_by_backup(self, iv: bytes, data: Buffer, reason: NeedFallback) -> bytes:
        return self._serve_by_backup(lambda core: core.encrypt(iv, data), reason)

    def _decrypt_by_backup(self, iv: bytes, data: Buffer, reason: NeedFallback) -> bytes:
        return self._serve_by_backup(lambda core: core.decrypt(iv, data), reason)

    def _check(self, iv: Buffer, data: Buffer) -> tuple[bytes, Buffer]:
        iv = check_buffer(iv, "iv")
        data = check_buffer(data, "data")
        alg = self._alg
        if len(iv) != alg.ivsize:
            raise InvalidArgument(f"{alg.name}: the IV is {alg.ivsize} bytes, got {len(iv)}")
        if alg.min_datasize:
            if len(data) < alg.min_datasize:
                raise InvalidArgument(
                    f"{alg.name}: needs at least {alg.min_datasize} bytes of data, got {len(data)}"
                )
        elif len(data) % alg.blocksize:
            raise InvalidArgument(
                f"{alg.name}: data must be whole {alg.blocksize}-byte blocks, got {len(data)} bytes"
            )
        return bytes(iv), data
