"""CRC32C, the Castagnoli CRC (RFC 3720 §12.1 and Appendix B.4, as iSCSI and SCTP use it),
as the kernel's ``crc32c`` shash computes it (``crypto/crc32c_generic.c``).

The CRC is reflected: the polynomial 0x1EDC6F41 with its bits reversed, 0x82F63B78, divides
the message least significant bit first, one table lookup per byte (the table derived here
from the polynomial). The kernel's contract: the register starts at the key, a 4-byte
little-endian seed (~0 unless set, the customary start), and the digest is the register
complemented, as 4 little-endian bytes, which is the byte order RFC 3720 B.4 lists.
Because no final complement is folded into the register, a seed of ~crc continues a CRC.
"""

from cryptoapi.alg import PRIORITY_GENERIC, Buffer
from cryptoapi.errors import InvalidKey
from cryptoapi.providers.generic._block_hash import BlockHash
from cryptoapi.providers.records import record

POLYNOMIAL = 0x82F63B78  # 0x1EDC6F41 bit-reversed
KEY_SIZE = 4
DEFAULT_KEY = b"\xff\xff\xff\xff"


def _table_entry(byte: int) -> int:
    crc = byte
    for _ in range(8):
        crc = crc >> 1 ^ (POLYNOMIAL if crc & 1 else 0)
    return crc


TABLE = tuple(_table_entry(byte) for byte in range(256))


def crc32c_update(crc: int, data: Buffer, start: int, end: int) -> int:
    """The register after the bytes ``data[start:end]`` (no complement in or out)."""
    table = TABLE
    for byte in memoryview(data)[start:end]:
        crc = crc >> 8 ^ table[(crc ^ byte) & 0xFF]
    return crc


class Crc32c(BlockHash):
    """A running CRC32C from a 4-byte little-endian seed: update, digest, copy."""

    __slots__ = ()

    name = "crc32c"
    digest_size = 4
    block_size = 1
    _initial_state = 0xFFFFFFFF

    def __init__(self, key: bytes = DEFAULT_KEY) -> None:
        super().__init__()
        self._state = int.from_bytes(key, "little")

    def _compress(self, state: int, data: Buffer, start: int, end: int) -> int:
        return crc32c_update(state, data, start, end)

    def _padding(self, buffered: int, length: int) -> bytes:
        return b""  # a CRC has no padding, and with one-byte blocks nothing is buffered

    def _output(self, state: int) -> bytes:
        return (~state & 0xFFFFFFFF).to_bytes(4, "little")


class Crc32cCore:
    """The ``crc32c`` shash core; the key is the 4-byte seed, as in the kernel."""

    __slots__ = ("_key",)

    def __init__(self) -> None:
        self._key = DEFAULT_KEY

    def setkey(self, key: bytes, /) -> None:
        if len(key) != KEY_SIZE:
            raise InvalidKey(f"crc32c key (the seed) must be 4 bytes, got {len(key)}")
        self._key = bytes(key)

    def init(self) -> Crc32c:
        return Crc32c(self._key)

    def digest(self, data: Buffer, /) -> bytes:
        state = Crc32c(self._key)
        state.update(data)
        return state.digest()


ALGORITHMS = (
    record("crc32c", "crc32c-generic", Crc32cCore, provider="generic", priority=PRIORITY_GENERIC),
)
