"""Key agreement: X25519 and ECDH P-256 shared secrets through ``alloc_kpp`` against
``cryptography`` called directly, side by side, then the generic (pure-Python) drivers
against the OpenSSL ones: what the references cost.

Both sides hold a private key and a peer public value made once; a call is one shared
secret. Ours takes the peer's value as bytes (raw u, or the kernel's x || y), so its call
includes decoding and checking the point, as cryptography's does when it is given bytes
(``from_public_bytes`` / ``from_encoded_point`` + ``exchange``); the "exchange only" rows
give cryptography an already decoded peer key.

Run: ``python -m bench.kpp``.
"""

from collections.abc import Callable
from functools import partial

from cryptography.hazmat.primitives.asymmetric import ec, x25519
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from bench.common import report, side_by_side
from cryptoapi import Kpp, Registry

ROUNDS = 7  # best of: the machines are noisy
NUMBER = 2_000
registry = Registry()  # the default policy: the first allocation runs the known-answer test


def _x25519_peer() -> tuple[Callable[[], bytes], Callable[[], bytes], bytes]:
    ours, peer = x25519.X25519PrivateKey.generate(), x25519.X25519PrivateKey.generate()
    raw = peer.public_key().public_bytes_raw()
    decoded = peer.public_key()

    def from_bytes() -> bytes:
        return ours.exchange(x25519.X25519PublicKey.from_public_bytes(raw))

    return from_bytes, partial(ours.exchange, decoded), raw


def _p256_peer() -> tuple[Callable[[], bytes], Callable[[], bytes], bytes]:
    ours, peer = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    point = peer.public_key().public_bytes(Encoding.X962, PublicFormat.UncompressedPoint)
    decoded = peer.public_key()

    def from_bytes() -> bytes:
        return ours.exchange(
            ec.ECDH(), ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), point)
        )

    return from_bytes, partial(ours.exchange, ec.ECDH(), decoded), point[1:]


def _ours(name: str) -> Kpp:
    tfm = registry.alloc_kpp(name)
    tfm.setkey(None)
    print(f"{name} is {tfm.driver_name}")
    return tfm


def against_cryptography() -> None:
    for name, make in (("curve25519", _x25519_peer), ("ecdh-nist-p256", _p256_peer)):
        tfm = _ours(name)
        from_bytes, exchange_only, peer = make()
        ours, theirs = side_by_side(partial(tfm.shared_secret, peer), from_bytes, NUMBER, ROUNDS)
        report(f"{name} shared secret", ours, theirs, "cryptography")
        ours, theirs = side_by_side(partial(tfm.shared_secret, peer), exchange_only, NUMBER, ROUNDS)
        report(f"{name} shared secret (peer pre-decoded)", ours, theirs, "cryptography")


def generic_vs_openssl() -> None:
    for name in ("curve25519", "ecdh-nist-p256"):
        generic, best = registry.alloc_kpp(f"{name}-generic"), registry.alloc_kpp(name)
        generic.setkey(None)
        best.setkey(None)
        peer = best.public_key()
        ours, theirs = side_by_side(
            partial(generic.shared_secret, peer), partial(best.shared_secret, peer), 50, rounds=3
        )
        report(f"{generic.driver_name} shared secret", ours, theirs, best.driver_name)


def main() -> None:
    against_cryptography()
    generic_vs_openssl()


if __name__ == "__main__":
    main()
