"""ChaCha20, RFC 8439 §2.1-2.4, and XChaCha20, draft-irtf-cfrg-xchacha-03 §2.2-2.3.

The state is sixteen 32-bit words (§2.3): four constants, eight key words, the block counter
and three nonce words, all little-endian. The block function runs ten double rounds of
quarter rounds (§2.1, §2.2) and adds the input state back in.

To generate many blocks at once, each state word is held as a *vector*: one Python int whose
64-bit lanes carry that word for successive blocks (lane j = block j, in its low 32 bits).
The quarter round is then written once and applied to every block together; additions and
left rotations spill at most 32 bits into the upper half of each lane, which the mask then
clears, so lanes never interfere. A single block is simply a vector of one lane.

Registered as the ``chacha20`` and ``xchacha20`` skciphers with the Linux kernel's IV
layouts (crypto/chacha_generic.c), at the bottom of this file.
"""

import struct

from cryptoapi.alg import PRIORITY_GENERIC, Buffer
from cryptoapi.errors import InvalidArgument, InvalidKey
from cryptoapi.providers.records import record
from cryptoapi.transforms.base import NeedFallback

KEY_SIZE = 32
NONCE_SIZE = 12
XNONCE_SIZE = 24
HNONCE_SIZE = 16
BLOCK_SIZE = 64
COUNTER_LIMIT = 1 << 32  # §2.4: the block counter is a 32-bit word

# §2.3: "expand 32-byte k" as four little-endian words.
CONSTANTS = struct.unpack("<4I", b"expand 32-byte k")

WORD = 0xFFFFFFFF
LANE_BITS = 64
CHUNK_BLOCKS = 1024  # blocks generated per batch: bounds the size of the vectors


def quarter_round(a: int, b: int, c: int, d: int, mask: int) -> tuple[int, int, int, int]:
    """§2.1 on vectors of 32-bit lanes: add, xor, rotate by 16, 12, 8 and 7."""
    a = (a + b) & mask
    d ^= a
    d = (d << 16 | d >> 16) & mask
    c = (c + d) & mask
    b ^= c
    b = (b << 12 | b >> 20) & mask
    a = (a + b) & mask
    d ^= a
    d = (d << 8 | d >> 24) & mask
    c = (c + d) & mask
    b ^= c
    b = (b << 7 | b >> 25) & mask
    return a, b, c, d


def chacha20_rounds(state: list[int], mask: int) -> list[int]:
    """The 20 rounds (§2.3): ten times a column round then a diagonal round (§2.2)."""
    x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15 = state
    for _ in range(10):
        x0, x4, x8, x12 = quarter_round(x0, x4, x8, x12, mask)
        x1, x5, x9, x13 = quarter_round(x1, x5, x9, x13, mask)
        x2, x6, x10, x14 = quarter_round(x2, x6, x10, x14, mask)
        x3, x7, x11, x15 = quarter_round(x3, x7, x11, x15, mask)
        x0, x5, x10, x15 = quarter_round(x0, x5, x10, x15, mask)
        x1, x6, x11, x12 = quarter_round(x1, x6, x11, x12, mask)
        x2, x7, x8, x13 = quarter_round(x2, x7, x8, x13, mask)
        x3, x4, x9, x14 = quarter_round(x3, x4, x9, x14, mask)
    return [x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15]


