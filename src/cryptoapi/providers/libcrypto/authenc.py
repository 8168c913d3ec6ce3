"""ESP's encrypt-then-MAC over libcrypto from C: ``authenc(hmac(sha1),cbc(aes))`` and its
SHA-2 siblings, one piece each (the ``authenc`` template's construction, RFC 4303 §3.3.2:
the ICV, HMAC truncated to the tag length, over assoc || IV || C).

What it adds over the instances of the template is :class:`~cryptoapi.transforms.aead.
EspRuns`: the extension seals and opens whole runs of one SA's ESP packets in one call,
with the random IVs the data path draws for the run (RFC 3602 §3), and with extended
sequence numbers the ICV over their high bits after the payload (§2.2.1, what the
kernel's ``authencesn`` does). Its one-packet calls, which the self-test manager checks,
have no ESN: they are the template's. It ranks at OpenSSL's 300 (the manifest's
``AT_OPENSSL`` says why), above the instances over the ``openssl`` provider's parts, which
tie and are not one piece. Key: the template's, ``enckeylen`` (4 bytes) || authkey || AES
key.
"""

from typing import Any

from cryptoapi.alg import PRIORITY_OPENSSL, Buffer
from cryptoapi.errors import InvalidKey
from cryptoapi.providers.libcrypto.core import EXTENSION, ExtensionCore
from cryptoapi.providers.records import record
from cryptoapi.templates._modes import byte_view
from cryptoapi.templates.authenc import check_data, extract_keys

CIPHERS = {16: "AES-128-CBC", 24: "AES-192-CBC", 32: "AES-256-CBC"}
"""libcrypto's name of AES-CBC, by the length of the AES key."""
CBC_AES = record("cbc(aes)", "cbc-aes-libcrypto", lambda: None, provider="libcrypto", priority=0)
"""The sizes of ``cbc(aes)`` (not registered: the rules on the enckey and the data)."""


class _Authenc(ExtensionCore):
    """One SA's keys in the extension; its one-packet calls are not offered as native ones
    (the data rule is checked here first), its runs are."""

    __slots__ = ()

    digest = ""
    """libcrypto's name of the HMAC's hash."""

    def setkey(self, key: bytes, /) -> None:
        authkey, enckey = extract_keys(bytes(key), CBC_AES, self.name)
        if len(enckey) not in CIPHERS:
            raise InvalidKey(f"{self.name}: an AES key is 16, 24 or 32 bytes, not {len(enckey)}")
        self._secret = (enckey, authkey)
        self._rekey()

    def _made(self, enckey: bytes, authkey: bytes, /) -> Any:
        cipher = CIPHERS[len(enckey)]
        return EXTENSION.EtmKey(cipher, enckey, self.digest, authkey, self._authsize)

    def encrypt(self, iv: bytes, plaintext: Buffer, assoc: Buffer, /) -> bytes:
        text = bytes(byte_view(plaintext))
        check_data(self.name, CBC_AES, len(text))
        return super().encrypt(iv, text, assoc)

    def decrypt(self, iv: bytes, data: Buffer, assoc: Buffer, /) -> bytes:
        body = bytes(byte_view(data))
        check_data(self.name, CBC_AES, len(body) - self._authsize)
        return super().decrypt(iv, body, assoc)


class AuthencSha1(_Authenc):
    """HMAC-SHA-1 over AES-CBC (HMAC-SHA-1-96 in ESP, RFC 2404: a 12-byte ICV)."""

    __slots__ = ()
    name = "authenc(hmac(sha1),cbc(aes))"
    digest, full_icv = "SHA1", 20


class AuthencSha256(_Authenc):
    """HMAC-SHA-256 over AES-CBC (HMAC-SHA-256-128 in ESP, RFC 4868 §2: 16 bytes)."""

    __slots__ = ()
    name = "authenc(hmac(sha256),cbc(aes))"
    digest, full_icv = "SHA256", 32


class AuthencSha384(_Authenc):
    """HMAC-SHA-384 over AES-CBC (HMAC-SHA-384-192 in ESP, RFC 4868 §2: 24 bytes)."""

    __slots__ = ()
    name = "authenc(hmac(sha384),cbc(aes))"
    digest, full_icv = "SHA384", 48


class AuthencSha512(_Authenc):
    """HMAC-SHA-512 over AES-CBC (HMAC-SHA-512-256 in ESP, RFC 4868 §2: 32 bytes)."""

    __slots__ = ()
    name = "authenc(hmac(sha512),cbc(aes))"
    digest, full_icv = "SHA512", 64


ALGORITHMS = tuple(
    record(
        core.name,
        f"authenc-hmac-{core.digest.lower()}-cbc-aes-libcrypto",
        core,
        provider="libcrypto",
        priority=PRIORITY_OPENSSL,
    )
    for core in (AuthencSha1, AuthencSha256, AuthencSha384, AuthencSha512)
)
