"""Poly1305, RFC 8439 §2.5: a one-time authenticator evaluating a polynomial mod 2^130 - 5.

The 32-byte key is r || s. r is clamped (§2.5); each 16-byte message block, read as a
little-endian number with a 1 bit appended above its top byte, is added to the accumulator,
which is then multiplied by r modulo p. The tag is (accumulator + s) mod 2^128.

Python's integers do the arithmetic. Between blocks the accumulator is only partially
reduced, using 2^130 = 5 (mod p): it stays below 2^131, which is as good for the next step
and cheaper than a division; ``digest()`` reduces it fully.
"""

from cryptoapi.alg import PRIORITY_GENERIC, Buffer
from cryptoapi.errors import InvalidKey
from cryptoapi.providers.generic._block_hash import BlockHash
from cryptoapi.providers.records import record

KEY_SIZE = 32
BLOCK_SIZE = 16
TAG_SIZE = 16

P = (1 << 130) - 5
CLAMP = 0x0FFFFFFC0FFFFFFC0FFFFFFC0FFFFFFF  # §2.5.1: clear the bits r must not have
MASK_130 = (1 << 130) - 1
MASK_128 = (1 << 128) - 1
HIGH_BIT = 1 << 128  # the 0x01 byte appended to a full 16-byte block


def poly1305_blocks(acc: int, r: int, data: Buffer, start: int, end: int) -> int:
    """Absorb the full blocks ``data[start:end]``: acc = (acc + block + 2^128) * r mod p."""
    view = memoryview(data)
    from_bytes = int.from_bytes
    for offset in range(start, end, BLOCK_SIZE):
        acc = (acc + (from_bytes(view[offset : offset + BLOCK_SIZE], "little") | HIGH_BIT)) * r
        acc = (acc & MASK_130) + 5 * (acc >> 130)  # partial reduction: 2^130 = 5 (mod p)
    return acc


class Poly1305(BlockHash):
    """A running Poly1305 MAC, hashlib-like: update, digest (non-final), copy."""

    __slots__ = ("_r", "_s")

    name = "poly1305"
    digest_size = TAG_SIZE
    block_size = BLOCK_SIZE
    _initial_state = 0  # the accumulator

    def __init__(self, key: Buffer) -> None:
        if len(key) != KEY_SIZE:
            raise InvalidKey(f"Poly1305 key must be 32 bytes, got {len(key)}")
        key = bytes(key)
        self._r = int.from_bytes(key[:16], "little") & CLAMP
        self._s = int.from_bytes(key[16:], "little")
        super().__init__()

    def _compress(self, state: int, data: Buffer, start: int, end: int) -> int:
        return poly1305_blocks(state, self._r, data, start, end)

    def digest(self) -> bytes:
        """The 16-byte tag of everything so far; the state stays open for more updates."""
        acc: int = self._state
        if self._buffer:
            # A short last block gets its 0x01 byte right after its last byte (§2.5).
            block = int.from_bytes(self._buffer + b"\x01", "little")
            acc = (acc + block) * self._r
        return ((acc % P + self._s) & MASK_128).to_bytes(TAG_SIZE, "little")


class Poly1305Core:
    """The ``poly1305`` shash core: keyed with the 32-byte one-time key r || s, each message
    then MACed by a fresh :class:`Poly1305` (setting up one costs two integer conversions)."""

    __slots__ = ("_key",)

    def setkey(self, key: bytes, /) -> None:
        if len(key) != KEY_SIZE:
            raise InvalidKey(f"Poly1305 key must be 32 bytes, got {len(key)}")
        self._key = bytes(key)

    def init(self) -> Poly1305:
        return Poly1305(self._key)

    def digest(self, data: Buffer, /) -> bytes:
        mac = Poly1305(self._key)
        mac.update(data)
        return mac.digest()


ALGORITHMS = (
    record(
        "poly1305", "poly1305-generic", Poly1305Core, provider="generic", priority=PRIORITY_GENERIC
    ),
)
