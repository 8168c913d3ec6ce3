"""espd end to end: two network namespaces joined by a veth pair, an espd in each with
matching SAs and tunnel-mode policies, traffic between the inner addresses on the TUN
devices (see :mod:`tests.esp.netns`).

Checked: ping and a 2 MiB TCP transfer cross the tunnel; the veth carries nothing but ESP
in UDP/4500 (or protocol 50 with ``--raw-esp``) and none of the plaintext; espd's own
capture holds every ESP packet it sent and received, as they were on the wire; bad packets
and failing sends do not stop it; a killed espd restarted recovers; espd following keyd
picks up an SA pair added later. The command's refusals need no namespace.

Needs root, ``ip netns`` and /dev/net/tun (skipped with the reason otherwise). Every wait
is bounded; namespaces and processes are removed even when a test fails.
"""

import json
import os
import signal
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from scapy.layers.inet import IP, TCP
from scapy.layers.ipsec import ESP, SecurityAssociation

from cryptoapi.esp import Outbound
from cryptoapi.esp.espd.sockets import EspSocket, Received
from cryptoapi.pfkey import ExtType, Lifetime, Message, MsgType, PfkeyError, Sa, SaType, decode
from cryptoapi.pfkey.daemon.client import PfkeyClient
from tests.esp import netns
from tests.esp.keyd import keyd, listening, setkey
from tests.esp.netns import Espd, Host, classify, espd_command, read_pcap, transfer_bytes

REASON = netns.unavailable()
needs_netns = pytest.mark.skipif(REASON is not None, reason=REASON or "")
MiB = 1 << 20


@dataclass
class Tunnel:
    a: Host
    b: Host
    espd_a: Espd
    espd_b: Espd
    pcap: Path  # espd_a's capture


def start_pair(a: Host, b: Host, *options: str, replay: int = 64) -> tuple[Espd, Espd]:
    """An espd on each host with the tunnel's setkey file (both start at once)."""
    espd_a = a.espd("-f", a.conf(netns.tunnel_conf(a, b, replay=replay)), *options)
    espd_b = b.espd("-f", b.conf(netns.tunnel_conf(b, a, replay=replay)), *options)
    return espd_a.ready(), espd_b.ready()


@pytest.fixture(scope="module")
def udp_tunnel():
    with netns.hosts() as (a, b):
        pcap = a.work / "espd-a.pcap"
        espd_a = a.espd("-f", a.conf(netns.tunnel_conf(a, b)), "--pcap", str(pcap))
        espd_b = b.espd("-f", b.conf(netns.tunnel_conf(b, a)))
        yield Tunnel(a, b, espd_a.ready(), espd_b.ready(), pcap)


@needs_netns
def test_ping_crosses_the_udp_tunnel(udp_tunnel):
    t = udp_tunnel
    before_a, before_b = t.espd_a.stats(), t.espd_b.stats()
    assert netns.ping(t.a, t.b, count=3) == 3
    assert netns.ping(t.b, t.a, count=3) == 3
    after_a, after_b = t.espd_a.stats(), t.espd_b.stats()
    # through ESP both ways: protected on one side, accepted on the other
    assert after_a["EspOutPackets"] - before_a["EspOutPackets"] >= 6
    assert after_b["EspInPackets"] - before_b["EspInPackets"] >= 6
    assert after_a["XfrmInNoStates"] == after_a["XfrmInTmplMismatch"] == 0


