"""OpenSSL's Triple DES, Camellia, Blowfish and CAST5 through ``cryptography``, and its
RIPEMD-160 through ``hashlib`` (priority 300).

The algorithms IPsec key managers still configure and Linux's PF_KEY still offers: 3DES,
CAST-128 and Blowfish in CBC mode for ESP (RFC 2451), Camellia-CBC (RFC 4312) and
HMAC-RIPEMD-160-96 (RFC 2857). ``cryptography`` keeps the ciphers under
``hazmat.decrepit``, so this module is imported only when one of these names is looked up,
never on the way to the first sha256 or gcm(aes).

Each cipher comes as the single-block ``cipher`` the generic templates build on and as a
one-piece ``cbc(...)`` driver, as :mod:`cryptoapi.providers.openssl.ciphers` offers AES
(whose ECB contexts the block ciphers reuse). Key lengths are those of
:mod:`cryptoapi.providers.legacy_records`.

Triple DES keys whose thirds repeat (K1 = K2 or K2 = K3: the cipher degenerates to single
DES) are accepted, as Linux accepts them: its ``des3_ede_verify_key`` refuses them only in
FIPS mode or when the caller asks to forbid weak keys (``CRYPTO_TFM_REQ_FORBID_WEAK_KEYS``),
neither of which this API has. OpenSSL takes them as they are.

RIPEMD-160 is registered only where this OpenSSL offers it (OpenSSL 3.0.7 and later have it
in the default provider; older 3.0 releases only in the legacy one).
"""

import hashlib
from collections.abc import Callable

from cryptography.hazmat.decrepit.ciphers.algorithms import CAST5, Blowfish, Camellia, TripleDES
from cryptography.hazmat.primitives.ciphers import BlockCipherAlgorithm, Cipher, modes

from cryptoapi.alg import PRIORITY_OPENSSL, Algorithm, Buffer
from cryptoapi.providers.legacy_records import CIPHERS, RMD160_BLOCK, RMD160_DIGEST, check_key
from cryptoapi.providers.openssl.ciphers import AesBlock, _run
from cryptoapi.providers.records import record
from cryptoapi.transforms.cores import HashState
from cryptoapi.transforms.shash import unkeyed_shash

_LIBRARY: dict[str, Callable[[bytes], BlockCipherAlgorithm]] = {
    "des3_ede": TripleDES,
    "camellia": Camellia,
    "blowfish": Blowfish,
    "cast5": CAST5,
}


def _algorithm(cipher: str, key: bytes) -> BlockCipherAlgorithm:
    check_key(cipher, key)
    return _LIBRARY[cipher](key)


class LegacyBlock(AesBlock):
    """The single-block cipher: AES's ECB contexts, over another of OpenSSL's ciphers."""

    def __init__(self, cipher: str) -> None:
        self._cipher = cipher

    def setkey(self, key: bytes, /) -> None:
        cipher = Cipher(_algorithm(self._cipher, key), modes.ECB())
        self._encryptor, self._decryptor = cipher.encryptor(), cipher.decryptor()


class LegacyCbc:
    """``cbc(...)``: a fresh OpenSSL CBC context per message, as ``cbc-aes-openssl``."""

    def __init__(self, cipher: str) -> None:
        self._cipher = cipher

    def setkey(self, key: bytes, /) -> None:
        self._algorithm = _algorithm(self._cipher, key)

    def encrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        return _run(Cipher(self._algorithm, modes.CBC(iv)).encryptor(), data)

    def decrypt(self, iv: bytes, data: Buffer, /) -> bytes:
        return _run(Cipher(self._algorithm, modes.CBC(iv)).decryptor(), data)


def _ripemd160(data: Buffer = b"") -> HashState:
    return hashlib.new("ripemd160", data)


def _rmd160() -> tuple[Algorithm, ...]:
    try:
        _ripemd160()
    except ValueError:  # not in this OpenSSL build (or not in its loaded providers)
        return ()
    return (
        unkeyed_shash(
            name="rmd160",
            driver="rmd160-openssl",
            provider="openssl",
            priority=PRIORITY_OPENSSL,
            new=_ripemd160,
            digestsize=RMD160_DIGEST,
            blocksize=RMD160_BLOCK,
        ),
    )


def _openssl(name: str, driver: str, create: Callable[[], object]) -> Algorithm:
    return record(name, driver, create, provider="openssl", priority=PRIORITY_OPENSSL)


def _offers(cipher: str) -> tuple[Algorithm, Algorithm]:
    return (
        _openssl(cipher, f"{cipher}-openssl", lambda: LegacyBlock(cipher)),
        _openssl(f"cbc({cipher})", f"cbc-{cipher}-openssl", lambda: LegacyCbc(cipher)),
    )


ALGORITHMS = (*(alg for cipher in CIPHERS for alg in _offers(cipher)), *_rmd160())
