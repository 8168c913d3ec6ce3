"""pycryptodome's AES and ChaCha20 through ``Crypto.Cipher`` (priority 200).

A third implementation of AES (FIPS 197) and its CBC and CTR modes (SP 800-38A) and of
ChaCha20 (RFC 8439 §2.4), independent of OpenSSL and of the generic references, so that
when those two disagree the differential fuzzer can name the odd one out.

``ctr(aes)`` takes the kernel's IV, the whole 16-byte counter block, incremented as one
big-endian 128-bit number (pycryptodome's CTR with an empty nonce and the block as its
initial value). ``chacha20`` takes the kernel's 16-byte IV, the LE32 block counter then the
96-bit nonce; pycryptodome takes the nonce and seeks to the counter's block. A keystream
past the 32-bit block counter raises :class:`NeedFallback`, as OpenSSL's driver does.
"""

from collections.abc import Callable

from Crypto.Cipher import AES, ChaCha20

from cryptoapi.alg import PRIORITY_PURE, Algorithm, Buffer
from cryptoapi.errors import InvalidArgument, InvalidKey
from cryptoapi.providers.generic.chacha20 import library_counter
from cryptoapi.providers.records import record

AES_KEY_SIZES = (16, 24, 32)
BLOCK = 16


def check_aes_key(key: bytes, name: str = "AES") -> None:
    """InvalidKey unless ``key`` is an AES-128, -192 or -256 key (before pycryptodome's
    ValueError could say so)."""
    if len(key) not in AES_KEY_SIZES:
        raise InvalidKey(f"{name} takes a 16-, 24- or 32-byte key, not {len(key)} bytes")


class AesBlock:
    """The single-block cipher: one ECB object kept for the key's life (ECB has no state)."""

    def setkey(self, key: bytes, /) -> None:
        check_aes_key(key)
        self._ecb = AES.new(key, AES.MODE_ECB)

    def encrypt_block(self, block: Buffer, /) -> bytes:
        return self.encrypt_blocks(block)

    def decrypt_block(self, block: Buffer, /) -> bytes:
        return self.decrypt_blocks(block)

    def encrypt_blocks(self, data: Buffer, /) -> bytes:
        try:
            return self._ecb.encrypt(data)
        except ValueError as error:  # not whole blocks
            raise InvalidArgument(f"aes: {error}") from None

    def decrypt_blocks(self, data: Buffer, /) -> bytes:
        try:
            return self._ecb.decrypt(data)
        except ValueError as error:
            raise InvalidArgument(f"aes: {error}") from None


class AesCbc:
    """``cbc(aes)``: a fresh pycryptodome CBC object per message."""

    def setkey(self, key: bytes, /) -> None:
        check_aes_key(key, "cbc(aes)")
        self._key = key

    def encrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        return AES.new(self._key, AES.MODE_CBC, iv=iv).encrypt(data)

    def decrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        return AES.new(self._key, AES.MODE_CBC, iv=iv).decrypt(data)


class AesCtr:
    """``ctr(aes)``: the IV is the initial counter block, all 128 bits of it the counter."""

    def setkey(self, key: bytes, /) -> None:
        check_aes_key(key, "ctr(aes)")
        self._key = key

    def encrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        return AES.new(self._key, AES.MODE_CTR, nonce=b"", initial_value=iv).encrypt(data)

    decrypt = encrypt


CHACHA_BLOCK = 64


class ChaCha20Cipher:
    """``chacha20`` (RFC 8439 §2.4); encryption and decryption are the same XOR."""

    def setkey(self, key: bytes, /) -> None:
        if len(key) != 32:
            raise InvalidKey(f"chacha20 takes a 32-byte key, not {len(key)} bytes")
        self._key = key

    def encrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        counter = library_counter("chacha20", iv, len(data))
        stream = ChaCha20.new(key=self._key, nonce=iv[4:])
        stream.seek(counter * CHACHA_BLOCK)
        return stream.encrypt(data)

    decrypt = encrypt


def _pycryptodome(name: str, driver: str, create: Callable[[], object]) -> Algorithm:
    return record(name, driver, create, provider="pycryptodome", priority=PRIORITY_PURE)


ALGORITHMS = (
    _pycryptodome("aes", "aes-pycryptodome", AesBlock),
    _pycryptodome("cbc(aes)", "cbc-aes-pycryptodome", AesCbc),
    _pycryptodome("ctr(aes)", "ctr-aes-pycryptodome", AesCtr),
    _pycryptodome("chacha20", "chacha20-pycryptodome", ChaCha20Cipher),
)
