"""pycryptodome's Triple DES, Blowfish, CAST5 and RIPEMD-160 (priority 200).

An implementation of the IPsec algorithms of RFC 2451 (3DES, CAST-128, Blowfish) and
RFC 2857 (RIPEMD-160) independent of OpenSSL, so that the two judge each other in the
differential fuzzer and the tests (pycryptodome has no Camellia). Each cipher is a
single-block ``cipher`` and a one-piece ``cbc(...)`` driver; key lengths are those of
:mod:`cryptoapi.providers.legacy_records`.

pycryptodome refuses a Triple DES key that degenerates to single DES (K1 = K2 or K2 = K3,
compared after setting the parity bits), which Linux accepts outside FIPS mode (see
:mod:`cryptoapi.providers.openssl.legacy`); the driver raises :class:`NeedFallback` for
such a key, so the next implementation serves it.
"""

from collections.abc import Callable
from types import ModuleType
from typing import Protocol

from Crypto.Cipher import CAST, DES3, Blowfish
from Crypto.Hash import RIPEMD160

from cryptoapi.alg import PRIORITY_PURE, Algorithm, Buffer
from cryptoapi.errors import InvalidArgument
from cryptoapi.providers.legacy_records import CIPHERS, check_key
from cryptoapi.providers.pycryptodome.hashes import _pycryptodome_hash
from cryptoapi.providers.records import record
from cryptoapi.transforms.base import NeedFallback

_LIBRARY: dict[str, ModuleType] = {"des3_ede": DES3, "blowfish": Blowfish, "cast5": CAST}
PYCRYPTODOME_CIPHERS = tuple(cipher for cipher in CIPHERS if cipher in _LIBRARY)


class CipherObject(Protocol):
    """What ``Crypto.Cipher.<module>.new`` makes, as far as these drivers use it."""

    def encrypt(self, data: Buffer, /) -> bytes: ...
    def decrypt(self, data: Buffer, /) -> bytes: ...


def _new(cipher: str, key: bytes, mode: int, **iv: bytes) -> CipherObject:
    """A pycryptodome cipher object for ``key`` (InvalidKey for a length ``cipher`` does
    not take; NeedFallback for a degenerate Triple DES key)."""
    check_key(cipher, key)
    module = _LIBRARY[cipher]
    try:
        made: CipherObject = module.new(key, mode, **iv)
    except ValueError as error:
        raise NeedFallback(f"{cipher}: pycryptodome: {error}") from None
    return made


class LegacyBlock:
    """The single-block cipher: one ECB object kept for the key's life (ECB has no state)."""

    def __init__(self, cipher: str) -> None:
        self._cipher = cipher

    def setkey(self, key: bytes, /) -> None:
        self._ecb = _new(self._cipher, key, _LIBRARY[self._cipher].MODE_ECB)

    def encrypt_block(self, block: Buffer, /) -> bytes:
        return self.encrypt_blocks(block)

    def decrypt_block(self, block: Buffer, /) -> bytes:
        return self.decrypt_blocks(block)

    def encrypt_blocks(self, data: Buffer, /) -> bytes:
        return self._whole_blocks(self._ecb.encrypt, data)

    def decrypt_blocks(self, data: Buffer, /) -> bytes:
        return self._whole_blocks(self._ecb.decrypt, data)

    def _whole_blocks(self, run: Callable[[Buffer], bytes], data: Buffer) -> bytes:
        try:
            return run(data)
        except ValueError as error:  # not whole blocks
            raise InvalidArgument(f"{self._cipher}: {error}") from None


class LegacyCbc:
    """``cbc(...)``: a fresh pycryptodome CBC object per message."""

    def __init__(self, cipher: str) -> None:
        self._cipher = cipher
        self._mode = _LIBRARY[cipher].MODE_CBC

    def setkey(self, key: bytes, /) -> None:
        _new(self._cipher, key, _LIBRARY[self._cipher].MODE_ECB)  # refuse it now, not later
        self._key = key

    def encrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        return _new(self._cipher, self._key, self._mode, iv=iv).encrypt(data)

    def decrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        return _new(self._cipher, self._key, self._mode, iv=iv).decrypt(data)


def _pycryptodome(name: str, driver: str, create: Callable[[], object]) -> Algorithm:
    return record(name, driver, create, provider="pycryptodome", priority=PRIORITY_PURE)


def _offers(cipher: str) -> tuple[Algorithm, Algorithm]:
    return (
        _pycryptodome(cipher, f"{cipher}-pycryptodome", lambda: LegacyBlock(cipher)),
        _pycryptodome(f"cbc({cipher})", f"cbc-{cipher}-pycryptodome", lambda: LegacyCbc(cipher)),
    )


ALGORITHMS = (
    *(alg for cipher in PYCRYPTODOME_CIPHERS for alg in _offers(cipher)),
    _pycryptodome_hash("rmd160", RIPEMD160, sha3=False),
)
