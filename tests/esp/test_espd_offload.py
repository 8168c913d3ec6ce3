"""UDP GSO and GRO on espd's ESP sockets and through its loop, on loopback (no namespace:
UDP between two sockets of this host, and a SOCK_SEQPACKET pair standing for the TUN).
Every test runs twice: with ``packetio.c``'s reads, receives and sends, and with the
Python calls they stand in for."""

import contextlib
import errno
import os
import socket
import struct
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import pytest

from cryptoapi.esp import Outbound
from cryptoapi.esp.espd import endpoint as endpoint_module
from cryptoapi.esp.espd import sockets as sockets_module
from cryptoapi.esp.espd.endpoint import Endpoint
from cryptoapi.esp.espd.sockets import MAX_DATAGRAM, EspSocket, Received, segments
from cryptoapi.esp.espd.tun import TunDevice, read_frame
from tests.esp import netns

SO_NO_CHECK = 11  # <asm-generic/socket.h>: no UDP checksum, which UDP_SEGMENT refuses (EINVAL)
FAMILIES = pytest.mark.parametrize(
    ("family", "host"), [(socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")]
)


@pytest.fixture(autouse=True, params=["C", "Python"])
def io(request, monkeypatch):
    """The calls every test here runs with: ``packetio.c``'s (skipped where it does not
    build), or the Python ones (``sockets.packet_io`` finds none)."""
    if request.param == "Python":
        for module in (sockets_module, endpoint_module):
            monkeypatch.setattr(module, "packet_io", lambda: None)
        return None
    found = sockets_module.packet_io()
    if found is None:
        pytest.skip("packetio.c does not build here (no C compiler or Python headers)")
    return found


def esp_socket(family: int, **options: bool) -> EspSocket:
    try:
        return EspSocket(family, raw=False, port=0, **options)
    except OSError as error:
        pytest.skip(f"no {socket.AddressFamily(family).name} here: {error}")


def datagrams(family: int, host: str, sport: int, dport: int, sizes: Sequence[int]) -> list:
    loopback = socket.inet_pton(family, host)
    return [
        Outbound(family, loopback, loopback, sport, dport, bytes([n]) * size)
        for n, size in enumerate(sizes)
    ]


def received(sock: socket.socket, count: int) -> list[bytes]:
    sock.settimeout(netns.WAIT)
    return [sock.recv(65535) for _ in range(count)]


def gro_receive(esp: EspSocket) -> Received:
    deadline = time.monotonic() + netns.WAIT
    while (got := esp.receive()) is None:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    return got


SIZES = [1400] * 10 + [60]  # what a TCP flow sends: full segments, then a shorter one


@FAMILIES
def test_a_gso_send_arrives_as_whole_datagrams_in_order(family, host):
    with esp_socket(family) as esp, socket.socket(family, socket.SOCK_DGRAM) as peer:
        peer.bind((host, 0))
        assert esp.gso and esp.gro
        sent = datagrams(family, host, esp.port, peer.getsockname()[1], SIZES)
        esp.send_segments(sent)
        assert received(peer, len(sent)) == [d.payload for d in sent]


@FAMILIES
def test_a_gro_receive_is_cut_into_the_datagrams_sent(family, host):
    with esp_socket(family) as sender, esp_socket(family) as esp:
        sent = datagrams(family, host, sender.port, esp.port, SIZES)
        sender.send_segments(sent)
        got = gro_receive(esp)
        assert got.segment == 1400 and (got.sport, got.dport) == (sender.port, esp.port)
        assert segments(got.payload, got.segment) == [d.payload for d in sent]


def test_segments_of_a_buffer_that_is_one_datagram_is_that_datagram():
    assert segments(b"abc", 0) == [b"abc"] == segments(b"abc", 3)
    assert segments(b"abcdefg", 3) == [b"abc", b"def", b"g"]


def test_without_offload_a_socket_takes_one_datagram_per_call():
    with esp_socket(socket.AF_INET, offload=False) as esp, esp_socket(socket.AF_INET) as sender:
        assert (esp.gso, esp.gro, esp.offloads()) == (False, False, "none")
        assert sender.offloads() == "GSO and GRO"
        sender.send_segments(datagrams(socket.AF_INET, "127.0.0.1", sender.port, esp.port, SIZES))
        got = [gro_receive(esp) for _ in SIZES]
        assert [len(r.payload) for r in got] == SIZES and {r.segment for r in got} == {0}


def ip_header(length: int, protocol: int) -> bytes:
    """An IPv4 header from 127.0.0.1 to itself (the kernel fills the id and checksum)."""
    loopback = socket.inet_aton("127.0.0.1")
    return struct.pack("!BBHHHBBH4s4s", 0x45, 0, length, 0, 0, 64, protocol, 0, loopback, loopback)


def refused_by_protocol(icmp: socket.socket, spi: bytes) -> int:
    """How many ICMP protocol-unreachable messages waiting on ``icmp`` quote ESP of ``spi``."""
    count = 0
    with contextlib.suppress(BlockingIOError):
        while True:
            message = icmp.recv(65535)
            unreachable = message[20:22] == bytes([3, 2])  # type 3 code 2 (RFC 792)
            count += unreachable and message[28 + 20 : 28 + 24] == spi
    return count


def test_a_raw_socket_holds_a_burst_without_the_host_refusing_the_protocol():
    """A burst of 300 full-size ESP packets waits whole on a raw socket nobody reads yet:
    with the default buffer (about 90 packets) Linux drops the rest and answers each with
    ICMP protocol unreachable, as if no ESP endpoint were there."""
    spi = os.urandom(4)
    with contextlib.ExitStack() as stack:
        try:
            esp = stack.enter_context(EspSocket(socket.AF_INET, raw=True))
            icmp = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_RAW, 1))
            sender = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_RAW, 255))
        except PermissionError as error:
            pytest.skip(f"raw sockets need CAP_NET_RAW: {error}")
        icmp.setblocking(False)
        packets = [spi + n.to_bytes(4, "big") + bytes(1392) for n in range(1, 301)]
        for packet in packets:
            sender.sendto(ip_header(20 + len(packet), 50) + packet, ("127.0.0.1", 0))
        taken = []
        while (got := esp.receive()) is not None:
            taken += [got.payload] if got.payload[:4] == spi else []
        assert refused_by_protocol(icmp, spi) == 0
        assert taken == packets


