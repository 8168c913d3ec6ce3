"""A local key manager kept a copy of the key daemon's ESP SAs and its policies (sans-I/O).

espd's data path reads SAs and policies from a :class:`KeyManager` in its own process; with
``--socket`` that manager mirrors keyd's. Every change goes to the local manager as a PF_KEY
message, through its in-process client (:class:`~cryptoapi.pfkey.km.local.LocalClient`: the
replies, and apart from them the EXPIREs that came due meanwhile, which go to ``notify``),
so the mirror never writes the databases itself (the local manager validates, probes the
algorithms and keeps its own timers). One exception: keyd's soft EXPIRE makes the local SA
DYING with :meth:`KeyManager.soft_expire`, since an EXPIRE sent to the local manager is a
data path's report, and the EXPIRE it makes of it would go back to keyd.

How key material arrives. keyd's broadcasts (ADD, UPDATE, ...; see
:mod:`cryptoapi.pfkey.daemon.server`) carry no keys, but keyd answers its owner's GET and DUMP with
the whole SA, keys included (:mod:`cryptoapi.pfkey.km.handlers`). So:

- the initial DUMP is installed as it is (an entry that came without keys, as from a keyd
  that hides them, is fetched again with GET);
- an ADD or UPDATE broadcast asks for a GET of that SA (:meth:`Mirror.notification` returns
  the GET messages to send), whose reply :meth:`Mirror.install` installs.

:meth:`Mirror.install` turns a GET/DUMP reply into an ADD for the local manager (the same
extensions: SA, hard/soft lifetimes, addresses, keys, sa2, NAT-T ...; the current lifetime
and a LARVAL or DEAD SA are left out). An SA that exists locally is UPDATEd (new lifetimes,
same keys; its sequence numbers and replay state stay); one whose keys or source changed
under the same SPI (keyd deleted and re-added it) is DELETEd and ADDed again.

The rest is applied directly: DELETE and a hard EXPIRE delete the local SA, FLUSH flushes;
SPDADD/SPDUPDATE become a local SPDUPDATE that keeps keyd's policy id (the local manager
``keeps_policy_ids``, so ids in ACQUIREs and logs mean the same on both sides),
SPDDELETE/SPDDELETE2 a local SPDDELETE by selector, SPDFLUSH flushes the local SPD. A soft
EXPIRE changes nothing here: the local manager runs the same lifetimes itself.

:meth:`Mirror.sync_sad` and :meth:`Mirror.sync_spd` bring the local copy to a dump of keyd
(on start and after a reconnect) by difference: what keyd has is installed, what it no
longer has is deleted, and SAs that did not change keep their state.
"""

import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import replace

from cryptoapi.pfkey.errors import PfkeyError
from cryptoapi.pfkey.km.explain import message_name, refusal, sa_name
from cryptoapi.pfkey.km.local import Answer, LocalClient
from cryptoapi.pfkey.km.manager import KeyManager
from cryptoapi.pfkey.wire.constants import E_EXISTS, ExtType, MsgType, SaState, SaType
from cryptoapi.pfkey.wire.extensions import Address, Key, Lifetime, Sa
from cryptoapi.pfkey.wire.framing import Extension
from cryptoapi.pfkey.wire.message import Message, decode
from cryptoapi.pfkey.wire.policy import Policy
from cryptoapi.pfkey.wire.x_extensions import Sa2

log = logging.getLogger(__name__)

SaId = tuple[int, bytes, int]
"""(SA type, packed destination address, SPI): how PF_KEY names an SA."""
PolicyId = tuple[int, bytes, bytes, bytes]
"""(direction, source and destination address extensions, security context): a policy's
selector as its messages carry it."""

