"""The espd tests' side of the namespace harness (:mod:`tests.netns`): the tunnel the
tests set up, traffic between the inner addresses, and reading a capture; and the small
tools that run inside a namespace.

:func:`tunnel_conf` is the tests' tunnel: AES-GCM-16 one way, AES-CBC with HMAC-SHA-256
back, keys derived from the SPIs. The harness's names the tests use (``hosts``, ``Host``,
``Espd``, ``WAIT``, ...) are re-exported here, so that a test imports one module.

Run as a program inside a namespace (``python -m tests.esp.netns TOOL ...``) this module is
the toolbox: ``ping`` (ICMP echo over a raw socket), ``tcp-sink``/``tcp-source`` (a bounded
transfer with its SHA-256, paced if asked), ``udp-probe`` (a steady trickle of datagrams),
``garp`` (gratuitous ARP for an address that moved), ``udp-echo``/``udp-rtt`` (round trips
between two processes) and ``capture`` (an AF_PACKET capture
of one interface into a pcap file). Each prints one JSON line (``capture`` and
``tcp-sink`` print ``ready`` first).
"""

import argparse
import contextlib
import hashlib
import json
import os
import random
import signal
import socket
import struct
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from cryptoapi.esp.espd.sockets import SO_RCVBUFFORCE
from tests.netns import (
    PYTHON,
    ROOT,
    WAIT,
    Espd,
    Host,
    Namespace,
    TunnelSa,
    espd_command,
    hosts,
    lone_host,
    namespace,
    parse_stats,
    stop,
    tunnel_setkey,
    unavailable,
    wait_for_line,
)

# The harness's names a test uses, importable from here too (one module to import).
__all__ = [
    "PYTHON",
    "WAIT",
    "Espd",
    "Host",
    "Kinds",
    "Namespace",
    "capture",
    "capture_drops",
    "classify",
    "espd_command",
    "hosts",
    "lone_host",
    "namespace",
    "parse_stats",
    "ping",
    "read_pcap",
    "read_pcap_timed",
    "stop",
    "tool",
    "transfer",
    "transfer_bytes",
    "tunnel_conf",
    "unavailable",
    "wait_for_line",
]

ETH_P_ALL = 0x0003
SOL_PACKET = 263  # <linux/socket.h>
PACKET_STATISTICS = 6  # <linux/if_packet.h>: struct tpacket_stats {tp_packets, tp_drops}
PACKET_VNET_HDR = 15
VIRTIO_NET_HDR = struct.Struct("=BBHHHH")  # flags, gso_type, hdr_len, gso_size, csum_*
VIRTIO_NET_HDR_GSO_UDP_L4 = 5  # <linux/virtio_net.h>
CAPTURE_BUFFER = 64 << 20  # what a loaded 2-core machine needs not to drop a 1 MiB burst
ETH_P_IP = 0x0800
ETH_P_ARP = 0x0806
ETH_P_IPV6 = 0x86DD


def tunnel_conf(
    left: Host,
    right: Host,
    *,
    replay: int = 64,
    spis: tuple[int, int] = (0x1001, 0x2002),
    inner: tuple[str, str] | None = None,
    flush: bool = True,
) -> str:
    """setkey statements for a tunnel between the two hosts as seen from ``left``: one SA
    each way — ``spis[0]`` from the lower outer address to the higher (AES-GCM-16),
    ``spis[1]`` back (AES-CBC with HMAC-SHA-256), the same on both sides — and the out/in
    policies between the ``inner`` addresses (left's, right's; the hosts' by default),
    which mirror each other. Keys are derived from the SPIs, so both sides agree."""
    low, high = sorted((left, right), key=lambda h: h.outer)
    here, there = inner or (left.inner, right.inner)

    def key(spi: int, size: int) -> str:
        return "0x" + hashlib.shake_256(b"espd test %d" % spi).hexdigest(size)

    up, down = spis
    gcm = f"-E aes-gcm-16 {key(up, 20)}"
    cbc = f"-E aes-cbc {key(down, 16)} -A hmac-sha256 {key(down + 1, 32)}"
    sas = [
        TunnelSa(src=low.outer, dst=high.outer, spi=up, algorithms=gcm),
        TunnelSa(src=high.outer, dst=low.outer, spi=down, algorithms=cbc),
    ]
    return tunnel_setkey(
        sas,
        here=left.outer,
        there=right.outer,
        net=f"{here}/32",
        peer_net=f"{there}/32",
        replay=replay,
        flush=flush,
    )


