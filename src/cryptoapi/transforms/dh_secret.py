"""The private key of ``dh``, in the kernel's packed format (``crypto/dh_helper.c``), and the
value rules every DH driver applies.

``dh`` is Diffie-Hellman over any group: its "private key" carries the group too, as the
kernel's ``crypto_dh_encode_key`` packs it (little-endian, as on x86)::

    u16 type = 1 (CRYPTO_KPP_SECRET_TYPE_DH) | u16 len (of the whole blob)
    u32 key_size | u32 p_size | u32 g_size | key | p | g          (big-endian integers)

The ``ffdheNNNN(dh)`` templates pack their fixed RFC 7919 group with the caller's key, as
the kernel's ``dh_safe_prime_set_secret`` does. The checks are the kernel's
(``__crypto_dh_decode_key``, ``dh_set_params``: p of 1536 bits or more, key and g no longer
than p; here also p of at most 8192 bits, ffdhe8192's, the largest group the kernel names,
which bounds a generic driver's work) and SP 800-56A rev3's: 1 <= x <= p - 2,
1 < g < p - 1, and a peer's public value 2 <= y <= p - 2 (§5.6.2.3.2; for the RFC 7919 safe
primes this excludes the only small subgroup, {1, p - 1}, so the range check suffices,
RFC 7919 §5.1; for another group it is the caller's to choose a safe one, as in the kernel).
"""

import struct

from cryptoapi.errors import InvalidArgument, InvalidKey

SECRET_TYPE_DH = 1
_HEADER = struct.Struct("<HHIII")
HEADER_SIZE = _HEADER.size
MIN_P_BITS = 1536  # dh_check_params_length outside FIPS mode
MAX_P_BITS = 8192  # ffdhe8192 (OpenSSL refuses more than 10,000 bits)


class DhGroupKey:
    """A private exponent ``x`` in the group (``p``, ``g``); no repr (it holds the key).
    A plain class: ``dataclasses`` costs more to import than a first AEAD call, and every
    provider's record table imports this module for the size of the packed header."""

    __slots__ = ("g", "p", "x")

    def __init__(self, *, x: int, p: int, g: int) -> None:
        self.x = x
        self.p = p
        self.g = g

    @property
    def size(self) -> int:
        """Bytes of p: the length of public values and shared secrets."""
        return (self.p.bit_length() + 7) // 8

    def peer_value(self, peer_public: bytes) -> int:
        """The peer's public value y, or InvalidArgument unless 2 <= y <= p - 2."""
        y = int.from_bytes(peer_public, "big")
        if not 1 < y < self.p - 1:
            raise InvalidArgument("dh: the peer's public value is outside 2..p-2")
        return y

    def encode(self, value: int) -> bytes:
        """``value`` as a big-endian number of p's length (the kernel's output format)."""
        return value.to_bytes(self.size, "big")


def encode_secret(key: bytes, p: bytes, g: bytes) -> bytes:
    """The kernel's packed DH secret (``crypto_dh_encode_key``)."""
    length = HEADER_SIZE + len(key) + len(p) + len(g)
    return _HEADER.pack(SECRET_TYPE_DH, length, len(key), len(p), len(g)) + key + p + g


def decode_secret(blob: bytes) -> DhGroupKey:
    """The group and key a packed secret holds; InvalidKey if it is malformed or breaks
    the rules above."""
    if len(blob) < HEADER_SIZE:
        raise InvalidKey(f"dh: a packed secret has a {HEADER_SIZE}-byte header")
    kind, length, key_size, p_size, g_size = _HEADER.unpack_from(blob)
    if kind != SECRET_TYPE_DH or length != len(blob):
        raise InvalidKey("dh: not a packed DH secret (type 1, len the blob's length)")
    if length != HEADER_SIZE + key_size + p_size + g_size:
        raise InvalidKey("dh: the packed secret's sizes do not add up to its length")
    if key_size > p_size or g_size > p_size:
        raise InvalidKey("dh: the key and g must not be longer than p")
    fields = blob[HEADER_SIZE:]
    x = int.from_bytes(fields[:key_size], "big")
    p = int.from_bytes(fields[key_size : key_size + p_size], "big")
    g = int.from_bytes(fields[key_size + p_size :], "big")
    return _checked(DhGroupKey(x=x, p=p, g=g))


def _checked(group_key: DhGroupKey) -> DhGroupKey:
    p = group_key.p
    if not MIN_P_BITS <= p.bit_length() <= MAX_P_BITS or p % 2 == 0:
        raise InvalidKey(f"dh: p must be an odd number of {MIN_P_BITS} to {MAX_P_BITS} bits")
    if not 1 < group_key.g < p - 1:
        raise InvalidKey("dh: g must be in 2..p-2")
    if not 0 < group_key.x < p - 1:
        raise InvalidKey("dh: the private key must be in 1..p-2")
    return group_key
