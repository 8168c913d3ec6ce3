"""The ESP transforms of issue 11 (RFC 2451's 3DES, CAST-128 and Blowfish in CBC mode,
RFC 4312's Camellia-CBC, RFC 2857's HMAC-RIPEMD-160-96), as :mod:`tests.esp.sas`
describes transforms: by SADB number, key lengths and ICV size."""

from cryptoapi.pfkey import AuthAlg, EncryptAlg

from .sas import Transform

LEGACY_CIPHERS = {  # name -> (sadb_sa_encrypt, key bytes, block = IV bytes)
    "3des-cbc": (EncryptAlg.THREEDESCBC, 24, 8),
    "cast128-cbc": (EncryptAlg.X_CASTCBC, 16, 8),
    "blowfish-cbc": (EncryptAlg.X_BLOWFISHCBC, 16, 8),
    "camellia-cbc": (EncryptAlg.X_CAMELLIACBC, 32, 16),
}
_MACS = (
    ("hmac-sha1-96", AuthAlg.SHA1HMAC, 20, 12),
    ("hmac-ripemd160-96", AuthAlg.X_RIPEMD160HMAC, 20, 12),
    ("hmac-sha2-256", AuthAlg.X_SHA2_256HMAC, 32, 16),
)

LEGACY_TRANSFORMS: dict[str, Transform] = {
    f"{cipher}+{mac}": Transform(f"{cipher}+{mac}", encrypt, auth, key, auth_key, icv)
    for cipher, (encrypt, key, _) in LEGACY_CIPHERS.items()
    for mac, auth, auth_key, icv in _MACS
}
"""Every legacy cipher with a 96-bit HMAC (old and new hash) and one with HMAC-SHA-256."""
