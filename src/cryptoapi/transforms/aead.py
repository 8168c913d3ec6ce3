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

    __slots__ = ("_ivmax", "_ivmin", "authsize")

    def __init__(self, alg: Algorithm, fallback: FallbackFactory | None = None) -> None:
        super().__init__(alg, fallback)
        self.authsize = alg.maxauthsize
        self._primary.setauthsize(self.authsize)
        self._ivmin, self._ivmax = alg.ivsizes or (alg.ivsize, alg.ivsize)

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

    # The per-message methods keep the common case (bytes in, the IV in range) to a few
    # comparisons: at IPsec packet sizes the checks would otherwise cost as much as OpenSSL.

    def encrypt(self, iv: Buffer, plaintext: Buffer, assoc: Buffer = b"") -> bytes:
        """Encrypt and authenticate: returns ciphertext || tag."""
        if not (type(iv) is bytes and type(plaintext) is bytes and type(assoc) is bytes):
            iv, plaintext, assoc = self._normalize(iv, plaintext, assoc)
        if not self._ivmin <= len(iv) <= self._ivmax:
            self._bad_iv(iv)
        try:
            return self._core.encrypt(iv, plaintext, assoc)  # type: ignore[no-any-return]
        except NeedFallback:
            return self._serve_by_backup("encrypt", iv, plaintext, assoc)  # type: ignore[no-any-return]

    def decrypt(self, iv: Buffer, data: Buffer, assoc: Buffer = b"") -> bytes:
        """Verify and decrypt ciphertext || tag; BadMessage (and no plaintext) if forged."""
        if not (type(iv) is bytes and type(data) is bytes and type(assoc) is bytes):
            iv, data, assoc = self._normalize(iv, data, assoc)
        if not self._ivmin <= len(iv) <= self._ivmax:
            self._bad_iv(iv)
        if len(data) < self.authsize:
            raise BadMessage(
                f"{self.alg_name}: {len(data)} bytes cannot hold a {self.authsize}-byte tag"
            )
        try:
            return self._core.decrypt(iv, data, assoc)  # type: ignore[no-any-return]
        except NeedFallback:
            return self._serve_by_backup("decrypt", iv, data, assoc)  # type: ignore[no-any-return]

    @staticmethod
    def _normalize(iv: Buffer, data: Buffer, assoc: Buffer) -> tuple[bytes, Buffer, Buffer]:
        """The slow path: other buffer types checked (str refused) and viewed as bytes."""
        data, assoc = check_buffer(data, "data"), check_buffer(assoc, "assoc")
        return bytes(check_buffer(iv, "iv")), data, assoc

    def _bad_iv(self, iv: bytes) -> None:
        low, high = self._ivmin, self._ivmax
        expected = f"{low}" if low == high else f"{low} to {high}"
        raise InvalidArgument(f"{self.alg_name}: the IV is {expected} bytes, got {len(iv)}")
