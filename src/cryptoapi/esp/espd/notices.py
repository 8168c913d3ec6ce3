"""What espd does with the PF_KEY messages its data path and key manager cause.

The data path (``Datapath(notify=...)``) and the key manager's lifetime timers produce
EXPIRE and ACQUIRE messages "for the registered key managers". espd's local key manager has
none registered (with ``-f`` espd is the only key manager; with ``--socket`` keyd keeps the
authoritative SAs and its own timers, and tells espd of their EXPIREs), so these messages
are logged and counted here, by type, and go nowhere else.
"""

import logging
from collections import Counter

from cryptoapi.pfkey.constants import MsgType

log = logging.getLogger(__name__)


class Notices:
    """A ``notify`` callable: logs and counts each message it is given."""

    def __init__(self) -> None:
        self.counters: Counter[str] = Counter()

    def __call__(self, messages: list[bytes]) -> None:
        for data in messages:
            kind = _name(data[1]) if len(data) > 1 else "short"
            self.counters[kind] += 1
            log.info("data path notice: %s (%d bytes)", kind, len(data))


def _name(kind: int) -> str:
    try:
        return MsgType(kind).name
    except ValueError:
        return str(kind)
