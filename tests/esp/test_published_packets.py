"""The ESP packets of draft-mcgrew-gcm-test-01 §4 (RFC 4106 AES-GCM and RFC 4543 AES-GMAC
test cases), through :class:`cryptoapi.esp.Datapath`.

Every packet's next header is 1 (ICMP), so each is a transport-mode packet: it goes in
behind an IPv4 header (protocol 50) on an SA with the case's key, salt and SPI, and what
comes out must be that header, now protocol 1, carrying the case's plaintext without its
padding and trailer. An 8-octet ``seq`` is an extended sequence number (RFC 4303 §2.2.1):
the SA has ESN, and where the high half is not 0 the SA's replay window is first put just
below the packet, as if the packet before it had arrived (no PF_KEY message sets an SA's
replay state, so this one step reaches into the data path).

Re-encryption cannot give the draft's bytes: the data path's IV is the 64-bit sequence
number xored with a random salt (as the kernel's ``seqiv``), and no case's IV is its
sequence number (the draft's IVs are arbitrary, e.g. page 10's is 0 with sequence number
1). So each case's payload is
sent by ``Datapath.output`` on the case's SA and the result checked with an independent
AES-GCM (pyca/cryptography): same length as the draft's packet, and the same plaintext,
padding and trailer byte for byte.
"""

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from cryptoapi.esp import Datapath
from cryptoapi.pfkey import EncryptAlg, IpsecDir, IpsecMode, KeyManager

from .conftest import counted, ip_packet, sa_state
from .sas import HOSTS, SaKeys, Transform, add_policy, add_sa

SOURCE = Path(__file__).parent / "vectors" / "draft-mcgrew-gcm-test-01.json"
LOCAL, PEER = HOSTS[4].local, HOSTS[4].peer
IPPROTO_ESP = 50


@dataclass(frozen=True)
class Case:
    """One test case of the draft, its fields as bytes."""

    section: str
    algorithm: str
    key: bytes
    spi: bytes
    seq: bytes
    nonce: bytes
    plaintext: bytes
    aad: bytes
    ctext_tag: bytes
    packet: bytes

    @classmethod
    def of(cls, entry: dict[str, str]) -> "Case":
        fields = {
            k: bytes.fromhex(v) for k, v in entry.items() if k not in ("section", "algorithm")
        }
        return cls(entry["section"], entry["algorithm"], **fields)

    @property
    def gmac(self) -> bool:
        return self.algorithm == "AES-GMAC-ESP"

    @property
    def esn(self) -> bool:
        return len(self.seq) == 8

    @property
    def full_seq(self) -> int:
        return int.from_bytes(self.seq, "big")

    @property
    def salt(self) -> bytes:
        return self.nonce[:4]

    @property
    def iv(self) -> bytes:
        return self.nonce[4:]

    @property
    def protected(self) -> bytes:
        """payload || padding || pad length || next header: the GCM plaintext, or what
        GMAC authenticates after the SPI, sequence number and IV."""
        return self.aad[len(self.spi + self.seq) + 8 :] if self.gmac else self.plaintext

    @property
    def payload(self) -> bytes:
        return self.protected[: -2 - self.protected[-2]]

    @property
    def next_header(self) -> int:
        return self.protected[-1]

    @property
    def transform(self) -> Transform:
        encrypt = EncryptAlg.X_NULL_AES_GMAC if self.gmac else EncryptAlg.X_AES_GCM_ICV16
        return Transform(self.algorithm, encrypt, 0, len(self.key) + 4, 0, 16, 4)


CASES = [Case.of(entry) for entry in json.loads(SOURCE.read_text())["vectors"]]
cases = pytest.mark.parametrize("case", CASES, ids=[c.section for c in CASES])
usable = pytest.mark.parametrize(
    "case",
    [c for c in CASES if c.spi != bytes(4)],
    ids=[c.section for c in CASES if c.spi != bytes(4)],
)


@cases
def test_the_typed_case_is_consistent(case):
    """The transcription: an independent AES-GCM gives the typed ciphertext and tag, and the
    typed packet is SPI || low sequence number || IV || ciphertext || ICV."""
    gcm = AESGCM(case.key)
    header = case.spi + case.seq  # RFC 4106 §5: SPI || (high ||) low sequence number
    assert case.aad[: len(header)] == header
    if case.gmac:
        assert case.plaintext == b"" and case.aad[len(header) : len(header) + 8] == case.iv
        tag = gcm.encrypt(case.nonce, b"", case.aad)
        assert case.packet == case.aad + tag
    else:
        assert case.aad == header
        assert gcm.encrypt(case.nonce, case.plaintext, case.aad) == case.ctext_tag
        assert case.packet == case.spi + case.seq[-4:] + case.iv + case.ctext_tag
    assert case.next_header == 1  # ICMP: transport mode (see the module doc)


