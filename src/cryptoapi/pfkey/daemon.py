"""The key daemon: one :class:`KeyManager` behind a Unix ``SOCK_SEQPACKET`` socket.

Clients speak PF_KEY v2 as to a PF_KEY socket (RFC 2367 §1.3): one message per datagram.
Routing follows the manager's rules (see :mod:`~cryptoapi.pfkey.manager`) and Linux's:

- a reply goes to its sender; an error reply only to its sender;
- EXPIRE and forwarded ACQUIREs go to the clients registered (SADB_REGISTER) for the SA type;
- a successful ADD, UPDATE, DELETE or FLUSH, and every SPD change, is also sent to the
  other registered clients (for their SA type; SPD and all-type changes to all of them),
  without key extensions. (Linux's ``key_notify_sa`` sends these to every PF_KEY socket;
  here only clients that registered hear of them.)

The socket is created mode 0600 and a client whose peer credentials (``SO_PEERCRED``) name
another user is dropped, so only the daemon's owner talks to it. One thread serves every
client with :mod:`selectors`: each round reads what the clients sent (at most
``MAX_BATCH`` messages each), handles it, commits the changes to the state store (if any),
and only then sends the replies, so nothing is acknowledged before it is durable, and a
busy round costs one commit (group commit). A client with ``PAUSE_READING`` replies not yet
taken is not read until it takes them; broadcasts to a client with ``MAX_BACKLOG`` queued
are dropped, as Linux drops them on a full receive buffer. Lifetime timers run between
rounds. :meth:`KeyDaemon.stop` (SIGTERM, in :func:`serve`) ends the loop; the socket file is
removed.
"""

import collections
import contextlib
import errno
import logging
import os
import selectors
import signal
import socket
from collections.abc import Callable
from types import FrameType

from cryptoapi.pfkey import replies, unixsocket
from cryptoapi.pfkey.client import MAX_MESSAGE
from cryptoapi.pfkey.constants import ExtType, MsgType
from cryptoapi.pfkey.manager import KeyManager
from cryptoapi.pfkey.message import scan
from cryptoapi.pfkey.store import StateStore

log = logging.getLogger(__name__)

MAX_BATCH = 256
"""Messages read from one client per round before the others get their turn."""
PAUSE_READING = 1024
"""A client with this many messages queued for it is not read until it takes them."""
MAX_BACKLOG = 65536
"""Broadcasts to a client with this many messages queued are dropped (and counted)."""

BROADCAST = frozenset(
    int(t)
    for t in (
        MsgType.ADD, MsgType.UPDATE, MsgType.DELETE, MsgType.FLUSH,
        MsgType.X_SPDADD, MsgType.X_SPDUPDATE, MsgType.X_SPDDELETE,
        MsgType.X_SPDDELETE2, MsgType.X_SPDFLUSH,
    )
)  # fmt: skip
"""Replies that are also notifications for the other registered clients."""
TO_LISTENERS = frozenset((int(MsgType.EXPIRE), int(MsgType.ACQUIRE)))
KEYS = frozenset((int(ExtType.KEY_AUTH), int(ExtType.KEY_ENCRYPT)))


class Client:
    """One connection: its socket, the messages queued for it, what it registered for."""

    __slots__ = ("events", "queue", "registered", "sock")

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.queue: collections.deque[bytes] = collections.deque()
        self.registered: set[int] = set()
        self.events = selectors.EVENT_READ


def without_keys(data: bytes) -> bytes:
    """``data`` with its KEY_AUTH and KEY_ENCRYPT extensions left out (a no-op for the
    notifications the manager makes, which carry none)."""
    found = scan(data)
    if KEYS.isdisjoint(found.spans):
        return data
    body = b"".join(data[a:b] for t, (a, b) in found.spans.items() if t not in KEYS)
    return replies.base(found.type, found.satype, found.seq, found.pid, body)


