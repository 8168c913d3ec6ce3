"""A writer of libpcap capture files (the classic format Wireshark and tshark read).

The format (draft-ietf-opsawg-pcap §4-5): a 24-byte file header — magic 0xa1b2c3d4
(microsecond timestamps), version 2.4, zone and accuracy 0, snap length, link type — then
per packet a 16-byte record header (seconds, microseconds, captured and original length) and
the packet. Everything is written little-endian; readers recognise the byte order by the
magic. Link types (the tcpdump.org registry): ``LINKTYPE_RAW`` (101), each record an IPv4 or
IPv6 packet from its IP header, or ``LINKTYPE_ETHERNET`` (1), for tools that want frames:
the packet behind a made-up Ethernet header whose locally administered MAC addresses tell
direction (sent ``02:00:00:00:00:01`` -> ``...:02``, received the other way).

Durability: each record is one ``write`` on an unbuffered file, so a capture cut short by
``kill -9`` holds every packet written before it, at worst with the last record truncated.
"""

import errno
import os
import stat
import struct
import time
from collections.abc import Callable
from typing import BinaryIO

MAGIC = 0xA1B2C3D4
VERSION = (2, 4)
SNAPLEN = 65535
LINKTYPE_ETHERNET = 1
LINKTYPE_RAW = 101
LINKTYPES = {"raw": LINKTYPE_RAW, "ethernet": LINKTYPE_ETHERNET}

FILE_HEADER = struct.Struct("<IHHiIII")
RECORD_HEADER = struct.Struct("<IIII")
_ETHER = struct.Struct(">6s6sH")
_LOCAL = bytes.fromhex("020000000001")
_PEER = bytes.fromhex("020000000002")
_ETHERTYPE = {4: 0x0800, 6: 0x86DD}


def file_header(linktype: int) -> bytes:
    """The 24-byte pcap file header for ``linktype``."""
    return FILE_HEADER.pack(MAGIC, *VERSION, 0, 0, SNAPLEN, linktype)


def ethernet(packet: bytes, *, sent: bool) -> bytes:
    """``packet`` in an Ethernet II frame with the made-up addresses of the direction."""
    version = packet[0] >> 4 if packet else 0
    source, destination = (_LOCAL, _PEER) if sent else (_PEER, _LOCAL)
    return _ETHER.pack(destination, source, _ETHERTYPE.get(version, 0x0800)) + packet


def _open_capture(path: str | os.PathLike[str]) -> BinaryIO:
    """``path`` opened empty for writing, as a root daemon must open a path a user named:
    never through a symbolic link (``O_NOFOLLOW``: ELOOP), and an existing file is
    truncated only if it is a regular file of ours with no other name (EPERM otherwise:
    a hard link could name any file of root's). A new file is made mode 0640."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NOCTTY | os.O_NONBLOCK
    try:
        fd = os.open(path, flags, 0o640)
    except OSError as error:
        if error.errno == errno.ELOOP and os.path.islink(path):
            raise OSError(
                errno.ELOOP, f"{os.fspath(path)}: is a symbolic link; name the capture file itself"
            ) from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_nlink != 1:
            problem = "is not a regular file of ours with one name: not overwritten"
            raise OSError(errno.EPERM, f"{os.fspath(path)}: {problem}")
        os.ftruncate(fd, 0)
        os.set_blocking(fd, True)
        return open(fd, "wb", buffering=0)
    except BaseException:
        os.close(fd)
        raise


class PcapWriter:
    """Appends packets to a new pcap file at ``path`` (replacing an old one of ours; see
    :func:`_open_capture`)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        linktype: int = LINKTYPE_RAW,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if linktype not in LINKTYPES.values():
            raise ValueError(f"link type {linktype} is not RAW (101) or ETHERNET (1)")
        self.linktype = linktype
        self.clock = clock
        self.packets = 0
        self._file: BinaryIO = _open_capture(path)
        self._file.write(file_header(linktype))

    def write(self, packet: bytes, *, sent: bool) -> None:
        """Record one IP packet, ``sent`` by espd or received by it, stamped now."""
        self.write_frame(
            ethernet(packet, sent=sent) if self.linktype == LINKTYPE_ETHERNET else packet
        )

    def write_frame(self, frame: bytes) -> None:
        """Record one frame that is already of the file's link type, stamped now."""
        captured = frame[:SNAPLEN]
        now = self.clock()
        seconds = int(now)
        micros = min(int((now - seconds) * 1_000_000), 999_999)
        head = RECORD_HEADER.pack(seconds, micros, len(captured), len(frame))
        self._file.write(head + captured)
        self.packets += 1

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> "PcapWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
