"""OpenSSL's message digests through CPython's OpenSSL binding, ``_hashlib`` (priority 300).

Its objects already are the hash states a ``shash`` core needs (update, digest, copy), so
each algorithm is its named constructor (``openssl_sha256``, which is what
``hashlib.sha256`` is under OpenSSL) wrapped in :class:`UnkeyedHash`. ``hashlib`` itself is
not imported: it also loads ``_blake2`` and probes every constructor, 2 ms that a first
sha256 digest does not need. Only digests this OpenSSL build offers are registered (a FIPS
build may lack md5); a Python without ``_hashlib`` has no OpenSSL hashes to offer.
"""

import _hashlib

from cryptoapi.alg import PRIORITY_OPENSSL, Algorithm
from cryptoapi.transforms.shash import unkeyed_shash

# Our name -> OpenSSL's name as _hashlib spells its constructors (SHA-3 with an underscore).
_HASHLIB_NAMES = {
    "md5": "md5",
    "sha1": "sha1",
    "sha224": "sha224",
    "sha256": "sha256",
    "sha384": "sha384",
    "sha512": "sha512",
    "sha3-224": "sha3_224",
    "sha3-256": "sha3_256",
    "sha3-384": "sha3_384",
    "sha3-512": "sha3_512",
}


def _openssl_hash(name: str, hashlib_name: str) -> Algorithm | None:
    try:
        new = getattr(_hashlib, f"openssl_{hashlib_name}")
        probe = new()
    except (AttributeError, ValueError):  # absent or disabled in this OpenSSL build
        return None
    return unkeyed_shash(
        name=name,
        driver=f"{name}-openssl",
        provider="openssl",
        priority=PRIORITY_OPENSSL,
        new=new,
        digestsize=probe.digest_size,
        blocksize=probe.block_size,
    )


ALGORITHMS = tuple(
    alg
    for name, hashlib_name in _HASHLIB_NAMES.items()
    if (alg := _openssl_hash(name, hashlib_name)) is not None
)
