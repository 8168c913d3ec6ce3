"""The RFC 2367 §2.3 extensions: SA, lifetime, address, key, identity, sensitivity, SPI range.

Each is a frozen dataclass with ``encode()``; ``SPECS`` gives per type the minimum length
(Linux's ``sadb_ext_min_len``), the checker that validates the rest and the decoder that
reads it back from ``data[start:end]``. SPIs and ports are network order on the wire and
plain ints here. Key bytes never appear in a repr: :class:`Key` holds them as
:class:`Redacted` bytes, whose repr and str give only the length, so a walk through a
decoded message's attributes (``pytest --showlocals``, an error reporter) shows none.
"""

import struct
from dataclasses import dataclass
from typing import ClassVar

from cryptoapi.pfkey.wire.constants import ExtType, SaState
from cryptoapi.pfkey.wire.framing import ExtSpec, check_type, framed, malformed, padded
from cryptoapi.pfkey.wire.sockaddr import MAX_PREFIXLEN, SOCKADDR_LEN, SockAddr, decode_sockaddr

# One struct per RFC 2367 §2.3 extension, its 4-byte header (sadb_ext_len, sadb_ext_type)
# included, for every module that reads or writes one (handlers, replies, the store).
SADB_SA = struct.Struct("<HH4sBBBBI")
"""``sadb_sa``: header, SPI (network order, as bytes), replay, state, auth, encrypt, flags."""
SADB_LIFETIME = struct.Struct("<HHIQQQ")
"""``sadb_lifetime``: header, allocations, bytes, addtime, usetime."""
SADB_ADDRESS = struct.Struct("<HHBBH")
"""``sadb_address``: header, proto, prefixlen, reserved (the sockaddr follows)."""
SADB_KEY = struct.Struct("<HHHH")
"""``sadb_key``: header, bits, reserved (the key material follows)."""
SADB_IDENT = struct.Struct("<HHHHQ")
SADB_SENS = struct.Struct("<HHIBBBBI")
SADB_SPIRANGE = struct.Struct("<HHIII")
_U64 = struct.Struct("<Q")

LIFETIMES = (ExtType.LIFETIME_CURRENT, ExtType.LIFETIME_HARD, ExtType.LIFETIME_SOFT)
ADDRESSES = (
    ExtType.ADDRESS_SRC,
    ExtType.ADDRESS_DST,
    ExtType.ADDRESS_PROXY,
    ExtType.X_NAT_T_OA,
)
KEYS = (ExtType.KEY_AUTH, ExtType.KEY_ENCRYPT)
IDENTITIES = (ExtType.IDENTITY_SRC, ExtType.IDENTITY_DST)


class Redacted(bytes):
    """Bytes whose repr and str show only their length: key material, or a whole message
    that may hold some. Otherwise plain bytes (equal, hashable, sliceable into plain bytes);
    ``.hex()`` and ``bytes()`` still give the content to code that asks for it."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<{len(self)} bytes>"

    __str__ = __repr__


@dataclass(frozen=True, slots=True)
class Sa:
    """``sadb_sa`` (§2.3.1): the SPI, replay window, state and algorithm numbers."""

    exttype: ClassVar[int] = ExtType.SA
    spi: int
    replay: int = 0
    state: int = SaState.MATURE
    auth: int = 0
    encrypt: int = 0
    flags: int = 0

    def encode(self) -> bytes:
        spi = self.spi.to_bytes(4, "big")
        fields = (spi, self.replay, self.state, self.auth, self.encrypt, self.flags)
        return framed(SADB_SA, ExtType.SA, *fields)


@dataclass(frozen=True, slots=True)
class Lifetime:
    """``sadb_lifetime`` (§2.3.2): current, hard or soft; 0 means no limit (hard/soft)."""

    exttype: int
    allocations: int = 0
    nbytes: int = 0
    addtime: int = 0
    usetime: int = 0

    def encode(self) -> bytes:
        check_type(self.exttype, LIFETIMES, "Lifetime")
        fields = (self.allocations, self.nbytes, self.addtime, self.usetime)
        return framed(SADB_LIFETIME, self.exttype, *fields)


@dataclass(frozen=True, slots=True)
class Address:
    """``sadb_address`` (§2.3.3) followed by its sockaddr: source, destination, proxy, or
    Linux's NAT-T original address."""

    exttype: int
    addr: SockAddr
    proto: int = 0
    prefixlen: int = 0

    def encode(self) -> bytes:
        check_type(self.exttype, ADDRESSES, "Address")
        fields = (self.proto, self.prefixlen, 0)
        return framed(SADB_ADDRESS, self.exttype, *fields, tail=self.addr.encode())


