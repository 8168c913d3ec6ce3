"""MD5, RFC 1321 §3 (padding §3.1-3.2, buffer §3.3, the four rounds §3.4, output §3.5).

MD5 is broken for collision resistance; it is here for interoperability and tests only.
The table T[i] = floor(2**32 * abs(sin(i))) is computed as §3.4 defines it. Words, the
length field and the output are little-endian; padding and buffering come from
:class:`MerkleDamgardHash`.
"""

import math
import struct

from cryptoapi.alg import PRIORITY_GENERIC, Buffer
from cryptoapi.providers.generic._merkle_damgard import MerkleDamgardHash, State
from cryptoapi.transforms.shash import unkeyed_shash

MASK = 0xFFFFFFFF

# §3.3: words A, B, C, D (the RFC lists them low-order byte first).
H0 = (0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476)
# §3.4: T[i] for i = 1..64.
T = tuple(int(4294967296 * abs(math.sin(i))) for i in range(1, 65))

Step = tuple[int, int, int]  # (k, s, T[i]): one operation a = b + ((a + f + X[k] + T[i]) <<< s)


def _steps(r: int, first: int, stride: int, shifts: tuple[int, ...]) -> tuple[Step, ...]:
    """The 16 operations [abcd k s i] of round ``r`` (0-3): k = (first + stride*j) mod 16."""
    return tuple(((first + stride * j) % 16, shifts[j % 4], T[16 * r + j]) for j in range(16))


ROUND1 = _steps(0, 0, 1, (7, 12, 17, 22))
ROUND2 = _steps(1, 1, 5, (5, 9, 14, 20))
ROUND3 = _steps(2, 5, 3, (4, 11, 16, 23))
ROUND4 = _steps(3, 0, 7, (6, 10, 15, 21))

_BLOCK = struct.Struct("<16I")
_OUTPUT = struct.Struct("<4I")


def md5_compress(state: State, data: Buffer, start: int, end: int) -> State:
    """§3.4 for each 64-byte block of ``data[start:end]``."""
    a0, b0, c0, d0 = state
    unpack = _BLOCK.unpack_from
    mask = MASK
    for offset in range(start, end, 64):
        x = unpack(data, offset)
        a, b, c, d = a0, b0, c0, d0
        # Each operation computes a = b + ((a + f(b, c, d) + X[k] + T[i]) <<< s), then the
        # roles rotate: the RFC's [ABCD ...] [DABC ...] [CDAB ...] [BCDA ...].
        for k, s, t in ROUND1:  # F(X, Y, Z) = XY v not(X) Z
            v = (a + (d ^ (b & (c ^ d))) + x[k] + t) & mask
            a, b, c, d = d, (b + (v << s | v >> (32 - s))) & mask, b, c
        for k, s, t in ROUND2:  # G(X, Y, Z) = XZ v Y not(Z)
            v = (a + (c ^ (d & (b ^ c))) + x[k] + t) & mask
            a, b, c, d = d, (b + (v << s | v >> (32 - s))) & mask, b, c
        for k, s, t in ROUND3:  # H(X, Y, Z) = X xor Y xor Z
            v = (a + (b ^ c ^ d) + x[k] + t) & mask
            a, b, c, d = d, (b + (v << s | v >> (32 - s))) & mask, b, c
        for k, s, t in ROUND4:  # I(X, Y, Z) = Y xor (X v not(Z)); the mask fixes ~'s sign
            v = (a + (c ^ (b | ~d)) + x[k] + t) & mask
            a, b, c, d = d, (b + (v << s | v >> (32 - s))) & mask, b, c
        a0 = (a0 + a) & mask
        b0 = (b0 + b) & mask
        c0 = (c0 + c) & mask
        d0 = (d0 + d) & mask
    return (a0, b0, c0, d0)


class Md5(MerkleDamgardHash):
    """MD5 (RFC 1321)."""

    __slots__ = ()

    name = "md5"
    digest_size = 16
    block_size = 64
    _initial_state = H0
    _length_order = "little"

    def _compress(self, state: State, data: Buffer, start: int, end: int) -> State:
        return md5_compress(state, data, start, end)

    def _output(self, state: State) -> bytes:
        """§3.5: A, B, C, D, each low-order byte first."""
        return _OUTPUT.pack(*state)


ALGORITHMS = (
    unkeyed_shash(
        name="md5",
        driver="md5-generic",
        provider="generic",
        priority=PRIORITY_GENERIC,
        new=Md5,
        digestsize=16,
        blocksize=64,
    ),
)
