"""The ``shash`` transform: hashes and keyed hashes (MACs), hashlib-like.

A provider supplies a *core* per transform (``Algorithm.create()``): ``init()`` returns a
hash state with ``update``/``digest``/``copy`` (hashlib objects qualify as they are) and
``digest(data)`` hashes one message; keyed cores also take ``setkey(key)``. The transform
adds names (the kernel's and PEP 452's), sizes, checks, and ``verify``, which compares a tag
in constant time (:func:`hmac.compare_digest`) and raises
:class:`cryptoapi.errors.BadMessage` on a mismatch, so no caller need compare tags with
``==``, whose running time tells an attacker how many leading bytes of a forgery were right.

Neither a transform nor a :class:`HashDesc` can be pickled or copied with :mod:`copy`
(``desc.copy()`` forks a running hash, as with hashlib): a keyed one holds its key.
"""

from __future__ import annotations

from cryptoapi.alg import Algorithm, AlgType
from cryptoapi.errors import BadMessage, InvalidArgument
from cryptoapi.transforms.base import (
    NotPicklable,
    Transform,
    check_buffer,
    equal_in_constant_time,
)

TYPE_CHECKING = False  # not typing's: importing typing costs more than hashlib; mypy sets it true

if TYPE_CHECKING:
    from collections.abc import Callable

    from cryptoapi.alg import Buffer
    from cryptoapi.transforms.cores import HashState, ShashCore


class UnkeyedHash:
    """The core of any unkeyed hash, given a constructor ``new(data=b"")``."""

    def __init__(self, new: Callable[..., HashState]) -> None:
        self.init = new
        self._new = new

    def digest(self, data: Buffer, /) -> bytes:
        return self._new(data).digest()

    def setkey(self, key: bytes, /) -> None:
        raise AssertionError("the transform never keys an unkeyed hash")


def hashlib_like(empty: Callable[[], HashState]) -> Callable[..., HashState]:
    """A hashlib-style ``new(data=b"")`` from ``empty``, which makes an empty running hash
    (for libraries whose constructors take no message). The data always goes through
    ``update``, also when empty, so a str raises TypeError whatever its length."""

    def new(data: Buffer = b"") -> HashState:
        state = empty()
        state.update(data)
        return state

    return new


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


def check_tag(name: str, computed: bytes, tag: Buffer) -> None:
    """Return if ``tag`` equals ``computed``, compared in constant time; BadMessage if not
    (a tag of another length included: a truncated tag is not accepted, since an empty one
    would then match anything), TypeError unless ``tag`` is bytes-like."""
    if not equal_in_constant_time(computed, check_buffer(tag, "tag")):
        raise BadMessage(f"{name}: the tag does not verify")


def typed_error(data: object, error: TypeError) -> TypeError:
    """The TypeError for ``data`` that every transform gives (``data must be bytes-like,
    not str``) when it is not bytes-like, else ``error`` as it is. Hash libraries each word
    their own (hashlib: "Strings must be encoded before hashing"; memoryview: "a
    bytes-like object is required"); the transform translates theirs after the fact, so
    bytes take the library's path with no check."""
    try:
        check_buffer(data, "data")  # type: ignore[arg-type]  # checking is what it is for
    except TypeError as typed:
        return typed
    return error


class HashDesc(NotPicklable):
    """A hashlib-like running hash (the kernel's ``shash_desc``): update, final, copy,
    and ``verify``. Not picklable; ``copy()`` forks it."""

    __slots__ = ("_state", "block_size", "digest_size", "name")

    def __init__(self, state: HashState, name: str, digest_size: int, block_size: int) -> None:
        self._state = state
        self.name = name
        self.digest_size = digest_size
        self.block_size = block_size

    def update(self, data: Buffer) -> None:
        """Add ``data`` to the message; TypeError unless it is bytes-like."""
        try:
            self._state.update(data)
        except TypeError as error:
            raise typed_error(data, error) from None

    def digest(self) -> bytes:
        """The digest so far; the state stays usable, as with hashlib."""
        return self._state.digest()

    final = digest

    def hexdigest(self) -> str:
        return self._state.digest().hex()

    def copy(self) -> HashDesc:
        """An independent running hash in the same state (hashlib's ``copy``)."""
        return HashDesc(self._state.copy(), self.name, self.digest_size, self.block_size)

    def verify(self, tag: Buffer) -> None:
        """Check ``tag`` against the digest so far in constant time: returns None if it
        matches, raises :class:`cryptoapi.errors.BadMessage` if not (and TypeError unless
        ``tag`` is bytes-like). The tag is the full digest; the state stays usable."""
        check_tag(self.name, self._state.digest(), tag)

    def __repr__(self) -> str:
        return f"<HashDesc {self.name}>"


