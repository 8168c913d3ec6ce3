"""A whole PF_KEY message: the ``sadb_msg`` base header and its extensions (RFC 2367 §2.2).

Decoding follows Linux's ``pfkey_get_base_msg`` and ``parse_exthdrs``, errno for errno:

- fewer than 16 bytes, or ``sadb_msg_len`` (64-bit words) not the number of bytes given:
  EMSGSIZE;
- version not 2, type 0 or above ``SADB_MAX`` (but for keyd's ``X_USAGE``): EINVAL;
  reserved not 0, in a message sent to the key manager (:func:`scan_request`; replies and
  notifications carry a policy's reference count there, as Linux's
  ``pfkey_xfrm_policy2msg`` sets it);
- an extension shorter than 8 bytes, running past the end, of type 0, repeated (§2.3: "An
  EINVAL will be returned if there are duplicate extensions"), shorter than its structure,
  or with a wrong address or context length: EINVAL;
- extension types above ``SADB_EXT_MAX`` are skipped (§2.3: unknown types "MUST be ignored"),
  but for ``SA_REPLAY`` (32, FreeBSD's ``sadb_x_sa_replay``: see
  :mod:`~cryptoapi.pfkey.wire.constants`), which is decoded.

A :class:`Scan` keeps the message as :class:`~cryptoapi.pfkey.wire.extensions.Redacted` bytes,
so neither its repr nor that of anything in it shows the keys an ADD or UPDATE carries.
"""

import builtins
import struct
from dataclasses import dataclass
from typing import NamedTuple, TypeVar

from cryptoapi.pfkey.errors import PfkeyError
from cryptoapi.pfkey.wire import extensions, policy, proposal, x_extensions
from cryptoapi.pfkey.wire.constants import (
    E_LENGTH,
    E_MALFORMED,
    PF_KEY_V2,
    SADB_EXT_MAX,
    SADB_MAX,
    ExtType,
    MsgType,
)
from cryptoapi.pfkey.wire.extensions import Redacted, address_ip
from cryptoapi.pfkey.wire.framing import ALIGN, EXT_HEADER, Extension, ExtSpec, ext_name, invalid

X_USAGE = int(MsgType.X_USAGE)
HEADER = struct.Struct("<BBBBHHII")
HEADER_LEN = HEADER.size  # 16
Buffer = bytes | bytearray | memoryview

SPECS: dict[int, ExtSpec] = {
    **extensions.SPECS,
    **x_extensions.SPECS,
    **proposal.SPECS,
    **policy.SPECS,
}
"""Every known extension type (1 .. ``SADB_EXT_MAX``, and ``SA_REPLAY``) -> (minimum length,
checker, decoder)."""
assert sorted(SPECS) == [*range(1, SADB_EXT_MAX + 1), ExtType.SA_REPLAY]

E = TypeVar("E")


@dataclass(frozen=True, slots=True)
class Message:
    """A PF_KEY message: header fields and extensions in wire order."""

    type: int
    satype: int = 0
    seq: int = 0
    pid: int = 0
    errno: int = 0
    extensions: tuple[Extension, ...] = ()
    version: int = PF_KEY_V2
    reserved: int = 0

    def get(self, exttype: int, cls: builtins.type[E]) -> E | None:
        """The extension of type ``exttype`` if present (it must be a ``cls``)."""
        for ext in self.extensions:
            if ext.exttype == exttype:
                if not isinstance(ext, cls):
                    raise TypeError(f"{ext_name(exttype)} is a {type(ext).__name__}")
                return ext
        return None

    def encode(self) -> bytes:
        """The wire bytes; ``sadb_msg_len`` is computed from the extensions."""
        body = b"".join(ext.encode() for ext in self.extensions)
        return header(self, HEADER_LEN + len(body)) + body

    @classmethod
    def decode(cls, data: Buffer) -> "Message":
        """Decode and validate ``data``; raises :class:`PfkeyError` with Linux's errno."""
        found = scan(data)
        raw = found.data
        exts = tuple(SPECS[t][2](raw, start, end, t) for t, (start, end) in found.spans.items())
        return cls(
            found.type, found.satype, found.seq, found.pid, found.errno, exts,
            reserved=found.reserved,
        )  # fmt: skip


def header(msg: Message, size: int) -> bytes:
    """The ``sadb_msg`` of ``msg`` for a message of ``size`` bytes."""
    if size % ALIGN or size // ALIGN > 0xFFFF:
        raise PfkeyError(E_LENGTH, f"a message of {size} bytes cannot be encoded")
    return HEADER.pack(
        msg.version,
        msg.type,
        msg.errno,
        msg.satype,
        size // ALIGN,
        msg.reserved,
        msg.seq,
        msg.pid,
    )


class Header(NamedTuple):
    """The ``sadb_msg`` base header of a message (RFC 2367 §2.1), its fields by name: what a
    transport reads to tell a reply from a notification, without decoding the rest."""

    version: int
    type: int
    errno: int
    satype: int
    words: int
    """``sadb_msg_len``: the message's length in 64-bit words."""
    reserved: int
    seq: int
    pid: int


