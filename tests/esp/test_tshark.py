"""What :meth:`cryptoapi.esp.Datapath.output` sends, decrypted by Wireshark's ESP dissector
(Debian's tshark, an independent C implementation over libgcrypt).

All the packets go into one pcap (``LINKTYPE_RAW``, written by espd's
:class:`~cryptoapi.esp.espd.pcap.PcapWriter`) and tshark reads it once, given every SA
through the ``esp_sa`` table. For each packet it must report the ICV good (not bad) and
dissect the decrypted payload down to the UDP datagram that was sent, and in tunnel mode
the inner IP header.

The table entry, found by trying tshark 4.0, is eight quoted fields in this order::

    uat:esp_sa:"IPv4","192.0.2.1","192.0.2.2","0x00001001","AES-CBC [RFC3602]","0x<key>",
               "HMAC-SHA-1-96 [RFC2404]","0x<key>"

protocol (``IPv4``, ``IPv6`` or ``Any``), source, destination, SPI, encryption algorithm,
encryption key (the salt or CTR nonce at its end, as PF_KEY has it), authentication
algorithm (``NULL`` for the combined modes), authentication key (empty when none); the
algorithm strings are those of tshark's menus. tshark 4.0 has no CCM, GMAC,
ChaCha20-Poly1305 or AES-XCBC and no extended sequence numbers (its AAD and ICV are always
the 32-bit ones): those are not tested here.
"""

import shutil
import subprocess
from pathlib import Path

import pytest

from cryptoapi.esp import Datapath
from cryptoapi.esp.espd.pcap import LINKTYPE_RAW, PcapWriter
from cryptoapi.pfkey import AuthAlg, EncryptAlg, IpsecMode

from .conftest import udp_packet
from .sas import TRANSFORMS, Link, SaKeys, build_link

TSHARK = shutil.which("tshark")
pytestmark = pytest.mark.skipif(TSHARK is None, reason="tshark is not installed")

ENCRYPTION = {
    EncryptAlg.NULL: "NULL",
    EncryptAlg.X_AESCBC: "AES-CBC [RFC3602]",
    EncryptAlg.X_AESCTR: "AES-CTR [RFC3686]",
    EncryptAlg.X_AES_GCM_ICV8: "AES-GCM with 8 octet ICV [RFC4106]",
    EncryptAlg.X_AES_GCM_ICV12: "AES-GCM with 12 octet ICV [RFC4106]",
    EncryptAlg.X_AES_GCM_ICV16: "AES-GCM with 16 octet ICV [RFC4106]",
}
AUTHENTICATION = {
    AuthAlg.NONE: "NULL",
    AuthAlg.SHA1HMAC: "HMAC-SHA-1-96 [RFC2404]",
    AuthAlg.X_SHA2_256HMAC: "HMAC-SHA-256-128 [RFC4868]",
    AuthAlg.X_SHA2_384HMAC: "HMAC-SHA-384-192 [RFC4868]",
    AuthAlg.X_SHA2_512HMAC: "HMAC-SHA-512-256 [RFC4868]",
}
NAMES = [
    name for name, t in TRANSFORMS.items() if t.encrypt in ENCRYPTION and t.auth in AUTHENTICATION
]
MODES = {"transport": IpsecMode.TRANSPORT, "tunnel": IpsecMode.TUNNEL}
COMBINATIONS = [(name, mode, version) for name in NAMES for mode in MODES for version in (4, 6)]
PAYLOADS = (b"", b"x" * 13, bytes(range(200)))
FIELDS = (
    "esp.spi", "esp.sequence", "esp.icv_good", "esp.icv_bad",
    "ip.src", "ip.dst", "ipv6.src", "ipv6.dst", "udp.srcport", "udp.dstport", "udp.payload",
)  # fmt: skip


def sa_entry(link: Link, keys: SaKeys) -> str:
    """One ``esp_sa`` table entry for tshark's ``-o uat:esp_sa:...``."""
    transform = link.transform
    fields = (
        f"IPv{link.version}",
        keys.src,
        keys.dst,
        f"0x{keys.spi:08x}",
        ENCRYPTION[transform.encrypt],
        f"0x{keys.encrypt_key.hex()}" if keys.encrypt_key else "",
        AUTHENTICATION[transform.auth],
        f"0x{keys.auth_key.hex()}" if keys.auth_key else "",
    )
    return "uat:esp_sa:" + ",".join(f'"{field}"' for field in fields)


