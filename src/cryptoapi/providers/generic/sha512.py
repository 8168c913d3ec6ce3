"""SHA-384 and SHA-512, FIPS 180-4 §6.4 (SHA-512) and §6.5 (SHA-384).

Constants are derived from the primes as the spec defines them: K (§4.2.3) from cube roots
of the first 80 primes, the SHA-512 initial value (§5.3.5) from square roots of the first 8
and the SHA-384 one (§5.3.4) from square roots of the 9th to 16th. Padding (with a 128-bit
length field) and buffering come from :class:`MerkleDamgardHash`.
"""

import struct

from cryptoapi.alg import PRIORITY_GENERIC, Buffer
from cryptoapi.providers.generic._merkle_damgard import MerkleDamgardHash, State
from cryptoapi.providers.generic.sha256 import first_primes, fraction_bits
from cryptoapi.transforms.shash import unkeyed_shash

MASK = 0xFFFFFFFFFFFFFFFF

_PRIMES = first_primes(80)
# §4.2.3: first 64 bits of the fractional parts of the cube roots of the first 80 primes.
K = tuple(fraction_bits(p, 3, 64) for p in _PRIMES)
# §5.3.5: first 64 bits of the fractional parts of the square roots of the first 8 primes.
H0_SHA512 = tuple(fraction_bits(p, 2, 64) for p in _PRIMES[:8])
# §5.3.4: the same for the 9th through 16th primes.
H0_SHA384 = tuple(fraction_bits(p, 2, 64) for p in _PRIMES[8:16])

_BLOCK = struct.Struct(">16Q")
_OUTPUT = struct.Struct(">8Q")


def sha512_compress(state: State, data: Buffer, start: int, end: int) -> State:
    """§6.4.2 steps 1-4 for each 128-byte block of ``data[start:end]``."""
    h0, h1, h2, h3, h4, h5, h6, h7 = state
    unpack = _BLOCK.unpack_from
    k = K
    mask = MASK
    for offset in range(start, end, 128):
        # 1. Message schedule (sigma0/sigma1 are the spec's lowercase sigma functions):
        #    W[t] = sigma1(W[t-2]) + W[t-7] + sigma0(W[t-15]) + W[t-16]
        #    sigma0(x) = ROTR1 ^ ROTR8 ^ SHR7;  sigma1(x) = ROTR19 ^ ROTR61 ^ SHR6
        #    Junk above bit 63 from the rotations is removed by the final mask.
        w = list(unpack(data, offset))
        for t in range(16, 80):
            x = w[t - 2]
            y = w[t - 15]
            w.append(
                (
                    ((x >> 19 | x << 45) ^ (x >> 61 | x << 3) ^ (x >> 6))
                    + w[t - 7]
                    + ((y >> 1 | y << 63) ^ (y >> 8 | y << 56) ^ (y >> 7))
                    + w[t - 16]
                )
                & mask
            )
        # 2. Initialise the working variables.
        a, b, c, d, e, f, g, h = h0, h1, h2, h3, h4, h5, h6, h7
        # 3. The 80 rounds.
        for kt, wt in zip(k, w, strict=True):
            # T1 = h + Σ1(e) + Ch(e, f, g) + K[t] + W[t]
            #   Σ1(e) = ROTR14 ^ ROTR18 ^ ROTR41;  Ch(e, f, g) = (e & f) ^ (~e & g)
            t1 = (
                h
                + ((e >> 14 | e << 50) ^ (e >> 18 | e << 46) ^ (e >> 41 | e << 23))
                + (g ^ (e & (f ^ g)))
                + kt
                + wt
            )
            # T2 = Σ0(a) + Maj(a, b, c)
            #   Σ0(a) = ROTR28 ^ ROTR34 ^ ROTR39;  Maj(a, b, c) = (a & b) ^ (a & c) ^ (b & c)
            t2 = ((a >> 28 | a << 36) ^ (a >> 34 | a << 30) ^ (a >> 39 | a << 25)) + (
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


class Sha512(MerkleDamgardHash):
    """SHA-512 (FIPS 180-4 §6.4)."""

    __slots__ = ()

    name = "sha512"
    digest_size = 64
    block_size = 128
    _initial_state = H0_SHA512
    _length_bytes = 16

    def _compress(self, state: State, data: Buffer, start: int, end: int) -> State:
        return sha512_compress(state, data, start, end)

    def _output(self, state: State) -> bytes:
        """H0 || ... || H7 big-endian, truncated to the digest size (§6.5: SHA-384)."""
        return _OUTPUT.pack(*state)[: self.digest_size]


class Sha384(Sha512):
    """SHA-384 (FIPS 180-4 §6.5): SHA-512 from another initial value, cut to 384 bits."""

    __slots__ = ()

    name = "sha384"
    digest_size = 48
    _initial_state = H0_SHA384


ALGORITHMS = (
    unkeyed_shash(
        name="sha384",
        driver="sha384-generic",
        provider="generic",
        priority=PRIORITY_GENERIC,
        new=Sha384,
        digestsize=48,
        blocksize=128,
    ),
    unkeyed_shash(
        name="sha512",
        driver="sha512-generic",
        provider="generic",
        priority=PRIORITY_GENERIC,
        new=Sha512,
        digestsize=64,
        blocksize=128,
    ),
)
