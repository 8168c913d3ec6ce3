"""The key daemon's socket file: a Unix ``SOCK_SEQPACKET`` socket only its owner can use.

The socket is bound with umask 0177 and set to mode 0600, so connecting (which needs write
permission on the file) is for the owner alone; :func:`peer_uid` lets the daemon also check
each client's credentials (``SO_PEERCRED``). A socket file no daemon listens on (one that
died without cleaning up) is replaced; anything else at the path is refused, and the daemon
removes the file at exit only if it is still the one it bound.

An :class:`Acceptor` takes the owner's connections; when ``accept`` fails for want of
resources it tells the daemon to stop accepting for a while instead of failing, as a
server must that is to outlive a full file table. :func:`peer_shut_down` tells a client's
end of file from an empty datagram, which ``recv`` returns alike.
"""

import errno
import logging
import os
import select
import socket
import stat
import struct

from cryptoapi.pfkey.errors import PfkeyError

log = logging.getLogger(__name__)

Identity = tuple[int, int]
"""(st_dev, st_ino) of the socket file a daemon bound."""
_CREDENTIALS = struct.Struct("3i")  # struct ucred: pid, uid, gid

ACCEPT_ERRORS = frozenset((errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM))
"""``accept`` failures that mean "not now" (no descriptor or memory for one more client)."""
ACCEPT_RETRY = 0.1
"""Seconds to stop accepting after the first failure of an episode, doubled at each next
failure up to ``ACCEPT_RETRY_MAX`` (Go's ``http.Server.Serve`` doubles 5 ms up to 1 s;
asyncio's ``_accept_connection`` waits 1 s)."""
ACCEPT_RETRY_MAX = 1.0


def clear_stale(path: str, kind: int = socket.SOCK_SEQPACKET) -> None:
    """Remove a socket file no daemon listens on (a ``kind`` socket: a probe of another
    kind would find nobody); EEXIST for a file that is not a socket, EADDRINUSE when a
    daemon listens there."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(info.st_mode):
        raise PfkeyError(errno.EEXIST, f"{path} exists and is not a socket")
    probe = socket.socket(socket.AF_UNIX, kind)
    try:
        probe.connect(path)
    except OSError:
        os.unlink(path)  # nobody listens: a daemon that died without cleaning up
    else:
        raise PfkeyError(errno.EADDRINUSE, f"a key daemon already listens on {path}")
    finally:
        probe.close()


def listen(
    path: str, backlog: int = 64, *, kind: int = socket.SOCK_SEQPACKET
) -> tuple[socket.socket, Identity]:
    """A non-blocking listening socket of ``kind`` at ``path`` (mode 0600) and the file's
    identity (a daemon's status socket is a stream: :mod:`.control`)."""
    clear_stale(path, kind)
    sock = socket.socket(socket.AF_UNIX, kind)
    old = os.umask(0o177)
    try:
        sock.bind(path)
    except OSError as error:
        sock.close()
        code = error.errno or errno.EINVAL
        raise PfkeyError(code, f"cannot bind {path}: {error.strerror or error}") from None
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    info = os.stat(path)
    sock.listen(backlog)
    sock.setblocking(False)
    return sock, (info.st_dev, info.st_ino)


def remove(path: str, identity: Identity) -> None:
    """Remove the socket file at ``path`` if it is still the one with ``identity``."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if (info.st_dev, info.st_ino) == identity:
        os.unlink(path)


def peer_uid(sock: socket.socket) -> int:
    """The user id of the process at the other end of a connected Unix socket."""
    raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _CREDENTIALS.size)
    uid: int = _CREDENTIALS.unpack(raw)[1]
    return uid


def peer_shut_down(sock: socket.socket) -> bool:
    """Whether the peer of a connected Unix socket has shut its sending side (closed the
    socket, or ``shutdown(SHUT_WR)``).

    On ``SOCK_SEQPACKET`` a read of 0 bytes is either an empty datagram or the end of file,
    and neither ``recvmsg`` flags nor ``FIONREAD`` nor ``MSG_PEEK`` tell them apart. Linux's
    ``unix_dgram_poll`` does: it reports POLLRDHUP (with POLLHUP once the peer is closed)
    only after the peer's side is shut, so after a 0-byte read no POLLRDHUP means it was an
    empty datagram (measured on Linux 6.x: an empty datagram from an open peer leaves no
    event, a closed peer shows POLLRDHUP|POLLHUP). With the peer shut, the read was its end
    of file, or an empty datagram sent just before it: either way nothing more will come.
    If ``poll`` itself fails (ENOMEM), the read is taken for the end of file.
    """
    poller = select.poll()
    poller.register(sock, select.POLLRDHUP)  # POLLHUP and POLLERR are reported anyway
    try:
        return bool(poller.poll(0))
    except OSError:
        return True


class Acceptor:
    """Takes the connections waiting on ``listener`` whose peer is its owner.

    An episode of ``accept`` failures for want of resources (``ACCEPT_ERRORS``) is logged
    once, when it starts, and once more when it ends (at the first ``accept`` that does not
    fail): a failure per retry would say nothing new.
    """

    def __init__(self, listener: socket.socket) -> None:
        self.listener = listener
        self.failures = 0
        """Every ``accept`` that failed for want of resources."""
        self._failing = 0  # failures in the current episode
        self._retry = ACCEPT_RETRY

    def accept(self) -> tuple[list[socket.socket], float | None]:
        """The owner's connections waiting (non-blocking); and, if ``accept`` failed for want
        of resources, the seconds to stop accepting for (else None)."""
        accepted: list[socket.socket] = []
        while True:
            try:
                sock, _ = self.listener.accept()
            except (BlockingIOError, InterruptedError):
                self._recovered()
                return accepted, None
            except OSError as error:
                if error.errno == errno.ECONNABORTED:
                    continue  # that client left before it was taken: take the next
                if error.errno not in ACCEPT_ERRORS:
                    raise
                return accepted, self._failed(error)
            self._recovered()
            if _owned(sock):
                accepted.append(sock)

    def _failed(self, error: OSError) -> float:
        """Count a failure; the seconds to wait before the next ``accept``."""
        if self._failing:
            self._retry = min(2 * self._retry, ACCEPT_RETRY_MAX)
        else:
            self._retry = ACCEPT_RETRY
            log.warning(
                "cannot accept clients (%s): retrying after %g s, up to %g s apart; "
                "the connected clients are served meanwhile",
                error.strerror or error, ACCEPT_RETRY, ACCEPT_RETRY_MAX,
            )  # fmt: skip
        self._failing += 1
        self.failures += 1
        return self._retry

    def _recovered(self) -> None:
        if self._failing:
            log.info("accepting clients again after %d failed attempts", self._failing)
            self._failing = 0


def _owned(sock: socket.socket) -> bool:
    """Whether an accepted connection's peer is this process's user (then it is made
    non-blocking); otherwise it is closed."""
    try:
        uid = peer_uid(sock)
    except OSError:
        sock.close()
        return False
    if uid != os.geteuid():
        log.warning("refused a client of uid %d: only uid %d may connect", uid, os.geteuid())
        sock.close()
        return False
    sock.setblocking(False)
    return True