def tool(ns: Namespace, *argv: str) -> dict[str, object]:
    """Run one of this module's tools in the namespace ``ns``; its JSON result."""
    done = subprocess.run(
        ns.argv(PYTHON, "-m", "tests.esp.netns", *argv),
        check=False,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=WAIT + 5,
    )
    if done.returncode:
        raise AssertionError(f"{argv[0]} in {ns.name} failed: {done.stderr.strip()}")
    result: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return result


# -- traffic between the inner addresses ------------------------------------------------


def ping(
    src: Host,
    dst: Host,
    *,
    count: int = 3,
    timeout: float = 5.0,
    inner: tuple[str, str] | None = None,
) -> int:
    """Echo replies ``src`` got from ``dst``'s inner address (at most ``count``)."""
    here, there = inner or (src.inner, dst.inner)
    result = tool(
        src.ns, "ping", "--src", here, "--dst", there, "--count", str(count),
        "--timeout", str(timeout),
    )  # fmt: skip
    received = result["received"]
    assert isinstance(received, int)
    return received


def transfer(src: Host, dst: Host, size: int, *, seed: int = 1) -> tuple[dict[str, object], ...]:
    """A TCP transfer of ``size`` bytes from ``src`` to ``dst`` (inner addresses); the
    (sink's, source's) results."""
    sink = dst.ns.start(PYTHON, "-m", "tests.esp.netns", "tcp-sink", "--bind", dst.inner)
    assert sink.stdout is not None
    wait_for_line(sink.stdout.fileno(), "ready")
    sent = tool(
        src.ns, "tcp-source", "--src", src.inner, "--dst", dst.inner, "--bytes", str(size),
        "--seed", str(seed),
    )  # fmt: skip
    out, err = sink.communicate(timeout=WAIT)
    assert sink.returncode == 0, err
    received: dict[str, object] = json.loads(out.splitlines()[-1])
    return received, sent


def udp_burst(
    src: Host, dst: Host, count: int, *, size: int = 1000, seed: int = 1
) -> dict[str, object]:
    """``count`` datagrams of ``size`` bytes in bursts from ``src`` to ``dst`` (inner
    addresses); the sink's result (see ``tool_udp_sink``)."""
    sink = dst.ns.start(
        PYTHON, "-m", "tests.esp.netns", "udp-sink", "--bind", dst.inner, "--count", str(count),
        "--seed", str(seed),
    )  # fmt: skip
    assert sink.stdout is not None
    wait_for_line(sink.stdout.fileno(), "ready")
    tool(
        src.ns, "udp-burst", "--src", src.inner, "--dst", dst.inner, "--count", str(count),
        "--size", str(size), "--seed", str(seed),
    )  # fmt: skip
    out, err = sink.communicate(timeout=WAIT)
    assert sink.returncode == 0, err
    result: dict[str, object] = json.loads(out.splitlines()[-1])
    return result


@contextlib.contextmanager
def capture(host: Host, name: str = "veth.pcap") -> Iterator[Path]:
    """Capture every frame on ``host``'s veth while the block runs; the pcap file."""
    path = host.work / f"{host.ns.name}-{name}"
    tool = (PYTHON, "-m", "tests.esp.netns", "capture")
    process = host.ns.start(*tool, "--iface", host.veth, "--out", str(path))
    assert process.stdout is not None
    wait_for_line(process.stdout.fileno(), "ready")
    try:
        yield path
    finally:
        stop(process)


# -- reading a capture (in the test process) --------------------------------------------


