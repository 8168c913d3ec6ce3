"""The ``kpp`` transform: key agreement (the kernel's ``crypto_kpp``).

    setkey(private)        set_secret: the private key, or None to generate one
    public_key()           generate_public_key: this side's public value
    shared_secret(peer)    compute_shared_secret: the secret agreed with the peer's public value

A core has ``setkey(private)``, ``generate_key()``, ``public_key()`` and
``shared_secret(peer_public)``. The transform checks types and the private key's length
(``min_keysize`` to ``max_keysize`` of the record: InvalidKey otherwise) once for all; the
core checks what only the algorithm knows: a private value out of range (InvalidKey) and a
peer value that is not a valid public key (InvalidArgument: the wrong length, a point off
the curve, a small-order X25519 point whose shared secret is all zeros, a DH value outside
2..p-2). Public values and shared secrets are in the kernel's formats (see each provider).

A key-agreement transform holds its private key: it cannot be pickled or copied with
:mod:`copy`, and its ``repr`` names only the algorithm and driver.
"""

from typing import Protocol

from cryptoapi.alg import Algorithm, Buffer
from cryptoapi.errors import InvalidKey
from cryptoapi.transforms.base import NO_KEY, WithKeySizes, check_buffer


class KppCore(Protocol):
    def setkey(self, private: bytes, /) -> None: ...
    def generate_key(self) -> None: ...
    def public_key(self) -> bytes: ...
    def shared_secret(self, peer_public: bytes, /) -> bytes: ...


class Kpp(WithKeySizes):
    """A key-agreement transform, as ``alloc_kpp(name)`` returns it."""

    __slots__ = ("_core", "_primary")

    def __init__(self, alg: Algorithm) -> None:
        self._alg = alg
        self._primary: KppCore = alg.create()
        self._core: KppCore = NO_KEY

    def setkey(self, private: Buffer | None) -> None:
        """Set the private key; ``None`` generates a fresh one (from ``os.urandom`` or the
        library's generator). A key of the wrong size or value raises InvalidKey and leaves
        the transform without a key."""
        self._core = NO_KEY
        if private is None:
            self._primary.generate_key()
        else:
            key = bytes(check_buffer(private, "private key"))
            if not self._alg.min_keysize <= len(key) <= self._alg.max_keysize:
                raise InvalidKey(
                    f"{self.alg_name}: a {len(key)}-byte private key is not accepted "
                    f"({self._alg.min_keysize} to {self._alg.max_keysize} bytes)"
                )
            self._primary.setkey(key)
        self._core = self._primary

    def public_key(self) -> bytes:
        """This side's public value, to send to the peer."""
        return self._core.public_key()

    def shared_secret(self, peer_public: Buffer) -> bytes:
        """The secret agreed with ``peer_public``; InvalidArgument if it is not a valid
        public value of the algorithm (no secret is returned then)."""
        peer = bytes(check_buffer(peer_public, "peer public key"))
        return self._core.shared_secret(peer)
