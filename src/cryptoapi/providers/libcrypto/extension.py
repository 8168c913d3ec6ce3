"""``esp_batch.c``, compiled on first use into the per-user cache (:mod:`cryptoapi._cbuild`)
against this Python's headers and the system's libcrypto, and imported as ``_esp_batch``.

Without a compiler, Python's headers or OpenSSL's, the build fails: the extension is then
absent for this process (``ModuleNotFoundError``, which the registry takes as an optional
library missing) and ESP's AEADs come from the ``openssl`` provider, one packet per call.
``scripts/system-deps`` installs the headers (``libssl-dev``).
"""

import importlib.machinery
import importlib.resources
import sys
import sysconfig
from types import ModuleType

from cryptoapi._cbuild import BuildError, built

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
    include = sysconfig.get_paths()["include"]
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    try:
        path = built(
            read_source(), SOURCE, what="the libcrypto ESP extension",
            options=(f"-I{include}", "-lcrypto"), depends=sys.version.encode(), suffix=suffix,
        )  # fmt: skip
    except BuildError as error:
        raise ModuleNotFoundError(f"{MODULE}: {error}", name=MODULE) from None
    loader = importlib.machinery.ExtensionFileLoader(MODULE, str(path))
    spec = importlib.machinery.ModuleSpec(MODULE, loader, origin=str(path))
    try:
        module = loader.create_module(spec)
        loader.exec_module(module)
    except ImportError as error:  # an unloadable file: a libcrypto missing since the build
        raise ModuleNotFoundError(f"{MODULE}: {error}", name=MODULE) from None
    return module
