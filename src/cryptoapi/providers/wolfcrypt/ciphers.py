"""wolfCrypt's AES (FIPS 197), its CBC and CTR modes (SP 800-38A) and ChaCha20
(RFC 8439 §2.4) through ``wolfcrypt.ciphers``, priority 200.

The binding's cipher objects keep their chaining state from call to call, refuse empty
input and, for CTR, a partial last block; so every message gets a fresh object, empty
input is answered here, and a CTR message is padded to whole blocks and the keystream
XOR cut back to its length. The single AES block is one-block CBC under a zero IV
(``E(P xor 0)``, ``D(C) xor 0``): the binding exposes no ECB. ``ctr(aes)`` takes the
kernel's IV, the whole counter block, which wolfCrypt increments as one big-endian
128-bit number. ``chacha20`` takes the kernel's 16-byte IV (LE32 block counter || 96-bit
nonce); a keystream past the 32-bit block counter raises :class:`NeedFallback`, as the
other drivers do.
"""

from collections.abc import Callable

from wolfcrypt.ciphers import MODE_CBC, MODE_CTR, Aes, ChaCha

from cryptoapi.alg import PRIORITY_PURE, Algorithm, Buffer
from cryptoapi.errors import InvalidArgument, InvalidKey
from cryptoapi.providers.generic.chacha20 import library_counter
from cryptoapi.providers.records import record

AES_KEY_SIZES = (16, 24, 32)
BLOCK = 16
_ZERO_IV = bytes(BLOCK)


def check_aes_key(key: bytes, name: str) -> None:
    """InvalidKey unless ``key`` is an AES-128, -192 or -256 key (before the binding's
    ValueError could say so)."""
    if len(key) not in AES_KEY_SIZES:
        raise InvalidKey(f"{name} takes a 16-, 24- or 32-byte key, not {len(key)} bytes")


def _whole_blocks(name: str, data: Buffer) -> bytes:
    data = bytes(data)
    if len(data) % BLOCK:
        raise InvalidArgument(f"{name}: {len(data)} bytes are not whole {BLOCK}-byte blocks")
    return data


class AesBlock:
    """The single-block cipher: each block is a one-block CBC message under a zero IV."""

    def setkey(self, key: bytes, /) -> None:
        check_aes_key(key, "aes")
        self._key = key

    def encrypt_block(self, block: Buffer, /) -> bytes:
        return self.encrypt_blocks(block)

    def decrypt_block(self, block: Buffer, /) -> bytes:
        return self.decrypt_blocks(block)

    def encrypt_blocks(self, data: Buffer, /) -> bytes:
        return b"".join(self._cbc().encrypt(block) for block in self._blocks(data))

    def decrypt_blocks(self, data: Buffer, /) -> bytes:
        return b"".join(self._cbc().decrypt(block) for block in self._blocks(data))

    def _cbc(self) -> Aes:
        return Aes(self._key, MODE_CBC, _ZERO_IV)

    @staticmethod
    def _blocks(data: Buffer) -> list[bytes]:
        data = _whole_blocks("aes", data)
        return [data[i : i + BLOCK] for i in range(0, len(data), BLOCK)]


class AesCbc:
    """``cbc(aes)``: a fresh wolfCrypt CBC object per message."""

    def setkey(self, key: bytes, /) -> None:
        check_aes_key(key, "cbc(aes)")
        self._key = key

    def encrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        data = _whole_blocks("cbc(aes)", data)
        return Aes(self._key, MODE_CBC, iv).encrypt(data) if data else b""

    def decrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        data = _whole_blocks("cbc(aes)", data)
        return Aes(self._key, MODE_CBC, iv).decrypt(data) if data else b""


class AesCtr:
    """``ctr(aes)``: the IV is the initial counter block, all 128 bits of it the counter."""

    def setkey(self, key: bytes, /) -> None:
        check_aes_key(key, "ctr(aes)")
        self._key = key

    def encrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        data = bytes(data)
        if not data:
            return b""
        padded = data + bytes(-len(data) % BLOCK)
        stream: bytes = Aes(self._key, MODE_CTR, iv).encrypt(padded)
        return stream[: len(data)]

    decrypt = encrypt


class ChaCha20Cipher:
    """``chacha20`` (RFC 8439 §2.4); encryption and decryption are the same XOR."""

    def setkey(self, key: bytes, /) -> None:
        if len(key) != 32:
            raise InvalidKey(f"chacha20 takes a 32-byte key, not {len(key)} bytes")
        self._key = key

    def encrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        data = bytes(data)
        counter = library_counter("chacha20", iv, len(data))
        if not data:
            return b""
        stream = ChaCha(self._key, 32)
        stream.set_iv(iv[4:], counter)
        encrypted: bytes = stream.encrypt(data)
        return encrypted

    decrypt = encrypt


def _wolfcrypt(name: str, driver: str, create: Callable[[], object]) -> Algorithm:
    return record(name, driver, create, provider="wolfcrypt", priority=PRIORITY_PURE)


ALGORITHMS = (
    _wolfcrypt("aes", "aes-wolfcrypt", AesBlock),
    _wolfcrypt("cbc(aes)", "cbc-aes-wolfcrypt", AesCbc),
    _wolfcrypt("ctr(aes)", "ctr-aes-wolfcrypt", AesCtr),
    _wolfcrypt("chacha20", "chacha20-wolfcrypt", ChaCha20Cipher),
)
