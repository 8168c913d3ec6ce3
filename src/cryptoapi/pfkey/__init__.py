"""PF_KEY v2 (RFC 2367 with the Linux/KAME extensions): wire codec, SA database, key manager.

The codec reads and writes messages byte for byte as Linux x86-64 does::

    from cryptoapi.pfkey import Message, MsgType, SaType, decode
    data = Message(MsgType.REGISTER, SaType.ESP, seq=1, pid=4242).encode()
    assert decode(data).type == MsgType.REGISTER

The key manager keeps SAs whose algorithms come from the crypto API's registry::

    km = KeyManager()                      # or KeyManager(cryptoapi.Registry(...))
    replies = km.handle(data)              # bytes in, list of bytes out; never raises

The layers, lowest first, each importing only from those below it: :mod:`.errors`;
:mod:`.wire`, the format; :mod:`.db`, the SA and policy databases; :mod:`.km`, the key
manager (its message handlers, algorithm probe, clients and routing); then :mod:`.daemon`
and :mod:`.setkey` on top.

Importing this package, or any module below it, imports none of these names: each is
imported from its module on first use (PEP 562, :mod:`cryptoapi._lazy`), so that ``import
cryptoapi.pfkey.wire`` costs the codec alone, not the key daemon and the registry.
"""

from cryptoapi._lazy import LazyExports, keep_moved

TYPE_CHECKING = False  # as in cryptoapi/__init__.py: mypy sets it true
if TYPE_CHECKING:  # "Name as Name": re-exported, for type checkers (they cannot read _EXPORTS)
    from cryptoapi.pfkey.daemon.client import PfkeyClient as PfkeyClient
    from cryptoapi.pfkey.daemon.server import KeyDaemon as KeyDaemon
    from cryptoapi.pfkey.db.sad import SADatabase as SADatabase
    from cryptoapi.pfkey.db.sad import SecurityAssociation as SecurityAssociation
    from cryptoapi.pfkey.db.spd import SecurityPolicy as SecurityPolicy
    from cryptoapi.pfkey.errors import PfkeyError as PfkeyError
    from cryptoapi.pfkey.km.algorithms import AUTH as AUTH
    from cryptoapi.pfkey.km.algorithms import ENCRYPT as ENCRYPT
    from cryptoapi.pfkey.km.algorithms import AlgSpec as AlgSpec
    from cryptoapi.pfkey.km.manager import KeyManager as KeyManager
    from cryptoapi.pfkey.wire.constants import AuthAlg as AuthAlg
    from cryptoapi.pfkey.wire.constants import EncryptAlg as EncryptAlg
    from cryptoapi.pfkey.wire.constants import ExtType as ExtType
    from cryptoapi.pfkey.wire.constants import IdentType as IdentType
    from cryptoapi.pfkey.wire.constants import IpsecDir as IpsecDir
    from cryptoapi.pfkey.wire.constants import IpsecLevel as IpsecLevel
    from cryptoapi.pfkey.wire.constants import IpsecMode as IpsecMode
    from cryptoapi.pfkey.wire.constants import MsgType as MsgType
    from cryptoapi.pfkey.wire.constants import PolicyType as PolicyType
    from cryptoapi.pfkey.wire.constants import SaFlags as SaFlags
    from cryptoapi.pfkey.wire.constants import SaState as SaState
    from cryptoapi.pfkey.wire.constants import SaType as SaType
    from cryptoapi.pfkey.wire.extensions import Address as Address
    from cryptoapi.pfkey.wire.extensions import Identity as Identity
    from cryptoapi.pfkey.wire.extensions import Key as Key
    from cryptoapi.pfkey.wire.extensions import Lifetime as Lifetime
    from cryptoapi.pfkey.wire.extensions import Sa as Sa
    from cryptoapi.pfkey.wire.extensions import Sensitivity as Sensitivity
    from cryptoapi.pfkey.wire.extensions import SpiRange as SpiRange
    from cryptoapi.pfkey.wire.message import Message as Message
    from cryptoapi.pfkey.wire.message import decode as decode
    from cryptoapi.pfkey.wire.message import encode as encode
    from cryptoapi.pfkey.wire.message import scan as scan
    from cryptoapi.pfkey.wire.policy import IpsecRequest as IpsecRequest
    from cryptoapi.pfkey.wire.policy import Policy as Policy
    from cryptoapi.pfkey.wire.proposal import AlgDesc as AlgDesc
    from cryptoapi.pfkey.wire.proposal import Comb as Comb
    from cryptoapi.pfkey.wire.proposal import Proposal as Proposal
    from cryptoapi.pfkey.wire.proposal import Supported as Supported
    from cryptoapi.pfkey.wire.sockaddr import SockAddr as SockAddr
    from cryptoapi.pfkey.wire.x_extensions import Filter as Filter
    from cryptoapi.pfkey.wire.x_extensions import KmAddress as KmAddress
    from cryptoapi.pfkey.wire.x_extensions import KmPrivate as KmPrivate
    from cryptoapi.pfkey.wire.x_extensions import NatTPort as NatTPort
    from cryptoapi.pfkey.wire.x_extensions import NatTType as NatTType
    from cryptoapi.pfkey.wire.x_extensions import Sa2 as Sa2
    from cryptoapi.pfkey.wire.x_extensions import SaReplay as SaReplay
    from cryptoapi.pfkey.wire.x_extensions import SecCtx as SecCtx

_EXPORTS = LazyExports(globals(), {
    "cryptoapi.pfkey.km.algorithms": ("AUTH", "ENCRYPT", "AlgSpec"),
    "cryptoapi.pfkey.daemon.client": ("PfkeyClient",),
    "cryptoapi.pfkey.daemon.server": ("KeyDaemon",),
    "cryptoapi.pfkey.db.sad": ("SADatabase", "SecurityAssociation"),
    "cryptoapi.pfkey.db.spd": ("SecurityPolicy",),
    "cryptoapi.pfkey.errors": ("PfkeyError",),
    "cryptoapi.pfkey.km.manager": ("KeyManager",),
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
"""Where each name lives, each imported from there on first use (see the module doc): the
one list of the package's names, from which ``__all__`` and ``dir()`` are derived (the imports
under ``TYPE_CHECKING`` mirror it for type checkers; ``tests/imports.py`` compares them)."""

__all__ = list(_EXPORTS.names())

MOVED = {
    **{
        f"cryptoapi.pfkey.{name}": f"cryptoapi.pfkey.km.{name}"
        for name in (
            "admit", "algorithms", "clients", "explain", "handlers", "listeners", "local",
            "manager", "probe", "promisc", "replies", "routing", "spd_handlers",
        )
    },
    "cryptoapi.pfkey.core": "cryptoapi.pfkey.km.interface",
}  # fmt: skip
"""The key manager's modules that moved into :mod:`cryptoapi.pfkey.km` (issue 25), by their
old names: each old name still imports the module, the same object as under its new name."""
keep_moved(MOVED)


def __getattr__(name: str) -> object:
    return _EXPORTS.load(name)


def __dir__() -> list[str]:
    return _EXPORTS.listing()
