"""OpenSSL's AES and ChaCha20 through ``cryptography`` (priority 300; XChaCha20 200).

One-piece drivers for the common AES modes, as the kernel's aesni drivers are, plus the
single-block ``aes`` cipher that generic mode templates can build on. Where OpenSSL lacks a
parameter the algorithm defines (AES-192-XTS; a ChaCha20 keystream past the 32-bit block
counter) the core raises :class:`NeedFallback` and the transform uses the next
implementation. ``xchacha20-openssl`` derives its subkey with the generic HChaCha20 and
streams with OpenSSL, so it is a partial implementation at priority 200.
"""

import hmac
from collections.abc import Callable

from cryptography.hazmat.primitives.ciphers import Cipher, CipherContext, algorithms, modes

from cryptoapi.alg import PRIORITY_OPENSSL, PRIORITY_PURE, Algorithm, Buffer
from cryptoapi.errors import InvalidKey
from cryptoapi.providers.generic.chacha20 import hchacha20, library_counter
from cryptoapi.providers.records import record
from cryptoapi.transforms.base import NeedFallback

AES_KEY_SIZES = (16, 24, 32)
BLOCK = 16


def _aes(key: bytes) -> algorithms.AES:
    if len(key) not in AES_KEY_SIZES:
        raise InvalidKey(f"AES takes a 16-, 24- or 32-byte key, not {len(key)} bytes")
    return algorithms.AES(key)


def _run(context: CipherContext, data: Buffer) -> bytes:
    return context.update(data) + context.finalize()


class AesBlock:
    """The single-block cipher: ECB contexts kept for the key's life (ECB has no state)."""

    def setkey(self, key: bytes, /) -> None:
        cipher = Cipher(_aes(key), modes.ECB())
        self._encryptor, self._decryptor = cipher.encryptor(), cipher.decryptor()

    def encrypt_block(self, block: Buffer, /) -> bytes:
        return self._encryptor.update(block)

    def decrypt_block(self, block: Buffer, /) -> bytes:
        return self._decryptor.update(block)

    encrypt_blocks = encrypt_block
    decrypt_blocks = decrypt_block


class AesEcb(AesBlock):
    """``ecb(aes)``: the skcipher face of the same contexts."""

    def encrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        return self._encryptor.update(data)

    def decrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        return self._decryptor.update(data)


class AesMode:
    """``cbc(aes)``, ``ctr(aes)``: a fresh OpenSSL context per message."""

    def __init__(self, mode: type[modes.CBC] | type[modes.CTR]) -> None:
        self._mode = mode

    def setkey(self, key: bytes, /) -> None:
        self._algorithm = _aes(key)

    def encrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        return _run(Cipher(self._algorithm, self._mode(iv)).encryptor(), data)

    def decrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        return _run(Cipher(self._algorithm, self._mode(iv)).decryptor(), data)


class AesXts:
    """``xts(aes)`` for AES-128 and AES-256 pairs; AES-192 pairs need the fallback."""

    def setkey(self, key: bytes, /) -> None:
        if len(key) == 2 * 24:
            raise NeedFallback  # OpenSSL has no AES-192-XTS
        if len(key) not in (2 * 16, 2 * 32):
            raise InvalidKey(f"xts(aes) takes two AES keys (32, 48 or 64 bytes), not {len(key)}")
        half = len(key) // 2
        if hmac.compare_digest(key[:half], key[half:]):
            raise InvalidKey("xts(aes): the two key halves must differ")
        self._algorithm = algorithms.AES(key)

    def encrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        return _run(Cipher(self._algorithm, modes.XTS(iv)).encryptor(), data)

    def decrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        return _run(Cipher(self._algorithm, modes.XTS(iv)).decryptor(), data)


def _chacha20(key: bytes, iv: bytes, data: Buffer, name: str = "chacha20") -> bytes:
    """XOR with the keystream from the kernel's 16-byte IV (LE32 block counter || 96-bit
    nonce), which is exactly the nonce ``cryptography`` takes."""
    library_counter(name, iv, len(data))
    return Cipher(algorithms.ChaCha20(key, iv), None).encryptor().update(data)


class ChaCha20:
    """``chacha20`` (RFC 8439 §2.4); encryption and decryption are the same XOR."""

    def setkey(self, key: bytes, /) -> None:
        if len(key) != 32:
            raise InvalidKey(f"{type(self).__name__.lower()} takes a 32-byte key, not {len(key)}")
        self._key = key

    def encrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        return _chacha20(self._key, iv, data)

    decrypt = encrypt


class XChaCha20(ChaCha20):
    """``xchacha20``: IV = 24-byte nonce || LE64 stream position (the kernel's layout); the
    ChaCha20 IV after HChaCha20 is the stream position then the last 8 nonce bytes."""

    def encrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        return _chacha20(hchacha20(self._key, iv[:16]), iv[24:32] + iv[16:24], data, "xchacha20")

    decrypt = encrypt


def _openssl(name: str, driver: str, create: Callable[[], object]) -> Algorithm:
    return record(name, driver, create, provider="openssl", priority=PRIORITY_OPENSSL)


ALGORITHMS = (
    _openssl("aes", "aes-openssl", AesBlock),
    _openssl("ecb(aes)", "ecb-aes-openssl", AesEcb),
    _openssl("cbc(aes)", "cbc-aes-openssl", lambda: AesMode(modes.CBC)),
    _openssl("ctr(aes)", "ctr-aes-openssl", lambda: AesMode(modes.CTR)),
    _openssl("xts(aes)", "xts-aes-openssl", AesXts),
    _openssl("chacha20", "chacha20-openssl", ChaCha20),
    record("xchacha20", "xchacha20-openssl", XChaCha20, provider="openssl", priority=PRIORITY_PURE),
)
