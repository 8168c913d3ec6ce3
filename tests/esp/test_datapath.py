"""The data path between two of its own instances: every transform, mode, family and ESN
setting round-trips; policies, lifetimes, sequence numbers and counters behave as RFC 4301,
RFC 4303 and Linux's XFRM do. (Correctness against independent implementations is in
test_scapy_interop, test_published_packets and test_tshark.)"""

import os
import struct

import pytest

from cryptoapi.esp import ESP_STAT, XFRM_STAT, Datapath
from cryptoapi.esp import datapath as datapath_module
from cryptoapi.esp.native import native
from cryptoapi.esp.policies import FLOW_CACHE
from cryptoapi.pfkey import (
    ExtType,
    IpsecDir,
    IpsecLevel,
    IpsecMode,
    IpsecRequest,
    KeyManager,
    Lifetime,
    Message,
    MsgType,
    Policy,
    SaType,
    decode,
)
from cryptoapi.pfkey.db.acquires import ACQUIRE_MAX
from tests.esp import sas
from tests.esp.conftest import counted, internet_checksum, ip_packet, sa_state, udp_packet
from tests.esp.pair import build_pair, stray_tunnel
from tests.esp.test_fastpath import inner_packets, twins

MODES = {"tunnel": IpsecMode.TUNNEL, "transport": IpsecMode.TRANSPORT}


def datagram(pair, payload=b"hello", *, reverse=False):
    link = pair.link
    src, dst = (link.peer_addr, link.local_addr) if reverse else (link.local_addr, link.peer_addr)
    return udp_packet(src, dst, payload)


@pytest.mark.parametrize("esn", [False, True], ids=["seq32", "esn"])
@pytest.mark.parametrize("version", [4, 6], ids=["ipv4", "ipv6"])
@pytest.mark.parametrize("mode", list(MODES), ids=list(MODES))
@pytest.mark.parametrize("transform", list(sas.TRANSFORMS))
def test_every_transform_round_trips_both_ways(transform, mode, version, esn):
    pair = build_pair(transform, MODES[mode], version, esn)
    for size in (0, 1, 15, 16, 17, 1000):
        packet = datagram(pair, os.urandom(size))
        sent = pair.local.output(packet)
        assert len(sent) == 1 and sent[0] != packet
        assert pair.peer.input(sent[0]) == packet
        answer = datagram(pair, os.urandom(size), reverse=True)
        assert pair.local.input(pair.peer.output(answer)[0]) == answer
    assert pair.peer.stats()["EspInPackets"] == 6
    assert not any(pair.peer.stats()[name] for name in XFRM_STAT)


def test_esp_framing_follows_rfc_4303():
    """SPI, sequence numbers from 1, the counter IV (the number xored with a salt of the
    data path's own above bit 32, as seqiv's), padding 1, 2, 3 ... to 4 bytes."""
    pair = build_pair("aes-gcm-16", IpsecMode.TRANSPORT)
    packet = datagram(pair, b"x" * 13)  # 8 + 13 bytes of UDP: 1 pad byte to 4-align
    salts = set()
    for seq in (1, 2, 3):
        esp = pair.local.output(packet)[0][20:]
        spi, number = struct.unpack(">II", esp[:8])
        assert (spi, number) == (sas.OUTBOUND_SPI, seq)
        assert esp[12:16] == seq.to_bytes(4, "big")  # the IV's low half
        salts.add(esp[8:12])
        assert len(esp) == 8 + 8 + (21 + 1 + 2) + 16
    other = build_pair("aes-gcm-16", IpsecMode.TRANSPORT).local.output(packet)[0][20:]
    assert len(salts) == 1 and other[8:12] not in salts  # one per data path (2^-32 to fail)


def test_outbound_policies_bypass_discard_and_require():
    pair = build_pair()
    local = pair.link.key_manager
    hosts = pair.link.hosts
    outside = ip_packet(hosts.local, "192.0.2.99", 17, b"\0" * 12)
    with counted(pair.local.stats) as delta:
        assert pair.local.output(outside) == [outside]  # no policy: through, unchanged
    assert delta["EspOutBypass"] == 1
    sas.send(local, _spdadd(IpsecDir.OUTBOUND, "192.0.2.99/32", "discard"))
    with counted(pair.local.stats) as delta:
        assert pair.local.output(outside) == []
    assert delta["XfrmOutPolBlock"] == 1


