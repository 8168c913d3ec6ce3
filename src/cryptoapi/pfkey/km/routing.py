"""Who gets each message the key manager makes: typed results a transport only delivers.

The key manager decides, as h11's ``Connection`` does for HTTP; a transport (the key daemon,
or ``KeyManager.handle`` for the in-process client) moves the bytes. A result is one of:

- :class:`Reply`: for the client whose message it answers (never dropped);
- :class:`Notice`: for the clients it names, by id (each copy dropped when that client's
  queue is full, as Linux's ``pfkey_broadcast_one`` drops on a full receive buffer);
- :class:`DumpReply`: the replies to a DUMP or SPDDUMP, built as the sender takes them,
  each also for the promiscuous clients it names.

The rules (Linux ``pfkey_broadcast`` with the modes its handlers use, and keyd's choices):

- EXPIRE and a forwarded ACQUIRE go to the clients registered for their SA type
  (``BROADCAST_REGISTERED``; RFC 2367 §3.1.6 and §3.1.8 name the type's listeners, and
  so does keyd, where Linux takes any registered socket);
- every other message goes to its sender (``BROADCAST_ONE``); a successful ADD, UPDATE,
  DELETE or FLUSH, and every SPD change, also to the other clients registered for its SA
  type (SPD and all-type changes: to all registered clients), and a REGISTER reply or a
  PROMISC echo to all other registered clients. Linux sends the first group to every
  socket (``BROADCAST_ALL``); keyd, only to clients that registered, and without keys;
- every message, and every message a client sends (before it is handled, Linux
  ``pfkey_process``), also goes once to each promiscuous client, as Linux sends it: the
  sender's own ADD with its keys, GET and DUMP replies with theirs. A promiscuous client
  that is also a recipient gets the message twice, as in Linux.
"""

from dataclasses import dataclass, replace

from cryptoapi.pfkey.km.clients import Clients
from cryptoapi.pfkey.km.explain import message_name
from cryptoapi.pfkey.km.replies import Dump
from cryptoapi.pfkey.wire.constants import ExtType, MsgType
from cryptoapi.pfkey.wire.message import decode

# Reply and Notice are not frozen: one is made for every message, and a frozen dataclass
# takes three times as long to create (object.__setattr__ for each field; measured).


@dataclass(slots=True, repr=False)
class Reply:
    """A message for the sender of the request it answers; a refusal's ``reason``, in the
    key manager's words, for an in-process sender (on the wire, a PF_KEY reply carries only
    the errno, RFC 2367 §1.4)."""

    data: bytes
    reason: str = ""

    def __repr__(self) -> str:
        return f"Reply({_shown(self.data)})"


@dataclass(slots=True, repr=False)
class Notice:
    """A message for the clients ``to`` (a client named twice gets it twice)."""

    data: bytes
    to: tuple[int, ...]

    def __repr__(self) -> str:
        return f"Notice({_shown(self.data)}, to={self.to})"


@dataclass(frozen=True, slots=True, repr=False)
class DumpReply:
    """The replies to a DUMP or SPDDUMP, each built when the sender takes it; each is also
    for the promiscuous clients ``copies`` (those of the time of the request)."""

    dump: Dump
    copies: tuple[int, ...]

    def __repr__(self) -> str:
        return f"DumpReply({len(self.dump)} messages, copies={self.copies})"


Event = Reply | Notice | DumpReply

TO_LISTENERS = frozenset((int(MsgType.EXPIRE), int(MsgType.ACQUIRE)))
"""Messages for the registered clients of their SA type, not for a sender."""
TO_TYPE = frozenset(
    int(t)
    for t in (
        MsgType.ADD, MsgType.UPDATE, MsgType.DELETE, MsgType.FLUSH,
        MsgType.X_SPDADD, MsgType.X_SPDUPDATE, MsgType.X_SPDDELETE,
        MsgType.X_SPDDELETE2, MsgType.X_SPDFLUSH,
    )
)  # fmt: skip
"""Replies also for the other clients registered for their SA type (all for 0)."""
TO_REGISTERED = frozenset((int(MsgType.REGISTER), int(MsgType.X_PROMISC)))
"""Replies also for every other registered client (Linux ``pfkey_register`` sends
SUPPORTED with ``BROADCAST_REGISTERED``; ``pfkey_promisc`` echoes to all)."""
KEYS = frozenset((int(ExtType.KEY_AUTH), int(ExtType.KEY_ENCRYPT)))


def without_keys(data: bytes) -> bytes:
    """``data`` with its KEY_AUTH and KEY_ENCRYPT extensions left out (the header as it
    was, errno too)."""
    message = decode(data)
    kept = tuple(e for e in message.extensions if e.exttype not in KEYS)
    if len(kept) == len(message.extensions):
        return data
    return replace(message, extensions=kept).encode()


def answers(
    clients: Clients,
    sender: int,
    outs: list[bytes],
    promiscuous: tuple[int, ...],
    events: list[Event],
) -> None:
    """Add to ``events`` where the messages a handler returned for ``sender`` go (the
    ``promiscuous`` clients get a copy of each)."""
    for data in outs:
        type_ = data[1]  # sadb_msg_type; sadb_msg_satype is data[3] (RFC 2367 §2.1)
        if type_ in TO_LISTENERS:
            _notice(data, clients.listeners(data[3]) + promiscuous, events)
            continue
        events.append(Reply(data))
        if type_ in TO_TYPE:
            to = promiscuous + clients.listeners(data[3], sender)
        elif type_ in TO_REGISTERED:
            to = clients.listeners(0, sender)
            if to and type_ == MsgType.X_PROMISC:  # a body is sent as given: keys too
                _notice(without_keys(data), to, events)
                to = ()
            to = promiscuous + to
        else:
            to = promiscuous
        if to:
            events.append(Notice(data, to))


def refusal(clients: Clients, error: bytes, reason: str, copied: bool, events: list[Event]) -> None:
    """Add the error reply to the sender (Linux ``pfkey_error``: ``BROADCAST_ONE``), with
    its ``reason``, and copies for the promiscuous clients if the request was copied to
    them."""
    events.append(Reply(error, reason))
    if copied:
        _notice(error, clients.promiscuous, events)


def notices(clients: Clients, outs: list[bytes]) -> list[Notice]:
    """Where the EXPIREs and ACQUIREs the key manager made itself (its timers) go."""
    promiscuous = clients.promiscuous
    found = ((data, clients.listeners(data[3]) + promiscuous) for data in outs)
    return [Notice(data, to) for data, to in found if to]


def deliveries(client: int, events: list[Event], notices: list[bytes] | None = None) -> list[bytes]:
    """The messages of ``events`` that reach ``client``, if it sent the request, in order
    (a :class:`DumpReply` is left to its caller). Given a ``notices`` list, the Notices go
    there, and the replies alone are returned."""
    out: list[bytes] = []
    noticed = out if notices is None else notices
    for event in events:
        if type(event) is Reply:
            out.append(event.data)
        elif type(event) is Notice:
            noticed += [event.data] * event.to.count(client)
    return out


def reason(events: list[Event]) -> str:
    """Why the request was refused, in the key manager's words ("" if it was not)."""
    return next((e.reason for e in events if type(e) is Reply and e.reason), "")


def _notice(data: bytes, to: tuple[int, ...], events: list[Event]) -> None:
    if to:
        events.append(Notice(data, to))


def _shown(data: bytes) -> str:
    """A message as a repr may show it: its type and size, never its bytes (keys)."""
    kind = data[1] if len(data) > 1 else 0
    return f"{message_name(kind)}, {len(data)} bytes"
