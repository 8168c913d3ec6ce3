"""The key daemon: one :class:`KeyManager` behind a Unix ``SOCK_SEQPACKET`` socket.

Clients speak PF_KEY v2 as to a PF_KEY socket (RFC 2367 §1.3): one message per datagram.
The daemon is the key manager's transport, as hypercorn is h11's: each connection is a
client of the manager (:meth:`KeyManager.connect`), each datagram goes to
:meth:`KeyManager.process`, and the typed results it returns are delivered as they say
(:mod:`~cryptoapi.pfkey.km.routing` states the rules: replies to the sender; EXPIRE and
ACQUIRE to the clients registered for the SA type; SA and SPD changes also to the other
registered clients, without keys; copies of everything to promiscuous clients, as Linux's
``SADB_X_PROMISC``). The daemon reads no message and keeps no registration itself; a
client that goes is disconnected from the manager.

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

The replies to a DUMP or SPDDUMP are built as the client takes them, as Linux's
``pfkey_do_dump`` builds them as the reader drains its receive buffer: the dump adds to the
client's queue until ``DUMP_PAUSE`` messages are queued (``pfkey_can_dump``: two thirds of
the buffer) and goes on once the client has taken it down to ``DUMP_RESUME``
(``pfkey_recvmsg``: one third). A client that never reads costs a bounded queue and the
list of what its dump is to show (one reference per SA), not every message at once. They
are built only when replies are sent, after the commit, so they show only what is durable.
A client is not read while its dump lasts, so its replies keep the order of its requests
(Linux interleaves them instead, and answers a second DUMP with EBUSY). Each message is
copied to the promiscuous clients as it is queued.

An empty datagram (a 0-byte read while the peer's side is open:
:func:`~cryptoapi.pfkey.daemon.unixsocket.peer_shut_down`) is not the end of file. Linux fails a
sendmsg shorter than ``sadb_msg`` with EMSGSIZE and keeps the socket; here it is answered as
any datagram shorter than ``sadb_msg`` is: with a header of zeros (there is none to echo)
carrying EMSGSIZE, and the client keeps its connection, registration and queued replies.

When ``accept`` fails for want of resources (EMFILE, ENFILE, ENOBUFS, ENOMEM) the daemon
leaves the listening socket out of the poll for a while (0.1 s, doubling up to 1 s while it
keeps failing: :class:`~cryptoapi.pfkey.daemon.unixsocket.Acceptor`, which logs the episode once)
and serves the connected clients meanwhile.
"""

import collections
import contextlib
import errno
import itertools
import logging
import os
import selectors
import signal
import socket
import time
from collections.abc import Callable
from types import FrameType
from typing import Any, Protocol

from cryptoapi.pfkey.daemon import unixsocket
from cryptoapi.pfkey.daemon.backend import StateBackend
from cryptoapi.pfkey.daemon.client import MAX_MESSAGE
from cryptoapi.pfkey.daemon.control import ControlServer
from cryptoapi.pfkey.daemon.pgconnect import is_url
from cryptoapi.pfkey.daemon.pgstore import PgStore
from cryptoapi.pfkey.daemon.status import farewell, keyd_status
from cryptoapi.pfkey.daemon.store import StateStore
from cryptoapi.pfkey.errors import PfkeyError
from cryptoapi.pfkey.km import replies
from cryptoapi.pfkey.km.manager import KeyManager
from cryptoapi.pfkey.km.routing import DumpReply, Event, Notice, Reply

log = logging.getLogger(__name__)

MAX_BATCH = 256
"""Messages read from one client per round before the others get their turn."""
PAUSE_READING = 1024
"""A client with this many messages queued for it is not read until it takes them."""
MAX_BACKLOG = 65536
"""Broadcasts to a client with this many messages queued are dropped (and counted)."""
DUMP_PAUSE = 2 * PAUSE_READING // 3
"""A dump stops adding to a client's queue at this many messages (Linux ``pfkey_can_dump``
lets a dump fill two thirds of the receive buffer; ``PAUSE_READING`` stands for that)."""
DUMP_RESUME = PAUSE_READING // 3
"""A paused dump goes on once its client's queue is down to this many (``pfkey_recvmsg``
resumes a dump when the receive buffer is down to a third)."""


