"""espd's loop: packets between the TUN device and the ESP sockets, through the data path.

One thread, one epoll loop. The packets' sources (the TUN and the ESP sockets) are watched
by an epoll of their own, which also watches a :mod:`selectors` selector of every other
source (the wake-up pipe, keyd's socket, the status socket): a packet's turn runs no
selector code, whose Python costs most when an idle tunnel's packet finds the caches cold.
Routing, per readable source:

- TUN (plaintext from the host's routes): the packets of a read go to
  ``datapath.output_many``; each ESP packet it returns is sent on the socket of its family
  and encapsulation (UDP when it has ports, raw protocol 50 when not). A packet no IPsec
  policy covers (ports -1) is dropped and counted: espd sends nothing in the clear. A
  socket with UDP GSO gets the
  turn's datagrams at the end of the turn, per peer in order, as few ``UDP_SEGMENT``
  sends (:mod:`.batches`); where the kernel refuses one (EIO, EINVAL) its datagrams go
  one by one (``EspdUdpGsoFallbacks``). The others send each packet as it comes.
- an ESP socket: the packet goes to ``datapath.input`` (a whole IPv4 packet from a raw
  socket), or its datagrams to ``datapath.input_many`` (the payloads, with the addresses
  the socket reported);
  the decrypted packets, if any, are written to the TUN once the socket's turn is done. A
  UDP GRO buffer is cut into its datagrams first (:func:`.sockets.segments`), each
  decrypted on its own.

A TUN device with a virtio-net header (:mod:`.tun`) brings its offloads into both ways: a
read may be a super-segment or have its checksum left partial, which
:func:`cryptoapi.esp.gso.split` turns into whole packets before ``output_many`` (a frame it
cannot is dropped and counted, ``EspdTunOffloadErrors``); and a turn's decrypted packets
are written coalesced where they continue one TCP or UDP flow
(:func:`cryptoapi.esp.gro.coalesce`), each other one by itself with the plain header. Both
run in C where their C twins build (:mod:`cryptoapi.esp.native`; logged at start).
- keyd's socket (``--socket``): broadcasts go to the :class:`~.follower.Follower`.
- the signal pipe: SIGUSR1 prints the counters, SIGTERM and SIGINT stop the loop (one
  line logged: the signal, what was sent and written);
- the status socket (``--control``, :meth:`Endpoint.watch`): each connection is answered
  with espd's status as JSON, never waiting for the client;
- the clock: once a second ``datapath.tick()`` runs the key manager's lifetimes (their
  EXPIREs go to the data path's ``notify``), and a lost keyd is reconnected when due.

Each source gives at most ``BATCH`` packets per turn (datagrams, for a GRO socket; a GRO
buffer is never cut short), so none starves the others. Packet counters count datagrams,
GSO or not (``EspdSendPackets``, ``EspdReceivePackets``, ``EspdSendError*``); the
offloads' own count calls (``EspdUdpGsoSends``, ``EspdUdpGroReceives``,
``EspdTunGsoReads``, ``EspdTunGroWrites``), and the TUN's count packets
(``EspdTunInPackets``, ``EspdTunOutPackets``) whether coalesced or not. The loop
moves bytes and routes results; it parses no packet (the data path does; the capture's
outer headers are rebuilt by :mod:`.frames`) and changes no SA (the key manager does,
through PF_KEY messages).

Nothing a packet holds stops the loop: the data path drops and counts bad packets, and
every send or write error (EAGAIN, ENOBUFS, ECONNREFUSED, EHOSTUNREACH ...) or receive
error is counted by errno and the packet dropped, as the kernel drops a packet it cannot
queue. An exception the data path should not raise is logged once and counted
(``EspdDatapathExceptions``) and the packet dropped. One thing does stop it: the TUN device
going away (deleted under espd: reads and writes fail with EBADFD for ever, see
:mod:`.tun`). Then :meth:`Endpoint.run` logs one line naming the device, prints the
counters, closes everything and returns 1, rather than spin on a device that will not
come back.

Durability: espd keeps no state of its own. Its SAs are the key manager's (a setkey file
read at start, or keyd's, followed); sequence numbers and replay windows live in memory
and start again with the process, as a kernel's do at reboot. The capture is written
record by record (see :mod:`.pcap`). The counters are printed at exit.
"""

import contextlib
import errno
import functools
import logging
import os
import select
import selectors
import signal
import socket
import sys
import time
import traceback
from collections import Counter
from collections.abc import Callable, Sequence
from types import FrameType
from typing import Protocol, TextIO

