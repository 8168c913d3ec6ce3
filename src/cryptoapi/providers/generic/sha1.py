"""SHA-1, FIPS 180-4 §6.1.

The constants K (§4.2.1) and the initial hash value (§5.3.1) are typed in from the spec.
Padding and buffering come from :class:`MerkleDamgardHash`.
"""

import struct

from cryptoapi.alg import PRIORITY_GENERIC, Buffer
from cryptoapi.providers.generic._merkle_damgard import MerkleDamgardHash, State
from cryptoapi.transforms.shash import unkeyed_shash

MASK = 0xFFFFFFFF

# §4.2.1: one constant per group of 20 rounds.
K0, K1, K2, K3 = 0x5A827999, 0x6ED9EBA1, 0x8F1BBCDC, 0xCA62C1D6
# §5.3.1
H0 = (0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0)

_BLOCK = struct.Struct(">16I")
_OUTPUT = struct.Struct(">5I")


def sha1_compress(state: State, data: Buffer, start: int, end: int) -> State:
    """§6.1.2 steps 1-4 for each 64-byte block of ``data[start:end]``."""
    h0, h1, h2, h3, h4 = state
    unpack = _BLOCK.unpack_from
    mask = MASK
    for offset in range(start, end, 64):
        # 1. Message schedule: W[t] = ROTL1(W[t-3] ^ W[t-8] ^ W[t-14] ^ W[t-16]).
        w = list(unpack(data, offset))
        for t in range(16, 80):
            x = w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16]
            w.append((x << 1 | x >> 31) & mask)
        # 2. Initialise the working variables.
        a, b, c, d, e = h0, h1, h2, h3, h4
        # 3. T = ROTL5(a) + f_t(b, c, d) + e + K_t + W[t]; e = d; d = c; c = ROTL30(b); b = a;
        #    a = T. ROTL5's junk above bit 31 is removed by masking T.
        for wt in w[0:20]:  # f = Ch(b, c, d) = (b & c) ^ (~b & d)
            t = (a << 5 | a >> 27) + (d ^ (b & (c ^ d))) + e + K0 + wt
            a, b, c, d, e = t & mask, a, (b << 30 | b >> 2) & mask, c, d
        for wt in w[20:40]:  # f = Parity(b, c, d) = b ^ c ^ d
            t = (a << 5 | a >> 27) + (b ^ c ^ d) + e + K1 + wt
            a, b, c, d, e = t & mask, a, (b << 30 | b >> 2) & mask, c, d
        for wt in w[40:60]:  # f = Maj(b, c, d) = (b & c) ^ (b & d) ^ (c & d)
            t = (a << 5 | a >> 27) + ((b & c) | (d & (b | c))) + e + K2 + wt
            a, b, c, d, e = t & mask, a, (b << 30 | b >> 2) & mask, c, d
        for wt in w[60:80]:  # f = Parity(b, c, d)
            t = (a << 5 | a >> 27) + (b ^ c ^ d) + e + K3 + wt
            a, b, c, d, e = t & mask, a, (b << 30 | b >> 2) & mask, c, d
        # 4. The intermediate hash value.
        h0 = (h0 + a) & mask
        h1 = (h1 + b) & mask
        h2 = (h2 + c) & mask
        h3 = (h3 + d) & mask
        h4 = (h4 + e) & mask
    return (h0, h1, h2, h3, h4)


class Sha1(MerkleDamgardHash):
    """SHA-1 (FIPS 180-4 §6.1)."""

    __slots__ = ()

    name = "sha1"
    digest_size = 20
    block_size = 64
    _initial_state = H0

    def _compress(self, state: State, data: Buffer, start: int, end: int) -> State:
        return sha1_compress(state, data, start, end)

    def _output(self, state: State) -> bytes:
        """H0 || ... || H4, big-endian."""
        return _OUTPUT.pack(*state)


ALGORITHMS = (
    unkeyed_shash(
        name="sha1",
        driver="sha1-generic",
        provider="generic",
        priority=PRIORITY_GENERIC,
        new=Sha1,
        digestsize=20,
        blocksize=64,
    ),
)
