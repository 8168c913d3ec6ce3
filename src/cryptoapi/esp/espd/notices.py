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
stops for it.
"""

import logging
from collections import Counter, deque
from collections.abc import Callable

from cryptoapi.pfkey.wire.constants import MsgType

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
        self._queue: deque[bytes] = deque()

    def __call__(self, messages: list[bytes]) -> None:
        for data in messages:
            kind = _name(data[1]) if len(data) > 1 else "short"
            self.counters[kind] += 1
            log.info("data path notice: %s (%d bytes)", kind, len(data))
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

    def flush(self) -> None:
        """Send what is queued, as far as ``forward`` takes it now (never waiting)."""
        queue, forward = self._queue, self.forward
        while queue and forward is not None and forward(queue[0]):
            queue.popleft()

    def pending(self) -> int:
        """Messages queued, not yet taken by ``forward``."""
        return len(self._queue)


def _name(kind: int) -> str:
    try:
        return MsgType(kind).name
    except ValueError:
        return str(kind)