class Capture:
    """The packets sent, by (SPI, sequence number), and tshark's fields for each."""

    def __init__(self, directory: Path) -> None:
        self.sent: dict[tuple[int, int], tuple[Link, bytes]] = {}
        self.links: dict[tuple[str, str, int], Link] = {}
        path = directory / "esp.pcap"
        entries = []
        with PcapWriter(path, linktype=LINKTYPE_RAW, clock=lambda: 1.0) as pcap:
            for number, (name, mode, version) in enumerate(COMBINATIONS):
                spi = 0x0001_0000 + number
                link = build_link(name, MODES[mode], version, spis=(spi, spi | 0x8000))
                self.links[name, mode, version] = link
                entries += ["-o", sa_entry(link, link.outbound)]
                self._send(link, pcap)
        self.rows = self._tshark(path, entries)

    def _send(self, link: Link, pcap: PcapWriter) -> None:
        datapath = Datapath(link.key_manager)
        for seq, payload in enumerate(PAYLOADS, start=1):
            plaintext = udp_packet(link.local_addr, link.peer_addr, payload, 40000, 9)
            (packet,) = datapath.output(plaintext)
            pcap.write(packet, sent=True)
            self.sent[link.outbound.spi, seq] = (link, payload)

    @staticmethod
    def _tshark(path: Path, entries: list[str]) -> dict[tuple[int, int], dict[str, str]]:
        assert TSHARK is not None
        command = [
            TSHARK, "-n", "-r", str(path),
            "-o", "esp.enable_encryption_decode:TRUE",
            "-o", "esp.enable_authentication_check:TRUE",
            *entries,
            "-T", "fields", "-E", "separator=/t", "-E", "occurrence=a", "-E", "aggregator=,",
            *(arg for field in FIELDS for arg in ("-e", field)),
        ]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr
        rows = {}
        for line in done.stdout.splitlines():
            row = dict(zip(FIELDS, line.split("\t"), strict=True))
            rows[int(row["esp.spi"], 16), int(row["esp.sequence"])] = row
        return rows


@pytest.fixture(scope="module")
def capture(tmp_path_factory: pytest.TempPathFactory) -> Capture:
    return Capture(tmp_path_factory.mktemp("tshark"))


@pytest.mark.parametrize(
    ("name", "mode", "version"),
    [pytest.param(*c, id=f"{c[0]}-{c[1]}-v{c[2]}") for c in COMBINATIONS],
)
def test_tshark_decrypts_and_authenticates_what_the_datapath_sends(capture, name, mode, version):
    link = capture.links[name, mode, version]
    address = "ip" if version == 4 else "ipv6"
    for seq, payload in enumerate(PAYLOADS, start=1):
        row = capture.rows.get((link.outbound.spi, seq))
        assert row is not None, f"packet {seq}: tshark did not show it as ESP"
        where = f"packet {seq} ({len(payload)}-byte payload)"
        assert (row["esp.icv_good"], row["esp.icv_bad"]) == ("1", "0"), f"{where}: {row}"
        sources = row[f"{address}.src"].split(",")
        destinations = row[f"{address}.dst"].split(",")
        expected = [link.outbound.src]
        if link.tunnel:
            expected.append(link.local_addr)
        assert sources == expected, f"{where}: {row}"
        assert destinations[-1] == link.peer_addr, f"{where}: {row}"
        assert (row["udp.srcport"], row["udp.dstport"]) == ("40000", "9"), f"{where}: {row}"
        assert bytes.fromhex(row["udp.payload"]) == payload, f"{where}: {row}"


def test_tshark_reports_a_wrong_key_as_a_bad_icv(tmp_path):
    """The check above can fail: with one key byte changed, tshark says the ICV is bad."""
    link = build_link("aes-cbc+hmac-sha2-256", IpsecMode.TRANSPORT, 4)
    wrong = SaKeys(
        link.outbound.spi,
        link.outbound.src,
        link.outbound.dst,
        link.outbound.encrypt_key,
        bytes([link.outbound.auth_key[0] ^ 1]) + link.outbound.auth_key[1:],
    )
    path = tmp_path / "wrong.pcap"
    with PcapWriter(path, linktype=LINKTYPE_RAW, clock=lambda: 1.0) as pcap:
        packet = udp_packet(link.local_addr, link.peer_addr, b"x", 40000, 9)
        pcap.write(Datapath(link.key_manager).output(packet)[0], sent=True)
    rows = Capture._tshark(path, ["-o", sa_entry(link, wrong)])
    assert rows[link.outbound.spi, 1]["esp.icv_bad"] == "1"
