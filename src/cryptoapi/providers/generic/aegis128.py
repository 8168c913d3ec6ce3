"""AEGIS-128, the CAESAR finalist: H. Wu and B. Preneel, "AEGIS: A Fast Authenticated
Encryption Algorithm (v1.1)", 2016, §2.3 (the kernel's ``aegis128``, ``crypto/aegis128-core.c``).

This is the CAESAR AEGIS-128 with a five-block (640-bit) state, not a member of the CFRG's
later AEGIS family (draft-irtf-cfrg-aegis-aead specifies AEGIS-128L and AEGIS-256, whose
states and finalization differ), and it is the one the kernel implements: a 16-byte key, a
16-byte nonce, and the tag truncated to the authsize, 8 to 16 bytes as the kernel allows.

    StateUpdate128(S, m) (§2.3.1):  S0' = AESRound(S4, S0 ^ m),  Si' = AESRound(S(i-1), Si)
    init (§2.3.2):     S = (K ^ IV, const1, const0, K ^ const0, K ^ const1), then ten
                       updates with K and K ^ IV alternately
    AD, plaintext:     16-byte blocks, the last one zero-padded; C = P ^ S1 ^ S4 ^ (S2 & S3),
                       then the state absorbs P (§2.3.3-2.3.4)
    finalization:      seven updates with S3 ^ (le64(bits of AD) || le64(bits of P)); the
                       tag is S0 ^ S1 ^ S2 ^ S3 ^ S4 (§2.3.5)

AESRound(A, B) is one AES encryption round of A (SubBytes, ShiftRows, MixColumns) with B
as its round key, here through the generic AES's T-tables. A block is four big-endian
column words, as there. Decryption checks the tag in constant time and returns nothing of
the plaintext when it does not verify.
"""

import hmac
import struct

from cryptoapi.alg import PRIORITY_GENERIC, Buffer
from cryptoapi.errors import InvalidKey
from cryptoapi.providers.generic.aes import TE
from cryptoapi.providers.records import record
from cryptoapi.transforms.aead import forged

KEY_SIZE = 16
BLOCK_SIZE = 16
MAX_TAG_SIZE = 16

Block = tuple[int, int, int, int]
State = tuple[Block, Block, Block, Block, Block]

_WORDS = struct.Struct(">4I")
# §2.2: the Fibonacci sequence mod 256, 32 bytes, as two blocks.
CONST0: Block = _WORDS.unpack(bytes.fromhex("000101020305080d1522375990e97962"))
CONST1: Block = _WORDS.unpack(bytes.fromhex("db3d18556dc22ff12011314273b528dd"))


def aes_round(a: Block, key: Block) -> Block:
    """AESRound(A, B): SubBytes, ShiftRows and MixColumns of A, then XOR B."""
    te0, te1, te2, te3 = TE
    s0, s1, s2, s3 = a
    return (
        te0[s0 >> 24] ^ te1[s1 >> 16 & 255] ^ te2[s2 >> 8 & 255] ^ te3[s3 & 255] ^ key[0],
        te0[s1 >> 24] ^ te1[s2 >> 16 & 255] ^ te2[s3 >> 8 & 255] ^ te3[s0 & 255] ^ key[1],
        te0[s2 >> 24] ^ te1[s3 >> 16 & 255] ^ te2[s0 >> 8 & 255] ^ te3[s1 & 255] ^ key[2],
        te0[s3 >> 24] ^ te1[s0 >> 16 & 255] ^ te2[s1 >> 8 & 255] ^ te3[s2 & 255] ^ key[3],
    )


def xor(a: Block, b: Block) -> Block:
    return (a[0] ^ b[0], a[1] ^ b[1], a[2] ^ b[2], a[3] ^ b[3])


def update(s: State, m: Block) -> State:
    """§2.3.1 StateUpdate128(S, m)."""
    return (
        aes_round(s[4], xor(s[0], m)),
        aes_round(s[0], s[1]),
        aes_round(s[1], s[2]),
        aes_round(s[2], s[3]),
        aes_round(s[3], s[4]),
    )


def initialize(key: Block, iv: Block) -> State:
    """§2.3.2: load key and IV, then run ten updates with K and K ^ IV alternately."""
    key_iv = xor(key, iv)
    s: State = (key_iv, CONST1, CONST0, xor(key, CONST0), xor(key, CONST1))
    for _ in range(5):
        s = update(update(s, key), key_iv)
    return s


