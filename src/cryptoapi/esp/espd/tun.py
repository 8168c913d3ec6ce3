"""The TUN device espd reads plaintext packets from and writes decrypted ones to.

Linux's universal TUN/TAP driver (``Documentation/networking/tuntap.rst``): opening
``/dev/net/tun`` and calling ``ioctl(TUNSETIFF)`` with ``IFF_TUN | IFF_NO_PI`` attaches the
file to the device of that name, creating it if there is none (a device created this way
disappears when the file is closed, unless it was made persistent, e.g. by ``ip tuntap add``).
With ``IFF_NO_PI`` each ``read`` is one IP packet from its IP header, and each ``write`` one
packet, its family taken from the version nibble. The device is brought up
(``SIOCSIFFLAGS`` with ``IFF_UP``) and given an MTU; addresses and routes are the
administrator's (``ip addr``, ``ip route``), as with strongSwan's kernel-libipsec.

Offloads (unless ``offload=False``): with ``IFF_VNET_HDR`` every read and write starts with
a virtio-net header (:mod:`cryptoapi.esp.vnet`). espd writes the TCP segments it decrypts in
one turn as one coalesced packet where they continue one flow (:mod:`cryptoapi.esp.gro`),
which costs the kernel one packet instead of dozens and the peer's TCP one ACK. With
``segmentation`` the kernel is told that espd checksums (``TUN_F_CSUM``) and segments TCP
(``TUN_F_TSO4``, ``TSO6``) and, where the kernel has it (Linux 6.2), UDP (``TUN_F_USO4``,
``USO6``) itself: one read then brings a super-segment of up to 64 KB that espd cuts
(:mod:`cryptoapi.esp.gso`, in C where ``gso.c`` builds; espd asks for it then, see
:mod:`cryptoapi.cli.espd`). Without ``segmentation``, ``TUNSETOFFLOAD`` is 0 and reads are
one packet each, segmented and checksummed by the kernel: cut in Python, a super-segment
costs more CPU than the kernel spends (CPython sums a checksum at about 4 ns a byte). A
kernel that refuses USO gets TSO and checksums only; one that refuses those too gets the
header with no offload. Every other open turns every offload off, since a persistent
device keeps what an earlier espd turned on.

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
IFF_VNET_HDR = 0x4000
TUNSETOFFLOAD = 0x400454D0  # _IOW('T', 208, unsigned int)
TUN_F_CSUM = 0x01
TUN_F_TSO4 = 0x02
TUN_F_TSO6 = 0x04
TUN_F_USO4 = 0x20
TUN_F_USO6 = 0x40
OFFLOADS = (
    (TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6 | TUN_F_USO4 | TUN_F_USO6, "checksum, TSO and USO"),
    (TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6, "checksum and TSO"),
)
"""The offload sets tried in turn, and how the log names them."""
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
    """An open TUN device: its file descriptor (non-blocking), the kernel's name for it,
    whether reads and writes carry a virtio-net header, the offloads turned on, and whether
    reads may bring super-segments or partial checksums (offloads on reads)."""

    fd: int
    name: str
    vnet: bool = False
    offloads: str = "none"
    segmented: bool = False

    def close(self) -> None:
        os.close(self.fd)

    def gone(self, error: OSError) -> bool:
        """Whether ``error``, from a read or write, means the device went away: one of
        :data:`GONE`, or EIO (which a device that is only down gives too) when no
        interface of its name is left."""
        if error.errno in GONE:
            return True
        return error.errno == errno.EIO and not _exists(self.name)


def read_frame(fd: int, size: int) -> bytes | None:
    """One read of the device, or None when nothing is waiting: ``packetio.c``'s
    ``read_frame`` in Python (what espd takes where that does not build)."""
    try:
        return os.read(fd, size)
    except BlockingIOError:
        return None


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


def open_tun(
    name: str,
    *,
    mtu: int | None = DEFAULT_MTU,
    offload: bool = True,
    segmentation: bool = False,
) -> TunDevice:
    """Attach to (or create) the TUN device ``name``, set its MTU, bring it up; with
    ``offload``, with the virtio-net header, and with ``segmentation`` too, the
    segmentation offloads the kernel takes (see the module doc).

    Raises OSError (ENOENT without ``/dev/net/tun``, EPERM without CAP_NET_ADMIN, EINVAL or
    EBUSY for a name that is a TAP device or already attached), ValueError for a name the
    kernel cannot take."""
    raw = _ifname(name)
    flags = IFF_TUN | IFF_NO_PI | (IFF_VNET_HDR if offload else 0)
    fd = os.open(TUN_PATH, os.O_RDWR | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        reply = fcntl.ioctl(fd, TUNSETIFF, _IFREQ_FLAGS.pack(raw, flags))
        actual = _IFREQ_FLAGS.unpack(reply)[0].rstrip(b"\0")
        on_reads = _set_offloads(fd) if offload and segmentation else _clear_offloads(fd)
        offloads = f"coalesced writes, {on_reads} on reads" if offload else on_reads
        if mtu is not None:
            set_mtu(actual, mtu)
        bring_up(actual)
    except BaseException:
        os.close(fd)
        raise
    return TunDevice(fd, actual.decode(), offload, offloads, on_reads != "none")


def _clear_offloads(fd: int) -> str:
    """Turn every offload off (a persistent device keeps those of an earlier espd)."""
    fcntl.ioctl(fd, TUNSETOFFLOAD, 0)
    return "none"


def _set_offloads(fd: int) -> str:
    """Turn on the first offload set of :data:`OFFLOADS` the kernel takes; its name."""
    for bits, named in OFFLOADS:
        try:
            fcntl.ioctl(fd, TUNSETOFFLOAD, bits)
        except OSError as error:
            if error.errno != errno.EINVAL:
                raise
            continue
        return named
    return "none"


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
