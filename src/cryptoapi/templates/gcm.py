"""The ``gcm`` template: Galois/Counter Mode, NIST SP 800-38D, over a 128-bit block cipher
and the best ``ghash`` shash: ``gcm(aes)``.

    H  = CIPH_K(0^128)                                                   (§7.1 step 1)
    J0 = IV || 0^31 || 1                 if len(IV) = 96 bits             (step 2)
       = GHASH_H(IV || 0^(s+64) || [len(IV)]_64)   otherwise
    C  = GCTR_K(inc32(J0), P)                                             (step 3)
    S  = GHASH_H(A || 0^v || C || 0^u || [len(A)]_64 || [len(C)]_64)      (steps 4-5)
    T  = MSB_t(GCTR_K(J0, S)) = MSB_t(CIPH_K(J0) ^ S)                     (step 6)

GCTR (§6.5) counts with inc32: only the last 32 bits of the counter block increase, modulo
2^32. The counter blocks of a message are built at once and enciphered in one batch.
Decryption (§7.2) recomputes T from the ciphertext and compares it in constant time before
it deciphers anything. IVs: any non-empty length (12 bytes is ``ivsize``); tags: 4, 8 and
12 to 16 bytes (§5.2.1.2). Plaintexts are limited to 2^39 - 256 bits (§5.2.1.1).

The instance is named ``gcm(aes)`` / ``gcm(aes-generic)`` after its cipher only; ghash is an
inner algorithm too (unregistering it removes the instance) and counts in the priority.
"""

import hmac

from cryptoapi.alg import Algorithm, AlgType, Buffer, InnerLookup, Template, instance
from cryptoapi.errors import InvalidArgument
from cryptoapi.templates._modes import byte_view, inner_of, named_after_cipher, require, xor
from cryptoapi.transforms.aead import forged
from cryptoapi.transforms.cipher import CipherCore
from cryptoapi.transforms.cores import ShashCore

BLOCK_SIZE = 16
TAG_SIZE = 16
IV_SIZE = 12
MAX_IV_SIZE = 2**32
AUTHSIZES = (4, 8, 12, 13, 14, 15, 16)
MAX_TEXT = 2**36 - 32  # bytes: 2^39 - 256 bits
_ZEROS = bytes(BLOCK_SIZE)


class Gcm:
    """The GCM core over a 16-byte block cipher core and a ghash core (keyed with H)."""

    __slots__ = ("_authsize", "_cipher", "_ghash")

    def __init__(self, cipher: CipherCore, ghash: ShashCore) -> None:
        self._cipher = cipher
        self._ghash = ghash
        self._authsize = TAG_SIZE

    def setkey(self, key: bytes, /) -> None:
        self._cipher.setkey(key)
        self._ghash.setkey(self._cipher.encrypt_block(_ZEROS))

    def setauthsize(self, authsize: int, /) -> None:
        self._authsize = authsize

    def _j0(self, iv: bytes) -> bytes:
        if len(iv) == IV_SIZE:
            return iv + b"\0\0\0\1"
        state = self._ghash.init()
        state.update(iv)
        state.update(_ZEROS[: -len(iv) % BLOCK_SIZE])
        state.update((8 * len(iv)).to_bytes(BLOCK_SIZE, "big"))  # 0^64 || [len(IV)]_64
        return state.digest()

    def _gctr(self, icb: bytes, data: memoryview) -> bytes:
        """GCTR_K(ICB, X) (§6.5): X XOR the encrypted counter blocks ICB, inc32(ICB), ..."""
        if not data:
            return b""
        prefix, first = icb[:12], int.from_bytes(icb[12:], "big")
        blocks = -(-len(data) // BLOCK_SIZE)
        counters = b"".join(
            prefix + ((first + i) & 0xFFFFFFFF).to_bytes(4, "big") for i in range(blocks)
        )
        return xor(data, self._cipher.encrypt_blocks(counters)[: len(data)])

    def _tag(self, j0: bytes, ciphertext: Buffer, assoc: memoryview) -> bytes:
        state = self._ghash.init()
        state.update(assoc)
        state.update(_ZEROS[: -len(assoc) % BLOCK_SIZE])
        state.update(ciphertext)
        state.update(_ZEROS[: -len(ciphertext) % BLOCK_SIZE])
        state.update((8 * len(assoc)).to_bytes(8, "big") + (8 * len(ciphertext)).to_bytes(8, "big"))
        return xor(self._cipher.encrypt_block(j0), state.digest())[: self._authsize]

    def encrypt(self, iv: bytes, plaintext: Buffer, assoc: Buffer, /) -> bytes:
        """GCM-AE_K(IV, P, A) (§7.1): C || T."""
        plaintext = byte_view(plaintext)
        _check_length(len(plaintext))
        j0 = self._j0(iv)
        ciphertext = self._gctr(_inc32(j0), plaintext)
        return ciphertext + self._tag(j0, ciphertext, byte_view(assoc))

    def decrypt(self, iv: bytes, data: Buffer, assoc: Buffer, /) -> bytes:
        """GCM-AD_K(IV, C, A, T) (§7.2): P, or BadMessage ("FAIL") and no plaintext."""
        view = byte_view(data)
        ciphertext, tag = view[: len(view) - self._authsize], view[len(view) - self._authsize :]
        _check_length(len(ciphertext))
        j0 = self._j0(iv)
        if not hmac.compare_digest(self._tag(j0, ciphertext, byte_view(assoc)), tag):
            raise forged("gcm")
        return self._gctr(_inc32(j0), ciphertext)


def _inc32(block: bytes) -> bytes:
    """inc32 (§6.2): the last 32 bits plus one, modulo 2^32."""
    return block[:12] + ((int.from_bytes(block[12:], "big") + 1) & 0xFFFFFFFF).to_bytes(4, "big")


def _check_length(size: int) -> None:
    if size > MAX_TEXT:
        raise InvalidArgument(f"gcm: {size} bytes exceed the 2^39 - 256 bit limit of SP 800-38D")


def create(lookup: InnerLookup, args: tuple[str, ...]) -> Algorithm:
    """Build ``gcm(C)`` from the best (or the named) 128-bit block cipher C and best ghash."""
    cipher = inner_of("gcm", lookup, args, AlgType.CIPHER)
    require(cipher.blocksize == BLOCK_SIZE, "gcm", cipher, "a 16-byte block cipher")
    ghash = lookup("ghash", AlgType.SHASH)
    record = instance(
        "gcm",
        (cipher, ghash),
        type=AlgType.AEAD,
        create=lambda: Gcm(cipher.create(), ghash.create()),
        ivsize=IV_SIZE,
        ivsizes=(1, MAX_IV_SIZE),
        min_keysize=cipher.min_keysize,
        max_keysize=cipher.max_keysize,
        maxauthsize=TAG_SIZE,
        authsizes=AUTHSIZES,
    )
    return named_after_cipher(record, "gcm", cipher)


TEMPLATE = Template("gcm", create)