def read_pcap(path: Path) -> tuple[int, list[bytes]]:
    """(link type, records) of a little-endian microsecond pcap file."""
    linktype, records = read_pcap_timed(path)
    return linktype, [record for _, record in records]


def read_pcap_timed(path: Path) -> tuple[int, list[tuple[float, bytes]]]:
    """(link type, (time, record) pairs) of a little-endian microsecond pcap file."""
    data = path.read_bytes()
    magic, _, _, _, _, _, linktype = struct.unpack_from("<IHHiIII", data)
    assert magic == 0xA1B2C3D4, f"{path} is not a little-endian pcap file"
    records, offset = [], 24
    while offset + 16 <= len(data):
        seconds, micros, captured, _ = struct.unpack_from("<IIII", data, offset)
        records.append((seconds + micros / 1e6, data[offset + 16 : offset + 16 + captured]))
        offset += 16 + captured
    return linktype, records


@dataclass
class Kinds:
    """What a capture of Ethernet frames held: ESP (raw or in UDP/4500, with its SPIs),
    ARP, and anything else (described)."""

    esp_udp: int = 0
    esp_raw: int = 0
    arp: int = 0
    spis: set[int] = field(default_factory=set)
    other: list[str] = field(default_factory=list)


def classify(frames: list[bytes], *, udp_port: int = 4500) -> Kinds:
    """Sort Ethernet frames into :class:`Kinds`."""
    kinds = Kinds()
    for frame in frames:
        ethertype = int.from_bytes(frame[12:14], "big")
        packet = frame[14:]
        if ethertype == ETH_P_ARP:
            kinds.arp += 1
        elif ethertype == ETH_P_IP and len(packet) >= 20:
            _classify_ipv4(packet, kinds, udp_port)
        else:
            kinds.other.append(f"ethertype {ethertype:#06x}, {len(packet)} bytes")
    return kinds


def _classify_ipv4(packet: bytes, kinds: Kinds, udp_port: int) -> None:
    header = (packet[0] & 0x0F) * 4
    proto, body = packet[9], packet[header:]
    fragment = int.from_bytes(packet[6:8], "big") & 0x1FFF
    if fragment:  # a later fragment: its first fragment was classified
        if proto not in (17, 50):
            kinds.other.append(f"IPv4 fragment of protocol {proto}")
        return
    if proto == 50 and len(body) >= 8:
        kinds.esp_raw += 1
        kinds.spis.add(int.from_bytes(body[:4], "big"))
        return
    if proto == 17 and len(body) >= 16:
        sport, dport = struct.unpack_from(">HH", body)
        if sport == udp_port and dport == udp_port and body[8:12] != b"\0\0\0\0":
            kinds.esp_udp += 1
            kinds.spis.add(int.from_bytes(body[8:12], "big"))
            return
    kinds.other.append(f"IPv4 protocol {proto}, {len(packet)} bytes{_icmp_detail(proto, packet)}")


def _icmp_detail(proto: int, packet: bytes) -> str:
    """For an ICMP packet, what it is and what it quotes: the words an unexpected one needs
    in a failed assertion (an error quoting an ESP packet, an echo that left the tunnel)."""
    header = (packet[0] & 0x0F) * 4
    icmp = packet[header:]
    if proto != 1 or len(icmp) < 8:
        return ""
    detail = f" (ICMP type {icmp[0]} code {icmp[1]}, {'.'.join(map(str, packet[12:16]))}"
    detail += f" -> {'.'.join(map(str, packet[16:20]))}"
    quoted = icmp[8:]
    if icmp[0] in (3, 11, 12) and len(quoted) >= 20:
        length = int.from_bytes(quoted[2:4], "big")
        detail += f", quoting IPv4 protocol {quoted[9]} of {length} bytes"
    return detail + ")"


# -- the tools, run inside a namespace ---------------------------------------------------


def _checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f">{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return int(~total & 0xFFFF)


def _echo_request(ident: int, seq: int, size: int) -> bytes:
    payload = bytes(random.Random(seq).randbytes(size))
    head = struct.pack(">BBHHH", 8, 0, 0, ident, seq)
    return struct.pack(">BBHHH", 8, 0, _checksum(head + payload), ident, seq) + payload


