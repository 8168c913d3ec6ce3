"""The names setkey(8) uses: algorithms, security protocols, upper-layer protocols.

Algorithm names map to the SADB numbers of :mod:`cryptoapi.pfkey.km.algorithms` (Linux's). The
first name of each number is the one a dump shows. The AEAD names give their ICV length in
bytes (``aes-gcm-16``: 16-byte ICV, RFC 4106 §8.1; its key includes the 32-bit salt).
setkey knows more algorithms than the crypto API offers for ESP/AH; those are named in
``UNSUPPORTED`` so that a statement using one gets a clear error, not "unknown" (single DES,
whose 56-bit key Linux still takes, and Twofish, which no well-kept Python library has).
"""

import socket

from cryptoapi.pfkey.wire.constants import (
    IPPROTO_AH,
    IPPROTO_COMP,
    IPPROTO_ESP,
    IPSEC_PROTO_ANY,
    AuthAlg,
    EncryptAlg,
    IpsecDir,
    IpsecLevel,
    IpsecMode,
    PolicyType,
)

AUTH_NAMES: dict[str, int] = {
    "hmac-md5": AuthAlg.MD5HMAC,
    "hmac-sha1": AuthAlg.SHA1HMAC,
    "hmac-sha256": AuthAlg.X_SHA2_256HMAC,
    "hmac-sha2-256": AuthAlg.X_SHA2_256HMAC,
    "hmac-sha384": AuthAlg.X_SHA2_384HMAC,
    "hmac-sha2-384": AuthAlg.X_SHA2_384HMAC,
    "hmac-sha512": AuthAlg.X_SHA2_512HMAC,
    "hmac-sha2-512": AuthAlg.X_SHA2_512HMAC,
    "hmac-ripemd160": AuthAlg.X_RIPEMD160HMAC,
    "aes-xcbc-mac": AuthAlg.X_AES_XCBC_MAC,
    "null": AuthAlg.X_NULL,
}
"""``-A`` names -> ``sadb_sa_auth``."""

ENCRYPT_NAMES: dict[str, int] = {
    "null": EncryptAlg.NULL,
    "3des-cbc": EncryptAlg.THREEDESCBC,
    "cast128-cbc": EncryptAlg.X_CASTCBC,
    "blowfish-cbc": EncryptAlg.X_BLOWFISHCBC,
    "aes-cbc": EncryptAlg.X_AESCBC,
    "rijndael-cbc": EncryptAlg.X_AESCBC,
    "aes-ctr": EncryptAlg.X_AESCTR,
    "aes-ccm-16": EncryptAlg.X_AES_CCM_ICV16,
    "aes-ccm-12": EncryptAlg.X_AES_CCM_ICV12,
    "aes-ccm-8": EncryptAlg.X_AES_CCM_ICV8,
    "aes-ccm": EncryptAlg.X_AES_CCM_ICV16,
    "aes-gcm-16": EncryptAlg.X_AES_GCM_ICV16,
    "aes-gcm-12": EncryptAlg.X_AES_GCM_ICV12,
    "aes-gcm-8": EncryptAlg.X_AES_GCM_ICV8,
    "aes-gcm": EncryptAlg.X_AES_GCM_ICV16,
    "null_aes_gmac": EncryptAlg.X_NULL_AES_GMAC,
    "aes-gmac": EncryptAlg.X_NULL_AES_GMAC,
    "chacha20-poly1305": EncryptAlg.X_CHACHA20_POLY1305,
    "camellia-cbc": EncryptAlg.X_CAMELLIACBC,
}
"""``-E`` names -> ``sadb_sa_encrypt``."""

UNSUPPORTED = frozenset(
    {
        "keyed-md5", "keyed-sha1", "tcp-md5",
        "des-cbc", "simple", "des-deriv", "des-32iv", "3des-deriv", "twofish-cbc",
    }
)  # fmt: skip
"""Names setkey knows that name no algorithm the crypto API offers for IPsec."""

COMPRESSION = frozenset({"deflate", "lzs", "oui"})
"""``-C`` names (IPComp, RFC 3173): there is no compression in the crypto API."""


def first_name(table: dict[str, int], number: int) -> str:
    """The name a dump shows for an algorithm number (its first name), or the number."""
    for name, value in table.items():
        if value == number:
            return name
    return str(number)


SA_PROTOCOLS: dict[str, int] = {"esp": 3, "ah": 2, "esp-udp": 3}
"""setkey protocols -> SA types (``esp-udp``: ESP in UDP for NAT traversal, RFC 3948)."""
OLD_PROTOCOLS = frozenset({"esp-old", "ah-old", "ipcomp", "tcp"})
"""setkey protocols that name SAs this key manager does not keep."""
NAT_T_ESPINUDP = 2
NAT_T_PORT = 4500

MODES = {"transport": IpsecMode.TRANSPORT, "tunnel": IpsecMode.TUNNEL, "any": IpsecMode.ANY}
DIRECTIONS = {"in": IpsecDir.INBOUND, "out": IpsecDir.OUTBOUND, "fwd": IpsecDir.FWD}
ACTIONS = {
    "discard": PolicyType.DISCARD,
    "none": PolicyType.NONE,
    "ipsec": PolicyType.IPSEC,
    "entrust": PolicyType.ENTRUST,
    "bypass": PolicyType.BYPASS,
}
REQUEST_PROTOCOLS = {"esp": IPPROTO_ESP, "ah": IPPROTO_AH, "ipcomp": IPPROTO_COMP}
LEVELS = {
    "default": IpsecLevel.DEFAULT,
    "use": IpsecLevel.USE,
    "require": IpsecLevel.REQUIRE,
    "unique": IpsecLevel.UNIQUE,
}
PAD_FLAGS = {"zero-pad": 0x200, "random-pad": 0x100, "seq-pad": 0x000}
"""``-f`` padding options as KAME ``sadb_sa_flags`` bits (``SADB_X_EXT_PZERO`` ...)."""
CYCLIC_SEQ = 0x40
"""``SADB_X_EXT_CYCSEQ``: set unless ``-f nocyclic-seq`` (as setkey sends it)."""

PRIORITY_BASES = {"low": 0xC0000000, "def": 0x80000000, "high": 0x40000000}
"""libipsec's policy priority bases: a smaller value is a higher priority (Linux)."""

UPPER_PROTOCOLS: dict[str, int] = {
    "any": IPSEC_PROTO_ANY,
    "icmp": 1,
    "ip4": 4,
    "ipencap": 4,
    "tcp": 6,
    "udp": 17,
    "ipv6": 41,
    "gre": 47,
    "esp": IPPROTO_ESP,
    "ah": IPPROTO_AH,
    "icmp6": 58,
    "ipv6-icmp": 58,
    "ospf": 89,
    "ipcomp": IPPROTO_COMP,
    "l2tp": 115,
    "sctp": 132,
    "mh": 135,
    "ipv6-mh": 135,
}
"""Upper-layer protocol names (the common ones of /etc/protocols, and setkey's own)."""
ICMP_LIKE = frozenset({1, 58, 135})
"""Protocols whose ``type[,code]`` goes in the selector's ports (setkey ``fix_portstr``)."""
GRE = 47


def upper_protocol(name: str) -> int | None:
    """The protocol number of an upper-layer name or number; None if unknown."""
    if name.isdigit():
        number = int(name)
        return number if number <= 255 else None
    found = UPPER_PROTOCOLS.get(name)
    if found is not None:
        return found
    try:
        return socket.getprotobyname(name)
    except OSError:
        return None