@dataclass(frozen=True, slots=True, repr=False)
class Key:
    """``sadb_key`` (§2.3.4): ``bits`` of key material in ``key``; repr hides the key."""

    exttype: int
    bits: int
    key: bytes

    def __post_init__(self) -> None:
        if type(self.key) is not Redacted:  # hidden from every repr, however it was built
            object.__setattr__(self, "key", Redacted(self.key))

    def __repr__(self) -> str:
        return f"Key(exttype={self.exttype}, bits={self.bits}, key={self.key!r})"

    def encode(self) -> bytes:
        check_type(self.exttype, KEYS, "Key")
        if len(self.key) != (self.bits + 7) // 8:
            raise malformed(self.exttype, f"{self.bits} bits need {(self.bits + 7) // 8} bytes")
        return framed(SADB_KEY, self.exttype, self.bits, 0, tail=self.key)


@dataclass(frozen=True, slots=True)
class Identity:
    """``sadb_ident`` (§2.3.5) and its NUL-terminated string, padded to 64 bits."""

    exttype: int
    type: int
    id: int = 0
    data: bytes = b""

    def encode(self) -> bytes:
        check_type(self.exttype, IDENTITIES, "Identity")
        string = self.data + b"\0" if self.data else b""
        return framed(SADB_IDENT, self.exttype, self.type, 0, self.id, tail=string)


@dataclass(frozen=True, slots=True)
class Sensitivity:
    """``sadb_sens`` (§2.3.6) with its sensitivity and integrity bitmaps (64-bit words)."""

    exttype: ClassVar[int] = ExtType.SENSITIVITY
    dpd: int
    sens_level: int = 0
    integ_level: int = 0
    sens_bitmap: tuple[int, ...] = ()
    integ_bitmap: tuple[int, ...] = ()

    def encode(self) -> bytes:
        levels = (self.sens_level, len(self.sens_bitmap), self.integ_level, len(self.integ_bitmap))
        words = b"".join(_U64.pack(w) for w in (*self.sens_bitmap, *self.integ_bitmap))
        return framed(SADB_SENS, ExtType.SENSITIVITY, self.dpd, *levels, 0, tail=words)


@dataclass(frozen=True, slots=True)
class SpiRange:
    """``sadb_spirange`` (§2.3.8): the SPIs GETSPI may choose from (host order)."""

    exttype: ClassVar[int] = ExtType.SPIRANGE
    min_spi: int
    max_spi: int

    def encode(self) -> bytes:
        return framed(SADB_SPIRANGE, ExtType.SPIRANGE, self.min_spi, self.max_spi, 0)


SaFields = tuple[int, int, int, int, int, int]
"""(SPI, replay, state, auth, encrypt, flags) of a ``sadb_sa``, the SPI as an int."""


def sa_fields(data: bytes, start: int) -> SaFields:
    """The fields of the ``sadb_sa`` at ``data[start:]`` (validated by ``scan``)."""
    _, _, spi, replay, state, auth, encrypt, flags = SADB_SA.unpack_from(data, start)
    return int.from_bytes(spi, "big"), replay, state, auth, encrypt, flags


def _decode_sa(data: bytes, start: int, end: int, exttype: int) -> Sa:
    return Sa(*sa_fields(data, start))


def lifetime_at(data: bytes, start: int) -> Lifetime:
    """The ``sadb_lifetime`` at ``data[start:]`` (validated by ``scan``)."""
    _, exttype, allocations, nbytes, addtime, usetime = SADB_LIFETIME.unpack_from(data, start)
    return Lifetime(exttype, allocations, nbytes, addtime, usetime)


def _decode_lifetime(data: bytes, start: int, end: int, exttype: int) -> Lifetime:
    return lifetime_at(data, start)


_ADDRESS_EXT_LEN = {family: 8 + padded(size) for family, size in SOCKADDR_LEN.items()}
"""The length of an address extension per family: the header and the padded sockaddr (24
bytes for AF_INET, 40 for AF_INET6; so a checked one's length tells its family)."""


def check_address(data: bytes, start: int, end: int, exttype: int) -> int:
    """Linux ``verify_address_len``: the extension is exactly the header and the padded
    sockaddr of its family, and the prefix length fits the family (else EINVAL).
    Returns the family."""
    family = data[start + 8] | data[start + 9] << 8 if end - start >= 10 else -1
    needed = _ADDRESS_EXT_LEN.get(family)
    if needed is None:
        raise malformed(exttype, f"address family {family} is not AF_INET or AF_INET6")
    if end - start != needed:
        raise malformed(exttype, f"is {end - start} bytes; family {family} needs {needed}")
    if data[start + 5] > MAX_PREFIXLEN[family]:
        raise malformed(exttype, f"prefix length {data[start + 5]} is too long for its family")
    return family