def tool_ping(args: argparse.Namespace) -> dict[str, object]:
    """Echo requests from ``--src`` to ``--dst``, one every ``--interval`` s, until
    ``--count`` have been answered or ``--timeout`` s have passed; replies whose payload
    is not the request's do not count."""
    ident = os.getpid() & 0xFFFF
    sent: dict[int, bytes] = {}
    answered: set[int] = set()
    with socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP) as sock:
        sock.bind((args.src, 0))
        deadline = time.monotonic() + args.timeout
        next_send = 0.0
        while len(answered) < args.count and time.monotonic() < deadline:
            now = time.monotonic()
            if now >= next_send:
                seq = len(sent) + 1
                sent[seq] = _echo_request(ident, seq, args.size)
                sock.sendto(sent[seq], (args.dst, 0))
                next_send = now + args.interval
            sock.settimeout(max(0.001, min(next_send, deadline) - time.monotonic()))
            with contextlib.suppress(TimeoutError):
                _take_reply(sock.recv(65535), ident, sent, answered)
    return {"sent": len(sent), "received": len(answered)}


def _take_reply(packet: bytes, ident: int, sent: dict[int, bytes], answered: set[int]) -> None:
    icmp = packet[(packet[0] & 0x0F) * 4 :]
    if len(icmp) < 8 or icmp[0] != 0:
        return
    got_ident, seq = struct.unpack_from(">HH", icmp, 4)
    if got_ident == ident and seq in sent and icmp[8:] == sent[seq][8:]:
        answered.add(seq)


def tool_tcp_sink(args: argparse.Namespace) -> dict[str, object]:
    """Accept one connection on ``--bind``:``--port``; read until EOF or ``--timeout``."""
    digest = hashlib.sha256()
    received = 0
    with socket.create_server((args.bind, args.port)) as server:
        server.settimeout(args.timeout)
        print("ready", flush=True)
        connection, _ = server.accept()
        deadline = time.monotonic() + args.timeout
        with connection:
            while time.monotonic() < deadline:
                connection.settimeout(max(0.001, deadline - time.monotonic()))
                try:
                    chunk = connection.recv(1 << 16)
                except TimeoutError:
                    break
                if not chunk:
                    break
                digest.update(chunk)
                received += len(chunk)
    return {"received": received, "sha256": digest.hexdigest()}


def transfer_bytes(size: int, seed: int) -> bytes:
    """The bytes a transfer sends: ``size`` pseudo-random bytes of ``seed``."""
    return random.Random(seed).randbytes(size)


