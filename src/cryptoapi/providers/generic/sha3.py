"""SHA3-224/256/384/512, FIPS 202: Keccak-f[1600] (§3), the sponge (§4), pad10*1 (§5.1)
and the SHA-3 functions (§6.1).

The state is a flat list of 25 lanes of 64 bits, lane (x, y) at index x + 5y; a lane's bit
z is bit z of the int, so bytes map to lanes little-endian (§B.1). The rho offsets (§3.2.2)
and the round constants (§3.2.5) are derived by the spec's algorithms. Block buffering is
shared with the Merkle-Damgård hashes (:class:`BlockHash`); only the padding differs.
"""

import struct
from typing import ClassVar

from cryptoapi.alg import PRIORITY_GENERIC, Buffer
from cryptoapi.providers.generic._block_hash import BlockHash
from cryptoapi.providers.generic._merkle_damgard import State
from cryptoapi.transforms.shash import unkeyed_shash

MASK = 0xFFFFFFFFFFFFFFFF
ROUNDS = 24  # n_r = 12 + 2l with l = 6 for b = 1600


def rho_offsets() -> list[int]:
    """§3.2.2 Algorithm 2: the rotation of lane (x, y), indexed x + 5y."""
    offsets = [0] * 25
    x, y = 1, 0
    for t in range(24):
        offsets[x + 5 * y] = (t + 1) * (t + 2) // 2 % 64
        x, y = y, (2 * x + 3 * y) % 5
    return offsets


def rc_bit(t: int) -> int:
    """§3.2.5 Algorithm 5: the output bit of the LFSR x^8 + x^6 + x^5 + x^4 + 1 at step t."""
    r = 1  # R = 10000000, bit i of the int is R[i]
    for _ in range(t % 255):
        r <<= 1  # R = 0 || R
        if r & 0x100:  # R[0..8] ^= R[8] at positions 0, 4, 5, 6; then Trunc8
            r ^= 0x171
    return r & 1


def round_constant(ir: int) -> int:
    """§3.2.5 Algorithm 6: RC for round ir, bit 2**j - 1 = rc(j + 7 ir) for j = 0..6."""
    return sum(rc_bit(j + 7 * ir) << ((1 << j) - 1) for j in range(7))


RC = tuple(round_constant(ir) for ir in range(ROUNDS))

# rho then pi (§3.2.3: A'[x, y] = A[(x + 3y) mod 5, x]) as one step: destination lane
# x + 5y takes source lane src = (x + 3y) mod 5 + 5x, whose column is src mod 5, rotated by
# that source's rho offset.
_RHO = rho_offsets()
RHO_PI = tuple(
    (src, src % 5, _RHO[src])
    for src in ((x + 3 * y) % 5 + 5 * x for y in range(5) for x in range(5))
)


def keccak_f1600(a: list[int]) -> list[int]:
    """§3.3 Keccak-p[1600, 24] = Keccak-f[1600]: the 24 rounds theta, rho, pi, chi, iota.

    Returns the permuted state as a new list; ``a`` itself is left as it was.
    """
    mask = MASK
    rho_pi = RHO_PI
    for rc in RC:
        # theta: C[x] = A[x, 0] ^ ... ^ A[x, 4];  D[x] = C[x - 1] ^ ROT(C[x + 1], 1)
        c0 = a[0] ^ a[5] ^ a[10] ^ a[15] ^ a[20]
        c1 = a[1] ^ a[6] ^ a[11] ^ a[16] ^ a[21]
        c2 = a[2] ^ a[7] ^ a[12] ^ a[17] ^ a[22]
        c3 = a[3] ^ a[8] ^ a[13] ^ a[18] ^ a[23]
        c4 = a[4] ^ a[9] ^ a[14] ^ a[19] ^ a[24]
        d = (
            c4 ^ ((c1 << 1 | c1 >> 63) & mask),
            c0 ^ ((c2 << 1 | c2 >> 63) & mask),
            c1 ^ ((c3 << 1 | c3 >> 63) & mask),
            c2 ^ ((c4 << 1 | c4 >> 63) & mask),
            c3 ^ ((c0 << 1 | c0 >> 63) & mask),
        )
        # theta's A[x, y] ^= D[x], then rho and pi, lane by lane in destination order:
        #    B[x, y] = ROT(A[x', y'] ^ D[x'], r[x', y']) with (x', y') = ((x + 3y) mod 5, x)
        b = [((v := a[src] ^ d[sx]) << r | v >> (64 - r)) & mask for src, sx, r in rho_pi]
        # chi: A[x, y] = B[x, y] ^ (~B[x + 1, y] & B[x + 2, y]), row by row
        a = []
        for y in range(0, 25, 5):
            b0, b1, b2, b3, b4 = b[y : y + 5]
            a += (
                b0 ^ (~b1 & b2),
                b1 ^ (~b2 & b3),
                b2 ^ (~b3 & b4),
                b3 ^ (~b4 & b0),
                b4 ^ (~b0 & b1),
            )
        # iota: A[0, 0] ^= RC[ir]
        a[0] ^= rc
    return a


