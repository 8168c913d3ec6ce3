"""A small client of the key daemon: PF_KEY v2 over a Unix ``SOCK_SEQPACKET`` socket.

One message per datagram, as on a PF_KEY socket (RFC 2367 §1.3)::

    with PfkeyClient("/run/keyd.sock") as client:
        replies = client.request(Message(MsgType.DUMP, SaType.ESP))

:meth:`PfkeyClient.request` stamps the message with a sequence number unique in this process
and the client's pid, sends it and returns the replies to it: one message, or every part of
a DUMP/SPDDUMP (``sadb_msg_seq`` counts down to 0). Anything else that arrives meanwhile
(notifications the daemon broadcasts to registered clients) is kept in ``notifications``.
Every wait is bounded by ``timeout``; failures are :class:`PfkeyError` with an errno.
"""

import collections
import dataclasses
import errno
import itertools
import os
import socket
from types import TracebackType

from cryptoapi.pfkey.errors import PfkeyError
from cryptoapi.pfkey.wire.constants import MsgType
from cryptoapi.pfkey.wire.message import Message, read_header

MAX_MESSAGE = 0xFFFF * 8
"""The longest PF_KEY message: ``sadb_msg_len`` is 16 bits counting 64-bit words."""

MULTIPART = frozenset((int(MsgType.DUMP), int(MsgType.X_SPDDUMP)))

CLOSED = "the key daemon closed the connection"
"""The error text when the daemon has gone: EOF, EPIPE on send or ECONNRESET on receive."""
_GONE = frozenset((errno.EPIPE, errno.ECONNRESET))

_sequence = itertools.count(1)


def fields(data: bytes) -> tuple[int, int, int, int, int]:
    """(type, errno, satype, seq, pid) of a message's header: what tells a reply from a
    notification (EMSGSIZE for a message shorter than its header)."""
    header = read_header(data)
    return header.type, header.errno, header.satype, header.seq, header.pid


def _failed(error: OSError, doing: str) -> PfkeyError:
    """The PfkeyError for a failed send or receive (EPIPE if the OS gave no errno)."""
    code = error.errno or errno.EPIPE
    return PfkeyError(code, CLOSED if code in _GONE else f"{doing} failed: {error.strerror}")


class PfkeyClient:
    """A connection to the key daemon at ``path``."""

    def __init__(
        self, path: str | os.PathLike[str], *, timeout: float = 10.0, pid: int | None = None
    ) -> None:
        self.path = os.fspath(path)
        self.timeout = timeout
        self.pid = os.getpid() if pid is None else pid
        self.notifications: collections.deque[bytes] = collections.deque()
        self._buffer = bytearray(MAX_MESSAGE)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.sock.settimeout(timeout)
        self._wait = timeout
        try:
            self.sock.connect(self.path)
        except OSError as error:
            self.sock.close()
            code = error.errno or errno.ECONNREFUSED
            raise PfkeyError(
                code, f"cannot connect to the key daemon at {self.path}: {error.strerror}"
            ) from None

    def __enter__(self) -> "PfkeyClient":
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        self.sock.close()

    def _set_wait(self, wait: float) -> None:
        """The socket's timeout (settimeout costs system calls: only when it changes)."""
        if wait != self._wait:
            self.sock.settimeout(wait)
            self._wait = wait

    def send(self, data: bytes | Message) -> None:
        """Send one message (as it is: no sequence number is stamped), waiting at most the
        client's timeout for room (ETIMEDOUT)."""
        raw = data.encode() if isinstance(data, Message) else data
        self._set_wait(self.timeout)
        try:
            self.sock.send(raw)
        except TimeoutError:
            raise PfkeyError(errno.ETIMEDOUT, "the key daemon does not accept messages") from None
        except OSError as error:
            raise _failed(error, "send") from None

    def send_nowait(self, data: bytes) -> bool:
        """Send one message if the socket has room for it now; False, nothing sent, if it
        has none (a daemon that is not reading): for a caller that must never wait."""
        self._set_wait(0.0)
        try:
            self.sock.send(data)
        except BlockingIOError:
            return False
        except OSError as error:
            raise _failed(error, "send") from None
        return True

    def receive(self, timeout: float | None = None) -> bytes:
        """The next message from the daemon, waiting at most ``timeout`` seconds (the
        client's timeout by default); ETIMEDOUT, or EPIPE when the daemon has gone."""
        self._set_wait(self.timeout if timeout is None else timeout)
        try:
            size = self.sock.recv_into(self._buffer)
        except TimeoutError:
            raise PfkeyError(errno.ETIMEDOUT, "no message from the key daemon in time") from None
        except OSError as error:
            raise _failed(error, "receive") from None
        if size == 0:
            raise PfkeyError(errno.EPIPE, CLOSED)
        return bytes(memoryview(self._buffer)[:size])

    def stamp(self, message: Message) -> Message:
        """``message`` with a fresh sequence number and this client's pid."""
        return dataclasses.replace(message, seq=next(_sequence) & 0xFFFFFFFF, pid=self.pid)

    def request(self, message: Message | bytes) -> list[bytes]:
        """Send ``message`` and return its replies (see the module docstring). A Message is
        stamped first (:meth:`stamp`); bytes are sent as they are and matched by their own
        header."""
        data = self.stamp(message).encode() if isinstance(message, Message) else message
        type_, _, _, seq, pid = fields(data)
        self.send(data)
        replies: list[bytes] = []
        while True:
            reply = self.receive()
            r_type, r_errno, _, r_seq, r_pid = fields(reply)
            if r_type != type_ or r_pid != pid:
                self.notifications.append(reply)
            elif type_ in MULTIPART and not (r_errno and r_seq != seq):
                replies.append(reply)
                if r_seq == 0 or r_errno:
                    return replies
            elif r_seq == seq:
                return [reply]
            else:
                self.notifications.append(reply)

    def notification(self, timeout: float | None = None) -> bytes:
        """The next message that is not a reply: one kept already, or the next to arrive."""
        if self.notifications:
            return self.notifications.popleft()
        return self.receive(timeout)
