"""Shared wire helpers: the extension header, 64-bit alignment, the decoder signature.

RFC 2367 §2.3: every extension starts with ``sadb_ext_len`` (its length in 64-bit words,
header included) and ``sadb_ext_type``, both host-order ``u16``; every extension, like the
whole message, is a multiple of 8 bytes long.
"""

import struct
from collections.abc import Callable
from typing import Protocol

from cryptoapi.pfkey.errors import PfkeyError
from cryptoapi.pfkey.wire.constants import E_MALFORMED, ExtType, name_of

EXT_HEADER = struct.Struct("<HH")
ALIGN = 8


class Extension(Protocol):
    """What every decoded extension offers: its type and its encoding."""

    @property
    def exttype(self) -> int: ...

    def encode(self) -> bytes: ...


Decoder = Callable[[bytes, int, int, int], Extension]
"""``decode(data, start, end, exttype)``: the extension occupying ``data[start:end]``.

Decoders trust their input: :func:`~cryptoapi.pfkey.wire.message.scan` has validated it."""

Checker = Callable[[bytes, int, int, int], object]
"""``check(data, start, end, exttype)``: raise EINVAL if the extension is malformed beyond
its minimum length (a decoder that validates may serve as its own checker)."""

ExtSpec = tuple[int, Checker | None, Decoder]
"""Per extension type: minimum length in bytes (Linux ``sadb_ext_min_len``), checker, decoder."""


def padded(size: int) -> int:
    """``size`` rounded up to a multiple of 8 (Linux ``PFKEY_ALIGN8``)."""
    return (size + ALIGN - 1) & ~(ALIGN - 1)


def wrap(exttype: int, body: bytes) -> bytes:
    """An extension: the header, ``body`` (what follows the header) and zero padding."""
    size = padded(EXT_HEADER.size + len(body))
    if size // ALIGN > 0xFFFF:
        raise PfkeyError(E_MALFORMED, f"extension {ext_name(exttype)} is too long to encode")
    pad = size - EXT_HEADER.size - len(body)
    return EXT_HEADER.pack(size // ALIGN, exttype) + body + bytes(pad)


def framed(layout: struct.Struct, exttype: int, *fields: object, tail: bytes = b"") -> bytes:
    """An extension whose struct ``layout`` starts with the header: ``fields`` after the
    header, then ``tail`` (a sockaddr, key material) and zero padding; the length is
    computed."""
    size = padded(layout.size + len(tail))
    if size // ALIGN > 0xFFFF:
        raise PfkeyError(E_MALFORMED, f"extension {ext_name(exttype)} is too long to encode")
    pad = bytes(size - layout.size - len(tail))
    return layout.pack(size // ALIGN, exttype, *fields) + tail + pad


def ext_name(exttype: int) -> str:
    """A readable name for an extension type (``SA``, ``KEY_AUTH``, or the number)."""
    return name_of(exttype, ExtType)


def invalid(problem: str) -> PfkeyError:
    """The EINVAL error for a message that breaks a rule (RFC 2367, or Linux's checks)."""
    return PfkeyError(E_MALFORMED, problem)


def malformed(exttype: int, problem: str) -> PfkeyError:
    """The EINVAL error for a malformed extension, naming it and what was wrong."""
    return PfkeyError(E_MALFORMED, f"{ext_name(exttype)} extension: {problem}")


def check_type(exttype: int, allowed: tuple[int, ...], cls: str) -> None:
    """Refuse to encode a multi-type extension under a type that is not one of its own."""
    if exttype not in allowed:
        raise PfkeyError(E_MALFORMED, f"{cls} cannot be extension type {ext_name(exttype)}")