def address_ip(ext: bytes) -> bytes:
    """The packed address (4 or 16 bytes) of a validated address extension: the sockaddr
    after the 8-byte header holds it at 4..8 (sockaddr_in) or 8..24 (sockaddr_in6), and
    the extension's length (24 or 40 bytes) tells which."""
    return ext[12:16] if len(ext) == 24 else ext[16:32]


def _decode_address(data: bytes, start: int, end: int, exttype: int) -> Address:
    _, _, proto, prefixlen, _ = SADB_ADDRESS.unpack_from(data, start)
    return Address(exttype, decode_sockaddr(data, start + 8, end, "address"), proto, prefixlen)


# sadb_key_bits, a host-order u16 at 4..6 of SADB_KEY, read bytewise here: the per-message
# paths (scan's check, an ADD's keys) pay for no struct call
def check_key(data: bytes, start: int, end: int, exttype: int) -> None:
    """The key material ``sadb_key_bits`` announces fits in the extension (else EINVAL)."""
    bits = data[start + 4] | data[start + 5] << 8
    if 8 + (bits + 7) // 8 > end - start:
        raise malformed(exttype, f"{bits} key bits do not fit in {end - start - 8} bytes")


def key_at(data: bytes, start: int) -> tuple[int, bytes]:
    """(bits, key material) of the ``sadb_key`` at ``data[start:]`` (validated by ``scan``)."""
    bits = data[start + 4] | data[start + 5] << 8
    return bits, data[start + 8 : start + 8 + (bits + 7) // 8]


def _decode_key(data: bytes, start: int, end: int, exttype: int) -> Key:
    return Key(exttype, *key_at(data, start))


def _decode_identity(data: bytes, start: int, end: int, exttype: int) -> Identity:
    _, _, type_, _, ident = SADB_IDENT.unpack_from(data, start)
    string = data[start + 16 : end]
    nul = string.find(b"\0")
    return Identity(exttype, type_, ident, string if nul < 0 else string[:nul])


def _check_sensitivity(data: bytes, start: int, end: int, exttype: int) -> None:
    words = data[start + 9] + data[start + 11]  # sadb_sens_sens_len + sadb_sens_integ_len
    if end - start != 16 + 8 * words:
        raise malformed(exttype, f"{end - start} bytes do not hold its {words} bitmap words")


def _decode_sensitivity(data: bytes, start: int, end: int, exttype: int) -> Sensitivity:
    _, _, dpd, sens_level, sens_len, integ_level, integ_len, _ = SADB_SENS.unpack_from(data, start)
    words = [_U64.unpack_from(data, start + 16 + 8 * i)[0] for i in range(sens_len + integ_len)]
    return Sensitivity(
        dpd, sens_level, integ_level, tuple(words[:sens_len]), tuple(words[sens_len:])
    )


def _decode_spirange(data: bytes, start: int, end: int, exttype: int) -> SpiRange:
    _, _, low, high, _ = SADB_SPIRANGE.unpack_from(data, start)
    return SpiRange(low, high)


SPECS: dict[int, ExtSpec] = {
    ExtType.SA: (16, None, _decode_sa),
    ExtType.LIFETIME_CURRENT: (32, None, _decode_lifetime),
    ExtType.LIFETIME_HARD: (32, None, _decode_lifetime),
    ExtType.LIFETIME_SOFT: (32, None, _decode_lifetime),
    ExtType.ADDRESS_SRC: (8, check_address, _decode_address),
    ExtType.ADDRESS_DST: (8, check_address, _decode_address),
    ExtType.ADDRESS_PROXY: (8, check_address, _decode_address),
    ExtType.X_NAT_T_OA: (8, check_address, _decode_address),
    ExtType.KEY_AUTH: (8, check_key, _decode_key),
    ExtType.KEY_ENCRYPT: (8, check_key, _decode_key),
    ExtType.IDENTITY_SRC: (16, None, _decode_identity),
    ExtType.IDENTITY_DST: (16, None, _decode_identity),
    ExtType.SENSITIVITY: (16, _check_sensitivity, _decode_sensitivity),
    ExtType.SPIRANGE: (16, None, _decode_spirange),
}
