"""POLYVAL, RFC 8452 §3: the little-endian sibling of GHASH, a keyed ``shash`` (the
kernel's ``polyval-generic``) that HCTR2 hashes with.

    S_0 = 0^128        S_j = dot(S_(j-1) xor X_j, H)        POLYVAL(H, X_1..X_s) = S_s

where dot(a, b) = a * b * x^-128 in GF(2^128) modulo x^128 + x^127 + x^126 + x^121 + 1, and a
16-byte string is the polynomial whose coefficient of x^i is bit i of it read as a
little-endian integer.

It is computed with GHASH, as RFC 8452 Appendix A shows the two are related:

    POLYVAL(H, X_1, ..., X_n) =
        ByteReverse(GHASH(mulX_GHASH(ByteReverse(H)), ByteReverse(X_1), ..., ByteReverse(X_n)))

so the generic GHASH's tables (:mod:`cryptoapi.providers.generic.ghash`) serve for a key
mulX_GHASH(ByteReverse(H)), and every message block is byte-reversed on its way in. Read
as integers, ByteReverse is only a change of byte order: a block read little-endian *is*
its reverse read big-endian. A final partial block is zero-padded, as the kernel's
``polyval`` and our ``ghash`` do; HCTR2 pads its input itself.
"""

from cryptoapi.alg import PRIORITY_GENERIC, Buffer
from cryptoapi.errors import InvalidKey
from cryptoapi.providers.generic._block_hash import BlockHash, KeyedStateCore
from cryptoapi.providers.generic.ghash import Table, byte_table, ghash_blocks, mul_a
from cryptoapi.providers.records import record

BLOCK_SIZE = 16


def _byte_reversed_blocks(data: Buffer, start: int, end: int) -> bytes:
    """ByteReverse of every block of ``data[start:end]``, in order (Appendix A)."""
    view = memoryview(data)
    return b"".join(bytes(view[at : at + BLOCK_SIZE])[::-1] for at in range(start, end, BLOCK_SIZE))


class Polyval(BlockHash):
    """A running POLYVAL_H, hashlib-like: update, digest (non-final), copy. The state is
    GHASH's accumulator, i.e. the byte-reversed S_j."""

    __slots__ = ("_m",)

    name = "polyval"
    digest_size = BLOCK_SIZE
    block_size = BLOCK_SIZE
    _initial_state = 0  # S_0 = 0

    def __init__(self, h: Buffer) -> None:
        if len(h) != BLOCK_SIZE:
            raise InvalidKey(f"POLYVAL key H must be 16 bytes, got {len(h)}")
        # mulX_GHASH(ByteReverse(H)): ByteReverse(H) read big-endian is H read little-endian.
        self._m: Table = byte_table(mul_a(int.from_bytes(h, "little")))
        super().__init__()

    def _compress(self, state: int, data: Buffer, start: int, end: int) -> int:
        reversed_blocks = _byte_reversed_blocks(data, start, end)
        return ghash_blocks(state, self._m, reversed_blocks, 0, len(reversed_blocks))

    def _padding(self, buffered: int, length: int) -> bytes:
        return bytes(-buffered % BLOCK_SIZE)

    def _output(self, state: int) -> bytes:
        """S_s: ByteReverse of GHASH's result, i.e. the accumulator written little-endian."""
        return state.to_bytes(BLOCK_SIZE, "little")


class PolyvalCore(KeyedStateCore):
    """The ``polyval`` shash core, keyed with H (16 bytes)."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(Polyval)


ALGORITHMS = (
    record(
        "polyval", "polyval-generic", PolyvalCore, provider="generic", priority=PRIORITY_GENERIC
    ),
)