def read_header(data: Buffer) -> Header:
    """The ``sadb_msg`` of ``data`` (the rest of the message is not looked at); EMSGSIZE
    if ``data`` is shorter than it."""
    if len(data) < HEADER_LEN:
        raise _too_short(len(data))
    return Header._make(HEADER.unpack_from(data))


def _too_short(size: int) -> PfkeyError:
    return PfkeyError(E_LENGTH, f"{size} bytes are too few for the 16-byte sadb_msg")


def decode(data: Buffer) -> Message:
    """Decode one PF_KEY message (see :meth:`Message.decode`)."""
    return Message.decode(data)


def encode(msg: Message) -> bytes:
    """Encode one PF_KEY message (see :meth:`Message.encode`)."""
    return msg.encode()


Spans = dict[int, tuple[int, int]]
"""Known extension type -> (start, end) of its bytes, in wire order."""


class Scan(NamedTuple):
    """A validated message not yet decoded: its bytes (:class:`Redacted`: a repr shows only
    their length), header fields and extension spans."""

    data: bytes
    type: int
    errno: int
    satype: int
    seq: int
    pid: int
    spans: Spans
    reserved: int = 0

    def decode(self, exttype: int) -> Extension | None:
        """The typed extension of ``exttype``, if the message has one."""
        span = self.spans.get(exttype)
        if span is None:
            return None
        return SPECS[exttype][2](self.data, span[0], span[1], exttype)


_new_scan = tuple.__new__
"""Builds a Scan from its fields in order, as ``Scan(...)`` does, without the Python call
of a NamedTuple's ``__new__`` (0.15 us of a 3 us scan; measured)."""


def scan(data: Buffer) -> Scan:
    """Validate ``data`` as one PF_KEY message and find its extensions; build nothing.

    The one validating parser: :meth:`Message.decode` and the key manager
    (:func:`scan_request`) both use it. Raises :class:`PfkeyError` with Linux's errno (see
    the module docstring).
    """
    return _scan(data, False)


def scan_request(data: Buffer) -> Scan:
    """:func:`scan` for a message sent to the key manager, which must also have 0 in
    ``sadb_msg_reserved`` (Linux ``pfkey_get_base_msg``: EINVAL, checked with the version
    and type, before the length)."""
    return _scan(data, True)


def _scan(data: Buffer, request: bool) -> Scan:
    if type(data) is not Redacted:
        data = Redacted(data)  # one copy of ~200 bytes: about 0.1 us a message
    size = len(data)
    if size < HEADER_LEN:
        raise _too_short(size)
    version, type_, errno, satype, words, reserved, seq, pid = HEADER.unpack_from(data)
    if version != PF_KEY_V2:
        raise PfkeyError(E_MALFORMED, f"sadb_msg_version is {version}, not PF_KEY_V2 (2)")
    if reserved and request:
        raise PfkeyError(E_MALFORMED, f"sadb_msg_reserved is {reserved}, not 0")
    if not 0 < type_ <= SADB_MAX and type_ != X_USAGE:
        raise PfkeyError(E_MALFORMED, f"sadb_msg_type {type_} is not a message type")
    if words * ALIGN != size:
        raise PfkeyError(E_LENGTH, f"sadb_msg_len says {words * ALIGN} bytes; {size} given")
    spans: Spans = {}
    start = HEADER_LEN
    specs = SPECS
    unpack_header = EXT_HEADER.unpack_from
    while start < size:
        ext_words, exttype = unpack_header(data, start)
        end = start + ext_words * ALIGN
        if ext_words == 0 or end > size:
            raise PfkeyError(
                E_MALFORMED, f"extension at byte {start} has length {ext_words * ALIGN}"
            )
        spec = specs.get(exttype)
        if spec is not None:
            if end - start < spec[0]:
                raise PfkeyError(
                    E_MALFORMED,
                    f"{ext_name(exttype)} extension is {end - start} bytes; "
                    f"it needs at least {spec[0]}",
                )
            if exttype in spans:
                raise PfkeyError(E_MALFORMED, f"{ext_name(exttype)} extension is repeated")
            if spec[1] is not None:
                spec[1](data, start, end, exttype)
            spans[exttype] = (start, end)
        elif exttype == 0:
            raise PfkeyError(E_MALFORMED, f"extension at byte {start} has the reserved type 0")
        start = end
    return _new_scan(Scan, (data, type_, errno, satype, seq, pid, spans, reserved))


_SRC = int(ExtType.ADDRESS_SRC)
_DST = int(ExtType.ADDRESS_DST)


def addresses(scan: Scan) -> tuple[bytes, bytes, bytes]:
    """(source extension, destination extension, packed destination address): both present
    and of one family (Linux ``present_and_same_family``), else EINVAL."""
    spans = scan.spans
    src = spans.get(_SRC)
    dst = spans.get(_DST)
    if src is None or dst is None:
        raise invalid("the message needs both ADDRESS_SRC and ADDRESS_DST")
    data = scan.data
    src_ext = data[src[0] : src[1]]
    dst_ext = data[dst[0] : dst[1]]
    if len(src_ext) != len(dst_ext):  # checked by scan: the length tells the family
        raise invalid("ADDRESS_SRC and ADDRESS_DST are of different address families")
    return src_ext, dst_ext, address_ip(dst_ext)
