"""The ``aead`` transform: authenticated encryption with associated data.

A core has ``setkey(key)``, ``setauthsize(n)``, ``encrypt(iv, plaintext, assoc)`` returning
ciphertext || tag, and ``decrypt(iv, data, assoc)`` returning the plaintext or raising
:class:`cryptoapi.errors.BadMessage`, never any plaintext, when the tag does not verify.
The transform checks IV, tag, data and associated-data lengths for every implementation of
the name, so one-piece drivers and template instances refuse exactly the same inputs.
"""

from __future__ import annotations

from typing import Protocol

from cryptoapi.alg import Algorithm, Buffer
from cryptoapi.errors import BadMessage, InvalidArgument
from cryptoapi.names import parse
from cryptoapi.transforms.base import (
    NeedFallback,
    check_buffer,
    check_int,
)
from cryptoapi.transforms.keyed import KeyedTransform

TYPE_CHECKING = False  # mypy sets it true

if TYPE_CHECKING:
    from cryptoapi.transforms.base import FallbackFactory

ESP_ASSOC_SIZES = (8, 12)
"""The associated data ESP hands an AEAD, in this package's convention (``assoc`` without the
IV): SPI || 32-bit sequence number, or SPI || 64-bit extended sequence number (RFC 4106 §5,
RFC 4309 §5, RFC 4543 §3, RFC 7634 §2.1). The kernel's rfc4106 and rfc4543
(``crypto_ipsec_check_assoclen()``) and rfc4309 accept 16 or 20 bytes: the same AAD followed
by the 8-byte IV, which this package passes on its own."""

ASSOC_SIZES: dict[str, tuple[int, ...]] = {
    "rfc4106": ESP_ASSOC_SIZES,
    "rfc4309": ESP_ASSOC_SIZES,
    "rfc4543": ESP_ASSOC_SIZES,
    "rfc7539esp": ESP_ASSOC_SIZES,
}
"""The assoc lengths an AEAD allows, by the outermost word of its name; names not listed
take any length. Keyed by name rather than kept by each template so that any implementation
registered under one of these names (a one-piece driver too) is held to the same rule."""


def assoc_sizes(name: str) -> tuple[int, ...]:
    """The assoc lengths the AEAD ``name`` allows; () when any length is allowed."""
    return ASSOC_SIZES.get(parse(name).word, ())


class AeadCore(Protocol):
    def setkey(self, key: bytes, /) -> None: ...
    def setauthsize(self, authsize: int, /) -> None: ...
    def encrypt(self, iv: bytes, plaintext: Buffer, assoc: Buffer, /) -> bytes: ...
    def decrypt(self, iv: bytes, data: Buffer, assoc: Buffer, /) -> bytes: ...


class Aead(KeyedTransform[AeadCore]):
    """An AEAD transform, as ``alloc_aead(name)`` returns it (authsize: ``maxauthsize``)."""

    __slots__ = ("_assocsizes", "_ivmax", "_ivmin", "authsize")

    def __init__(self, alg: Algorithm, fallback: FallbackFactory | None = None) -> None:
        super().__init__(alg, fallback)
        self.authsize = alg.maxauthsize
        self._primary.setauthsize(self.authsize)
        self._ivmin, self._ivmax = alg.ivsizes or (alg.ivsize, alg.ivsize)
        self._assocsizes = assoc_sizes(alg.name)

    @property
    def ivsize(self) -> int:
        return self._alg.ivsize

    @property
    def maxauthsize(self) -> int:
        return self._alg.maxauthsize

    def setauthsize(self, authsize: int) -> None:
        """Choose the tag length: TypeError unless an int (a bool or 16.0 is not), and
        InvalidArgument for a size the algorithm does not define."""
        check_int(authsize, "authsize")
        allowed = self._alg.authsizes or (self._alg.maxauthsize,)
        if authsize not in allowed:
            raise InvalidArgument(
                f"{self.alg_name}: authsize {authsize} is not one of {', '.join(map(str, allowed))}"
            )
        for core in (self._primary, self._backup):
            if core is not None:
                core.setauthsize(authsize)
        self.authsize = authsize

    def _configure(self, core: AeadCore) -> None:
        core.setauthsize(self.authsize)

    # The per-message methods keep the common case (bytes in, the IV in range, any assoc
    # or an ESP-sized one) to a few comparisons: at IPsec packet sizes the checks would
    # otherwise cost as much as OpenSSL.

    def encrypt(self, iv: Buffer, plaintext: Buffer, assoc: Buffer = b"") -> bytes:
        """Encrypt and authenticate: returns ciphertext || tag."""
        if not (type(iv) is bytes and type(plaintext) is bytes and type(assoc) is bytes):
            iv, plaintext, assoc = self._normalize(iv, plaintext, assoc)
        if not self._ivmin <= len(iv) <= self._ivmax:
            self._bad_iv(iv)
        if self._assocsizes and len(assoc) not in self._assocsizes:
            self._bad_assoc(assoc)
        try:
            return self._core.encrypt(iv, plaintext, assoc)
        except NeedFallback as reason:
            return self._serve_by_backup(lambda core: core.encrypt(iv, plaintext, assoc), reason)

    def decrypt(self, iv: Buffer, data: Buffer, assoc: Buffer = b"") -> bytes:
        """Verify and decrypt ciphertext || tag; BadMessage (and no plaintext) if forged."""
        if not (type(iv) is bytes and type(data) is bytes and type(assoc) is bytes):
            iv, data, assoc = self._normalize(iv, data, assoc)
        if not self._ivmin <= len(iv) <= self._ivmax:
            self._bad_iv(iv)
        if self._assocsizes and len(assoc) not in self._assocsizes:
            self._bad_assoc(assoc)
        if len(data) < self.authsize:
            raise BadMessage(
                f"{self.alg_name}: {len(data)} bytes cannot hold a {self.authsize}-byte tag"
            )
        try:
            return self._core.decrypt(iv, data, assoc)
        except NeedFallback as reason:
            return self._serve_by_backup(lambda core: core.decrypt(iv, data, assoc), reason)

    @staticmethod
    def _normalize(iv: Buffer, data: Buffer, assoc: Buffer) -> tuple[bytes, Buffer, Buffer]:
        """The slow path: other buffer types checked (str refused) and viewed as bytes."""
        data, assoc = check_buffer(data, "data"), check_buffer(assoc, "assoc")
        return bytes(check_buffer(iv, "iv")), data, assoc

    def _bad_assoc(self, assoc: Buffer) -> None:
        sizes = " or ".join(map(str, self._assocsizes))
        raise InvalidArgument(
            f"{self.alg_name}: assoc must be {sizes} bytes (the ESP AAD: SPI || sequence "
            f"number, without the IV), got {len(assoc)}"
        )

    def _bad_iv(self, iv: bytes) -> None:
        low, high = self._ivmin, self._ivmax
        expected = f"{low}" if low == high else f"{low} to {high}"
        raise InvalidArgument(f"{self.alg_name}: the IV is {expected} bytes, got {len(iv)}")
