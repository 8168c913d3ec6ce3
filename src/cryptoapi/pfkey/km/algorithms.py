"""The IPsec algorithms by SADB number: cryptoapi name, key sizes, IV and ICV lengths.

Key sizes are those the algorithm's ESP/AH RFC allows, in bits, including the salt or nonce
that the RFC 4106/4309/4543/3686/7634 forms carry at the end of the key (as Linux's
``rfc4106(gcm(aes))`` etc. take it in ``setkey``). IV lengths are the bytes ESP sends per
packet. The NULL algorithms (RFC 2410) are no transform at all: always available, no key,
never probed.

=========  ======================================  ===========  ====  ====  =========
SADB       cryptoapi name                          key bits     IV    ICV   RFC
=========  ======================================  ===========  ====  ====  =========
auth 2     hmac(md5)                               128          -     12    2403
auth 3     hmac(sha1)                              160          -     12    2404
auth 5     hmac(sha256)                            256          -     16    4868
auth 6     hmac(sha384)                            384          -     24    4868
auth 7     hmac(sha512)                            512          -     32    4868
auth 8     hmac(rmd160)                            160          -     12    2857
auth 9     xcbc(aes)                               128          -     12    3566
auth 251   (null)                                  0            -     0     2410
enc 3      cbc(des3_ede)                           192          8     -     2451
enc 6      cbc(cast5)                              40-128       8     -     2451
enc 7      cbc(blowfish)                           40-448       8     -     2451
enc 11     (null)                                  0            0     -     2410
enc 12     cbc(aes)                                128/192/256  16    -     3602
enc 22     cbc(camellia)                           128/192/256  16    -     4312
enc 13     rfc3686(ctr(aes))                       +32 nonce    8     -     3686
enc 14-16  rfc4309(ccm(aes))                       +24 salt     8     8-16  4309
enc 18-20  rfc4106(gcm(aes))                       +32 salt     8     8-16  4106
enc 23     rfc4543(gcm(aes))                       +32 salt     8     16    4543
enc 28     rfc7539esp(chacha20,poly1305)           256+32 salt  8     16    7634
=========  ======================================  ===========  ====  ====  =========

Linux's PF_KEY reports ``sadb_alg_ivlen`` 8 for AES-CBC and Camellia-CBC; the table gives
the 16 bytes (one block) RFC 3602 and RFC 4312 send. CAST-128 and Blowfish keys go from 40
bits in 8-bit steps, as Linux's ``xfrm_algo.c`` lists them (RFC 2451 §2.2). Twofish
(number 253) is not offered: no well-kept Python library implements it.

Number 28 for ChaCha20-Poly1305 is the IANA ESP transform ID (Linux defines
no SADB number for it).
"""

from dataclasses import dataclass
from enum import StrEnum

from cryptoapi import AlgType
from cryptoapi.pfkey.wire.constants import AuthAlg, EncryptAlg


class Kind(StrEnum):
    """Which ``sadb_sa`` field an algorithm number belongs to."""

    AUTH = "auth"
    ENCRYPT = "encrypt"


@dataclass(frozen=True, slots=True)
class AlgSpec:
    """One SADB algorithm number: what it means and what its RFC allows."""

    kind: Kind
    id: int
    name: str  # the cryptoapi name; "" for the NULL algorithms (nothing to probe)
    type: AlgType | None
    key_bits: tuple[int, ...]  # allowed key lengths in bits, ascending
    ivlen: int = 0  # bytes of IV per packet
    icv: int = 0  # bytes of integrity check value (truncated MAC or AEAD tag)
    aead: bool = False
    rfc: int = 0

    @property
    def is_null(self) -> bool:
        return not self.name

    @property
    def integrity(self) -> bool:
        """Whether the algorithm authenticates what it carries: a MAC or a combined mode
        (an ICV on the wire). A cipher alone or NULL does not (RFC 4303 §3.2)."""
        return self.icv > 0


_AES = (128, 192, 256)


def _plus(extra: int) -> tuple[int, ...]:
    return tuple(bits + extra for bits in _AES)