class Shash(Transform):
    """A hash or MAC transform, as ``alloc_shash(name)`` returns it.

    ``digest(data)`` hashes one message (for a keyed hash, once ``setkey`` was called),
    ``verify(data, tag)`` checks a tag in constant time, and ``init()`` starts a
    hashlib-like :class:`HashDesc` for streaming. Besides the kernel's names
    (``alg_name``, ``digestsize``, ``blocksize``) it has PEP 452's (``name``,
    ``digest_size``, ``block_size``).
    """

    __slots__ = ("_core", "_digest", "_has_key", "_keybits")

    # The bound digest of the core, or _missing_key until a keyed hash has its key: one
    # attribute load and call in digest(), no key check per message. The method around
    # it costs 15-40 ns (4-5%) over the former instance attribute bound straight to the
    # core (bench.shash), the price of a digest() that help() and inspect can see.
    _digest: Callable[[Buffer], bytes]

    def __init__(self, alg: Algorithm) -> None:
        self._alg = alg
        self._core: ShashCore = alg.create()
        self._has_key = not alg.keyed or alg.optional_key
        self._digest = self._core.digest if self._has_key else self._missing_key

    @property
    def digestsize(self) -> int:
        return self._alg.digestsize

    @property
    def name(self) -> str:
        """PEP 452's name for ``alg_name`` (``sha256``, ``hmac(sha256)``)."""
        return self._alg.name

    @property
    def digest_size(self) -> int:
        """PEP 452's name for ``digestsize``: the digest's length in bytes."""
        return self._alg.digestsize

    @property
    def block_size(self) -> int:
        """PEP 452's name for ``blocksize``: the hash's internal block in bytes."""
        return self._alg.blocksize

    @property
    def keyed(self) -> bool:
        return self._alg.keyed

    def setkey(self, key: Buffer) -> None:
        """Key a keyed hash; a failed setkey leaves the previous key in place."""
        if not self.keyed:
            raise InvalidArgument(f"{self.alg_name} is not a keyed hash: setkey is not supported")
        key = check_buffer(key, "key")  # bytes(16) would be 16 zero bytes, not an error
        self._core.setkey(bytes(key))
        self._keybits = len(key) * 8  # for the FIPS service indicator, read only when asked
        self._has_key = True
        self._digest = self._core.digest

    def digest(self, data: Buffer) -> bytes:
        """The digest (for a keyed hash, the MAC) of the one message ``data``.

        InvalidArgument if the hash is keyed and ``setkey`` was not called; TypeError
        unless ``data`` is bytes-like.
        """
        try:
            return self._digest(data)
        except TypeError as error:  # costs nothing until raised
            raise typed_error(data, error) from None

    def verify(self, data: Buffer, tag: Buffer) -> None:
        """Check that ``tag`` is the digest of ``data``, in constant time.

        Returns None if it is; raises :class:`cryptoapi.errors.BadMessage` if not (a tag of
        another length included), TypeError unless both are bytes-like. Meant for MACs;
        on an unkeyed hash it checks a digest just the same, which authenticates nothing,
        as anyone can compute a hash.
        """
        check_tag(self.alg_name, self.digest(data), tag)

    def init(self) -> HashDesc:
        """A running hash (a keyed one needs its key first) for ``update`` calls."""
        if not self._has_key:
            self._missing_key(b"")
        return HashDesc(self._core.init(), self.alg_name, self.digestsize, self.blocksize)

    def _missing_key(self, data: Buffer) -> bytes:
        raise InvalidArgument(f"{self.alg_name} is keyed: call setkey() before hashing")
