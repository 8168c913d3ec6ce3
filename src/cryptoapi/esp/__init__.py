"""The ESP data path (RFC 4303, RFC 3948) over the PF_KEY key manager's SAs and policies.

    from cryptoapi.esp import Datapath, SequenceFloors
    from cryptoapi.pfkey import KeyManager

    key_manager = KeyManager()           # SAs and policies come in as PF_KEY messages
    datapath = Datapath(key_manager, floors=SequenceFloors("esp.seq"))  # nonces never reused
    for packet in datapath.output(plaintext_ip_packet):   # ESP packets to send
        ...
    inner = datapath.input(esp_ip_packet)                  # or None: dropped, counted
    datapath.stats()                                       # /proc/net/xfrm_stat counters

See :mod:`cryptoapi.esp.datapath` for what is checked and counted, and ``cryptoapi espd``
for the userspace endpoint (TUN device + UDP/4500) that drives it.

Importing this package, or a module below it, imports none of these names: each is
imported from its module on first use (PEP 562, :mod:`cryptoapi._lazy`), so that
``cryptoapi.esp.ip`` or a constant of espd's costs that module alone, not the data path and
its ciphers.
"""

from cryptoapi._lazy import LazyExports

TYPE_CHECKING = False  # as in cryptoapi/__init__.py: mypy sets it true
if TYPE_CHECKING:  # "Name as Name": re-exported, for type checkers (they cannot read _EXPORTS)
    from cryptoapi.esp.datapath import Datapath as Datapath
    from cryptoapi.esp.datapath import Outbound as Outbound
    from cryptoapi.esp.seqfloor import SequenceFloors as SequenceFloors
    from cryptoapi.esp.stats import ESP_STAT as ESP_STAT
    from cryptoapi.esp.stats import XFRM_STAT as XFRM_STAT

_EXPORTS = LazyExports(globals(), {
    "cryptoapi.esp.datapath": ("Datapath", "Outbound"),
    "cryptoapi.esp.seqfloor": ("SequenceFloors",),
    "cryptoapi.esp.stats": ("ESP_STAT", "XFRM_STAT"),
})  # fmt: skip
"""Where each name lives, each imported from there on first use (see the module doc): the
one list of the package's names, from which ``__all__`` and ``dir()`` are derived (the imports
under ``TYPE_CHECKING`` mirror it for type checkers; ``tests/imports.py`` compares them)."""

__all__ = list(_EXPORTS.names())


def __getattr__(name: str) -> object:
    return _EXPORTS.load(name)


def __dir__() -> list[str]:
    return _EXPORTS.listing()