def _auth(alg: AuthAlg, name: str, bits: int, icv: int, rfc: int) -> AlgSpec:
    return AlgSpec(Kind.AUTH, alg, name, AlgType.SHASH, (bits,), 0, icv, False, rfc)


def _cipher(alg: EncryptAlg, name: str, bits: tuple[int, ...], iv: int, rfc: int) -> AlgSpec:
    return AlgSpec(Kind.ENCRYPT, alg, name, AlgType.SKCIPHER, bits, iv, 0, False, rfc)


def _aead(alg: EncryptAlg, name: str, bits: tuple[int, ...], icv: int, rfc: int) -> AlgSpec:
    return AlgSpec(Kind.ENCRYPT, alg, name, AlgType.AEAD, bits, 8, icv, True, rfc)


AUTH: dict[int, AlgSpec] = {
    spec.id: spec
    for spec in (
        _auth(AuthAlg.MD5HMAC, "hmac(md5)", 128, 12, 2403),
        _auth(AuthAlg.SHA1HMAC, "hmac(sha1)", 160, 12, 2404),
        _auth(AuthAlg.X_SHA2_256HMAC, "hmac(sha256)", 256, 16, 4868),
        _auth(AuthAlg.X_SHA2_384HMAC, "hmac(sha384)", 384, 24, 4868),
        _auth(AuthAlg.X_SHA2_512HMAC, "hmac(sha512)", 512, 32, 4868),
        _auth(AuthAlg.X_RIPEMD160HMAC, "hmac(rmd160)", 160, 12, 2857),
        _auth(AuthAlg.X_AES_XCBC_MAC, "xcbc(aes)", 128, 12, 3566),
        AlgSpec(Kind.AUTH, AuthAlg.X_NULL, "", None, (0,), rfc=2410),
    )
}
"""Authentication algorithms by ``sadb_sa_auth``."""

ENCRYPT: dict[int, AlgSpec] = {
    spec.id: spec
    for spec in (
        AlgSpec(Kind.ENCRYPT, EncryptAlg.NULL, "", None, (0,), rfc=2410),
        _cipher(EncryptAlg.THREEDESCBC, "cbc(des3_ede)", (192,), 8, 2451),
        _cipher(EncryptAlg.X_CASTCBC, "cbc(cast5)", tuple(range(40, 129, 8)), 8, 2451),
        _cipher(EncryptAlg.X_BLOWFISHCBC, "cbc(blowfish)", tuple(range(40, 449, 8)), 8, 2451),
        _cipher(EncryptAlg.X_AESCBC, "cbc(aes)", _AES, 16, 3602),
        _cipher(EncryptAlg.X_CAMELLIACBC, "cbc(camellia)", _AES, 16, 4312),
        _cipher(EncryptAlg.X_AESCTR, "rfc3686(ctr(aes))", _plus(32), 8, 3686),
        _aead(EncryptAlg.X_AES_CCM_ICV8, "rfc4309(ccm(aes))", _plus(24), 8, 4309),
        _aead(EncryptAlg.X_AES_CCM_ICV12, "rfc4309(ccm(aes))", _plus(24), 12, 4309),
        _aead(EncryptAlg.X_AES_CCM_ICV16, "rfc4309(ccm(aes))", _plus(24), 16, 4309),
        _aead(EncryptAlg.X_AES_GCM_ICV8, "rfc4106(gcm(aes))", _plus(32), 8, 4106),
        _aead(EncryptAlg.X_AES_GCM_ICV12, "rfc4106(gcm(aes))", _plus(32), 12, 4106),
        _aead(EncryptAlg.X_AES_GCM_ICV16, "rfc4106(gcm(aes))", _plus(32), 16, 4106),
        _aead(EncryptAlg.X_NULL_AES_GMAC, "rfc4543(gcm(aes))", _plus(32), 16, 4543),
        _aead(EncryptAlg.X_CHACHA20_POLY1305, "rfc7539esp(chacha20,poly1305)", (288,), 16, 7634),
    )
}
"""Encryption (and combined-mode) algorithms by ``sadb_sa_encrypt``."""

TABLE: dict[Kind, dict[int, AlgSpec]] = {Kind.AUTH: AUTH, Kind.ENCRYPT: ENCRYPT}
