"""The ``ccm`` template: Counter with CBC-MAC, NIST SP 800-38C (= RFC 3610), over a 128-bit
block cipher: ``ccm(aes)``.

The IV is the nonce N of 7 to 13 bytes; the length field then has q = 15 - len(N) bytes,
so the payload must be shorter than 2^(8q) bytes (§A.1). Tags are 4 to 16 bytes, even.

    B0 = flags || N || [len(P)]_q,  flags = 64*Adata + 8*(t-2)/2 + (q-1)     (§A.2.1)
    B  = B0 || encoded len(A) || A, zero-padded || P, zero-padded           (§A.2.2-A.2.3)
    T  = MSB_t(CBC-MAC_K(B))                                               (§6.1 steps 2-4)
    Ctr_i = (q-1) || N || [i]_q;  S_i = CIPH_K(Ctr_i)                       (§A.3)
    C  = (P XOR MSB_len(P)(S_1 || S_2 ...)) || (T XOR MSB_t(S_0))           (§6.1 steps 5-8)

Decryption (§6.2) deciphers into a private buffer, recomputes T over it and compares in
constant time; the plaintext is returned only when the tags agree.
"""

import hmac

from cryptoapi.alg import Algorithm, AlgType, Buffer, InnerLookup, Template, instance
from cryptoapi.errors import InvalidArgument
from cryptoapi.templates._modes import byte_view, inner_of, require, xor
from cryptoapi.transforms.aead import forged
from cryptoapi.transforms.cipher import CipherCore

BLOCK_SIZE = 16
NONCE_SIZES = (7, 13)
IV_SIZE = 12
AUTHSIZES = (4, 6, 8, 10, 12, 14, 16)
_ZEROS = bytes(BLOCK_SIZE)


def encode_assoc_length(size: int) -> bytes:
    """§A.2.2: the length of A in 2, 2 + 4 or 2 + 8 bytes (nothing when A is empty)."""
    if size == 0:
        return b""
    if size < 2**16 - 2**8:
        return size.to_bytes(2, "big")
    if size < 2**32:
        return b"\xff\xfe" + size.to_bytes(4, "big")
    return b"\xff\xff" + size.to_bytes(8, "big")


class Ccm:
    """The CCM core over a 16-byte block cipher core."""

    __slots__ = ("_authsize", "_cipher")

    def __init__(self, cipher: CipherCore) -> None:
        self._cipher = cipher
        self._authsize = 16

    def setkey(self, key: bytes, /) -> None:
        self._cipher.setkey(key)

    def setauthsize(self, authsize: int, /) -> None:
        self._authsize = authsize

    def _cbc_mac(self, nonce: bytes, payload: memoryview, assoc: memoryview) -> bytes:
        """T (§6.1 steps 2-4): the CBC-MAC of B0 || formatted A || formatted P, truncated."""
        q = 15 - len(nonce)
        flags = (64 if assoc else 0) | ((self._authsize - 2) // 2) << 3 | (q - 1)
        header = bytes([flags]) + nonce + len(payload).to_bytes(q, "big")
        header += encode_assoc_length(len(assoc)) + assoc
        blocks = b"".join(
            (
                header,
                _ZEROS[: -len(header) % BLOCK_SIZE],
                payload,
                _ZEROS[: -len(payload) % BLOCK_SIZE],
            )
        )
        encrypt_block = self._cipher.encrypt_block
        from_bytes = int.from_bytes
        y = 0
        for start in range(0, len(blocks), BLOCK_SIZE):
            chained = y ^ from_bytes(blocks[start : start + BLOCK_SIZE], "big")
            y = from_bytes(encrypt_block(chained.to_bytes(BLOCK_SIZE, "big")), "big")
        return y.to_bytes(BLOCK_SIZE, "big")[: self._authsize]

    def _keystream(self, nonce: bytes, size: int) -> bytes:
        """S_0 || S_1 || ... (§A.3), enough to cover ``size`` payload bytes after S_0."""
        q = 15 - len(nonce)
        prefix = bytes([q - 1]) + nonce
        counters = b"".join(
            prefix + i.to_bytes(q, "big") for i in range(1 + -(-size // BLOCK_SIZE))
        )
        return self._cipher.encrypt_blocks(counters)

    def _check_payload(self, nonce: bytes, size: int) -> None:
        q = 15 - len(nonce)
        if size >= 1 << 8 * q:
            raise InvalidArgument(
                f"ccm: a {len(nonce)}-byte nonce leaves a {q}-byte length field; "
                f"{size} bytes of payload do not fit"
            )

    def encrypt(self, iv: bytes, plaintext: Buffer, assoc: Buffer, /) -> bytes:
        """Generation-encryption (§6.1): C || (T XOR MSB_t(S_0))."""
        payload = byte_view(plaintext)
        self._check_payload(iv, len(payload))
        tag = self._cbc_mac(iv, payload, byte_view(assoc))
        stream = self._keystream(iv, len(payload))
        ciphertext = xor(payload, stream[BLOCK_SIZE : BLOCK_SIZE + len(payload)])
        return ciphertext + xor(tag, stream[: len(tag)])

    def decrypt(self, iv: bytes, data: Buffer, assoc: Buffer, /) -> bytes:
        """Decryption-verification (§6.2): P, or BadMessage ("INVALID") and no plaintext."""
        view = byte_view(data)
        size = len(view) - self._authsize
        self._check_payload(iv, size)
        stream = self._keystream(iv, size)
        plaintext = xor(view[:size], stream[BLOCK_SIZE : BLOCK_SIZE + size])
        tag = self._cbc_mac(iv, memoryview(plaintext), byte_view(assoc))
        if not hmac.compare_digest(xor(tag, stream[: len(tag)]), view[size:]):
            raise forged("ccm")
        return plaintext


def create(lookup: InnerLookup, args: tuple[str, ...]) -> Algorithm:
    """Build ``ccm(C)`` from the best (or the named) 128-bit block cipher C."""
    cipher = inner_of("ccm", lookup, args, AlgType.CIPHER)
    require(cipher.blocksize == BLOCK_SIZE, "ccm", cipher, "a 16-byte block cipher")
    return instance(
        "ccm",
        (cipher,),
        type=AlgType.AEAD,
        create=lambda: Ccm(cipher.create()),
        ivsize=IV_SIZE,
        ivsizes=NONCE_SIZES,
        min_keysize=cipher.min_keysize,
        max_keysize=cipher.max_keysize,
        maxauthsize=16,
        authsizes=AUTHSIZES,
    )


TEMPLATE = Template("ccm", create)