def _spdadd(direction, dst, action, level=IpsecLevel.REQUIRE, src="0.0.0.0/0"):
    """An SPDADD for ``dst`` with ``action`` none, discard or ipsec (transport ESP)."""
    from ipaddress import ip_network

    from cryptoapi.pfkey import Address, ExtType, Policy, PolicyType, SockAddr

    kind = {"none": PolicyType.NONE, "discard": PolicyType.DISCARD, "ipsec": PolicyType.IPSEC}
    requests = (IpsecRequest(50, IpsecMode.TRANSPORT, level, 0),) if action == "ipsec" else ()
    s, d = ip_network(src), ip_network(dst)
    exts = (
        Policy(kind[action], direction, 0, 0, requests),
        Address(ExtType.ADDRESS_SRC, SockAddr.of(str(s.network_address)), 255, s.prefixlen),
        Address(ExtType.ADDRESS_DST, SockAddr.of(str(d.network_address)), 255, d.prefixlen),
    )
    return Message(MsgType.X_SPDADD, SaType.UNSPEC, 7, 4242, 0, exts).encode()


def _register(key_manager):
    """REGISTER for ESP, so EXPIRE and ACQUIRE messages are made for a listener."""
    key_manager.handle(Message(MsgType.REGISTER, SaType.ESP, 1, 4242).encode())


def test_a_missing_sa_sends_one_acquire_and_drops_or_passes_by_level():
    notices = []
    key_manager = KeyManager()
    _register(key_manager)
    datapath = Datapath(key_manager, notify=notices.extend)
    sas.send(key_manager, _spdadd(IpsecDir.OUTBOUND, "192.0.2.50/32", "ipsec"))
    sas.send(
        key_manager, _spdadd(IpsecDir.OUTBOUND, "192.0.2.51/32", "ipsec", level=IpsecLevel.USE)
    )
    required = ip_packet("192.0.2.1", "192.0.2.50", 17, b"\0" * 12)
    optional = ip_packet("192.0.2.1", "192.0.2.51", 17, b"\0" * 12)
    with counted(datapath.stats) as delta:
        for _ in range(3):
            assert datapath.output(required) == []
            assert datapath.output(optional) == [optional]
    assert delta["XfrmOutNoStates"] == 3
    assert [decode(m).type for m in notices] == [MsgType.ACQUIRE, MsgType.ACQUIRE]
    # each names its policy as the key manager numbers it (Linux pfkey_send_acquire)
    wanted = {p.index for p in key_manager.spd if p.dir == IpsecDir.OUTBOUND}
    named = {decode(m).get(ExtType.X_POLICY, Policy).id for m in notices}
    assert named == wanted and len(named) == 2


def test_flows_past_the_pending_acquire_limit_are_counted_drops_not_errors():
    """3,000 flows with no SA: the key manager takes ACQUIRE_MAX (1,024) requests and
    refuses the rest (EAGAIN); each packet is one counted drop, nothing is raised, and
    EspAcquires counts the ACQUIREs sent. The outbound caches stay bounded."""
    notices = []
    key_manager = KeyManager()
    _register(key_manager)
    datapath = Datapath(key_manager, notify=notices.extend)
    sas.send(key_manager, _spdadd(IpsecDir.OUTBOUND, "198.18.0.0/16", "ipsec"))
    flows = [
        ip_packet("192.0.2.1", f"198.18.{n >> 8}.{n & 0xFF}", 17, b"\0" * 12) for n in range(3000)
    ]
    with counted(datapath.stats) as delta:
        for packet in flows:
            assert datapath.output(packet) == []
    assert delta["XfrmOutNoStates"] == 3000
    assert delta["EspAcquires"] == len(notices) == ACQUIRE_MAX
    assert delta["XfrmAcquireError"] == 3000 - ACQUIRE_MAX
    assert len(datapath._plans) <= FLOW_CACHE and len(datapath._acquired) <= FLOW_CACHE


