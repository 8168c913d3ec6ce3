"""The ``ffdheNNNN(dh)`` templates: ``dh`` with its group fixed to one of RFC 7919's
safe-prime groups (the kernel's ``dh_safe_prime`` templates in ``crypto/dh.c``).

RFC 7919 Appendix A defines each prime by a formula, computed here rather than typed in
(a test checks ffdhe2048's against the published hex, and each against being a safe prime):

    p = 2^b - 2^(b-64) + {[2^(b-130) e] + X} * 2^64 - 1,    g = 2,    q = (p - 1) / 2

with [.] the floor and X the smallest value making p a safe prime. The private key is
1 <= x <= q - 1 (SP 800-56A rev3 §5.6.1.1.1), big-endian, at most as long as p; setkey
packs it with the group into ``dh``'s secret, as ``dh_safe_prime_set_secret`` does. A
generated key is what the kernel's ``dh_safe_prime_gen_privkey`` makes: SP 800-56A rev3
§5.6.1.1.3 with N the power of two at or above twice the group's security strength
(RFC 7919 Appendix A's and SP 800-56A rev3 Table 26's: 112, 128, 152, 176, 200 bits), so
x = (c mod (2^N - 1)) + 1 for c of N + 64 random bits.
"""

import os
from dataclasses import dataclass
from functools import cache

from cryptoapi.alg import Algorithm, AlgType, InnerLookup, Template, instance
from cryptoapi.errors import InvalidKey
from cryptoapi.templates._modes import inner_of, require
from cryptoapi.transforms.dh_secret import encode_secret
from cryptoapi.transforms.kpp import KppCore

GENERATOR = 2


@dataclass(frozen=True)
class SafePrimeGroup:
    """One RFC 7919 group: its size b in bits, the X of its formula, its strength."""

    bits: int
    x: int  # RFC 7919 Appendix A.1 to A.5
    strength: int

    @property
    def name(self) -> str:
        return f"ffdhe{self.bits}"

    @property
    def p(self) -> int:
        return rfc7919_prime(self.bits, self.x)

    @property
    def key_bits(self) -> int:
        """N of a generated key: the power of two at or above twice the strength."""
        return 1 << (2 * self.strength - 1).bit_length()


GROUPS = {
    group.bits: group
    for group in (
        SafePrimeGroup(2048, 560316, 112),
        SafePrimeGroup(3072, 2625351, 128),
        SafePrimeGroup(4096, 5736041, 152),
        SafePrimeGroup(6144, 15705020, 176),
        SafePrimeGroup(8192, 10965728, 200),
    )
}


def floor_e_times_power_of_two(k: int) -> int:
    """[2^k e], from e = sum 1/j! in fixed point with 64 guard bits (each term is floored
    once, so the sum is short of the truth by less than the number of terms)."""
    guard = 64
    term = 1 << (k + guard)
    total, j = 0, 0
    while term:
        total += term
        j += 1
        term //= j
    return total >> guard


@cache
def rfc7919_prime(bits: int, x: int) -> int:
    """p = 2^b - 2^(b-64) + {[2^(b-130) e] + X} * 2^64 - 1 (RFC 7919 Appendix A)."""
    top: int = 2**bits - 2 ** (bits - 64)
    return top + (floor_e_times_power_of_two(bits - 130) + x) * 2**64 - 1


class SafePrimeDh:
    """The core of ``ffdheNNNN(dh)``: the inner ``dh`` keyed with the fixed group."""

    __slots__ = ("_dh", "_group", "_p")

    def __init__(self, group: SafePrimeGroup, inner: KppCore) -> None:
        self._group = group
        self._p = group.p
        self._dh = inner

    def setkey(self, private: bytes, /) -> None:
        if not 0 < int.from_bytes(private, "big") < (self._p - 1) // 2:
            raise InvalidKey(f"{self._group.name}: the private key must be in 1..q-1")
        size = self._group.bits // 8
        self._dh.setkey(encode_secret(private, self._p.to_bytes(size, "big"), bytes((GENERATOR,))))

    def generate_key(self) -> None:
        n = self._group.key_bits
        c = int.from_bytes(os.urandom(n // 8 + 8), "big")
        self.setkey((c % (2**n - 1) + 1).to_bytes(n // 8, "big"))

    def public_key(self) -> bytes:
        return self._dh.public_key()

    def shared_secret(self, peer_public: bytes, /) -> bytes:
        return self._dh.shared_secret(peer_public)


def template(bits: int) -> Template:
    """The ``ffdhe<bits>`` template over a ``dh``."""
    group = GROUPS[bits]

    def create(lookup: InnerLookup, args: tuple[str, ...]) -> Algorithm:
        inner = inner_of(group.name, lookup, args, AlgType.KPP)
        require(inner.name == "dh", group.name, inner, "a dh")
        return instance(
            group.name,
            (inner,),
            type=AlgType.KPP,
            create=lambda: SafePrimeDh(group, inner.create()),
            min_keysize=1,
            max_keysize=bits // 8,
        )

    return Template(group.name, create)
