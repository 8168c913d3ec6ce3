"""The system's libsodium as pysodium loads it (ctypes), for what PyNaCl's bindings lack:
Poly1305 (``crypto_onetimeauth_poly1305``), HMAC-SHA-256/512 (``crypto_auth_hmacsha*``) and
the bare ChaCha20/XChaCha20 streams.

pysodium wraps the streams and one-shot HMACs with 32-byte keys only; the HMAC
``init``/``update``/``final`` functions (any key length) and Poly1305 it does not wrap, so
their signatures are declared here on the library handle pysodium opened. pysodium raises
ValueError when it finds no libsodium: that is turned into the ModuleNotFoundError the
registry takes as "optional library absent" (the provider then offers nothing).
"""

import ctypes

try:
    import pysodium
except ValueError as absent:  # "Unable to find libsodium": the Debian package is missing
    raise ModuleNotFoundError(f"libsodium for pysodium: {absent}", name="pysodium") from absent

SODIUM = pysodium.sodium
if SODIUM.sodium_init() < 0:  # pysodium never calls it; 1 means already initialized
    raise ModuleNotFoundError("libsodium failed to initialize", name="pysodium")

_BYTES = ctypes.c_char_p
_LENGTH = ctypes.c_ulonglong


def declare(function: str, *argtypes: type) -> None:
    """State a libsodium function's C signature (returning int) so ctypes checks calls."""
    native = getattr(SODIUM, function)
    native.argtypes = argtypes
    native.restype = ctypes.c_int


for _bits in (256, 512):
    declare(f"crypto_auth_hmacsha{_bits}_init", _BYTES, _BYTES, ctypes.c_size_t)
    declare(f"crypto_auth_hmacsha{_bits}_update", _BYTES, _BYTES, _LENGTH)
    declare(f"crypto_auth_hmacsha{_bits}_final", _BYTES, _BYTES)
    getattr(SODIUM, f"crypto_auth_hmacsha{_bits}_statebytes").restype = ctypes.c_size_t
declare("crypto_onetimeauth_poly1305", _BYTES, _BYTES, _LENGTH, _BYTES)
