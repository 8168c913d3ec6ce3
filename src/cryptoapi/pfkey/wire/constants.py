"""PF_KEY v2 numbers: message and SA types, states, extensions, algorithms, errnos.

The values are those of RFC 2367 §2.3 and Linux's ``include/uapi/linux/pfkeyv2.h`` and
``ipsec.h`` (the KAME extensions ``SADB_X_*``). Every enum is an :class:`~enum.IntEnum`, so a
member is the int that goes on the wire; decoded messages keep plain ints.

Three numbers here are not Linux's. ChaCha20-Poly1305 for ESP (RFC 7634) has no SADB value
in Linux, so :attr:`EncryptAlg.X_CHACHA20_POLY1305` uses 28, its IANA ESP transform ID
(the source of every other ESP number above 11), which no Linux ``SADB_*_EALG`` uses.
Linux's PF_KEY has no extended sequence numbers and no replay window above 255 (the width
of ``sadb_sa_replay``); both come as FreeBSD has them: the SA flag :attr:`SaFlags.ESN`
(FreeBSD's value) and the extension :attr:`ExtType.SA_REPLAY` (FreeBSD's layout, another
number: see there).
"""

import errno
from enum import IntEnum

PF_KEY_V2 = 2
"""``sadb_msg_version`` (RFC 2367 §2.2)."""

PFKEYV2_REVISION = 199806


class MsgType(IntEnum):
    """``sadb_msg_type`` (RFC 2367 §2.3; ``SADB_X_*`` from KAME/Linux)."""

    RESERVED = 0
    GETSPI = 1
    UPDATE = 2
    ADD = 3
    DELETE = 4
    GET = 5
    ACQUIRE = 6
    REGISTER = 7
    EXPIRE = 8
    FLUSH = 9
    DUMP = 10
    X_PROMISC = 11
    X_PCHANGE = 12
    X_SPDUPDATE = 13
    X_SPDADD = 14
    X_SPDDELETE = 15
    X_SPDGET = 16
    X_SPDACQUIRE = 17
    X_SPDDUMP = 18
    X_SPDFLUSH = 19
    X_SPDSETIDX = 20
    X_SPDEXPIRE = 21
    X_SPDDELETE2 = 22
    X_NAT_T_NEW_MAPPING = 23
    X_MIGRATE = 24
    X_USAGE = 32
    """Not Linux's, nor any BSD's: a data path in another process (``cryptoapi espd``)
    reports an SA's usage to the key manager that keeps it (``cryptoapi keyd``):
    ``<base, SA, lifetime(C), address(SD)[, sa2]>``, the current lifetime as Linux's
    ``pfkey_xfrm_state2msg`` fills it (allocations, bytes, add and first-use time) and
    ``sadb_x_sa2_sequence`` the SA's last sequence number sent or received (as KAME's
    dumps carry it). The reply is the same message with the key manager's usage; see
    ``handlers.reported_usage``. 32 is the first number neither Linux (up to 24,
    ``SADB_X_MIGRATE``), FreeBSD (24) nor OpenBSD (up to 15) uses, as for
    :attr:`ExtType.SA_REPLAY`."""


SADB_MAX = MsgType.X_MIGRATE
"""Linux's last message type; above it only :attr:`MsgType.X_USAGE` is a message."""


class SaType(IntEnum):
    """``sadb_msg_satype`` (RFC 2367 §2.3)."""

    UNSPEC = 0
    AH = 2
    ESP = 3
    RSVP = 5
    OSPFV2 = 6
    RIPV2 = 7
    MIP = 8
    X_IPCOMP = 9


SADB_SATYPE_MAX = SaType.X_IPCOMP


class SaState(IntEnum):
    """``sadb_sa_state`` (RFC 2367 §2.3.1)."""

    LARVAL = 0
    MATURE = 1
    DYING = 2
    DEAD = 3


