"""espd's capture: the pcap file layout byte for byte (draft-ietf-opsawg-pcap §4-5), the
Ethernet framing, snap length, and the outer headers rebuilt for UDP mode (checksums that
verify); tshark reads the result as ESP in UDP when it is installed."""

import errno
import os
import shutil
import struct
import subprocess

import pytest

from cryptoapi.esp import ip
from cryptoapi.esp.espd.frames import outer_packet
from cryptoapi.esp.espd.pcap import (
    LINKTYPE_ETHERNET,
    LINKTYPE_RAW,
    SNAPLEN,
    PcapWriter,
    ethernet,
)
from cryptoapi.esp.ip import checksum

SRC4, DST4 = bytes([192, 0, 2, 1]), bytes([192, 0, 2, 2])
SRC6 = bytes.fromhex("20010db8000000000000000000000001")
DST6 = bytes.fromhex("20010db8000000000000000000000002")
ESP = bytes.fromhex("00001001 00000001") + bytes(range(40))  # SPI 0x1001, seq 1, "data"


def ones_sum(data: bytes) -> int:
    """The 16-bit ones' complement sum, computed independently of frames.checksum: a
    header or datagram whose checksum is right sums to 0xffff."""
    if len(data) % 2:
        data += b"\0"
    total = 0
    for i in range(0, len(data), 2):
        total += data[i] << 8 | data[i + 1]
        total = (total & 0xFFFF) + (total >> 16)
    return total


class Clock:
    def __init__(self, *times):
        self.times = list(times)

    def __call__(self):
        return self.times.pop(0)


def test_the_file_header_is_the_classic_pcap_layout(tmp_path):
    path = tmp_path / "raw.pcap"
    PcapWriter(path).close()
    assert path.read_bytes() == bytes.fromhex(
        "d4c3b2a1"  # magic 0xa1b2c3d4, little-endian: microsecond timestamps
        "0200" "0400"  # version 2.4
        "00000000"  # thiszone
        "00000000"  # sigfigs
        "ffff0000"  # snaplen 65535
        "65000000"  # LINKTYPE_RAW (101)
    )  # fmt: skip
    PcapWriter(path, linktype=LINKTYPE_ETHERNET).close()
    assert path.read_bytes()[20:24] == b"\x01\0\0\0"


def test_records_carry_time_and_lengths(tmp_path):
    path = tmp_path / "r.pcap"
    with PcapWriter(path, clock=Clock(1234.5678, 99.0)) as writer:
        writer.write(b"\x45" + bytes(19), sent=True)
        writer.write(b"\x60" + bytes(39), sent=False)
    data = path.read_bytes()[24:]
    assert struct.unpack_from("<IIII", data) == (1234, 567800, 20, 20)
    assert data[16:36] == b"\x45" + bytes(19)
    assert struct.unpack_from("<IIII", data, 36) == (99, 0, 40, 40)
    assert len(data) == 36 + 16 + 40
    assert writer.packets == 2


def test_a_packet_longer_than_the_snap_length_is_cut_and_says_so(tmp_path):
    path = tmp_path / "long.pcap"
    with PcapWriter(path, clock=Clock(1.0)) as writer:
        writer.write(b"\x45" + bytes(SNAPLEN + 99), sent=True)
    _, _, captured, original = struct.unpack_from("<IIII", path.read_bytes(), 24)
    assert (captured, original) == (SNAPLEN, SNAPLEN + 100)
    assert len(path.read_bytes()) == 24 + 16 + SNAPLEN


def test_ethernet_framing_tells_family_and_direction():
    sent = ethernet(b"\x45" + bytes(19), sent=True)
    assert sent[:6] == bytes.fromhex("020000000002")  # to the peer
    assert sent[6:12] == bytes.fromhex("020000000001")  # from here
    assert sent[12:14] == b"\x08\x00" and sent[14:] == b"\x45" + bytes(19)
    received = ethernet(b"\x60" + bytes(39), sent=False)
    assert received[:6] == bytes.fromhex("020000000001")
    assert received[12:14] == b"\x86\xdd"


def test_an_ethernet_capture_frames_each_packet(tmp_path):
    path = tmp_path / "e.pcap"
    with PcapWriter(path, linktype=LINKTYPE_ETHERNET, clock=Clock(5.0)) as writer:
        writer.write(b"\x45" + bytes(19), sent=True)
    data = path.read_bytes()
    assert struct.unpack_from("<IIII", data, 24)[2:] == (34, 34)
    assert data[40 + 12 : 40 + 14] == b"\x08\x00"


def test_an_unknown_link_type_is_refused(tmp_path):
    with pytest.raises(ValueError):
        PcapWriter(tmp_path / "x.pcap", linktype=228)
    assert not (tmp_path / "x.pcap").exists()


def test_the_checksum_is_rfc_1071():
    # RFC 1071 §3's example words 0001 f203 f4f5 f6f7 sum to ddf2 (after the carries)
    assert checksum(bytes.fromhex("0001f203f4f5f6f7")) == ~0xDDF2 & 0xFFFF
    assert checksum(b"\xff") == 0x00FF  # an odd byte is padded with zero


