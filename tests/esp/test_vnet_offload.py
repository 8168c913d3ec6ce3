"""espd's TUN offloads without a TUN: :func:`cryptoapi.esp.gso.split` against scapy's own
packets and checksums, and :func:`cryptoapi.esp.gro.coalesce` against ``split`` (a
coalesced write cut again is the packets that were coalesced, byte for byte). Every
coalescing test runs on both implementations, ``gro.py`` and ``gro.c``; random packet
streams must give the two the same frames, byte for byte. The same for ``gso.py`` and
``gso.c``: the same packets, or the same error, for every case and for random frames."""

import argparse
import random
import re
import subprocess
import sysconfig
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from scapy.layers.inet import IP, TCP, UDP, in4_pseudoheader
from scapy.layers.inet6 import IPv6, in6_pseudoheader
from scapy.packet import Packet
from scapy.utils import checksum

from cryptoapi import _cbuild
from cryptoapi.cli import espd as espd_cli
from cryptoapi.esp import gro, gso, vnet
from cryptoapi.esp.espd.sockets import packet_io
from cryptoapi.esp.native import native
from cryptoapi.esp.vnet import F_NEEDS_CSUM, VnetHeader

MSS = 1348
V4 = {"src": "10.93.1.1", "dst": "10.93.2.1"}
V6 = {"src": "fd00::1", "dst": "fd00::2"}
TIMESTAMPS = [("NOP", None), ("NOP", None), ("Timestamp", (123456, 654321))]


def c_twin(made: tuple[Callable[..., Any], str], source: str) -> Callable[..., Any]:
    """The C function of a ``coalescer()`` or ``splitter()``; skipped where it does not build."""
    if made[1] != "C":
        pytest.skip(f"{source} does not build here (no C compiler or Python headers)")
    return made[0]


@pytest.fixture(scope="module")
def native_split() -> gso.Split:
    return c_twin(gso.splitter(), "gso.c")


@pytest.fixture(scope="module")
def native_coalesce() -> gro.Coalesce:
    return c_twin(gro.coalescer(), "gro.c")


@pytest.fixture(params=["py", "c"])
def split(request: pytest.FixtureRequest) -> gso.Split:
    twin: gso.Split = request.getfixturevalue("native_split") if request.param == "c" else gso.split
    return twin


@pytest.fixture(params=["py", "c"])
def coalesce(request: pytest.FixtureRequest) -> gro.Coalesce:
    twin: gro.Coalesce = (
        request.getfixturevalue("native_coalesce") if request.param == "c" else gro.coalesce
    )
    return twin


def payload(size: int, seed: int = 1) -> bytes:
    return random.Random(seed).randbytes(size)


def checked(raw: bytes, family: int) -> Packet:
    """``raw`` parsed by scapy, after checking that its lengths and checksums are the ones
    scapy computes itself."""
    packet = (IP if family == 4 else IPv6)(raw)
    fresh = packet.copy()
    if family == 4:
        del fresh[IP].len, fresh[IP].chksum
    else:
        del fresh[IPv6].plen
    for layer in (TCP, UDP):
        if layer in fresh:
            del fresh[layer].chksum
    if UDP in fresh:
        del fresh[UDP].len
    assert bytes(fresh) == raw, f"scapy computes other lengths or checksums: {packet!r}"
    return packet


def partial(packet: Packet, offset: int) -> bytes:
    """``packet``'s bytes with its transport checksum left partial, as a NIC offload gets
    them: the field holds the sum of the pseudo-header (scapy's), folded, not complemented."""
    raw = bytearray(bytes(packet))
    layer = packet.payload
    start = len(raw) - len(layer)
    proto = 6 if TCP in packet else 17
    if IP in packet:
        pseudo = in4_pseudoheader(proto, packet[IP], len(layer))
    else:
        pseudo = bytes(in6_pseudoheader(proto, packet[IPv6], len(layer)))
    raw[start + offset : start + offset + 2] = (0xFFFF - checksum(pseudo)).to_bytes(2, "big")
    return bytes(raw)


def frame(header: VnetHeader, packet: bytes) -> bytes:
    return header.pack() + packet


def tcp_super(family: int, size: int, *, flags: str = "PA", seq: int = 1000) -> Packet:
    ip_layer = IP(**V4, id=7, flags="DF", ttl=63) if family == 4 else IPv6(**V6, hlim=63)
    tcp = TCP(sport=5001, dport=40000, seq=seq, ack=99, flags=flags, window=500)
    tcp.options = TIMESTAMPS
    return ip_layer / tcp / payload(size)


