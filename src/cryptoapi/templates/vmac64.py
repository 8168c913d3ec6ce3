"""The ``vmac64`` template: VMAC with 64-bit tags (T. Krovetz and W. Dai, "VMAC: Message
Authentication Code using Universal Hashing", draft-krovetz-vmac-01, 2007) over a 128-bit
block cipher, a keyed shash as the kernel's ``crypto/vmac.c`` offers it: ``vmac64(aes)``.

    Tag = VHASH(M) + PDF(K, Nonce) mod 2^64                               (§4.1, §4.2)
    VHASH(M) = L3-HASH(L2-HASH(L1-HASH(M), bitlength(M)))                 (§5.2)

KDF (§3.2): block i of KDF(K, index) is ENCIPHER(K, index || 0 ... 0 || i). Index 128
gives the NH key, sixteen big-endian 64-bit words (128 bytes, one chunk); index 192 the
polynomial key k, its two words each masked with 0x1fffffff1fffffff; index 224 the L3 key
k1, k2, drawn block after block until both words are below p64 = 2^64 - 257.

L1-HASH (§5.3): M in 128-byte chunks, the last one zero-padded to a multiple of 16 bytes.
A chunk's little-endian 64-bit words m_1 ... m_j hash under NH to

    sum over i of (m_(2i-1) + k_(2i-1) mod 2^64) * (m_(2i) + k_(2i) mod 2^64)   mod 2^126

L2-HASH (§5.4): y = 1, then y = y * k + NH_i mod p127 per chunk (p127 = 2^127 - 1; an
empty M leaves y = k, as one empty chunk would), then y + (bitlength(M) mod 1024) * 2^64
mod p127. L3-HASH (§5.5): with m1, m2 = divmod(y, 2^64 - 2^32), (m1 + k1) * (m2 + k2) mod
p64. PDF (§3.3) for 64-bit tags: the nonce's last bit chooses a half of ENCIPHER(K, the
nonce with that bit cleared), read as a big-endian 64-bit pad.

The kernel's interface, as it is: the key is the 16-byte cipher key (the kernel fixes
VMAC_KEY_SIZE at 128 bits, so a 24- or 32-byte key is refused), and the 16-byte nonce is
no separate argument but the first 16 bytes of the data, so ``digest(nonce || M)`` is the
tag of M and data shorter than 16 bytes is :class:`~cryptoapi.errors.InvalidArgument`
(the kernel's -EINVAL from final). The draft wants a nonce shorter than the block; the
kernel takes 127 bits, so the first bit of the 16 bytes must be 0 (InvalidArgument
otherwise). The draft's 8-byte test nonce "bcdefghi" is 0^64 || "bcdefghi" here.

Whole chunks are hashed as they arrive; only a partial chunk (under 128 bytes) waits.
"""

import struct
from collections.abc import Callable, Iterable

from cryptoapi.alg import Algorithm, AlgType, Buffer, InnerLookup, Template
from cryptoapi.errors import InvalidArgument, InvalidKey
from cryptoapi.templates._modes import byte_view, inner_of, mac_instance, require
from cryptoapi.transforms.cipher import CipherCore

BLOCK = 16
KEY_SIZE = 16  # the kernel's VMAC_KEY_LEN
NONCE_SIZE = 16  # the kernel's VMAC_NONCEBYTES: the nonce leads the data
TAG_SIZE = 8
CHUNK = 128  # §5.1: the L1 key length, 1024 bits
CHUNK_WORDS = struct.Struct(f"<{CHUNK // 8}Q")

M64 = (1 << 64) - 1
M126 = (1 << 126) - 1
P127 = (1 << 127) - 1
P64 = (1 << 64) - 257
L3_DIVISOR = (1 << 64) - (1 << 32)
POLY_MASK = 0x1FFFFFFF1FFFFFFF
NH_INDEX, POLY_INDEX, L3_INDEX = 128, 192, 224  # §3.2's KDF indexes


def kdf_words(cipher: CipherCore, index: int, i: int) -> tuple[int, int]:
    """§3.2: block ``i`` of KDF(K, ``index``) as two big-endian 64-bit words."""
    block = cipher.encrypt_block(bytes([index]) + i.to_bytes(BLOCK - 1, "big"))
    return int.from_bytes(block[:8], "big"), int.from_bytes(block[8:], "big")


def l3_key(cipher: CipherCore) -> tuple[int, int]:
    """§3.2: the first block of KDF(K, 224) whose two words are both below p64."""
    i = 0
    while True:
        k1, k2 = kdf_words(cipher, L3_INDEX, i)
        if k1 < P64 and k2 < P64:
            return k1, k2
        i += 1


