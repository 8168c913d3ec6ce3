"""The ``xts`` template: XTS-AES, IEEE Std 1619-2007 §5 as approved by SP 800-38E.

The key is Key1 || Key2, two cipher keys of the same length (§5.1); the IV is the 16-byte
tweak i as IEEE 1619 encodes it (the data unit sequence number, little-endian). Block j of
a data unit is processed with its own mask (§5.3.1, §5.4.1):

    T_j = CIPH_Key2(i) (x) alpha^j        C_j = CIPH_Key1(P_j ^ T_j) ^ T_j

where (x) alpha is a multiplication in GF(2^128) on T as a little-endian integer: a left
shift by one, and 0x87 added back when a bit falls off the top (§5.2). A data unit whose
length is not a multiple of 16 bytes ends with ciphertext stealing (§5.3.2, §5.4.2): the
last full block is processed, its output's head becomes the short last block, and its tail
pads the short plaintext into a block processed with the next mask; decryption uses the
two masks in the opposite order. Data units are at least one block long.

Two equal key halves are refused with InvalidKey, as OpenSSL does (FIPS 140 Implementation
Guidance A.9 requires Key1 != Key2). All masks of a data unit are computed first and its
blocks processed in one batch.
"""

from collections.abc import Callable
from hmac import compare_digest

from cryptoapi.alg import Algorithm, AlgType, Buffer, InnerLookup, Template, instance
from cryptoapi.errors import InvalidKey
from cryptoapi.templates._modes import CipherMode, byte_view, inner_of, require, xor
from cryptoapi.transforms.cipher import CipherCore

BLOCK = 16
TOP = 1 << 128
REDUCE = TOP | 0x87  # x^128 = x^7 + x^2 + x + 1


def _masks(first: int, count: int) -> list[int]:
    """T, T alpha, T alpha^2 ... (``count`` of them) as little-endian integers (§5.2)."""
    masks = []
    mask = first
    for _ in range(count):
        masks.append(mask)
        mask <<= 1
        if mask & TOP:
            mask ^= REDUCE
    return masks


def _xex(process: Callable[[Buffer], bytes], data: Buffer, masks: list[int]) -> bytes:
    """Whole blocks ``data``, each XORed with its mask before and after ``process``."""
    pad = b"".join(mask.to_bytes(BLOCK, "little") for mask in masks)
    return xor(process(xor(data, pad)), pad)


class Xts(CipherMode):
    """XTS over two cores of one 16-byte block cipher: data (Key1) and tweak (Key2)."""

    __slots__ = ("_tweak",)

    def __init__(self, cipher: CipherCore, tweak: CipherCore) -> None:
        super().__init__(cipher, BLOCK)
        self._tweak = tweak

    def setkey(self, key: bytes, /) -> None:
        if len(key) % 2:
            raise InvalidKey(f"xts: the key is two cipher keys of one length, not {len(key)} bytes")
        half = len(key) // 2
        if compare_digest(key[:half], key[half:]):
            raise InvalidKey("xts: the two halves of the key must differ")
        self._cipher.setkey(key[:half])
        self._tweak.setkey(key[half:])

    def encrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        return self._crypt(iv, data, self._cipher.encrypt_blocks, encrypting=True)

    def decrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        return self._crypt(iv, data, self._cipher.decrypt_blocks, encrypting=False)

    def _crypt(
        self, iv: bytes, data: Buffer, process: Callable[[Buffer], bytes], *, encrypting: bool
    ) -> bytes:
        view = byte_view(data)
        full, partial = divmod(len(view), BLOCK)
        first = int.from_bytes(self._tweak.encrypt_block(iv), "little")
        masks = _masks(first, full + (partial > 0))
        if not partial:
            return _xex(process, view, masks)
        # §5.3.2 / §5.4.2: block m-1 with one mask gives CC; its head is the short last
        # block, its tail completes the short input into PP, processed with the other mask.
        last = BLOCK * (full - 1)
        before, after = masks[full - 1], masks[full]
        if not encrypting:
            before, after = after, before
        head = _xex(process, view[:last], masks[: full - 1])
        cc = _xex(process, view[last : last + BLOCK], [before])
        pp = bytes(view[last + BLOCK :]) + cc[partial:]
        return head + _xex(process, pp, [after]) + cc[:partial]


def create(lookup: InnerLookup, args: tuple[str, ...]) -> Algorithm:
    """Build ``xts(C)`` from the best (or the named) 16-byte block cipher C."""
    inner = inner_of("xts", lookup, args, AlgType.CIPHER)
    require(inner.blocksize == BLOCK, "xts", inner, "a 16-byte block cipher")
    return instance(
        "xts",
        (inner,),
        type=AlgType.SKCIPHER,
        create=lambda: Xts(inner.create(), inner.create()),
        blocksize=BLOCK,
        ivsize=BLOCK,
        min_keysize=2 * inner.min_keysize,
        max_keysize=2 * inner.max_keysize,
        min_datasize=BLOCK,
    )


TEMPLATE = Template("xts", create)
