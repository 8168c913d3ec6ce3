"""The ``cbcmac`` template: the raw CBC-MAC, a keyed shash over a block cipher, as the
kernel's ``cbcmac`` (in ``crypto/ccm.c``) on which CCM's authentication (SP 800-38C §6.1,
the chain Y_i = CIPH_K(B_i ^ Y_(i-1))) can be built: ``cbcmac(aes)``.

    Y_0 = 0^b        Y_i = CIPH_K(M_i ^ Y_(i-1))        MAC = Y_n

The key is the cipher's. A last partial block is padded with zeros, and an empty message
has the MAC 0^b (nothing is enciphered), as in the kernel. This is *not* a secure MAC for
messages of varying length (extending a message extends its chain): it is a building block
for modes that fix the length first (CCM); CMAC (``cmac(aes)``) is the MAC to use. Full
blocks are chained as they arrive; only a partial block waits for more data.
"""

from collections.abc import Callable

from cryptoapi.alg import Algorithm, AlgType, Buffer, InnerLookup, Template
from cryptoapi.templates._modes import byte_view, inner_of, mac_instance
from cryptoapi.transforms.cipher import CipherCore


class CbcMacChain:
    """A running CBC-MAC: ``update``, ``digest`` (non-final) and ``copy``; its cipher is
    keyed once and never again, so a copy can share it."""

    __slots__ = ("_chain", "_cipher", "_pending", "_size")

    def __init__(self, cipher: CipherCore, size: int, chain: int = 0, pending: bytes = b"") -> None:
        self._cipher = cipher
        self._size = size
        self._chain = chain  # Y_i as an integer
        self._pending = pending  # the partial block: 0 to size - 1 bytes

    def update(self, data: Buffer, /) -> None:
        view = byte_view(data)  # rejects str with TypeError, as hashlib does
        pending = self._pending + view
        size = self._size
        whole = len(pending) - len(pending) % size
        encrypt_block = self._cipher.encrypt_block
        from_bytes = int.from_bytes
        chain = self._chain
        for start in range(0, whole, size):
            chain ^= from_bytes(pending[start : start + size], "big")
            chain = from_bytes(encrypt_block(chain.to_bytes(size, "big")), "big")
        self._chain = chain
        self._pending = pending[whole:]

    def digest(self) -> bytes:
        size = self._size
        if not self._pending:
            return self._chain.to_bytes(size, "big")
        last = int.from_bytes(self._pending + bytes(size - len(self._pending)), "big")
        return self._cipher.encrypt_block((self._chain ^ last).to_bytes(size, "big"))

    def copy(self) -> "CbcMacChain":
        return CbcMacChain(self._cipher, self._size, self._chain, self._pending)


class CbcMac:
    """The CBC-MAC core: ``setkey`` keys a fresh cipher core per key."""

    __slots__ = ("_cipher", "_new_cipher", "_size")

    def __init__(self, new_cipher: Callable[[], CipherCore], size: int) -> None:
        self._new_cipher = new_cipher
        self._size = size

    def setkey(self, key: bytes, /) -> None:
        cipher = self._new_cipher()
        cipher.setkey(key)
        self._cipher = cipher  # a rejected key leaves the previous cipher in place

    def init(self) -> CbcMacChain:
        return CbcMacChain(self._cipher, self._size)

    def digest(self, data: Buffer, /) -> bytes:
        state = CbcMacChain(self._cipher, self._size)
        state.update(data)
        return state.digest()


def create(lookup: InnerLookup, args: tuple[str, ...]) -> Algorithm:
    """Build ``cbcmac(C)`` from the best (or the named) block cipher C."""
    cipher = inner_of("cbcmac", lookup, args, AlgType.CIPHER)
    return mac_instance(
        "cbcmac",
        cipher,
        lambda: CbcMac(cipher.create, cipher.blocksize),
        digestsize=cipher.blocksize,
    )


TEMPLATE = Template("cbcmac", create)
