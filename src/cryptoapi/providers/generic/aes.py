"""AES, FIPS 197 (2023 update): the cipher (§5.1), key expansion (§5.2) and the equivalent
inverse cipher (§5.3.5), on 32-bit column words with lookup tables.

Nothing is typed in: the S-box is derived at import from its definition (§5.1.1: the
multiplicative inverse in GF(2^8) followed by an affine map), and so are the round constants
(§5.2: powers of x) and the four encryption and four decryption "T-tables", each of which
folds SubBytes, ShiftRows' byte selection and one column of MixColumns (§5.1.3) or of their
inverses (§5.3.2-§5.3.3) into one lookup per state byte.

A column word holds the rows top to bottom as big-endian bytes: ``s0 << 24 | s1 << 16 |
s2 << 8 | s3``, so that a 16-byte block is four big-endian words, column 0 first (§3.4).

Registered as the ``aes`` cipher (``aes-generic``) at the bottom of this file.
"""

import struct

from cryptoapi.alg import PRIORITY_GENERIC, Buffer
from cryptoapi.errors import InvalidArgument, InvalidKey
from cryptoapi.providers.generic._block_cipher import whole_blocks
from cryptoapi.providers.records import record

BLOCK_SIZE = 16
KEY_SIZES = (16, 24, 32)

Table = tuple[int, ...]
Word4 = tuple[int, int, int, int]


# --- GF(2^8) and the S-box (§4, §5.1.1) ------------------------------------------------------


def xtime(a: int) -> int:
    """a * x in GF(2^8) (§4.2.1): a left shift, reduced by m(x) = x^8 + x^4 + x^3 + x + 1."""
    a <<= 1
    return a ^ 0x11B if a & 0x100 else a


def _exp_log() -> tuple[Table, Table]:
    """Powers of the generator x + 1 (0x03) and their logarithms (LOG[0] is unused)."""
    exp = [0] * 255
    log = [0] * 256
    power = 1
    for i in range(255):
        exp[i] = power
        log[power] = i
        power = xtime(power) ^ power  # power * (x + 1)
    return tuple(exp), tuple(log)


EXP, LOG = _exp_log()


def gf_mul(a: int, b: int) -> int:
    """a * b in GF(2^8) (§4.2), as x+1 to the power log(a) + log(b)."""
    return EXP[(LOG[a] + LOG[b]) % 255] if a and b else 0


def _rotl8(b: int, n: int) -> int:
    return (b << n | b >> (8 - n)) & 0xFF


def _make_sbox() -> Table:
    """§5.1.1: b' = affine(b^-1), with 0 mapped to itself before the affine step.

    The affine map b'_i = b_i ^ b_(i+4) ^ b_(i+5) ^ b_(i+6) ^ b_(i+7) ^ c_i (indices mod 8,
    c = 0x63) is b ^ rotl(b, 1) ^ rotl(b, 2) ^ rotl(b, 3) ^ rotl(b, 4) ^ 0x63 on whole bytes.
    """
    sbox = []
    for b in range(256):
        inverse = EXP[-LOG[b] % 255] if b else 0
        sbox.append(
            inverse
            ^ _rotl8(inverse, 1)
            ^ _rotl8(inverse, 2)
            ^ _rotl8(inverse, 3)
            ^ _rotl8(inverse, 4)
            ^ 0x63
        )
    return tuple(sbox)


def _invert(table: Table) -> Table:
    inverse = [0] * len(table)
    for i, value in enumerate(table):
        inverse[value] = i
    return tuple(inverse)


SBOX = _make_sbox()
INV_SBOX = _invert(SBOX)


def _powers_of_x(count: int) -> Table:
    """x^0, x^1, ... x^(count-1) in GF(2^8): x is 0x02."""
    powers = [1]
    while len(powers) < count:
        powers.append(xtime(powers[-1]))
    return tuple(powers)


# §5.2: Rcon[j] = x^(j-1) in the top byte of a word; AES-128 uses the most, 10 of them.
RCON = tuple(power << 24 for power in _powers_of_x(10))


# --- T-tables ----------------------------------------------------------------------------------


def _column(c0: int, c1: int, c2: int, c3: int, b: int) -> int:
    """The word (c0*b, c1*b, c2*b, c3*b): one column of a (Inv)MixColumns product."""
    return gf_mul(c0, b) << 24 | gf_mul(c1, b) << 16 | gf_mul(c2, b) << 8 | gf_mul(c3, b)


