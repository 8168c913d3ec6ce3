"""The ``kw`` template: the AES Key Wrap of RFC 3394 §2.2 (= KW of NIST SP 800-38F §6.2)
over a 128-bit block cipher, an skcipher as the kernel's ``crypto/keywrap.c`` offers it:
``kw(aes)``.

Wrap (§2.2.1, the index form): with A = IV and R_1 ... R_n the n >= 2 64-bit semiblocks of
the key data,

    for j = 0 ... 5, i = 1 ... n:   B = CIPH_K(A || R_i);  A = MSB64(B) ^ t;  R_i = LSB64(B)

with t = n*j + i (big-endian, 64 bits); the output is C_0 = A, C_i = R_i. Unwrap (§2.2.2)
runs the steps backwards and checks that A comes back as the IV (§2.2.3): if not, the key
data is refused with :class:`~cryptoapi.errors.BadMessage`, the kernel's -EBADMSG.

The IV is the 8-byte integrity check value of §2.2.3, A6A6A6A6A6A6A6A6 by default
(§2.2.3.1; an alternative value per §2.2.3.2 is accepted too). The kernel's skcipher writes
the final A into ``req->iv`` on encryption and reads it from there on decryption, keeping
it out of the ciphertext; here the IV argument cannot be written back, so

    encrypt(iv, P) = C_0 || C_1 ... C_n     (the kernel's iv_out || its ciphertext)
    decrypt(iv, C_0 || C_1 ... C_n) = P     (BadMessage unless C_0 unwraps to iv)

i.e. RFC 3394's own input and output, 8 bytes longer than the key data, and ``iv`` is the
check value both ways: what the kernel keeps fixed at A6A6... is the caller's choice here.
Key data is whole semiblocks, at least two (16 bytes); wrapped data at least 24 bytes.
"""

from cryptoapi.alg import Algorithm, AlgType, Buffer, InnerLookup, Template, instance
from cryptoapi.errors import BadMessage, InvalidArgument
from cryptoapi.templates._modes import CipherMode, byte_view, inner_of, require
from cryptoapi.transforms.base import equal_in_constant_time

BLOCK = 16
SEMIBLOCK = 8
ROUNDS = 6  # j = 0 ... 5
DEFAULT_IV = bytes.fromhex("a6a6a6a6a6a6a6a6")  # §2.2.3.1


def check_lengths(name: str, data: Buffer, *, wrapped: bool) -> None:
    """InvalidArgument unless ``data`` holds at least two semiblocks of key data."""
    least = 3 * SEMIBLOCK if wrapped else 2 * SEMIBLOCK
    if len(data) < least:
        what = "wrapped key data" if wrapped else "key data"
        raise InvalidArgument(f"{name}: {what} is at least {least} bytes, got {len(data)}")


class Kw(CipherMode):
    """RFC 3394 over a 16-byte block cipher core."""

    __slots__ = ()

    def encrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        """§2.2.1: C_0 || C_1 ... C_n for A = ``iv``."""
        view = byte_view(data)
        check_lengths("kw", view, wrapped=False)
        r = [bytes(view[at : at + SEMIBLOCK]) for at in range(0, len(view), SEMIBLOCK)]
        n = len(r)
        a = int.from_bytes(iv, "big")
        encrypt_block = self._cipher.encrypt_block
        for j in range(ROUNDS):
            for i in range(n):
                b = encrypt_block(a.to_bytes(SEMIBLOCK, "big") + r[i])
                a = int.from_bytes(b[:SEMIBLOCK], "big") ^ (n * j + i + 1)
                r[i] = b[SEMIBLOCK:]
        return a.to_bytes(SEMIBLOCK, "big") + b"".join(r)

    def decrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        """§2.2.2, then the integrity check of §2.2.3."""
        view = byte_view(data)
        check_lengths("kw", view, wrapped=True)
        a = int.from_bytes(view[:SEMIBLOCK], "big")
        r = [bytes(view[at : at + SEMIBLOCK]) for at in range(SEMIBLOCK, len(view), SEMIBLOCK)]
        n = len(r)
        decrypt_block = self._cipher.decrypt_block
        for j in reversed(range(ROUNDS)):
            for i in reversed(range(n)):
                b = decrypt_block((a ^ (n * j + i + 1)).to_bytes(SEMIBLOCK, "big") + r[i])
                a = int.from_bytes(b[:SEMIBLOCK], "big")
                r[i] = b[SEMIBLOCK:]
        if not equal_in_constant_time(a.to_bytes(SEMIBLOCK, "big"), iv):
            raise BadMessage("kw: the wrapped key data does not unwrap to its check value")
        return b"".join(r)


def create(lookup: InnerLookup, args: tuple[str, ...]) -> Algorithm:
    """Build ``kw(C)`` from the best (or the named) 16-byte block cipher C."""
    inner = inner_of("kw", lookup, args, AlgType.CIPHER)
    require(inner.blocksize == BLOCK, "kw", inner, "a 16-byte block cipher")
    return instance(
        "kw",
        (inner,),
        type=AlgType.SKCIPHER,
        create=lambda: Kw(inner.create(), BLOCK),
        blocksize=SEMIBLOCK,
        ivsize=SEMIBLOCK,
        min_keysize=inner.min_keysize,
        max_keysize=inner.max_keysize,
    )


TEMPLATE = Template("kw", create)
