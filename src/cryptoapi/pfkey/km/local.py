"""The in-process client of a key manager: a message in, a typed answer out (sans-I/O).

A client in another process reaches keyd over a socket (:mod:`~cryptoapi.pfkey.daemon.client`)
and tells the replies to its request from the broadcasts by their headers. In the same
process the key manager says which is which (:mod:`~cryptoapi.pfkey.km.routing`'s ``Reply``
and ``Notice``), so nothing has to be sorted out of bytes again::

    client = LocalClient(key_manager)
    answer = client.request(Message(MsgType.DUMP, SaType.ESP))
    answer.replies    # the replies to the request (DUMP: one per SA)
    answer.notices    # what else reached the client meanwhile (EXPIREs that came due)
    answer.errno, answer.reason    # a refusal: its errno, and why in the key manager's words

Each request is stamped as a PF_KEY client stamps it: a ``sadb_msg_seq`` of its own (or 0,
for a client that numbers none), this process's pid, ``sadb_msg_reserved`` 0. The client is
the key manager's :data:`~cryptoapi.pfkey.km.clients.ANONYMOUS` one, which
:meth:`~cryptoapi.pfkey.km.manager.KeyManager.handle` speaks for with bytes.
"""

import itertools
import os
from collections.abc import Iterator
from dataclasses import dataclass, replace

from cryptoapi.pfkey.km import routing
from cryptoapi.pfkey.km.clients import ANONYMOUS
from cryptoapi.pfkey.km.manager import KeyManager
from cryptoapi.pfkey.wire.message import Message, read_header


@dataclass(frozen=True, slots=True)
class Answer:
    """What one request brought the in-process client."""

    replies: list[bytes]
    """The replies to the request, in order: one, or one per entry of a DUMP or SPDDUMP."""
    notices: list[bytes]
    """The rest that reached the client meanwhile: the EXPIREs and ACQUIREs for the SA
    types it registered for, and copies of everything if it is promiscuous."""
    reason: str = ""
    """Why the request was refused, in the key manager's words ("" if it was not): a
    PF_KEY reply carries only the errno (RFC 2367 §1.4)."""

    @property
    def errno(self) -> int:
        """The errno of the (first) reply: 0 if the request was done, or had no reply."""
        return read_header(self.replies[0]).errno if self.replies else 0


class LocalClient:
    """The in-process client of ``key_manager``: its requests numbered 1, 2, ... or, not
    ``numbered``, all 0 (an SA keeps the seq of the message that added it: espd's mirror
    adds keyd's SAs with 0)."""

    def __init__(self, key_manager: KeyManager, *, numbered: bool = True) -> None:
        self.key_manager = key_manager
        self.pid = os.getpid()
        self._seq: Iterator[int] = itertools.count(1) if numbered else itertools.repeat(0)

    def request(self, message: Message) -> Answer:
        """Stamp ``message``, let the key manager handle it, and return its answer."""
        stamped = replace(message, seq=next(self._seq), pid=self.pid, reserved=0)
        events = self.key_manager.process(ANONYMOUS, stamped.encode())
        notices: list[bytes] = []
        replies = routing.deliveries(ANONYMOUS, events, notices)
        return Answer(replies, notices, routing.reason(events))