def test_the_flow_caches_are_bounded():
    key_manager = KeyManager()
    datapath = Datapath(key_manager)
    for n in range(FLOW_CACHE * 3):
        datapath.output(ip_packet("192.0.2.1", f"198.18.{n >> 8 & 0xFF}.{n & 0xFF}", 17, bytes(12)))
    assert 0 < len(datapath._plans) <= FLOW_CACHE


def test_a_plaintext_packet_an_inbound_policy_requires_protection_for_is_dropped():
    pair = build_pair(mode=IpsecMode.TUNNEL)
    plain = datagram(pair, reverse=True)  # peer net -> local net, the policy wants ESP
    with counted(pair.local.stats) as delta:
        assert pair.local.input(plain) is None
    assert delta["XfrmInTmplMismatch"] == 1


def test_inner_addresses_outside_the_sa_s_policy_are_dropped_after_decryption():
    pair = build_pair(mode=IpsecMode.TUNNEL)
    hosts = pair.link.hosts
    # the peer is made to tunnel a packet from an address the local inbound policy does
    # not cover: it decrypts fine, then fails the policy check
    stray = stray_tunnel(pair)
    with counted(pair.local.stats) as delta:  # no inbound policy: a tunnel's packet goes
        assert pair.local.input(pair.peer.output(stray)[0]) is None
    assert delta["XfrmInNoPols"] == 1
    sas.send(
        pair.link.key_manager,
        sas.spdadd_message(
            IpsecDir.INBOUND, "192.0.2.128/25", hosts.local_net, mode=IpsecMode.TUNNEL,
            tunnel=(hosts.peer, hosts.local), reqid=9,
        ),
    )  # fmt: skip
    with counted(pair.local.stats) as delta:  # a policy another SA (reqid 9) must serve
        assert pair.local.input(pair.peer.output(stray)[0]) is None
    assert delta["XfrmInTmplMismatch"] == 1


def test_udp_encapsulation_rfc_3948():
    for version in (4, 6):
        pair = build_pair(version=version, encap_port=4500)
        sent = pair.local.output(datagram(pair))[0]
        header = 20 if version == 4 else 40
        sport, dport, length, checksum = struct.unpack(">HHHH", sent[header : header + 8])
        assert (sport, dport, length) == (4500, 4500, len(sent) - header)
        if version == 4:
            assert sent[9] == 17 and checksum == 0  # §2.1: zero over IPv4
        else:
            src, dst = sent[8:24], sent[24:40]
            pseudo = src + dst + struct.pack(">I3xB", length, 17)
            assert internet_checksum(pseudo + sent[header:]) == 0
        assert pair.peer.input(sent) is not None
        outer = sent[:header]
        keepalive = _udp_from(outer, b"\xff")
        ike = _udp_from(outer, b"\0\0\0\0" + b"IKE_SA_INIT...")
        with counted(pair.peer.stats) as delta:
            assert pair.peer.input(keepalive) is None
            assert pair.peer.input(ike) is None
        assert delta["EspInKeepalive"] == 1 and delta["EspInIke"] == 1
        assert not any(delta[name] for name in XFRM_STAT)


def _udp_from(outer, payload):
    """A UDP/4500 datagram with ``payload`` between the addresses of ``outer``."""
    import ipaddress

    if len(outer) == 20:
        src, dst = outer[12:16], outer[16:20]
    else:
        src, dst = outer[8:24], outer[24:40]
    return udp_packet(
        str(ipaddress.ip_address(src)), str(ipaddress.ip_address(dst)), payload, 4500, 4500
    )


def test_outer_header_copies_dscp_ttl_ecn_and_df_and_decap_follows_rfc_6040():
    pair = build_pair(version=4)
    link = pair.link
    inner = bytearray(udp_packet(link.local_addr, link.peer_addr, b"ecn"))
    inner[1] = 0xB8 | 0b10  # DSCP EF, ECT(0)
    inner[8] = 17  # TTL
    inner[10:12] = b"\0\0"
    inner[10:12] = internet_checksum(bytes(inner[:20])).to_bytes(2, "big")
    inner = bytes(inner)
    outer = pair.local.output(inner)[0]
    assert outer[1] == inner[1] and outer[8] == 17  # DSCP and ECN, TTL
    assert outer[6] & 0x40  # DF copied from the inner packet
    marked = bytearray(outer)
    marked[1] |= 0b11  # a router on the way marks the outer header CE
    marked[10:12] = b"\0\0"
    marked[10:12] = internet_checksum(bytes(marked[:20])).to_bytes(2, "big")
    received = pair.peer.input(bytes(marked))
    assert received is not None and received[1] == 0xB8 | 0b11  # the inner packet is CE now
    assert internet_checksum(received[:20]) == 0


