"""OpenSSL's message digests through ``hashlib`` (priority 300).

hashlib's objects already are the hash states a ``shash`` core needs (update, digest,
copy), so each algorithm is hashlib's named constructor wrapped in :class:`UnkeyedHash`.
Only digests this OpenSSL build offers are registered (a FIPS build may lack md5).
"""

import hashlib

from cryptoapi.alg import PRIORITY_OPENSSL, Algorithm
from cryptoapi.transforms.shash import unkeyed_shash

# Our name -> hashlib's name (SHA-3 is spelt with an underscore there).
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
        new = getattr(hashlib, hashlib_name)
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
