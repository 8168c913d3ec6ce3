"""The key manager: PF_KEY v2 messages in, replies and notifications out (RFC 2367 §3).

A sans-I/O core, as h11's ``Connection`` is for HTTP: it decides who gets each message and
a transport moves the bytes. It knows its clients by an opaque id (:meth:`KeyManager.connect`,
:meth:`~KeyManager.disconnect`) and keeps what each REGISTERed for and whether it is
promiscuous (:mod:`~cryptoapi.pfkey.km.clients`). :meth:`~KeyManager.process` takes one message
from a client and returns typed results (:mod:`~cryptoapi.pfkey.km.routing`): a ``Reply`` for
the sender, a ``Notice`` for the clients it names (the registered, the promiscuous), a
``DumpReply`` whose messages are built as they are taken. It never raises on bad input: a
refused message gets a header-only reply carrying ``sadb_msg_errno`` (§1.4) and leaves the
database exactly as it was.

:meth:`~KeyManager.handle` is the same for the in-process client
(:data:`~cryptoapi.pfkey.km.clients.ANONYMOUS`): one message in, the messages that reach it out,
the replies first (with the sender's ``sadb_msg_seq`` and ``pid``; DUMP gives one per SA),
then notifications for it (EXPIREs that came due, if it registered for their type).
:class:`~cryptoapi.pfkey.km.local.LocalClient` gives the same as a typed answer: the replies
and the notifications apart, and why a request was refused in words.
``registered`` is what it registered for; an in-process data path may add to it directly.

A key manager is not thread-safe: one call at a time (a daemon serializes them).

Time comes from ``clock`` (seconds, ``time.time`` by default), so tests can drive lifetimes
and the expiry of pending ACQUIREs; due timers run at each message,
:meth:`~KeyManager.run_timers` and :meth:`~KeyManager.tick`. Usage (bytes and allocations)
is reported with :meth:`~KeyManager.account`, since there is no packet path. ``tick``,
``account``, ``acquire``, ``expire`` and ``soft_expire`` return the EXPIREs and ACQUIREs as
bytes, for an in-process caller to deliver; they are made only when some client listens.

A daemon calls :meth:`~KeyManager.process` with ``lazily=True``: then the replies to a DUMP
or SPDDUMP come as a :class:`~cryptoapi.pfkey.km.routing.DumpReply` that builds each when it
is taken, so a reader that does not read costs a bounded queue, not the whole database
(:meth:`~KeyManager.handle_lazily` is the same for the in-process client).
"""

import random
import time
from collections.abc import Callable

import cryptoapi
from cryptoapi import Registry
from cryptoapi.pfkey.db.acquires import Acquires
from cryptoapi.pfkey.db.expiry import HARD, LARVAL, SOFT, Timers, over
from cryptoapi.pfkey.db.sad import AddressLike, SADatabase, SecurityAssociation, sa_key
from cryptoapi.pfkey.db.spd import SecurityPolicy, SPDatabase
from cryptoapi.pfkey.errors import PfkeyError
from cryptoapi.pfkey.km import handlers, listeners, promisc, replies, routing, spd_handlers
from cryptoapi.pfkey.km.clients import ANONYMOUS, Clients
from cryptoapi.pfkey.km.probe import AlgorithmProbe
from cryptoapi.pfkey.wire.constants import (
    AF_INET,
    E_NOT_FOUND,
    ExtType,
    IpsecDir,
    MsgType,
    PolicyType,
    SaState,
)
from cryptoapi.pfkey.wire.extensions import Address, Lifetime
from cryptoapi.pfkey.wire.framing import Extension
from cryptoapi.pfkey.wire.message import Buffer, Message, Scan, scan_request
from cryptoapi.pfkey.wire.policy import Policy
from cryptoapi.pfkey.wire.sockaddr import SockAddr

Handler = Callable[["KeyManager", Scan, float], list[bytes]]
DumpHandler = Callable[["KeyManager", Scan], replies.Dump]