KEY_TYPES = (ExtType.KEY_AUTH, ExtType.KEY_ENCRYPT)
NOT_COPIED = frozenset((int(ExtType.LIFETIME_CURRENT),))
"""Extensions of a GET/DUMP reply that an ADD does not take."""
SA_CHANGES = frozenset((int(MsgType.ADD), int(MsgType.UPDATE)))
SPD_CHANGES = frozenset((int(MsgType.X_SPDADD), int(MsgType.X_SPDUPDATE)))
SPD_REMOVALS = frozenset((int(MsgType.X_SPDDELETE), int(MsgType.X_SPDDELETE2)))
UNUSABLE = frozenset((int(SaState.LARVAL), int(SaState.DEAD)))


class Mirror:
    """Keeps ``key_manager`` a copy of what the key daemon says (see the module doc)."""

    def __init__(
        self, key_manager: KeyManager, notify: Callable[[list[bytes]], None] | None = None
    ) -> None:
        self.key_manager = key_manager
        key_manager.keeps_policy_ids = True  # keyd's ids here too: an ACQUIRE names keyd's
        self.counters: Counter[str] = Counter()
        self._client = LocalClient(key_manager, numbered=False)
        self._notify = notify  # where the EXPIREs that fall due meanwhile go (the data path's)

    # -- what keyd says ----------------------------------------------------------------

    def notification(self, data: bytes) -> list[Message]:
        """Apply one message keyd broadcast; the GETs whose replies :meth:`install` takes."""
        try:
            message = decode(data)
        except PfkeyError:  # keyd sends valid messages; a bad one is counted, not fatal
            self.counters["bad"] += 1
            return []
        if message.errno:
            return []
        kind = message.type
        if kind in SA_CHANGES:
            return [request] if (request := self._get_for(message)) is not None else []
        if kind == MsgType.DELETE:
            self._delete(message)
        elif kind == MsgType.EXPIRE:
            self.counters["expires"] += 1
            if message.get(ExtType.LIFETIME_HARD, Lifetime) is not None:
                self._delete(message)
            else:  # soft: DYING here too, so that a newer SA is chosen first
                self._soft_expire(message)
        elif kind == MsgType.FLUSH:
            self._local(Message(MsgType.FLUSH, message.satype))
        elif kind in SPD_CHANGES:
            self._local(replace(message, type=MsgType.X_SPDUPDATE), "policies_installed")
        elif kind in SPD_REMOVALS:
            self._local(replace(message, type=MsgType.X_SPDDELETE), "policies_deleted")
        elif kind == MsgType.X_SPDFLUSH:
            self._local(Message(MsgType.X_SPDFLUSH))
        return []

    def _soft_expire(self, message: Message) -> None:
        found = message.get(ExtType.SA, Sa)
        dst = message.get(ExtType.ADDRESS_DST, Address)
        if found is None or dst is None:
            return
        sa = self.key_manager.sad.get(message.satype, dst.addr, found.spi)
        if sa is not None:
            self.key_manager.soft_expire(sa)

    def install(self, data: bytes) -> bool:
        """Install the SA of a GET or DUMP reply (with keys) locally; False if there was
        nothing to install (an error reply, a LARVAL or DEAD SA, no keys) or the local
        manager refused it."""
        try:
            message = decode(data)
        except PfkeyError:
            self.counters["bad"] += 1
            return False
        sa = message.get(ExtType.SA, Sa)
        if message.errno or sa is None or sa.state in UNUSABLE or not has_keys(message):
            return False
        exts = tuple(e for e in message.extensions if e.exttype not in NOT_COPIED)
        if self._unchanged(message, exts):
            self.counters["sas_unchanged"] += 1
            return True
        add = Message(MsgType.ADD, message.satype, 0, 0, 0, exts)
        answer, done = self._local(add), "added"
        if answer.errno == E_EXISTS:
            answer, done = self._local(replace(add, type=MsgType.UPDATE)), "updated"
            if answer.errno:  # same SPI, other keys or source: a new SA
                self._local(lookup(MsgType.DELETE, message))
                answer, done = self._local(add), "replaced"
        if answer.errno:
            log.warning("the local key manager refused %s: %s", sa_name(message),
                        _why(MsgType.ADD, answer))  # fmt: skip
        else:
            self._checkpoint(message)
            log.info("SA %s (from the key daemon): %s", done, sa_name(message))
        self.counters["refused" if answer.errno else "sas_installed"] += 1
        return not answer.errno

    def _checkpoint(self, message: Message) -> None:
        """Give the local SA keyd's checkpoint: ``sadb_x_sa2_sequence``, which its data
        path starts above (an ADD takes no sequence number: Linux ignores the field), or,
        marked received, where an inbound SA's replay window starts, and
        the bytes and packets of the current lifetime, which its counters go on from (so
        that its reports, which keyd takes as totals, and its byte and packet limits count
        what another data path carried before a takeover or a restart). Never lowered
        (:mod:`cryptoapi.pfkey.daemon.checkpoint`)."""
        local = self.key_manager.sad.by_key.get(sa_id(message))
        if local is None:
            return
        sa2 = message.get(ExtType.X_SA2, Sa2)
        if sa2 is not None and sa2.received:
            local.received = max(local.received, sa2.sequence)
        elif sa2 is not None:
            local.sequence = max(local.sequence, sa2.sequence)
        current = message.get(ExtType.LIFETIME_CURRENT, Lifetime)
        if current is not None:
            local.nbytes = max(local.nbytes, current.nbytes)
            local.allocations = max(local.allocations, current.allocations)

    def sync_sad(self, entries: list[bytes]) -> list[Message]:
        """Make the local ESP SAs those of keyd's DUMP ``entries``: install them, delete
        the others; the GETs for entries that came without keys."""
        wanted: set[SaId] = set()
        fetch: list[Message] = []
        for data, message in self._decoded(entries):
            sa = message.get(ExtType.SA, Sa)
            if message.errno or sa is None or sa.state in UNUSABLE:
                continue
            wanted.add(sa_id(message))
            if has_keys(message):
                self.install(data)
            elif (request := self._get_for(message)) is not None:
                fetch.append(request)
        for message in self._dump(MsgType.DUMP, SaType.ESP):
            if sa_id(message) not in wanted:
                self._delete(message)
        return fetch

    def sync_spd(self, entries: list[bytes]) -> None:
        """Make the local SPD that of keyd's SPDDUMP ``entries``, with keyd's policy ids:
        the local policies keyd does not have, or has under another id (a restarted keyd
        numbers anew), go first, so that no id keyd uses is taken when its policies come in."""
        wanted: dict[PolicyId, int] = {}
        policies = []
        for _, message in self._decoded(entries):
            policy = message.get(ExtType.X_POLICY, Policy)
            if message.errno or policy is None:
                continue
            wanted[policy_id(message)] = policy.id
            policies.append(message)
        for message in self._dump(MsgType.X_SPDDUMP, 0):
            local = message.get(ExtType.X_POLICY, Policy)
            if local is None or wanted.get(policy_id(message)) != local.id:
                self._local(replace(message, type=MsgType.X_SPDDELETE), "policies_deleted")
        for message in policies:
            self._local(replace(message, type=MsgType.X_SPDUPDATE), "policies_installed")

    def _unchanged(self, message: Message, exts: tuple[Extension, ...]) -> bool:
        """Whether the local SA is already this one (lifetimes, keys and all but its
        state): then it is left alone, since a replaced SA record starts the data path's
        sequence numbers and replay window again."""
        answer = self._ask(lookup(MsgType.GET, message))
        if not answer.replies or answer.errno:
            return False
        try:
            local = decode(answer.replies[0])
        except PfkeyError:
            return False
        mine = tuple(e for e in local.extensions if e.exttype not in NOT_COPIED)
        return _comparable(mine) == _comparable(exts)

    def _decoded(self, entries: list[bytes]) -> list[tuple[bytes, Message]]:
        """Each entry with its decoded message; one that does not decode is counted."""
        out = []
        for data in entries:
            try:
                out.append((data, decode(data)))
            except PfkeyError:
                self.counters["bad"] += 1
        return out

    # -- the local key manager ---------------------------------------------------------

    def _get_for(self, message: Message) -> Message | None:
        """The GET for the SA ``message`` names (None if it names none)."""
        if message.get(ExtType.SA, Sa) is None:
            return None
        return lookup(MsgType.GET, message)

    def _delete(self, message: Message) -> None:
        if message.get(ExtType.SA, Sa) is None:
            return
        if not self._local(lookup(MsgType.DELETE, message), "sas_deleted").errno:
            log.info("SA deleted (as the key daemon says): %s", sa_name(message))

    def _dump(self, kind: int, satype: int) -> list[Message]:
        replies = self._ask(Message(kind, satype)).replies
        return [m for m in map(decode, replies) if not m.errno]

    def _ask(self, request: Message) -> Answer:
        """The local key manager's answer to ``request`` (the client stamps it, and
        ``sadb_msg_reserved`` of a keyd message, a policy's refcount, goes back to 0); its
        notices (EXPIREs that came due during the call) go to ``notify``, not lost."""
        answer = self._client.request(request)
        if answer.notices and self._notify is not None:
            self._notify(answer.notices)
        return answer

    def _local(self, message: Message, counter: str = "") -> Answer:
        """Send ``message`` to the local key manager; its answer (``errno`` 0: done)."""
        answer = self._ask(message)
        if answer.errno and counter:
            log.info("the local key manager refused %s: %s", message_name(message.type),
                     _why(message.type, answer))  # fmt: skip
        elif counter:
            self.counters[counter] += 1
        return answer


