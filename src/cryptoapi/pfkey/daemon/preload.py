"""The PF_KEY preload library: ``pfkey_preload.c``, built on first use for ``pfkey-exec``.

:mod:`cryptoapi._cbuild` compiles it into the per-user cache (``pfkey_preload-<key>.so``)
with the system's C compiler, once per source and compiler. The cache is loaded into other
programs (``LD_PRELOAD``), so it must be a directory of this user that nobody else can
write; otherwise, or without a compiler, or when the build fails, :class:`PreloadError`
says so in one line.
"""

import importlib.resources
from pathlib import Path

from cryptoapi._cbuild import COMPILERS, BuildError, built
from cryptoapi.pfkey.errors import PfkeyError

__all__ = ["COMPILERS", "SOCKET_ENV", "SOURCE", "PreloadError", "library", "read_source"]

SOURCE = "pfkey_preload.c"
"""The library's C source, package data next to this module."""

SOCKET_ENV = "CRYPTOAPI_KEYD_SOCKET"
"""The variable naming keyd's socket to the library (``SOCKET_ENV`` in the C source)."""


class PreloadError(PfkeyError):
    """The preload library cannot be built or kept."""


def library(cache: Path | None = None) -> Path:
    """The built preload library, compiled first if the cache has none for this source
    and compiler."""
    try:
        return built(
            read_source(), SOURCE, what="the PF_KEY preload library", options=("-ldl",),
            cache=cache,
        )  # fmt: skip
    except BuildError as error:
        raise PreloadError(error.errno, str(error)) from None


def read_source() -> bytes:
    """The C source shipped in the package."""
    return importlib.resources.files("cryptoapi.pfkey.daemon").joinpath(SOURCE).read_bytes()
