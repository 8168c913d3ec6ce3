"""What espd does with the PF_KEY messages its data path and key manager cause.

The data path (``Datapath(notify=...)``) and the key manager's lifetime timers produce
EXPIRE and ACQUIRE messages "for the registered key managers". With ``-f`` espd is the only
key manager: they are logged and counted here, by type. With ``--socket`` they are also sent
to keyd, which keeps the authoritative SAs: the kernel's side of PF_KEY is split between
keyd (the SAD) and espd (the packets), so espd tells keyd what only packets can tell —
byte and packet limits reached, sequence numbers run out (an EXPIRE, which keyd records
and passes on to its listeners, see ``handlers.reported_expire``), an SA missing for
outbound traffic (an ACQUIRE, which keyd forwards to the registered IKE daemons).
"""

import logging
from collections import Counter
from collections.abc import Callable

from cryptoapi.pfkey.wire.constants import MsgType

log = logging.getLogger(__name__)


class Notices:
    """A ``notify`` callable: logs and counts each message it is given, and hands it to
    ``forward`` (keyd) if there is one."""

    def __init__(self, forward: Callable[[bytes], None] | None = None) -> None:
        self.counters: Counter[str] = Counter()
        self.forward = forward

    def __call__(self, messages: list[bytes]) -> None:
        for data in messages:
            kind = _name(data[1]) if len(data) > 1 else "short"
            self.counters[kind] += 1
            log.info("data path notice: %s (%d bytes)", kind, len(data))
            if self.forward is not None:
                self.forward(data)


def _name(kind: int) -> str:
    try:
        return MsgType(kind).name
    except ValueError:
        return str(kind)
