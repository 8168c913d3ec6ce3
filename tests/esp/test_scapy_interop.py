"""ESP between :class:`cryptoapi.esp.Datapath` and scapy's independent implementation
(``scapy.layers.ipsec.SecurityAssociation``, RFC 4303 over pyca/cryptography).

Each direction of each transform scapy has, in transport and tunnel mode, over IPv4 and
IPv6, with and without extended sequence numbers: scapy decrypts what ``Datapath.output``
sends (and checks the ICV), ``Datapath.input`` decrypts what scapy sends. A replayed
packet is dropped the second time, a tampered one is dropped with nothing returned. Also:
ESN across 2^32 both ways, ESP in UDP/4500 (RFC 3948), and a peer that pads more than it
must. A combination scapy lacks is skipped with the reason (see :func:`scapy_lacks`).

scapy's conventions, which are the kernel's and PF_KEY's: the salt (GCM, GMAC,
ChaCha20-Poly1305: 4 bytes; CCM: 3) or the CTR nonce is the end of ``crypt_key``; ESN is
``esn_en=True`` with ``esn`` the high 32 bits. In the main matrix the high half is 0 (an SA
starts at sequence number 1), which still changes every ICV (the AEAD's AAD grows to 12
bytes, an HMAC covers 4 more); the boundary tests first put the SA's counters just below
2^32 (white box, :func:`~tests.esp.conftest.sa_state`).
"""

import socket

import pytest

pytest.importorskip("scapy", reason="scapy is a test dependency (pip install scapy)")

from scapy import VERSION as SCAPY_VERSION
from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.ipsec import (
    AUTH_ALGOS,
    CRYPT_ALGOS,
    ESP,
    IPSecIntegrityError,
    SecurityAssociation,
    _ESPPlain,
)
from scapy.packet import Raw

from cryptoapi.esp import Datapath
from cryptoapi.pfkey import AuthAlg, EncryptAlg, IpsecMode

from .conftest import counted, payloads, sa_state, udp_packet
from .legacy_sas import LEGACY_TRANSFORMS
from .sas import TRANSFORMS, Link, SaKeys, Transform, build_link

SCAPY_CRYPT = {
    EncryptAlg.NULL: "NULL",
    EncryptAlg.X_AESCBC: "AES-CBC",
    EncryptAlg.X_AESCTR: "AES-CTR",
    EncryptAlg.X_AES_GCM_ICV8: "AES-GCM",
    EncryptAlg.X_AES_GCM_ICV12: "AES-GCM",
    EncryptAlg.X_AES_GCM_ICV16: "AES-GCM",
    EncryptAlg.X_AES_CCM_ICV8: "AES-CCM",
    EncryptAlg.X_AES_CCM_ICV12: "AES-CCM",
    EncryptAlg.X_AES_CCM_ICV16: "AES-CCM",
    EncryptAlg.X_NULL_AES_GMAC: "AES-NULL-GMAC",
    EncryptAlg.X_CHACHA20_POLY1305: "CHACHA20-POLY1305",
    EncryptAlg.THREEDESCBC: "3DES",  # issue 11; scapy has no Camellia and no RIPEMD-160
    EncryptAlg.X_CASTCBC: "CAST",
    EncryptAlg.X_BLOWFISHCBC: "Blowfish",
}
SCAPY_AUTH = {
    AuthAlg.NONE: None,
    AuthAlg.SHA1HMAC: "HMAC-SHA1-96",
    AuthAlg.X_SHA2_256HMAC: "SHA2-256-128",
    AuthAlg.X_SHA2_384HMAC: "SHA2-384-192",
    AuthAlg.X_SHA2_512HMAC: "SHA2-512-256",
    # scapy's AES-CMAC-96 is RFC 4494, not AES-XCBC-MAC-96 (RFC 3566): no entry
}

MODES = {"transport": IpsecMode.TRANSPORT, "tunnel": IpsecMode.TUNNEL}


