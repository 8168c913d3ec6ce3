"""Drops in words: the data path logs one rate-limited line per cause and SA or peer, naming
the SA (SPI, peer) or the flow and the likely reason, and nothing for accepted packets;
EXPIRE and ACQUIRE notices name their SA, soft or hard."""

import logging

import pytest

from cryptoapi.esp import Datapath
from cryptoapi.esp import droplog as droplog_module
from cryptoapi.esp.droplog import BURST, DropLog
from cryptoapi.esp.espd.notices import Notices
from cryptoapi.pfkey import IpsecMode, Lifetime, Message, MsgType, SaType
from tests.esp import sas
from tests.esp.conftest import counted, udp_packet
from tests.esp.pair import build_pair, stray_tunnel

DROPS = "cryptoapi.esp.droplog"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def lines(caplog: pytest.LogCaptureFixture, logger: str = DROPS) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == logger]


def outbound(pair, payload=b"hello"):
    link = pair.link
    return udp_packet(link.local_addr, link.peer_addr, payload)


# -- the rate limit -----------------------------------------------------------------------


def test_one_line_per_cause_and_key_per_interval_then_the_held_back_count(caplog):
    caplog.set_level(logging.INFO, DROPS)
    clock = Clock()
    log = DropLog(clock, interval=10.0)
    peer = bytes((192, 0, 2, 2))
    key = (0x1001, peer)
    assert [log.report("XfrmInStateProtoError", key, 0x1001, peer) for _ in range(4)] == [
        True, False, False, False,
    ]  # fmt: skip
    assert lines(caplog) == ["ICV failed on SPI 0x1001 from 192.0.2.2: keys differ?"]
    clock.now += 9.9
    assert not log.report("XfrmInStateProtoError", key, 0x1001, peer)
    clock.now += 0.2  # the interval is over
    assert log.report("XfrmInStateProtoError", key, 0x1001, peer)
    assert lines(caplog)[-1] == (
        "ICV failed on SPI 0x1001 from 192.0.2.2: keys differ? (4 more since the last such line)"
    )


def test_a_spray_of_keys_gets_burst_lines_per_cause_not_one_per_packet(caplog):
    caplog.set_level(logging.INFO, DROPS)
    clock = Clock()
    log = DropLog(clock, interval=10.0)
    logged = [log.report("XfrmInNoStates", spi, spi, b"\xc6\x33\x64\x02") for spi in range(50)]
    assert sum(logged) == BURST and len(lines(caplog)) == BURST
    assert lines(caplog)[0] == (
        "unknown SPI 0x0 from 198.51.100.2: no SA here for it (SPIs differ, or it was deleted?)"
    )
    assert log.report("XfrmInStateProtoError", 1, 1, b"\xc6\x33\x64\x02")  # another cause
    for spi in range(50, 100_000):  # a spray held back by the burst adds no table entry
        log.report("XfrmInNoStates", spi, spi, b"\xc6\x33\x64\x02")
    assert len(log._held) + len(log._due) <= 2 * BURST + 1
    clock.now += 10.0
    assert log.report("XfrmInNoStates", 99, 99, b"\xc6\x33\x64\x02")  # a new interval
    assert lines(caplog)[-1].endswith("(99990 more of this kind for other SAs or peers)")


def test_the_table_of_keys_stays_bounded(monkeypatch):
    monkeypatch.setattr(droplog_module, "SLOTS", 8)
    monkeypatch.setattr(droplog_module, "BURST", 10**6)
    clock = Clock()
    log = DropLog(clock, interval=1.0)
    for spi in range(100):
        clock.now += 0.01
        log.report("XfrmInNoStates", spi, spi, b"\0\0\0\0")
    assert len(log._due) <= 8


# -- the data path's causes -----------------------------------------------------------------


def test_an_icv_failure_is_logged_once_naming_the_spi_and_peer(caplog):
    caplog.set_level(logging.INFO, DROPS)
    pair = build_pair("aes-gcm-16", IpsecMode.TUNNEL)
    with counted(pair.peer.stats) as delta:
        for _ in range(5):
            esp = bytearray(pair.local.output(outbound(pair))[0])
            esp[-1] ^= 1  # what a peer with other keys makes of it
            assert pair.peer.input(bytes(esp)) is None
    assert delta["XfrmInStateProtoError"] == 5
    assert lines(caplog) == ["ICV failed on SPI 0x1001 from 192.0.2.1: keys differ?"]


def test_an_unknown_spi_names_it_and_the_peer(caplog):
    caplog.set_level(logging.INFO, DROPS)
    pair = build_pair("aes-gcm-16", IpsecMode.TUNNEL)
    esp = pair.local.output(outbound(pair))[0]
    header = (esp[0] & 0x0F) * 4
    other = esp[:header] + (0x3003).to_bytes(4, "big") + esp[header + 4 :]
    with counted(pair.peer.stats) as delta:
        assert pair.peer.input(other) is None
    assert delta["XfrmInNoStates"] == 1
    assert lines(caplog) == [
        "unknown SPI 0x3003 from 192.0.2.1: no SA here for it (SPIs differ, or it was deleted?)"
    ]


