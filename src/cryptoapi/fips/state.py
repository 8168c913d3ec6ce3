"""FIPS mode's error state: one failure stops a registry for good.

FIPS 140-3 (§7.10.2 and the error state of §7.11) asks a module whose self-test fails to
enter an error state in which it performs no cryptographic service. The kernel panics
("alg: self-tests for %s (%s) failed in fips mode!"); OpenSSL's FIPS provider and Go's
crypto/fips140 stop for good. Here the registry stays and refuses:

- every allocation and lookup raises :class:`~cryptoapi.errors.FipsError` naming the
  algorithm and driver that failed (the registry replaces its entry points, see
  :meth:`FipsState.fail`);
- every transform already handed out raises it on its next operation: its cores are
  replaced by one that raises on any use. Transforms are held by weak references in a
  list (pruned of dead ones as it doubles), so tracking costs one reference and one append
  per allocation (a ``WeakSet`` cost twice that) and nothing per operation.

A running hash taken with ``Shash.init()`` before the failure is not tracked (it is a
state, not a transform); its own ``update``/``digest`` still work, and no new one can be
made.
"""

from __future__ import annotations

import threading
import weakref

from cryptoapi.errors import FipsError

TYPE_CHECKING = False  # not typing's: importing typing costs more than hashlib; mypy sets it true

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, NoReturn, TypeVar

    from cryptoapi.transforms.base import Transform

    T = TypeVar("T", bound=Transform)

CORE_SLOTS = ("_core", "_primary", "_backup", "_digest")
"""The attributes through which a transform reaches its implementation (the serving core,
the primary and fallback cores, a hash's bound digest)."""
NATIVE_SLOTS = ("_native", "_esp")
PRUNE_FLOOR = 1024
"""An AEAD's native calls, which go around its core: emptied so every call takes the core."""


class Dead:
    """Stands in for every core of a transform in the error state: any use raises."""

    __slots__ = ("_message",)

    def __init__(self, message: str) -> None:
        self._message = message

    def __getattr__(self, operation: str) -> Any:
        if operation.startswith("__"):  # introspection (copy, pdoc), not an operation
            raise AttributeError(operation)
        raise FipsError(self._message)

    def __call__(self, *args: object, **kwargs: object) -> NoReturn:
        raise FipsError(self._message)


class FipsState:
    """One FIPS registry's transforms and, once anything failed, its error.

    ``on_error(message)`` is the registry's: it closes its own entry points. ``fail``
    enters the state (once; later failures keep the first message) and raises.
    """

    __slots__ = ("_handed", "_lock", "_on_error", "_prune_at", "message")

    def __init__(self, on_error: Callable[[str], None]) -> None:
        self.message: str | None = None
        self._handed: list[weakref.ref[Transform]] = []
        self._prune_at = PRUNE_FLOOR
        self._lock = threading.Lock()
        self._on_error = on_error

    def track(self, transform: T) -> T:
        """``transform``, remembered so that the error state can stop it."""
        with self._lock:
            self._handed.append(weakref.ref(transform))
            if len(self._handed) > self._prune_at:
                self._prune()
        if self.message is not None:  # allocated while another thread failed
            disable(transform, self.message)
        return transform

    def _prune(self) -> None:
        """Drop the references to transforms gone (lock held); next prune at twice the rest."""
        self._handed = [held for held in self._handed if held() is not None]
        self._prune_at = max(PRUNE_FLOOR, 2 * len(self._handed))

    def fail(self, what: str, name: str, driver: str, reason: object) -> NoReturn:
        """Enter the error state because ``what`` (a self-test, a pairwise test...) of
        ``name`` (``driver``) failed for ``reason``, then raise FipsError."""
        self.enter(f"FIPS error state: the {what} of {name} ({driver}) failed: {reason}")
        raise FipsError(self.message)

    def enter(self, message: str) -> None:
        """Stop the registry and every transform it handed out (the first message stays)."""
        with self._lock:
            if self.message is not None:
                return
            self.message = message
            handed = [held() for held in self._handed]
        self._on_error(message)
        for transform in handed:
            if transform is not None:
                disable(transform, message)

    def check(self) -> None:
        """Raise FipsError if the state was entered."""
        if self.message is not None:
            raise FipsError(self.message)


def disable(transform: Transform, message: str) -> None:
    """Replace ``transform``'s cores with one that raises FipsError ``message``."""
    from cryptoapi.transforms.aead import NO_NATIVE

    dead = Dead(message)
    for slot in CORE_SLOTS:
        if _has(transform, slot):
            setattr(transform, slot, dead)
    for slot in NATIVE_SLOTS:
        if _has(transform, slot):
            setattr(transform, slot, NO_NATIVE)


def _has(transform: Transform, slot: str) -> bool:
    try:
        getattr(transform, slot)
    except AttributeError:  # not a slot of this type, or never set
        return False
    return True