def tool_tcp_source(args: argparse.Namespace) -> dict[str, object]:
    """Connect from ``--src`` to ``--dst``:``--port`` and send the transfer bytes, at most
    ``--rate`` bytes a second when given (a stream that lasts, for a failover)."""
    data = transfer_bytes(args.bytes, args.seed)
    with socket.create_connection(
        (args.dst, args.port), timeout=args.timeout, source_address=(args.src, 0)
    ) as sock:
        if args.rate:
            _paced(sock, data, args.rate)
        else:
            sock.sendall(data)
        sock.shutdown(socket.SHUT_WR)
        with contextlib.suppress(OSError):
            sock.recv(1)  # wait for the sink to close: every byte was taken
    return {"sent": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def _paced(sock: socket.socket, data: bytes, rate: int) -> None:
    """Send ``data`` in chunks of 1/50 of ``rate``, each when its time has come."""
    chunk, start = max(1, rate // 50), time.monotonic()
    for offset in range(0, len(data), chunk):
        delay = start + offset / rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        sock.sendall(data[offset : offset + chunk])


def burst_datagram(index: int, size: int, seed: int) -> bytes:
    """Datagram ``index`` of a ``udp-burst``: its number, then ``size`` - 4 bytes of
    ``seed`` and the number (so that each is told apart and checked)."""
    return index.to_bytes(4, "big") + random.Random(seed * 1_000_003 + index).randbytes(size - 4)


def tool_udp_burst(args: argparse.Namespace) -> dict[str, object]:
    """``--count`` datagrams of ``--size`` bytes from ``--src`` to ``--dst``:``--port``, in
    back-to-back bursts of ``--burst`` a millisecond apart (runs a receiver can take in
    one turn, slow enough that none is lost)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind((args.src, 0))
        for index in range(args.count):
            sock.sendto(burst_datagram(index, args.size, args.seed), (args.dst, args.port))
            if index % args.burst == args.burst - 1:
                time.sleep(0.001)
    return {"sent": args.count}


def tool_udp_sink(args: argparse.Namespace) -> dict[str, object]:
    """Take the datagrams of a ``udp-burst`` on ``--bind``:``--port`` until ``--count``
    arrived or none came for a second: how many, and whether each is the burst's own, in
    the order sent."""
    got: list[bytes] = []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 8 << 20)
        sock.bind((args.bind, args.port))
        sock.settimeout(args.timeout)  # for the first; then a second
        print("ready", flush=True)
        with contextlib.suppress(TimeoutError):
            while len(got) < args.count:
                got.append(sock.recv(65535))
                sock.settimeout(1.0)
    numbers = [int.from_bytes(d[:4], "big") for d in got]
    intact = all(
        d == burst_datagram(n, len(d), args.seed) for n, d in zip(numbers, got, strict=True)
    )
    return {"received": len(got), "intact": intact, "in_order": numbers == sorted(numbers)}


def tool_udp_probe(args: argparse.Namespace) -> dict[str, object]:
    """One small datagram from ``--src`` to ``--dst``:``--port`` every ``--interval``
    seconds for ``--duration`` seconds (a steady trickle that shows when a path is out);
    sends the kernel refuses (no route for a moment) are counted, not fatal."""
    sent = refused = 0
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind((args.src, 0))
        start = time.monotonic()
        while (now := time.monotonic()) - start < args.duration:
            try:
                sock.sendto(struct.pack(">Id", sent, time.time()), (args.dst, args.port))
            except OSError:
                refused += 1
            sent += 1
            time.sleep(max(0.0, start + sent * args.interval - now))
    return {"sent": sent, "refused": refused}


def tool_udp_echo(args: argparse.Namespace) -> dict[str, object]:
    """Send every datagram on ``--bind``:``--port`` back to its sender, until SIGTERM or
    ``--timeout``."""
    echoed = 0
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind((args.bind, args.port))
        sock.settimeout(args.timeout)
        print("ready", flush=True)
        with contextlib.suppress(TimeoutError):
            while True:
                data, peer = sock.recvfrom(2048)
                sock.sendto(data, peer)
                echoed += 1
    return {"echoed": echoed}


def tool_udp_rtt(args: argparse.Namespace) -> dict[str, object]:
    """``--count`` datagrams to a ``udp-echo`` at ``--dst``:``--port``, ``--interval``
    seconds apart, each waiting for its echo: the median round trip in microseconds."""
    times = []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.connect((args.dst, args.port))
        sock.settimeout(1.0)
        for _ in range(args.count):
            start = time.perf_counter()
            sock.send(b"rtt")
            sock.recv(2048)
            times.append(time.perf_counter() - start)
            time.sleep(args.interval)
    return {"median_us": round(sorted(times)[len(times) // 2] * 1e6, 1)}


def tool_garp(args: argparse.Namespace) -> dict[str, object]:
    """Announce ``--address`` on ``--iface`` with ``--count`` gratuitous ARP requests
    (RFC 5227 §3: sender and target address both the announced one, to the broadcast
    address), ``--interval`` seconds apart: what VRRP does when an address moves, so that
    the neighbours' caches take the new hardware address at once."""
    with socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ARP)) as sock:
        sock.bind((args.iface, ETH_P_ARP))
        mac = sock.getsockname()[4]
        address = socket.inet_aton(args.address)
        ethernet = b"\xff" * 6 + mac + struct.pack(">H", ETH_P_ARP)
        arp = struct.pack(">HHBBH", 1, ETH_P_IP, 6, 4, 1) + mac + address + bytes(6) + address
        for n in range(args.count):
            if n:
                time.sleep(args.interval)
            sock.send(ethernet + arp)
    return {"sent": args.count}