def test_lifetimes_expire_soft_then_hard_and_the_sa_carries_nothing_more():
    notices = []
    link = sas.build_link("aes-gcm-16", IpsecMode.TUNNEL)
    key_manager = link.key_manager
    _register(key_manager)
    sa = next(sa for sa in key_manager.sad if sa.spi == sas.OUTBOUND_SPI)
    sa.soft = Lifetime(4, allocations=3)
    sa.hard = Lifetime(3, allocations=5)
    datapath = Datapath(key_manager, notify=notices.extend)
    packet = udp_packet(link.local_addr, link.peer_addr, b"count me")
    sent = [datapath.output(packet) for _ in range(7)]
    assert [len(s) for s in sent] == [1, 1, 1, 1, 1, 0, 0]
    # soft, hard, then the next packet finds no SA and asks for one
    assert [decode(m).type for m in notices] == [MsgType.EXPIRE] * 2 + [MsgType.ACQUIRE]
    assert sa.allocations == 5 and sa.nbytes == 5 * len(packet)
    assert key_manager.sad.get(SaType.ESP, link.hosts.peer, sas.OUTBOUND_SPI) is None


def test_without_esn_the_sequence_number_never_wraps():
    notices = []
    pair = build_pair()
    _register(pair.link.key_manager)
    pair.local = Datapath(pair.link.key_manager, notify=notices.extend)
    packet = datagram(pair)
    assert pair.local.output(packet)
    sa_state(pair.local, pair.link.key_manager, sas.OUTBOUND_SPI).seq = 2**32 - 2
    last = pair.local.output(packet)[0]
    assert struct.unpack(">I", last[24:28])[0] == 2**32 - 1
    with counted(pair.local.stats) as delta:
        assert pair.local.output(packet) == []
        assert pair.local.output(packet) == []
    assert delta["XfrmOutStateSeqError"] == 1  # then the SA is gone: no state at all
    assert delta["XfrmOutNoStates"] == 1
    assert [decode(m).type for m in notices] == [MsgType.EXPIRE, MsgType.ACQUIRE]


def test_esn_crosses_the_32_bit_boundary():
    pair = build_pair(esn=True, replay=64)
    packet = datagram(pair)
    assert pair.peer.input(pair.local.output(packet)[0]) == packet
    sender = sa_state(pair.local, pair.link.key_manager, sas.OUTBOUND_SPI)
    receiver = sa_state(pair.peer, pair.peer_manager, sas.OUTBOUND_SPI)
    sender.seq = 2**32 - 3  # as after 2^32 - 3 packets, on both sides
    receiver.replay.top, receiver.replay.bitmap = 2**32 - 3, 1
    sent = [pair.local.output(packet)[0] for _ in range(6)]  # 2^32-2 ... 2^32+3
    lows = [struct.unpack(">I", s[24:28])[0] for s in sent]
    assert lows == [2**32 - 2, 2**32 - 1, 0, 1, 2, 3]
    receiver_order = [sent[3], sent[0], sent[2], sent[1], sent[5], sent[4]]
    assert [pair.peer.input(s) == packet for s in receiver_order] == [True] * 6
    assert [pair.peer.input(s) for s in sent] == [None] * 6  # replays, either side
    assert pair.peer.stats()["XfrmInStateSeqError"] == 6


def test_format_stats_is_proc_net_xfrm_stat():
    datapath = Datapath(KeyManager())
    text = datapath.format_stats()
    assert [line.split("\t")[0].rstrip() for line in text.splitlines()] == list(XFRM_STAT)
    assert all(line == f"{line[:24]}\t0" for line in text.splitlines())
    assert set(datapath.stats()) == {*XFRM_STAT, *ESP_STAT}
    if os.path.exists("/proc/net/xfrm_stat"):  # this machine's kernel: same names, same form
        with open("/proc/net/xfrm_stat") as proc:
            real = [line.split("\t")[0] for line in proc.read().splitlines()]
        ours = [line.split("\t")[0] for line in text.splitlines()]
        assert [n for n in ours if n.strip() in {r.strip() for r in real}] == real


