"""GHASH, NIST SP 800-38D §6.4, over the multiplication in GF(2^128) of §6.3.

Bit order (§6.3): a 128-bit block X = x_0 x_1 ... x_127 stands for the polynomial
x_0 + x_1*a + ... + x_127*a^127, where x_0 is the *leftmost* bit, i.e. the most significant
bit of the first byte. Read as a big-endian integer, the coefficient of a^i is therefore bit
127 - i: multiplying by a is a right shift by one, and the coefficient of a^127 that falls
off the bottom comes back as a^128 = 1 + a + a^2 + a^7, i.e. XOR R = 0xE1 << 120 (§6.3,
Algorithm 1, "V >> 1 xor R").

Multiplying by H (Shoup's method, 8-bit tables): X * H is computed from the bytes of X, the
last byte first (it holds the highest-degree coefficients), by Horner's rule,
Z <- Z * a^8 + byte * H. ``byte * H`` is a 256-entry table made per key, and ``Z * a^8`` is
``Z >> 8`` plus the reduction of the 8 bits shifted out, another 256-entry table (fixed).
"""

from cryptoapi.alg import PRIORITY_GENERIC, Buffer
from cryptoapi.errors import InvalidKey
from cryptoapi.providers.generic._block_hash import BlockHash, KeyedStateCore
from cryptoapi.providers.records import record

BLOCK_SIZE = 16
R = 0xE1 << 120  # §6.3: R = 11100001 || 0^120

Table = tuple[int, ...]


def mul_a(v: int) -> int:
    """V * a: one step of §6.3 Algorithm 1 ("V >> 1", then xor R if the bit shifted out was 1)."""
    return (v >> 1) ^ (R * (v & 1))  # no branch on the (secret) bit


def gf128_mul(x: int, y: int) -> int:
    """X * Y in GF(2^128), bit by bit, exactly as §6.3 Algorithm 1 (used for checking)."""
    z = 0
    v = y
    for i in range(127, -1, -1):  # x_0 is the most significant bit of the integer
        z ^= v * (x >> i & 1)  # "if x_i = 1, Z xor V"
        v = mul_a(v)
    return z


def _reduction_table() -> Table:
    """REDUCE[t] = t * a^8, for t a polynomial in the lowest 8 bits (coefficients of a^120..a^127).

    Then Z * a^8 = (Z >> 8) ^ REDUCE[Z & 0xFF]: the higher bits only move down.
    """
    table = []
    for t in range(256):
        v = t
        for _ in range(8):
            v = mul_a(v)
        table.append(v)
    return tuple(table)


REDUCE = _reduction_table()


def byte_table(h: int) -> Table:
    """M[b] = b * H, for b a byte in the *first* byte position (coefficients of a^0..a^7).

    The byte's top bit 0x80 is the coefficient of a^0, so M[0x80] = H, M[0x40] = H * a, ...
    M[0x01] = H * a^7, and the rest are XORs of those (multiplication is linear).
    """
    table = [0] * 256
    v = h
    bit = 0x80
    while bit:
        table[bit] = v
        v = mul_a(v)
        bit >>= 1
    for b in range(256):
        if b & (b - 1):  # not a single bit: b = lowest bit + rest
            low = b & -b
            table[b] = table[low] ^ table[b ^ low]
    return tuple(table)


def ghash_blocks(y: int, m: Table, data: Buffer, start: int, end: int) -> int:
    """§6.4 steps 2-3 over the full blocks ``data[start:end]``: Y = (Y xor X_i) * H."""
    view = memoryview(data)
    from_bytes = int.from_bytes
    reduce = REDUCE
    for offset in range(start, end, BLOCK_SIZE):
        w = y ^ from_bytes(view[offset : offset + BLOCK_SIZE], "big")
        z = 0
        for b in w.to_bytes(BLOCK_SIZE, "little"):  # last byte of the block first
            z = (z >> 8) ^ reduce[z & 0xFF] ^ m[b]
        y = z
    return y


class Ghash(BlockHash):
    """A running GHASH_H, hashlib-like: update, digest (non-final), copy.

    A final partial block is zero-padded by ``digest()``, as the kernel's ``ghash`` does;
    GCM pads its A and C itself.
    """

    __slots__ = ("_m",)

    name = "ghash"
    digest_size = BLOCK_SIZE
    block_size = BLOCK_SIZE
    _initial_state = 0  # §6.4 step 2: Y_0 = 0^128

    def __init__(self, h: Buffer) -> None:
        if len(h) != BLOCK_SIZE:
            raise InvalidKey(f"GHASH key H must be 16 bytes, got {len(h)}")
        self._m = byte_table(int.from_bytes(h, "big"))
        super().__init__()

    def _compress(self, state: int, data: Buffer, start: int, end: int) -> int:
        return ghash_blocks(state, self._m, data, start, end)

    def _padding(self, buffered: int, length: int) -> bytes:
        return bytes(-buffered % BLOCK_SIZE)

    def _output(self, state: int) -> bytes:
        """Y_m (§6.4 step 4) of everything so far, a partial last block zero-padded."""
        return state.to_bytes(BLOCK_SIZE, "big")


class GhashCore(KeyedStateCore):
    """The ``ghash`` shash core, keyed with H (16 bytes)."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(Ghash)


ALGORITHMS = (
    record("ghash", "ghash-generic", GhashCore, provider="generic", priority=PRIORITY_GENERIC),
)
