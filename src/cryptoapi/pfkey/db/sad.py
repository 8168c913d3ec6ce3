"""The security association database (SADB, RFC 2367 §1.2).

An SA is identified by (SA type, destination address, SPI) (RFC 2367 §2.3.1, RFC 4301
§4.1), so the database is one dict on that triple: lookup, insert and delete are O(1), and
iteration is in insertion order, oldest first (DUMP lists them newest first, as Linux).

Records are built with keywords only. Every change goes through :meth:`SADatabase.add`,
:meth:`~SADatabase.replace` or :meth:`~SADatabase.remove`, which note it in the database's
:class:`~cryptoapi.pfkey.db.journal.Journal` once a reader (the daemon's state store) keeps
one, as Linux's ``xfrm_state_add`` and ``km_state_notify`` tell the key managers.

A record keeps what the key manager needs as plain values, and the extensions it only echoes
(addresses, identities, NAT-T, security context) as the validated bytes it received: adding
an SA builds one object, not one per extension. The typed views decode on demand.
"""

from collections.abc import Iterator
from dataclasses import dataclass

from cryptoapi.pfkey.db.journal import Journal
from cryptoapi.pfkey.wire.constants import IpsecMode, SaState
from cryptoapi.pfkey.wire.extensions import Address, Key, Lifetime, address_ip
from cryptoapi.pfkey.wire.framing import EXT_HEADER, Extension
from cryptoapi.pfkey.wire.message import SPECS
from cryptoapi.pfkey.wire.sockaddr import IPAddress, SockAddr, to_packed

SaKey = tuple[int, bytes, int]
"""(satype, packed destination address, SPI)."""

AddressLike = str | IPAddress | bytes | SockAddr
"""An address as text, an :mod:`ipaddress` object, packed bytes or a sockaddr."""

_TRANSPORT = int(IpsecMode.TRANSPORT)


def stored_mode(mode: int) -> int:
    """The mode an SA of ``sadb_x_sa2_mode`` ``mode`` has: any (0) is transport, as Linux's
    ``pfkey_mode_to_xfrm`` maps it (an SA with no ``sa2`` is transport too). Written once
    for the codec that stores an SA and the SA selection that reads one back."""
    return mode or _TRANSPORT