class SaFlags(IntEnum):
    """``sadb_sa_flags`` bits (RFC 2367 §2.3.1 and Linux)."""

    PFS = 0x1
    ESN = 0x400
    """Extended (64-bit) sequence numbers, RFC 4303 §2.2.1 (and RFC 4302 §2.5.1 for AH).
    Not Linux's (its PF_KEY has no ESN): FreeBSD's ``SADB_X_SAFLAGS_ESN``, which no Linux
    flag uses. Refused without a replay window (Linux ``xfrm_init_replay``)."""
    NOPMTUDISC = 0x20000000
    DECAP_DSCP = 0x40000000
    NOECN = 0x80000000


class ExtType(IntEnum):
    """``sadb_ext_type`` (RFC 2367 §2.3; ``X_*`` from KAME/Linux)."""

    RESERVED = 0
    SA = 1
    LIFETIME_CURRENT = 2
    LIFETIME_HARD = 3
    LIFETIME_SOFT = 4
    ADDRESS_SRC = 5
    ADDRESS_DST = 6
    ADDRESS_PROXY = 7
    KEY_AUTH = 8
    KEY_ENCRYPT = 9
    IDENTITY_SRC = 10
    IDENTITY_DST = 11
    SENSITIVITY = 12
    PROPOSAL = 13
    SUPPORTED_AUTH = 14
    SUPPORTED_ENCRYPT = 15
    SPIRANGE = 16
    X_KMPRIVATE = 17
    X_POLICY = 18
    X_SA2 = 19
    X_NAT_T_TYPE = 20
    X_NAT_T_SPORT = 21
    X_NAT_T_DPORT = 22
    X_NAT_T_OA = 23
    X_SEC_CTX = 24
    X_KMADDRESS = 25
    X_FILTER = 26
    SA_REPLAY = 32
    """``sadb_x_sa_replay``: the replay window in packets, as a u32 (FreeBSD's layout, and
    FreeBSD's meaning: packets). Not Linux's. FreeBSD numbers it 26
    (``SADB_X_EXT_SA_REPLAY``), which is Linux's ``SADB_X_EXT_FILTER``; 32 is the first
    number neither uses (Linux's last is 26; FreeBSD's is 31, ``SADB_X_EXT_IF_HW_OFFL``,
    after ``NEW_ADDRESS_SRC/DST`` 27-28 and the offload lifetimes 29-30), so a message
    means the same to this key manager, to Linux and to FreeBSD tools. Sent only when a
    window exceeds 255 (``sadb_sa_replay`` then says 255), so a Linux client never sees
    it unless it asked for such a window."""


SADB_EXT_MAX = ExtType.X_FILTER
"""Linux's last extension type. Types above it are skipped when decoding (RFC 2367 §2.3:
ignore unknown), but for :attr:`ExtType.SA_REPLAY`, which is decoded."""

SADB_SA_REPLAY_MAX = 255
"""The largest window ``sadb_sa_replay`` (a u8) can state; above it, SA_REPLAY says it."""
REPLAY_WINDOW_MAX = 65536
"""The largest replay window (packets) an SA may have (EINVAL above). The data path keeps
the window as one Python int: moving a full 65536-packet bitmap costs about 2 us a packet
(measured; 0.4 us at 4096, 70 us at 2^20), and it is 8 KiB an SA. That is 16 times what
Linux's netlink allows (``XFRMA_REPLAY_ESN_MAX`` 4096 bytes of bitmap: bmp_len 128 words of
32, a 4096-packet window)."""


class AuthAlg(IntEnum):
    """``sadb_sa_auth`` / ``sadb_alg_id`` for authentication (RFC 2367 §2.3.1, Linux)."""

    NONE = 0
    MD5HMAC = 2
    SHA1HMAC = 3
    X_SHA2_256HMAC = 5
    X_SHA2_384HMAC = 6
    X_SHA2_512HMAC = 7
    X_RIPEMD160HMAC = 8
    X_AES_XCBC_MAC = 9
    X_NULL = 251


SADB_AALG_MAX = 251


