"""Algorithm lists: the proposal with its combinations (RFC 2367 §2.3.7) and the supported
algorithms a REGISTER reply carries (§2.3.7, ``sadb_supported`` / ``sadb_alg``).

Key sizes are in bits; ``ivlen`` is the IV length in bytes.
"""

import struct
from dataclasses import dataclass
from typing import ClassVar

from cryptoapi.pfkey.wire.constants import ExtType
from cryptoapi.pfkey.wire.framing import ExtSpec, check_type, malformed, wrap

_PROP = struct.Struct("<B3x")
_COMB = struct.Struct("<BBHHHHHIIIQQQQQQ")
_SUPPORTED = struct.Struct("<I")
_ALG = struct.Struct("<BBHHH")

SUPPORTED = (ExtType.SUPPORTED_AUTH, ExtType.SUPPORTED_ENCRYPT)


@dataclass(frozen=True, slots=True)
class Comb:
    """``sadb_comb``: one acceptable algorithm combination with its key sizes and lifetimes."""

    auth: int = 0
    encrypt: int = 0
    flags: int = 0
    auth_minbits: int = 0
    auth_maxbits: int = 0
    encrypt_minbits: int = 0
    encrypt_maxbits: int = 0
    soft_allocations: int = 0
    hard_allocations: int = 0
    soft_bytes: int = 0
    hard_bytes: int = 0
    soft_addtime: int = 0
    hard_addtime: int = 0
    soft_usetime: int = 0
    hard_usetime: int = 0

    def encode(self) -> bytes:
        return _COMB.pack(
            self.auth,
            self.encrypt,
            self.flags,
            self.auth_minbits,
            self.auth_maxbits,
            self.encrypt_minbits,
            self.encrypt_maxbits,
            0,
            self.soft_allocations,
            self.hard_allocations,
            self.soft_bytes,
            self.hard_bytes,
            self.soft_addtime,
            self.hard_addtime,
            self.soft_usetime,
            self.hard_usetime,
        )


@dataclass(frozen=True, slots=True)
class Proposal:
    """``sadb_prop`` followed by its combinations, most preferred first."""

    exttype: ClassVar[int] = ExtType.PROPOSAL
    replay: int = 0
    combs: tuple[Comb, ...] = ()

    def encode(self) -> bytes:
        body = _PROP.pack(self.replay) + b"".join(c.encode() for c in self.combs)
        return wrap(ExtType.PROPOSAL, body)


@dataclass(frozen=True, slots=True)
class AlgDesc:
    """``sadb_alg``: an algorithm number, its IV length (bytes) and key sizes (bits)."""

    id: int
    ivlen: int = 0
    minbits: int = 0
    maxbits: int = 0

    def encode(self) -> bytes:
        return _ALG.pack(self.id, self.ivlen, self.minbits, self.maxbits, 0)


@dataclass(frozen=True, slots=True)
class Supported:
    """``sadb_supported``: the authentication or encryption algorithms available."""

    exttype: int
    algs: tuple[AlgDesc, ...] = ()

    def encode(self) -> bytes:
        check_type(self.exttype, SUPPORTED, "Supported")
        body = _SUPPORTED.pack(0) + b"".join(a.encode() for a in self.algs)
        return wrap(self.exttype, body)


def _check_proposal(data: bytes, start: int, end: int, exttype: int) -> None:
    if (end - start - 8) % _COMB.size:
        raise malformed(exttype, f"{end - start - 8} bytes is not a whole number of combs")


def _decode_proposal(data: bytes, start: int, end: int, exttype: int) -> Proposal:
    replay = _PROP.unpack_from(data, start + 4)[0]
    combs = []
    for offset in range(start + 8, end, _COMB.size):
        fields = _COMB.unpack_from(data, offset)
        combs.append(Comb(*fields[:7], *fields[8:]))
    return Proposal(replay, tuple(combs))


def _decode_supported(data: bytes, start: int, end: int, exttype: int) -> Supported:
    algs = []
    for offset in range(start + 8, end, _ALG.size):
        ident, ivlen, minbits, maxbits, _ = _ALG.unpack_from(data, offset)
        algs.append(AlgDesc(ident, ivlen, minbits, maxbits))
    return Supported(exttype, tuple(algs))


SPECS: dict[int, ExtSpec] = {
    ExtType.PROPOSAL: (8, _check_proposal, _decode_proposal),
    ExtType.SUPPORTED_AUTH: (8, None, _decode_supported),
    ExtType.SUPPORTED_ENCRYPT: (8, None, _decode_supported),
}
"""Extension type -> (minimum length, checker, decoder): see ``wire.ExtSpec``."""
