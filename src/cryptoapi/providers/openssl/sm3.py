"""OpenSSL's SM3 (GB/T 32905-2016) through ``hashlib.new("sm3")`` (priority 300).

hashlib has no named constructor for SM3; ``hashlib.new`` reaches OpenSSL's digest when
this build has it (OpenSSL 1.1.1 and later, unless disabled), and only then is it
registered.
"""

import hashlib

from cryptoapi.alg import PRIORITY_OPENSSL, Algorithm, Buffer
from cryptoapi.transforms.cores import HashState
from cryptoapi.transforms.shash import unkeyed_shash


def new(data: Buffer = b"") -> HashState:
    """A running SM3, hashlib's own object."""
    return hashlib.new("sm3", data)


def _available() -> tuple[Algorithm, ...]:
    try:
        new()
    except ValueError:  # "unsupported hash type": absent from this OpenSSL build
        return ()
    return (
        unkeyed_shash(
            name="sm3",
            driver="sm3-openssl",
            provider="openssl",
            priority=PRIORITY_OPENSSL,
            new=new,
            digestsize=32,
            blocksize=64,
        ),
    )


ALGORITHMS = _available()
