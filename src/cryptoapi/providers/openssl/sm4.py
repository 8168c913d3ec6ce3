"""OpenSSL's SM4 (GB/T 32907-2016) through ``cryptography`` (priority 300): the single-block
``sm4`` cipher, on which the generic ``ecb``, ``cbc`` and ``ctr`` templates build
``ecb(sm4)``, ``cbc(sm4)`` and ``ctr(sm4)``. Registered only where this OpenSSL build has
SM4 (cryptography raises UnsupportedAlgorithm otherwise).
"""

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from cryptoapi.alg import PRIORITY_OPENSSL, Algorithm
from cryptoapi.errors import InvalidKey
from cryptoapi.providers.openssl.ciphers import AesBlock
from cryptoapi.providers.records import record

KEY_SIZE = 16


class Sm4Block(AesBlock):
    """The single-block cipher: AES's ECB contexts, over SM4."""

    def setkey(self, key: bytes, /) -> None:
        if len(key) != KEY_SIZE:
            raise InvalidKey(f"SM4 takes a 16-byte key, not {len(key)} bytes")
        cipher = Cipher(algorithms.SM4(key), modes.ECB())
        self._encryptor, self._decryptor = cipher.encryptor(), cipher.decryptor()


def _available() -> tuple[Algorithm, ...]:
    try:
        Cipher(algorithms.SM4(bytes(KEY_SIZE)), modes.ECB()).encryptor()
    except UnsupportedAlgorithm:
        return ()
    return (record("sm4", "sm4-openssl", Sm4Block, provider="openssl", priority=PRIORITY_OPENSSL),)


ALGORITHMS = _available()
