"""What the block-cipher mode templates share: resolving their one inner algorithm, and the
byte-string operations of SP 800-38A §6 (XOR of whole strings, views of any buffer).

XOR runs as one big-integer operation, in C, over a whole message at a time: with the cipher
batched by ``encrypt_blocks``, a mode costs a few interpreter steps per message, not per
block.
"""

from cryptoapi.alg import Algorithm, AlgType, Buffer, InnerLookup
from cryptoapi.errors import InvalidArgument
from cryptoapi.transforms.cipher import CipherCore


def inner_of(template: str, lookup: InnerLookup, args: tuple[str, ...], kind: AlgType) -> Algorithm:
    """The one inner algorithm of ``template(arg)``, looked up as a ``kind``."""
    if len(args) != 1:
        raise InvalidArgument(f"{template} takes one {kind} algorithm, got {len(args)}")
    return lookup(args[0], kind)


def require(condition: bool, template: str, inner: Algorithm, needs: str) -> None:
    """Refuse to build ``template`` over ``inner`` unless ``condition`` holds."""
    if not condition:
        raise InvalidArgument(f"{template} needs {needs}; {inner.driver} does not qualify")


def byte_view(data: Buffer) -> memoryview:
    """A flat view of ``data`` in bytes, whatever the buffer's item format."""
    view = memoryview(data)
    return view if view.format == "B" and view.ndim == 1 else view.cast("B")


def xor(a: Buffer, b: Buffer) -> bytes:
    """``a`` XOR ``b``; both of the same length."""
    size = len(a)
    return (int.from_bytes(a, "little") ^ int.from_bytes(b, "little")).to_bytes(size, "little")


class CipherMode:
    """A mode of operation over one block cipher core, keyed by keying the cipher."""

    __slots__ = ("_blocksize", "_cipher")

    def __init__(self, cipher: CipherCore, blocksize: int) -> None:
        self._cipher = cipher
        self._blocksize = blocksize

    def setkey(self, key: bytes, /) -> None:
        self._cipher.setkey(key)
