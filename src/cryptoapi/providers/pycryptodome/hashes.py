"""pycryptodome's message digests through ``Crypto.Hash`` (priority 200).

A third implementation of MD5 (RFC 1321), SHA-1 and SHA-2 (FIPS 180-4) and SHA-3
(FIPS 202), independent of OpenSSL and of the generic references, so that when those two
disagree the differential fuzzer can name the odd one out.

``Crypto.Hash`` objects are nearly hashlib's: ``update``, ``digest`` and ``copy``. Two
differences are smoothed over here. SHA-3 states refuse ``update`` after ``digest`` unless
made with ``update_after_digest=True``, which they are. And ``new(data)`` skips hashing an
empty ``data`` without looking at its type, so ``new("")`` would not raise; the states are
made empty and then updated, so a ``str`` of any length raises TypeError as with hashlib.
"""

from collections.abc import Callable
from types import ModuleType

from Crypto.Hash import (
    MD5,
    SHA1,
    SHA3_224,
    SHA3_256,
    SHA3_384,
    SHA3_512,
    SHA224,
    SHA256,
    SHA384,
    SHA512,
)

from cryptoapi.alg import PRIORITY_PURE, Algorithm
from cryptoapi.transforms.cores import HashState
from cryptoapi.transforms.shash import hashlib_like, unkeyed_shash

_MERKLE_DAMGARD = {
    "md5": MD5,
    "sha1": SHA1,
    "sha224": SHA224,
    "sha256": SHA256,
    "sha384": SHA384,
    "sha512": SHA512,
}
_SHA3 = {"sha3-224": SHA3_224, "sha3-256": SHA3_256, "sha3-384": SHA3_384, "sha3-512": SHA3_512}


def _empty(module: ModuleType, sha3: bool) -> Callable[[], HashState]:
    """A maker of empty states that digest without finalizing (SHA-3 must be told so)."""
    new: Callable[[], HashState] = module.new
    return (lambda: module.new(update_after_digest=True)) if sha3 else new


def _pycryptodome_hash(name: str, module: ModuleType, sha3: bool) -> Algorithm:
    return unkeyed_shash(
        name=name,
        driver=f"{name}-pycryptodome",
        provider="pycryptodome",
        priority=PRIORITY_PURE,
        new=hashlib_like(_empty(module, sha3)),
        digestsize=module.digest_size,
        blocksize=module.block_size,
    )


ALGORITHMS = (
    *(_pycryptodome_hash(name, module, sha3=False) for name, module in _MERKLE_DAMGARD.items()),
    *(_pycryptodome_hash(name, module, sha3=True) for name, module in _SHA3.items()),
)
