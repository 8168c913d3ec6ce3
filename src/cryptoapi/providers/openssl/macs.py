"""OpenSSL's CMAC-AES and Poly1305 through ``cryptography`` (priority 300), as keyed
``shash`` cores (see :mod:`cryptoapi.transforms.shash`).

cryptography's CMAC objects copy, so a keyed CMAC state is kept and copied per message.
Its Poly1305 cannot copy (a one-time MAC), so a running Poly1305 state keeps the message
and computes the tag when asked: ``digest()`` and ``copy()`` then behave as hashlib's do.
"""

from cryptography.hazmat.primitives import cmac, poly1305
from cryptography.hazmat.primitives.ciphers import algorithms

from cryptoapi.alg import PRIORITY_OPENSSL, Buffer
from cryptoapi.errors import InvalidKey
from cryptoapi.providers.records import record


class CmacState:
    __slots__ = ("_mac",)

    def __init__(self, mac: cmac.CMAC) -> None:
        self._mac = mac

    def update(self, data: Buffer, /) -> None:
        self._mac.update(bytes(memoryview(data)))

    def digest(self) -> bytes:
        return self._mac.copy().finalize()

    def copy(self) -> "CmacState":
        return CmacState(self._mac.copy())


class CmacAes:
    """``cmac(aes)`` (SP 800-38B)."""

    def setkey(self, key: bytes, /) -> None:
        if len(key) not in (16, 24, 32):
            raise InvalidKey(f"cmac(aes) takes a 16-, 24- or 32-byte key, not {len(key)} bytes")
        self._keyed = cmac.CMAC(algorithms.AES(key))

    def init(self) -> CmacState:
        return CmacState(self._keyed.copy())

    def digest(self, data: Buffer, /) -> bytes:
        mac = self._keyed.copy()
        mac.update(bytes(memoryview(data)))
        return mac.finalize()


class Poly1305State:
    __slots__ = ("_chunks", "_key")

    def __init__(self, key: bytes, chunks: list[bytes]) -> None:
        self._key = key
        self._chunks = chunks

    def update(self, data: Buffer, /) -> None:
        self._chunks.append(bytes(memoryview(data)))

    def digest(self) -> bytes:
        return poly1305.Poly1305.generate_tag(self._key, b"".join(self._chunks))

    def copy(self) -> "Poly1305State":
        return Poly1305State(self._key, list(self._chunks))


class Poly1305:
    """``poly1305`` (RFC 8439 §2.5) keyed with the 32-byte one-time key r || s."""

    def setkey(self, key: bytes, /) -> None:
        if len(key) != 32:
            raise InvalidKey(f"poly1305 takes a 32-byte key, not {len(key)} bytes")
        self._key = key

    def init(self) -> Poly1305State:
        return Poly1305State(self._key, [])

    def digest(self, data: Buffer, /) -> bytes:
        return poly1305.Poly1305.generate_tag(self._key, data)


ALGORITHMS = (
    record("cmac(aes)", "cmac-aes-openssl", CmacAes, provider="openssl", priority=PRIORITY_OPENSSL),
    record("poly1305", "poly1305-openssl", Poly1305, provider="openssl", priority=PRIORITY_OPENSSL),
)