from cryptoapi.esp import gro, gso, vnet
from cryptoapi.esp.espd.batches import SendBatches
from cryptoapi.esp.espd.follower import Follower
from cryptoapi.esp.espd.frames import outer_packet
from cryptoapi.esp.espd.notices import Notices
from cryptoapi.esp.espd.pcap import PcapWriter
from cryptoapi.esp.espd.role import KeydRole
from cryptoapi.esp.espd.sockets import Datagram, EspSocket, Received, packet_io, segments
from cryptoapi.esp.espd.tun import TunDevice, TunGone
from cryptoapi.esp.espd.tun import read_frame as tun_read_frame
from cryptoapi.pfkey.daemon.control import ControlServer
from cryptoapi.pfkey.daemon.status import signal_name

log = logging.getLogger(__name__)

BATCH = 64
"""Packets taken from one source per turn."""
MAX_PACKET = 65535
READ_SIZE = MAX_PACKET + vnet.SIZE
TICK = 1.0
"""The longest wait between two looks at the key manager's lifetime timers."""
GSO_REFUSED = frozenset((errno.EIO, errno.EINVAL))
"""What ``udp_send_skb`` says to a ``UDP_SEGMENT`` send it cannot segment (see
:mod:`.sockets`): its datagrams are then sent one by one."""


class Outbound(Datagram, Protocol):
    """What ``output_many`` returns per packet (the data path's ``Outbound``)."""

    @property
    def family(self) -> int: ...


class DataPath(Protocol):
    """The part of :class:`cryptoapi.esp.Datapath` the loop uses."""

    def output_many(self, packets: Sequence[bytes]) -> Sequence[Outbound]: ...
    def input(self, packet: bytes) -> bytes | None: ...
    def input_many(
        self, payloads: Sequence[bytes], src: bytes, dst: bytes, *, udp: bool
    ) -> list[bytes]: ...
    def tick(self) -> None: ...
    def stats(self) -> dict[str, int]: ...
    def format_stats(self) -> str: ...
    def close(self) -> None: ...


