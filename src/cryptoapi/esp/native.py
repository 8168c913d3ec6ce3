"""The C twins of the offload modules (``gro.c``, ``gso.c``), built on first use.

Each is the same function as its Python module's, byte for byte (the tests compare them on
every case and on random input), at a small part of the cost per packet: espd asks for
them when it opens a TUN device with a virtio-net header, and takes the Python ones where
they cannot be built (no compiler or Python headers: :mod:`cryptoapi._cbuild`). Nothing
is built before espd asks.
"""

import functools
import importlib.resources
import logging
from types import ModuleType

from cryptoapi._cbuild import extension

log = logging.getLogger(__name__)


@functools.cache
def native(source: str) -> ModuleType | None:
    """The extension ``_esp_<stem>`` built from ``source``, a C file of this package; None
    (the reason logged) if it cannot be built or loaded. Once per process."""
    module = "_esp_" + source.removesuffix(".c")
    try:
        return extension(
            importlib.resources.files(__package__).joinpath(source).read_bytes(),
            source, module, what=f"espd's {source}",
        )  # fmt: skip
    except ModuleNotFoundError as error:
        log.info("%s: using the Python one (%s)", source, error)
        return None