def key_manager_for(case: Case) -> KeyManager:
    """Both directions on the case's key, salt and SPI (transport mode), with policies."""
    key_manager = KeyManager()
    key = case.key + case.salt
    spi = int.from_bytes(case.spi, "big")
    for src, dst, direction in ((PEER, LOCAL, IpsecDir.INBOUND), (LOCAL, PEER, IpsecDir.OUTBOUND)):
        keys = SaKeys(spi, src, dst, key, b"")
        add_sa(key_manager, case.transform, keys, esn=case.esn, replay=32)
        add_policy(key_manager, direction, f"{src}/32", f"{dst}/32", mode=IpsecMode.TRANSPORT)
    return key_manager


def put_window_below(datapath: Datapath, key_manager: KeyManager, case: Case) -> None:
    """The inbound SA's window as if packet ``full_seq - 1`` had arrived (white box)."""
    spi = int.from_bytes(case.spi, "big")
    sa_state(datapath, key_manager, spi, LOCAL).replay.top = case.full_seq - 1


@usable
def test_datapath_input_gives_the_published_plaintext(case):
    key_manager = key_manager_for(case)
    datapath = Datapath(key_manager)
    if case.esn and case.full_seq >> 32:
        put_window_below(datapath, key_manager, case)
    arriving = ip_packet(PEER, LOCAL, IPPROTO_ESP, case.packet)
    with counted(datapath.stats) as delta:
        received = datapath.input(arriving)
    problems = {k: v for k, v in delta.items() if v and k.startswith("Xfrm")}
    assert received == ip_packet(PEER, LOCAL, case.next_header, case.payload), problems
    assert problems == {}


@usable
def test_a_published_packet_is_accepted_once(case):
    key_manager = key_manager_for(case)
    datapath = Datapath(key_manager)
    if case.esn and case.full_seq >> 32:
        put_window_below(datapath, key_manager, case)
    arriving = ip_packet(PEER, LOCAL, IPPROTO_ESP, case.packet)
    assert datapath.input(arriving) is not None
    with counted(datapath.stats) as delta:
        assert datapath.input(arriving) is None
    assert delta["XfrmInStateSeqError"] == 1


def test_the_spi_0_packet_finds_no_sa():
    """Page 10's packet has SPI 0, which RFC 4303 §2.1 reserves and PF_KEY refuses to add:
    with an SA of its key on SPI 1, it is dropped as having no SA."""
    (case,) = [c for c in CASES if c.spi == bytes(4)]
    key_manager = KeyManager()
    keys = SaKeys(1, PEER, LOCAL, case.key + case.salt, b"")
    add_sa(key_manager, case.transform, keys)
    datapath = Datapath(key_manager)
    with counted(datapath.stats) as delta:
        assert datapath.input(ip_packet(PEER, LOCAL, IPPROTO_ESP, case.packet)) is None
    assert delta["XfrmInNoStates"] == 1


@usable
def test_datapath_output_frames_the_published_payload_as_the_draft(case):
    datapath = Datapath(key_manager_for(case))
    sent = datapath.output(ip_packet(LOCAL, PEER, case.next_header, case.payload))
    assert len(sent) == 1
    outer, esp = sent[0][:20], sent[0][20:]
    assert outer[9] == IPPROTO_ESP
    assert len(esp) == len(case.packet)
    assert esp[:8] == case.spi + (1).to_bytes(4, "big")
    iv = esp[8:16]
    assert iv[4:] == (1).to_bytes(4, "big")  # the counter IV: sequence number 1, salted above
    aad = case.spi + (bytes(4) if case.esn else b"") + esp[4:8]
    gcm = AESGCM(case.key)
    if case.gmac:
        body, tag = esp[16:-16], esp[-16:]
        assert body == case.protected
        assert gcm.encrypt(case.salt + iv, b"", aad + iv + body) == tag
    else:
        assert gcm.decrypt(case.salt + iv, esp[16:], aad) == case.plaintext