class EncryptAlg(IntEnum):
    """``sadb_sa_encrypt`` / ``sadb_alg_id`` for encryption (RFC 2367 §2.3.1, Linux)."""

    NONE = 0
    DESCBC = 2
    THREEDESCBC = 3
    X_CASTCBC = 6
    X_BLOWFISHCBC = 7
    NULL = 11
    X_AESCBC = 12
    X_AESCTR = 13
    X_AES_CCM_ICV8 = 14
    X_AES_CCM_ICV12 = 15
    X_AES_CCM_ICV16 = 16
    X_AES_GCM_ICV8 = 18
    X_AES_GCM_ICV12 = 19
    X_AES_GCM_ICV16 = 20
    X_CAMELLIACBC = 22
    X_NULL_AES_GMAC = 23
    X_CHACHA20_POLY1305 = 28  # not Linux's: IANA ESP transform ID 28 (RFC 7634)
    X_SERPENTCBC = 252
    X_TWOFISHCBC = 253


SADB_EALG_MAX = 253


class IdentType(IntEnum):
    """``sadb_ident_type`` (RFC 2367 §2.3.5)."""

    RESERVED = 0
    PREFIX = 1
    FQDN = 2
    USERFQDN = 3


class IpsecMode(IntEnum):
    """``sadb_x_sa2_mode`` and ``sadb_x_ipsecrequest_mode`` (Linux ``ipsec.h``)."""

    ANY = 0
    TRANSPORT = 1
    TUNNEL = 2
    BEET = 3


class IpsecDir(IntEnum):
    """``sadb_x_policy_dir`` (Linux ``ipsec.h``)."""

    ANY = 0
    INBOUND = 1
    OUTBOUND = 2
    FWD = 3
    MAX = 4
    INVALID = 5


class PolicyType(IntEnum):
    """``sadb_x_policy_type`` (Linux ``ipsec.h``)."""

    DISCARD = 0
    NONE = 1
    IPSEC = 2
    ENTRUST = 3
    BYPASS = 4


class IpsecLevel(IntEnum):
    """``sadb_x_ipsecrequest_level`` (Linux ``ipsec.h``)."""

    DEFAULT = 0
    USE = 1
    REQUIRE = 2
    UNIQUE = 3


IPSEC_PROTO_ANY = 255
IPPROTO_AH = 51
IPPROTO_ESP = 50
IPPROTO_COMP = 108

AF_INET = 2
AF_INET6 = 10
"""Linux's address families (the wire values are Linux's on every host)."""

SPI_MIN_DEFAULT = 0x100
SPI_MAX_DEFAULT = 0x0FFFFFFF
"""GETSPI's range when the message has no SPI range extension (Linux ``pfkey_getspi``)."""

# The errno values a reply carries in sadb_msg_errno, by what went wrong (Linux af_key.c).
E_MALFORMED = errno.EINVAL  # bad version/reserved/type, bad extension, bad field (§2.3)
E_LENGTH = errno.EMSGSIZE  # sadb_msg_len disagrees with the bytes given
E_NOT_FOUND = errno.ESRCH  # UPDATE/DELETE/GET of an SA that is not there (§3.1.2, §3.1.4)
E_EXISTS = errno.EEXIST  # ADD of an SA that is there; GETSPI range exhausted (§3.1.1)
E_NO_ALGORITHM = errno.ENOSYS  # an algorithm number unknown or unavailable (Linux)
E_EMPTY = errno.ENOENT  # DUMP of an empty database (Linux xfrm_state_walk)
E_UNSUPPORTED = errno.EOPNOTSUPP  # a message type this manager does not handle


def name_of(value: int, names: type[IntEnum], unknown: str | None = None) -> str:
    """The name of ``value`` among ``names`` (``ADD``, ``ESP``, ``KEY_AUTH``), or
    ``unknown`` (by default the number as text) for a value they do not define."""
    try:
        return names(value).name
    except ValueError:
        return str(value) if unknown is None else unknown