def _probe_icv(transform: Transform) -> int:
    """The ICV length scapy really puts on a packet of ``transform``."""
    sa = SecurityAssociation(
        ESP,
        spi=1,
        crypt_algo=SCAPY_CRYPT[transform.encrypt],
        crypt_key=bytes(transform.encrypt_key) or None,
        crypt_icv_size=transform.icv if transform.aead else None,
        auth_algo=SCAPY_AUTH[transform.auth],
        auth_key=bytes(transform.auth_key) or None,
    )
    packet = sa.encrypt(IP(src="192.0.2.1", dst="192.0.2.2") / Raw(b"\0" * 6))
    data = packet[ESP].data
    algo = sa.crypt_algo
    body = len(data) - algo.iv_size
    padded = -(-(6 + 2) // max(algo.block_size, 4)) * max(algo.block_size, 4)
    return body - padded


def scapy_lacks(transform: Transform) -> str | None:
    """Why scapy cannot do ``transform``, or None."""
    crypt = SCAPY_CRYPT.get(transform.encrypt)
    if crypt not in CRYPT_ALGOS:
        return f"scapy {SCAPY_VERSION} has no {crypt or transform.encrypt} ESP cipher"
    auth = SCAPY_AUTH.get(transform.auth, "")
    if auth is not None and auth not in AUTH_ALGOS:
        return (
            f"scapy {SCAPY_VERSION} has no {transform.name.split('+')[-1]} "
            f"(its integrity algorithms: {', '.join(AUTH_ALGOS)})"
        )
    made = _probe_icv(transform)
    if made != transform.icv:
        return (
            f"scapy {SCAPY_VERSION}'s {crypt} makes a {made}-byte ICV whatever crypt_icv_size "
            f"says (cryptography's one-shot AEAD API), not {transform.icv}"
        )
    return None


LACKS = {name: scapy_lacks(t) for name, t in TRANSFORMS.items()}


def scapy_sa(link: Link, keys: SaKeys, *, esn: bool | None = None) -> SecurityAssociation:
    """scapy's side of one of the link's SAs (``esn`` overrides the link's setting)."""
    transform = link.transform
    tunnel = None
    if link.tunnel:
        header = IP if link.version == 4 else IPv6
        tunnel = header(src=keys.src, dst=keys.dst)
    return SecurityAssociation(
        ESP,
        spi=keys.spi,
        crypt_algo=SCAPY_CRYPT[transform.encrypt],
        crypt_key=keys.encrypt_key or None,
        crypt_icv_size=transform.icv if transform.aead else None,
        auth_algo=SCAPY_AUTH[transform.auth],
        auth_key=keys.auth_key or None,
        tunnel_header=tunnel,
        esn_en=link.esn if esn is None else esn,
        esn=0,
    )


def parse(link: Link, data: bytes) -> IP | IPv6:
    return (IP if link.version == 4 else IPv6)(data)


def link_for(name: str, mode: str, version: int, esn: bool) -> Link:
    reason = LACKS[name]
    if reason is not None:
        pytest.skip(reason)
    return build_link(name, MODES[mode], version, esn)


combinations = pytest.mark.parametrize(
    ("name", "mode", "version", "esn"),
    [
        pytest.param(name, mode, version, esn, id=f"{name}-{mode}-v{version}{'-esn' * esn}")
        for name in TRANSFORMS
        for mode in MODES
        for version in (4, 6)
        for esn in (False, True)
    ],
)


@combinations
def test_scapy_decrypts_what_the_datapath_sends(name, mode, version, esn):
    link = link_for(name, mode, version, esn)
    datapath = Datapath(link.key_manager)
    receiver = scapy_sa(link, link.outbound)
    for seq, payload in enumerate(payloads(), start=1):
        plaintext = udp_packet(link.local_addr, link.peer_addr, payload)
        sent = datapath.output(plaintext)
        assert len(sent) == 1, f"packet {seq}: output gave {len(sent)} packets"
        outer = parse(link, sent[0])
        assert (outer.src, outer.dst) == (link.outbound.src, link.outbound.dst)
        assert (outer.proto if version == 4 else outer.nh) == socket.IPPROTO_ESP
        esp = outer[ESP]
        assert (esp.spi, esp.seq) == (link.outbound.spi, seq)
        try:
            decrypted = receiver.decrypt(parse(link, sent[0]))
        except IPSecIntegrityError as error:
            pytest.fail(f"packet {seq} ({len(payload)}-byte payload): scapy: bad ICV: {error}")
        assert bytes(decrypted) == plaintext, f"packet {seq} ({len(payload)}-byte payload)"
        _check_trailer(receiver, esp, link.transform)


def _check_trailer(receiver: SecurityAssociation, esp: ESP, transform: Transform) -> None:
    """RFC 4303 §2.4: padding 1, 2, 3, ... aligning the payload to the cipher's block (at
    least 4 bytes), and no more than that needs."""
    algo = receiver.crypt_algo
    plain = algo.decrypt(
        receiver, esp, receiver.crypt_key, transform.icv, receiver.esn_en, receiver.esn
    )
    assert plain.padding == bytes(range(1, plain.padlen + 1))
    align = max(algo.block_size, 4)
    assert (len(bytes(plain.data)) + plain.padlen + 2) % align == 0
    assert plain.padlen < align


@combinations
def test_datapath_decrypts_what_scapy_sends(name, mode, version, esn):
    link = link_for(name, mode, version, esn)
    datapath = Datapath(link.key_manager)
    sender = scapy_sa(link, link.inbound)
    for seq, payload in enumerate(payloads(), start=1):
        plaintext = udp_packet(link.peer_addr, link.local_addr, payload)
        sealed = bytes(sender.encrypt(parse(link, plaintext)))
        assert parse(link, sealed)[ESP].seq == seq
        with counted(datapath.stats) as delta:
            received = datapath.input(sealed)
        problems = {k: v for k, v in delta.items() if v and k.startswith("Xfrm")}
        assert received is not None, f"packet {seq}: dropped, counters {problems}"
        assert received == plaintext, f"packet {seq} ({len(payload)}-byte payload)"
        assert problems == {}


@pytest.mark.parametrize("version", (4, 6))
@pytest.mark.parametrize("name", ("aes-gcm-16", "aes-cbc+hmac-sha2-256", "aes-gmac"))
def test_esn_changes_the_icv_both_ways(name, version):
    """The ESN flag is used: a non-ESN peer fails on the ESN SA's packets and the ESN SA
    drops a non-ESN peer's packet (so the ESN cases above can fail)."""
    link = link_for(name, "transport", version, esn=True)
    datapath = Datapath(link.key_manager)
    sent = datapath.output(udp_packet(link.local_addr, link.peer_addr, b"esn"))
    with pytest.raises(IPSecIntegrityError):
        scapy_sa(link, link.outbound, esn=False).decrypt(parse(link, sent[0]))
    plain = scapy_sa(link, link.inbound, esn=False)
    sealed = plain.encrypt(parse(link, udp_packet(link.peer_addr, link.local_addr, b"esn")))
    with counted(datapath.stats) as delta:
        assert datapath.input(bytes(sealed)) is None
    assert delta["XfrmInStateProtoError"] == 1


supported = [pytest.param(n, id=n) for n, t in TRANSFORMS.items() if LACKS[n] is None]


@pytest.mark.parametrize("esn", (False, True), ids=("no-esn", "esn"))
@pytest.mark.parametrize("name", supported)
def test_a_replayed_scapy_packet_is_dropped(name, esn):
    link = build_link(name, IpsecMode.TRANSPORT, 4, esn)
    datapath = Datapath(link.key_manager)
    sender = scapy_sa(link, link.inbound)
    plaintext = udp_packet(link.peer_addr, link.local_addr, b"once only")
    sealed = bytes(sender.encrypt(IP(plaintext)))
    assert datapath.input(sealed) == plaintext
    with counted(datapath.stats) as delta:
        assert datapath.input(sealed) is None
    assert delta["XfrmInStateSeqError"] == 1
    assert delta["XfrmInStateProtoError"] == 0
    later = udp_packet(link.peer_addr, link.local_addr, b"next")
    assert datapath.input(bytes(sender.encrypt(IP(later)))) == later


def _tamperings(sealed: bytes, transform: Transform) -> dict[str, bytes]:
    """One bit flipped in the first byte after the ESP header (the IV, or with NULL the
    payload), in the last byte before the ICV, and in the ICV's last byte (the packet is
    IPv4: the ESP header starts at 20)."""
    esp = 20 + 8
    icv = len(sealed) - transform.icv

    def flip(at: int) -> bytes:
        return sealed[:at] + bytes([sealed[at] ^ 0x01]) + sealed[at + 1 :]

    return {
        "first byte after the header": flip(esp),
        "last byte before the ICV": flip(icv - 1),
        "last byte of the ICV": flip(len(sealed) - 1),
    }


@pytest.mark.parametrize("name", supported)
def test_a_tampered_scapy_packet_is_dropped_without_plaintext(name):
    link = build_link(name, IpsecMode.TRANSPORT, 4)
    datapath = Datapath(link.key_manager)
    sender = scapy_sa(link, link.inbound)
    plaintext = udp_packet(link.peer_addr, link.local_addr, b"do not alter")
    sealed = bytes(sender.encrypt(IP(plaintext)))
    for where, forged in _tamperings(sealed, link.transform).items():
        with counted(datapath.stats) as delta:
            assert datapath.input(forged) is None, f"{where}: a forged packet was accepted"
        assert delta["XfrmInStateProtoError"] == 1, where
        assert delta.get("EspInPackets", 0) == 0, where
    # the forgeries moved nothing: the genuine packet, same sequence number, still goes in
    assert datapath.input(sealed) == plaintext


BOUNDARY = 1 << 32


@pytest.mark.parametrize("name", supported)
def test_esn_high_bits_across_2_to_the_32_datapath_to_scapy(name):
    """Sequence numbers 2^32 - 1, 2^32, 2^32 + 1: the packets carry the low halves
    (ffffffff, 0, 1) and scapy, told the high half, verifies and decrypts each."""
    link = link_for(name, "transport", 4, True)
    datapath = Datapath(link.key_manager)
    sa_state(datapath, link.key_manager, link.outbound.spi).seq = BOUNDARY - 2
    receiver = scapy_sa(link, link.outbound)
    for seq in (BOUNDARY - 1, BOUNDARY, BOUNDARY + 1):
        plaintext = udp_packet(link.local_addr, link.peer_addr, seq.to_bytes(8, "big"))
        (sent,) = datapath.output(plaintext)
        assert IP(sent)[ESP].seq == seq & 0xFFFFFFFF
        receiver.esn = seq >> 32
        try:
            assert bytes(receiver.decrypt(IP(sent))) == plaintext, f"seq {seq:#x}"
        except IPSecIntegrityError:
            pytest.fail(f"seq {seq:#x}: scapy (high half {seq >> 32}): bad ICV")


@pytest.mark.parametrize("name", supported)
def test_esn_high_bits_across_2_to_the_32_scapy_to_datapath(name):
    """The receiver infers the high half (RFC 4303 Appendix A): past the boundary, a late
    packet from before it, and a replay of one from before it."""
    link = link_for(name, "transport", 4, True)
    datapath = Datapath(link.key_manager)
    sa_state(datapath, link.key_manager, link.inbound.spi).replay.top = BOUNDARY - 20
    sender = scapy_sa(link, link.inbound)
    sealed = {}
    for seq in (BOUNDARY - 1, BOUNDARY, BOUNDARY + 1, BOUNDARY - 16):
        sender.esn, sender.seq_num = seq >> 32, seq & 0xFFFFFFFF
        plaintext = udp_packet(link.peer_addr, link.local_addr, seq.to_bytes(8, "big"))
        sealed[seq] = bytes(sender.encrypt(IP(plaintext)))
        with counted(datapath.stats) as delta:
            received = datapath.input(sealed[seq])
        assert received == plaintext, f"seq {seq:#x}: {[k for k, v in delta.items() if v]}"
    with counted(datapath.stats) as delta:
        assert datapath.input(sealed[BOUNDARY - 1]) is None
    assert delta["XfrmInStateSeqError"] == 1


@pytest.mark.parametrize("version", (4, 6))
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ("aes-gcm-16", "aes-cbc+hmac-sha2-256", "chacha20-poly1305"))
def test_udp_encapsulated_esp_both_ways(name, mode, version):
    """RFC 3948: ESP in UDP between ports 4500 (``encap_port=4500``; scapy's
    ``nat_t_header``)."""
    link = link_for(name, mode, version, False)
    datapath = Datapath(link.key_manager, encap_port=4500)
    receiver = scapy_sa(link, link.outbound)
    receiver.nat_t_header = UDP(sport=4500, dport=4500)
    plaintext = udp_packet(link.local_addr, link.peer_addr, b"through a NAT")
    (sent,) = datapath.output(plaintext)
    outer = parse(link, sent)
    assert (outer[UDP].sport, outer[UDP].dport) == (4500, 4500)
    assert outer[UDP].len == len(sent) - (20 if version == 4 else 40)
    assert bytes(receiver.decrypt(outer)) == plaintext
    sender = scapy_sa(link, link.inbound)
    sender.nat_t_header = UDP(sport=4500, dport=4500)
    back = udp_packet(link.peer_addr, link.local_addr, b"and back")
    assert datapath.input(bytes(sender.encrypt(parse(link, back)))) == back