def tool_capture(args: argparse.Namespace) -> dict[str, object]:
    """Every frame on ``--iface`` (both directions) into the pcap file ``--out`` until
    SIGTERM or ``--timeout``."""
    from cryptoapi.esp.espd.pcap import LINKTYPE_ETHERNET, PcapWriter

    stopping: list[int] = []
    signal.signal(signal.SIGTERM, lambda signum, frame: stopping.append(signum))
    count = 0
    with (
        socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL)) as sock,
        PcapWriter(args.out, linktype=LINKTYPE_ETHERNET) as writer,
    ):
        sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, CAPTURE_BUFFER)
        sock.setsockopt(SOL_PACKET, PACKET_VNET_HDR, 1)  # a UDP GSO frame's segment size
        sock.bind((args.iface, ETH_P_ALL))
        sock.settimeout(0.05)
        print("ready", flush=True)
        deadline = time.monotonic() + args.timeout
        while not stopping and time.monotonic() < deadline:
            try:
                frames = wire_frames(sock.recv(VIRTIO_NET_HDR.size + 65535))
            except (TimeoutError, InterruptedError):
                continue
            for frame in frames:
                writer.write_frame(frame)
            count += len(frames)
        sock.setblocking(False)
        with contextlib.suppress(BlockingIOError):
            while True:  # what arrived before the stop, still queued on the socket
                frames = wire_frames(sock.recv(VIRTIO_NET_HDR.size + 65535))
                for frame in frames:
                    writer.write_frame(frame)
                count += len(frames)
        _, drops = struct.unpack("II", sock.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8))
    Path(args.out + ".drops").write_text(str(drops))
    return {"frames": count, "drops": drops}


def wire_frames(received: bytes) -> list[bytes]:
    """The frames a link carries for what a packet socket with ``PACKET_VNET_HDR`` read:
    the frame, or, for a UDP GSO one (espd's ``UDP_SEGMENT`` sends cross the veth whole),
    its datagrams cut at the header's ``gso_size`` as a NIC segments them (Linux
    ``__udp_gso_segment``: the Ethernet, IPv4 and UDP headers copied, lengths and the IP
    checksum set per datagram; the UDP checksum left 0, which IPv4 allows)."""
    _, gso_type, _, gso_size, _, _ = VIRTIO_NET_HDR.unpack_from(received)
    frame = received[VIRTIO_NET_HDR.size :]
    if gso_type != VIRTIO_NET_HDR_GSO_UDP_L4 or frame[12:14] != b"\x08\x00":
        return [frame]
    headers = 14 + (frame[14] & 0x0F) * 4 + 8
    return [
        _udp_segment(frame[:headers], frame[start : start + gso_size])
        for start in range(headers, len(frame), gso_size)
    ]


def _udp_segment(headers: bytes, data: bytes) -> bytes:
    """One datagram of a UDP GSO frame: ``headers`` (Ethernet, IPv4, UDP) fixed for ``data``."""
    ip_length = len(headers) - 14 + len(data)
    ip = bytearray(headers[14:-8])
    ip[2:4] = ip_length.to_bytes(2, "big")
    ip[10:12] = bytes(2)
    total = sum(struct.unpack(f">{len(ip) // 2}H", ip))
    while total > 0xFFFF:
        total = (total & 0xFFFF) + (total >> 16)
    ip[10:12] = (~total & 0xFFFF).to_bytes(2, "big")
    udp = headers[-8:-4] + (8 + len(data)).to_bytes(2, "big") + bytes(2)
    return headers[:14] + bytes(ip) + udp + data


def capture_drops(path: Path) -> int:
    """How many frames the kernel dropped from the capture into ``path`` (its buffer was
    full): PACKET_STATISTICS' tp_drops, read when the capture stopped."""
    return int(Path(str(path) + ".drops").read_text())