class WriteGate(Protocol):
    """Whether this keyd may handle a message now (a standby or fenced one refuses writes:
    :class:`~.pgstore.PgStore`)."""

    def refusal(self, data: bytes) -> int:
        """The errno to answer ``data`` with instead of handling it; 0 to handle it."""
        ...


class Client:
    """One connection: its socket, its id in the key manager, the messages queued for it."""

    __slots__ = ("dump", "events", "id", "queue", "sock")

    def __init__(self, sock: socket.socket, client_id: int) -> None:
        self.sock = sock
        self.id = client_id
        self.queue: collections.deque[bytes] = collections.deque()
        self.events = selectors.EVENT_READ
        self.dump: DumpReply | None = None
        """The rest of a DUMP or SPDDUMP being answered, added to ``queue`` as it drains."""


class KeyDaemon:
    """Serves ``km`` on the Unix socket ``path``; ``store`` (any backend: SQLite's
    :class:`~.store.StateStore` in :func:`serve`) keeps its state durable. With a ``gate``
    (a store that may stand by), messages it refuses are answered with its errno, and a
    round whose commit fails (PfkeyError) is acknowledged to no one: what it queued is
    dropped and each message it handled is answered with the commit's errno."""

    def __init__(
        self,
        km: KeyManager,
        path: str | os.PathLike[str],
        *,
        store: StateBackend | None = None,
        gate: WriteGate | None = None,
    ) -> None:
        self.km = km
        self.path = os.fspath(path)
        self.store = store
        self.gate = gate
        self._marks: dict[int, int] = {}  # queue lengths at the start of a gated round
        self._handled: list[tuple[Client, bytes]] = []  # the messages of a gated round
        self.clients: dict[int, Client] = {}
        self.dropped = 0
        self._stopping = False
        self._closed = False
        self.listener, self._identity = unixsocket.listen(self.path)
        self._acceptor = unixsocket.Acceptor(self.listener)
        self._resume_at: float | None = None  # time.monotonic() when accepting resumes
        self._selector = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._buffer = bytearray(MAX_MESSAGE)
        self._selector.register(self.listener, selectors.EVENT_READ, None)
        self._selector.register(self._wake_r, selectors.EVENT_READ, None)
        self.control: ControlServer | None = None
        self.stopped_by: int | None = None
        """The signal that stopped the daemon (set by :func:`serve`)."""

    def watch(self, control: ControlServer) -> None:
        """Serve ``control`` (the status socket) in this loop; it is closed with the daemon."""
        self.control = control
        control.register(self._selector)

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
        if self.gate is not None:
            self._marks = {c.id: len(c.queue) for c in self.clients.values()}
        for key, mask in self._selector.select(self._timeout()):
            if key.fileobj is self.listener:
                self._accept()
            elif key.fileobj is self._wake_r:
                _drain(self._wake_r)
            elif callable(key.data):  # the status socket's (control.py)
                key.data()
            else:
                client = key.data
                if client.id in self.clients and mask & selectors.EVENT_READ:
                    self._read(client)
        if self._resume_at is not None and time.monotonic() >= self._resume_at:
            self._resume_accepting()
        if self.control is not None:
            self.control.expire()
        timers = self.km.timers.heap
        if timers and timers[0][0] <= self.km.clock():
            for notice in self.km.run_timers():
                self._notify(notice.data, notice.to)
        if self.store is not None:
            try:
                self.store.commit()  # durable before any reply leaves
            except PfkeyError as error:
                if self.gate is None:
                    raise
                self._unacknowledge(error)
        self._handled.clear()
        for client in list(self.clients.values()):
            self._flush(client)

    def _timeout(self) -> float | None:
        """Seconds until the next timer is due or accepting resumes (None: no such wait)."""
        waits = []
        timers = self.km.timers.heap
        if timers:
            waits.append(timers[0][0] - self.km.clock())
        if self._resume_at is not None:
            waits.append(self._resume_at - time.monotonic())
        if self.store is not None and (usage := self.store.usage_wait()) is not None:
            waits.append(usage)  # usage counters and DYING states to write (store.py)
        if self.control is not None and (control := self.control.wait()) is not None:
            waits.append(control)  # a status answer to end, or accepting to resume
        if not waits:
            return None
        return min(max(min(waits), 0.0), 60.0)

    # -- accepting clients -------------------------------------------------------------

    def _accept(self) -> None:
        accepted, pause = self._acceptor.accept()
        for sock in accepted:
            client = Client(sock, self.km.connect())
            self.clients[client.id] = client
            self._selector.register(sock, selectors.EVENT_READ, client)
        if pause is not None:  # out of descriptors or memory: serve the others meanwhile
            self._selector.unregister(self.listener)
            self._resume_at = time.monotonic() + pause

    def _resume_accepting(self) -> None:
        self._resume_at = None
        self._selector.register(self.listener, selectors.EVENT_READ, None)

    # -- reading, routing and sending --------------------------------------------------

    def _read(self, client: Client) -> None:
        view = memoryview(self._buffer)
        for _ in range(MAX_BATCH):
            if len(client.queue) >= PAUSE_READING or client.dump is not None:
                break
            try:
                size, _, flags, _ = client.sock.recvmsg_into([self._buffer])
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                self._drop(client)
                return
            if size == 0 and unixsocket.peer_shut_down(client.sock):
                self._drop(client)  # end of file; otherwise an empty datagram, answered below
                return
            data = bytes(view[:size])
            if flags & socket.MSG_TRUNC:
                client.queue.append(replies.error(data, errno.EMSGSIZE))
                continue
            self._handle(client, data)

    def _handle(self, client: Client, data: bytes) -> None:
        """Hand one message to the manager and deliver what it returns (or refuse it)."""
        if self.gate is not None:
            self._handled.append((client, data))
            refused = self.gate.refusal(data)
            if refused:
                client.queue.append(replies.error(data, refused))
                return
        for event in self.km.process(client.id, data, lazily=True):
            self._deliver(client, event)

    def _unacknowledge(self, error: PfkeyError) -> None:
        """The round's commit failed: drop what the round queued, answer each message it
        handled with the commit's errno (nothing of it is durable)."""
        log.error("%s; %d messages answered %s", error, len(self._handled), error.errno)
        for client in self.clients.values():
            mark, queue = self._marks.get(client.id, 0), client.queue
            while len(queue) > mark:
                queue.pop()
        for client, data in self._handled:
            client.dump = None
            client.queue.append(replies.error(data, error.errno))

    def _deliver(self, sender: Client, event: Event) -> None:
        """Queue one result of the manager where it says (see the module docstring)."""
        if type(event) is Notice:
            self._notify(event.data, event.to)
        elif type(event) is Reply:
            sender.queue.append(event.data)
        elif type(event) is DumpReply:
            sender.dump = event  # not read again until it is all queued (see _read)

    def _notify(self, data: bytes, to: tuple[int, ...]) -> None:
        """Queue ``data`` for the clients ``to``; dropped for a client with a full backlog
        (or gone)."""
        clients = self.clients
        for client_id in to:
            client = clients.get(client_id)
            if client is None:
                continue
            if len(client.queue) >= MAX_BACKLOG:
                self.dropped += 1
            else:
                client.queue.append(data)

    def _flush(self, client: Client) -> None:
        try:
            self._send(client)
        except (BlockingIOError, InterruptedError):
            pass
        except OSError:
            self._drop(client)
            return
        queue = client.queue
        events = selectors.EVENT_WRITE if queue else 0
        if len(queue) < PAUSE_READING and client.dump is None:
            events |= selectors.EVENT_READ
        if events != client.events:
            client.events = events
            self._selector.modify(client.sock, events, client)

    def _send(self, client: Client) -> None:
        """Send the client's queue until the socket is full (BlockingIOError) or the queue
        and its dump are done; the dump refills the queue as it drains."""
        queue, send = client.queue, client.sock.send
        while True:
            if client.dump is not None and len(queue) <= DUMP_RESUME:
                self._continue_dump(client, client.dump)
            if not queue:
                return
            send(queue[0])
            queue.popleft()

    def _continue_dump(self, client: Client, dump: DumpReply) -> None:
        """Queue the dump's next messages, up to ``DUMP_PAUSE`` queued (Linux ``dump_sa``
        stops at ``pfkey_can_dump``), each copied to the promiscuous clients; forget it
        once it is all queued."""
        taken = list(itertools.islice(dump.dump, DUMP_PAUSE - len(client.queue)))
        client.queue.extend(taken)
        if not dump.dump:
            client.dump = None
        if dump.copies:
            for data in taken:
                self._notify(data, dump.copies)
            for copy in dump.copies:  # queued after their turn in this round: send now
                if (watcher := self.clients.get(copy)) is not None and watcher is not client:
                    self._flush(watcher)

    def _drop(self, client: Client) -> None:
        if self.clients.pop(client.id, None) is None:
            return
        self._selector.unregister(client.sock)
        client.sock.close()
        self.km.disconnect(client.id)

    def stats(self) -> dict[str, int]:
        """Counters: clients, messages queued for them, dumps under way, broadcasts dropped
        on a full backlog, failed ``accept`` calls."""
        clients = list(self.clients.values())
        return {
            "clients": len(clients),
            "queued": sum(len(c.queue) for c in clients),
            "dumping": sum(c.dump is not None for c in clients),
            "dropped": self.dropped,
            "accept_failures": self._acceptor.failures,
        }

    def close(self) -> None:
        """Close the clients and the socket, remove the socket file, close the store
        (once; later calls do nothing)."""
        if self._closed:
            return
        self._closed = True
        for client in list(self.clients.values()):
            self._drop(client)
        if self.control is not None:
            self.control.close()
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
    control: str | None = None,
    standby: bool = False,
) -> int:
    """Run a key daemon in this (main) thread until SIGTERM or SIGINT; 0 when it stopped
    cleanly, said in one line (:func:`~.status.farewell`). ``ready`` is called once the
    socket listens, with the (SAs, policies) loaded; ``control`` is the status socket's
    path (:mod:`.control`), if any. A ``state`` that is a ``postgresql://`` URL is kept in
    PostgreSQL (:mod:`.pgstore`), active or, with ``standby``, following; SIGUSR1 logs
    the daemon's role."""
    os.umask(0o077)  # every file the daemon makes (state, WAL, socket) is private
    km = KeyManager() if km is None else km
    pg: PgStore | None = None
    store: StateBackend | None = None
    if state is not None and is_url(os.fspath(state)):
        store = pg = PgStore(os.fspath(state), standby=standby)
    elif standby:
        raise PfkeyError(errno.EINVAL, "--standby needs a postgresql:// --state")
    elif state is not None:
        store = StateStore(state, synchronous=synchronous)
    try:
        loaded = store.attach(km) if store is not None else (0, 0)
        daemon = KeyDaemon(km, path, store=store, gate=pg)
    except BaseException:
        if store is not None:
            store.close()
        raise
    shown = pg.shown if pg is not None else None if state is None else os.fspath(state)
    role = pg.status if pg is not None else lambda: {"role": "active"}
    if control is not None:
        _watch_status(daemon, control, shown, role)

    def on_role(signum: int, frame: FrameType | None) -> None:
        log.info("role: %s", pg.describe() if pg is not None else f"active, state {shown}")

    def on_signal(signum: int, frame: FrameType | None) -> None:
        daemon.stopped_by = signum
        daemon.stop()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    previous[signal.SIGUSR1] = signal.signal(signal.SIGUSR1, on_role)
    try:
        if ready is not None:
            ready(daemon, loaded)
        daemon.serve_forever()
    finally:
        daemon.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    log.info("%s", farewell(daemon, shown))
    return 0


def _watch_status(
    daemon: KeyDaemon, path: str, shown: str | None, role: Callable[[], dict[str, Any]]
) -> None:
    """Serve the status socket at ``path`` in ``daemon``'s loop (or, if it cannot be made,
    none: a warning); ``role`` is its high-availability part."""
    started = time.monotonic()
    control = ControlServer.open(path, lambda: keyd_status(daemon, started, shown, ha=role()))
    if control is not None:
        daemon.watch(control)