class LoopbackPath:
    """A data path that wraps each packet as ESP to ``peer`` (one ``E`` in front) and
    unwraps it again, recording what it was given."""

    def __init__(self, family: int, src: bytes, sport: int, dport: int) -> None:
        self.route = (family, src, src, sport, dport)
        self.inputs: list[bytes] = []

    def output_many(self, packets: Iterable[bytes]) -> Sequence[Outbound]:
        return [Outbound(*self.route, b"E" + packet) for packet in packets]

    def input(self, packet: bytes) -> bytes | None:
        raise AssertionError("UDP delivers no whole packets")

    def input_many(
        self, payloads: Iterable[bytes], src: bytes, dst: bytes, *, udp: bool
    ) -> list[bytes]:
        assert udp
        self.inputs += payloads
        return [payload[1:] for payload in payloads]

    def tick(self) -> None:
        pass

    def stats(self) -> dict[str, int]:
        return {}

    def format_stats(self) -> str:
        return ""

    def close(self) -> None:
        pass


@dataclass
class Loop:
    endpoint: Endpoint
    esp: EspSocket
    peer: socket.socket  # the other end of the tunnel: plain UDP
    host: socket.socket  # the host's side of the "TUN"
    datapath: LoopbackPath


@contextlib.contextmanager
def loop(*, offload: bool = True) -> Iterator[Loop]:
    esp = esp_socket(socket.AF_INET, offload=offload)
    peer = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    peer.bind(("127.0.0.1", 0))
    host, tun = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    tun.setblocking(False)
    loopback = socket.inet_aton("127.0.0.1")
    datapath = LoopbackPath(socket.AF_INET, loopback, esp.port, peer.getsockname()[1])
    endpoint = Endpoint(datapath, TunDevice(tun.detach(), "fake0"), [esp])
    try:
        yield Loop(endpoint, esp, peer, host, datapath)
    finally:
        endpoint.close()
        for sock in (peer, host):
            sock.close()


def through_tun(it: Loop, packets: Sequence[bytes]) -> None:
    """The host routes ``packets`` into the TUN; espd takes them in one turn."""
    for packet in packets:
        it.host.send(packet)
    it.endpoint._on_tun()


PACKETS = [bytes([n]) * 1300 for n in range(40)] + [b"ack" * 10] + [b"x" * 1300] * 3


@pytest.mark.parametrize("offload", [True, False])
def test_a_turn_of_tun_packets_leaves_in_few_sends_whole_and_in_order(offload):
    with loop(offload=offload) as it:
        through_tun(it, PACKETS)
        assert received(it.peer, len(PACKETS)) == [b"E" + p for p in PACKETS]
        counters = it.endpoint.counters
        assert counters["EspdTunInPackets"] == counters["EspdSendPackets"] == len(PACKETS)
        assert counters["EspdUdpGsoSends"] == (2 if offload else 0)  # 41 up to the ack, 3
        assert counters["EspdUdpGsoFallbacks"] == 0