def test_an_ipv4_udp_frame_has_good_checksums_and_the_ports():
    packet = outer_packet(SRC4, DST4, 4500, 4500, ESP)
    assert packet[0] == 0x45 and packet[9] == 17 and packet[8] == 64
    assert int.from_bytes(packet[2:4], "big") == len(packet) == 20 + 8 + len(ESP)
    assert packet[12:16] == SRC4 and packet[16:20] == DST4
    assert ones_sum(packet[:20]) == 0xFFFF
    datagram = packet[20:]
    assert struct.unpack_from(">HHH", datagram) == (4500, 4500, 8 + len(ESP))
    pseudo = SRC4 + DST4 + bytes([0, 17]) + len(datagram).to_bytes(2, "big")
    assert ones_sum(pseudo + datagram) == 0xFFFF
    assert datagram[8:] == ESP


def test_an_ipv6_udp_frame_has_a_good_checksum():
    packet = outer_packet(SRC6, DST6, 4500, 4500, ESP)
    assert packet[0] >> 4 == 6 and packet[6] == 17 and packet[7] == 64
    assert int.from_bytes(packet[4:6], "big") == 8 + len(ESP)
    datagram = packet[40:]
    pseudo = SRC6 + DST6 + len(datagram).to_bytes(4, "big") + bytes([0, 0, 0, 17])
    assert ones_sum(pseudo + datagram) == 0xFFFF


def ipv4(src, dst, proto, payload):
    """The capture's IPv4 header: TTL 64, identification 0, DF clear."""
    return ip.ipv4_header(src, dst, proto, len(payload), tos=0, ttl=64, df=False, ident=0) + payload


def ipv6(src, dst, proto, payload):
    return ip.ipv6_header(src, dst, proto, len(payload), tclass=0, hops=64) + payload


def udp(src, dst, sport, dport, payload):
    """A UDP datagram with its checksum computed, over IPv4 too (as the capture has it)."""
    family = ip.AF_INET if len(src) == 4 else ip.AF_INET6
    head = ip.udp_header(
        family, src, dst, sport=sport, dport=dport, payload=payload, ipv4_checksum=True
    )
    return head + payload


def test_raw_esp_frames_are_protocol_50():
    assert outer_packet(SRC4, DST4, 0, 0, ESP) == ipv4(SRC4, DST4, 50, ESP)
    assert ipv4(SRC4, DST4, 50, ESP)[9] == 50
    assert outer_packet(SRC6, DST6, 0, 0, ESP) == ipv6(SRC6, DST6, 50, ESP)
    assert ipv6(SRC6, DST6, 50, ESP)[6] == 50


def test_a_zero_udp_checksum_is_sent_as_ffff():
    # find a payload whose checksum computes to 0: RFC 768 sends it as all ones
    for n in range(1 << 16):
        payload = n.to_bytes(2, "big")
        datagram = udp(SRC4, DST4, 4500, 4500, payload)
        if datagram[6:8] == b"\xff\xff":
            break
    else:
        pytest.fail("no payload gives a zero checksum")
    pseudo = SRC4 + DST4 + bytes([0, 17]) + len(datagram).to_bytes(2, "big")
    zeroed = datagram[:6] + b"\0\0" + datagram[8:]
    assert checksum(pseudo + zeroed) == 0


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed")
@pytest.mark.parametrize("linktype", [LINKTYPE_RAW, LINKTYPE_ETHERNET])
def test_tshark_reads_esp_in_udp(tmp_path, linktype):
    path = tmp_path / "t.pcap"
    with PcapWriter(path, linktype=linktype) as writer:
        writer.write(outer_packet(SRC4, DST4, 4500, 4500, ESP), sent=True)
        writer.write(outer_packet(DST6, SRC6, 0, 0, ESP), sent=False)
    fields = ["-e", "frame.protocols", "-e", "esp.spi", "-e", "udp.checksum.status"]
    done = subprocess.run(
        ["tshark", "-r", str(path), "-T", "fields", "-o", "udp.check_checksum:TRUE", *fields],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    lines = [line.split("\t") for line in done.stdout.splitlines()]
    assert len(lines) == 2
    link = "raw:" if linktype == LINKTYPE_RAW else "eth:ethertype:"
    assert lines[0][0] == link + "ip:udp:udpencap:esp" and int(lines[0][1], 0) == 0x1001
    assert lines[0][2] == "1"  # Good
    assert lines[1][0] == link + "ipv6:esp" and int(lines[1][1], 0) == 0x1001


def test_a_capture_never_follows_a_link_nor_overwrites_what_is_not_ours(tmp_path):
    """espd runs as root: --pcap must not truncate a file a link names (ELOOP), nor a file
    with another name somewhere (EPERM); the target is left as it was."""
    target = tmp_path / "precious"
    target.write_bytes(b"keep me")
    link = tmp_path / "link.pcap"
    link.symlink_to(target)
    with pytest.raises(OSError) as looped:
        PcapWriter(link)
    assert looped.value.errno == errno.ELOOP and "symbolic link" in str(looped.value)
    other_name = tmp_path / "hard.pcap"
    os.link(target, other_name)
    with pytest.raises(OSError) as refused:
        PcapWriter(other_name)
    assert refused.value.errno == errno.EPERM
    assert target.read_bytes() == b"keep me"


def test_an_old_capture_of_ours_is_replaced(tmp_path):
    path = tmp_path / "old.pcap"
    path.write_bytes(b"x" * 1000)
    with PcapWriter(path) as pcap:
        pcap.write(b"\x45" + bytes(19), sent=True)
    assert path.stat().st_size == 24 + 16 + 20
