"""What the block-cipher mode templates share: resolving their one inner algorithm, the
records of a MAC over a block cipher and of a mode named after its cipher alone, and the
byte-string operations of SP 800-38A §6 (XOR of whole strings, views of any buffer).

XOR runs as one big-integer operation, in C, over a whole message at a time: with the cipher
batched by ``encrypt_blocks``, a mode costs a few interpreter steps per message, not per
block.
"""

from collections.abc import Callable

from cryptoapi.alg import Algorithm, AlgType, Buffer, InnerLookup, instance
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


def mac_instance(
    template: str,
    cipher: Algorithm,
    create: Callable[[], object],
    *,
    digestsize: int,
    keysizes: tuple[int, int] | None = None,
) -> Algorithm:
    """The record of the keyed shash ``template(cipher)``: blocks of the cipher's size, the
    cipher's key sizes unless ``keysizes`` (min, max) fixes them."""
    low, high = keysizes or (cipher.min_keysize, cipher.max_keysize)
    return instance(
        template,
        (cipher,),
        type=AlgType.SHASH,
        create=create,
        digestsize=digestsize,
        blocksize=cipher.blocksize,
        keyed=True,
        min_keysize=low,
        max_keysize=high,
    )


def named_after_cipher(record: Algorithm, template: str, cipher: Algorithm) -> Algorithm:
    """``record`` named ``template(cipher)`` although it has more inner algorithms (a hash
    too), as the kernel names ``gcm(aes)`` and ``hctr2(aes)``; the rest as ``instance()``."""
    return record.replace(name=f"{template}({cipher.name})", driver=f"{template}({cipher.driver})")


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