@dataclass(slots=True, eq=False, repr=False, kw_only=True)
class SecurityAssociation:
    """One SA, owned by its database. What names, keys and parameterizes it changes only
    through :meth:`SADatabase.replace`; its running state changes in place, as Linux's
    ``xfrm_state`` counts ``curlft``: the data path and
    :meth:`~cryptoapi.pfkey.km.manager.KeyManager.account` count usage (``used``, ``nbytes``,
    ``allocations``), the lifetimes make it DYING or DEAD (``state``, ``soft_expired``,
    ``epoch``), and an X_USAGE report moves ``sequence`` and the counters."""

    satype: int
    spi: int
    dst: bytes  # packed destination address (4 or 16 bytes)
    state: int
    replay: int
    auth: int
    encrypt: int
    flags: int
    auth_key: bytes
    auth_bits: int
    encrypt_key: bytes
    encrypt_bits: int
    mode: int
    reqid: int
    src_ext: bytes  # the ADDRESS_SRC extension as received (validated)
    dst_ext: bytes  # the ADDRESS_DST extension as received (validated)
    hard: Lifetime | None
    soft: Lifetime | None
    extra: bytes  # other extensions kept as received: proxy, identities, NAT-T, context
    added: float  # when it was added (the clock's seconds)
    seq: int = 0  # sadb_msg_seq of the message that created it
    used: float = 0.0  # first use, 0 if never used
    nbytes: int = 0
    allocations: int = 0
    epoch: int = 0  # bumped when its lifetimes change (stale expiry timers compare it)
    soft_expired: bool = False
    sequence: int = 0  # the last sequence number a data path elsewhere reported sent (X_USAGE)
    received: int = 0  # the highest it reported received: an inbound SA's checkpoint

    @classmethod
    def unfilled(cls) -> "SecurityAssociation":
        """A record with only its counters set (the fields with defaults, as the keyword
        ``__init__`` sets them), for the codec's ADD path (:func:`~cryptoapi.pfkey.km.admit.admit`),
        which sets every other field by name: the keyword ``__init__`` of 21 values costs
        1.2 us, this and 21 slot stores 0.3 us (measured; a whole ADD costs ~9 us). Anything
        else builds records with keywords; tests check that both give equal records."""
        sa = object.__new__(cls)
        sa.seq = 0
        sa.used = 0.0
        sa.nbytes = 0
        sa.allocations = 0
        sa.epoch = 0
        sa.soft_expired = False
        sa.sequence = 0
        sa.received = 0
        return sa

    @property
    def key(self) -> SaKey:
        return (self.satype, self.dst, self.spi)

    @property
    def source(self) -> SockAddr:
        return _address(self.src_ext).addr

    @property
    def destination(self) -> SockAddr:
        return _address(self.dst_ext).addr

    @property
    def keys(self) -> tuple[Key | None, Key | None]:
        """The (authentication, encryption) keys as extensions, where the SA has them."""
        auth = Key(8, self.auth_bits, self.auth_key) if self.auth_bits else None
        encrypt = Key(9, self.encrypt_bits, self.encrypt_key) if self.encrypt_bits else None
        return auth, encrypt

    def extensions(self) -> tuple[Extension, ...]:
        """The kept extensions (proxy, identities, sensitivity, NAT-T, context), decoded."""
        found: list[Extension] = []
        start = 0
        while start < len(self.extra):
            words, exttype = EXT_HEADER.unpack_from(self.extra, start)
            end = start + words * 8
            found.append(SPECS[exttype][2](self.extra, start, end, exttype))
            start = end
        return tuple(found)

    def __repr__(self) -> str:
        state = SaState(self.state).name if self.state in SaState._value2member_map_ else "?"
        return (
            f"SecurityAssociation(satype={self.satype}, spi={self.spi:#010x}, "
            f"src={self.source}, dst={self.destination}, state={state}, "
            f"auth={self.auth}, encrypt={self.encrypt}, keys=<hidden>)"
        )


def _address(raw: bytes) -> Address:
    exttype = EXT_HEADER.unpack_from(raw)[1]
    decoded = SPECS[exttype][2](raw, 0, len(raw), exttype)
    assert isinstance(decoded, Address)
    return decoded


def _pair(sa: SecurityAssociation) -> tuple[int, bytes, bytes]:
    """(satype, packed source, packed destination)."""
    return (sa.satype, address_ip(sa.src_ext), sa.dst)


def _keyed(sa: SecurityAssociation) -> tuple[bytes, bytes]:
    return sa.auth_key, sa.encrypt_key


def sa_key(satype: int, dst: AddressLike, spi: int) -> SaKey:
    """The database key of an SA given its destination in any form."""
    packed = dst.addr if isinstance(dst, SockAddr) else to_packed(dst)
    return (int(satype), packed, int(spi))