class VmacKeys:
    """What one key gives VMAC-64: the keyed cipher (for the pad), the NH key words, the
    polynomial key k and the L3 key k1, k2. Immutable once made, so a running state keeps
    its keys even if the transform is keyed again."""

    __slots__ = ("cipher", "l3", "nh", "poly")

    def __init__(self, cipher: CipherCore) -> None:
        self.cipher = cipher
        self.nh = tuple(
            word for i in range(CHUNK // BLOCK) for word in kdf_words(cipher, NH_INDEX, i)
        )
        high, low = kdf_words(cipher, POLY_INDEX, 0)
        self.poly = (high & POLY_MASK) << 64 | (low & POLY_MASK)
        self.l3 = l3_key(cipher)


def nh(key: tuple[int, ...], words: tuple[int, ...]) -> int:
    """§5.3: NH of one chunk's 64-bit words (an even number, at most sixteen)."""
    total = 0
    for i in range(0, len(words), 2):
        total += ((words[i] + key[i]) & M64) * ((words[i + 1] + key[i + 1]) & M64)
    return total & M126


def l3_hash(keys: VmacKeys, y: int) -> int:
    """§5.5: (m1 + k1) * (m2 + k2) mod p64, with m1, m2 = divmod(y, 2^64 - 2^32)."""
    m1, m2 = divmod(y, L3_DIVISOR)
    k1, k2 = keys.l3
    return (m1 + k1) * (m2 + k2) % P64


def pdf(cipher: CipherCore, nonce: bytes) -> int:
    """§3.3 for 64-bit tags: the half of ENCIPHER(K, nonce with its last bit cleared)
    that the last bit selects."""
    half = nonce[-1] & 1
    block = cipher.encrypt_block(nonce[:-1] + bytes([nonce[-1] & 0xFE]))
    return int.from_bytes(block[8 * half : 8 * half + 8], "big")


class VmacState:
    """A running VMAC-64 over nonce || M: ``update``, ``digest`` (non-final), ``copy``."""

    __slots__ = ("_hashed", "_keys", "_nonce", "_pending", "_y")

    def __init__(
        self,
        keys: VmacKeys,
        nonce: bytes = b"",
        y: int = 1,
        hashed: bool = False,
        pending: bytes = b"",
    ) -> None:
        self._keys = keys
        self._nonce = nonce  # the data's first bytes, up to NONCE_SIZE
        self._y = y  # §5.4's running polynomial, over the chunks hashed so far
        self._hashed = hashed  # whether any chunk has been
        self._pending = pending  # the partial chunk: 0 to CHUNK - 1 bytes

    def update(self, data: Buffer, /) -> None:
        view = byte_view(data)  # rejects str with TypeError, as hashlib does
        if len(self._nonce) < NONCE_SIZE:
            take = NONCE_SIZE - len(self._nonce)
            self._nonce += view[:take]
            view = view[take:]
        pending = self._pending + view
        whole = len(pending) - len(pending) % CHUNK
        if whole:
            self._y = self._l2_steps(CHUNK_WORDS.iter_unpack(memoryview(pending)[:whole]))
            self._hashed = True
        self._pending = pending[whole:]

    def _l2_steps(self, chunks: Iterable[tuple[int, ...]]) -> int:
        """§5.3 and §5.4: y = y * k + NH(chunk) mod p127, chunk by chunk."""
        keys = self._keys
        key, k, y = keys.nh, keys.poly, self._y
        for words in chunks:
            y = (y * k + nh(key, words)) % P127
        return y

    def digest(self) -> bytes:
        nonce = self._checked_nonce()
        y = self._y
        if self._pending or not self._hashed:  # the last chunk, zero-padded (§5.3)
            last = self._pending + bytes(-len(self._pending) % BLOCK)
            y = self._l2_steps((struct.unpack(f"<{len(last) // 8}Q", last),))
        y = (y + (8 * len(self._pending) << 64)) % P127  # bitlength(M) mod 1024 (§5.4)
        keys = self._keys
        tag = (l3_hash(keys, y) + pdf(keys.cipher, nonce)) & M64
        return tag.to_bytes(TAG_SIZE, "big")

    def _checked_nonce(self) -> bytes:
        """The nonce, once the data held all of it and its first bit is 0."""
        if len(self._nonce) < NONCE_SIZE:
            raise InvalidArgument(
                f"vmac64: the data begins with the {NONCE_SIZE}-byte nonce;"
                f" got {len(self._nonce)} bytes"
            )
        if self._nonce[0] & 0x80:
            raise InvalidArgument("vmac64: the nonce's first bit must be 0 (a 127-bit nonce)")
        return self._nonce

    def copy(self) -> "VmacState":
        return VmacState(self._keys, self._nonce, self._y, self._hashed, self._pending)


class Vmac64:
    """The VMAC-64 core: ``setkey`` keys a fresh cipher core and derives VmacKeys."""

    __slots__ = ("_keys", "_new_cipher")

    def __init__(self, new_cipher: Callable[[], CipherCore]) -> None:
        self._new_cipher = new_cipher

    def setkey(self, key: bytes, /) -> None:
        if len(key) != KEY_SIZE:
            raise InvalidKey(f"vmac64 takes a {KEY_SIZE}-byte key, got {len(key)} bytes")
        cipher = self._new_cipher()
        cipher.setkey(key)
        self._keys = VmacKeys(cipher)  # a rejected key leaves the previous keys in place

    def init(self) -> VmacState:
        return VmacState(self._keys)

    def digest(self, data: Buffer, /) -> bytes:
        state = VmacState(self._keys)
        state.update(data)
        return state.digest()


def create(lookup: InnerLookup, args: tuple[str, ...]) -> Algorithm:
    """Build ``vmac64(C)`` from the best (or the named) 128-bit block cipher C."""
    cipher = inner_of("vmac64", lookup, args, AlgType.CIPHER)
    require(
        cipher.blocksize == BLOCK and cipher.min_keysize <= KEY_SIZE <= cipher.max_keysize,
        "vmac64",
        cipher,
        "a 16-byte block cipher taking 16-byte keys",
    )
    # block size: the kernel's, the cipher's block
    return mac_instance(
        "vmac64",
        cipher,
        lambda: Vmac64(cipher.create),
        digestsize=TAG_SIZE,
        keysizes=(KEY_SIZE, KEY_SIZE),
    )


TEMPLATE = Template("vmac64", create)