def _rotations(table: Table) -> tuple[Table, Table, Table, Table]:
    """The table and its words rotated right by 8, 16 and 24 bits (rows 1, 2, 3 of input)."""
    rotated = [table]
    for shift in (8, 16, 24):
        rotated.append(tuple((w >> shift | w << (32 - shift)) & 0xFFFFFFFF for w in table))
    return rotated[0], rotated[1], rotated[2], rotated[3]


# MixColumns multiplies each column by the circulant matrix with first column (2, 1, 1, 3)
# (§5.1.3); the input byte in row r contributes that column rotated down by r, hence Te1..Te3.
TE = _rotations(tuple(_column(2, 1, 1, 3, SBOX[x]) for x in range(256)))
# InvMixColumns' first column is (e, 9, d, b) (§5.3.3), applied after InvSubBytes.
TD = _rotations(tuple(_column(0x0E, 0x09, 0x0D, 0x0B, INV_SBOX[x]) for x in range(256)))


def _sub_word(w: int) -> int:
    """SubWord (§5.2): the S-box on each byte of a word."""
    return SBOX[w >> 24] << 24 | SBOX[w >> 16 & 255] << 16 | SBOX[w >> 8 & 255] << 8 | SBOX[w & 255]


def _inv_mix_column(w: int) -> int:
    """InvMixColumns (§5.3.3) of one word: TD already includes InvSubBytes, so undo it."""
    td0, td1, td2, td3 = TD
    return (
        td0[SBOX[w >> 24]] ^ td1[SBOX[w >> 16 & 255]] ^ td2[SBOX[w >> 8 & 255]] ^ td3[SBOX[w & 255]]
    )