def test_an_update_of_lifetimes_keeps_the_sequence_numbers():
    """RFC 2367 §3.1.2: UPDATE of a MATURE SA changes its lifetimes only; the key manager
    replaces the record, and the data path carries on with the same sequence numbers."""
    pair = build_pair()
    link = pair.link
    packet = datagram(pair)
    for _ in range(3):
        pair.local.output(packet)
    message = sas.add_message(
        link.transform, link.outbound, mode=IpsecMode.TUNNEL, esn=False, reqid=1
    )
    update = bytearray(message)
    update[1] = MsgType.UPDATE
    hard = Lifetime(3, 0, 0, 3600, 0).encode()
    update[4:6] = ((len(update) + len(hard)) // 8).to_bytes(2, "little")
    sas.send(link.key_manager, bytes(update) + hard)
    sa = link.key_manager.sad.get(SaType.ESP, link.hosts.peer, sas.OUTBOUND_SPI)
    assert sa is not None and sa.hard is not None and sa.hard.addtime == 3600
    assert struct.unpack(">I", pair.local.output(packet)[0][24:28])[0] == 4


@pytest.mark.parametrize(("outer", "inner"), [(6, 4), (4, 6)], ids=["4-in-6", "6-in-4"])
def test_tunnels_between_families(outer, inner):
    """RFC 4301 §5.1.2: the outer header is the SA's family, the inner packet any; the
    next header says which (4 or 41)."""
    ends, nets = sas.HOSTS[outer], sas.HOSTS[inner]
    transform = sas.TRANSFORMS["aes-gcm-16"]
    out_keys = sas.sa_keys(transform, 0x5005, ends.local, ends.peer)
    in_keys = sas.sa_keys(transform, 0x6006, ends.peer, ends.local)
    managers = (KeyManager(), KeyManager())
    for manager in managers:
        for keys, reqid in ((out_keys, 1), (in_keys, 2)):
            sas.add_sa(manager, transform, keys, mode=IpsecMode.TUNNEL, reqid=reqid)
    local, peer = managers
    tunnel = (ends.local, ends.peer)
    tun = IpsecMode.TUNNEL
    sas.add_policy(local, IpsecDir.OUTBOUND, nets.local_net, nets.peer_net, mode=tun,
                   tunnel=tunnel, reqid=1)  # fmt: skip
    sas.add_policy(peer, IpsecDir.INBOUND, nets.local_net, nets.peer_net, mode=tun,
                   tunnel=tunnel, reqid=1)  # fmt: skip
    packet = udp_packet(nets.local_host, nets.peer_host, b"across families")
    sent = Datapath(local).output(packet)[0]
    assert sent[0] >> 4 == outer
    next_header = sent[9] if outer == 4 else sent[6]
    assert next_header == 50
    assert Datapath(peer).input(sent) == packet  # (it checks the next header is 4 or 41)


def test_without_a_compiler_the_data_path_takes_the_python_methods(monkeypatch, tmp_path):
    """Where ``fastrun.c`` cannot be built the fast runs are the methods, and a data path
    carries packets by them."""
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    native.cache_clear()
    datapath_module.fast_runs.cache_clear()
    try:
        methods = datapath_module.PYTHON_RUNS
        assert datapath_module.fast_runs() == methods
        fast, _ = twins("aes-gcm-16", IpsecMode.TUNNEL, 4, False, 4500)
        local, peer = fast.pair.local, fast.pair.peer
        packets = inner_packets(fast.pair)
        sent = local.output_many(packets)
        received = peer.input_many([o.payload for o in sent], sent[0].src, sent[0].dst, udp=True)
        assert received == packets
        assert (local._outputs, peer._open_run) == methods
    finally:  # the next test builds (or finds) fastrun.c again
        native.cache_clear()
        datapath_module.fast_runs.cache_clear()