def library_counter(name: str, iv: bytes, size: int) -> int:
    """The block counter of the kernel's 16-byte IV (LE32 counter || 96-bit nonce), for a
    library's ChaCha20 (OpenSSL's carries into the nonce, others wrap): NeedFallback, in
    :func:`counter_wrap`'s words, when ``size`` bytes would pass block 2^32 - 1, so the
    generic one refuses them as every implementation does."""
    counter = int.from_bytes(iv[:4], "little")
    if counter + -(-size // BLOCK_SIZE) > COUNTER_LIMIT:
        raise NeedFallback(counter_wrap(name, counter, size))
    return counter


def counter_wrap(name: str, counter: int, size: int) -> str:
    """Why ``size`` bytes of keystream from block ``counter`` are refused when they would
    pass block 2^32 - 1: the block counter is one 32-bit word (§2.3, §2.4) and must not
    wrap, which would repeat the keystream under the same nonce. Every chacha20 and
    xchacha20 implementation here refuses in these words."""
    return (
        f"{name}: the 32-bit block counter would wrap after 0xffffffff "
        f"({-(-size // BLOCK_SIZE)} blocks of keystream from block {counter:#x})"
    )


def _check_key(key: bytes) -> None:
    if len(key) != KEY_SIZE:
        raise InvalidKey(f"ChaCha20 key must be 32 bytes, got {len(key)}")


def _check_nonce(nonce: bytes, size: int) -> None:
    if len(nonce) != size:
        raise InvalidArgument(f"nonce must be {size} bytes, got {len(nonce)}")


def _keystream(key: bytes, counter: int, nonce: bytes, blocks: int) -> bytes:
    """``blocks`` keystream blocks from ``counter`` on (§2.3 per block, §2.4 in sequence)."""
    # Broadcasting a word to every lane is multiplying by 1 + 2^64 + 2^128 + ...
    ones = ((1 << (LANE_BITS * blocks)) - 1) // ((1 << LANE_BITS) - 1)
    mask = WORD * ones
    counters = struct.pack(f"<{blocks}Q", *range(counter, counter + blocks))
    initial = [
        *(word * ones for word in CONSTANTS),
        *(word * ones for word in struct.unpack("<8I", key)),
        int.from_bytes(counters, "little"),  # lane j holds counter + j
        *(word * ones for word in struct.unpack("<3I", nonce)),
    ]
    final = chacha20_rounds(initial, mask)
    # Add the input state back in (§2.3), then serialize: word i of block j is lane j of
    # vector i, i.e. bytes 8j..8j+3 of its little-endian encoding, going to 64j + 4i.
    out = bytearray(BLOCK_SIZE * blocks)
    for i, (x, x_in) in enumerate(zip(final, initial, strict=True)):
        lanes = ((x + x_in) & mask).to_bytes(8 * blocks, "little")
        for k in range(4):
            out[4 * i + k :: BLOCK_SIZE] = lanes[k::8]
    return bytes(out)


def chacha20_block(key: bytes, counter: int, nonce: bytes) -> bytes:
    """The ChaCha20 block function (§2.3): 64 keystream bytes for one counter value."""
    _check_key(key)
    _check_nonce(nonce, NONCE_SIZE)
    if not 0 <= counter < COUNTER_LIMIT:
        raise InvalidArgument(f"ChaCha20 block counter must be a 32-bit value, got {counter}")
    return _keystream(key, counter, nonce, 1)


def chacha20_xor(key: bytes, counter: int, nonce: bytes, data: Buffer) -> bytes:
    """ChaCha20 encryption or decryption (§2.4): ``data`` XOR the keystream from ``counter``.

    The counter is not allowed to wrap: a message needing a block past 2^32 - 1 is an error.
    """
    _check_key(key)
    _check_nonce(nonce, NONCE_SIZE)
    view = memoryview(data)  # rejects str with TypeError
    if view.format != "B" or view.ndim != 1:
        view = view.cast("B")
    size = len(view)
    if not 0 <= counter < COUNTER_LIMIT:
        raise InvalidArgument(f"chacha20: the block counter is a 32-bit word, got {counter:#x}")
    if counter + -(-size // BLOCK_SIZE) > COUNTER_LIMIT:
        raise InvalidArgument(counter_wrap("chacha20", counter, size))
    pieces = []
    for start in range(0, size, CHUNK_BLOCKS * BLOCK_SIZE):
        chunk = view[start : start + CHUNK_BLOCKS * BLOCK_SIZE]
        n = len(chunk)
        stream = _keystream(key, counter + start // BLOCK_SIZE, nonce, -(-n // BLOCK_SIZE))
        mixed = int.from_bytes(chunk, "little") ^ int.from_bytes(stream[:n], "little")
        pieces.append(mixed.to_bytes(n, "little"))
    return b"".join(pieces)


def hchacha20(key: bytes, nonce16: bytes) -> bytes:
    """HChaCha20 (xchacha §2.2): the 32-byte subkey for ``key`` and a 16-byte nonce.

    The state is ChaCha20's with the counter and nonce words replaced by the 16-byte nonce;
    after the 20 rounds, without adding the input back, words 0-3 and 12-15 are the subkey.
    """
    _check_key(key)
    _check_nonce(nonce16, HNONCE_SIZE)
    state = [*CONSTANTS, *struct.unpack("<8I", key), *struct.unpack("<4I", nonce16)]
    x = chacha20_rounds(state, WORD)
    return struct.pack("<8I", *x[0:4], *x[12:16])


def xchacha20_xor(key: bytes, counter: int, nonce24: bytes, data: Buffer) -> bytes:
    """XChaCha20 (xchacha §2.3): ChaCha20 under HChaCha20(key, nonce[:16]) with the nonce
    0^32 || nonce[16:24]."""
    _check_nonce(nonce24, XNONCE_SIZE)
    subkey = hchacha20(key, nonce24[:16])
    return chacha20_xor(subkey, counter, bytes(4) + nonce24[16:], data)


# --- The skciphers, with the kernel's IV layouts (crypto/chacha_generic.c) --------------------

CHACHA_IV_SIZE = 16  # LE32 block counter || 96-bit nonce
XCHACHA_IV_SIZE = 32  # 192-bit nonce || LE64 stream position


def _xor_kernel_iv(key: bytes, iv: bytes, data: Buffer, name: str = "chacha20") -> bytes:
    """ChaCha20 from a 16-byte kernel IV: state words 12-15 (§2.3) as little-endian bytes;
    a keystream past the 32-bit counter is refused in the words of :func:`counter_wrap`."""
    counter = int.from_bytes(iv[:4], "little")
    if counter + -(-len(data) // BLOCK_SIZE) > COUNTER_LIMIT:
        raise InvalidArgument(counter_wrap(name, counter, len(data)))
    return chacha20_xor(key, counter, iv[4:CHACHA_IV_SIZE], data)


class ChaCha20Skcipher:
    """``chacha20``: the IV is the first block counter (32-bit little-endian) followed by the
    96-bit nonce, i.e. state words 12-15 (§2.3). Encryption and decryption are one XOR; a
    message that would need a block past counter 2^32 - 1 raises InvalidArgument."""

    __slots__ = ("_key",)

    def setkey(self, key: bytes, /) -> None:
        _check_key(key)
        self._key = bytes(key)

    def encrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        return _xor_kernel_iv(self._key, iv, data)

    decrypt = encrypt


class XChaCha20Skcipher(ChaCha20Skcipher):
    """``xchacha20``: the IV is the 24-byte nonce followed by the 64-bit little-endian stream
    position. The subkey is HChaCha20(key, nonce[:16]) (xchacha §2.3); ChaCha20 then runs
    with the 16-byte IV position || nonce[16:24], so the position's low word is the block
    counter and its high word the first nonce word (zero in the draft's construction)."""

    __slots__ = ()

    def encrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        subkey = hchacha20(self._key, iv[:HNONCE_SIZE])
        position_and_nonce = iv[XNONCE_SIZE:] + iv[HNONCE_SIZE:XNONCE_SIZE]
        return _xor_kernel_iv(subkey, position_and_nonce, data, "xchacha20")

    decrypt = encrypt


ALGORITHMS = (
    record(
        "chacha20",
        "chacha20-generic",
        ChaCha20Skcipher,
        provider="generic",
        priority=PRIORITY_GENERIC,
    ),
    record(
        "xchacha20",
        "xchacha20-generic",
        XChaCha20Skcipher,
        provider="generic",
        priority=PRIORITY_GENERIC,
    ),
)