def tool_udp_send(args: argparse.Namespace) -> dict[str, object]:
    """Send each ``--payload`` (hex) as one datagram from ``--src`` to ``--dst``:``--port``."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind((args.src, 0))
        for payload in args.payload:
            sock.sendto(bytes.fromhex(payload), (args.dst, args.port))
    return {"sent": len(args.payload)}


TOOLS = {
    "udp-send": tool_udp_send,
    "ping": tool_ping,
    "tcp-sink": tool_tcp_sink,
    "tcp-source": tool_tcp_source,
    "capture": tool_capture,
    "udp-probe": tool_udp_probe,
    "udp-burst": tool_udp_burst,
    "udp-sink": tool_udp_sink,
    "garp": tool_garp,
    "udp-echo": tool_udp_echo,
    "udp-rtt": tool_udp_rtt,
}


def _sender(
    tools: "argparse._SubParsersAction[argparse.ArgumentParser]", name: str, *, port: int
) -> argparse.ArgumentParser:
    """A tool that sends from ``--src`` to ``--dst``:``--port``."""
    p = tools.add_parser(name)
    p.add_argument("--src", required=True)
    p.add_argument("--dst", required=True)
    p.add_argument("--port", type=int, default=port)
    return p


def _receiver(
    tools: "argparse._SubParsersAction[argparse.ArgumentParser]", name: str, *, port: int
) -> argparse.ArgumentParser:
    """A tool that listens on ``--bind``:``--port``, giving up after ``--timeout``."""
    p = tools.add_parser(name)
    p.add_argument("--bind", required=True)
    p.add_argument("--port", type=int, default=port)
    p.add_argument("--timeout", type=float, default=WAIT)
    return p


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m tests.esp.netns")
    tools = parser.add_subparsers(dest="tool", required=True)
    p = tools.add_parser("ping")
    p.add_argument("--src", required=True)
    p.add_argument("--dst", required=True)
    p.add_argument("--count", type=int, default=1)
    p.add_argument("--size", type=int, default=56)
    p.add_argument("--interval", type=float, default=0.2)
    p.add_argument("--timeout", type=float, default=5.0)
    _receiver(tools, "tcp-sink", port=5001)
    p = _sender(tools, "tcp-source", port=5001)
    p.add_argument("--bytes", type=int, required=True)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--rate", type=int, default=0, help="bytes a second (0: no limit)")
    p.add_argument("--timeout", type=float, default=WAIT)
    p = _sender(tools, "udp-send", port=4500)
    p.add_argument("--payload", action="append", default=[])
    p = _sender(tools, "udp-burst", port=7009)
    p.add_argument("--count", type=int, required=True)
    p.add_argument("--size", type=int, default=1000)
    p.add_argument("--burst", type=int, default=16)
    p.add_argument("--seed", type=int, default=1)
    p = _receiver(tools, "udp-sink", port=7009)
    p.add_argument("--count", type=int, required=True)
    p.add_argument("--seed", type=int, default=1)
    p = _sender(tools, "udp-probe", port=9)
    p.add_argument("--interval", type=float, default=0.005)
    p.add_argument("--duration", type=float, required=True)
    _receiver(tools, "udp-echo", port=7007)
    p = tools.add_parser("udp-rtt")
    p.add_argument("--dst", required=True)
    p.add_argument("--port", type=int, default=7007)
    p.add_argument("--count", type=int, default=50)
    p.add_argument("--interval", type=float, default=0.02)
    p = tools.add_parser("garp")
    p.add_argument("--iface", required=True)
    p.add_argument("--address", required=True)
    p.add_argument("--count", type=int, default=3)
    p.add_argument("--interval", type=float, default=0.05)
    p = tools.add_parser("capture")
    p.add_argument("--iface", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--timeout", type=float, default=WAIT * 2)
    return parser


def main() -> None:
    args = _parser().parse_args()
    print(json.dumps(TOOLS[args.tool](args)), flush=True)


if __name__ == "__main__":
    main()
