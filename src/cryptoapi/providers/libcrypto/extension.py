"""``esp_batch.c``, compiled on first use into the per-user cache (:mod:`cryptoapi._cbuild`)
against this Python's headers and the system's libcrypto, and imported as ``_esp_batch``.

Without a compiler, Python's headers or OpenSSL's, the build fails: the extension is then
absent for this process (``ModuleNotFoundError``, which the registry takes as an optional
library missing) and ESP's AEADs come from the ``openssl`` provider, one packet per call.
``scripts/system-deps`` installs the headers (``libssl-dev``).
"""

import importlib.resources
from types import ModuleType

from cryptoapi._cbuild import extension

SOURCE = "esp_batch.c"
"""The extension's C source, package data next to this module."""
MODULE = "_esp_batch"
"""Its module name (``PyInit__esp_batch``)."""


def read_source() -> bytes:
    """The C source shipped in the package."""
    return importlib.resources.files(__package__).joinpath(SOURCE).read_bytes()


def load() -> ModuleType:
    """The extension, built first if the cache has none for this source, compiler and
    Python; ModuleNotFoundError naming the reason if it cannot be built or loaded."""
    return extension(
        read_source(), SOURCE, MODULE, what="the libcrypto ESP extension", libraries=("-lcrypto",)
    )
