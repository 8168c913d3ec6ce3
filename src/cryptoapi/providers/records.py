"""The shape of each algorithm several providers implement, stated once.

An algorithm's type and sizes (block, IV and key sizes, tag sizes, the data rules) are
facts of the algorithm, not of an implementation: every provider registers a name through
:func:`record`, so all implementations of a name agree on what is valid input. The legacy
IPsec ciphers' and the key-agreement algorithms' shapes come from their own tables
(:mod:`~cryptoapi.providers.legacy_records`, :mod:`~cryptoapi.providers.kpp_records`).

The kernel registers blake2b-*, crc32c and xxhash64 as keyed ``shash`` algorithms whose key
is optional (``CRYPTO_ALG_OPTIONAL_KEY``); here they are ``optional_key`` shashes that
start with the kernel's default when no key is set: no key for BLAKE2 (RFC 7693 §2.1:
kk = 0), the seed ``ff ff ff ff`` for crc32c, seed 0 for xxhash64.
"""

from __future__ import annotations

from cryptoapi.alg import Algorithm, AlgType

TYPE_CHECKING = False  # not typing's: importing typing costs more than hashlib; mypy sets it true

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


_AES_KEYS = {"min_keysize": 16, "max_keysize": 32}
_CHACHA_KEY = {"min_keysize": 32, "max_keysize": 32}
_GF128_KEY = {"digestsize": 16, "keyed": True, "min_keysize": 16, "max_keysize": 16}

_CLASSIC: dict[str, tuple[AlgType, dict[str, Any]]] = {
    "aes": (AlgType.CIPHER, {"blocksize": 16, **_AES_KEYS}),
    "ecb(aes)": (AlgType.SKCIPHER, {"blocksize": 16, **_AES_KEYS}),
    "cbc(aes)": (AlgType.SKCIPHER, {"blocksize": 16, "ivsize": 16, **_AES_KEYS}),
    "ctr(aes)": (AlgType.SKCIPHER, {"ivsize": 16, **_AES_KEYS}),
    "xts(aes)": (
        AlgType.SKCIPHER,
        {"blocksize": 16, "ivsize": 16, "min_keysize": 32, "max_keysize": 64, "min_datasize": 16},
    ),
    # RFC 3394 key wrap: 8-byte semiblocks; the IV is the 8-byte integrity check value
    "kw(aes)": (AlgType.SKCIPHER, {"blocksize": 8, "ivsize": 8, **_AES_KEYS}),
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
    # encrypt-then-MAC as the authenc template builds it over HMAC and AES-CBC: a 16-byte
    # IV, key enckeylen (4 bytes) || authkey (up to 1024 bytes) || AES key, tags of 1 byte
    # to the whole digest
    **{
        f"authenc(hmac({name}),cbc(aes))": (
            AlgType.AEAD,
            {
                "blocksize": 16,
                "ivsize": 16,
                "min_keysize": 4 + 16,
                "max_keysize": 4 + 1024 + 32,
                "maxauthsize": size,
                "authsizes": tuple(range(1, size + 1)),
            },
        )
        for name, size in (("sha1", 20), ("sha256", 32), ("sha384", 48), ("sha512", 64))
    },
    "cmac(aes)": (AlgType.SHASH, {"digestsize": 16, "blocksize": 16, "keyed": True, **_AES_KEYS}),
    "poly1305": (AlgType.SHASH, {"digestsize": 16, "blocksize": 16, "keyed": True, **_CHACHA_KEY}),
    # GHASH (SP 800-38D §6.4) and POLYVAL (RFC 8452 §3): keyed with H, one block
    **dict.fromkeys(
        ("ghash", "polyval"),
        (
            AlgType.SHASH,
            {
                "digestsize": 16,
                "blocksize": 16,
                "keyed": True,
                "min_keysize": 16,
                "max_keysize": 16,
            },
        ),
    ),
}


_OPTIONAL_KEY = {"keyed": True, "optional_key": True}

BLAKE2B_SIZES = {"blake2b-160": 20, "blake2b-256": 32, "blake2b-384": 48, "blake2b-512": 64}

_HASHES_AND_CIPHERS: dict[str, tuple[AlgType, dict[str, Any]]] = {
    **{
        name: (
            AlgType.SHASH,
            {"digestsize": size, "blocksize": 128, **_OPTIONAL_KEY, "max_keysize": 64},
        )
        for name, size in BLAKE2B_SIZES.items()
    },
    "blake2s-256": (
        AlgType.SHASH,
        {"digestsize": 32, "blocksize": 64, **_OPTIONAL_KEY, "max_keysize": 32},
    ),
    # The kernel's block sizes: 1 for crc32c, 32 (the stripe) for xxhash64.
    "crc32c": (
        AlgType.SHASH,
        {"digestsize": 4, "blocksize": 1, **_OPTIONAL_KEY, "min_keysize": 4, "max_keysize": 4},
    ),
    "xxhash64": (
        AlgType.SHASH,
        {"digestsize": 8, "blocksize": 32, **_OPTIONAL_KEY, "min_keysize": 8, "max_keysize": 8},
    ),
    "sm4": (AlgType.CIPHER, {"blocksize": 16, "min_keysize": 16, "max_keysize": 16}),
    # The kernel's aegis128: a 16-byte nonce, tags of 8 to 16 bytes, stream (blocksize 1).
    "aegis128": (
        AlgType.AEAD,
        {
            "ivsize": 16,
            "maxauthsize": 16,
            "authsizes": tuple(range(8, 17)),
            "min_keysize": 16,
            "max_keysize": 16,
        },
    ),
}

SHAPES: dict[str, tuple[AlgType, dict[str, Any]]] = {**_CLASSIC, **_HASHES_AND_CIPHERS}
"""Name -> (type, sizes) for :func:`record`, but for the legacy IPsec ciphers' and the
key-agreement algorithms', which their own tables state (read only by their providers, so
that an AES-GCM provider does not import the DH key format)."""


def shape(name: str) -> tuple[AlgType, dict[str, Any]]:
    """The (type, sizes) of ``name``: from SHAPES, else the legacy or kpp table (KeyError
    for a name none of them states)."""
    found = SHAPES.get(name)
    if found is not None:
        return found
    from cryptoapi.providers.kpp_records import SHAPES as KPP_SHAPES
    from cryptoapi.providers.legacy_records import SHAPES as LEGACY_SHAPES

    return LEGACY_SHAPES.get(name) or KPP_SHAPES[name]


def record(
    name: str, driver: str, create: Callable[[], object], *, provider: str, priority: int
) -> Algorithm:
    """The registration record of one implementation of ``name``, shaped by :func:`shape`."""
    kind, sizes = shape(name)
    return Algorithm(
        name=name,
        driver=driver,
        type=kind,
        priority=priority,
        provider=provider,
        create=create,
        **sizes,
    )
