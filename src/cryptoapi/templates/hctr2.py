"""The ``hctr2`` template: HCTR2, length-preserving (wide-block) encryption with a tweak
(Crowley, Huckleberry, Biggers, "Length-preserving encryption with HCTR2", 2021, §3), as
the kernel's ``crypto/hctr2.c`` offers it: ``hctr2(aes)``.

Keys (§3.1): h = CIPH_K(bin(0)) keys POLYVAL, L = CIPH_K(bin(1)), bin(i) little-endian.
The hash of a tweak T and a message M (§3.2), |T| in bits, pad() zero-filling to a block:

    H(T, M) = POLYVAL_h(bin(2|T| + 2) || pad(T) || M)              if |M| is whole blocks
            = POLYVAL_h(bin(2|T| + 3) || pad(T) || pad(M || 01))   otherwise

Encryption of P = M || N, M its first block (§3.3; decryption runs it backwards):

    MM = M ^ H(T, N)        UU = CIPH_K(MM)        S = MM ^ UU ^ L
    V = N ^ XCTR_K(S)       U = UU ^ H(T, V)       C = U || V

The kernel's ``hctr2(aes)`` is its ``hctr2_base(xctr(aes),polyval)``; here, as ``gcm``
runs GCTR over its cipher, the one template runs XCTR (:func:`xctr_keystream`) over the
cipher and hashes with the best ``polyval`` shash, an inner algorithm too. The tweak is
the IV, 32 bytes as in the kernel; messages are at least one block, of any length.
"""

from cryptoapi.alg import Algorithm, AlgType, Buffer, InnerLookup, Template, instance
from cryptoapi.templates._modes import byte_view, inner_of, named_after_cipher, require, xor
from cryptoapi.templates.xctr import xctr_keystream
from cryptoapi.transforms.cipher import CipherCore
from cryptoapi.transforms.cores import ShashCore

BLOCK = 16
TWEAK_SIZE = 32  # the kernel's: the tweak (IV) of hctr2 is 32 bytes


def _bin(i: int) -> bytes:
    """bin(i): the integer i as one little-endian block (§3)."""
    return i.to_bytes(BLOCK, "little")


def _pad(data: Buffer) -> bytes:
    """pad(X): X followed by zeros up to a whole block."""
    return bytes(data) + bytes(-len(data) % BLOCK)


class Hctr2:
    """HCTR2 over a 16-byte block cipher core and a POLYVAL core."""

    __slots__ = ("_cipher", "_l", "_polyval")

    def __init__(self, cipher: CipherCore, polyval: ShashCore) -> None:
        self._cipher = cipher
        self._polyval = polyval

    def setkey(self, key: bytes, /) -> None:
        """K keys the cipher; h = CIPH_K(bin(0)) keys POLYVAL; L = CIPH_K(bin(1)) (§3.1)."""
        self._cipher.setkey(key)
        self._polyval.setkey(self._cipher.encrypt_block(_bin(0)))
        self._l = self._cipher.encrypt_block(_bin(1))

    def _hash(self, tweak: bytes, message: Buffer) -> bytes:
        """H(T, M) of §3.2."""
        bits = 8 * len(tweak)
        if len(message) % BLOCK == 0:
            return self._polyval.digest(_bin(2 * bits + 2) + _pad(tweak) + bytes(message))
        return self._polyval.digest(
            _bin(2 * bits + 3) + _pad(tweak) + _pad(bytes(message) + b"\x01")
        )

    def _xctr(self, mm: bytes, uu: bytes, data: Buffer) -> bytes:
        """``data`` XOR XCTR_K(S), S = MM ^ UU ^ L."""
        s = xor(xor(mm, uu), self._l)
        return xor(data, xctr_keystream(self._cipher, s, len(data)))

    def encrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        view = byte_view(data)
        first, rest = view[:BLOCK], view[BLOCK:]
        mm = xor(first, self._hash(iv, rest))
        uu = self._cipher.encrypt_block(mm)
        v = self._xctr(mm, uu, rest)
        return xor(uu, self._hash(iv, v)) + v

    def decrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        view = byte_view(data)
        first, rest = view[:BLOCK], view[BLOCK:]
        uu = xor(first, self._hash(iv, rest))
        mm = self._cipher.decrypt_block(uu)
        n = self._xctr(mm, uu, rest)
        return xor(mm, self._hash(iv, n)) + n


def create(lookup: InnerLookup, args: tuple[str, ...]) -> Algorithm:
    """Build ``hctr2(C)`` from the best (or the named) 16-byte block cipher C and the best
    ``polyval``."""
    cipher = inner_of("hctr2", lookup, args, AlgType.CIPHER)
    require(cipher.blocksize == BLOCK, "hctr2", cipher, "a 16-byte block cipher")
    polyval = lookup("polyval", AlgType.SHASH)
    record = instance(
        "hctr2",
        (cipher, polyval),
        type=AlgType.SKCIPHER,
        create=lambda: Hctr2(cipher.create(), polyval.create()),
        blocksize=BLOCK,
        ivsize=TWEAK_SIZE,
        min_keysize=cipher.min_keysize,
        max_keysize=cipher.max_keysize,
        min_datasize=BLOCK,
    )
    return named_after_cipher(record, "hctr2", cipher)  # polyval is an inner one too


TEMPLATE = Template("hctr2", create)
