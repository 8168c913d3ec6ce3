"""The ``shash`` transform: hashes and keyed hashes (MACs), hashlib-like.

A provider supplies a *core* per transform (``Algorithm.create()``): ``init()`` returns a
hash state with ``update``/``digest``/``copy`` (hashlib objects qualify as they are) and
``digest(data)`` hashes one message; keyed cores also take ``setkey(key)``. The transform
adds names, sizes and checks, and binds ``digest`` straight to the core so the one-shot
path costs no extra Python call.
"""

from collections.abc import Callable
from typing import Protocol

from cryptoapi.alg import Algorithm, AlgType, Buffer
from cryptoapi.errors import InvalidArgument
from cryptoapi.transforms.base import Transform, check_buffer


class HashState(Protocol):
    """A running hash: hashlib's objects and the generic implementations both fit."""

    def update(self, data: Buffer, /) -> None: ...
    def digest(self) -> bytes: ...
    def copy(self) -> "HashState": ...


class ShashCore(Protocol):
    """What ``Algorithm.create()`` returns for a ``shash``."""

    def init(self) -> HashState: ...
    def digest(self, data: Buffer, /) -> bytes: ...
    def setkey(self, key: bytes, /) -> None: ...


class UnkeyedHash:
    """The core of any unkeyed hash, given a constructor ``new(data=b"")``."""

    def __init__(self, new: Callable[..., HashState]) -> None:
        self.init = new
        self._new = new

    def digest(self, data: Buffer, /) -> bytes:
        return self._new(data).digest()

    def setkey(self, key: bytes, /) -> None:
        raise AssertionError("the transform never keys an unkeyed hash")


def unkeyed_shash(
    *,
    name: str,
    driver: str,
    provider: str,
    priority: int,
    new: Callable[..., HashState],
    digestsize: int,
    blocksize: int,
) -> Algorithm:
    """The registration record of a plain hash whose states ``new(data)`` makes."""
    core = UnkeyedHash(new)
    return Algorithm(
        name=name,
        driver=driver,
        type=AlgType.SHASH,
        priority=priority,
        provider=provider,
        create=lambda: core,  # stateless, so every transform can share it
        digestsize=digestsize,
        blocksize=blocksize,
    )


class HashDesc:
    """A hashlib-like running hash (the kernel's ``shash_desc``): update, final, copy."""

    __slots__ = ("_state", "block_size", "digest_size", "name")

    def __init__(self, state: HashState, name: str, digest_size: int, block_size: int) -> None:
        self._state = state
        self.name = name
        self.digest_size = digest_size
        self.block_size = block_size

    def update(self, data: Buffer) -> None:
        self._state.update(data)

    def digest(self) -> bytes:
        """The digest so far; the state stays usable, as with hashlib."""
        return self._state.digest()

    final = digest

    def hexdigest(self) -> str:
        return self._state.digest().hex()

    def copy(self) -> "HashDesc":
        return HashDesc(self._state.copy(), self.name, self.digest_size, self.block_size)

    def __repr__(self) -> str:
        return f"<HashDesc {self.name}>"


class Shash(Transform):
    """A hash or MAC transform, as ``alloc_shash(name)`` returns it.

    ``digest(data)`` hashes one message (for a keyed hash, once ``setkey`` was called);
    ``init()`` starts a hashlib-like :class:`HashDesc` for streaming.
    """

    __slots__ = ("_core", "_has_key", "digest")

    digest: Callable[[Buffer], bytes]

    def __init__(self, alg: Algorithm) -> None:
        self._alg = alg
        self._core: ShashCore = alg.create()
        self._has_key = not alg.keyed
        self.digest = self._core.digest if self._has_key else self._missing_key

    @property
    def digestsize(self) -> int:
        return self._alg.digestsize

    @property
    def keyed(self) -> bool:
        return self._alg.keyed

    def setkey(self, key: Buffer) -> None:
        """Key a keyed hash; a failed setkey leaves the previous key in place."""
        if not self.keyed:
            raise InvalidArgument(f"{self.alg_name} is not a keyed hash: setkey is not supported")
        key = check_buffer(key, "key")  # bytes(16) would be 16 zero bytes, not an error
        self._core.setkey(bytes(key))
        self._has_key = True
        self.digest = self._core.digest

    def init(self) -> HashDesc:
        if not self._has_key:
            self._missing_key(b"")
        return HashDesc(self._core.init(), self.alg_name, self.digestsize, self.blocksize)

    def _missing_key(self, data: Buffer) -> bytes:
        raise InvalidArgument(f"{self.alg_name} is keyed: call setkey() before hashing")