def keystream(s: State) -> Block:
    """§2.3.4: S1 ^ S4 ^ (S2 & S3)."""
    s1, s2, s3, s4 = s[1], s[2], s[3], s[4]
    return (
        s1[0] ^ s4[0] ^ (s2[0] & s3[0]),
        s1[1] ^ s4[1] ^ (s2[1] & s3[1]),
        s1[2] ^ s4[2] ^ (s2[2] & s3[2]),
        s1[3] ^ s4[3] ^ (s2[3] & s3[3]),
    )


def _padded_blocks(data: bytes) -> list[Block]:
    """``data`` zero-padded to whole blocks, as words."""
    padded = data + bytes(-len(data) % BLOCK_SIZE)
    return [_WORDS.unpack_from(padded, i) for i in range(0, len(padded), BLOCK_SIZE)]


def absorb(s: State, assoc: bytes) -> State:
    """§2.3.3: the associated data, zero-padded, one update per block."""
    for block in _padded_blocks(assoc):
        s = update(s, block)
    return s


def finalize(s: State, assoc_len: int, msg_len: int) -> bytes:
    """§2.3.5: the full 16-byte tag."""
    lengths: Block = _WORDS.unpack(struct.pack("<QQ", assoc_len * 8, msg_len * 8))
    tmp = xor(s[3], lengths)
    for _ in range(7):
        s = update(s, tmp)
    tag = xor(xor(xor(s[0], s[1]), xor(s[2], s[3])), s[4])
    return _WORDS.pack(*tag)


def encrypt(key: Block, iv: bytes, plaintext: bytes, assoc: bytes) -> tuple[bytes, bytes]:
    """§2.3: ciphertext and full tag."""
    s = absorb(initialize(key, _WORDS.unpack(iv)), assoc)
    out = []
    for p in _padded_blocks(plaintext):
        out.append(_WORDS.pack(*xor(p, keystream(s))))
        s = update(s, p)
    return b"".join(out)[: len(plaintext)], finalize(s, len(assoc), len(plaintext))


def decrypt(key: Block, iv: bytes, ciphertext: bytes, assoc: bytes) -> tuple[bytes, bytes]:
    """§2.4: plaintext and the full tag it implies; a short last block's plaintext is
    zero-padded before the state absorbs it."""
    s = absorb(initialize(key, _WORDS.unpack(iv)), assoc)
    out = []
    for offset in range(0, len(ciphertext), BLOCK_SIZE):
        chunk = ciphertext[offset : offset + BLOCK_SIZE]
        (c,) = _padded_blocks(chunk)
        p = _WORDS.pack(*xor(c, keystream(s)))[: len(chunk)]
        out.append(p)
        (padded,) = _padded_blocks(p)
        s = update(s, padded)
    plaintext = b"".join(out)
    return plaintext, finalize(s, len(assoc), len(plaintext))


class Aegis128:
    """The ``aegis128`` AEAD core: output is ciphertext || tag (authsize bytes)."""

    __slots__ = ("_authsize", "_key")

    def __init__(self) -> None:
        self._authsize = MAX_TAG_SIZE

    def setkey(self, key: bytes, /) -> None:
        if len(key) != KEY_SIZE:
            raise InvalidKey(f"aegis128 key must be 16 bytes, got {len(key)}")
        self._key: Block = _WORDS.unpack(key)

    def setauthsize(self, authsize: int, /) -> None:
        self._authsize = authsize

    def encrypt(self, iv: bytes, plaintext: Buffer, assoc: Buffer, /) -> bytes:
        ciphertext, tag = encrypt(self._key, iv, bytes(plaintext), bytes(assoc))
        return ciphertext + tag[: self._authsize]

    def decrypt(self, iv: bytes, data: Buffer, assoc: Buffer, /) -> bytes:
        data = bytes(data)
        split = len(data) - self._authsize
        plaintext, tag = decrypt(self._key, iv, data[:split], bytes(assoc))
        if not hmac.compare_digest(tag[: self._authsize], data[split:]):
            raise forged("aegis128")
        return plaintext


ALGORITHMS = (
    record("aegis128", "aegis128-generic", Aegis128, provider="generic", priority=PRIORITY_GENERIC),
)
