"""The ``kdf`` transform: key derivation (SP 800-108 modes, HKDF) over a keyed PRF.

A core has ``setkey(key, **options)`` (HKDF takes ``salt`` and extracts there) and
``derive(fixed_input, length, **options)``; cores reject options they do not define with
InvalidArgument. The transform checks types, the key and the length once for all, so every
implementation of a name refuses the same lengths: 1 to :data:`MAX_OUTPUT` bytes here, and
within that what the algorithm allows (SP 800-108r1 §4: n ≤ 2^r - 1 blocks for an r-bit
counter; RFC 5869 §2.3: L ≤ 255·HashLen), checked by the core before its first PRF call.

``verify(fixed_input, expected)`` derives ``len(expected)`` bytes and compares them in
constant time (:func:`hmac.compare_digest`), raising :class:`cryptoapi.errors.BadMessage` on
a mismatch: what ``cryptography``'s ``KDF.verify`` does with its ``InvalidKey``. A KDF
transform holds its key, so it cannot be pickled or copied with :mod:`copy`.
"""

from typing import Any, Protocol

from cryptoapi.alg import Algorithm, Buffer
from cryptoapi.errors import BadMessage, InvalidArgument, InvalidKey
from cryptoapi.transforms.base import (
    NO_KEY,
    Transform,
    check_buffer,
    check_int,
    equal_in_constant_time,
)

MAX_OUTPUT = (2**32 - 1) // 8
"""The most bytes one ``derive`` returns: 2^29 - 1 (512 MiB), the longest output whose length
in bits, L, fits the 32-bit [L]_2 field of the SP 800-108r1 §4 fixed input that
``kdf108_fixed_input`` builds and NIST's CAVP KBKDF vectors use (and so within the kernel's
``unsigned int dlen``). Without it a 32-bit counter would let ``derive(fixed, 2**32)`` run
2^27 PRF calls and exhaust memory rather than fail."""


class KdfCore(Protocol):
    def setkey(self, key: bytes, /, **options: Any) -> None: ...
    def derive(self, fixed_input: bytes, length: int, /, **options: Any) -> bytes: ...


class Kdf(Transform):
    """A key-derivation transform, as ``alloc_kdf(name)`` returns it."""

    __slots__ = ("_core", "_keybits", "_primary")

    def __init__(self, alg: Algorithm) -> None:
        self._alg = alg
        self._primary: KdfCore = alg.create()
        self._core: KdfCore = NO_KEY
        self._keybits = -1  # the key's length, for the FIPS service indicator (-1: none)

    def setkey(self, key: Buffer, salt: Buffer | None = None, **options: Any) -> None:
        """Set the key derivation key (HKDF: the input keying material, plus ``salt``).

        ``salt`` is named rather than left in ``options`` because HKDF's setkey is the
        common keyed call: the core then gets it as one keyword, not a dict rebuilt."""
        if type(key) is not bytes:  # bytes pass as they are: the common case, checked fast
            key = bytes(check_buffer(key, "key"))
        if not key:
            raise InvalidKey(f"{self.alg_name}: the key must not be empty")
        if salt is not None and type(salt) is not bytes:
            salt = bytes(check_buffer(salt, "salt"))
        if options:
            for name, value in options.items():  # ``options`` is this call's own dict
                if type(value) is not bytes:
                    options[name] = bytes(check_buffer(value, name))
            if salt is not None:
                options["salt"] = salt
            self._primary.setkey(key, **options)
        elif salt is not None:
            self._primary.setkey(key, salt=salt)
        else:
            self._primary.setkey(key)
        self._keybits = len(key) * 8
        self._core = self._primary

    def derive(
        self,
        fixed_input: Buffer | None = None,
        length: int | None = None,
        *,
        info: Buffer | None = None,
        **options: Any,
    ) -> bytes:
        """``length`` bytes derived from the key and ``fixed_input``.

        For HKDF, ``fixed_input`` is RFC 5869's ``info`` and may be passed by that name,
        as RFC 5869 and pyca's ``HKDF(info=...)`` name it:
        ``derive(info=b"context", length=32)``; passing both is InvalidArgument, and so
        is ``info`` for a KDF that has no such parameter (SP 800-108's fixed input is
        label, context and length: :func:`cryptoapi.kdf108_fixed_input`)."""
        if type(fixed_input) is not bytes:
            fixed_input = self._fixed_input(fixed_input, info)
        elif info is not None:
            self._fixed_input(fixed_input, info)
        if type(length) is not int:
            length = check_int(length, "length")
        if not 0 < length <= MAX_OUTPUT:  # before the core runs a single PRF call
            self._bad_length(length)
        if options:
            return self._core.derive(fixed_input, length, **options)
        return self._core.derive(fixed_input, length)

    def verify(
        self,
        fixed_input: Buffer | None = None,
        expected: Buffer | None = None,
        *,
        info: Buffer | None = None,
        **options: Any,
    ) -> None:
        """Check that ``expected`` is ``derive(fixed_input, len(expected), **options)``
        (HKDF: ``fixed_input`` may be passed as ``info``, as to :meth:`derive`).

        The comparison takes constant time. Returns None on a match; raises
        :class:`cryptoapi.errors.BadMessage` if not, TypeError unless ``expected`` is
        bytes-like, and InvalidArgument for an empty ``expected`` (as ``derive`` does for a
        zero length), so nothing verifies against nothing. The length is ``expected``'s:
        pass one you stored, or check the length of one you were sent (a 1-byte guess
        matches one time in 256).
        """
        expected = check_buffer(expected, "expected")  # type: ignore[arg-type]  # None: TypeError
        derived = self.derive(fixed_input, len(expected), info=info, **options)
        if not equal_in_constant_time(derived, expected):
            raise BadMessage(f"{self.alg_name}: the derived key does not match")

    def _fixed_input(self, fixed_input: Buffer | None, info: Buffer | None) -> bytes:
        """The fixed input given either way, as bytes: ``info`` only for HKDF, and never
        with ``fixed_input`` too (which of two values would be meant?)."""
        if info is None:
            if fixed_input is None:
                raise TypeError(f"{self.alg_name}: derive needs fixed_input{self._or_info()}")
            return bytes(check_buffer(fixed_input, "fixed_input"))
        if not self._or_info():
            raise InvalidArgument(
                f"{self.alg_name}: no parameter 'info' (HKDF's name); pass fixed_input"
            )
        if fixed_input is not None:
            raise InvalidArgument(
                f"{self.alg_name}: pass info or fixed_input (the same parameter), not both"
            )
        return bytes(check_buffer(info, "info"))

    def _or_info(self) -> str:
        """`` (or info)`` for HKDF, whose RFC calls the fixed input ``info``; else empty."""
        return " (or info)" if self.alg_name.startswith("hkdf(") else ""

    def _bad_length(self, length: int) -> None:
        if length <= 0:
            raise InvalidArgument(f"{self.alg_name}: length must be positive, got {length}")
        raise InvalidArgument(
            f"{self.alg_name}: length {length} exceeds {MAX_OUTPUT} bytes, the most one "
            "derive returns"
        )
