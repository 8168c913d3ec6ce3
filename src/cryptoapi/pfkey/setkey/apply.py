"""Running setkey statements against a key manager, in-process or through the key daemon.

Each statement's messages are sent in order and its replies collected in an
:class:`Outcome`: the successful replies (decoded) and the refusals (errno and text; from
an in-process key manager the text has its reason too, which PF_KEY cannot carry). A
refusal does not stop the run (setkey goes on with the next statement too); the caller
decides the exit status. A transport that fails (the key daemon closed the connection, did
not answer in time, or answered nonsense) stops it: :class:`Interrupted` names the file and
line of the statement reached and keeps the outcomes of those before it. DUMP and SPDDUMP
of an empty database are not errors (ENOENT means "none"). ``deleteall`` dumps the SA type
and deletes every SA between its two addresses.
"""

import errno
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

from cryptoapi.pfkey.daemon.client import PfkeyClient
from cryptoapi.pfkey.errors import PfkeyError
from cryptoapi.pfkey.km.explain import refusal
from cryptoapi.pfkey.km.local import LocalClient
from cryptoapi.pfkey.km.manager import KeyManager
from cryptoapi.pfkey.setkey.parser import Statement
from cryptoapi.pfkey.wire.constants import ExtType, MsgType
from cryptoapi.pfkey.wire.extensions import Address, Sa
from cryptoapi.pfkey.wire.message import Message, decode

LISTINGS = frozenset((int(MsgType.DUMP), int(MsgType.X_SPDDUMP)))


class Transport(Protocol):
    """Where statements go: ``request`` sends one message and returns its replies;
    ``explain`` says what a refusal's errno meant for a message of type ``kind``, as well
    as the transport knows."""

    def request(self, message: Message) -> list[bytes]: ...
    def explain(self, code: int, kind: int) -> str: ...


class LocalTransport:
    """An in-process key manager (``cryptoapi setkey`` without ``--socket``: a dry run)."""

    def __init__(self, km: KeyManager) -> None:
        self.km = km
        self.client = LocalClient(km)
        self._reason = ""

    def request(self, message: Message) -> list[bytes]:
        """The replies (the EXPIREs and ACQUIREs the key manager has for this process are
        not setkey's to show)."""
        answer = self.client.request(message)
        self._reason = answer.reason
        return answer.replies

    def explain(self, code: int, kind: int) -> str:
        """The key manager's own reason for the refusal just made, and the errno's name."""
        return refusal(kind, code, self._reason)


class DaemonTransport:
    """The key daemon, through a connected :class:`PfkeyClient`."""

    def __init__(self, client: PfkeyClient) -> None:
        self.client = client

    def request(self, message: Message) -> list[bytes]:
        return self.client.request(message)

    def explain(self, code: int, kind: int) -> str:
        """What the errno means for that message (a PF_KEY reply carries no reason)."""
        return refusal(kind, code)


@dataclass
class Outcome:
    """What one statement did: successful replies, and refusals as (errno, description)."""

    statement: Statement
    replies: list[Message] = field(default_factory=list)
    errors: list[tuple[int, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    def describe_errors(self) -> list[str]:
        """``file:line:col: command: reason (ENAME)`` per refusal (the text names the errno)."""
        s = self.statement
        return [f"{s.where}: {s.command}: {text}" for _code, text in self.errors]


def _send(transport: Transport, message: Message, outcome: Outcome) -> list[Message]:
    found = []
    for data in transport.request(message):
        reply = decode(data)
        if reply.errno:
            if not (reply.errno == errno.ENOENT and reply.type in LISTINGS):
                outcome.errors.append((reply.errno, transport.explain(reply.errno, reply.type)))
        else:
            found.append(reply)
    return found


class Interrupted(PfkeyError):
    """The transport failed partway: the message is ``file:line: command: reason`` for the
    statement reached; ``outcomes`` are those of the statements before it."""

    def __init__(self, code: int, message: str, outcomes: tuple[Outcome, ...] = ()) -> None:
        super().__init__(code, message)
        self.outcomes = outcomes


def apply(statements: Iterable[Statement], transport: Transport) -> list[Outcome]:
    """Run every statement in order; one Outcome each (Interrupted if the transport
    fails: see the module docstring)."""
    outcomes: list[Outcome] = []
    for statement in statements:
        try:
            outcomes.append(_run(statement, transport))
        except PfkeyError as error:
            where = statement.where
            message = f"{where.file}:{where.line}: {statement.command}: {error}"
            raise Interrupted(error.errno, message, tuple(outcomes)) from error
    return outcomes


def _run(statement: Statement, transport: Transport) -> Outcome:
    outcome = Outcome(statement)
    for message in statement.messages:
        replies = _send(transport, message, outcome)
        if statement.match is None:
            outcome.replies += replies
        else:
            for sa in _matching(replies, statement.match):
                outcome.replies += _send(transport, sa, outcome)
    return outcome


def _matching(dumped: list[Message], match: tuple[int, bytes, bytes]) -> list[Message]:
    """DELETE messages for the dumped SAs between the two addresses (deleteall)."""
    satype, src, dst = match
    found = []
    for reply in dumped:
        sa = reply.get(ExtType.SA, Sa)
        source = reply.get(ExtType.ADDRESS_SRC, Address)
        destination = reply.get(ExtType.ADDRESS_DST, Address)
        if sa is None or source is None or destination is None:
            continue
        if (source.addr.addr, destination.addr.addr) != (src, dst):
            continue
        if satype and reply.satype != satype:
            continue
        exts = (Sa(sa.spi), source, destination)
        found.append(Message(MsgType.DELETE, reply.satype, 0, 0, 0, exts))
    return found