class _Sha3(BlockHash):
    """SHA3-d (§6.1): SPONGE[Keccak-f[1600], pad10*1, 1600 - 2d](M || 01, d)."""

    __slots__ = ()

    _initial_state = (0,) * 25
    _block: ClassVar[struct.Struct]  # one rate-sized block as little-endian 64-bit lanes

    def __init_subclass__(cls) -> None:
        super().__init_subclass__()
        cls._block = struct.Struct(f"<{cls.block_size // 8}Q")

    def _compress(self, state: State, data: Buffer, start: int, end: int) -> State:
        """§4 absorbing: for each rate-sized block P_i, S = f(S ^ (P_i || 0^c))."""
        lanes = list(state)
        unpack = self._block.unpack_from
        for offset in range(start, end, self.block_size):
            for i, word in enumerate(unpack(data, offset)):
                lanes[i] ^= word
            lanes = keccak_f1600(lanes)
        return tuple(lanes)

    def _padding(self, buffered: int, length: int) -> bytes:
        """The SHA-3 suffix 01 then pad10*1 (§5.1) to a whole block, as bytes (bits LSB
        first): 0x06, zeros, 0x80; or the single byte 0x86 when one byte is left."""
        room = self.block_size - buffered
        if room == 1:
            return b"\x86"
        return b"\x06" + bytes(room - 2) + b"\x80"

    def _output(self, state: State) -> bytes:
        """§4 squeezing: d <= r for every SHA-3, so one Trunc_d of the state suffices."""
        return struct.pack("<25Q", *state)[: self.digest_size]


class Sha3_224(_Sha3):
    """SHA3-224: capacity 448 bits, rate 1152 bits = 144 bytes."""

    __slots__ = ()

    name = "sha3-224"
    digest_size = 28
    block_size = 144


class Sha3_256(_Sha3):
    """SHA3-256: capacity 512 bits, rate 1088 bits = 136 bytes."""

    __slots__ = ()

    name = "sha3-256"
    digest_size = 32
    block_size = 136


class Sha3_384(_Sha3):
    """SHA3-384: capacity 768 bits, rate 832 bits = 104 bytes."""

    __slots__ = ()

    name = "sha3-384"
    digest_size = 48
    block_size = 104


class Sha3_512(_Sha3):
    """SHA3-512: capacity 1024 bits, rate 576 bits = 72 bytes."""

    __slots__ = ()

    name = "sha3-512"
    digest_size = 64
    block_size = 72


ALGORITHMS = (
    unkeyed_shash(
        name="sha3-224",
        driver="sha3-224-generic",
        provider="generic",
        priority=PRIORITY_GENERIC,
        new=Sha3_224,
        digestsize=28,
        blocksize=144,
    ),
    unkeyed_shash(
        name="sha3-256",
        driver="sha3-256-generic",
        provider="generic",
        priority=PRIORITY_GENERIC,
        new=Sha3_256,
        digestsize=32,
        blocksize=136,
    ),
    unkeyed_shash(
        name="sha3-384",
        driver="sha3-384-generic",
        provider="generic",
        priority=PRIORITY_GENERIC,
        new=Sha3_384,
        digestsize=48,
        blocksize=104,
    ),
    unkeyed_shash(
        name="sha3-512",
        driver="sha3-512-generic",
        provider="generic",
        priority=PRIORITY_GENERIC,
        new=Sha3_512,
        digestsize=64,
        blocksize=72,
    ),
)
