"""BLAKE2b and BLAKE2s, RFC 7693 §3: one construction over 64- or 32-bit words.

The two differ only in their parameters (§2.1): word size w, rounds r, the rotation
constants R1-R4 of the mixing function G (§3.1) and the initial value IV (§2.6: the
SHA-512 and SHA-256 initial values, here derived from the primes as in FIPS 180-4). Both
use the message schedule SIGMA (§2.7).

Hashing (§3.3): h = IV, with the parameter block's first word (0x0101kknn: fanout 1,
depth 1, key length kk, digest length nn) XORed into h[0]; a non-empty key, zero-padded
to one block, is the first block. Every block is compressed with the byte count t so far
(§3.2); the last one, zero-padded, with the final flag. The last block is kept back until
more input arrives, since it must be compressed as the last one.
"""

import struct
from dataclasses import dataclass
from typing import Self

from cryptoapi.alg import Buffer
from cryptoapi.errors import InvalidKey
from cryptoapi.providers.generic.sha256 import first_primes, fraction_bits

# §2.7, as given in the RFC.
SIGMA = (
    (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
    (14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3),
    (11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4),
    (7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8),
    (9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13),
    (2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9),
    (12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11),
    (13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10),
    (6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5),
    (10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0),
)

# §3.2: G is applied to the columns, then to the diagonals, of the 4x4 work vector.
_G_INDEXES = (
    (0, 4, 8, 12), (1, 5, 9, 13), (2, 6, 10, 14), (3, 7, 11, 15),
    (0, 5, 10, 15), (1, 6, 11, 12), (2, 7, 8, 13), (3, 4, 9, 14),
)  # fmt: skip


@dataclass(frozen=True)
class Blake2Params:
    """The parameters of §2.1 and the sizes of one variant."""

    name: str  # "BLAKE2b" or "BLAKE2s", for messages
    word_bits: int
    rounds: int
    rotations: tuple[int, int, int, int]
    max_digest: int  # bytes, = max key length (§2.1: nn and kk up to 64 or 32)
    iv: tuple[int, ...]

    @property
    def block_size(self) -> int:
        return 16 * self.word_bits // 8


def initial_value(word_bits: int) -> tuple[int, ...]:
    """§2.6: the first w bits of the fractional parts of the square roots of the first 8
    primes (the SHA-512 and SHA-256 initial values)."""
    return tuple(fraction_bits(p, 2, word_bits) for p in first_primes(8))


def blake2_compress(
    params: Blake2Params, h: tuple[int, ...], block: Buffer, t: int, last: bool
) -> tuple[int, ...]:
    """§3.2 F(h, m, t, f): the compression of one block, t the bytes hashed so far."""
    w = params.word_bits
    mask = (1 << w) - 1
    r1, r2, r3, r4 = params.rotations
    m = struct.unpack(f"<16{'Q' if w == 64 else 'I'}", block)
    v = [*h, *params.iv]
    v[12] ^= t & mask  # low word of the offset counter
    v[13] ^= t >> w  # high word
    if last:
        v[14] ^= mask  # the final block flag
    for round_number in range(params.rounds):
        s = SIGMA[round_number % 10]
        for i, (a, b, c, d) in enumerate(_G_INDEXES):
            # §3.1 G(v[a], v[b], v[c], v[d], x, y) with x = m[s[2i]], y = m[s[2i+1]].
            va = (v[a] + v[b] + m[s[2 * i]]) & mask
            vd = v[d] ^ va
            vd = (vd >> r1 | vd << (w - r1)) & mask
            vc = (v[c] + vd) & mask
            vb = v[b] ^ vc
            vb = (vb >> r2 | vb << (w - r2)) & mask
            va = (va + vb + m[s[2 * i + 1]]) & mask
            vd ^= va
            vd = (vd >> r3 | vd << (w - r3)) & mask
            vc = (vc + vd) & mask
            vb ^= vc
            v[a], v[b], v[c], v[d] = va, (vb >> r4 | vb << (w - r4)) & mask, vc, vd
    return tuple(h[i] ^ v[i] ^ v[i + 8] for i in range(8))


class Blake2:
    """A running BLAKE2 hash, hashlib-like: update, digest (non-final), copy."""

    __slots__ = ("_buffer", "_digest_size", "_h", "_params", "_t")

    def __init__(self, params: Blake2Params, digest_size: int, key: bytes = b"") -> None:
        check_key(params, key)
        block_size = params.block_size
        self._params = params
        self._digest_size = digest_size
        iv = params.iv
        self._h = (iv[0] ^ 0x01010000 ^ len(key) << 8 ^ digest_size, *iv[1:])
        self._t = 0  # bytes compressed so far
        # The key block, held back like any block until more input arrives (§3.3).
        self._buffer = key + bytes(block_size - len(key)) if key else b""

    def update(self, data: Buffer, /) -> None:
        """Compress every buffered block except the last, which may be the final one."""
        view = memoryview(data)  # rejects str with TypeError, as hashlib does
        if not view.nbytes:
            return
        pending = self._buffer + view.cast("B")
        block_size = self._params.block_size
        keep = (len(pending) - 1) // block_size * block_size
        h, t = self._h, self._t
        for start in range(0, keep, block_size):
            t += block_size
            h = blake2_compress(self._params, h, pending[start : start + block_size], t, False)
        self._h, self._t, self._buffer = h, t, pending[keep:]

    def digest(self) -> bytes:
        """The digest so far: the last block, zero-padded, compressed as final."""
        block_size = self._params.block_size
        last = self._buffer + bytes(block_size - len(self._buffer))
        h = blake2_compress(self._params, self._h, last, self._t + len(self._buffer), True)
        fmt = f"<8{'Q' if self._params.word_bits == 64 else 'I'}"
        return struct.pack(fmt, *h)[: self._digest_size]

    def hexdigest(self) -> str:
        return self.digest().hex()

    def copy(self) -> Self:
        """An independent hash in the same state (every field is immutable)."""
        other = object.__new__(type(self))
        for slot in self.__slots__:
            setattr(other, slot, getattr(self, slot))
        return other


def check_key(params: Blake2Params, key: Buffer) -> None:
    """§2.1: a key of at most 64 (BLAKE2b) or 32 (BLAKE2s) bytes; empty means unkeyed."""
    if len(key) > params.max_digest:
        raise InvalidKey(
            f"{params.name} key must be at most {params.max_digest} bytes, got {len(key)}"
        )


class Blake2Core:
    """The keyed ``shash`` core of one digest size: the key (empty: unkeyed) is kept,
    every message hashed by a fresh :class:`Blake2`."""

    __slots__ = ("_digest_size", "_key", "_params")

    def __init__(self, params: Blake2Params, digest_size: int) -> None:
        self._params = params
        self._digest_size = digest_size
        self._key = b""

    def setkey(self, key: bytes, /) -> None:
        check_key(self._params, key)
        self._key = bytes(key)

    def init(self) -> Blake2:
        return Blake2(self._params, self._digest_size, self._key)

    def digest(self, data: Buffer, /) -> bytes:
        state = self.init()
        state.update(data)
        return state.digest()
