"""The shape of each algorithm several providers implement, stated once.

An algorithm's type and sizes (block, IV and key sizes, tag sizes, the data rules) are
facts of the algorithm, not of an implementation: every provider registers a name through
:func:`record`, so all implementations of a name agree on what is valid input.
"""

from collections.abc import Callable
from typing import Any

from cryptoapi.alg import Algorithm, AlgType

_AES_KEYS = {"min_keysize": 16, "max_keysize": 32}
_CHACHA_KEY = {"min_keysize": 32, "max_keysize": 32}

SHAPES: dict[str, tuple[AlgType, dict[str, Any]]] = {
    "aes": (AlgType.CIPHER, {"blocksize": 16, **_AES_KEYS}),
    "ecb(aes)": (AlgType.SKCIPHER, {"blocksize": 16, **_AES_KEYS}),
    "cbc(aes)": (AlgType.SKCIPHER, {"blocksize": 16, "ivsize": 16, **_AES_KEYS}),
    "ctr(aes)": (AlgType.SKCIPHER, {"ivsize": 16, **_AES_KEYS}),
    "xts(aes)": (
        AlgType.SKCIPHER,
        {"blocksize": 16, "ivsize": 16, "min_keysize": 32, "max_keysize": 64, "min_datasize": 16},
    ),
    # The kernel's IV layouts: LE32 block counter || 96-bit nonce; 24-byte nonce || LE64.
    "chacha20": (AlgType.SKCIPHER, {"ivsize": 16, **_CHACHA_KEY}),
    "xchacha20": (AlgType.SKCIPHER, {"ivsize": 32, **_CHACHA_KEY}),
    "gcm(aes)": (
        AlgType.AEAD,
        {
            "ivsize": 12,
            "ivsizes": (1, 2**32),  # SP 800-38D: any non-empty IV
            "maxauthsize": 16,
            "authsizes": (4, 8, 12, 13, 14, 15, 16),
            **_AES_KEYS,
        },
    ),
    "ccm(aes)": (
        AlgType.AEAD,
        {
            "ivsize": 12,
            "ivsizes": (7, 13),  # SP 800-38C: the nonce
            "maxauthsize": 16,
            "authsizes": (4, 6, 8, 10, 12, 14, 16),
            **_AES_KEYS,
        },
    ),
    "rfc7539(chacha20,poly1305)": (
        AlgType.AEAD,
        {"ivsize": 12, "maxauthsize": 16, "authsizes": (16,), **_CHACHA_KEY},
    ),
    "xchacha20poly1305": (
        AlgType.AEAD,
        {"ivsize": 24, "maxauthsize": 16, "authsizes": (16,), **_CHACHA_KEY},
    ),
    # ESP's combined modes (RFC 4106, RFC 7634): an 8-byte IV, the 4-byte salt after the key
    "rfc4106(gcm(aes))": (
        AlgType.AEAD,
        {
            "ivsize": 8,
            "maxauthsize": 16,
            "authsizes": (8, 12, 16),
            "min_keysize": 20,
            "max_keysize": 36,
        },
    ),
    "rfc7539esp(chacha20,poly1305)": (
        AlgType.AEAD,
        {"ivsize": 8, "maxauthsize": 16, "authsizes": (16,), "min_keysize": 36, "max_keysize": 36},
    ),
    "cmac(aes)": (AlgType.SHASH, {"digestsize": 16, "blocksize": 16, "keyed": True, **_AES_KEYS}),
    "poly1305": (AlgType.SHASH, {"digestsize": 16, "blocksize": 16, "keyed": True, **_CHACHA_KEY}),
    "ghash": (
        AlgType.SHASH,
        {"digestsize": 16, "blocksize": 16, "keyed": True, "min_keysize": 16, "max_keysize": 16},
    ),
}


def record(
    name: str, driver: str, create: Callable[[], object], *, provider: str, priority: int
) -> Algorithm:
    """The registration record of one implementation of ``name``, shaped by SHAPES."""
    kind, sizes = SHAPES[name]
    return Algorithm(
        name=name,
        driver=driver,
        type=kind,
        priority=priority,
        provider=provider,
        create=create,
        **sizes,
    )
