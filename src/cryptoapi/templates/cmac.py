"""The ``cmac`` template: CMAC, NIST SP 800-38B (AES-CMAC is RFC 4493), a keyed shash over a
64- or 128-bit block cipher: ``cmac(aes)``.

Subkeys (§6.1): L = CIPH_K(0^b); K1 = L << 1, XOR R_b if the bit shifted out was 1; K2 the
same from K1 (R_128 = 0^120 10000111, R_64 = 0^59 11011).
MAC (§6.2): a CBC chain over the message blocks, where the last block is XORed with K1 if
it is complete and, padded with 10^j, with K2 if not (or if the message is empty).

Streaming therefore holds back the last block, even a full one, until ``digest()``. The
chain and the held-back block form a :class:`CbcMacState`, which ``xcbc`` shares: it
differs only in how its keys are derived.
"""

from collections.abc import Callable

from cryptoapi.alg import Algorithm, AlgType, Buffer, InnerLookup, Template
from cryptoapi.templates._modes import byte_view, inner_of, mac_instance, require
from cryptoapi.transforms.cipher import CipherCore

R_B = {16: 0x87, 8: 0x1B}  # §5.3: the last bits of R_128 and R_64


class MacKeys:
    """What one key gives a CBC-MAC variant: the keyed cipher of the chain and the values
    XORed into a complete and into a padded last block. Immutable once made, so a running
    state keeps its keys even if the transform is keyed again."""

    __slots__ = ("blocksize", "cipher", "complete", "padded")

    def __init__(self, cipher: CipherCore, blocksize: int, complete: int, padded: int) -> None:
        self.cipher = cipher
        self.blocksize = blocksize
        self.complete = complete
        self.padded = padded


class CbcMacState:
    """A running CMAC (or XCBC): ``update``, ``digest`` (non-final) and ``copy``."""

    __slots__ = ("_chain", "_keys", "_last")

    def __init__(self, keys: MacKeys, chain: int = 0, last: bytes = b"") -> None:
        self._keys = keys
        self._chain = chain
        self._last = last  # the held-back last block: 0 to blocksize bytes

    def update(self, data: Buffer, /) -> None:
        view = byte_view(data)  # rejects str with TypeError, as hashlib does
        if not view:
            return
        size = self._keys.blocksize
        pending = self._last + view
        keep = len(pending) - (len(pending) - 1) // size * size  # 1 to size bytes
        encrypt_block = self._keys.cipher.encrypt_block
        from_bytes = int.from_bytes
        chain = self._chain
        for start in range(0, len(pending) - keep, size):
            chain ^= from_bytes(pending[start : start + size], "big")
            chain = from_bytes(encrypt_block(chain.to_bytes(size, "big")), "big")
        self._chain = chain
        self._last = pending[len(pending) - keep :]

    def digest(self) -> bytes:
        keys = self._keys
        size = keys.blocksize
        if len(self._last) == size:
            last = int.from_bytes(self._last, "big") ^ keys.complete
        else:
            padded = self._last + b"\x80" + bytes(size - 1 - len(self._last))
            last = int.from_bytes(padded, "big") ^ keys.padded
        return keys.cipher.encrypt_block((self._chain ^ last).to_bytes(size, "big"))

    def copy(self) -> "CbcMacState":
        return CbcMacState(self._keys, self._chain, self._last)


def double(value: int, blocksize: int) -> int:
    """x * value in GF(2^b) (§6.1 steps 2-3): a left shift, reduced by R_b on overflow."""
    value <<= 1
    if value >> 8 * blocksize:
        value ^= (1 << 8 * blocksize) | R_B[blocksize]
    return value


class Cmac:
    """The CMAC core: ``setkey`` keys a fresh cipher core and derives K1 and K2."""

    __slots__ = ("_blocksize", "_keys", "_new_cipher")

    def __init__(self, new_cipher: Callable[[], CipherCore], blocksize: int) -> None:
        self._new_cipher = new_cipher
        self._blocksize = blocksize

    def _derive(self, key: bytes) -> MacKeys:
        cipher = self._new_cipher()
        cipher.setkey(key)
        size = self._blocksize
        k1 = double(int.from_bytes(cipher.encrypt_block(bytes(size)), "big"), size)
        return MacKeys(cipher, size, k1, double(k1, size))

    def setkey(self, key: bytes, /) -> None:
        self._keys = self._derive(key)  # a rejected key leaves the previous keys in place

    def init(self) -> CbcMacState:
        return CbcMacState(self._keys)

    def digest(self, data: Buffer, /) -> bytes:
        state = CbcMacState(self._keys)
        state.update(data)
        return state.digest()


def create(lookup: InnerLookup, args: tuple[str, ...]) -> Algorithm:
    """Build ``cmac(C)`` from the best (or the named) 64- or 128-bit block cipher C."""
    cipher = inner_of("cmac", lookup, args, AlgType.CIPHER)
    require(cipher.blocksize in R_B, "cmac", cipher, "an 8- or 16-byte block cipher")
    return mac_instance(
        "cmac",
        cipher,
        lambda: Cmac(cipher.create, cipher.blocksize),
        digestsize=cipher.blocksize,
    )


TEMPLATE = Template("cmac", create)