@needs_netns
def test_a_tcp_transfer_arrives_intact(udp_tunnel):
    t = udp_tunnel
    received, sent = netns.transfer(t.a, t.b, 2 * MiB, seed=7)
    assert received == {"received": 2 * MiB, "sha256": sent["sha256"]}
    received, sent = netns.transfer(t.b, t.a, MiB // 2, seed=8)
    assert received == {"received": MiB // 2, "sha256": sent["sha256"]}


@needs_netns
def test_decrypted_segments_are_written_coalesced(udp_tunnel):
    t = udp_tunnel
    before = t.espd_b.stats()
    received, sent = netns.transfer(t.a, t.b, MiB, seed=10)
    assert received == {"received": MiB, "sha256": sent["sha256"]}
    after = t.espd_b.stats()
    writes = after["EspdTunGroWrites"] - before.get("EspdTunGroWrites", 0)
    assert 0 < writes < 400  # 1 MiB is 778 segments of 1348 bytes


@needs_netns
def test_a_udp_burst_arrives_whole_and_in_order_in_coalesced_writes(udp_tunnel):
    """Datagrams of one UDP flow that espd decrypts in one turn reach the TUN as USO
    packets (gro.py), which the kernel cuts back into the datagrams sent."""
    t = udp_tunnel
    before = t.espd_b.stats()
    result = netns.udp_burst(t.a, t.b, 400, size=1000, seed=12)
    assert result == {"received": 400, "intact": True, "in_order": True}
    after = t.espd_b.stats()
    writes = after["EspdTunGroWrites"] - before.get("EspdTunGroWrites", 0)
    assert 0 < writes < 400


@needs_netns
@pytest.mark.parametrize("tso", [(), ("--no-tso",)], ids=["default", "no-tso"])
def test_the_segments_espd_sends_are_whole_packets_that_fit_the_tun(tso):
    """By default (gso.c built) espd reads super-segments and cuts them in C; with
    --no-tso the kernel cuts them. Its packets' reads, receives and sends run in C too
    (packetio.c). Either way scapy decrypts what espd sent and finds IP
    and TCP lengths and checksums right, within the TUN's MTU."""
    with netns.hosts() as (a, b):
        pcap = a.work / "tso.pcap"
        espd_a = a.espd("-f", a.conf(netns.tunnel_conf(a, b)), *tso, "--pcap", str(pcap))
        espd_b = b.espd("-f", b.conf(netns.tunnel_conf(b, a)), *tso)
        espd_a.ready(), espd_b.ready()
        reads = "none" if tso else "checksum"
        assert any(f"offloads: coalesced writes, {reads}" in line for line in espd_a.stderr)
        said = "writes coalesced in C" + ("" if tso else ", reads cut in C")
        assert any(line.rstrip().endswith(f": {said}") for line in espd_a.stderr)
        assert any(line.rstrip().endswith(": TUN reads and UDP receives and sends in C")
                   for line in espd_a.stderr)  # fmt: skip
        received, sent = netns.transfer(a, b, MiB, seed=11)
        assert received == {"received": MiB, "sha256": sent["sha256"]}
        assert (espd_a.stats().get("EspdTunGsoReads", 0) > 0) == (not tso)
        key = bytes.fromhex(netns.tunnel_conf(a, b).split("aes-gcm-16 0x")[1][:40])
        sa = SecurityAssociation(ESP, spi=0x1001, crypt_algo="AES-GCM", crypt_key=key,
                                 tunnel_header=IP(src=a.outer, dst=b.outer))  # fmt: skip
        sizes = []
        for src, dst, _, _, esp in esp_records(pcap):
            if esp[:4] == (0x1001).to_bytes(4, "big"):
                outer = IP(src=socket.inet_ntoa(src), dst=socket.inet_ntoa(dst)) / ESP(esp)
                inner = sa.decrypt(outer)
                sizes.append(len(inner))
                fresh = IP(bytes(inner))
                del fresh.len, fresh.chksum, fresh[TCP].chksum
                assert bytes(fresh) == bytes(inner), "a wrong length or checksum"
        assert len(sizes) > 700 and max(sizes) <= 1400  # 1 MiB in packets of the TUN's MTU


@needs_netns
def test_without_offloads_a_tcp_transfer_arrives_intact_one_packet_per_call():
    with netns.hosts() as (a, b):
        espd_a, espd_b = start_pair(a, b, "--no-offload")
        assert any("TUN device esp0: offloads: none" in line for line in espd_a.stderr)
        received, sent = netns.transfer(a, b, MiB, seed=12)
        assert received == {"received": MiB, "sha256": sent["sha256"]}
        for espd in (espd_a, espd_b):
            counters = espd.stats()
            assert counters["EspdTunInPackets"] > 0
            assert not any(name.startswith(("EspdTunGso", "EspdTunGro", "EspdUdpG"))
                           for name in counters)  # fmt: skip


def esp_records(path: Path) -> list[tuple[bytes, bytes, int, int, bytes]]:
    """(src, dst, sport, dport, ESP payload) of each IPv4/UDP record of a raw pcap, with
    the IPv4 header checksum verified."""
    linktype, records = read_pcap(path)
    assert linktype == 101
    out = []
    for packet in records:
        assert packet[0] == 0x45 and packet[9] == 17, packet[:20].hex()
        assert sum(struct.unpack(">10H", packet[:20])) % 0xFFFF == 0  # a good checksum
        sport, dport, length = struct.unpack_from(">HHH", packet, 20)
        assert length == len(packet) - 20
        out.append((packet[12:16], packet[16:20], sport, dport, packet[28:]))
    return out


def wire_records(path: Path) -> set[tuple[bytes, bytes, int, int, bytes]]:
    """The same of each ESP-in-UDP frame of an Ethernet capture."""
    _, frames = read_pcap(path)
    out = set()
    for frame in frames:
        packet = frame[14:]
        if frame[12:14] == b"\x08\x00" and packet[9] == 17:
            header = (packet[0] & 0x0F) * 4
            sport, dport = struct.unpack_from(">HH", packet, header)
            esp = packet[header + 8 : int.from_bytes(packet[2:4], "big")]
            out.add((packet[12:16], packet[16:20], sport, dport, esp))
    return out


@needs_netns
def test_the_link_carries_only_esp_and_the_espd_capture_matches_it(udp_tunnel):
    t = udp_tunnel
    with netns.capture(t.b) as wire:
        before = len(esp_records(t.pcap))
        assert netns.ping(t.a, t.b, count=2) == 2
        received, _ = netns.transfer(t.a, t.b, MiB, seed=9)
        assert received["received"] == MiB
        recorded = esp_records(t.pcap)[before:]
    _, frames = read_pcap(wire)
    kinds = classify(frames)
    assert kinds.other == [] and kinds.esp_raw == 0
    assert kinds.esp_udp > 700  # 1 MiB in 1400-byte packets, and the ACKs
    assert kinds.spis == {0x1001, 0x2002}
    blob = b"".join(frames)
    data = transfer_bytes(MiB, 9)
    leaked = [i for i in range(0, MiB - 32, 4096) if data[i : i + 32] in blob]
    assert leaked == [], "plaintext of the transfer is on the link"
    # espd_a's record and the wire agree: every ESP packet on the wire is in it, as it
    # recorded it, and every packet it recorded meanwhile is on the wire, but for the
    # frames the kernel says it dropped from the capture's (large) buffer
    on_wire = wire_records(wire)
    assert on_wire <= set(esp_records(t.pcap))
    missing = set(recorded) - on_wire
    drops = netns.capture_drops(wire)
    assert len(missing) <= drops, f"{len(missing)} recorded not on the wire, {drops} dropped"
    assert len(recorded) >= kinds.esp_udp - 5  # (the tail of an earlier test's traffic)


@needs_netns
def test_the_capture_holds_every_esp_packet_sent_and_received(udp_tunnel):
    t = udp_tunnel
    assert netns.ping(t.a, t.b, count=2) == 2
    first = t.espd_a.stats()
    records = esp_records(t.pcap)
    last = t.espd_a.stats()
    sent = [
        r for r in records if r[:4] == (bytes([192, 0, 2, 1]), bytes([192, 0, 2, 2]), 4500, 4500)
    ]
    got = [
        r for r in records if r[:4] == (bytes([192, 0, 2, 2]), bytes([192, 0, 2, 1]), 4500, 4500)
    ]
    assert len(sent) + len(got) == len(records)
    assert first["EspdSendPackets"] <= len(sent) <= last["EspdSendPackets"]
    assert first["EspdReceivePackets"] <= len(got) <= last["EspdReceivePackets"]
    assert {r[4][:4] for r in sent} == {b"\0\0\x10\x01"}
    assert {r[4][:4] for r in got} == {b"\0\0\x20\x02"}


@needs_netns
def test_bad_packets_and_failed_sends_do_not_stop_espd(udp_tunnel):
    t = udp_tunnel
    before = t.espd_a.stats()
    junk = [
        "",  # empty
        "ff",  # a NAT keepalive
        "00000000" + "aa" * 40,  # IKE behind the non-ESP marker
        "00002002",  # too short for ESP
        "00002002" + "7fffffff" + "55" * 64,  # right SPI, new number, IV, 2 blocks, bad ICV
        "0000beef" + "00000001" + "55" * 60,  # no such SA
        os.urandom(1400).hex(),
    ]
    args = ["--src", t.b.outer, "--dst", t.a.outer]
    netns.tool(t.b.ns, "udp-send", *args, *(f"--payload={p}" for p in junk))
    t.a.ns.ip("route", "add", "unreachable", f"{t.b.outer}/32")
    try:
        assert netns.ping(t.a, t.b, count=1, timeout=1) == 0
    finally:
        t.a.ns.ip("route", "del", "unreachable", f"{t.b.outer}/32")
    assert netns.ping(t.a, t.b, count=2) == 2
    after = t.espd_a.stats()
    assert t.espd_a.process.poll() is None
    grew = {k: after.get(k, 0) - before.get(k, 0) for k in after}
    assert grew["EspInKeepalive"] == 1 and grew["EspInIke"] == 1
    assert grew["XfrmInNoStates"] >= 1 and grew["XfrmInHdrError"] >= 1
    assert grew["XfrmInStateProtoError"] >= 1  # the forged ICV (Linux counts it there)
    assert grew["EspdSendErrorEHOSTUNREACH"] >= 1


@needs_netns
def test_raw_esp_crosses_and_the_link_carries_only_protocol_50():
    with netns.hosts() as (a, b):
        start_pair(a, b, "--raw-esp")
        with netns.capture(a) as wire:
            assert netns.ping(a, b, count=3) == 3
            received, sent = netns.transfer(b, a, MiB // 4, seed=3)
        assert received == {"received": MiB // 4, "sha256": sent["sha256"]}
        kinds = classify(read_pcap(wire)[1])
        assert kinds.other == [] and kinds.esp_udp == 0
        assert kinds.esp_raw > 150 and kinds.spis == {0x1001, 0x2002}


@needs_netns
@pytest.mark.parametrize("source", ["setkey-file", "keyd"])
def test_a_killed_espd_sends_no_iv_twice_and_is_heard_within_a_second(source):
    """kill -9 under traffic, then a restart with the same keys (from the setkey file, or
    from keyd's state): no (SPI, IV) pair crosses the wire twice, the sequence numbers go
    on upward (b's replay window takes them), and a ping crosses within a second of the
    restart. SIGTERM then prints the counters in xfrm_stat's order."""
    with netns.hosts() as (a, b):
        start_a = _espd_of(a, b, source)
        b.espd("-f", b.conf(netns.tunnel_conf(b, a))).ready()
        with netns.capture(b) as wire:
            espd_a = start_a()
            traffic = a.ns.start(netns.PYTHON, "-m", "tests.esp.netns", "ping", "--src", a.inner,
                                 "--dst", b.inner, "--count", "10000", "--interval", "0.005",
                                 "--timeout", "4")  # fmt: skip
            assert netns.ping(a, b, count=3) == 3
            espd_a.finish(signal.SIGKILL)
            espd_a = start_a()
            assert netns.ping(a, b, count=1, timeout=1) == 1
            assert netns.stop(traffic) in (0, -signal.SIGTERM)
        sent = [esp for src, esp in _wire_esp(wire) if src == a.outer]
        ivs = [(esp[:4], esp[8:16]) for esp in sent]
        assert len(sent) > 20 and len(set(ivs)) == len(ivs)
        runs = _by_process(sent)
        assert len(runs) == 2, f"{len(runs)} IV salts seen, not one per espd run"
        first, second = runs
        assert min(second) > max(first)  # numbers go on upward, past the floor
        code, out, err = espd_a.finish(signal.SIGTERM)
        assert code == 0, err
        stats = netns.parse_stats(out)
        assert list(stats)[:2] == ["XfrmInError", "XfrmInBufferError"]  # xfrm_stat's order
        assert stats["EspOutPackets"] >= 1 and stats["EspdTunOutPackets"] >= 1


def _espd_of(a: Host, b: Host, source: str) -> "Callable[[], Espd]":
    """What starts a's espd, ready, with the tunnel's keys from ``source``."""
    if source == "setkey-file":
        conf = a.conf(netns.tunnel_conf(a, b))
        return lambda: a.espd("-f", conf).ready()
    daemon, path = keyd(a, a.ns.name)
    listening(daemon)
    setkey(path, netns.tunnel_conf(a, b))
    return lambda: a.espd("--socket", path).ready()


def _wire_esp(path: Path) -> list[tuple[str, bytes]]:
    """(outer source, ESP packet) of each ESP-in-UDP/4500 frame of an Ethernet capture."""
    out = []
    for frame in read_pcap(path)[1]:
        packet = frame[14:]
        if frame[12:14] != b"\x08\x00" or packet[9] != 17:
            continue
        udp = packet[(packet[0] & 0x0F) * 4 :]
        if udp[2:4] == (4500).to_bytes(2, "big") and udp[8:12] != bytes(4):
            out.append((socket.inet_ntoa(packet[12:16]), udp[8:]))
    return out


def _by_process(sent: list[bytes]) -> list[list[int]]:
    """The sequence numbers each IV salt (one per espd run) went with, in order of first
    appearance; each IV's low half is its sequence number."""
    runs: dict[bytes, list[int]] = {}
    for esp in sent:
        seq = int.from_bytes(esp[4:8], "big")
        assert esp[12:16] == esp[4:8], "the IV's low half is not the sequence number"
        runs.setdefault(esp[8:12], []).append(seq)
    return list(runs.values())


@needs_netns
def test_espd_follows_keyd_through_a_restart_and_uses_an_sa_pair_added_later():
    with netns.hosts() as (a, b):
        daemons = {host.ns.name: keyd(host, host.ns.name) for host in (a, b)}
        sockets = {name: path for name, (_, path) in daemons.items()}
        for host, peer in ((a, b), (b, a)):
            listening(daemons[host.ns.name][0])
            setkey(sockets[host.ns.name], netns.tunnel_conf(host, peer))
        pcap = a.work / "follow.pcap"
        espd_a = a.espd("--socket", sockets[a.ns.name], "--pcap", str(pcap))
        espd_b = b.espd("--socket", sockets[b.ns.name])
        espd_a.ready(), espd_b.ready()
        assert netns.ping(a, b, count=2) == 2
        # a's keyd stops: espd keeps its SAs; keyd comes back with its state; espd
        # reconnects (on its own, within a second or so) and follows it again
        assert netns.stop(daemons[a.ns.name][0]) == 0
        assert netns.ping(a, b, count=1) == 1
        listening(keyd(a, a.ns.name)[0])
        # a second pair of inner addresses and its own SAs, loaded into keyd later
        for host, peer, (mine, theirs) in ((a, b, ("10.1.0.2", "10.2.0.2")),
                                           (b, a, ("10.2.0.2", "10.1.0.2"))):  # fmt: skip
            host.ns.ip("addr", "add", f"{mine}/32", "dev", host.tun)
            host.ns.ip("route", "add", f"{theirs}/32", "dev", host.tun, "src", mine)
            later = netns.tunnel_conf(
                host, peer, spis=(0x3003, 0x4004), inner=(mine, theirs), flush=False
            )
            setkey(sockets[host.ns.name], later)
        deadline = time.monotonic() + netns.WAIT
        while netns.ping(a, b, count=1, timeout=1, inner=("10.1.0.2", "10.2.0.2")) == 0:
            assert time.monotonic() < deadline, "the SAs added later were not used"
        spis = {r[4][:4] for r in esp_records(pcap)}
        assert spis == {bytes.fromhex(s) for s in ("00001001", "00002002", "00003003", "00004004")}
        assert netns.ping(a, b, count=1) == 1  # the first pair still works
        assert "lost the key daemon" in "".join(espd_a.finish()[2])


@needs_netns
def test_espd_tells_keyd_of_the_byte_limit_its_packets_reached():
    """keyd keeps the SAs, espd counts their bytes: a hard byte limit reached by espd's
    packets ends the SA in keyd too (espd reports it with an EXPIRE, keyd deletes it and
    tells its listeners), and the SA carries nothing more."""
    with netns.hosts() as (a, b):
        daemon, path = keyd(a, a.ns.name)
        listening(daemon)
        out_spi = 0x1001 if min(a, b, key=lambda h: h.outer) is a else 0x2002
        limited = f"esp {out_spi:#x} -m tunnel -r 64 -bh 1000"  # 84-byte echo requests: 12 of them
        conf = netns.tunnel_conf(a, b).replace(f"esp {out_spi:#x} -m tunnel -r 64", limited)
        setkey(path, conf)
        espd_a = a.espd("--socket", path)
        espd_b = b.espd("-f", b.conf(netns.tunnel_conf(b, a)))
        espd_a.ready(), espd_b.ready()
        with PfkeyClient(path, timeout=netns.WAIT) as listener:
            listener.request(Message(MsgType.REGISTER, SaType.ESP))
            answered = netns.ping(a, b, count=100, timeout=4)  # the limit cuts it short
            assert 5 < answered < 100
            deadline = time.monotonic() + netns.WAIT
            while not _has_hard_expire(listener, out_spi):
                assert time.monotonic() < deadline, "keyd never told its listener"
            dumped = listener.request(Message(MsgType.DUMP, SaType.ESP))
        spis = {decode(m).get(ExtType.SA, Sa).spi for m in dumped if not decode(m).errno}
        assert out_spi not in spis and len(spis) == 1
        assert netns.ping(a, b, count=1, timeout=1) == 0  # no SA a -> b any more
        assert espd_a.stats()["XfrmOutNoStates"] >= 1


def _has_hard_expire(listener: PfkeyClient, spi: int) -> bool:
    """Whether the next broadcast (within a second) is the hard EXPIRE of ``spi``."""
    try:
        message = decode(listener.notification(timeout=1.0))
    except PfkeyError:
        return False
    sa = message.get(ExtType.SA, Sa)
    hard = message.get(ExtType.LIFETIME_HARD, Lifetime)
    return message.type == MsgType.EXPIRE and sa is not None and sa.spi == spi and hard is not None


@needs_netns
def test_the_tun_device_is_created_up_with_the_mtu_asked_for():
    code = (
        "import subprocess; from cryptoapi.esp.espd.tun import open_tun\n"
        "tun = open_tun('espnew', mtu=1280)\n"
        "print(subprocess.run(['ip', '-o', 'link', 'show', tun.name], capture_output=True,"
        " text=True, check=True).stdout)\n"
    )
    with netns.namespace("t") as ns:
        done = subprocess.run(ns.argv(sys.executable, "-c", code), capture_output=True,
                              text=True, timeout=netns.WAIT, check=False)  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "espnew" in done.stdout and "mtu 1280" in done.stdout
        assert "UP" in done.stdout.split("<", 1)[1].split(">", 1)[0]
        assert "espnew" not in ns.ip("-o", "link", "show")  # gone with its only user


def test_a_setkey_file_the_key_manager_refuses_stops_espd_before_it_starts(tmp_path):
    conf = tmp_path / "twice.conf"
    sa = "add 192.0.2.1 192.0.2.2 esp 0x1001 -E aes-gcm-16 0x" + "11" * 20 + ";\n"
    conf.write_text(sa + sa)
    done = espd_command("--tun", "esp0", "-f", str(conf))
    assert done.returncode == 1
    assert f"{conf}:2:1: add:" in done.stderr and "(EEXIST)" in done.stderr
    assert "ready" not in done.stderr


def test_a_setkey_file_that_does_not_parse_is_reported_with_its_place(tmp_path):
    conf = tmp_path / "bad.conf"
    conf.write_text("add 192.0.2.1 192.0.2.2 esp 0x1001 -E aes-gcm-16 0x11;\n")
    done = espd_command("--tun", "esp0", "-f", str(conf))
    assert done.returncode == 1 and f"{conf}:1:" in done.stderr


def test_espd_without_its_key_daemon_says_so(tmp_path):
    done = espd_command("--tun", "esp0", "--socket", str(tmp_path / "none.sock"))
    assert done.returncode == 1 and "cannot connect" in done.stderr


@pytest.mark.parametrize(
    ("family", "host"), [(socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")]
)
def test_a_udp_socket_reports_both_addresses_and_ports(family, host):
    try:
        esp = EspSocket(family, raw=False, port=0)
    except OSError as error:
        pytest.skip(f"no {family.name} here: {error}")
    with esp, socket.socket(family, socket.SOCK_DGRAM) as peer:
        peer.bind((host, 0))
        peer.settimeout(netns.WAIT)
        loopback = socket.inet_pton(family, host)
        peer_port = peer.getsockname()[1]
        esp.send(Outbound(family, loopback, loopback, esp.port, peer_port, b"\0\0\x10\x01esp"))
        data, (_, source_port, *_) = peer.recvfrom(100)
        assert data == b"\0\0\x10\x01esp" and source_port == esp.port
        assert esp.receive() is None  # nothing waiting: None, not an exception
        peer.sendto(b"\0\0\x20\x02back", (host, esp.port))
        deadline = time.monotonic() + netns.WAIT
        while (got := esp.receive()) is None:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert got == Received(None, b"\0\0\x20\x02back", loopback, loopback, peer_port, esp.port)


RAW_ESP_ON_LOOPBACK = """
import json, socket, sys, time
from cryptoapi.esp.espd.sockets import EspSocket
family = socket.AF_INET if sys.argv[1] == "4" else socket.AF_INET6
host = "127.0.0.1" if family == socket.AF_INET else "::1"
loopback = socket.inet_pton(family, host)
class D:
    src = dst = loopback
    sport = dport = 0
    payload = bytes.fromhex("00001001 00000001") + b"raw"
with EspSocket(family, raw=True) as esp:
    esp.send(D())
    deadline = time.monotonic() + 5
    while (got := esp.receive()) is None and time.monotonic() < deadline:
        time.sleep(0.01)
    print(json.dumps({k: v.hex() if isinstance(v, bytes) else v for k, v in got._asdict().items()}))
"""


@needs_netns
@pytest.mark.parametrize("version", ["4", "6"])
def test_a_raw_esp_socket_sends_protocol_50_and_reports_the_addresses(version):
    with netns.namespace("r") as ns:  # a loopback of its own: no other ESP arrives there
        done = subprocess.run(ns.argv(sys.executable, "-c", RAW_ESP_ON_LOOPBACK, version),
                              capture_output=True, text=True, timeout=netns.WAIT,
                              check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    esp = (bytes.fromhex("00001001 00000001") + b"raw").hex()
    loopback = "7f000001" if version == "4" else "00" * 15 + "01"
    assert (got["payload"], got["src"], got["dst"]) == (esp, loopback, loopback)
    assert got["sport"] == got["dport"] == 0
    if version == "4":  # the whole packet, IP header included, protocol 50
        assert got["packet"][18:20] == "32" and got["packet"][40:] == esp
    else:
        assert got["packet"] is None


def test_the_other_commands_do_not_load_the_data_path():
    code = "import sys, cryptoapi.cli; print(sorted(m for m in sys.modules if '.esp' in m))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=netns.WAIT, check=True)  # fmt: skip
    assert done.stdout.strip() == str([  # the command and the two modules of its defaults
        "cryptoapi.cli.espd", "cryptoapi.esp", "cryptoapi.esp.espd", "cryptoapi.esp.espd.pcap",
        "cryptoapi.esp.espd.tun",
    ])  # fmt: skip
