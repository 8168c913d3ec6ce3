"""The shape of each key-agreement (``kpp``) algorithm, stated once, as ``records.SHAPES``
states the others': private key sizes and public value sizes, so every provider of a name
accepts and refuses the same inputs.

Formats are the kernel's: an X25519 key and public value are 32 bytes (RFC 7748 §5); an
ECDH private key is the big-endian scalar of the curve's size, and a public value is the
raw point x || y, with no SEC 1 0x04 prefix (``crypto/ecdh.c``); the shared secret is x.
A ``dh`` private key is the kernel's packed secret (:mod:`cryptoapi.transforms.dh_secret`).
"""

from __future__ import annotations

from cryptoapi.alg import AlgType
from cryptoapi.errors import InvalidArgument
from cryptoapi.transforms.dh_secret import HEADER_SIZE, MAX_P_BITS

TYPE_CHECKING = False  # not typing's: importing typing costs more than hashlib; mypy sets it true

if TYPE_CHECKING:
    from typing import Any


PUBLIC_SIZES: dict[str, int] = {"curve25519": 32, "ecdh-nist-p256": 64, "ecdh-nist-p384": 96}
"""Name -> the length of a public value (ECDH: x || y)."""

DH_MAX_P = MAX_P_BITS // 8  # bytes of the largest p a packed secret may hold

SHAPES: dict[str, tuple[AlgType, dict[str, Any]]] = {
    "curve25519": (AlgType.KPP, {"min_keysize": 32, "max_keysize": 32}),
    "ecdh-nist-p256": (AlgType.KPP, {"min_keysize": 32, "max_keysize": 32}),
    "ecdh-nist-p384": (AlgType.KPP, {"min_keysize": 48, "max_keysize": 48}),
    "dh": (AlgType.KPP, {"min_keysize": HEADER_SIZE, "max_keysize": HEADER_SIZE + 3 * DH_MAX_P}),
}
"""Name -> (kpp, the smallest and largest private key in bytes), for ``records.SHAPES``."""


def check_public_size(name: str, peer_public: bytes) -> None:
    """InvalidArgument unless ``peer_public`` has the length of ``name``'s public values."""
    size = PUBLIC_SIZES[name]
    if len(peer_public) != size:
        raise InvalidArgument(
            f"{name}: a public value is {size} bytes, not {len(peer_public)}"
            + (" (raw x || y, without the 0x04 prefix)" if name.startswith("ecdh") else "")
        )