def _why(kind: int, answer: Answer) -> str:
    """A refusal in words: the local key manager's own reason."""
    return refusal(kind, answer.errno, answer.reason)


def _comparable(exts: tuple[Extension, ...]) -> tuple[Extension, ...]:
    """``exts`` with the SA extension's state left out (keyd's DYING is MATURE here)."""
    return tuple(replace(e, state=0) if isinstance(e, Sa) else e for e in exts)


def has_keys(message: Message) -> bool:
    """Whether ``message`` carries key material (an ESP SA always has some: RFC 4303 §3.2
    allows no SA without confidentiality or integrity, and NULL takes no key)."""
    return any(message.get(t, Key) is not None for t in KEY_TYPES)


def lookup(kind: int, message: Message) -> Message:
    """``<base, SA, address(SD)>`` of ``kind`` (GET, DELETE) for the SA of ``message``."""
    sa = message.get(ExtType.SA, Sa)
    src = message.get(ExtType.ADDRESS_SRC, Address)
    dst = message.get(ExtType.ADDRESS_DST, Address)
    exts: tuple[Extension, ...] = tuple(e for e in (src, dst) if e is not None)
    if sa is not None:
        exts = (Sa(sa.spi), *exts)
    return Message(kind, message.satype, 0, 0, 0, exts)


def sa_id(message: Message) -> SaId:
    """(SA type, destination, SPI) of an SA message."""
    sa = message.get(ExtType.SA, Sa)
    dst = message.get(ExtType.ADDRESS_DST, Address)
    return (message.satype, dst.addr.addr if dst else b"", sa.spi if sa else 0)


def policy_id(message: Message) -> PolicyId:
    """The selector of a policy message, as bytes both dumps encode alike."""
    policy = message.get(ExtType.X_POLICY, Policy)
    src = message.get(ExtType.ADDRESS_SRC, Address)
    dst = message.get(ExtType.ADDRESS_DST, Address)
    ctx = next((e for e in message.extensions if e.exttype == ExtType.X_SEC_CTX), None)
    return (
        policy.dir if policy else 0,
        src.encode() if src else b"",
        dst.encode() if dst else b"",
        ctx.encode() if ctx else b"",
    )
