"""A daemon's status socket: a Unix stream socket that answers each connection with one
JSON document and closes it (``cryptoapi keyd-status``, ``cryptoapi espd-status``).

No request is read, so there is nothing to parse and nothing a client can ask for but the
status. The socket is the owner's alone, as keyd's PF_KEY socket is (mode 0600, and each
peer's ``SO_PEERCRED`` checked by :class:`~.unixsocket.Acceptor`). It lives in the
daemon's one loop and never waits there: the listening socket and each connection are
non-blocking and watched by the loop's selector (their ``data`` is the callable to run when
ready); an answer the client does not read at once is sent as it drains. At most
``MAX_CONNECTIONS`` answers are under way (the oldest is closed for a new one), and each
answer is built once, when its connection is accepted, so a status costs the loop one
snapshot and a client that never reads costs one buffer, for at most ``ANSWER_TIMEOUT``
seconds (checked at each accept and each :meth:`ControlServer.expire`).

A status socket that cannot be made (its directory missing, a path too long, another
daemon's live socket there) is a warning, not a failure: the daemon serves without it.
"""

import collections
import json
import logging
import os
import selectors
import socket
import time
from collections.abc import Callable
from typing import Any

from cryptoapi.pfkey.daemon import unixsocket
from cryptoapi.pfkey.errors import PfkeyError

log = logging.getLogger(__name__)

MAX_CONNECTIONS = 8
"""Answers under way at once; a new connection closes the oldest past this."""
ANSWER_TIMEOUT = 5.0
"""Seconds a client has to read its answer."""
SUFFIX = ".ctl"


def control_path(beside: str) -> str:
    """The default status socket of a daemon whose socket or state file is ``beside``:
    the same name with ``.ctl`` for its suffix (``keyd.sock`` -> ``keyd.ctl``)."""
    root, _ = os.path.splitext(beside)
    path = root + SUFFIX
    return path + SUFFIX if path == beside else path


class _Answer:
    """One connection and what is left of its answer."""

    __slots__ = ("left", "sock", "until")

    def __init__(self, sock: socket.socket, data: bytes, until: float) -> None:
        self.sock = sock
        self.left = memoryview(data)
        self.until = until


class ControlServer:
    """Answers each connection at ``path`` with ``status()`` as JSON (see the module doc)."""

    def __init__(
        self,
        path: str,
        status: Callable[[], dict[str, Any]],
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.path = path
        self.status = status
        self.clock = clock
        self.answered = 0
        self.listener, self._identity = unixsocket.listen(path, kind=socket.SOCK_STREAM)
        self._acceptor = unixsocket.Acceptor(self.listener)
        self._answers: collections.OrderedDict[int, _Answer] = collections.OrderedDict()
        self._selector: selectors.BaseSelector | None = None
        self._resume_at: float | None = None  # accepting paused (out of descriptors)

    @classmethod
    def open(cls, path: str, status: Callable[[], dict[str, Any]]) -> "ControlServer | None":
        """A status socket at ``path``, or None (a warning logged) if it cannot be made."""
        try:
            return cls(path, status)
        except (PfkeyError, OSError) as error:
            log.warning("no status socket at %s: %s", path, error)
            return None

    def register(self, selector: selectors.BaseSelector) -> None:
        """Watch the listening socket in ``selector`` (data: the callable to run)."""
        self._selector = selector
        selector.register(self.listener, selectors.EVENT_READ, self.on_accept)

    def on_accept(self) -> None:
        """Take the waiting connections; answer each (as far as its socket takes now).
        Out of descriptors, stop watching the socket for a while (:meth:`expire` resumes)."""
        self.expire()
        try:
            accepted, pause = self._acceptor.accept()
        except OSError as error:  # not "not now": logged, the daemon goes on
            log.warning("status socket %s: accept failed: %s", self.path, error)
            return
        for sock in accepted:
            self._start(sock)
        if pause is not None and self._selector is not None:
            self._selector.unregister(self.listener)
            self._resume_at = self.clock() + pause

    def expire(self) -> None:
        """Close the answers whose client did not read them in time; resume accepting
        when due (the loop calls this every turn)."""
        now = self.clock()
        for answer in [a for a in self._answers.values() if a.until <= now]:
            self._end(answer)
        if self._resume_at is not None and now >= self._resume_at and self._selector is not None:
            self._resume_at = None
            self._selector.register(self.listener, selectors.EVENT_READ, self.on_accept)

    def wait(self) -> float | None:
        """Seconds until :meth:`expire` has something to do, None if nothing is pending."""
        times = [a.until for a in self._answers.values()]
        if self._resume_at is not None:
            times.append(self._resume_at)
        return max(min(times) - self.clock(), 0.0) if times else None

    def _start(self, sock: socket.socket) -> None:
        while len(self._answers) >= MAX_CONNECTIONS:
            self._end(next(iter(self._answers.values())))
        data = json.dumps(self.status(), indent=2).encode() + b"\n"
        answer = _Answer(sock, data, self.clock() + ANSWER_TIMEOUT)
        self._answers[sock.fileno()] = answer
        self.answered += 1
        self._send(answer)
        if answer.sock.fileno() >= 0 and self._selector is not None:
            self._selector.register(sock, selectors.EVENT_WRITE, lambda: self._send(answer))

    def _send(self, answer: _Answer) -> None:
        try:
            while answer.left:
                answer.left = answer.left[answer.sock.send(answer.left) :]
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            pass  # the client left: nothing more to send it
        self._end(answer)

    def _end(self, answer: _Answer) -> None:
        fd = answer.sock.fileno()
        if fd < 0:
            return
        self._answers.pop(fd, None)
        if self._selector is not None and fd in self._selector.get_map():
            self._selector.unregister(answer.sock)
        answer.sock.close()

    def close(self) -> None:
        """Close every connection and the socket, and remove the socket file."""
        for answer in list(self._answers.values()):
            self._end(answer)
        if self._selector is not None and self.listener.fileno() in self._selector.get_map():
            self._selector.unregister(self.listener)
        self.listener.close()
        unixsocket.remove(self.path, self._identity)


def query(path: str, timeout: float = 5.0) -> dict[str, Any]:
    """The status a daemon's status socket at ``path`` answers (OSError if none answers,
    ValueError if the answer is not a JSON object)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(path)
        chunks = []
        while chunk := sock.recv(1 << 16):
            chunks.append(chunk)
    found = json.loads(b"".join(chunks))
    if not isinstance(found, dict):
        raise ValueError(f"{path} answered {type(found).__name__}, not a JSON object")
    return found
