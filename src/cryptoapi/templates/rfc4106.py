"""The ``rfc4106`` template: AES-GCM for IPsec ESP, RFC 4106, over a ``gcm`` AEAD:
``rfc4106(gcm(aes))``.

Key: the AES key followed by a 4-byte salt (§8.1: 20, 28 or 36 bytes of keying material).
IV: the 8 bytes carried in each packet (§3.1). Nonce: salt || IV, 12 bytes (§4). Tags: 8,
12 or 16 bytes (§6).

Associated data, our convention: ``assoc`` is exactly the AAD of §5, SPI || sequence number
(8 bytes) or SPI || 64-bit extended sequence number (12 bytes); the IV is passed on its own
and is *not* part of ``assoc``, and the result is the ciphertext || ICV of the packet. The
kernel's rfc4106 differs in form only: its ESP code passes SPI || seq || IV as assoc (16 or
20 bytes) and the template drops the IV before GCM; the bytes GCM authenticates are the
same. Other lengths are refused with InvalidArgument, as the kernel's
``crypto_ipsec_check_assoclen()`` refuses them: by the aead transform, for every
implementation of the name (``cryptoapi.transforms.aead.ESP_ASSOC_SIZES``).
"""

from cryptoapi.alg import Algorithm, AlgType, Buffer, InnerLookup, Template, instance
from cryptoapi.errors import InvalidKey
from cryptoapi.names import parse
from cryptoapi.templates._modes import inner_of, require
from cryptoapi.transforms.aead import AeadCore

SALT_SIZE = 4
IV_SIZE = 8


class SaltedNonce:
    """An ESP AEAD over an inner AEAD core: the last ``saltsize`` key bytes are a salt, and
    the inner nonce is salt || IV (RFC 4106 §4, RFC 4309 §4)."""

    __slots__ = ("_inner", "_name", "_salt", "_saltsize")

    def __init__(self, inner: AeadCore, saltsize: int, name: str) -> None:
        self._inner = inner
        self._saltsize = saltsize
        self._name = name
        self._salt = b""

    def setkey(self, key: bytes, /) -> None:
        if len(key) <= self._saltsize:
            raise InvalidKey(f"{self._name}: the key must be longer than its salt")
        self._inner.setkey(key[: -self._saltsize])
        self._salt = key[-self._saltsize :]

    def setauthsize(self, authsize: int, /) -> None:
        self._inner.setauthsize(authsize)

    def encrypt(self, iv: bytes, plaintext: Buffer, assoc: Buffer, /) -> bytes:
        return self._inner.encrypt(self._salt + iv, plaintext, assoc)

    def decrypt(self, iv: bytes, data: Buffer, assoc: Buffer, /) -> bytes:
        return self._inner.decrypt(self._salt + iv, data, assoc)


def salted(
    template: str,
    mode: str,
    lookup: InnerLookup,
    args: tuple[str, ...],
    *,
    saltsize: int,
    core: type[SaltedNonce] = SaltedNonce,
    authsizes: tuple[int, ...] = (8, 12, 16),
) -> Algorithm:
    """The record of ``template(mode(...))``: an 8-byte IV, the salt after the inner key."""
    inner = inner_of(template, lookup, args, AlgType.AEAD)
    require(parse(inner.name).word == mode, template, inner, f"a {mode} AEAD")
    low, high = inner.ivsizes or (inner.ivsize, inner.ivsize)
    nonce = saltsize + IV_SIZE
    require(low <= nonce <= high, template, inner, f"{nonce}-byte nonces")
    name = f"{template}({inner.name})"
    return instance(
        template,
        (inner,),
        type=AlgType.AEAD,
        create=lambda: core(inner.create(), saltsize, name),
        ivsize=IV_SIZE,
        min_keysize=inner.min_keysize + saltsize,
        max_keysize=inner.max_keysize + saltsize,
        maxauthsize=max(authsizes),
        authsizes=authsizes,
    )


def create(lookup: InnerLookup, args: tuple[str, ...]) -> Algorithm:
    """Build ``rfc4106(G)`` from the best (or the named) GCM AEAD G."""
    return salted("rfc4106", "gcm", lookup, args, saltsize=SALT_SIZE)


TEMPLATE = Template("rfc4106", create)