@pytest.mark.parametrize("family", [4, 6])
@pytest.mark.parametrize("size", [MSS * 3, MSS * 7 + 5, 60_000])
def test_a_tcp_super_segment_is_cut_as_a_nic_would(family, size, split):
    original = tcp_super(family, size, flags="FPA", seq=2**32 - 3000)  # the seq wraps
    start = 20 if family == 4 else 40
    gso_type = vnet.GSO_TCPV4 if family == 4 else vnet.GSO_TCPV6
    header = VnetHeader(F_NEEDS_CSUM, gso_type, start + 32, MSS, start, 16)
    segments = split(frame(header, partial(original, 16)))
    assert len(segments) == -(-size // MSS)
    data = b""
    for number, raw in enumerate(segments):
        packet = checked(raw, family)
        tcp = packet[TCP]
        data += bytes(tcp.payload)
        last = number == len(segments) - 1
        assert len(tcp.payload) == (size - MSS * number if last else MSS)
        assert tcp.seq == (2**32 - 3000 + MSS * number) % 2**32
        assert str(tcp.flags) == ("FPA" if last else "A")
        assert (tcp.ack, tcp.window, tcp.options) == (99, 500, original[TCP].options)
        if family == 4:
            assert (packet.id, packet.flags, packet.ttl) == (7 + number, 2, 63)
    assert data == payload(size)


def test_cwr_is_kept_on_the_first_segment_only(split):
    original = tcp_super(4, MSS * 3, flags="CA")
    header = VnetHeader(F_NEEDS_CSUM, vnet.GSO_TCPV4 | vnet.GSO_ECN, 52, MSS, 20, 16)
    flags = [str(checked(s, 4)[TCP].flags) for s in split(frame(header, partial(original, 16)))]
    assert flags == ["AC", "A", "A"]  # scapy names them from the low bit up


@pytest.mark.parametrize("family", [4, 6])
def test_a_udp_super_segment_is_cut_into_datagrams(family, split):
    ip_layer = IP(**V4, id=300) if family == 4 else IPv6(**V6)
    original = ip_layer / UDP(sport=53, dport=5353) / payload(1000 * 4 + 17)
    start = 20 if family == 4 else 40
    header = VnetHeader(F_NEEDS_CSUM, vnet.GSO_UDP_L4, start + 8, 1000, start, 6)
    segments = split(frame(header, partial(original, 6)))
    got = [checked(raw, family) for raw in segments]
    assert [len(p[UDP].payload) for p in got] == [1000] * 4 + [17]
    assert b"".join(bytes(p[UDP].payload) for p in got) == payload(4017)
    if family == 4:
        assert [p.id for p in got] == [300, 301, 302, 303, 304]


@pytest.mark.parametrize("layer", [TCP(sport=1, dport=2, flags="S"), UDP(sport=1, dport=2)])
def test_a_partial_checksum_is_completed(layer, split):
    original = IP(**V4) / layer / payload(333)
    offset = 16 if TCP in original else 6
    header = VnetHeader(F_NEEDS_CSUM, vnet.GSO_NONE, 0, 0, 20, offset)
    assert split(frame(header, partial(original, offset))) == [bytes(original)]


def test_a_plain_read_is_the_packet(split):
    packet = bytes(IP(**V4) / UDP() / b"x")
    assert split(vnet.PLAIN + packet) == [packet]


@pytest.mark.parametrize(
    ("header", "packet", "reason"),
    [
        (None, b"\0" * 5, "shorter than a virtio-net header"),
        (VnetHeader(0, vnet.GSO_UDP, 28, 1000, 20, 6), bytes(IP() / UDP()), "GSO type 0x3"),
        (VnetHeader(1, 0, 0, 0, 20, 9), bytes(IP() / UDP()), "partial checksum at 20+9"),
        (VnetHeader(1, 0, 0, 0, 20, 16), bytes(IP() / UDP()), "partial checksum at 20+16"),
        (VnetHeader(1, 1, 40, 100, 20, 16), bytes(IP() / UDP() / payload(500)), "protocol 6"),
        (VnetHeader(1, 1, 40, 0, 20, 16), bytes(IP() / TCP() / payload(500)), "segment size 0"),
        (VnetHeader(1, 1, 40, 100, 20, 16), bytes(IP(proto=6))[:20] + b"\0" * 8, "cut short"),
    ],
)
def test_what_describes_no_packet_is_an_offload_error(header, packet, reason, split):
    data = packet if header is None else header.pack() + packet
    with pytest.raises(vnet.OffloadError, match=re.escape(reason)):
        split(data)


# -- coalescing ---------------------------------------------------------------------------


def flow(
    family: int, count: int, *, last: int = MSS, seq: int = 1000, ident: int = 7, flags="PA"
) -> list[bytes]:
    """``count`` segments of one TCP flow as a NIC would cut a super-segment of ``flags``
    (PSH on the last one only), the last ``last`` bytes long."""
    original = tcp_super(family, MSS * (count - 1) + last, flags=flags, seq=seq)
    start = 20 if family == 4 else 40
    gso_type = vnet.GSO_TCPV4 if family == 4 else vnet.GSO_TCPV6
    if family == 4:
        original.id = ident
    header = VnetHeader(F_NEEDS_CSUM, gso_type, start + 32, MSS, start, 16)
    return gso.split(frame(header, partial(original, 16)))


def changed(raw: bytes, layer: type[Packet], **fields: object) -> bytes:
    """The IPv4 packet ``raw`` with fields of its ``layer`` changed, checksums redone."""
    packet = IP(raw)
    for name, value in fields.items():
        setattr(packet[layer], name, value)
    del packet.chksum, packet[TCP if TCP in packet else UDP].chksum
    return bytes(packet)


@pytest.mark.parametrize("family", [4, 6])
def test_segments_of_one_flow_are_one_write_that_cuts_back_into_them(family, coalesce):
    segments = flow(family, 10, last=100)
    frames = coalesce(segments)
    assert [f.packets for f in frames] == [10]
    header = vnet.read(frames[0].data)
    start = 20 if family == 4 else 40
    gso_type = vnet.GSO_TCPV4 if family == 4 else vnet.GSO_TCPV6
    assert header == VnetHeader(F_NEEDS_CSUM, gso_type, start + 32, MSS, start, 16)
    assert gso.split(frames[0].data) == segments


def test_other_packets_are_written_plain_and_in_order(coalesce):
    ping = bytes(IP(**V4) / UDP(sport=1, dport=2) / b"hi")
    frames = coalesce([ping, *flow(4, 3), ping])
    assert [f.packets for f in frames] == [1, 3, 1]
    assert frames[0].data == frames[2].data == vnet.PLAIN + ping


def test_a_run_ends_where_the_flow_does_not_continue(coalesce):
    a = flow(4, 4)
    assert [f.packets for f in coalesce(a[:2] + a[3:])] == [2, 1]  # one lost
    other_port = changed(a[1], TCP, dport=40001)
    assert [f.packets for f in coalesce([a[0], other_port, a[1]])] == [1, 1, 1]
    jumped = changed(a[1], IP, id=99)  # IPv4 identifications go up by one
    assert [f.packets for f in coalesce([a[0], jumped])] == [1, 1]
    syn = changed(a[0], TCP, flags="SA")
    assert [f.packets for f in coalesce([syn, a[1]])] == [1, 1]
    for field, value in (("window", 1), ("ack", 1), ("dataofs", 6), ("seq", 1)):
        other = changed(a[1], TCP, **{field: value})  # as Linux tcp_gro_receive: a flush
        assert [f.packets for f in coalesce([a[0], other])] == [1, 1], field
    for field, value in (("ttl", 1), ("tos", 4), ("flags", 0)):  # DF off
        other = changed(a[1], IP, **{field: value})
        assert [f.packets for f in coalesce([a[0], other])] == [1, 1], field
    lying = bytearray(a[1])
    lying[3] ^= 1  # a stated length that is not the packet's
    assert [f.packets for f in coalesce([a[0], bytes(lying)])] == [1, 1]
    assert [f.packets for f in coalesce(a)] == [4]


@pytest.mark.parametrize(("last", "flags"), [(200, "A"), (MSS, "PA")])
def test_a_shorter_or_pushed_segment_ends_the_run(last, flags, coalesce):
    a = flow(4, 3, last=last, flags=flags)
    b = flow(4, 3, seq=1000 + 2 * MSS + last, ident=10)  # would continue a
    assert [f.packets for f in coalesce(a + b)] == [3, 3]
    full = flow(4, 3, flags="A")  # neither: the next segment joins
    assert [f.packets for f in coalesce(full + flow(4, 1, seq=1000 + 3 * MSS, ident=10))] == [4]


def test_a_run_stops_at_64_kilobytes(coalesce):
    segments = flow(4, 40, flags="A") + flow(4, 20, seq=1000 + 40 * MSS, ident=47)
    frames = coalesce(segments)
    assert [f.packets for f in frames] == [48, 12]  # 20 + 32 + 48 * 1348 = 64,756 bytes
    assert [p for f in frames for p in gso.split(f.data)] == segments


def udp_flow(family: int, sizes: list[int], *, ident: int = 300) -> list[bytes]:
    """Datagrams of one UDP flow (scapy's checksums), IPv4 identifications going up by one."""
    datagrams = []
    for n, size in enumerate(sizes):
        ip_layer = IP(**V4, id=ident + n, flags="DF") if family == 4 else IPv6(**V6)
        datagrams.append(bytes(ip_layer / UDP(sport=53, dport=5353) / payload(size, seed=n)))
    return datagrams


@pytest.mark.parametrize("family", [4, 6])
def test_datagrams_of_one_flow_are_one_uso_write_that_cuts_back_into_them(family, coalesce):
    datagrams = udp_flow(family, [1000] * 5 + [17])
    frames = coalesce(datagrams)
    assert [f.packets for f in frames] == [6]
    start = 20 if family == 4 else 40
    assert vnet.read(frames[0].data) == VnetHeader(
        F_NEEDS_CSUM, vnet.GSO_UDP_L4, start + 8, 1000, start, 6
    )
    assert gso.split(frames[0].data) == datagrams  # Linux __udp_gso_segment, as gso.py does it
    assert [checked(raw, family)[UDP].len for raw in datagrams] == [1008] * 5 + [25]


def test_a_udp_run_ends_at_a_shorter_datagram_and_where_the_flow_does_not_continue(coalesce):
    five = udp_flow(4, [1000, 1000, 600, 1000, 1000])
    assert [f.packets for f in coalesce(five)] == [3, 2]  # 600 ends the first run
    longer = udp_flow(4, [600, 1000])
    assert [f.packets for f in coalesce(longer)] == [1, 1]
    a = udp_flow(4, [1000] * 3)
    for layer, fields in ((UDP, {"dport": 5354}), (IP, {"id": 99}), (IP, {"ttl": 1})):
        other = changed(a[1], layer, **fields)
        assert [f.packets for f in coalesce([a[0], other, a[2]])] == [1, 1, 1], fields
    no_checksum = bytearray(a[1])
    no_checksum[26:28] = bytes(2)  # IPv4 UDP without a checksum (RFC 768): written as it is
    assert [f.packets for f in coalesce([a[0], bytes(no_checksum)])] == [1, 1]
    assert [f.packets for f in coalesce([bytes(no_checksum), a[2]])] == [1, 1]


@pytest.fixture(scope="module")
def streams() -> list[list[bytes]]:
    """Runs to mix: TCP and UDP flows of both families, whole and ending short, and a ping."""
    ping = bytes(IP(**V4) / UDP(sport=1, dport=2) / b"hi")
    return [
        flow(4, 12, last=300),
        flow(6, 9, flags="A"),
        flow(4, 40, flags="A") + flow(4, 20, seq=1000 + 40 * MSS, ident=47),  # past 64 KB
        udp_flow(4, [900] * 8 + [41]),
        udp_flow(6, [1200] * 6),
        [ping, bytes(IPv6(**V6) / TCP(flags="S"))],
    ]


def mutated(rng: random.Random, packet: bytes) -> bytes:
    """``packet`` with one byte changed, cut short or grown, or as it is (mostly)."""
    what = rng.randrange(8)
    if what == 0:
        at = rng.randrange(len(packet))
        return packet[:at] + bytes([rng.randrange(256)]) + packet[at + 1 :]
    if what == 1:
        return packet[: rng.randrange(len(packet))]
    if what == 2:
        return packet + rng.randbytes(rng.randrange(1, 9))
    return packet


@pytest.mark.parametrize("seed", range(60))
def test_gro_c_writes_what_gro_py_writes(seed, streams, native_coalesce):
    """Random mixes of the runs, packets dropped, repeated and changed (the seed replays
    one): the C frames are the Python frames, byte for byte."""
    rng = random.Random(seed)
    packets: list[bytes] = []
    while len(packets) < 120:
        run = rng.choice(streams)
        start = rng.randrange(len(run))
        for packet in run[start : start + rng.randrange(1, 30)]:
            if rng.random() < 0.9:
                packets.append(mutated(rng, packet))
    assert native_coalesce(packets) == gro.coalesce(packets), f"seed {seed}"


def test_gro_c_refuses_what_is_not_bytes(native_coalesce):
    with pytest.raises(TypeError, match="packet 1 is bytearray, not bytes"):
        native_coalesce([b"x", bytearray(b"y")])
    with pytest.raises(TypeError, match="sequence of bytes"):
        native_coalesce(7)  # type: ignore[arg-type]
    assert native_coalesce([]) == []


@pytest.fixture(scope="module")
def super_segments() -> list[tuple[VnetHeader, bytes]]:
    """Reads to change at random: TCP and UDP super-segments of both families (one IPv4
    header with options), a partial checksum alone, and a plain packet."""
    tcp4, tcp6 = tcp_super(4, MSS * 5 + 77), tcp_super(6, MSS * 3)
    with_options = IP(**V4, id=9, options=b"\x01" * 4) / UDP(sport=7, dport=9) / payload(3000)
    udp6 = IPv6(**V6) / UDP(sport=53, dport=5353) / payload(4017)
    syn = IP(**V4) / TCP(sport=1, dport=2, flags="S") / payload(333)
    return [
        (VnetHeader(F_NEEDS_CSUM, vnet.GSO_TCPV4, 52, MSS, 20, 16), partial(tcp4, 16)),
        (VnetHeader(F_NEEDS_CSUM, vnet.GSO_TCPV6, 72, MSS, 40, 16), partial(tcp6, 16)),
        (VnetHeader(F_NEEDS_CSUM, vnet.GSO_UDP_L4, 32, 1000, 24, 6), partial(with_options, 6)),
        (VnetHeader(F_NEEDS_CSUM, vnet.GSO_UDP_L4, 48, 1000, 40, 6), partial(udp6, 6)),
        (VnetHeader(F_NEEDS_CSUM, vnet.GSO_NONE, 0, 0, 20, 16), partial(syn, 16)),
        (VnetHeader(0, vnet.GSO_NONE, 0, 0, 0, 0), bytes(syn)),
    ]


def changed_read(rng: random.Random, header: VnetHeader, packet: bytes) -> bytes:
    """One read from ``header`` and ``packet`` with a field of either changed (or none)."""
    fields = header._asdict()
    what = rng.randrange(6)
    if what == 0:
        name = rng.choice(list(fields))
        fields[name] = rng.randrange(256 if name in ("flags", "gso_type") else 2000)
    elif what == 1:
        fields["gso_size"] = rng.choice([0, 1, 7, 500, 1000, MSS, 9000])
    elif what == 2:
        at = rng.randrange(min(len(packet), 80))
        packet = packet[:at] + bytes([rng.randrange(256)]) + packet[at + 1 :]
    elif what == 3:
        packet = packet[: rng.randrange(len(packet) + 1)]
    data = VnetHeader(**fields).pack() + packet
    return data[: rng.randrange(10)] if rng.random() < 0.02 else data


def outcome(split: gso.Split, data: bytes) -> list[bytes] | str:
    try:
        return split(data)
    except vnet.OffloadError as error:
        return f"OffloadError: {error}"


@pytest.mark.parametrize("seed", range(40))
def test_gso_c_cuts_what_gso_py_cuts(seed, super_segments, native_split):
    """Random reads (the seed replays them): the same packets from both, or the same error."""
    rng = random.Random(seed)
    for _ in range(25):
        data = changed_read(rng, *rng.choice(super_segments))
        assert outcome(native_split, data) == outcome(gso.split, data), f"seed {seed}"


def test_gso_c_refuses_what_is_not_bytes(native_split):
    with pytest.raises(TypeError, match="frame must be bytes"):
        native_split(bytearray(20))  # type: ignore[arg-type]


@pytest.mark.parametrize("source", ["gro.c", "gso.c", "fastrun.c", "packetio.c"])
def test_the_c_twins_compile_without_a_warning(source, tmp_path):
    """Users build without -Werror (a newer compiler's new warning must not stop them);
    here every warning is an error."""
    try:
        compiler = _cbuild.find_compiler(source)
    except _cbuild.BuildError as error:
        pytest.skip(str(error))
    path = Path(gro.__file__).with_name(source)
    include = f"-I{sysconfig.get_paths()['include']}"
    argv = [compiler, *_cbuild.FLAGS, "-Werror", include, "-o", str(tmp_path / "x.so"), str(path)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr


def test_without_a_compiler_espd_takes_the_python_twins_and_leaves_tso_off(monkeypatch, tmp_path):
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    native.cache_clear()
    packet_io.cache_clear()
    try:
        assert gro.coalescer() == (gro.coalesce, "Python")
        assert gso.splitter() == (gso.split, "Python")
        assert packet_io() is None
        assert not espd_cli._tso(argparse.Namespace(offload=True, tso=None))
        assert espd_cli._tso(argparse.Namespace(offload=True, tso=True))  # asked for
    finally:  # the next test builds (or finds) the C twins again
        native.cache_clear()
        packet_io.cache_clear()
    assert not espd_cli._tso(argparse.Namespace(offload=False, tso=None))
    assert not espd_cli._tso(argparse.Namespace(offload=True, tso=False))
