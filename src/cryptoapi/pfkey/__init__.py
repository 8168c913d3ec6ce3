"""PF_KEY v2 (RFC 2367 with the Linux/KAME extensions): wire codec, SA database, key manager.

The codec reads and writes messages byte for byte as Linux x86-64 does::

    from cryptoapi.pfkey import Message, MsgType, SaType, decode
    data = Message(MsgType.REGISTER, SaType.ESP, seq=1, pid=4242).encode()
    assert decode(data).type == MsgType.REGISTER

The key manager keeps SAs whose algorithms come from the crypto API's registry::

    km = KeyManager()                      # or KeyManager(cryptoapi.Registry(...))
    replies = km.handle(data)              # bytes in, list of bytes out; never raises
"""

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