@pytest.mark.parametrize("extra_blocks", (1, 7))
@pytest.mark.parametrize("name", ("aes-gcm-16", "aes-cbc+hmac-sha1-96", "null+hmac-sha2-256"))
def test_a_peer_may_pad_more_than_it_must(name, extra_blocks):
    """RFC 4303 §2.4: a sender may add padding beyond what alignment needs (up to 255
    bytes, 1, 2, 3, ...), e.g. to hide the payload's length; the receiver takes it off."""
    link = link_for(name, "transport", 4, False)
    datapath = Datapath(link.key_manager)
    sender = scapy_sa(link, link.inbound)
    plaintext = udp_packet(link.peer_addr, link.local_addr, b"padded")
    algo = sender.crypt_algo
    esp = _ESPPlain(spi=sender.spi, seq=1, iv=algo.generate_iv(), data=Raw(plaintext[20:]))
    esp.nh = 17
    align = max(algo.block_size, 4)
    esp.padlen = -(len(plaintext) - 20 + 2) % align + extra_blocks * align
    esp.padding = bytes(range(1, esp.padlen + 1))
    sealed = algo.encrypt(sender, esp, sender.crypt_key, sender.crypt_icv_size)
    sealed = sender.auth_algo.sign(sealed, sender.auth_key)
    header = IP(plaintext[:20])
    header.proto, header.len, header.chksum = 50, None, None
    arriving = bytes(header / sealed)
    with counted(datapath.stats) as delta:
        received = datapath.input(arriving)
    assert received == plaintext, {k: v for k, v in delta.items() if v}


