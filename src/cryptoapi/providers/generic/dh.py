"""``dh``: finite-field Diffie-Hellman over the group its private key carries (RFC 2631
§2.1.1, the kernel's ``dh-generic``), by modular exponentiation.

    public  ya = g^xa mod p          shared  ZZ = yb^xa mod p

The private key is the kernel's packed secret (key, p, g), checked and decoded by
:mod:`cryptoapi.transforms.dh_secret`; the ``ffdheNNNN(dh)`` templates fix the group.
Values are big-endian and as long as p. Python's ``pow``: exact, not constant time.
"""

from cryptoapi.alg import PRIORITY_GENERIC
from cryptoapi.errors import InvalidArgument
from cryptoapi.providers.records import record
from cryptoapi.transforms.dh_secret import DhGroupKey, decode_secret


class Dh:
    """The ``dh`` kpp core."""

    __slots__ = ("_key",)

    def setkey(self, private: bytes, /) -> None:
        self._key: DhGroupKey = decode_secret(private)

    def generate_key(self) -> None:
        raise InvalidArgument("dh: a key needs a group; pass a packed secret or use ffdheNNNN(dh)")

    def public_key(self) -> bytes:
        key = self._key
        return key.encode(pow(key.g, key.x, key.p))

    def shared_secret(self, peer_public: bytes, /) -> bytes:
        key = self._key
        return key.encode(pow(key.peer_value(peer_public), key.x, key.p))


ALGORITHMS = (record("dh", "dh-generic", Dh, provider="generic", priority=PRIORITY_GENERIC),)
