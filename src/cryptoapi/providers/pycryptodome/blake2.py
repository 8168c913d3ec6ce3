"""pycryptodome's BLAKE2b and BLAKE2s (RFC 7693) through ``Crypto.Hash`` (priority 200),
keyed as the kernel's blake2b is (a key of up to 64 or 32 bytes, empty: unkeyed): a third
implementation, independent of hashlib's and of the generic reference, for the fuzzer.

``Crypto.Hash.BLAKE2b`` states can neither copy themselves nor take more data after a
digest, so a running state keeps the message and hashes it afresh when asked: ``digest()``
and ``copy()`` then behave as hashlib's do (as the OpenSSL Poly1305 driver's state does).
"""

from functools import partial
from types import ModuleType

from Crypto.Hash import BLAKE2b, BLAKE2s

from cryptoapi.alg import PRIORITY_PURE, Buffer
from cryptoapi.errors import InvalidKey
from cryptoapi.providers.records import BLAKE2B_SIZES, record


class Blake2State:
    """A running hash over pycryptodome's BLAKE2: the message so far is kept, and each
    digest hashes it afresh, since its states neither copy nor digest twice."""

    __slots__ = ("_chunks", "_key", "_module", "_size")

    def __init__(self, module: ModuleType, size: int, key: bytes, chunks: list[bytes]) -> None:
        self._module, self._size, self._key, self._chunks = module, size, key, chunks

    def update(self, data: Buffer, /) -> None:
        self._chunks.append(bytes(memoryview(data)))  # memoryview refuses str

    def digest(self) -> bytes:
        mac = self._module.new(digest_bytes=self._size, key=self._key)
        for chunk in self._chunks:
            mac.update(chunk)
        return mac.digest()  # type: ignore[no-any-return]

    def copy(self) -> "Blake2State":
        return Blake2State(self._module, self._size, self._key, list(self._chunks))


class PycryptodomeBlake2:
    """The keyed ``shash`` core of one BLAKE2 variant and digest size."""

    __slots__ = ("_key", "_max_key", "_module", "_size")

    def __init__(self, module: ModuleType, max_key: int, size: int) -> None:
        self._module, self._max_key, self._size = module, max_key, size
        self._key = b""

    def setkey(self, key: bytes, /) -> None:
        if len(key) > self._max_key:
            raise InvalidKey(f"BLAKE2 key must be at most {self._max_key} bytes, got {len(key)}")
        self._key = bytes(key)

    def init(self) -> Blake2State:
        return Blake2State(self._module, self._size, self._key, [])

    def digest(self, data: Buffer, /) -> bytes:
        state = self.init()
        state.update(data)
        return state.digest()


ALGORITHMS = (
    *(
        record(
            name,
            f"{name}-pycryptodome",
            partial(PycryptodomeBlake2, BLAKE2b, 64, size),
            provider="pycryptodome",
            priority=PRIORITY_PURE,
        )
        for name, size in BLAKE2B_SIZES.items()
    ),
    record(
        "blake2s-256",
        "blake2s-256-pycryptodome",
        partial(PycryptodomeBlake2, BLAKE2s, 32, 32),
        provider="pycryptodome",
        priority=PRIORITY_PURE,
    ),
)
