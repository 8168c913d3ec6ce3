"""X25519, RFC 7748 §5: Diffie-Hellman on Curve25519 with the Montgomery ladder.

    p = 2^255 - 19,  a24 = 121665,  base point u = 9
    decodeScalar25519: clear bits 0, 1, 2 and 255, set bit 254
    decodeUCoordinate: little-endian, bit 255 masked off (non-canonical values reduce mod p)

The shared secret is X25519(k, u). A peer value of small order makes it all zeros, which
§6.1 lets a protocol refuse and the kernel does (``-EKEYREJECTED``): InvalidArgument here.
An all-zero private key is refused too, as the kernel's ``curve25519_set_secret`` does.

Python integers, no constant time: a reference for checking, not for secrets (README).
"""

import os

from cryptoapi.alg import PRIORITY_GENERIC
from cryptoapi.errors import InvalidArgument, InvalidKey
from cryptoapi.providers.kpp_records import check_public_size
from cryptoapi.providers.records import record

P = 2**255 - 19
A24 = 121665
BASE_U = 9
KEY_SIZE = 32


def decode_scalar(k: bytes) -> int:
    """decodeScalar25519 (§5)."""
    scalar = bytearray(k)
    scalar[0] &= 248
    scalar[31] &= 127
    scalar[31] |= 64
    return int.from_bytes(scalar, "little")


def decode_u(u: bytes) -> int:
    """decodeUCoordinate for 255 bits (§5): the top bit of the last byte is ignored."""
    return int.from_bytes(u, "little") & ((1 << 255) - 1)


def x25519(k: int, u: int) -> int:
    """The Montgomery ladder of §5, step by step (``cswap`` as a plain swap)."""
    x_1, x_2, z_2, x_3, z_3 = u, 1, 0, u, 1
    swap = 0
    for t in reversed(range(255)):
        k_t = (k >> t) & 1
        swap ^= k_t
        if swap:
            x_2, x_3, z_2, z_3 = x_3, x_2, z_3, z_2
        swap = k_t
        a = (x_2 + z_2) % P
        aa = a * a % P
        b = (x_2 - z_2) % P
        bb = b * b % P
        e = (aa - bb) % P
        c = (x_3 + z_3) % P
        d = (x_3 - z_3) % P
        da = d * a % P
        cb = c * b % P
        x_3 = (da + cb) ** 2 % P
        z_3 = x_1 * (da - cb) ** 2 % P
        x_2 = aa * bb % P
        z_2 = e * (aa + A24 * e) % P
    if swap:
        x_2, z_2 = x_3, z_3
    return x_2 * pow(z_2, P - 2, P) % P


class Curve25519:
    """The ``curve25519`` kpp core."""

    __slots__ = ("_scalar",)

    def setkey(self, private: bytes, /) -> None:
        if len(private) != KEY_SIZE or not any(private):
            raise InvalidKey("curve25519: the private key must be 32 bytes, not all zero")
        self._scalar = decode_scalar(private)

    def generate_key(self) -> None:
        self.setkey(os.urandom(KEY_SIZE))

    def public_key(self) -> bytes:
        return x25519(self._scalar, BASE_U).to_bytes(KEY_SIZE, "little")

    def shared_secret(self, peer_public: bytes, /) -> bytes:
        check_public_size("curve25519", peer_public)
        shared = x25519(self._scalar, decode_u(peer_public))
        if shared == 0:
            raise InvalidArgument("curve25519: the peer's public value has small order")
        return shared.to_bytes(KEY_SIZE, "little")


ALGORITHMS = (
    record(
        "curve25519", "curve25519-generic", Curve25519, provider="generic",
        priority=PRIORITY_GENERIC,
    ),
)  # fmt: skip
