"""What every transform shares (names, sizes, a repr and a refusal to be pickled), and what
the keyed transforms (cipher, skcipher, aead) add: input checks, and serving a call from the
next implementation when the fastest one lacks a parameter.

An implementation raises :class:`NeedFallback` for a parameter it does not support (OpenSSL
has no AES-192-XTS and limits GCM IV lengths); the transform then keys the next
implementation of the same name and lets it serve, as the kernel's NEED_FALLBACK drivers
do, so the name works for every valid input. ``serving_driver`` names the one holding the
key.

No transform and no running hash can be pickled or copied with :mod:`copy`: either may hold a
key, and a pickle of one is that key, usable, in a file or a message queue (a keyed
``hmac(sha256-generic)`` desc used to pickle into a working MAC). ``cryptography`` refuses
the same way.
"""

from __future__ import annotations

from cryptoapi.errors import AlgorithmNotFound, InvalidArgument, InvalidKey

TYPE_CHECKING = False  # not typing's: importing typing costs more than hashlib; mypy sets it true

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, NoReturn, SupportsIndex

    from cryptoapi.alg import Algorithm, Buffer

    FallbackFactory = Callable[[frozenset[str]], Algorithm]
    """Finds the next implementation of a keyed transform's name, for a parameter its own
    implementation lacks, other than the drivers given (those that lacked it too): the
    transform creates its core and knows the driver serving the key."""


class NeedFallback(Exception):
    """Raised by an implementation for a parameter it cannot handle itself, with the reason
    in words (``NeedFallback("chacha20: ...")``): when no implementation serves the call, the
    caller's InvalidArgument carries the reason the last one gave."""


class Unserved(Exception):  # not an error of the caller's: a refusal to serve
    """What a transform made with :func:`no_fallback` raises where its implementation asks
    for a fallback (NeedFallback): for callers that want that implementation's own answer
    or none (its self-test; a fuzzing opinion, which must not vote with another's answer)."""


def no_fallback(passed: frozenset[str]) -> Algorithm:
    """A fallback factory that refuses: the transform's call raises :class:`Unserved`."""
    raise Unserved


def check_buffer(value: Buffer, what: str) -> Buffer:
    """Reject ``str`` (and anything else without the buffer protocol) with TypeError; a
    memoryview of wider items comes back as a view of its bytes, so lengths count bytes."""
    if isinstance(value, memoryview):
        return value if value.format == "B" and value.ndim == 1 else value.cast("B")
    if not isinstance(value, bytes | bytearray):
        raise TypeError(f"{what} must be bytes-like, not {type(value).__name__}")
    return value


def equal_in_constant_time(computed: bytes, given: Buffer) -> bool:
    """``computed == given`` in time that depends only on their lengths
    (:func:`hmac.compare_digest`), for tags and derived keys: ``==`` stops at the first
    differing byte, which tells an attacker how much of a forgery is right."""
    # Imported here: hmac imports hashlib, which neither `import cryptoapi` nor a generic
    # driver may load (tests/registry/test_registry.py, test_import_is_lazy).
    import hmac

    return hmac.compare_digest(computed, given)


def check_int(value: object, what: str) -> int:
    """``value`` if it is an int, else TypeError: a size is never a float, a str or a bool
    (``True == 1`` would otherwise pass for a 1-byte size)."""
    if type(value) is not int and (not isinstance(value, int) or isinstance(value, bool)):
        raise TypeError(f"{what} must be an int, not {type(value).__name__}")
    return value


class _NoKey:
    """Stands in for the core until ``setkey``: every operation explains what is missing."""

    def __getattr__(self, operation: str) -> Any:
        if operation.startswith("__"):  # introspection (pdoc, copy), not an operation
            raise AttributeError(operation)
        raise InvalidArgument("no key is set: call setkey() first")


NO_KEY: Any = _NoKey()


class NotPicklable:
    """Refuses ``pickle`` and ``copy.copy``/``copy.deepcopy`` (all of which go through
    ``__reduce_ex__``) with TypeError, on purpose: the object may hold a key."""

    __slots__ = ()

    def __reduce_ex__(self, protocol: SupportsIndex, /) -> NoReturn:
        raise TypeError(
            f"cannot pickle or copy {self!r}: it may hold a key; allocate another transform "
            "(and for a running hash, use its copy() method)"
        )

    def __reduce__(self) -> NoReturn:
        self.__reduce_ex__(0)


class Transform(NotPicklable):
    """What every transform shows: its names and sizes, from its record; a repr without
    any key material. Not picklable (see :class:`NotPicklable`)."""

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


class WithKeySizes(Transform):
    """A transform that takes a key: the key sizes its record allows."""

    __slots__ = ()

    @property
    def min_keysize(self) -> int:
        return self._alg.min_keysize

    @property
    def max_keysize(self) -> int:
        return self._alg.max_keysize


class KeyedTransform(WithKeySizes):
    """Key checks and the fallback dance; subclasses add the type's operations."""

    __slots__ = ("_backup", "_backup_driver", "_core", "_fallback", "_key", "_primary")

    def __init__(self, alg: Algorithm, fallback: FallbackFactory | None = None) -> None:
        self._alg = alg
        self._primary: Any = alg.create()
        self._core: Any = NO_KEY
        self._fallback = fallback
        self._backup: Any = None
        self._backup_driver = ""
        self._key = b""

    @property
    def serving_driver(self) -> str:
        """The driver whose implementation holds the current key and serves the calls.

        ``driver_name`` unless that implementation refused the key (:class:`NeedFallback`)
        and the next implementation of the name took it: under OpenSSL, which has no
        AES-192-XTS, ``xts(aes)`` with a 48-byte key is served by ``xts(aes-generic)`` or
        pycryptodome's driver. Before any key is set, ``driver_name``, the one tried first.
        A single call the key's driver cannot serve (a GCM IV length OpenSSL refuses) is
        handed to the next implementation without changing this.
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

    def _keyed_backup(
        self, key: bytes, reason: NeedFallback, passed: set[str] | None = None
    ) -> Any:
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

    def _backup_for(self, reason: NeedFallback, passed: set[str]) -> Any:
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

    def _next_implementation(self, reason: NeedFallback, passed: frozenset[str]) -> Any:
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
        return made.create()

    def _serve_by_backup(self, operation: str, reason: NeedFallback, *args: Any) -> Any:
        """Run one call the primary could not serve (for ``reason``) on the first backup
        that can; InvalidArgument, in the last one's words, if none can."""
        passed: set[str] = set()
        while True:
            backup = self._keyed_backup(self._key, reason, passed)
            try:
                return getattr(backup, operation)(*args)
            except NeedFallback as last:
                reason = self._pass_over(last, passed)

    def _configure(self, core: Any) -> None:
        """Apply per-transform settings (an AEAD's authsize) to a newly made core."""


def _said(reason: NeedFallback, alg_name: str) -> str:
    """What the last implementation asked gave as its reason, so the caller reads the words
    the generic one would use; a stand-in if it gave none."""
    return str(reason) or f"no implementation of {alg_name} serves this"