def test_scapy_has_the_rfc_2451_ciphers():
    offered = {t.encrypt for t in LEGACY_TRANSFORMS.values() if scapy_lacks(t) is None}
    assert offered == {EncryptAlg.THREEDESCBC, EncryptAlg.X_CASTCBC, EncryptAlg.X_BLOWFISHCBC}


@pytest.mark.parametrize("version", (4, 6))
@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("name", [n for n, t in LEGACY_TRANSFORMS.items() if not scapy_lacks(t)])
def test_legacy_ciphers_interoperate_both_ways(name, mode, version):
    """3DES, CAST-128 and Blowfish (RFC 2451): 8-byte IVs and padding to 8 bytes."""
    link = build_link(LEGACY_TRANSFORMS[name], MODES[mode], version)
    datapath = Datapath(link.key_manager)
    receiver, sender = scapy_sa(link, link.outbound), scapy_sa(link, link.inbound)
    for payload in payloads():
        plaintext = udp_packet(link.local_addr, link.peer_addr, payload)
        (sent,) = datapath.output(plaintext)
        assert bytes(receiver.decrypt(parse(link, sent))) == plaintext
        _check_trailer(receiver, parse(link, sent)[ESP], link.transform)
        back = udp_packet(link.peer_addr, link.local_addr, payload)
        assert datapath.input(bytes(sender.encrypt(parse(link, back)))) == back
