"""wolfCrypt's SHA-1, SHA-2 (FIPS 180-4) and SHA-3 (FIPS 202) states, priority 200.

``wolfcrypt.hashes`` objects are nearly hashlib's. Two differences are smoothed over here:
``update`` takes only buffers (the binding would encode a ``str``), and a SHA-3 state's
``copy`` keeps its digest size (the binding's copy makes a SHA3-384 object around the
copied state; the Keccak state itself does not depend on the variant, the size does).
"""

from collections.abc import Callable
from functools import partial
from typing import Protocol, cast

from wolfcrypt import hashes

from cryptoapi.alg import PRIORITY_PURE, Algorithm
from cryptoapi.providers.states import BytesOnlyState
from cryptoapi.transforms.shash import hashlib_like, unkeyed_shash


class _Native(Protocol):
    """What this module uses of a ``wolfcrypt.hashes`` object."""

    digest_size: int

    def update(self, data: bytes, /) -> None: ...
    def digest(self) -> bytes: ...
    def copy(self) -> "_Native": ...


class _State(BytesOnlyState):
    """A hashlib-like state over a wolfCrypt hash object whose copy keeps its digest size."""

    __slots__ = ()

    def copy(self) -> "_State":
        native = cast("_Native", self._native)  # the state _NATIVE's constructors make
        clone = native.copy()
        clone.digest_size = native.digest_size  # see the module docstring (SHA-3)
        return _State(clone)


_NATIVE: dict[str, tuple[Callable[[], _Native], int, int]] = {
    "sha1": (hashes.Sha, 20, 64),
    "sha256": (hashes.Sha256, 32, 64),
    "sha384": (hashes.Sha384, 48, 128),
    "sha512": (hashes.Sha512, 64, 128),
    **{
        f"sha3-{bits}": (partial(hashes.Sha3, b"", bits // 8), bits // 8, 200 - bits // 4)
        for bits in (224, 256, 384, 512)
    },
}
"""Name -> (a new empty state, digest size, block size)."""


def _wolfcrypt_hash(name: str) -> Algorithm:
    make, digestsize, blocksize = _NATIVE[name]
    return unkeyed_shash(
        name=name,
        driver=f"{name}-wolfcrypt",
        provider="wolfcrypt",
        priority=PRIORITY_PURE,
        new=hashlib_like(lambda: _State(make())),
        digestsize=digestsize,
        blocksize=blocksize,
    )


ALGORITHMS = tuple(_wolfcrypt_hash(name) for name in _NATIVE)
