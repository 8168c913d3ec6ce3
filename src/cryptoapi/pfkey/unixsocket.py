"""The key daemon's socket file: a Unix ``SOCK_SEQPACKET`` socket only its owner can use.

The socket is bound with umask 0177 and set to mode 0600, so connecting (which needs write
permission on the file) is for the owner alone; :func:`peer_uid` lets the daemon also check
each client's credentials (``SO_PEERCRED``). A socket file no daemon listens on (one that
died without cleaning up) is replaced; anything else at the path is refused, and the daemon
removes the file at exit only if it is still the one it bound.
"""

import errno
import os
import socket
import stat
import struct

from cryptoapi.pfkey.errors import PfkeyError

Identity = tuple[int, int]
"""(st_dev, st_ino) of the socket file a daemon bound."""
_CREDENTIALS = struct.Struct("3i")  # struct ucred: pid, uid, gid


def clear_stale(path: str) -> None:
    """Remove a socket file no daemon listens on; EEXIST for a file that is not a socket,
    EADDRINUSE when a daemon listens there."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(info.st_mode):
        raise PfkeyError(errno.EEXIST, f"{path} exists and is not a socket")
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        probe.connect(path)
    except OSError:
        os.unlink(path)  # nobody listens: a daemon that died without cleaning up
    else:
        raise PfkeyError(errno.EADDRINUSE, f"a key daemon already listens on {path}")
    finally:
        probe.close()


def listen(path: str, backlog: int = 64) -> tuple[socket.socket, Identity]:
    """A non-blocking listening socket at ``path`` (mode 0600) and the file's identity."""
    clear_stale(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
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
