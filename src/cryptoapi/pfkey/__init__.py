"""PF_KEY v2 (RFC 2367 with the Linux/KAME extensions): wire codec, SA database, key manager.

The codec reads and writes messages byte for byte as Linux x86-64 does::

    from cryptoapi.pfkey import Message, MsgType, SaType, decode
    data = Message(MsgType.REGISTER, SaType.ESP, seq=1, pid=4242).encode()
    assert decode(data).type == MsgType.REGISTER

The key manager keeps SAs whose algorithms come from the crypto API's registry::

    km = KeyManager()                      # or KeyManager(cryptoapi.Registry(...))
    replies = km.handle(data)              # bytes in, list of bytes out; never raises

Importing this package, or any module below it, imports none of these names: each is
imported from its module on first use (PEP 562, :mod:`cryptoapi._lazy`), so that ``import
cryptoapi.pfkey.wire`` costs the codec alone, not the key daemon and the registry.
"""

from cryptoapi._lazy import LazyExports

TYPE_CHECKING = False  # as in cryptoapi/__init__.py: mypy sets it true
if TYPE_CHECKING:
    from cryptoapi.pfkey.algorithms import AUTH, ENCRYPT, AlgSpec
    from cryptoapi.pfkey.daemon.client import PfkeyClient
    from cryptoapi.pfkey.daemon.server import KeyDaemon
    from cryptoapi.pfkey.db.sad import SADatabase, SecurityAssociation
    from cryptoapi.pfkey.db.spd import SecurityPolicy
    from cryptoapi.pfkey.errors import PfkeyError
    from cryptoapi.pfkey.manager import KeyManager
    from cryptoapi.pfkey.wire.constants import (
        AuthAlg,
        EncryptAlg,
        ExtType,
        IdentType,
        IpsecDir,
        IpsecLevel,
        IpsecMode,
        MsgType,
        PolicyType,
        SaFlags,
        SaState,
        SaType,
    )
    from cryptoapi.pfkey.wire.extensions import (
        Address,
        Identity,
        Key,
        Lifetime,
        Sa,
        Sensitivity,
        SpiRange,
    )
    from cryptoapi.pfkey.wire.message import Message, decode, encode, scan
    from cryptoapi.pfkey.wire.policy import IpsecRequest, Policy
    from cryptoapi.pfkey.wire.proposal import AlgDesc, Comb, Proposal, Supported
    from cryptoapi.pfkey.wire.sockaddr import SockAddr
    from cryptoapi.pfkey.wire.x_extensions import (
        Filter,
        KmAddress,
        KmPrivate,
        NatTPort,
        NatTType,
        Sa2,
        SaReplay,
        SecCtx,
    )

_EXPORTS = LazyExports(globals(), {
    "cryptoapi.pfkey.algorithms": ("AUTH", "ENCRYPT", "AlgSpec"),
    "cryptoapi.pfkey.daemon.client": ("PfkeyClient",),
    "cryptoapi.pfkey.daemon.server": ("KeyDaemon",),
    "cryptoapi.pfkey.db.sad": ("SADatabase", "SecurityAssociation"),
    "cryptoapi.pfkey.db.spd": ("SecurityPolicy",),
    "cryptoapi.pfkey.errors": ("PfkeyError",),
    "cryptoapi.pfkey.manager": ("KeyManager",),
    "cryptoapi.pfkey.wire.constants": (
        "AuthAlg", "EncryptAlg", "ExtType", "IdentType", "IpsecDir", "IpsecLevel", "IpsecMode",
        "MsgType", "PolicyType", "SaFlags", "SaState", "SaType",
    ),
    "cryptoapi.pfkey.wire.extensions": (
        "Address", "Identity", "Key", "Lifetime", "Sa", "Sensitivity", "SpiRange",
    ),
    "cryptoapi.pfkey.wire.message": ("Message", "decode", "encode", "scan"),
    "cryptoapi.pfkey.wire.policy": ("IpsecRequest", "Policy"),
    "cryptoapi.pfkey.wire.proposal": ("AlgDesc", "Comb", "Proposal", "Supported"),
    "cryptoapi.pfkey.wire.sockaddr": ("SockAddr",),
    "cryptoapi.pfkey.wire.x_extensions": (
        "Filter", "KmAddress", "KmPrivate", "NatTPort", "NatTType", "Sa2", "SaReplay", "SecCtx",
    ),
})  # fmt: skip
"""Where each name lives; each is imported from there on first use (see the module doc)."""

__all__ = [
    "AUTH",
    "ENCRYPT",
    "Address",
    "AlgDesc",
    "AlgSpec",
    "AuthAlg",
    "Comb",
    "EncryptAlg",
    "ExtType",
    "Filter",
    "IdentType",
    "Identity",
    "IpsecDir",
    "IpsecLevel",
    "IpsecMode",
    "IpsecRequest",
    "Key",
    "KeyDaemon",
    "KeyManager",
    "KmAddress",
    "KmPrivate",
    "Lifetime",
    "Message",
    "MsgType",
    "NatTPort",
    "NatTType",
    "PfkeyClient",
    "PfkeyError",
    "Policy",
    "PolicyType",
    "Proposal",
    "SADatabase",
    "Sa",
    "Sa2",
    "SaFlags",
    "SaReplay",
    "SaState",
    "SaType",
    "SecCtx",
    "SecurityAssociation",
    "SecurityPolicy",
    "Sensitivity",
    "SockAddr",
    "SpiRange",
    "Supported",
    "decode",
    "encode",
    "scan",
]


def __getattr__(name: str) -> object:
    return _EXPORTS.load(name)


def __dir__() -> list[str]:
    return _EXPORTS.listing()
