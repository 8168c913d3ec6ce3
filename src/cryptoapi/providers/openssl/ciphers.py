"""OpenSSL's AES and ChaCha20 through ``cryptography`` (priority 300; XChaCha20 200).

One-piece drivers for the common AES modes, as the kernel's aesni drivers are, plus the
single-block ``aes`` cipher that generic mode templates can build on. Where OpenSSL lacks a
parameter the algorithm defines (AES-192-XTS; a ChaCha20 keystream past the 32-bit block
counter) the core raises :class:`NeedFallback` and the transform uses the next
implementation. ``xchacha20-openssl`` derives its subkey with the generic HChaCha20 and
streams with OpenSSL, so it is a partial implementation at priority 200.
"""

import hmac
import threading
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


class AesCbc:
    """``cbc(aes)`` (NIST SP 800-38A §6.2): one OpenSSL context each way, kept for the key's
    life and chained across messages, rather than a context per message (4.5 us of a 1.4 KB
    message's 5.4 here; the ESP data path makes one per packet).

    A context's chaining value after a message is that message's last ciphertext block.
    Encrypting the next message under its own IV then needs only its first block changed:
    fed P1 xor IV xor C_prev, the context computes E(P1 xor IV), and every later block is
    CBC's as it stands. Decrypting feeds IV || C and drops the first block out: block i of
    CBC decryption needs only C(i-1), which is the IV for the first. Each message's output
    is exactly a fresh context's. A message that is not whole blocks of bytes (which CBC
    refuses), or a call while another thread holds the context, takes a fresh context."""

    def setkey(self, key: bytes, /) -> None:
        self._algorithm = _aes(key)
        cipher = Cipher(self._algorithm, modes.CBC(bytes(BLOCK)))
        self._encryptor, self._decryptor = cipher.encryptor(), cipher.decryptor()
        self._chain = 0  # the encryptor's chaining value: its last ciphertext block
        self._encrypting, self._decrypting = threading.Lock(), threading.Lock()

    def encrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        if _whole_blocks(iv, data) and self._encrypting.acquire(blocking=False):
            try:
                first = int.from_bytes(data[:BLOCK]) ^ int.from_bytes(iv) ^ self._chain
                out = self._encryptor.update(first.to_bytes(BLOCK) + data[BLOCK:])
                self._chain = int.from_bytes(out[-BLOCK:])
                return out
            finally:
                self._encrypting.release()
        return _run(Cipher(self._algorithm, modes.CBC(iv)).encryptor(), data)

    def decrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        if _whole_blocks(iv, data) and self._decrypting.acquire(blocking=False):
            try:
                return self._decryptor.update(iv + data)[BLOCK:]
            finally:
                self._decrypting.release()
        return _run(Cipher(self._algorithm, modes.CBC(iv)).decryptor(), data)


def _whole_blocks(iv: bytes, data: Buffer) -> bool:
    """A message the chained contexts take: bytes, a block's IV, whole blocks, not empty."""
    return type(data) is bytes and len(iv) == BLOCK and len(data) % BLOCK == 0 and len(data) > 0


class AesCtr:
    """``ctr(aes)``: a fresh OpenSSL context per message (its IV is the whole counter)."""

    def setkey(self, key: bytes, /) -> None:
        self._algorithm = _aes(key)

    def encrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        return _run(Cipher(self._algorithm, modes.CTR(iv)).encryptor(), data)

    decrypt = encrypt  # CTR's decryption is its encryption


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
    _openssl("cbc(aes)", "cbc-aes-openssl", AesCbc),
    _openssl("ctr(aes)", "ctr-aes-openssl", AesCtr),
    _openssl("xts(aes)", "xts-aes-openssl", AesXts),
    _openssl("chacha20", "chacha20-openssl", ChaCha20),
    record("xchacha20", "xchacha20-openssl", XChaCha20, provider="openssl", priority=PRIORITY_PURE),
)
