"""Who judges whom, as data: the fuzz reference of each name (the kernel's
``.generic_driver`` in ``testmgr.c``'s ``alg_test_descs``) and the libraries whose
implementations are the other opinions.

A template name's reference is the template over its arguments' references
(``gcm(aes)`` -> ``gcm(aes-generic)``), unless the table names one; a name with neither
has no reference, and only its self-consistency is checked. When an implementation and
its reference disagree, every installed implementation of the name from an independent
library (pycryptodome, libsodium, wolfCrypt) is asked too, and the majority names the odd one out.
"""

from __future__ import annotations

from cryptoapi.names import Name, parse

_HASHES = (
    "md5", "sha1", "sha224", "sha256", "sha384", "sha512",
    "sha3-224", "sha3-256", "sha3-384", "sha3-512",
)  # fmt: skip
_GENERIC = (
    *_HASHES, "aes", "chacha20", "xchacha20", "poly1305", "ghash", "xchacha20poly1305", "polyval",
    "blake2b-160", "blake2b-256", "blake2b-384", "blake2b-512", "blake2s-256", "crc32c",
    "xxhash64", "sm3", "sm4", "aegis128",
    "curve25519", "ecdh-nist-p256", "ecdh-nist-p384", "dh",
)  # fmt: skip
_LEGACY = ("des3_ede", "blowfish", "cast5", "rmd160")
"""The legacy IPsec algorithms have no generic implementation: OpenSSL's and pycryptodome's
judge each other (pycryptodome has no Camellia: it is checked for self-consistency only)."""

REFERENCES: dict[str, str] = {
    **{name: f"{name}-generic" for name in _GENERIC},
    **{name: f"{name}-pycryptodome" for name in _LEGACY},
}
"""Name -> the driver every implementation of it is compared with."""

OPINION_PROVIDERS = ("pycryptodome", "sodium", "wolfcrypt")
"""Providers over libraries with code of their own (neither OpenSSL's nor this package's):
every implementation of a name they register is asked when an implementation and its
reference disagree, and the majority decides which one is wrong."""


def reference_driver(name: str) -> str:
    """The reference of ``name``: ``sha256`` -> ``sha256-generic``, ``gcm(aes)`` ->
    ``gcm(aes-generic)``, ``authenc(hmac(sha1),cbc(aes))`` -> generic parts throughout;
    ``name`` itself when it has none (lookups of it then find the implementation)."""
    return str(_reference(parse(name)))


def _reference(name: Name) -> Name:
    declared = REFERENCES.get(str(name))
    if declared is not None:
        return Name(declared)
    if name.is_template:
        return Name(name.word, tuple(_reference(arg) for arg in name.args))
    return name
