"""libsodium's BLAKE2b (RFC 7693; ``crypto_generichash_blake2b``) through PyNaCl's
``nacl.hashlib.blake2b``, priority 200, keyed as the kernel's blake2b is (a key of up to 64
bytes; empty: unkeyed), for each of the kernel's digest sizes.

PyNaCl's state is libsodium's streaming one, with hashlib's ``update``/``digest``/``copy``;
it takes only ``bytes``, so every input is made ``bytes`` here first.
"""

from functools import partial

from nacl.hashlib import blake2b

from cryptoapi.alg import PRIORITY_PURE, Buffer
from cryptoapi.errors import InvalidKey
from cryptoapi.providers.records import BLAKE2B_SIZES, record
from cryptoapi.providers.states import BytesOnlyState

MAX_KEY = 64


class SodiumBlake2b:
    """The keyed ``shash`` core of one BLAKE2b digest size."""

    __slots__ = ("_key", "_size")

    def __init__(self, size: int) -> None:
        self._size = size
        self._key = b""

    def setkey(self, key: bytes, /) -> None:
        if len(key) > MAX_KEY:
            raise InvalidKey(f"BLAKE2b key must be at most {MAX_KEY} bytes, got {len(key)}")
        self._key = bytes(key)

    def init(self) -> BytesOnlyState:
        return BytesOnlyState(blake2b(digest_size=self._size, key=self._key))

    def digest(self, data: Buffer, /) -> bytes:
        state = self.init()
        state.update(data)
        return state.digest()


ALGORITHMS = tuple(
    record(
        name,
        f"{name}-sodium",
        partial(SodiumBlake2b, size),
        provider="sodium",
        priority=PRIORITY_PURE,
    )
    for name, size in BLAKE2B_SIZES.items()
)
