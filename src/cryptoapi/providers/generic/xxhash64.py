"""XXH64, the 64-bit xxHash (xxHash specification v0.1.1, "xxh64" section: Cyan4973/xxHash
doc/xxhash_spec.md), as the kernel's ``xxhash64`` shash computes it
(``crypto/xxhash_generic.c``): the key is the seed, 8 bytes little-endian (0 unless set),
and the digest is the 64-bit hash as 8 little-endian bytes.

Four accumulators each take one 8-byte lane of every 32-byte stripe (step 2); from 32
bytes on they are converged (step 3), otherwise the accumulator starts at seed + PRIME64_5;
then the length is added (step 4), the remaining bytes consumed 8, 4 and 1 at a time
(step 5) and the result avalanched (step 6).
"""

import struct

from cryptoapi.alg import PRIORITY_GENERIC, Buffer
from cryptoapi.errors import InvalidKey
from cryptoapi.providers.generic._block_hash import BlockHash
from cryptoapi.providers.records import record

MASK = (1 << 64) - 1
PRIME64_1 = 0x9E3779B185EBCA87
PRIME64_2 = 0xC2B2AE3D27D4EB4F
PRIME64_3 = 0x165667B19E3779F9
PRIME64_4 = 0x85EBCA77C2B2AE63
PRIME64_5 = 0x27D4EB2F165667C5
KEY_SIZE = 8
STRIPE = 32

Lanes = tuple[int, int, int, int]
_STRIPE = struct.Struct("<4Q")


def rotl(x: int, n: int) -> int:
    return (x << n | x >> (64 - n)) & MASK


def xxh64_round(acc: int, lane: int) -> int:
    """Step 2: acc + lane * PRIME64_2, rotated left 31, times PRIME64_1."""
    return rotl((acc + lane * PRIME64_2) & MASK, 31) * PRIME64_1 & MASK


def initial_lanes(seed: int) -> Lanes:
    """Step 1: the four accumulators."""
    return (
        (seed + PRIME64_1 + PRIME64_2) & MASK,
        (seed + PRIME64_2) & MASK,
        seed,
        (seed - PRIME64_1) & MASK,
    )


def converge(lanes: Lanes) -> int:
    """Step 3: the accumulators mixed into one, then each merged in again."""
    v1, v2, v3, v4 = lanes
    acc = (rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18)) & MASK
    for lane in lanes:
        acc = ((acc ^ xxh64_round(0, lane)) * PRIME64_1 + PRIME64_4) & MASK
    return acc


def consume_tail(acc: int, tail: bytes) -> int:
    """Step 5: the last 0-31 bytes, as 8-byte lanes, one 4-byte lane, then single bytes."""
    offset = 0
    while len(tail) - offset >= 8:
        (lane,) = struct.unpack_from("<Q", tail, offset)
        acc = (rotl(acc ^ xxh64_round(0, lane), 27) * PRIME64_1 + PRIME64_4) & MASK
        offset += 8
    if len(tail) - offset >= 4:
        (lane,) = struct.unpack_from("<I", tail, offset)
        acc = (rotl(acc ^ (lane * PRIME64_1 & MASK), 23) * PRIME64_2 + PRIME64_3) & MASK
        offset += 4
    for byte in tail[offset:]:
        acc = rotl(acc ^ (byte * PRIME64_5 & MASK), 11) * PRIME64_1 & MASK
    return acc


def avalanche(acc: int) -> int:
    """Step 6."""
    acc = (acc ^ acc >> 33) * PRIME64_2 & MASK
    acc = (acc ^ acc >> 29) * PRIME64_3 & MASK
    return acc ^ acc >> 32


class Xxh64(BlockHash):
    """A running XXH64 from a seed: update, digest (non-final), copy."""

    __slots__ = ("_seed",)

    name = "xxhash64"
    digest_size = 8
    block_size = STRIPE
    _initial_state = initial_lanes(0)

    def __init__(self, seed: int = 0) -> None:
        super().__init__()
        self._seed = seed
        self._state = initial_lanes(seed)

    def _compress(self, state: Lanes, data: Buffer, start: int, end: int) -> Lanes:
        """Step 2 for each 32-byte stripe of ``data[start:end]``."""
        v1, v2, v3, v4 = state
        for offset in range(start, end, STRIPE):
            l1, l2, l3, l4 = _STRIPE.unpack_from(data, offset)
            v1 = xxh64_round(v1, l1)
            v2 = xxh64_round(v2, l2)
            v3 = xxh64_round(v3, l3)
            v4 = xxh64_round(v4, l4)
        return (v1, v2, v3, v4)

    def digest(self) -> bytes:
        """Steps 3-6 on a copy of the state; the hash stays open for more updates."""
        # Step 3, or for a message shorter than a stripe the accumulator seed + PRIME64_5.
        acc = converge(self._state) if self._length >= STRIPE else (self._seed + PRIME64_5) & MASK
        acc = (acc + self._length) & MASK
        return avalanche(consume_tail(acc, self._buffer)).to_bytes(8, "little")


class Xxh64Core:
    """The ``xxhash64`` shash core; the key is the 8-byte little-endian seed."""

    __slots__ = ("_seed",)

    def __init__(self) -> None:
        self._seed = 0

    def setkey(self, key: bytes, /) -> None:
        if len(key) != KEY_SIZE:
            raise InvalidKey(f"xxhash64 key (the seed) must be 8 bytes, got {len(key)}")
        self._seed = int.from_bytes(key, "little")

    def init(self) -> Xxh64:
        return Xxh64(self._seed)

    def digest(self, data: Buffer, /) -> bytes:
        state = Xxh64(self._seed)
        state.update(data)
        return state.digest()


ALGORITHMS = (
    record(
        "xxhash64", "xxhash64-generic", Xxh64Core, provider="generic", priority=PRIORITY_GENERIC
    ),
)