class Endpoint:
    """The loop over ``tun`` and ``sockets`` for ``datapath`` (see the module docstring)."""

    def __init__(
        self,
        datapath: DataPath,
        tun: TunDevice,
        sockets: list[EspSocket],
        *,
        follower: Follower | None = None,
        notices: Notices | None = None,
        pcap: PcapWriter | None = None,
        out: TextIO = sys.stdout,
    ) -> None:
        self.datapath = datapath
        self.tun = tun
        self.sockets = sockets
        self.follower = follower
        self.notices = notices
        self.pcap = pcap
        self.out = out
        self.counters: Counter[str] = Counter()
        self._by_route = {(s.family, not s.raw): s for s in sockets}
        self._coalesce: gro.Coalesce = gro.coalesce
        self._split: gso.Split = gso.split
        if tun.vnet:  # the offloads' C twins, each built where it is used (esp.native)
            self._coalesce, language = gro.coalescer()
            said = f"writes coalesced in {language}"
            if tun.segmented:  # else every read is a plain packet: nothing to cut
                self._split, language = gso.splitter()
                said += f", reads cut in {language}"
            log.info("TUN device %s: %s", tun.name, said)
        io = packet_io()
        read = tun_read_frame if io is None else io.read_frame
        self._read_frame = functools.partial(read, tun.fd, READ_SIZE)
        log.info("TUN reads and UDP receives and sends in %s", "Python" if io is None else "C")
        self._batches = SendBatches()
        self._stopping = False
        self._stats_wanted = False
        self._sources = select.epoll()
        self._handlers: dict[int, Callable[[], None]] = {}  # by fd, for _sources
        self._selector = selectors.DefaultSelector()  # the control plane's, in _sources
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._keyd: tuple[int | None, int] = (None, 0)  # (fd, connection number) watched
        self._next_tick = 0.0
        self.control: ControlServer | None = None
        self.role: KeydRole | None = None
        """With ``--hold-until-active``: carry traffic only while keyd is active (.role)."""
        self.stopped_by: int | None = None
        """The signal that stopped the loop (None: :meth:`stop` was called)."""

    # -- control -----------------------------------------------------------------------

    def stop(self) -> None:
        """End :meth:`run` (from a signal handler or another thread)."""
        self._stopping = True
        self._wake()

    def watch(self, control: ControlServer) -> None:
        """Answer status queries on ``control`` in this loop; closed with the endpoint."""
        self.control = control
        control.register(self._selector)

    def request_stats(self) -> None:
        """Print the counters at the next turn of the loop (SIGUSR1)."""
        self._stats_wanted = True
        self._wake()

    def _wake(self) -> None:
        with contextlib.suppress(OSError):  # full (a wake-up is pending) or closed (ended)
            self._wake_w.send(b"x")

    def run(self, ready: Callable[[], None] | None = None) -> int:
        """Serve until SIGTERM/SIGINT (or :meth:`stop`); print the counters; 0. ``ready``
        is called once the signal handlers are in place and every source is watched.
        1 (the reason logged) if the TUN device goes away."""
        previous = self._signals()
        try:
            self._register()
            if ready is not None:
                ready()
            while not self._stopping:
                self._turn()
        except TunGone as gone:
            log.error("%s", gone)
            return 1
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            self.print_stats()
            self.close()
        log.info("%s", self.farewell())
        return 0

    def farewell(self) -> str:
        """The last line: the signal that stopped espd, and what it sent and wrote."""
        said = f"stopping on {signal_name(self.stopped_by)}: counters printed"
        notices = self.notices
        if notices is not None and notices.forward is not None:
            reports = notices.reports.sent if notices.reports is not None else 0
            said += (
                f", {reports} usage reports sent to the key daemon"
                f" ({notices.pending()} notices left unsent)"
            )
        return said + ", sequence floors written"

    def _signals(self) -> dict[int, Callable[[int, FrameType | None], object] | int | None]:
        def on_stop(signum: int, frame: FrameType | None) -> None:
            self.stopped_by = signum
            self.stop()

        def on_stats(signum: int, frame: FrameType | None) -> None:
            self.request_stats()

        handlers = {signal.SIGTERM: on_stop, signal.SIGINT: on_stop, signal.SIGUSR1: on_stats}
        return {sig: signal.signal(sig, handler) for sig, handler in handlers.items()}

    def _register(self) -> None:
        self._selector.register(self._wake_r, selectors.EVENT_READ, self._on_wake)
        self._watch_keyd()
        self._watch(self.tun.fd, self._on_tun)
        for sock in self.sockets:
            self._watch(sock.fileno(), self._receiver(sock))
        self._watch(self._selector.fileno(), self._on_control)

    def _watch(self, fd: int, handler: Callable[[], None]) -> None:
        self._sources.register(fd, select.EPOLLIN)
        self._handlers[fd] = handler

    def _receiver(self, sock: EspSocket) -> Callable[[], None]:
        return lambda: self._on_esp(sock)

    def _watch_keyd(self) -> None:
        """Watch the follower's socket: none while it is disconnected, the new one after a
        reconnect. A connection is known by its number, not its fd, which the new socket
        is likely to reuse (and a closed fd leaves epoll without a word)."""
        if self.follower is None:
            return
        watched = (self.follower.fileno(), self.follower.connects)
        if watched == self._keyd:
            return
        if self._keyd[0] is not None:
            self._selector.unregister(self._keyd[0])
        if watched[0] is not None:
            self._selector.register(watched[0], selectors.EVENT_READ, self._on_keyd)
        self._keyd = watched

    def _turn(self) -> None:
        pending = self.follower is not None and self.follower.pending()
        for fd, _ in self._sources.poll(0.0 if pending else self._timeout()):
            self._handlers[fd]()  # an error or hang-up too: the read says which
        if pending:
            self._on_keyd()
        now = time.monotonic()
        if now >= self._next_tick:  # lifetimes count in seconds: once a second will do
            self._next_tick = now + TICK
            self.datapath.tick()
        if self.follower is not None:
            self.follower.retry_if_due()
        if self.role is not None:
            self.role.poll()
        if self.notices is not None:  # what the data path said this turn, never waiting
            self.notices.flush()
        if self.control is not None:
            self.control.expire()
        self._watch_keyd()
        if self._stats_wanted:
            self._stats_wanted = False
            self.print_stats()

    def _timeout(self) -> float:
        if self.follower is not None:
            return min(TICK, self.follower.until_retry())
        return TICK

    # -- the sources -------------------------------------------------------------------

    def _on_control(self) -> None:
        for key, _ in self._selector.select(0):
            key.data()

    def _on_wake(self) -> None:
        try:
            while self._wake_r.recv(64):
                pass
        except (BlockingIOError, InterruptedError):
            pass

    def _on_keyd(self) -> None:
        if self.follower is not None:
            self.follower.on_readable()

    def _on_tun(self) -> None:
        try:
            self._read_tun()
        finally:  # the datagrams of the packets read, even when the TUN went away
            self._flush()

    def _read_tun(self) -> None:
        """Read up to a batch of packets, then protect them in one data path call (what
        was read before a read failed, too)."""
        packets: list[bytes] = []
        reads = 0
        try:
            while reads < BATCH and len(packets) < BATCH:  # a super-segment is never cut
                try:
                    frame = self._read_frame()
                except OSError as error:
                    self._tun_error("EspdTunReadError", "read", error)
                    break
                if frame is None:  # nothing more waiting
                    break
                reads += 1
                if not self.tun.vnet:
                    packets.append(frame)
                elif gso.plain(frame):  # the common case, without a call of its own
                    packets.append(frame[vnet.SIZE :])
                else:
                    packets += self._unframed(frame)
        finally:
            self.counters["EspdTunInPackets"] += len(packets)
            self._output(packets)

    def _unframed(self, frame: bytes) -> list[bytes]:
        """The packets a read with a virtio-net header stands for (see :mod:`.tun`)."""
        try:
            packets = self._split(frame)
        except vnet.OffloadError as error:
            if not self.counters["EspdTunOffloadErrors"]:
                log.warning("dropped a TUN read (logged once): %s", error)
            self.counters["EspdTunOffloadErrors"] += 1
            return []
        if len(packets) > 1:
            self.counters["EspdTunGsoReads"] += 1
        return packets

    def _output(self, packets: Sequence[bytes]) -> None:
        if self.role is not None and not self.role.carrying:  # a standby gateway
            self.counters["EspdStandbyDropped"] += len(packets)
            return
        try:
            outs = self.datapath.output_many(packets)
        except Exception:
            self._datapath_exception()
            return
        last: tuple[bytes, bytes, int, int] | None = None  # the route of ``waiting``
        waiting: list[Datagram] = []
        for out in outs:
            family, src, dst, dport = out.family, out.src, out.dst, out.dport
            if (src, dst, dport, family) == last:  # as the one before: the same batch
                waiting.append(out)
                continue
            last = None
            if dport < 0:
                self.counters["EspdOutNoPolicyDropped"] += 1
                continue
            sock = self._by_route.get((family, dport > 0))
            if sock is None:
                self.counters["EspdOutNoSocket"] += 1
            elif sock.gso:
                waiting = self._batches.add(sock, out)
                last = (src, dst, dport, family)
            else:
                self._send(sock, out)

    def _flush(self) -> None:
        """Send what GSO sockets were given this turn (see :mod:`.batches`)."""
        for sock, run in self._batches.drain():
            if len(run) == 1:
                self._send(sock, run[0])
            else:
                self._send_segments(sock, run)

    def _send(self, sock: EspSocket, out: Datagram) -> None:
        try:
            sock.send(out)
        except OSError as error:
            self._count_error("EspdSendError", error)
            return
        self.counters["EspdSendPackets"] += 1
        if self.pcap is not None:
            self._capture_sent(out)

    def _send_segments(self, sock: EspSocket, run: Sequence[Datagram]) -> None:
        """One ``UDP_SEGMENT`` send of ``run``; if the kernel cannot segment it, one send
        each (counted); any other error drops and counts every datagram of it."""
        try:
            sock.send_segments(run)
        except OSError as error:
            if error.errno in GSO_REFUSED:
                self.counters["EspdUdpGsoFallbacks"] += 1
                for out in run:
                    self._send(sock, out)
            else:
                self._count_error("EspdSendError", error, len(run))
            return
        self.counters["EspdUdpGsoSends"] += 1
        self.counters["EspdSendPackets"] += len(run)
        if self.pcap is not None:
            for out in run:
                self._capture_sent(out)

    def _capture_sent(self, out: Datagram) -> None:
        self._capture(outer_packet(out.src, out.dst, out.sport, out.dport, out.payload), sent=True)

    def _on_esp(self, sock: EspSocket) -> None:
        inners: list[bytes] = []
        try:
            self._receive(sock, inners)
        finally:  # what was decrypted, even when a receive failed
            self._write_tun(inners)

    def _receive(self, sock: EspSocket, inners: list[bytes]) -> None:
        """Decrypt up to a batch of what ``sock`` received into ``inners``."""
        udp = not sock.raw
        taken = 0
        while taken < BATCH:
            try:
                received = sock.receive()
            except OSError as error:  # e.g. ECONNREFUSED from an ICMP error: consumed
                self._count_error("EspdReceiveError", error)
                taken += 1
                continue
            if received is None:
                return
            if received.segment:
                payloads = segments(received.payload, received.segment)
                self.counters["EspdUdpGroReceives"] += 1
            else:
                payloads = [received.payload]
            self.counters["EspdReceivePackets"] += len(payloads)
            inners += self._input(received, payloads, udp=udp)
            taken += len(payloads)

    def _input(self, received: Received, payloads: list[bytes], *, udp: bool) -> list[bytes]:
        """The packets that ``payloads`` (the datagrams of ``received``, or its ESP part)
        hold, decrypted."""
        if self.role is not None and not self.role.carrying:  # a standby gateway
            self.counters["EspdStandbyDropped"] += len(payloads)
            return []
        if self.pcap is not None:
            for payload in payloads:
                frame = received.packet or outer_packet(
                    received.src, received.dst, received.sport, received.dport, payload
                )
                self._capture(frame, sent=False)
        try:
            if received.packet is not None:
                inner = self.datapath.input(received.packet)
                return [] if inner is None else [inner]
            return self.datapath.input_many(payloads, received.src, received.dst, udp=udp)
        except Exception:
            self._datapath_exception()
            return []

    def _write_tun(self, packets: list[bytes]) -> None:
        """Write ``packets`` to the TUN: coalesced where its header allows (see
        :mod:`cryptoapi.esp.gro`), else one by one."""
        if not self.tun.vnet:
            for packet in packets:
                self._write(packet, 1)
            return
        for data, count in self._coalesce(packets):
            if self._write(data, count) and count > 1:
                self.counters["EspdTunGroWrites"] += 1

    def _write(self, data: bytes, packets: int) -> bool:
        """One write of ``packets`` packets to the TUN; whether it was taken."""
        try:
            os.write(self.tun.fd, data)
        except OSError as error:
            self._tun_error("EspdTunWriteError", "write", error, packets)
            return False
        self.counters["EspdTunOutPackets"] += packets
        return True

    # -- bookkeeping -------------------------------------------------------------------

    def _capture(self, frame: bytes, *, sent: bool) -> None:
        assert self.pcap is not None
        try:
            self.pcap.write(frame, sent=sent)
        except OSError as error:  # a full disk loses the capture, not the tunnel
            self._count_error("EspdPcapError", error)
            log.error("stopped writing the capture: %s", error)
            self.pcap.close()
            self.pcap = None

    def _tun_error(self, name: str, action: str, error: OSError, packets: int = 1) -> None:
        """Count a failed TUN read or write (of ``packets``); raise TunGone if the device
        went away (see :mod:`.tun`), the one error that ends the loop."""
        self._count_error(name, error, packets)
        if self.tun.gone(error):
            raise TunGone(self.tun, action, error) from None

    def _count_error(self, name: str, error: OSError, packets: int = 1) -> None:
        self.counters[name + errno.errorcode.get(error.errno or 0, "Unknown")] += packets

    def _datapath_exception(self) -> None:
        if not self.counters["EspdDatapathExceptions"]:
            log.error("the data path raised (logged once):\n%s", traceback.format_exc())
        self.counters["EspdDatapathExceptions"] += 1

    def stats_text(self) -> str:
        """The data path's Linux counters (``/proc/net/xfrm_stat`` exactly), then in the
        same layout its own ``Esp*`` counters and espd's ``Espd*`` ones."""
        linux = self.datapath.format_stats()
        shown = {line.split(None, 1)[0] for line in linux.splitlines() if line}
        ours = {k: v for k, v in self.datapath.stats().items() if k not in shown}
        ours.update(sorted(self.counters.items()))
        return linux + "".join(f"{name:<24}\t{value}\n" for name, value in ours.items())

    def print_stats(self) -> None:
        try:
            self.out.write(self.stats_text())
            self.out.flush()
        except (OSError, ValueError):  # stdout closed: the counters are lost, not the loop
            pass

    def close(self) -> None:
        """Close the selector, the sockets, the TUN, the capture and the data path (its
        sequence floors: last, once no packet can be sent)."""
        if self.control is not None:
            self.control.close()
        self._selector.close()
        self._sources.close()
        for sock in (self._wake_r, self._wake_w):
            sock.close()
        for esp in self.sockets:
            esp.close()
        self.tun.close()
        if self.notices is not None:
            self.notices.flush(final=True)  # the last notices and usage, if keyd takes them
        if self.follower is not None:
            self.follower.close()
        if self.pcap is not None:
            self.pcap.close()
        self.datapath.close()