class SADatabase:
    """The SAs by (satype, destination, SPI); ``len()``, ``in``, iteration, O(1) lookup.

    Every change goes through :meth:`add`, :meth:`replace` or :meth:`remove`, which count
    it in ``generation``: a reader that derived something from the SAs (the ESP data
    path's SA selection) knows it is stale when the number moved. :meth:`between` finds
    the SAs of a type from one address to another (the data path's outbound question) in
    O(1), from an index kept with the changes.
    """

    def __init__(self) -> None:
        self.by_key: dict[SaKey, SecurityAssociation] = {}
        """Read it; change it only through add, replace and remove."""
        self.generation = 0
        self.journal: Journal[SaKey] | None = None
        """The changes not yet taken by the reader :meth:`track` started (None: no reader)."""
        self._pairs: dict[tuple[int, bytes, bytes], dict[int, SecurityAssociation]] = {}
        self._indexed = False

    def track(self) -> Journal[SaKey]:
        """Note every change from now on, for a reader that stores the SAs."""
        self.journal = Journal()
        return self.journal

    def add(self, sa: SecurityAssociation) -> None:
        """Insert ``sa`` (its key must be free: the caller checked)."""
        key = sa.key
        self.by_key[key] = sa
        self.generation += 1
        if self._indexed:
            self._pairs.setdefault(_pair(sa), {})[sa.spi] = sa
        if self.journal is not None:
            self.journal.note_newest(key, replaced=False)

    def replace(
        self, old: SecurityAssociation, new: SecurityAssociation, *, newest: bool = False
    ) -> None:
        """Put ``new`` (same key) where ``old`` is, or with ``newest`` after every other
        SA: Linux ``xfrm_state_update`` inserts the new state of a larval one anew
        (``__xfrm_state_insert``) and deletes the larval one, and updates a valid state in
        place."""
        key = old.key
        if newest:
            del self.by_key[key]
        self.by_key[key] = new
        self.generation += 1
        if self._indexed:
            self._reindex_replaced(old, new, newest=newest)
        if self.journal is not None:
            rekeyed = _keyed(old) != _keyed(new) and any(_keyed(old))
            if newest:
                self.journal.note_newest(key, replaced=True, dropped=rekeyed)
            else:
                self.journal.note(key, dropped=rekeyed)

    def remove(self, sa: SecurityAssociation) -> None:
        key = sa.key
        del self.by_key[key]
        self.generation += 1
        if self._indexed:
            self._unindex(sa)
        if self.journal is not None:
            self.journal.note(key, dropped=True)

    def between(self, satype: int, src: bytes, dst: bytes) -> list[SecurityAssociation]:
        """The SAs of ``satype`` from packed address ``src`` to ``dst``, oldest first (in
        ``by_key``'s order, which a restart from a store keeps)."""
        if not self._indexed:  # built on first use: a key manager without a data path
            self._reindex()  # pays nothing for it
        found = self._pairs.get((satype, src, dst))
        return list(found.values()) if found else []

    def _reindex(self) -> None:
        self._pairs = {}
        for sa in self.by_key.values():
            self._pairs.setdefault(_pair(sa), {})[sa.spi] = sa
        self._indexed = True

    def _reindex_replaced(
        self, old: SecurityAssociation, new: SecurityAssociation, *, newest: bool
    ) -> None:
        """Keep the pair index in ``by_key``'s order: ``new`` last if it is the newest,
        else where ``old`` was (a pair changed in place is left to :meth:`_reindex`)."""
        pair = _pair(new)
        if newest:
            self._unindex(old)
            self._pairs.setdefault(pair, {})[new.spi] = new
        elif pair == _pair(old):
            self._pairs[pair][new.spi] = new  # an existing key keeps its place
        else:
            self._indexed = False

    def _unindex(self, sa: SecurityAssociation) -> None:
        pair = _pair(sa)
        found = self._pairs.get(pair)
        if found is not None and found.get(sa.spi) is sa:
            del found[sa.spi]
            if not found:
                del self._pairs[pair]

    def __len__(self) -> int:
        return len(self.by_key)

    def __iter__(self) -> Iterator[SecurityAssociation]:
        return iter(list(self.by_key.values()))

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, tuple) or len(key) != 3:
            return False
        return self.get(*key) is not None

    def __getitem__(self, key: tuple[int, AddressLike, int]) -> SecurityAssociation:
        found = self.get(*key)
        if found is None:
            raise KeyError(key)
        return found

    def get(self, satype: int, dst: AddressLike, spi: int) -> SecurityAssociation | None:
        """The SA of ``satype`` to ``dst`` with ``spi``, or None."""
        return self.by_key.get(sa_key(satype, dst, spi))

    def snapshot(self) -> list[tuple[object, ...]]:
        """Every SA's full state as plain values, in order, for comparing databases.

        The tuples hold key material: compare them, never print or log them."""
        fields = SecurityAssociation.__slots__
        return [tuple(getattr(sa, f) for f in fields) for sa in self.by_key.values()]
