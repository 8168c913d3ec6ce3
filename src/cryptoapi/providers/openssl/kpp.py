"""OpenSSL's key agreement through ``cryptography`` (priority 300): X25519, ECDH on P-256
and P-384, and finite-field DH over the group a packed ``dh`` secret carries.

The kernel's formats at the edge (see :mod:`cryptoapi.providers.records`): an ECDH
public value is x || y, which ``cryptography`` reads and writes with the SEC 1 0x04 prefix;
a DH private key is the kernel's packed secret. ``cryptography`` raises ValueError for a
point off the curve, a small-order X25519 point (all-zero secret) and a DH value outside
2..p-2: InvalidArgument here. The value rules shared with the generic drivers are checked
first, so every driver refuses the same inputs with the same words.

``cryptography`` 50 deprecates finite-field DH (CryptographyDeprecationWarning); the
warning is silenced for this module's calls only, and the generic ``dh`` stays when the
support goes.
"""

import warnings

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives.asymmetric import dh, ec, x25519
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from cryptoapi.alg import PRIORITY_OPENSSL
from cryptoapi.errors import InvalidArgument, InvalidKey
from cryptoapi.providers.generic.dh import Dh as GenericDh
from cryptoapi.providers.kpp_records import check_public_size
from cryptoapi.providers.records import record
from cryptoapi.transforms.dh_secret import DhGroupKey, decode_secret

warnings.filterwarnings(
    "ignore", message="Diffie-Hellman over finite fields", module=__name__
)  # fmt: skip


def _refused(name: str, error: Exception) -> InvalidArgument:
    return InvalidArgument(f"{name}: the peer's public value is refused ({error})")


class X25519:
    """``curve25519`` (RFC 7748 §5)."""

    __slots__ = ("_key",)

    def setkey(self, private: bytes, /) -> None:
        if not any(private):
            raise InvalidKey("curve25519: the private key must be 32 bytes, not all zero")
        self._key = x25519.X25519PrivateKey.from_private_bytes(private)

    def generate_key(self) -> None:
        self._key = x25519.X25519PrivateKey.generate()

    def public_key(self) -> bytes:
        return self._key.public_key().public_bytes_raw()

    def shared_secret(self, peer_public: bytes, /) -> bytes:
        check_public_size("curve25519", peer_public)
        try:
            return self._key.exchange(x25519.X25519PublicKey.from_public_bytes(peer_public))
        except ValueError:  # all-zero output: a small-order point (RFC 7748 §6.1)
            raise InvalidArgument("curve25519: the peer's public value has small order") from None


class Ecdh:
    """ECDH on one NIST curve; values in the kernel's raw x || y form."""

    __slots__ = ("_curve", "_key", "_name", "_size")

    def __init__(self, name: str, curve: ec.EllipticCurve) -> None:
        self._name = name
        self._curve = curve
        self._size = (curve.key_size + 7) // 8

    def setkey(self, private: bytes, /) -> None:
        try:
            self._key = ec.derive_private_key(int.from_bytes(private, "big"), self._curve)
        except ValueError:  # 0 or >= n
            raise InvalidKey(f"{self._name}: the private key must be in 1..n-1") from None

    def generate_key(self) -> None:
        self._key = ec.generate_private_key(self._curve)

    def public_key(self) -> bytes:
        point = self._key.public_key().public_bytes(Encoding.X962, PublicFormat.UncompressedPoint)
        return point[1:]  # the kernel's x || y: no 0x04 prefix

    def shared_secret(self, peer_public: bytes, /) -> bytes:
        check_public_size(self._name, peer_public)
        try:
            peer = ec.EllipticCurvePublicKey.from_encoded_point(self._curve, b"\x04" + peer_public)
        except ValueError:
            raise InvalidArgument(
                f"{self._name}: the peer's public value is not on the curve"
            ) from None
        return self._key.exchange(ec.ECDH(), peer)


class Dh:
    """``dh`` over the packed secret's group.

    OpenSSL keys only a group whose p is a safe prime (``DH_check``: "Invalid DH
    parameters"), while the kernel's ``dh``, and so every driver here, takes any odd p of
    1536 bits or more. A group OpenSSL refuses is served by the generic core instead, as a
    kernel driver flagged ``CRYPTO_ALG_NEED_FALLBACK`` hands what it lacks to software (the
    kpp transform has no fallback of its own: it keys one core)."""

    __slots__ = ("_group", "_key", "_private", "_public", "_software")

    def setkey(self, private: bytes, /) -> None:
        key = decode_secret(private)
        numbers = dh.DHParameterNumbers(key.p, key.g)
        # cryptography builds a private key only with its public value, which it does not
        # check: a placeholder g, then OpenSSL computes the real one as the secret with g.
        placeholder = dh.DHPublicNumbers(key.g, numbers)
        self._software: GenericDh | None = None
        try:
            self._private = dh.DHPrivateNumbers(key.x, placeholder).private_key()
        except ValueError:  # not a safe prime (decode_secret applied the shared rules)
            self._software = GenericDh()
            self._software.setkey(private)
            return
        self._group = numbers
        self._key: DhGroupKey = key
        self._public = self._private.exchange(placeholder.public_key())

    def generate_key(self) -> None:
        raise InvalidArgument("dh: a key needs a group; pass a packed secret or use ffdheNNNN(dh)")

    def public_key(self) -> bytes:
        if self._software is not None:
            return self._software.public_key()
        return self._public

    def shared_secret(self, peer_public: bytes, /) -> bytes:
        if self._software is not None:
            return self._software.shared_secret(peer_public)
        y = self._key.peer_value(peer_public)
        try:
            peer = dh.DHPublicNumbers(y, self._group).public_key()
            return self._private.exchange(peer)
        except (ValueError, UnsupportedAlgorithm) as error:
            raise _refused("dh", error) from None


ALGORITHMS = (
    record("curve25519", "curve25519-openssl", X25519, provider="openssl",
               priority=PRIORITY_OPENSSL),
    record("ecdh-nist-p256", "ecdh-nist-p256-openssl",
               lambda: Ecdh("ecdh-nist-p256", ec.SECP256R1()), provider="openssl",
               priority=PRIORITY_OPENSSL),
    record("ecdh-nist-p384", "ecdh-nist-p384-openssl",
               lambda: Ecdh("ecdh-nist-p384", ec.SECP384R1()), provider="openssl",
               priority=PRIORITY_OPENSSL),
    record("dh", "dh-openssl", Dh, provider="openssl", priority=PRIORITY_OPENSSL),
)  # fmt: skip