DUMPS: dict[int, DumpHandler] = {
    MsgType.DUMP: handlers.dump_lazily,
    MsgType.X_SPDDUMP: spd_handlers.spddump_lazily,
}
"""The messages whose replies :meth:`KeyManager.handle_lazily` builds as they are taken
(``handlers.dump`` and ``spd_handlers.spddump`` build the same messages at once)."""

HANDLERS: dict[int, Handler] = {
    MsgType.GETSPI: handlers.getspi,
    MsgType.UPDATE: handlers.update,
    MsgType.ADD: handlers.add,
    MsgType.DELETE: handlers.delete,
    MsgType.GET: handlers.get,
    MsgType.ACQUIRE: listeners.acquire,
    MsgType.REGISTER: listeners.register,
    MsgType.FLUSH: handlers.flush,
    MsgType.DUMP: handlers.dump,
    MsgType.X_PROMISC: promisc.promisc,
    MsgType.EXPIRE: handlers.reported_expire,
    MsgType.X_USAGE: handlers.reported_usage,
    **spd_handlers.HANDLERS,
}

LARVAL_TIMEOUT = 30.0
"""Seconds a LARVAL SA from GETSPI waits for its UPDATE (Linux ``XFRM_ACQ_EXPIRES``)."""


class KeyManager:
    """A PF_KEY v2 key manager over one SA database, its algorithms from ``registry``
    (``cryptoapi.default_registry()`` when None), each probed at most once.

    ``allow_unauthenticated=True`` admits encryption-only ESP SAs (a cipher without an
    authentication algorithm), which RFC 8221 forbids and which are refused (EINVAL)
    otherwise. It is unsafe: such an SA has no integrity check, so a changed packet
    decrypts to changed plaintext and is delivered. Only for interoperability tests."""

    def __init__(
        self,
        registry: Registry | None = None,
        *,
        clock: Callable[[], float] = time.time,
        rng: random.Random | None = None,
        reprobe: bool = False,
        larval_timeout: float = LARVAL_TIMEOUT,
        allow_unauthenticated: bool = False,
    ) -> None:
        self.registry = cryptoapi.default_registry() if registry is None else registry
        self.probe = AlgorithmProbe(self.registry, reprobe=reprobe)
        self.sad = SADatabase()
        self.spd = SPDatabase()
        """The security policies (SPDADD ... SPDDUMP): kept and dumped, no packet path."""
        self.timers = Timers()
        self.clock = clock
        self.rng: random.Random = random.SystemRandom() if rng is None else rng
        self.larval_timeout = larval_timeout
        self.allow_unauthenticated = allow_unauthenticated
        """Whether encryption-only ESP SAs are admitted (unsafe; see the class docstring)."""
        self.keeps_policy_ids = False
        """Whether SPDADD/SPDUPDATE keep the policy ids they carry: set by a copy of another
        key manager's SPD (espd's :class:`~cryptoapi.esp.espd.mirror.Mirror`)."""
        self.clients = Clients()
        """Who is connected: what each registered for, which are promiscuous."""
        self.sender = ANONYMOUS
        """The client whose message is being handled (for REGISTER and PROMISC)."""
        self.acquires = Acquires()
        """Pending SA requests by sadb_msg_seq: expire after 30 s, at most 1024."""
        self._acquire_seq = 0
        self._messages = 0
        self._errors = 0
        self._expired = [0, 0]
        self.on_dying: Callable[[SecurityAssociation], None] | None = None
        """Called with each SA a soft limit makes DYING (a state store writes it then)."""
        self.on_checkpoint: Callable[[SecurityAssociation], None] | None = None
        """Called with each SA whose reported sequence number rose (written then too)."""

    @property
    def registered(self) -> set[int]:
        """The SA types the in-process client listens for (ACQUIRE and EXPIRE)."""
        return self.clients.registered[ANONYMOUS]

    def connect(self) -> int:
        """A new client's id, for :meth:`process` (a daemon: one per connection)."""
        return self.clients.connect()

    def disconnect(self, client: int) -> None:
        """Forget ``client``, its registrations and promiscuous mode."""
        self.clients.disconnect(client)

    def process(self, client: int, message: Buffer, *, lazily: bool = False) -> list[routing.Event]:
        """Where the messages one message from ``client`` causes go (see the module doc):
        a copy of it for the promiscuous clients (Linux ``pfkey_process``), its replies and
        notifications, then the EXPIREs that came due. With ``lazily``, the replies to a
        DUMP or SPDDUMP come as one DumpReply (Linux ``pfkey_do_dump``)."""
        data = message if isinstance(message, bytes) else bytes(message)
        self._messages += 1
        now = self.clock()
        due = self._run_timers(now) if self.timers.heap else None
        clients = self.clients
        events: list[routing.Event] = []
        self.sender = client
        copied = False
        try:
            found = scan_request(data)
            if promiscuous := clients.promiscuous:
                events.append(routing.Notice(found.data, promiscuous))
                copied = True
            lazy = DUMPS.get(found.type) if lazily else None
            if lazy is not None:
                events.append(routing.DumpReply(lazy(self, found), promiscuous))
            else:
                out = HANDLERS.get(found.type, handlers.unsupported)(self, found, now)
                routing.answers(clients, client, out, clients.promiscuous, events)
        except PfkeyError as error:
            self._errors += 1
            error_reply = replies.error(data, error.errno)
            routing.refusal(clients, error_reply, str(error), copied, events)
        finally:
            self.sender = ANONYMOUS
        if due:
            events += routing.notices(clients, due)
        return events

    def handle(self, message: Buffer) -> list[bytes]:
        """The messages one message from the in-process client brings it: the replies
        first (see the module doc)."""
        return routing.deliveries(ANONYMOUS, self.process(ANONYMOUS, message))

    def handle_lazily(self, message: Buffer) -> tuple[list[bytes], replies.Dump | None]:
        """As :meth:`handle`, but the replies to a DUMP or SPDDUMP come as a Dump, built as
        the caller takes them; the list then holds what else is due (EXPIREs), or the error
        reply that ends the dump."""
        events = self.process(ANONYMOUS, message, lazily=True)
        dump = next((e.dump for e in events if type(e) is routing.DumpReply), None)
        return routing.deliveries(ANONYMOUS, events), dump

    def tick(self) -> list[bytes]:
        """Run the lifetime timers that are due; the EXPIREs for registered listeners."""
        return self._run_timers(self.clock())

    def run_timers(self) -> list[routing.Notice]:
        """As :meth:`tick`, for a transport: where those EXPIREs go."""
        return routing.notices(self.clients, self.tick())

    def account(
        self, satype: int, dst: AddressLike, spi: int, *, nbytes: int = 0, allocations: int = 0
    ) -> list[bytes]:
        """Record use of an SA (bytes, allocations); the EXPIREs its limits cause.

        Raises PfkeyError(ESRCH) if there is no such SA.
        """
        sa = self.sad.by_key.get(sa_key(satype, dst, spi))
        if sa is None or sa.state == SaState.LARVAL:
            raise PfkeyError(E_NOT_FOUND, f"no usable SA of type {satype} with SPI {spi:#x}")
        now = self.clock()
        if not sa.used:
            sa.used = now
            self.timers.first_use(sa)
        sa.nbytes += nbytes
        sa.allocations += allocations
        out = []
        if not sa.soft_expired and over(sa.soft, sa):
            out += self._fire(SOFT, sa)
        if over(sa.hard, sa):
            out += self._fire(HARD, sa)
        return out + self._run_timers(now)

    def acquire(
        self,
        satype: int,
        src: AddressLike,
        dst: AddressLike,
        policy: SecurityPolicy | None = None,
    ) -> list[bytes]:
        """Ask the registered key managers for an SA from ``src`` to ``dst`` (what the
        kernel does when outbound traffic needs one, §3.1.6); [] if none listens.

        As Linux's ``pfkey_send_acquire``: ``sadb_msg_seq`` from the acquire sequence, the
        addresses, then the triggering outbound ``policy`` (type IPSEC, direction out, its
        id and priority: the key manager looks the id up in its SPD, as racoon's
        ``pk_recvacquire`` and strongSwan's ``process_acquire`` do), then the proposal.

        Raises PfkeyError(EAGAIN) when ``ACQUIRE_MAX`` requests are pending, as Linux's
        ``xfrm_state_find`` answers a packet whose ACQUIRE is in progress.
        """
        if not self.clients.listening(satype):
            return []
        seq = self._acquire_seq + 1
        source = _address(ExtType.ADDRESS_SRC, src)
        destination = _address(ExtType.ADDRESS_DST, dst)
        self.acquires.add(seq, satype, source.encode(), destination.encode(), self.clock())
        self._acquire_seq = seq
        exts: list[Extension] = [source, destination]
        if policy is not None:
            exts.append(Policy(PolicyType.IPSEC, IpsecDir.OUTBOUND, policy.index, policy.priority))
        exts.append(listeners.proposal(self, satype))
        return [Message(MsgType.ACQUIRE, satype, seq, 0, 0, tuple(exts)).encode()]

    def stats(self) -> dict[str, int]:
        """Counters: probes, SAs, messages handled, errors returned, expirations."""
        larval = sum(1 for sa in self.sad.by_key.values() if sa.state == SaState.LARVAL)
        self.acquires.expire(self.clock())
        return {
            "alg_probes": self.probe.probes,
            "sas": len(self.sad),
            "policies": len(self.spd),
            "larval": larval,
            "messages": self._messages,
            "errors": self._errors,
            "expired_soft": self._expired[SOFT],
            "expired_hard": self._expired[HARD],
            "registered": len(set().union(*self.clients.registered.values())),
            "acquires": len(self.acquires),
            "acquires_refused": self.acquires.refused,
        }

    # -- the database and its timers, for the handlers ---------------------------------

    def remove(self, sa: SecurityAssociation) -> None:
        """Delete ``sa``; its timers become stale."""
        self.sad.remove(sa)
        sa.epoch += 1

    def larval(self, sa: SecurityAssociation) -> None:
        """Start the timeout of a LARVAL SA."""
        self.timers.at(sa.added + self.larval_timeout, LARVAL, sa)

    def _run_timers(self, now: float) -> list[bytes]:
        out: list[bytes] = []
        for kind, sa in self.timers.due(now):
            if self.sad.by_key.get(sa.key) is sa:
                out += self._fire(kind, sa)
        return out

    def _fire(self, kind: int, sa: SecurityAssociation) -> list[bytes]:
        """Reach the soft (DYING, EXPIRE) or hard (deleted, EXPIRE) limit of ``sa``."""
        if kind == LARVAL:
            if sa.state == SaState.LARVAL:
                self.remove(sa)
            return []
        if kind == SOFT:
            if sa.soft_expired or sa.soft is None:
                return []
            sa.soft_expired = True
            sa.state = SaState.DYING
            self.sad.generation += 1  # a DYING SA is chosen after MATURE ones now
            if self.on_dying is not None:
                self.on_dying(sa)
            lifetime = sa.soft
        else:
            assert sa.hard is not None
            return self.expire(sa, sa.hard)
        self._expired[kind] += 1
        if not self.clients.hears(sa.satype):
            return []
        return [replies.expire(sa, lifetime)]

    def soft_expire(self, sa: SecurityAssociation) -> list[bytes]:
        """Make ``sa`` DYING now, as at its soft limit (a data path elsewhere reached it):
        the EXPIRE for the registered listeners, once."""
        return self._fire(SOFT, sa)

    def expire(self, sa: SecurityAssociation, reached: Lifetime) -> list[bytes]:
        """End ``sa`` now, as its hard lifetime ``reached`` (or the data path's sequence
        numbers running out, RFC 4303 §3.3.3, with its usage as the limit): deleted, DEAD,
        and an EXPIRE for the registered listeners. Nothing if ``sa`` is gone already."""
        if self.sad.by_key.get(sa.key) is not sa:
            return []
        self.remove(sa)
        sa.state = SaState.DEAD
        self._expired[HARD] += 1
        if not self.clients.hears(sa.satype):
            return []
        return [replies.expire(sa, reached)]


def _address(exttype: int, where: AddressLike) -> Address:
    addr = where if isinstance(where, SockAddr) else SockAddr.of(where)
    return Address(exttype, addr, 0, 32 if addr.family == AF_INET else 128)