class KeyDaemon:
    """Serves ``km`` on the Unix socket ``path``; ``store`` keeps its state durable."""

    def __init__(
        self, km: KeyManager, path: str | os.PathLike[str], *, store: StateStore | None = None
    ) -> None:
        self.km = km
        self.path = os.fspath(path)
        self.store = store
        self.clients: dict[int, Client] = {}
        self.dropped = 0
        self._stopping = False
        self._closed = False
        self.listener, self._identity = unixsocket.listen(self.path)
        self._selector = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._buffer = bytearray(MAX_MESSAGE)
        self._selector.register(self.listener, selectors.EVENT_READ, None)
        self._selector.register(self._wake_r, selectors.EVENT_READ, None)

    # -- the loop ----------------------------------------------------------------------

    def stop(self) -> None:
        """End :meth:`serve_forever` (from any thread or a signal handler)."""
        self._stopping = True
        with contextlib.suppress(OSError):  # the loop is waking already, or closed
            self._wake_w.send(b"x")

    def serve_forever(self) -> None:
        """Serve until :meth:`stop`; then close everything and remove the socket file."""
        try:
            while not self._stopping:
                self._round()
        finally:
            self.close()

    def _round(self) -> None:
        for key, mask in self._selector.select(self._timeout()):
            if key.fileobj is self.listener:
                self._accept()
            elif key.fileobj is self._wake_r:
                _drain(self._wake_r)
            else:
                client = self.clients.get(key.fd)
                if client is not None and mask & selectors.EVENT_READ:
                    self._read(client)
        timers = self.km.timers.heap
        if timers and timers[0][0] <= self.km.clock():
            for data in self.km.tick():
                self._route(None, data)
        if self.store is not None:
            self.store.commit()  # durable before any reply leaves
        for client in list(self.clients.values()):
            self._flush(client)

    def _timeout(self) -> float | None:
        timers = self.km.timers.heap
        if not timers:
            return None
        return min(max(timers[0][0] - self.km.clock(), 0.0), 60.0)

    def _accept(self) -> None:
        while True:
            try:
                sock, _ = self.listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            try:
                uid = unixsocket.peer_uid(sock)
            except OSError:
                sock.close()
                continue
            if uid != os.geteuid():
                log.warning(
                    "refused a client of uid %d: only uid %d may connect", uid, os.geteuid()
                )
                sock.close()
                continue
            sock.setblocking(False)
            self.clients[sock.fileno()] = Client(sock)
            self._selector.register(sock, selectors.EVENT_READ, None)

    def _read(self, client: Client) -> None:
        view = memoryview(self._buffer)
        for _ in range(MAX_BATCH):
            if len(client.queue) >= PAUSE_READING:
                break
            try:
                size, _, flags, _ = client.sock.recvmsg_into([self._buffer])
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                self._drop(client)
                return
            if size == 0:
                self._drop(client)
                return
            data = bytes(view[:size])
            if flags & socket.MSG_TRUNC:
                client.queue.append(replies.error(data, errno.EMSGSIZE))
                continue
            outs = self.km.handle(data)
            first = outs[0] if outs else b""
            if first[1:3] == bytes((MsgType.REGISTER, 0)) and first[3]:
                client.registered.add(first[3])  # the manager accepted the registration
            for out in outs:
                self._route(client, out)

    def _route(self, sender: Client | None, data: bytes) -> None:
        """Queue one message the manager produced: see the module docstring."""
        type_, code, satype = data[1], data[2], data[3]
        if type_ in TO_LISTENERS and not code:
            self._notify(data, satype, None)
            return
        if sender is not None:
            sender.queue.append(data)
        if not code and type_ in BROADCAST:
            self._notify(data, satype, sender)

    def _notify(self, data: bytes, satype: int, sender: Client | None) -> None:
        """Queue ``data`` for the registered clients (for ``satype`` unless it is 0) other
        than ``sender``, without keys; dropped for a client with a full backlog."""
        listeners = [
            c
            for c in self.clients.values()
            if c.registered and c is not sender and (not satype or satype in c.registered)
        ]
        if not listeners:
            return
        note = without_keys(data)
        for client in listeners:
            if len(client.queue) >= MAX_BACKLOG:
                self.dropped += 1
            else:
                client.queue.append(note)

    def _flush(self, client: Client) -> None:
        queue, sock = client.queue, client.sock
        try:
            while queue:
                sock.send(queue[0])
                queue.popleft()
        except (BlockingIOError, InterruptedError):
            pass
        except OSError:
            self._drop(client)
            return
        events = selectors.EVENT_WRITE if queue else 0
        if len(queue) < PAUSE_READING:
            events |= selectors.EVENT_READ
        if events != client.events:
            client.events = events
            self._selector.modify(sock, events, None)

    def _drop(self, client: Client) -> None:
        fd = client.sock.fileno()
        if self.clients.pop(fd, None) is None:
            return
        self._selector.unregister(client.sock)
        client.sock.close()
        self.km.registered = set().union(*(c.registered for c in self.clients.values()))

    def close(self) -> None:
        """Close the clients and the socket, remove the socket file, close the store
        (once; later calls do nothing)."""
        if self._closed:
            return
        self._closed = True
        for client in list(self.clients.values()):
            self._drop(client)
        for sock in (self.listener, self._wake_r, self._wake_w):
            sock.close()
        self._selector.close()
        unixsocket.remove(self.path, self._identity)
        if self.store is not None:
            self.store.close()


def _drain(sock: socket.socket) -> None:
    try:
        while sock.recv(64):
            pass
    except (BlockingIOError, InterruptedError):
        pass


def serve(
    path: str | os.PathLike[str],
    *,
    km: KeyManager | None = None,
    state: str | os.PathLike[str] | None = None,
    synchronous: str = "FULL",
    ready: Callable[[KeyDaemon, tuple[int, int]], None] | None = None,
) -> int:
    """Run a key daemon in this (main) thread until SIGTERM or SIGINT; 0 when it stopped
    cleanly. ``ready`` is called once the socket listens, with the (SAs, policies) loaded."""
    os.umask(0o077)  # every file the daemon makes (state, WAL, socket) is private
    km = KeyManager() if km is None else km
    store = None if state is None else StateStore(state, synchronous=synchronous)
    try:
        loaded = store.attach(km) if store is not None else (0, 0)
        daemon = KeyDaemon(km, path, store=store)
    except BaseException:
        if store is not None:
            store.close()
        raise

    def on_signal(signum: int, frame: FrameType | None) -> None:
        daemon.stop()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        if ready is not None:
            ready(daemon, loaded)
        daemon.serve_forever()
    finally:
        daemon.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0
