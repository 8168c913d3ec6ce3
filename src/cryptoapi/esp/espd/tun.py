"""The TUN device espd reads plaintext packets from and writes decrypted ones to.

Linux's universal TUN/TAP driver (``Documentation/networking/tuntap.rst``): opening
``/dev/net/tun`` and calling ``ioctl(TUNSETIFF)`` with ``IFF_TUN | IFF_NO_PI`` attaches the
file to the device of that name, creating it if there is none (a device created this way
disappears when the file is closed, unless it was made persistent, e.g. by ``ip tuntap add``).
With ``IFF_NO_PI`` each ``read`` is one IP packet from its IP header, and each ``write`` one
packet, its family taken from the version nibble. The device is brought up
(``SIOCSIFFLAGS`` with ``IFF_UP``) and given an MTU; addresses and routes are the
administrator's (``ip addr``, ``ip route``), as with strongSwan's kernel-libipsec.

A device deleted under its open file (``ip link del``, or ``ip tuntap del`` of a persistent
one) leaves the file detached: every ``read`` and ``write`` then fails with EBADFD (Linux
``tun_chr_read_iter``: no device) and ``poll`` reports it readable (EPOLLERR) for ever, so a
loop that only counted the error would spin. :meth:`TunDevice.gone` tells those errors
(:data:`GONE`, and EIO once no interface of the name is left) from a packet's failure;
the loop ends with :class:`TunGone` for them.
"""

import errno
import fcntl
import os
import socket
import struct
from dataclasses import dataclass

TUN_PATH = "/dev/net/tun"
TUNSETIFF = 0x400454CA  # _IOW('T', 202, int)
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000
SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
SIOCSIFMTU = 0x8922
IFF_UP = 0x1
IFNAMSIZ = 16

_IFREQ_FLAGS = struct.Struct(f"{IFNAMSIZ}sH22x")  # struct ifreq: name, ifr_flags
_IFREQ_INT = struct.Struct(f"{IFNAMSIZ}si20x")  # struct ifreq: name, ifr_mtu

GONE = frozenset((errno.EBADFD, errno.ENODEV, errno.ENXIO))
"""Errors of a read or write that mean the file has no device any more."""

DEFAULT_MTU = 1400
"""kernel-libipsec's TUN MTU: room for the outer IP, UDP and ESP headers, IV, padding and
ICV within a 1500-byte link."""


@dataclass(frozen=True, slots=True)
class TunDevice:
    """An open TUN device: its file descriptor (non-blocking) and the kernel's name for it."""

    fd: int
    name: str

    def close(self) -> None:
        os.close(self.fd)

    def gone(self, error: OSError) -> bool:
        """Whether ``error``, from a read or write, means the device went away: one of
        :data:`GONE`, or EIO (which a device that is only down gives too) when no
        interface of its name is left."""
        if error.errno in GONE:
            return True
        return error.errno == errno.EIO and not _exists(self.name)


class TunGone(Exception):
    """The TUN device went away under espd (``ip link del``): nothing more can pass. The
    message is the one line espd exits with, naming the device."""

    def __init__(self, tun: TunDevice, action: str, error: OSError) -> None:
        reason = error.strerror or str(error)
        super().__init__(f"TUN device {tun.name} is gone ({action}: {reason}); exiting")
        self.errno = error.errno


def _exists(name: str) -> bool:
    try:
        socket.if_nametoindex(name)
    except OSError:
        return False
    return True


def open_tun(name: str, *, mtu: int | None = DEFAULT_MTU) -> TunDevice:
    """Attach to (or create) the TUN device ``name``, set its MTU, bring it up.

    Raises OSError (ENOENT without ``/dev/net/tun``, EPERM without CAP_NET_ADMIN, EINVAL or
    EBUSY for a name that is a TAP device or already attached), ValueError for a name the
    kernel cannot take."""
    raw = _ifname(name)
    fd = os.open(TUN_PATH, os.O_RDWR | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        reply = fcntl.ioctl(fd, TUNSETIFF, _IFREQ_FLAGS.pack(raw, IFF_TUN | IFF_NO_PI))
        actual = _IFREQ_FLAGS.unpack(reply)[0].rstrip(b"\0")
        if mtu is not None:
            set_mtu(actual, mtu)
        bring_up(actual)
    except BaseException:
        os.close(fd)
        raise
    return TunDevice(fd, actual.decode())


def _ifname(name: str) -> bytes:
    raw = name.encode()
    if not raw or len(raw) >= IFNAMSIZ or b"/" in raw or b"\0" in raw or raw.isspace():
        raise ValueError(f"{name!r} is not an interface name (1-{IFNAMSIZ - 1} bytes)")
    return raw


def bring_up(name: bytes) -> None:
    """Set ``IFF_UP`` on the interface, keeping its other flags."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as control:
        got = fcntl.ioctl(control, SIOCGIFFLAGS, _IFREQ_FLAGS.pack(name, 0))
        flags = _IFREQ_FLAGS.unpack(got)[1]
        if not flags & IFF_UP:
            fcntl.ioctl(control, SIOCSIFFLAGS, _IFREQ_FLAGS.pack(name, flags | IFF_UP))


def set_mtu(name: bytes, mtu: int) -> None:
    """Set the interface's MTU (EINVAL below 68 for IPv4, or above what it takes)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as control:
        fcntl.ioctl(control, SIOCSIFMTU, _IFREQ_INT.pack(name, mtu))
