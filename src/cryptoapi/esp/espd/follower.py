"""Following a running key daemon: espd's side of keyd's socket (``espd --socket PATH``).

On :meth:`Follower.connect`: connect (keyd lets only its owner in), REGISTER for ESP —
first, so that no change made during the dumps is missed: it arrives as a broadcast after
them and is applied again, which is idempotent — then DUMP (keyd gives its owner the keys)
and SPDDUMP, brought into the local key manager by :class:`~.mirror.Mirror`.

Afterwards :meth:`Follower.on_readable` (the endpoint calls it when the socket is readable,
or while :meth:`Follower.pending`) takes at most ``BATCH`` broadcasts; each ADD/UPDATE costs
one GET round trip on the same socket, bounded by ``timeout``. Broadcasts that arrive while
a GET is answered are kept by the client and taken next.

Durability: the local copy outlives keyd. If the connection is lost, the data path goes on
with the SAs it has; :meth:`Follower.retry_if_due` (every ``RETRY`` seconds) reconnects and
brings the copy back in line by difference, so SAs keyd still has keep their sequence
numbers and replay windows.
"""

import errno
import logging
import time
from collections.abc import Callable

from cryptoapi.esp.espd.mirror import Mirror
from cryptoapi.pfkey.daemon.client import PfkeyClient
from cryptoapi.pfkey.errors import PfkeyError
from cryptoapi.pfkey.km.explain import refusal
from cryptoapi.pfkey.wire.constants import MsgType, SaType
from cryptoapi.pfkey.wire.message import Message, read_header

log = logging.getLogger(__name__)

BATCH = 64
"""Broadcasts taken per call of :meth:`Follower.on_readable` before packets get a turn."""
RETRY = 1.0
"""Seconds between attempts to reconnect to a key daemon that went away."""
EMPTY = errno.ENOENT  # keyd's DUMP/SPDDUMP of an empty database
WOULD_BLOCK = frozenset((errno.EAGAIN, errno.ETIMEDOUT))


class Follower:
    """Keeps ``mirror``'s key manager a copy of the key daemon's at ``path``."""

    def __init__(
        self,
        path: str,
        mirror: Mirror,
        *,
        timeout: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.path = path
        self.mirror = mirror
        self.timeout = timeout
        self.clock = clock
        self.client: PfkeyClient | None = None
        self.retry_at: float | None = None
        """When to try to reconnect (None while connected)."""
        self.connects = 0

    def fileno(self) -> int | None:
        """The socket to watch, None while disconnected."""
        return self.client.sock.fileno() if self.client is not None else None

    def connect(self) -> None:
        """Connect, register, and copy keyd's SAs and policies; PfkeyError if that fails."""
        client = PfkeyClient(self.path, timeout=self.timeout)
        try:
            _check(client.request(Message(MsgType.REGISTER, SaType.ESP)), "REGISTER")
            sas = _listing(client.request(Message(MsgType.DUMP, SaType.ESP)), "DUMP")
            for request in self.mirror.sync_sad(sas):
                self._install(client, request)
            policies = _listing(client.request(Message(MsgType.X_SPDDUMP)), "SPDDUMP")
            self.mirror.sync_spd(policies)
        except BaseException:
            client.close()
            raise
        self.client, self.retry_at = client, None
        self.connects += 1
        log.info("following the key daemon at %s: %d SAs, %d policies", self.path,
                 len(sas), len(policies))  # fmt: skip

    def connection(self) -> int | None:
        """The number of the current connection (counted from 1), None while keyd is away:
        what a reader that keeps something per connection (usage reports) compares."""
        return self.connects if self.client is not None else None

    def pending(self) -> bool:
        """Whether broadcasts are waiting in the client (taken from the socket already)."""
        return self.client is not None and bool(self.client.notifications)

    def on_readable(self) -> None:
        """Apply up to ``BATCH`` broadcasts; on a lost connection, schedule a retry."""
        client = self.client
        if client is None:
            return
        try:
            for _ in range(BATCH):
                try:
                    data = client.notification(timeout=0.0)
                except PfkeyError as error:
                    if error.errno in WOULD_BLOCK:
                        return
                    raise
                for request in self.mirror.notification(data):
                    self._install(client, request)
        except PfkeyError as error:
            self._lost(error)

    def until_retry(self) -> float:
        """Seconds until the next reconnection attempt (infinity while connected)."""
        if self.retry_at is None:
            return float("inf")
        return max(0.0, self.retry_at - self.clock())

    def retry_if_due(self) -> None:
        """Reconnect if the connection is lost and an attempt is due."""
        if self.retry_at is not None and self.retry_at <= self.clock():
            self.retry()

    def retry(self) -> None:
        """Try to reconnect now; on failure, again ``RETRY`` seconds later."""
        try:
            self.connect()
        except PfkeyError as error:
            self.retry_at = self.clock() + RETRY
            log.debug("the key daemon at %s is still away: %s", self.path, error)

    def report(self, data: bytes) -> bool:
        """Send keyd a message the data path caused (EXPIRE, ACQUIRE), never waiting: not
        for an answer (keyd's broadcast of it comes back like any other) nor for room on
        the socket. False if keyd is not reading (the caller keeps it for later: a full
        socket is not a lost connection). Dropped (and logged) while keyd is away; its own
        timers, or the next report, make up for it."""
        client = self.client
        if client is None:
            log.info("the key daemon is away: a data path notice was not sent")
            return True
        try:
            return client.send_nowait(data)
        except PfkeyError as error:
            self._lost(error)
            return True

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None

    def _install(self, client: PfkeyClient, request: Message) -> None:
        """GET one SA from keyd and install it (an SA gone meanwhile is skipped: its
        DELETE follows)."""
        for reply in client.request(request):
            self.mirror.install(reply)

    def _lost(self, error: PfkeyError) -> None:
        log.warning("lost the key daemon at %s (%s); keeping the SAs, retrying", self.path,
                    error)  # fmt: skip
        self.close()
        self.retry_at = self.clock() + RETRY


def _check(replies: list[bytes], what: str) -> None:
    if not replies:
        raise PfkeyError(errno.EPROTO, f"the key daemon refused {what}: no reply")
    header = read_header(replies[0])
    if header.errno:
        why = refusal(header.type, header.errno)
        raise PfkeyError(header.errno, f"the key daemon refused {what}: {why}")


def _listing(replies: list[bytes], what: str) -> list[bytes]:
    """The entries of a DUMP or SPDDUMP (none for ENOENT: an empty database)."""
    if len(replies) == 1 and (code := read_header(replies[0]).errno):
        if code == EMPTY:
            return []
        _check(replies, what)
    return replies
