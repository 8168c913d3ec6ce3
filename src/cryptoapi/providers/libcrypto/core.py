"""What the libcrypto drivers share: the extension, loaded once, and a driver core over one
of its keys (an SA's), made anew whenever ``setkey`` or ``setauthsize`` changes it."""

from typing import Any, ClassVar

from cryptoapi.alg import Buffer
from cryptoapi.providers.libcrypto.extension import load
from cryptoapi.transforms.aead import Native, forged

EXTENSION = load()
Forged: type[Exception] = EXTENSION.Forged


class ExtensionCore:
    """An AEAD core whose encrypt and decrypt are one extension key's ``seal`` and ``open``;
    a subclass splits the key (``setkey``) and makes the extension's key (``_made``)."""

    __slots__ = ("_authsize", "_key", "_secret")

    name = ""
    full_icv: ClassVar[int] = 16
    native_ivs: ClassVar[range] = range(0)
    """The IV lengths of the one-packet calls offered as native ones (none: runs only)."""

    def __init__(self) -> None:
        self._authsize = self.full_icv
        self._secret: tuple[bytes, bytes] | None = None  # the key's two parts
        self._key: Any = None  # the extension's

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} ICV {self._authsize}>"  # never the key

    def setauthsize(self, authsize: int, /) -> None:
        self._authsize = authsize
        self._rekey()

    def _rekey(self) -> None:
        if self._secret is not None:
            self._key = self._made(*self._secret)

    def _made(self, first: bytes, second: bytes, /) -> Any:
        """The extension's key of the two parts of the key, at the current ICV length."""
        raise NotImplementedError

    def native(self) -> Native | None:
        """The extension's one-packet calls (for ``native_ivs``) and its calls for whole
        runs of ESP packets."""
        key = self._key
        if key is None:
            return None
        return Native(key.seal, key.open, self.native_ivs, Forged, runs=key)

    def encrypt(self, iv: bytes, plaintext: Buffer, assoc: Buffer, /) -> bytes:
        sealed: bytes = self._key.seal(bytes(iv), bytes(plaintext), bytes(assoc))
        return sealed

    def decrypt(self, iv: bytes, data: Buffer, assoc: Buffer, /) -> bytes:
        try:
            plaintext: bytes = self._key.open(bytes(iv), bytes(data), bytes(assoc))
        except Forged:
            raise forged(self.name) from None
        return plaintext
