"""The ``kdf`` transform: key derivation (SP 800-108 modes, HKDF) over a keyed PRF.

A core has ``setkey(key, **options)`` (HKDF takes ``salt`` and extracts there) and
``derive(fixed_input, length, **options)``; cores reject options they do not define with
InvalidArgument. The transform checks types, the key and the length once for all.
"""

from typing import Any, Protocol

from cryptoapi.alg import Algorithm, Buffer
from cryptoapi.errors import InvalidArgument, InvalidKey
from cryptoapi.transforms.base import NO_KEY, Transform, check_buffer


class KdfCore(Protocol):
    def setkey(self, key: bytes, /, **options: Any) -> None: ...
    def derive(self, fixed_input: bytes, length: int, /, **options: Any) -> bytes: ...


class Kdf(Transform):
    """A key-derivation transform, as ``alloc_kdf(name)`` returns it."""

    __slots__ = ("_core", "_primary")

    def __init__(self, alg: Algorithm) -> None:
        self._alg = alg
        self._primary: Any = alg.create()
        self._core: Any = NO_KEY

    def setkey(self, key: Buffer, **options: Any) -> None:
        """Set the key derivation key (HKDF: the input keying material, plus ``salt``)."""
        key = check_buffer(key, "key")
        if not key:
            raise InvalidKey(f"{self.alg_name}: the key must not be empty")
        extra = {name: bytes(check_buffer(value, name)) for name, value in options.items()}
        self._primary.setkey(bytes(key), **extra)
        self._core = self._primary

    def derive(self, fixed_input: Buffer, length: int, **options: Any) -> bytes:
        """``length`` bytes derived from the key and ``fixed_input`` (HKDF: ``info``)."""
        fixed_input = check_buffer(fixed_input, "fixed_input")
        if not isinstance(length, int) or isinstance(length, bool):
            raise TypeError(f"length must be an int, not {type(length).__name__}")
        if length <= 0:
            raise InvalidArgument(f"{self.alg_name}: length must be positive, got {length}")
        return self._core.derive(bytes(fixed_input), length, **options)  # type: ignore[no-any-return]
