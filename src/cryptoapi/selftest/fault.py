"""Fault injection for users and tests: ``CRYPTOAPI_FAULT=<driver>[,<driver>...]``.

A faulted driver passes its known-answer tests (they build their transforms directly) but
misbehaves in use, which is the case differential fuzzing exists for. The rule, so that a
user can predict it: the driver flips the lowest bit of the last byte of an output whenever
its input length is 3 modulo 7 — the message of a hash (all updates together), the data of
an skcipher or AEAD call, the output length of a KDF, or, for a one-block cipher, when the
block's first byte is 3 modulo 7.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # not typing's: importing typing costs more than hashlib; mypy sets it true

if TYPE_CHECKING:
    from typing import Any

    from cryptoapi.alg import Algorithm, Buffer

TRIGGER_MODULUS = 7
TRIGGER_REMAINDER = 3


def faults_from_env() -> frozenset[str]:
    raw = os.environ.get("CRYPTOAPI_FAULT", "")
    return frozenset(driver.strip() for driver in raw.split(",") if driver.strip())


def triggers(length: int) -> bool:
    return length % TRIGGER_MODULUS == TRIGGER_REMAINDER


def corrupt(output: bytes) -> bytes:
    return output[:-1] + bytes([output[-1] ^ 1]) if output else output


def faulty(alg: Algorithm) -> Algorithm:
    """``alg`` with cores that misbehave by the rule above."""
    return alg.replace(create=lambda: _FaultyCore(alg.create()))


class _FaultyState:
    """A running hash that corrupts its digest when the message length triggers."""

    def __init__(self, state: Any, length: int = 0) -> None:
        self._state = state
        self._length = length

    def update(self, data: Buffer, /) -> None:
        self._state.update(data)
        self._length += len(data)

    def digest(self) -> bytes:
        out: bytes = self._state.digest()
        return corrupt(out) if triggers(self._length) else out

    def copy(self) -> _FaultyState:
        return _FaultyState(self._state.copy(), self._length)


class _FaultyCore:
    """Wraps any core: the operations that return data go through the fault rule."""

    def __init__(self, core: Any) -> None:
        self._core = core

    def __getattr__(self, name: str) -> Any:
        return getattr(self._core, name)

    def native(self) -> None:
        """None: an AEAD's native calls would go around the fault rule."""

    def init(self) -> _FaultyState:
        return _FaultyState(self._core.init())

    def digest(self, data: Buffer, /) -> bytes:
        return self._maybe(self._core.digest(data), len(data))

    def encrypt(self, iv: bytes, data: Buffer, *assoc: Buffer) -> bytes:
        return self._maybe(self._core.encrypt(iv, data, *assoc), len(data))

    def decrypt(self, iv: bytes, data: Buffer, *assoc: Buffer) -> bytes:
        return self._maybe(self._core.decrypt(iv, data, *assoc), len(data))

    def derive(self, fixed_input: bytes, length: int, /, **options: Any) -> bytes:
        return self._maybe(self._core.derive(fixed_input, length, **options), length)

    def encrypt_block(self, block: Buffer, /) -> bytes:
        return self._maybe(self._core.encrypt_block(block), block[0])

    def decrypt_block(self, block: Buffer, /) -> bytes:
        return self._maybe(self._core.decrypt_block(block), block[0])

    @staticmethod
    def _maybe(output: bytes, length: int) -> bytes:
        return corrupt(output) if triggers(length) else output