def test_a_replayed_packet_names_the_spi(caplog):
    caplog.set_level(logging.INFO, DROPS)
    pair = build_pair("aes-gcm-16", IpsecMode.TUNNEL)
    esp = pair.local.output(outbound(pair))[0]
    assert pair.peer.input(esp) is not None
    assert pair.peer.input(esp) is None
    assert lines(caplog) == [
        "replayed or too old packet on SPI 0x1001 from 192.0.2.1: "
        "the peer restarted its sequence numbers, or a replay?"
    ]


@pytest.mark.parametrize(
    ("drops_clear", "verdict"), [(False, "passed in clear"), (True, "dropped")]
)
def test_no_outbound_policy_says_what_became_of_the_packet(caplog, drops_clear, verdict):
    caplog.set_level(logging.INFO, DROPS)
    link = sas.build_link("aes-gcm-16", IpsecMode.TUNNEL)
    datapath = Datapath(link.key_manager, drops_clear=drops_clear)
    stray = udp_packet("10.1.0.1", "10.9.0.1", b"nobody's")
    for _ in range(3):
        assert datapath.output(stray) == [stray]  # output's contract: no policy, no ESP
    assert lines(caplog) == [f"no outbound policy for 10.1.0.1 -> 10.9.0.1: packet {verdict}"]


def test_a_none_policy_bypasses_without_a_word(caplog):
    caplog.set_level(logging.INFO, DROPS)
    pair = build_pair("aes-gcm-16", IpsecMode.TUNNEL)
    for _ in range(3):
        assert pair.local.output(outbound(pair))  # protected: an accepted packet
        assert pair.peer.input(pair.local.output(outbound(pair))[0]) is not None
    assert lines(caplog) == []


def test_no_inbound_policy_names_the_flow_and_the_sa(caplog):
    caplog.set_level(logging.INFO, DROPS)
    pair = build_pair(mode=IpsecMode.TUNNEL)
    stray = stray_tunnel(pair)
    for _ in range(2):
        assert pair.local.input(pair.peer.output(stray)[0]) is None
    assert lines(caplog) == [
        "no inbound policy for 192.0.2.200 -> 198.51.100.7 (SPI 0x2002 from 192.0.2.2): "
        "packet dropped"
    ]


def test_plaintext_where_esp_is_required_says_so(caplog):
    caplog.set_level(logging.INFO, DROPS)
    pair = build_pair(mode=IpsecMode.TUNNEL)
    link = pair.link
    assert pair.local.input(udp_packet(link.peer_addr, link.local_addr, b"clear")) is None
    assert lines(caplog) == [
        "plaintext packet 203.0.113.9 -> 198.51.100.7 where the inbound policy requires ESP: "
        "packet dropped (the peer has no outbound policy?)"
    ]


def test_no_sa_for_an_outbound_policy_says_an_acquire_went(caplog):
    caplog.set_level(logging.INFO, DROPS)
    link = sas.build_link("aes-gcm-16", IpsecMode.TUNNEL)
    datapath = Datapath(link.key_manager)
    sas.send(link.key_manager, Message(MsgType.FLUSH, SaType.ESP).encode())  # policies stay
    packet = udp_packet(link.local_addr, link.peer_addr, b"x")
    assert datapath.output(packet) == []
    assert lines(caplog) == [
        "no SA for the outbound policy 198.51.100.7 -> 203.0.113.9 (an ACQUIRE went to the "
        "key managers): packet dropped"
    ]


# -- notices ------------------------------------------------------------------------------


def test_expire_notices_name_the_sa_soft_then_hard(caplog):
    caplog.set_level(logging.INFO, "cryptoapi.esp.espd.notices")
    link = sas.build_link("aes-gcm-16", IpsecMode.TUNNEL)
    sa = next(sa for sa in link.key_manager.sad if sa.spi == sas.OUTBOUND_SPI)
    sa.soft = Lifetime(4, allocations=2)
    sa.hard = Lifetime(3, allocations=3)
    link.key_manager.handle(Message(MsgType.REGISTER, SaType.ESP, 1, 4242).encode())
    datapath = Datapath(link.key_manager, notify=Notices())
    packet = udp_packet(link.local_addr, link.peer_addr, b"count me")
    for _ in range(4):
        datapath.output(packet)
    size = len(packet)
    assert lines(caplog, "cryptoapi.esp.espd.notices") == [
        f"data path notice: soft EXPIRE of ESP SA SPI 0x1001 192.0.2.1 -> 192.0.2.2 "
        f"after {2 * size} bytes, 2 packets",
        f"data path notice: hard EXPIRE of ESP SA SPI 0x1001 192.0.2.1 -> 192.0.2.2 "
        f"after {3 * size} bytes, 3 packets",
        "data path notice: ACQUIRE: no ESP SA 192.0.2.1 -> 192.0.2.2 yet",
    ]