def test_a_gso_send_the_kernel_refuses_goes_datagram_by_datagram():
    with loop() as it:
        it.esp.sock.setsockopt(socket.SOL_SOCKET, SO_NO_CHECK, 1)  # udp_send_skb: EINVAL
        through_tun(it, PACKETS)
        assert received(it.peer, len(PACKETS)) == [b"E" + p for p in PACKETS]
        counters = it.endpoint.counters
        assert counters["EspdUdpGsoFallbacks"] == 2 and counters["EspdUdpGsoSends"] == 0
        assert counters["EspdSendPackets"] == len(PACKETS)


def test_a_send_error_counts_every_datagram_of_the_run():
    with loop() as it:
        it.datapath.route = (*it.datapath.route[:4], 9)  # the discard port: nobody listens
        it.esp.sock.connect(("127.0.0.1", 9))  # so the ICMP error comes back as ECONNREFUSED
        through_tun(it, PACKETS[:5])
        time.sleep(0.05)
        through_tun(it, PACKETS[:5])
        counters = it.endpoint.counters
        assert counters["EspdSendErrorECONNREFUSED"] == 5 and counters["EspdSendPackets"] == 5


@pytest.mark.parametrize("offload", [True, False])
def test_a_gro_batch_is_decrypted_datagram_by_datagram(offload):
    with loop(offload=offload) as it, esp_socket(socket.AF_INET) as sender:
        sent = datagrams(socket.AF_INET, "127.0.0.1", sender.port, it.esp.port, SIZES)
        sender.send_segments(sent)
        deadline = time.monotonic() + netns.WAIT
        while it.endpoint.counters["EspdReceivePackets"] < len(sent):
            assert time.monotonic() < deadline
            it.endpoint._on_esp(it.esp)
        assert it.datapath.inputs == [d.payload for d in sent]
        assert received(it.host, len(sent)) == [d.payload[1:] for d in sent]
        counters = it.endpoint.counters
        assert counters["EspdReceivePackets"] == counters["EspdTunOutPackets"] == len(sent)
        assert counters["EspdUdpGroReceives"] == (1 if offload else 0)


@FAMILIES
def test_a_datagram_is_received_with_its_addresses_ports_and_size_alike(family, host, io):
    """What a receive reports: the packet's own destination (its PKTINFO), the sender's
    address and port, the socket's port, the bytes; None once nothing is waiting."""
    with esp_socket(family) as esp, socket.socket(family, socket.SOCK_DGRAM) as peer:
        peer.bind((host, 0))
        peer.sendto(b"esp" * 100, (host, esp.port))
        got = gro_receive(esp)
        loopback = socket.inet_pton(family, host)
        assert got == Received(None, b"esp" * 100, loopback, loopback, peer.getsockname()[1],
                               esp.port, 0)  # fmt: skip
        assert esp.receive() is None


def test_a_tun_read_is_a_frame_or_none_and_an_error_names_its_errno(io):
    host, tun = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    with host, tun:
        tun.setblocking(False)
        read = read_frame if io is None else io.read_frame
        assert read(tun.fileno(), 100) is None
        host.send(b"a packet")
        assert read(tun.fileno(), 100) == b"a packet"
        assert read(tun.fileno(), 100) is None
        fd = os.dup(tun.fileno())
        os.close(fd)
        with pytest.raises(OSError) as raised:
            read(fd, 100)
        assert raised.value.errno == errno.EBADF


def test_the_c_calls_refuse_what_they_cannot_send(io):
    """Typed errors for arguments espd never gives: the socket module's own checks."""
    if io is None:
        pytest.skip("packetio.c's own checks")
    loopback = socket.inet_aton("127.0.0.1")
    with esp_socket(socket.AF_INET) as esp:
        fd, family = esp.fileno(), socket.AF_INET
        with pytest.raises(ValueError, match="dst: 4 packed bytes"):
            io.send(fd, family, [b"x"], loopback, bytes(16), 4500, 0)
        with pytest.raises(ValueError, match="1 to 64"):
            io.send(fd, family, [b"x"] * 65, loopback, loopback, 4500, 0)
        with pytest.raises(TypeError, match="payloads: bytes"):
            io.send(fd, family, ["x"], loopback, loopback, 4500, 0)
        with pytest.raises(ValueError, match="AF_INET or AF_INET6"):
            io.receive(fd, socket.AF_UNIX, MAX_DATAGRAM, 4500)
        with pytest.raises(OSError) as raised:
            io.send(fd, family, [b"x"], loopback, loopback, 0, 0)  # port 0: refused
        assert raised.value.errno == errno.EINVAL
