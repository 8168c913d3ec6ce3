"""Which library (and which version of it) each provider's implementations come from, for
the fuzzer's reports: a disagreement names the library that is the odd one out."""

from __future__ import annotations

import functools

_DISTRIBUTIONS = {
    "openssl": "cryptography",
    "pycryptodome": "pycryptodome",
    "sodium": "PyNaCl",
    "wolfcrypt": "wolfcrypt",
}
"""Provider -> the Python distribution that binds its library."""


@functools.cache
def library(provider: str) -> str:
    """``provider``'s library with its version: ``OpenSSL 3.x (cryptography 4x)``,
    ``libsodium (PyNaCl 1.6.2)``, ``wolfSSL v5.x-stable (wolfcrypt 5.x)``, ``pycryptodome 3.x``,
    ``OpenSSL 3.x (the system's, from C)`` for the libcrypto extension's,
    ``cryptoapi 0.x`` for this package's generic code; a template instance's providers
    joined by ``+``; others as they are."""
    return " + ".join(_one_library(part) for part in provider.split("+"))


def _one_library(provider: str) -> str:
    if provider == "libcrypto":
        return _system_libcrypto()
    from importlib import metadata

    distribution = "cryptoapi" if provider == "generic" else _DISTRIBUTIONS.get(provider)
    if distribution is None:
        return provider
    try:
        version = metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return provider
    if provider == "openssl":
        from cryptography.hazmat.backends.openssl.backend import backend

        return f"{backend.openssl_version_text()} (cryptography {version})"
    if provider == "sodium":
        return f"libsodium (PyNaCl {version})"
    if provider == "wolfcrypt":
        from wolfcrypt import __wolfssl_version__

        return f"wolfSSL {__wolfssl_version__} (wolfcrypt {version})"
    return f"{distribution} {version}"


def _system_libcrypto() -> str:
    """The version of the system's libcrypto, which the libcrypto provider's extension
    links (``-lcrypto``): its own ``OpenSSL_version``, not cryptography's bundled one."""
    import ctypes
    import ctypes.util

    found = ctypes.util.find_library("crypto")
    if found is None:
        return "libcrypto"
    version = ctypes.CDLL(found).OpenSSL_version
    version.restype = ctypes.c_char_p
    return f"{version(0).decode()} (the system's, from C)"
