"""The shapes of the ciphers and hash IPsec still names that issue 11 adds (Triple DES,
Camellia, Blowfish, CAST5, RIPEMD-160), with their key lengths, for
:mod:`cryptoapi.providers.records` (which takes their shapes into ``SHAPES``).

Key lengths are the kernel's (``crypto/des_generic.c``, ``camellia_generic.c``,
``blowfish_generic.c``, ``cast5_generic.c``): des3_ede 24 bytes (three DES keys, keying
option 1 of SP 800-67; the kernel takes no two-key form), camellia 16, 24 or 32 (RFC 3713
§2.1), blowfish 4 to 56, cast5 5 to 16 (RFC 2144 §2.5: 40 to 128 bits in 8-bit steps).
"""

from __future__ import annotations

from cryptoapi.alg import AlgType
from cryptoapi.errors import InvalidKey

TYPE_CHECKING = False  # not typing's: importing typing costs more than hashlib; mypy sets it true

if TYPE_CHECKING:
    from typing import Any


KEY_LENGTHS: dict[str, tuple[int, ...]] = {
    "des3_ede": (24,),
    "camellia": (16, 24, 32),
    "blowfish": tuple(range(4, 57)),
    "cast5": tuple(range(5, 17)),
}
"""Cipher -> the key lengths (bytes) it takes."""

BLOCK_SIZES = {"des3_ede": 8, "camellia": 16, "blowfish": 8, "cast5": 8}
CIPHERS = tuple(KEY_LENGTHS)

RMD160_DIGEST = 20
RMD160_BLOCK = 64


def _keys(cipher: str) -> dict[str, int]:
    return {"min_keysize": KEY_LENGTHS[cipher][0], "max_keysize": KEY_LENGTHS[cipher][-1]}


SHAPES: dict[str, tuple[AlgType, dict[str, Any]]] = {
    **{
        cipher: (AlgType.CIPHER, {"blocksize": BLOCK_SIZES[cipher], **_keys(cipher)})
        for cipher in CIPHERS
    },
    **{
        f"cbc({cipher})": (
            AlgType.SKCIPHER,
            {"blocksize": BLOCK_SIZES[cipher], "ivsize": BLOCK_SIZES[cipher], **_keys(cipher)},
        )
        for cipher in CIPHERS
    },
}


def check_key(cipher: str, key: bytes) -> None:
    """InvalidKey unless ``key`` has a length ``cipher`` takes (before a library's
    ValueError could say so, in its own words)."""
    lengths = KEY_LENGTHS[cipher]
    if len(key) not in lengths:
        many = len(lengths) > 3
        allowed = f"{lengths[0]} to {lengths[-1]}" if many else ", ".join(map(str, lengths))
        raise InvalidKey(f"{cipher} takes a key of {allowed} bytes, not {len(key)}")
