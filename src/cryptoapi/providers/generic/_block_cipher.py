"""What every generic block cipher checks of its input: a flat byte view of whole blocks."""

from cryptoapi.alg import Buffer
from cryptoapi.errors import InvalidArgument


def whole_blocks(data: Buffer, cipher: str, block_size: int = 16) -> memoryview:
    """``data`` as a flat view of bytes (a ``str`` raises TypeError); InvalidArgument unless
    it holds whole ``block_size``-byte blocks of ``cipher``."""
    view = memoryview(data)  # rejects str with TypeError
    if view.format != "B" or view.ndim != 1:
        view = view.cast("B")
    if len(view) % block_size:
        raise InvalidArgument(
            f"{cipher} input must be a multiple of {block_size} bytes, got {len(view)}"
        )
    return view
