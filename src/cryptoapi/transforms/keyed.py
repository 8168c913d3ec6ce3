"""What the keyed transforms (cipher, skcipher, aead) share: key checks, and serving a call
from the next implementation when the fastest one lacks a parameter.

An implementation raises :class:`~cryptoapi.transforms.base.NeedFallback` for a parameter
it does not support (OpenSSL has no AES-192-XTS and limits GCM IV lengths); the transform
then keys the next implementation of the same name and lets it serve, as the kernel's
NEED_FALLBACK drivers do, so the name works for every valid input. ``serving_driver``
names the one holding the key.

A keyed transform is generic over its core's protocol (``Skcipher`` is a
``KeyedTransform[SkcipherCore]``), so the calls it makes on its cores are type-checked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

from cryptoapi.errors import AlgorithmNotFound, InvalidArgument, InvalidKey
from cryptoapi.transforms.base import NO_KEY, NeedFallback, WithKeySizes, check_buffer

if TYPE_CHECKING:
    from collections.abc import Callable

    from cryptoapi.alg import Algorithm, Buffer
    from cryptoapi.transforms.base import FallbackFactory


class KeyedCore(Protocol):
    """What every keyed core has: a key."""

    def setkey(self, key: bytes, /) -> None: ...


CoreT = TypeVar("CoreT", bound=KeyedCore)
"""The protocol of the cores a keyed transform drives (``SkcipherCore``, ``AeadCore``...)."""
R = TypeVar("R")


class KeyedTransform(WithKeySizes, Generic[CoreT]):
    """Key checks and the fallback dance; subclasses add the type's operations."""

    __slots__ = ("_backup", "_backup_driver", "_core", "_fallback", "_key", "_primary")

    def __init__(self, alg: Algorithm, fallback: FallbackFactory | None = None) -> None:
        self._alg = alg
        self._primary: CoreT = alg.create()
        self._core: CoreT = NO_KEY
        self._fallback = fallback
        self._backup: CoreT | None = None
        self._backup_driver = ""
        self._key = b""

    @property
    def serving_driver(self) -> str:
        """The driver whose implementation holds the current key and serves the calls.

        ``driver_name`` unless that implementation refused the key (:class:`NeedFallback`)
        and the next usable implementation of the name took it. OpenSSL has no
        AES-192-XTS, so ``xts(aes)`` (``driver_name`` ``xts-aes-openssl``) with a 48-byte
        key is served by ``xts(aes-openssl)``: the ``xts`` template over OpenSSL's AES
        block cipher, ranked next; the README's example prints
        ``xts-aes-openssl -> xts(aes-openssl)``. With a 32- or 64-byte key it is
        ``xts-aes-openssl`` again. Before any key is set, ``driver_name``, the one tried
        first. A single call the key's driver cannot serve (a GCM IV length OpenSSL
        refuses) is handed to the next implementation without changing this.
        """
        if self._backup is not None and self._core is self._backup:
            return self._backup_driver
        return self.driver_name

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
        except NeedFallback as reason:
            core = self._keyed_backup(key, reason)
        self._key = key
        self._core = core
        self._keyed()

    def _keyed_backup(
        self, key: bytes, reason: NeedFallback, passed: set[str] | None = None
    ) -> CoreT:
        """The next implementation that takes ``key``, keyed and configured like this
        transform: the current backup, else the next ones in priority order (a backup may
        be partial too, unlike the kernel's fallbacks: each one that raises NeedFallback is
        added to ``passed`` and passed over); none left: InvalidArgument, the last reason."""
        passed = set() if passed is None else passed
        while True:
            backup = self._backup_for(reason, passed)
            try:
                backup.setkey(key)
            except NeedFallback as last:
                reason = self._pass_over(last, passed)
                continue
            return backup

    def _backup_for(self, reason: NeedFallback, passed: set[str]) -> CoreT:
        """The current backup, or a core of the next implementation not yet passed over."""
        if self._backup is None:
            self._backup = self._next_implementation(reason, frozenset(passed))
            self._configure(self._backup)
        return self._backup

    def _pass_over(self, reason: NeedFallback, passed: set[str]) -> NeedFallback:
        """Drop the backup that could not serve (for ``reason``) so the next one is asked."""
        passed.add(self._backup_driver)
        self._backup = None
        return reason

    def _next_implementation(self, reason: NeedFallback, passed: frozenset[str]) -> CoreT:
        """A core of the next implementation of the name (not one of ``passed``), or
        InvalidArgument giving ``reason`` when there is none (a bad parameter, not a failed
        lookup, to the caller)."""
        try:
            made = self._fallback(passed) if self._fallback is not None else None
        except AlgorithmNotFound:
            made = None
        if made is not None and made.driver in passed:
            made = None  # a factory offering one passed over again has nothing new
        if made is None:
            if passed:
                raise InvalidArgument(_said(reason, self.alg_name))
            alone = f"{self.driver_name} cannot serve this and is the only {self.alg_name}"
            raise InvalidArgument(str(reason) or alone)
        self._backup_driver = made.driver
        core: CoreT = made.create()  # a record of this transform's name makes this core type
        return core

    def _serve_by_backup(self, call: Callable[[CoreT], R], reason: NeedFallback) -> R:
        """Make one ``call`` the primary could not serve (for ``reason``) on the first
        backup that can; InvalidArgument, in the last one's words, if none can."""
        passed: set[str] = set()
        while True:
            backup = self._keyed_backup(self._key, reason, passed)
            try:
                return call(backup)
            except NeedFallback as last:
                reason = self._pass_over(last, passed)

    def _configure(self, core: CoreT) -> None:
        """Apply per-transform settings (an AEAD's authsize) to a newly made core."""

    def _keyed(self) -> None:
        """React to a new key and serving core (an AEAD binds its native calls)."""


def _said(reason: NeedFallback, alg_name: str) -> str:
    """What the last implementation asked gave as its reason, so the caller reads the words
    the generic one would use; a stand-in if it gave none."""
    return str(reason) or f"no implementation of {alg_name} serves this"
