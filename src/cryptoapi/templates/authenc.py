"""The ``authenc`` template: encrypt-then-MAC as IPsec ESP uses it (RFC 4303 §3.3.2, the
ICV over the ESP header and the encrypted payload), from a keyed hash and an skcipher:
``authenc(hmac(sha256),cbc(aes))``.

    C = ENC(enckey, IV, P)          T = MSB_authsize(MAC(authkey, assoc || IV || C))

``encrypt`` returns C || T; ``decrypt`` checks T in constant time before it deciphers.
``assoc`` is the ESP header, SPI || sequence number; the IV is passed on its own and is
authenticated after it, as it follows the header on the wire. (Extended sequence numbers
put their high bits after the payload, RFC 4303 §2.2.1: that is the kernel's
``authencesn``, not this template.) The skcipher's data rules apply to P and C (CBC:
whole blocks; ESP pads the payload to them, RFC 4303 §2.4).

Key format (ours; the kernel wraps the same fields in an rtattr, which the PF_KEY layer
builds for it there): ``enckeylen`` (4 bytes, big-endian) || authkey || enckey.

Tag lengths: any from 1 byte to the hash's digest size (the kernel's rule), the full digest
by default. IPsec truncates: 12 bytes for HMAC-SHA-1-96 (RFC 2404) and half the digest for
HMAC-SHA-256-128, -384-192 and -512-256 (16, 24, 32 bytes; RFC 4868 §2), set with
``setauthsize``.
"""

import hmac

from cryptoapi.alg import Algorithm, AlgType, Buffer, InnerLookup, Template, instance
from cryptoapi.errors import InvalidArgument, InvalidKey
from cryptoapi.templates._modes import byte_view, require
from cryptoapi.transforms.aead import forged
from cryptoapi.transforms.cores import ShashCore
from cryptoapi.transforms.skcipher import SkcipherCore

LENGTH_FIELD = 4
MAX_AUTHKEY = 1024  # HMAC hashes longer keys first; no IPsec key comes near this


def extract_keys(key: bytes, enc: Algorithm, name: str) -> tuple[bytes, bytes]:
    """(authkey, enckey) of an authenc key, enckeylen (4 bytes) || authkey || enckey, as
    the kernel's ``crypto_authenc_extractkeys``; InvalidKey unless the enckey is a key size
    of the skcipher ``enc`` (a record of its name) and the lengths add up."""
    enckeylen = int.from_bytes(key[:LENGTH_FIELD], "big")
    authkeylen = len(key) - LENGTH_FIELD - enckeylen
    if (
        len(key) < LENGTH_FIELD
        or authkeylen < 0
        or not (enc.min_keysize <= enckeylen <= enc.max_keysize)
    ):
        raise InvalidKey(
            f"{name}: the key must be enckeylen (4 bytes) || authkey || enckey, "
            f"with an enckey of {enc.min_keysize} to {enc.max_keysize} bytes"
        )
    return key[LENGTH_FIELD : LENGTH_FIELD + authkeylen], key[len(key) - enckeylen :]


def check_data(name: str, enc: Algorithm, size: int) -> None:
    """InvalidArgument unless ``size`` bytes of P or C meet the skcipher ``enc``'s data
    rule (see :class:`~cryptoapi.alg.Algorithm`): at least its minimum, or whole blocks.
    (A one-piece driver of an authenc name passes the record of its skcipher's name.)"""
    if enc.min_datasize:
        if size < enc.min_datasize:
            raise InvalidArgument(f"{name}: needs at least {enc.min_datasize} bytes, got {size}")
    elif size % enc.blocksize:
        raise InvalidArgument(
            f"{name}: data must be whole {enc.blocksize}-byte blocks, got {size} bytes"
        )


class Authenc:
    """The encrypt-then-MAC core over a keyed shash core and an skcipher core."""

    __slots__ = ("_auth", "_authsize", "_enc", "_enc_alg", "_name")

    def __init__(self, auth: ShashCore, enc: SkcipherCore, enc_alg: Algorithm, name: str) -> None:
        self._auth = auth
        self._enc = enc
        self._enc_alg = enc_alg
        self._name = name
        self._authsize = 0

    def setkey(self, key: bytes, /) -> None:
        authkey, enckey = extract_keys(key, self._enc_alg, self._name)
        self._enc.setkey(enckey)  # may refuse it: nothing changed yet
        self._auth.setkey(authkey)

    def setauthsize(self, authsize: int, /) -> None:
        self._authsize = authsize

    def _tag(self, iv: bytes, ciphertext: Buffer, assoc: Buffer) -> bytes:
        state = self._auth.init()
        state.update(assoc)
        state.update(iv)
        state.update(ciphertext)
        return state.digest()[: self._authsize]

    def encrypt(self, iv: bytes, plaintext: Buffer, assoc: Buffer, /) -> bytes:
        check_data(self._name, self._enc_alg, len(byte_view(plaintext)))
        ciphertext = self._enc.encrypt(iv, plaintext)
        return ciphertext + self._tag(iv, ciphertext, assoc)

    def decrypt(self, iv: bytes, data: Buffer, assoc: Buffer, /) -> bytes:
        view = byte_view(data)
        ciphertext, tag = view[: len(view) - self._authsize], view[len(view) - self._authsize :]
        check_data(self._name, self._enc_alg, len(ciphertext))
        if not hmac.compare_digest(self._tag(iv, ciphertext, assoc), tag):
            raise forged(self._name)
        return self._enc.decrypt(iv, ciphertext)


def create(lookup: InnerLookup, args: tuple[str, ...]) -> Algorithm:
    """Build ``authenc(A,E)`` from the best (or the named) keyed hash A and skcipher E."""
    if len(args) != 2:
        raise InvalidArgument(f"authenc takes a keyed hash and an skcipher, got {len(args)}")
    auth = lookup(args[0], AlgType.SHASH)
    enc = lookup(args[1], AlgType.SKCIPHER)
    require(auth.keyed, "authenc", auth, "a keyed hash (a MAC)")
    require(enc.ivsize > 0, "authenc", enc, "an skcipher with an IV")
    name = f"authenc({auth.name},{enc.name})"
    return instance(
        "authenc",
        (auth, enc),
        type=AlgType.AEAD,
        create=lambda: Authenc(auth.create(), enc.create(), enc, name),
        blocksize=enc.blocksize,
        ivsize=enc.ivsize,
        min_keysize=LENGTH_FIELD + enc.min_keysize,
        max_keysize=LENGTH_FIELD + MAX_AUTHKEY + enc.max_keysize,
        maxauthsize=auth.digestsize,
        authsizes=tuple(range(1, auth.digestsize + 1)),
    )


TEMPLATE = Template("authenc", create)
