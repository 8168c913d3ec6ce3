"""SM3, GB/T 32905-2016 (in English: draft-sca-cfrg-sm3-02 §4-5): a Merkle-Damgård hash of
64-byte blocks into a 256-bit digest.

Padding is SHA-256's (§5.2: a 1 bit, zeros, the 64-bit big-endian bit length), supplied by
:class:`MerkleDamgardHash`. Each block is expanded to 68 + 64 words (§5.3.2) and compressed
in 64 rounds (§5.3.3). The constants are the standard's (§4.1-4.2).
"""

import struct

from cryptoapi.alg import PRIORITY_GENERIC, Buffer
from cryptoapi.providers.generic._merkle_damgard import MerkleDamgardHash, State
from cryptoapi.transforms.shash import unkeyed_shash

MASK = 0xFFFFFFFF

# §4.1: the initial value IV.
IV = (
    0x7380166F, 0x4914B2B9, 0x172442D7, 0xDA8A0600,
    0xA96F30BC, 0x163138AA, 0xE38DEE4D, 0xB0FB0E4E,
)  # fmt: skip


def rotl(x: int, n: int) -> int:
    """x <<< n on 32-bit words."""
    n %= 32
    return (x << n | x >> (32 - n)) & MASK


# §4.2: T_j is 79cc4519 for rounds 0-15 and 7a879d8a for 16-63; the compression function
# uses T_j <<< (j mod 32), computed here once per round.
T_ROTATED = tuple(rotl(0x79CC4519 if j < 16 else 0x7A879D8A, j) for j in range(64))

_BLOCK = struct.Struct(">16I")
_OUTPUT = struct.Struct(">8I")


def p0(x: int) -> int:
    """§4.4 P0(X) = X ^ (X <<< 9) ^ (X <<< 17)."""
    return x ^ rotl(x, 9) ^ rotl(x, 17)


def p1(x: int) -> int:
    """§4.4 P1(X) = X ^ (X <<< 15) ^ (X <<< 23)."""
    return x ^ rotl(x, 15) ^ rotl(x, 23)


def expand(block: tuple[int, ...]) -> list[int]:
    """§5.3.2: W_0..W_67 from the 16 words of a block (W'_j = W_j ^ W_(j+4) is taken in
    the rounds)."""
    w = list(block)
    for j in range(16, 68):
        w.append(p1(w[j - 16] ^ w[j - 9] ^ rotl(w[j - 3], 15)) ^ rotl(w[j - 13], 7) ^ w[j - 6])
    return w


def sm3_compress(state: State, data: Buffer, start: int, end: int) -> State:
    """§5.3.3 CF(V_i, B_i) for each 64-byte block of ``data[start:end]``."""
    for offset in range(start, end, 64):
        w = expand(_BLOCK.unpack_from(data, offset))
        a, b, c, d, e, f, g, h = state
        for j in range(64):
            a12 = rotl(a, 12)
            ss1 = rotl((a12 + e + T_ROTATED[j]) & MASK, 7)
            ss2 = ss1 ^ a12
            if j < 16:  # FF_j and GG_j: X ^ Y ^ Z in rounds 0-15 (§4.3)
                ff = a ^ b ^ c
                gg = e ^ f ^ g
            else:  # majority, and choice (X & Y) | (~X & Z), in rounds 16-63
                ff = (a & b) | (a & c) | (b & c)
                gg = (e & f) | (~e & g)
            tt1 = (ff + d + ss2 + (w[j] ^ w[j + 4])) & MASK
            tt2 = (gg + h + ss1 + w[j]) & MASK
            d, c, b, a = c, rotl(b, 9), a, tt1
            h, g, f, e = g, rotl(f, 19), e, p0(tt2)
        state = tuple(
            x ^ y for x, y in zip(state, (a, b, c, d, e, f, g, h), strict=True)
        )  # V_(i+1) = ABCDEFGH ^ V_i
    return state


class Sm3(MerkleDamgardHash):
    """SM3 (GB/T 32905-2016)."""

    __slots__ = ()

    name = "sm3"
    digest_size = 32
    block_size = 64
    _initial_state = IV

    def _compress(self, state: State, data: Buffer, start: int, end: int) -> State:
        return sm3_compress(state, data, start, end)

    def _output(self, state: State) -> bytes:
        """§5.4: y = ABCDEFGH, big-endian."""
        return _OUTPUT.pack(*state)


ALGORITHMS = (
    unkeyed_shash(
        name="sm3",
        driver="sm3-generic",
        provider="generic",
        priority=PRIORITY_GENERIC,
        new=Sm3,
        digestsize=32,
        blocksize=64,
    ),
)
