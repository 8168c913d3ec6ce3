"""What the keyed transforms (cipher, skcipher, aead) share: input checks, and serving a
call from the next implementation when the fastest one lacks a parameter.

An implementation raises :class:`NeedFallback` for a parameter it does not support (OpenSSL
has no AES-192-XTS and limits GCM IV lengths); the transform then keys the next
implementation of the same name and lets it serve, as the kernel's NEED_FALLBACK drivers
do, so the name works for every valid input.
"""

from collections.abc import Callable
from typing import Any

from cryptoapi.alg import Algorithm, Buffer
from cryptoapi.errors import InvalidArgument, InvalidKey


class NeedFallback(Exception):
    """Raised by an implementation for a valid parameter it cannot handle itself."""


def check_buffer(value: Buffer, what: str) -> Buffer:
    """Reject ``str`` (and anything else without the buffer protocol) with TypeError; a
    memoryview of wider items comes back as a view of its bytes, so lengths count bytes."""
    if isinstance(value, memoryview):
        return value if value.format == "B" and value.ndim == 1 else value.cast("B")
    if not isinstance(value, bytes | bytearray):
        raise TypeError(f"{what} must be bytes-like, not {type(value).__name__}")
    return value


class _NoKey:
    """Stands in for the core until ``setkey``: every operation explains what is missing."""

    def __getattr__(self, operation: str) -> Any:
        raise InvalidArgument("no key is set: call setkey() first")


NO_KEY: Any = _NoKey()

FallbackFactory = Callable[[], Any]


class Transform:
    """What every transform shows: its names and sizes, from its record; a repr without
    any key material."""

    __slots__ = ("_alg",)

    def __init__(self, alg: Algorithm) -> None:
        self._alg = alg

    @property
    def alg_name(self) -> str:
        return self._alg.name

    @property
    def driver_name(self) -> str:
        return self._alg.driver

    @property
    def blocksize(self) -> int:
        return self._alg.blocksize

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.alg_name} driver={self.driver_name}>"


class KeyedTransform(Transform):
    """Key checks and the fallback dance; subclasses add the type's operations."""

    __slots__ = ("_backup", "_core", "_fallback", "_key", "_primary")

    def __init__(self, alg: Algorithm, fallback: FallbackFactory | None = None) -> None:
        self._alg = alg
        self._primary: Any = alg.create()
        self._core: Any = NO_KEY
        self._fallback = fallback
        self._backup: Any = None
        self._key = b""

    @property
    def min_keysize(self) -> int:
        return self._alg.min_keysize

    @property
    def max_keysize(self) -> int:
        return self._alg.max_keysize

    def setkey(self, key: Buffer) -> None:
        """Set the key; an invalid key raises InvalidKey and leaves the old key in place."""
        key = bytes(check_buffer(key, "key"))
        if not self._alg.min_keysize <= len(key) <= self._alg.max_keysize:
            raise InvalidKey(
                f"{self.alg_name}: a {len(key)}-byte key is not accepted "
                f"({self._alg.min_keysize} to {self._alg.max_keysize} bytes)"
            )
        try:
            self._primary.setkey(key)
            core = self._primary
        except NeedFallback:
            core = self._keyed_backup(key)
        self._key = key
        self._core = core

    def _keyed_backup(self, key: bytes) -> Any:
        """The next implementation, keyed and configured like this transform."""
        if self._backup is None:
            if self._fallback is None:
                raise InvalidArgument(f"{self.driver_name} cannot serve this and has no fallback")
            self._backup = self._fallback()
            self._configure(self._backup)
        self._backup.setkey(key)
        return self._backup

    def _serve_by_backup(self, operation: str, *args: Any) -> Any:
        """Run one call the primary could not serve on the keyed backup."""
        backup = self._keyed_backup(self._key)
        try:
            return getattr(backup, operation)(*args)
        except NeedFallback:
            raise InvalidArgument(f"no implementation of {self.alg_name} serves this") from None

    def _configure(self, core: Any) -> None:
        """Apply per-transform settings (an AEAD's authsize) to a newly made core."""
