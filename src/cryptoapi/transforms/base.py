"""What every transform shares: names, sizes, a repr, a refusal to be pickled, input
checks, and :class:`NeedFallback`, which an implementation raises for a parameter it does
not support (the keyed transforms of :mod:`cryptoapi.transforms.keyed` then serve the call
from the next implementation of the name).

No transform and no running hash can be pickled or copied with :mod:`copy`: either may hold a
key, and a pickle of one is that key, usable, in a file or a message queue (a keyed
``hmac(sha256-generic)`` desc used to pickle into a working MAC). ``cryptography`` refuses
the same way.
"""

from __future__ import annotations

from cryptoapi.errors import InvalidArgument

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
    any key material; FIPS mode's service indicator. Not picklable (see
    :class:`NotPicklable`). Weakly referable: a FIPS registry holds the transforms it
    handed out weakly, to stop them in its error state."""

    __slots__ = ("__weakref__", "_alg")

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

    @property
    def fips_approved(self) -> bool:
        """FIPS 140-3's service indicator: whether this transform's services, with its
        current key, are approved (the rules: :mod:`cryptoapi.fips.indicator`). Worked out
        when read, from the algorithm and the key: no operation pays for it."""
        from cryptoapi.fips.indicator import approved

        return approved(self)

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
