"""ECDH on the NIST prime curves P-256 and P-384: the EC Diffie-Hellman primitive of SEC 1
§3.3.1 (SP 800-56A rev3 §5.7.1.2), in affine coordinates.

    curve  y^2 = x^3 - 3x + b over GF(p), base point G of prime order n, cofactor 1
           (SP 800-186 §3.2.1.3 P-256, §3.2.1.4 P-384)
    key    1 <= d <= n - 1;  public Q = d·G, sent as the raw x || y (the kernel's format)
    shared P = d·Q_peer; P = O is an error; the secret is x_P

A peer's point is checked as SP 800-56A rev3 §5.6.2.3.3 (ECC partial public-key validation)
asks: coordinates below p and on the curve (O cannot be encoded as x || y). With cofactor 1
that is the full validation: every point on the curve has order n.

Python integers, no constant time: a reference for checking, not for secrets (README).
"""

import os
from collections.abc import Callable
from dataclasses import dataclass

from cryptoapi.alg import PRIORITY_GENERIC
from cryptoapi.errors import InvalidArgument, InvalidKey
from cryptoapi.providers.kpp_records import check_public_size
from cryptoapi.providers.records import record

Point = tuple[int, int] | None  # None is the point at infinity, O


@dataclass(frozen=True)
class Curve:
    """A short Weierstrass curve y^2 = x^3 + ax + b with a = -3, and its base point."""

    name: str
    p: int
    b: int
    gx: int
    gy: int
    n: int

    @property
    def size(self) -> int:
        return (self.p.bit_length() + 7) // 8

    def on_curve(self, x: int, y: int) -> bool:
        return (y * y - (x * x * x - 3 * x + self.b)) % self.p == 0


P256 = Curve(
    "ecdh-nist-p256",
    p=2**256 - 2**224 + 2**192 + 2**96 - 1,
    b=0x5AC635D8AA3A93E7B3EBBD55769886BC651D06B0CC53B0F63BCE3C3E27D2604B,
    gx=0x6B17D1F2E12C4247F8BCE6E563A440F277037D812DEB33A0F4A13945D898C296,
    gy=0x4FE342E2FE1A7F9B8EE7EB4A7C0F9E162BCE33576B315ECECBB6406837BF51F5,
    n=0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551,
)
P384 = Curve(
    "ecdh-nist-p384",
    p=2**384 - 2**128 - 2**96 + 2**32 - 1,
    b=int(
        "B3312FA7E23EE7E4988E056BE3F82D19181D9C6EFE8141120314088F5013875A"
        "C656398D8A2ED19D2A85C8EDD3EC2AEF", 16,
    ),
    gx=int(
        "AA87CA22BE8B05378EB1C71EF320AD746E1D3B628BA79B9859F741E082542A38"
        "5502F25DBF55296C3A545E3872760AB7", 16,
    ),
    gy=int(
        "3617DE4A96262C6F5D9E98BF9292DC29F8F41DBD289A147CE9DA3113B5F0B8C0"
        "0A60B1CE1D7E819D7A431D7C90EA0E5F", 16,
    ),
    n=int(
        "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFC7634D81F4372DDF"
        "581A0DB248B0A77AECEC196ACCC52973", 16,
    ),
)  # fmt: skip


def add(curve: Curve, a: Point, b: Point) -> Point:
    """a + b by the chord-and-tangent rule (SEC 1 §2.2.1)."""
    if a is None:
        return b
    if b is None:
        return a
    p = curve.p
    (x1, y1), (x2, y2) = a, b
    if x1 == x2 and (y1 + y2) % p == 0:
        return None  # b = -a
    if a == b:
        slope = (3 * x1 * x1 - 3) * pow(2 * y1, -1, p) % p
    else:
        slope = (y2 - y1) * pow(x2 - x1, -1, p) % p
    x3 = (slope * slope - x1 - x2) % p
    return x3, (slope * (x1 - x3) - y1) % p


def multiply(curve: Curve, k: int, point: Point) -> Point:
    """k·point, double-and-add from the top bit."""
    result: Point = None
    for bit in bin(k)[2:]:
        result = add(curve, result, result)
        if bit == "1":
            result = add(curve, result, point)
    return result


class Ecdh:
    """The kpp core of one curve's ECDH."""

    __slots__ = ("_curve", "_d")

    def __init__(self, curve: Curve) -> None:
        self._curve = curve

    def setkey(self, private: bytes, /) -> None:
        d = int.from_bytes(private, "big")
        if len(private) != self._curve.size or not 0 < d < self._curve.n:
            raise InvalidKey(f"{self._curve.name}: the private key must be in 1..n-1")
        self._d = d

    def generate_key(self) -> None:
        """FIPS 186-5 §A.2.1 (extra random bits): d = (c mod (n - 1)) + 1, c of 64 more bits."""
        c = int.from_bytes(os.urandom(self._curve.size + 8), "big")
        self._d = c % (self._curve.n - 1) + 1

    def public_key(self) -> bytes:
        curve = self._curve
        return self._encode(multiply(curve, self._d, (curve.gx, curve.gy)))

    def shared_secret(self, peer_public: bytes, /) -> bytes:
        curve = self._curve
        check_public_size(curve.name, peer_public)
        x = int.from_bytes(peer_public[: curve.size], "big")
        y = int.from_bytes(peer_public[curve.size :], "big")
        if not (x < curve.p and y < curve.p and curve.on_curve(x, y)):
            raise InvalidArgument(f"{curve.name}: the peer's public value is not on the curve")
        shared = multiply(curve, self._d, (x, y))
        if shared is None:
            raise InvalidArgument(f"{curve.name}: the shared point is the point at infinity")
        return shared[0].to_bytes(curve.size, "big")

    def _encode(self, point: Point) -> bytes:
        assert point is not None  # d·G with 0 < d < n is never O
        size = self._curve.size
        return point[0].to_bytes(size, "big") + point[1].to_bytes(size, "big")


def _core(curve: Curve) -> Callable[[], Ecdh]:
    return lambda: Ecdh(curve)


ALGORITHMS = tuple(
    record(
        curve.name, f"{curve.name}-generic", _core(curve), provider="generic",
        priority=PRIORITY_GENERIC,
    )
    for curve in (P256, P384)
)  # fmt: skip
