"""pycryptodome's CMAC-AES (SP 800-38B) and Poly1305 (RFC 8439 §2.5) through ``Crypto.Hash``
(priority 200), as keyed ``shash`` cores (see :mod:`cryptoapi.transforms.shash`).

A third implementation, independent of OpenSSL and of the generic references, so that when
those two disagree the differential fuzzer can name the odd one out.

pycryptodome's CMAC objects copy, and with ``update_after_digest=True`` digest without
finalizing, so a keyed CMAC is kept and copied per message.

pycryptodome has no constructor taking a raw Poly1305 one-time key r || s: its public
``Crypto.Hash.Poly1305.new`` derives the key pair from a cipher and a nonce. With AES it
computes Poly1305-AES (Bernstein, 2005): r is the second half of its 32-byte key, used as
given, and s = AES_k(nonce) for k the first half. So with any fixed k, the nonce
AES_k^-1(s) makes pycryptodome's Poly1305 run with exactly our r and s, through its public
API only. Its MAC objects cannot copy (a one-time MAC), so a running state keeps the message
and computes the tag when asked, as the OpenSSL driver's does.
"""

from Crypto.Cipher import AES
from Crypto.Hash import CMAC, Poly1305

from cryptoapi.alg import PRIORITY_PURE, Buffer
from cryptoapi.errors import InvalidKey
from cryptoapi.providers.pycryptodome.ciphers import check_aes_key
from cryptoapi.providers.records import record


def _octets(data: Buffer) -> memoryview:
    """``data`` as a view of bytes; ``str`` and ``int`` raise TypeError, as with hashlib."""
    view = memoryview(data)
    return view if view.format == "B" and view.ndim == 1 else view.cast("B")


class CmacState:
    __slots__ = ("_mac",)

    def __init__(self, mac: CMAC.CMAC) -> None:
        self._mac = mac

    def update(self, data: Buffer, /) -> None:
        self._mac.update(_octets(data))

    def digest(self) -> bytes:
        return self._mac.digest()

    def copy(self) -> "CmacState":
        return CmacState(self._mac.copy())


class CmacAes:
    """``cmac(aes)`` (SP 800-38B), full 16-byte tags."""

    def setkey(self, key: bytes, /) -> None:
        check_aes_key(key, "cmac(aes)")
        self._keyed = CMAC.new(key, ciphermod=AES, update_after_digest=True)

    def init(self) -> CmacState:
        return CmacState(self._keyed.copy())

    def digest(self, data: Buffer, /) -> bytes:
        mac = self._keyed.copy()
        mac.update(_octets(data))
        return mac.digest()


_AES_KEY = bytes(16)
"""The k of Poly1305-AES: any fixed key serves, since the nonce is chosen to give s."""


class Poly1305State:
    __slots__ = ("_chunks", "_core")

    def __init__(self, core: "Poly1305Mac", chunks: list[bytes]) -> None:
        self._core = core
        self._chunks = chunks

    def update(self, data: Buffer, /) -> None:
        self._chunks.append(bytes(_octets(data)))

    def digest(self) -> bytes:
        return self._core.digest(b"".join(self._chunks))

    def copy(self) -> "Poly1305State":
        return Poly1305State(self._core, list(self._chunks))


class Poly1305Mac:
    """``poly1305`` keyed with the 32-byte one-time key r || s (RFC 8439 §2.5)."""

    def setkey(self, key: bytes, /) -> None:
        if len(key) != 32:
            raise InvalidKey(f"poly1305 takes a 32-byte key, not {len(key)} bytes")
        self._aes_key_and_r = _AES_KEY + key[:16]
        self._nonce = AES.new(_AES_KEY, AES.MODE_ECB).decrypt(key[16:])

    def init(self) -> Poly1305State:
        return Poly1305State(self, [])

    def digest(self, data: Buffer, /) -> bytes:
        mac = Poly1305.new(key=self._aes_key_and_r, cipher=AES, nonce=self._nonce)
        mac.update(_octets(data))
        return mac.digest()


ALGORITHMS = (
    record(
        "cmac(aes)",
        "cmac-aes-pycryptodome",
        CmacAes,
        provider="pycryptodome",
        priority=PRIORITY_PURE,
    ),
    record(
        "poly1305",
        "poly1305-pycryptodome",
        Poly1305Mac,
        provider="pycryptodome",
        priority=PRIORITY_PURE,
    ),
)
