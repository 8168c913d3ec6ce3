"""Who judges whom: the fuzz reference of each name and its third opinion, as data (the
kernel's ``.generic_driver`` in ``testmgr.c``'s ``alg_test_descs``).

A template name's reference is the template over its arguments' references
(``gcm(aes)`` -> ``gcm(aes-generic)``), unless the table names one; a name with neither
has no reference, and only its self-consistency is checked. The third opinion is an
independent implementation (pycryptodome, where installed) that names the odd one out
when an implementation and its reference disagree.
"""

from __future__ import annotations

from cryptoapi.names import Name, parse

_HASHES = (
    "md5", "sha1", "sha224", "sha256", "sha384", "sha512",
    "sha3-224", "sha3-256", "sha3-384", "sha3-512",
)  # fmt: skip
_GENERIC = (
    *_HASHES, "aes", "chacha20", "xchacha20", "poly1305", "ghash", "xchacha20poly1305", "polyval",
)  # fmt: skip
_GENERIC_KPP = ("curve25519", "ecdh-nist-p256", "ecdh-nist-p384", "dh")
_BLAKE2 = ("blake2b-160", "blake2b-256", "blake2b-384", "blake2b-512", "blake2s-256")
_GENERIC_ISSUE14 = (*_BLAKE2, "crc32c", "xxhash64", "sm3", "sm4", "aegis128")

REFERENCES: dict[str, str] = {
    name: f"{name}-generic" for name in (*_GENERIC, *_GENERIC_KPP, *_GENERIC_ISSUE14)
}
"""Name -> the driver every implementation of it is compared with."""

THIRD_OPINIONS: dict[str, str] = {
    **{name: f"{name}-pycryptodome" for name in _HASHES},
    **{name: f"{name}-pycryptodome" for name in _BLAKE2},
    "aes": "aes-pycryptodome",
    "cbc(aes)": "cbc-aes-pycryptodome",
    "ctr(aes)": "ctr-aes-pycryptodome",
    "chacha20": "chacha20-pycryptodome",
    "gcm(aes)": "gcm-aes-pycryptodome",
    "ccm(aes)": "ccm-aes-pycryptodome",
    "rfc7539(chacha20,poly1305)": "rfc7539-chacha20-poly1305-pycryptodome",
    "xchacha20poly1305": "xchacha20poly1305-pycryptodome",
    "cmac(aes)": "cmac-aes-pycryptodome",
    "poly1305": "poly1305-pycryptodome",
}
"""Name -> an independent third implementation, asked only when two disagree."""

# The legacy IPsec algorithms (issue 11) have no generic implementation: OpenSSL's and
# pycryptodome's judge each other (pycryptodome has no Camellia: only self-consistency).
REFERENCES.update(
    {name: f"{name}-pycryptodome" for name in ("des3_ede", "blowfish", "cast5", "rmd160")}
)


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


def third_driver(name: str) -> str | None:
    """The driver giving the third opinion on ``name``, if the table names one."""
    return THIRD_OPINIONS.get(name)
