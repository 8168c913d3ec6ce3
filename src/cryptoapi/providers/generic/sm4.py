"""SM4, GB/T 32907-2016 (in English: draft-ribose-cfrg-sm4-10 §5-7): a 128-bit block
cipher with a 128-bit key, 32 rounds of an unbalanced Feistel network on four 32-bit words.

Round i (§6.2): X_(i+4) = X_i ^ T(X_(i+1) ^ X_(i+2) ^ X_(i+3) ^ rk_i), where T = L(tau(.)),
tau applies the S-box to each byte and L(B) = B ^ B<<<2 ^ B<<<10 ^ B<<<18 ^ B<<<24; the
output is the last four words reversed (§6.3). The key schedule (§7) runs the same network
with T' = L'(tau(.)), L'(B) = B ^ B<<<13 ^ B<<<23, over MK ^ FK and the constants CK.
Decryption is encryption with the round keys reversed (§6.4).

Nothing is typed in but FK (§7.3). CK's bytes are (4i + j) * 7 mod 256 (§7.3). The S-box,
which the standard gives as a table, is built from its algebraic form (the structure of
the SMS4 S-box found by its analysts): the circulant affine map A(x) = M x ^ 0xD3, the
inverse in GF(2^8) modulo x^8+x^7+x^6+x^5+x^4+x^2+1, then A again; the tests check the
cipher against the draft's examples and OpenSSL's SM4. T folds tau and L into four
byte tables, one lookup per byte.
"""

import struct

from cryptoapi.alg import PRIORITY_GENERIC, Buffer
from cryptoapi.errors import InvalidArgument, InvalidKey
from cryptoapi.providers.generic._block_cipher import whole_blocks
from cryptoapi.providers.records import record

BLOCK_SIZE = 16
KEY_SIZE = 16
MASK = 0xFFFFFFFF

FK = (0xA3B1BAC6, 0x56AA3350, 0x677D9197, 0xB27022DC)  # §7.3
CK = tuple(
    int.from_bytes(bytes((4 * i + j) * 7 % 256 for j in range(4)), "big") for i in range(32)
)  # §7.3: ck_(i,j) = (4i + j) x 7 mod 256


def rotl(x: int, n: int) -> int:
    return (x << n | x >> (32 - n)) & MASK


# --- the S-box (§6.2.1) from its algebraic form -------------------------------------------

_FIELD = 0x1F5  # x^8 + x^7 + x^6 + x^5 + x^4 + x^2 + 1
_AFFINE_ROW = 0xD3  # the circulant matrix's row
_AFFINE_CONSTANT = 0xD3


def _gf_mul(a: int, b: int) -> int:
    product = 0
    while b:
        if b & 1:
            product ^= a
        a <<= 1
        if a & 0x100:
            a ^= _FIELD
        b >>= 1
    return product


def _gf_inverse(a: int) -> int:
    """a^254 = a^-1 in GF(2^8) (0 maps to 0)."""
    result, power, exponent = 1, a, 254
    while exponent:
        if exponent & 1:
            result = _gf_mul(result, power)
        power = _gf_mul(power, power)
        exponent >>= 1
    return result if a else 0


def _affine(x: int) -> int:
    """Bit i (from the top) of M x is the parity of x AND the row rotated right by i."""
    out = 0
    for i in range(8):
        row = (_AFFINE_ROW >> i | _AFFINE_ROW << (8 - i)) & 0xFF
        out = out << 1 | (row & x).bit_count() & 1
    return out ^ _AFFINE_CONSTANT


SBOX = tuple(_affine(_gf_inverse(_affine(x))) for x in range(256))


def linear(b: int) -> int:
    """§6.2.2 L(B) = B ^ (B <<< 2) ^ (B <<< 10) ^ (B <<< 18) ^ (B <<< 24)."""
    return b ^ rotl(b, 2) ^ rotl(b, 10) ^ rotl(b, 18) ^ rotl(b, 24)


def linear_key(b: int) -> int:
    """§7.2 L'(B) = B ^ (B <<< 13) ^ (B <<< 23)."""
    return b ^ rotl(b, 13) ^ rotl(b, 23)


def tau(a: int) -> int:
    """§6.2.1: the S-box on each byte of a word."""
    return int.from_bytes(bytes(SBOX[byte] for byte in a.to_bytes(4, "big")), "big")


# T(x) = L(tau(x)) is linear in the bytes of tau(x): one table per byte position.
T_TABLES = tuple(tuple(linear(SBOX[x] << shift) for x in range(256)) for shift in (24, 16, 8, 0))


def expand_key(key: bytes) -> tuple[int, ...]:
    """§7.2: the 32 round keys rk_i = K_(i+4)."""
    k = [m ^ f for m, f in zip(struct.unpack(">4I", key), FK, strict=True)]
    for i in range(32):
        k.append(k[i] ^ linear_key(tau(k[i + 1] ^ k[i + 2] ^ k[i + 3] ^ CK[i])))
    return tuple(k[4:])


def sm4_blocks(round_keys: tuple[int, ...], data: memoryview) -> bytes:
    """§6.3 F applied 32 times, then the reverse R, to each 16-byte block of ``data``."""
    t0, t1, t2, t3 = T_TABLES
    words = struct.unpack(f">{len(data) // 4}I", data)
    out: list[int] = []
    for i in range(0, len(words), 4):
        x0, x1, x2, x3 = words[i : i + 4]
        for rk in round_keys:
            x = x1 ^ x2 ^ x3 ^ rk
            x0, x1, x2, x3 = (
                x1,
                x2,
                x3,
                x0 ^ (t0[x >> 24] ^ t1[x >> 16 & 255] ^ t2[x >> 8 & 255] ^ t3[x & 255]),
            )
        out += (x3, x2, x1, x0)
    return struct.pack(f">{len(out)}I", *out)


class Sm4Cipher:
    """The ``sm4`` cipher core: the round keys of one 16-byte key, both directions."""

    __slots__ = ("_decrypt_keys", "_encrypt_keys")

    def setkey(self, key: bytes, /) -> None:
        if len(key) != KEY_SIZE:
            raise InvalidKey(f"SM4 key must be 16 bytes, got {len(key)}")
        self._encrypt_keys = expand_key(bytes(key))
        self._decrypt_keys = self._encrypt_keys[::-1]  # §6.4

    def encrypt_block(self, block: Buffer, /) -> bytes:
        return self._one_block(self._encrypt_keys, block)

    def decrypt_block(self, block: Buffer, /) -> bytes:
        return self._one_block(self._decrypt_keys, block)

    def encrypt_blocks(self, data: Buffer, /) -> bytes:
        return sm4_blocks(self._encrypt_keys, whole_blocks(data, "SM4"))

    def decrypt_blocks(self, data: Buffer, /) -> bytes:
        return sm4_blocks(self._decrypt_keys, whole_blocks(data, "SM4"))

    @staticmethod
    def _one_block(round_keys: tuple[int, ...], block: Buffer) -> bytes:
        view = whole_blocks(block, "SM4")
        if len(view) != BLOCK_SIZE:
            raise InvalidArgument(f"SM4 block must be 16 bytes, got {len(view)}")
        return sm4_blocks(round_keys, view)


ALGORITHMS = (
    record("sm4", "sm4-generic", Sm4Cipher, provider="generic", priority=PRIORITY_GENERIC),
)
