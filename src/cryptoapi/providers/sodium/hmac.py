"""libsodium's HMAC-SHA-256 and HMAC-SHA-512 (RFC 2104, FIPS 198-1;
``crypto_auth_hmacsha256``/``512``, init/update/final) through pysodium's handle, priority
200: one-piece drivers of ``hmac(sha256)`` and ``hmac(sha512)``, an opinion with code of its
own beside the ``hmac`` template over each hash.

libsodium's streaming init takes a key of any length (a key longer than the block is hashed
first, RFC 2104 §2), as the template does. A running state is libsodium's state struct in a
ctypes buffer; copying the buffer copies the state (it holds no pointers).
"""

import ctypes
from collections.abc import Callable

from cryptoapi.alg import PRIORITY_PURE, Algorithm, AlgType, Buffer
from cryptoapi.providers.sodium._libsodium import SODIUM


class HmacState:
    """A running libsodium HMAC: ``update`` feeds it, ``digest`` finalizes a copy."""

    __slots__ = ("_core", "_state")

    def __init__(self, core: "SodiumHmac", state: ctypes.Array[ctypes.c_char]) -> None:
        self._core, self._state = core, state

    def update(self, data: Buffer, /) -> None:
        chunk = bytes(memoryview(data).cast("B"))  # a str has no buffer: TypeError
        self._core.update(self._state, chunk, len(chunk))

    def digest(self) -> bytes:
        out = ctypes.create_string_buffer(self._core.digestsize)
        self._core.final(self.copy()._state, out)
        return out.raw

    def copy(self) -> "HmacState":
        return HmacState(self._core, ctypes.create_string_buffer(self._state.raw))


class SodiumHmac:
    """The keyed ``shash`` core of ``hmac(sha<bits>)``: the keyed state, copied per use."""

    def __init__(self, bits: int) -> None:
        prefix = f"crypto_auth_hmacsha{bits}"
        self.digestsize = bits // 8
        self._init: Callable[..., int] = getattr(SODIUM, f"{prefix}_init")
        self.update: Callable[..., int] = getattr(SODIUM, f"{prefix}_update")
        self.final: Callable[..., int] = getattr(SODIUM, f"{prefix}_final")
        self._keyed = ctypes.create_string_buffer(getattr(SODIUM, f"{prefix}_statebytes")())

    def setkey(self, key: bytes, /) -> None:
        self._init(self._keyed, key, len(key))

    def init(self) -> HmacState:
        return HmacState(self, ctypes.create_string_buffer(self._keyed.raw))

    def digest(self, data: Buffer, /) -> bytes:
        state = self.init()
        state.update(data)
        return state.digest()


def _hmac(bits: int, blocksize: int) -> Algorithm:
    return Algorithm(
        name=f"hmac(sha{bits})",
        driver=f"hmac-sha{bits}-sodium",
        type=AlgType.SHASH,
        priority=PRIORITY_PURE,
        provider="sodium",
        create=lambda: SodiumHmac(bits),
        digestsize=bits // 8,
        blocksize=blocksize,
        keyed=True,
    )


ALGORITHMS = (_hmac(256, 64), _hmac(512, 128))
