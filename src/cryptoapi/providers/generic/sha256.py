"""SHA-224 and SHA-256, FIPS 180-4 §6.2 (SHA-256) and §6.3 (SHA-224).

Constants per §4.2.2 (K) and §5.3.3 (SHA-256 initial hash value) are derived from the
primes as the spec defines them; SHA-224's initial value (§5.3.2) has no formula in the
spec and is typed in. Padding and buffering come from :class:`MerkleDamgardHash`.
"""

import struct

from cryptoapi.alg import PRIORITY_GENERIC, Buffer
from cryptoapi.providers.generic._merkle_damgard import MerkleDamgardHash, State
from cryptoapi.transforms.shash import unkeyed_shash

MASK = 0xFFFFFFFF


def first_primes(count: int) -> list[int]:
    """The first ``count`` prime numbers, by trial division (count is at most 80 here)."""
    primes: list[int] = []
    candidate = 2
    while len(primes) < count:
        if all(candidate % p for p in primes if p * p <= candidate):
            primes.append(candidate)
        candidate += 1
    return primes


def integer_root(n: int, k: int) -> int:
    """floor(n ** (1/k)) exactly, by Newton's method on integers, starting above the root."""
    x = 1 << -(-n.bit_length() // k)
    while True:
        y = ((k - 1) * x + n // x ** (k - 1)) // k
        if y >= x:
            return x
        x = y


def fraction_bits(n: int, k: int, bits: int) -> int:
    """The first ``bits`` bits of the fractional part of the k-th root of ``n``."""
    return integer_root(n << (k * bits), k) & ((1 << bits) - 1)


# §4.2.2: first 32 bits of the fractional parts of the cube roots of the first 64 primes.
K = tuple(fraction_bits(p, 3, 32) for p in first_primes(64))
# §5.3.3: first 32 bits of the fractional parts of the square roots of the first 8 primes.
H0_SHA256 = tuple(fraction_bits(p, 2, 32) for p in first_primes(8))
# §5.3.2, as given in the spec.
H0_SHA224 = (
    0xC1059ED8, 0x367CD507, 0x3070DD17, 0xF70E5939,
    0xFFC00B31, 0x68581511, 0x64F98FA7, 0xBEFA4FA4,
)  # fmt: skip

_BLOCK = struct.Struct(">16I")
_OUTPUT = struct.Struct(">8I")


def sha256_compress(state: State, data: Buffer, start: int, end: int) -> State:
    """§6.2.2 steps 1-4 for each 64-byte block of ``data[start:end]``."""
    h0, h1, h2, h3, h4, h5, h6, h7 = state
    unpack = _BLOCK.unpack_from
    k = K
    mask = MASK
    for offset in range(start, end, 64):
        # 1. Message schedule (sigma0/sigma1 are the spec's lowercase sigma functions):
        #    W[t] = sigma1(W[t-2]) + W[t-7] + sigma0(W[t-15]) + W[t-16]
        #    sigma0(x) = ROTR7 ^ ROTR18 ^ SHR3;  sigma1(x) = ROTR17 ^ ROTR19 ^ SHR10
        #    Rotations leave junk above bit 31 that the final mask removes (addition is
        #    mod 2**32, so only the low bits of each term matter).
        w = list(unpack(data, offset))
        for t in range(16, 64):
            x = w[t - 2]
            y = w[t - 15]
            w.append(
                (
                    ((x >> 17 | x << 15) ^ (x >> 19 | x << 13) ^ (x >> 10))
                    + w[t - 7]
                    + ((y >> 7 | y << 25) ^ (y >> 18 | y << 14) ^ (y >> 3))
                    + w[t - 16]
                )
                & mask
            )
        # 2. Initialise the working variables.
        a, b, c, d, e, f, g, h = h0, h1, h2, h3, h4, h5, h6, h7
        # 3. The 64 rounds.
        for kt, wt in zip(k, w, strict=True):
            # T1 = h + Σ1(e) + Ch(e, f, g) + K[t] + W[t]
            #   Σ1(e) = ROTR6 ^ ROTR11 ^ ROTR25;  Ch(e, f, g) = (e & f) ^ (~e & g)
            t1 = (
                h
                + ((e >> 6 | e << 26) ^ (e >> 11 | e << 21) ^ (e >> 25 | e << 7))
                + (g ^ (e & (f ^ g)))
                + kt
                + wt
            )
            # T2 = Σ0(a) + Maj(a, b, c)
            #   Σ0(a) = ROTR2 ^ ROTR13 ^ ROTR22;  Maj(a, b, c) = (a & b) ^ (a & c) ^ (b & c)
            t2 = ((a >> 2 | a << 30) ^ (a >> 13 | a << 19) ^ (a >> 22 | a << 10)) + (
                (a & b) | (c & (a | b))
            )
            h, g, f, e, d, c, b, a = g, f, e, (d + t1) & mask, c, b, a, (t1 + t2) & mask
        # 4. The intermediate hash value.
        h0 = (h0 + a) & mask
        h1 = (h1 + b) & mask
        h2 = (h2 + c) & mask
        h3 = (h3 + d) & mask
        h4 = (h4 + e) & mask
        h5 = (h5 + f) & mask
        h6 = (h6 + g) & mask
        h7 = (h7 + h) & mask
    return (h0, h1, h2, h3, h4, h5, h6, h7)


class Sha256(MerkleDamgardHash):
    """SHA-256 (FIPS 180-4 §6.2)."""

    __slots__ = ()

    name = "sha256"
    digest_size = 32
    block_size = 64
    _initial_state = H0_SHA256

    def _compress(self, state: State, data: Buffer, start: int, end: int) -> State:
        return sha256_compress(state, data, start, end)

    def _output(self, state: State) -> bytes:
        """H0 || ... || H7 big-endian, truncated to the digest size (§6.3: SHA-224)."""
        return _OUTPUT.pack(*state)[: self.digest_size]


class Sha224(Sha256):
    """SHA-224 (FIPS 180-4 §6.3): SHA-256 from another initial value, cut to 224 bits."""

    __slots__ = ()

    name = "sha224"
    digest_size = 28
    _initial_state = H0_SHA224


ALGORITHMS = (
    unkeyed_shash(
        name="sha224",
        driver="sha224-generic",
        provider="generic",
        priority=PRIORITY_GENERIC,
        new=Sha224,
        digestsize=28,
        blocksize=64,
    ),
    unkeyed_shash(
        name="sha256",
        driver="sha256-generic",
        provider="generic",
        priority=PRIORITY_GENERIC,
        new=Sha256,
        digestsize=32,
        blocksize=64,
    ),
)
