"""What espd does with the PF_KEY messages its data path and key manager cause.

The data path (``Datapath(notify=...)``) and the key manager's lifetime timers produce
EXPIRE and ACQUIRE messages "for the registered key managers". With ``-f`` espd is the only
key manager: they are logged and counted here, by type. With ``--socket`` they are also sent
to keyd, which keeps the authoritative SAs: the kernel's side of PF_KEY is split between
keyd (the SAD) and espd (the packets), so espd tells keyd what only packets can tell —
byte and packet limits reached, sequence numbers run out (an EXPIRE, which keyd records
and passes on to its listeners, see ``handlers.reported_expire``), an SA missing for
outbound traffic (an ACQUIRE, which keyd forwards to the registered IKE daemons).

Nothing here waits for keyd: the data path hands its messages over and goes on. They are
queued, and sent by :meth:`Notices.flush` (the endpoint calls it every turn of its loop)
as far as keyd's socket takes them now; a keyd that is not reading keeps them queued, up to
``QUEUE`` (the oldest go first past that, counted as ``dropped``), and forwarding never
stops for it. Once the queue is empty, the same flush sends the usage reports that are due
(``reports``, :mod:`.reports`), through the same ``forward``: what happened first, then
how much was carried.
"""

import logging
from collections import Counter, deque
from collections.abc import Callable

from cryptoapi.esp.espd.reports import UsageReports
from cryptoapi.pfkey.errors import PfkeyError
from cryptoapi.pfkey.km.explain import describe_data, message_name

log = logging.getLogger(__name__)

QUEUE = 1024
"""Messages kept for a keyd that is not reading (one ACQUIRE per SA wanted per 30 s, and
EXPIREs: a busy gateway's minute or so)."""


class Notices:
    """A ``notify`` callable: logs and counts each message it is given, and queues it for
    ``forward`` (keyd) if there is one, which takes a message (True) or has no room for
    it now (False)."""

    def __init__(self, forward: Callable[[bytes], bool] | None = None) -> None:
        self.counters: Counter[str] = Counter()
        self.forward = forward
        self.reports: UsageReports | None = None
        """The usage reports sent after the queue (with ``--socket``)."""
        self._queue: deque[bytes] = deque()

    def __call__(self, messages: list[bytes]) -> None:
        for data in messages:
            self.counters[_kind(data)] += 1
            if log.isEnabledFor(logging.INFO):  # decoded only to be logged
                log.info("data path notice: %s", _described(data))
            if self.forward is not None:
                self._enqueue(data)

    def _enqueue(self, data: bytes) -> None:
        if len(self._queue) >= QUEUE:
            self._queue.popleft()
            self.counters["dropped"] += 1
            if self.counters["dropped"] == 1 or not self.counters["dropped"] % QUEUE:
                log.warning("the key daemon is not reading: %d notices dropped so far",
                            self.counters["dropped"])  # fmt: skip
        self._queue.append(data)

    def flush(self, *, final: bool = False) -> None:
        """Send what is queued, then the usage reports that are due (every one that moved,
        if ``final``: at exit), as far as ``forward`` takes them now (never waiting)."""
        queue, forward = self._queue, self.forward
        if forward is None:
            return
        while queue and forward(queue[0]):
            queue.popleft()
        if not queue and self.reports is not None:
            self.reports.send(forward, final=final)

    def pending(self) -> int:
        """Messages queued, not yet taken by ``forward``."""
        return len(self._queue)


def _described(data: bytes) -> str:
    """What a notice is about (the SA, soft or hard), decoded with the wire codec; its
    type and size if it does not decode (the data path's own messages always do)."""
    try:
        return describe_data(data)
    except PfkeyError:
        return f"{_kind(data)} ({len(data)} bytes, undecodable)"


def _kind(data: bytes) -> str:
    """The message type's name, as the notices are counted."""
    return message_name(data[1]) if len(data) > 1 else "short"
