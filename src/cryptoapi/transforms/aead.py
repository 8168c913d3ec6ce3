"""The ``aead`` transform: authenticated encryption with associated data.

A core has ``setkey(key)``, ``setauthsize(n)``, ``encrypt(iv, plaintext, assoc)`` returning
ciphertext || tag, and ``decrypt(iv, data, assoc)`` returning the plaintext or raising
:class:`~cryptoapi.errors.BadMessage`, never any plaintext, when the tag does not verify.
The transform checks IV, tag and data lengths for every implementation of the name.
"""

from typing import Any, Protocol

from cryptoapi.alg import Algorithm, Buffer
from cryptoapi.errors import BadMessage, InvalidArgument
from cryptoapi.transforms.base import FallbackFactory, KeyedTransform, NeedFallback, check_buffer


class AeadCore(Protocol):
    def setkey(self, key: bytes, /) -> None: ...
    def setauthsize(self, authsize: int, /) -> None: ...
    def encrypt(self, iv: bytes, plaintext: Buffer, assoc: Buffer, /) -> bytes: ...
    def decrypt(self, iv: bytes, data: Buffer, assoc: Buffer, /) -> bytes: ...


class Aead(KeyedTransform):
    """An AEAD transform, as ``alloc_aead(name)`` returns it (authsize: ``maxauthsize``)."""

    __slots__ = ("authsize",)

    def __init__(self, alg: Algorithm, fallback: FallbackFactory | None = None) -> None:
        super().__init__(alg, fallback)
        self.authsize = alg.maxauthsize
        self._primary.setauthsize(self.authsize)

    @property
    def ivsize(self) -> int:
        return self._alg.ivsize

    @property
    def maxauthsize(self) -> int:
        return self._alg.maxauthsize

    def setauthsize(self, authsize: int) -> None:
        """Choose the tag length; sizes the algorithm does not define raise InvalidArgument."""
        allowed = self._alg.authsizes or (self._alg.maxauthsize,)
        if authsize not in allowed:
            raise InvalidArgument(
                f"{self.alg_name}: authsize {authsize} is not one of {', '.join(map(str, allowed))}"
            )
        for core in (self._primary, self._backup):
            if core is not None:
                core.setauthsize(authsize)
        self.authsize = authsize

    def _configure(self, core: Any) -> None:
        core.setauthsize(self.authsize)

    def encrypt(self, iv: Buffer, plaintext: Buffer, assoc: Buffer = b"") -> bytes:
        """Encrypt and authenticate: returns ciphertext || tag."""
        iv, plaintext, assoc = self._check(iv, plaintext, assoc)
        try:
            return self._core.encrypt(iv, plaintext, assoc)  # type: ignore[no-any-return]
        except NeedFallback:
            return self._serve_by_backup("encrypt", iv, plaintext, assoc)  # type: ignore[no-any-return]

    def decrypt(self, iv: Buffer, data: Buffer, assoc: Buffer = b"") -> bytes:
        """Verify and decrypt ciphertext || tag; BadMessage (and no plaintext) if forged."""
        iv, data, assoc = self._check(iv, data, assoc)
        if len(data) < self.authsize:
            raise BadMessage(
                f"{self.alg_name}: {len(data)} bytes cannot hold a {self.authsize}-byte tag"
            )
        try:
            return self._core.decrypt(iv, data, assoc)  # type: ignore[no-any-return]
        except NeedFallback:
            return self._serve_by_backup("decrypt", iv, data, assoc)  # type: ignore[no-any-return]

    def _check(self, iv: Buffer, data: Buffer, assoc: Buffer) -> tuple[bytes, Buffer, Buffer]:
        iv = check_buffer(iv, "iv")
        data = check_buffer(data, "data")
        assoc = check_buffer(assoc, "assoc")
        low, high = self._alg.ivsizes or (self._alg.ivsize, self._alg.ivsize)
        if not low <= len(iv) <= high:
            expected = f"{low}" if low == high else f"{low} to {high}"
            raise InvalidArgument(f"{self.alg_name}: the IV is {expected} bytes, got {len(iv)}")
        return bytes(iv), data, assoc