def expand_key(key: bytes) -> list[int]:
    """KeyExpansion (§5.2, Algorithm 2): the 4 * (Nr + 1) round-key words."""
    nk = len(key) // 4
    words = list(struct.unpack(f">{nk}I", key))
    for i in range(nk, 4 * (nk + 7)):
        temp = words[i - 1]
        if i % nk == 0:
            temp = _sub_word((temp << 8 | temp >> 24) & 0xFFFFFFFF) ^ RCON[i // nk - 1]  # RotWord
        elif nk > 6 and i % nk == 4:
            temp = _sub_word(temp)
        words.append(words[i - nk] ^ temp)
    return words


def _round_keys(words: list[int]) -> list[Word4]:
    return [(words[i], words[i + 1], words[i + 2], words[i + 3]) for i in range(0, len(words), 4)]


class Aes:
    """The AES block cipher with one key: 16, 24 or 32 bytes (AES-128/192/256)."""

    __slots__ = ("_dec_keys", "_enc_keys", "key_size")

    block_size = BLOCK_SIZE

    def __init__(self, key: bytes) -> None:
        if len(key) not in KEY_SIZES:
            raise InvalidKey(f"AES key must be 16, 24 or 32 bytes, got {len(key)}")
        self.key_size = len(key)
        enc = _round_keys(expand_key(bytes(key)))
        self._enc_keys = enc
        # §5.3.5: the equivalent inverse cipher uses the round keys in reverse order, with
        # InvMixColumns applied to all but the first and the last.
        middle = [
            (_inv_mix_column(k0), _inv_mix_column(k1), _inv_mix_column(k2), _inv_mix_column(k3))
            for k0, k1, k2, k3 in reversed(enc[1:-1])
        ]
        self._dec_keys = [enc[-1], *middle, enc[0]]

    def encrypt_block(self, block: Buffer) -> bytes:
        """Cipher (§5.1) of exactly one 16-byte block."""
        if len(block) != BLOCK_SIZE:
            raise InvalidArgument(f"AES block must be 16 bytes, got {len(block)}")
        return self.encrypt_blocks(block)

    def decrypt_block(self, block: Buffer) -> bytes:
        """InvCipher (§5.3) of exactly one 16-byte block."""
        if len(block) != BLOCK_SIZE:
            raise InvalidArgument(f"AES block must be 16 bytes, got {len(block)}")
        return self.decrypt_blocks(block)

    def encrypt_blocks(self, data: Buffer) -> bytes:
        """Cipher (§5.1) of each 16-byte block of ``data`` independently (ECB)."""
        view = whole_blocks(data, "AES")
        words = struct.unpack(f">{len(view) // 4}I", view)
        te0, te1, te2, te3 = TE
        sbox = SBOX
        first, *middle, last = self._enc_keys
        out: list[int] = []
        for i in range(0, len(words), 4):
            # AddRoundKey with round key 0.
            s0 = words[i] ^ first[0]
            s1 = words[i + 1] ^ first[1]
            s2 = words[i + 2] ^ first[2]
            s3 = words[i + 3] ^ first[3]
            # Rounds 1..Nr-1: SubBytes, ShiftRows (row r of column c comes from column
            # c + r), MixColumns and AddRoundKey, all through the T-tables.
            for k0, k1, k2, k3 in middle:
                s0, s1, s2, s3 = (
                    te0[s0 >> 24] ^ te1[s1 >> 16 & 255] ^ te2[s2 >> 8 & 255] ^ te3[s3 & 255] ^ k0,
                    te0[s1 >> 24] ^ te1[s2 >> 16 & 255] ^ te2[s3 >> 8 & 255] ^ te3[s0 & 255] ^ k1,
                    te0[s2 >> 24] ^ te1[s3 >> 16 & 255] ^ te2[s0 >> 8 & 255] ^ te3[s1 & 255] ^ k2,
                    te0[s3 >> 24] ^ te1[s0 >> 16 & 255] ^ te2[s1 >> 8 & 255] ^ te3[s2 & 255] ^ k3,
                )
            # The last round has no MixColumns.
            out += (
                _final_round(sbox, s0, s1, s2, s3) ^ last[0],
                _final_round(sbox, s1, s2, s3, s0) ^ last[1],
                _final_round(sbox, s2, s3, s0, s1) ^ last[2],
                _final_round(sbox, s3, s0, s1, s2) ^ last[3],
            )
        return struct.pack(f">{len(out)}I", *out)

    def decrypt_blocks(self, data: Buffer) -> bytes:
        """EqInvCipher (§5.3.5) of each 16-byte block of ``data`` independently (ECB)."""
        view = whole_blocks(data, "AES")
        words = struct.unpack(f">{len(view) // 4}I", view)
        td0, td1, td2, td3 = TD
        inv_sbox = INV_SBOX
        first, *middle, last = self._dec_keys
        out: list[int] = []
        for i in range(0, len(words), 4):
            s0 = words[i] ^ first[0]
            s1 = words[i + 1] ^ first[1]
            s2 = words[i + 2] ^ first[2]
            s3 = words[i + 3] ^ first[3]
            # InvSubBytes, InvShiftRows (row r of column c comes from column c - r),
            # InvMixColumns and AddRoundKey with the transformed round key.
            for k0, k1, k2, k3 in middle:
                s0, s1, s2, s3 = (
                    td0[s0 >> 24] ^ td1[s3 >> 16 & 255] ^ td2[s2 >> 8 & 255] ^ td3[s1 & 255] ^ k0,
                    td0[s1 >> 24] ^ td1[s0 >> 16 & 255] ^ td2[s3 >> 8 & 255] ^ td3[s2 & 255] ^ k1,
                    td0[s2 >> 24] ^ td1[s1 >> 16 & 255] ^ td2[s0 >> 8 & 255] ^ td3[s3 & 255] ^ k2,
                    td0[s3 >> 24] ^ td1[s2 >> 16 & 255] ^ td2[s1 >> 8 & 255] ^ td3[s0 & 255] ^ k3,
                )
            out += (
                _final_round(inv_sbox, s0, s3, s2, s1) ^ last[0],
                _final_round(inv_sbox, s1, s0, s3, s2) ^ last[1],
                _final_round(inv_sbox, s2, s1, s0, s3) ^ last[2],
                _final_round(inv_sbox, s3, s2, s1, s0) ^ last[3],
            )
        return struct.pack(f">{len(out)}I", *out)


def _final_round(sbox: Table, r0: int, r1: int, r2: int, r3: int) -> int:
    """One output column of the last round: row r's byte from word ``r<r>``, substituted."""
    return (
        sbox[r0 >> 24] << 24
        | sbox[r1 >> 16 & 255] << 16
        | sbox[r2 >> 8 & 255] << 8
        | sbox[r3 & 255]
    )


class AesCipher:
    """The ``aes`` cipher core (the kernel's crypto_cipher): one :class:`Aes` per key, so a
    key of another length raises InvalidKey when it is set."""

    __slots__ = ("_aes",)

    def setkey(self, key: bytes, /) -> None:
        self._aes = Aes(key)

    def encrypt_block(self, block: Buffer, /) -> bytes:
        return self._aes.encrypt_block(block)

    def decrypt_block(self, block: Buffer, /) -> bytes:
        return self._aes.decrypt_block(block)

    def encrypt_blocks(self, data: Buffer, /) -> bytes:
        return self._aes.encrypt_blocks(data)

    def decrypt_blocks(self, data: Buffer, /) -> bytes:
        return self._aes.decrypt_blocks(data)


ALGORITHMS = (
    record("aes", "aes-generic", AesCipher, provider="generic", priority=PRIORITY_GENERIC),
)
