"""Bad input is dropped and counted, never raises, returns no plaintext and changes no
state but counters (the replay window moves only for authentic packets)."""

import random
import struct

import pytest

from cryptoapi.esp import XFRM_STAT
from cryptoapi.pfkey import IpsecMode
from tests.esp.conftest import counted, ip_packet, udp_packet
from tests.esp.pair import build_pair


@pytest.fixture(params=["aes-gcm-16", "aes-cbc+hmac-sha2-256", "chacha20-poly1305"])
def pair(request):
    return build_pair(request.param, IpsecMode.TUNNEL, encap_port=4500)


def _sent(pair):
    link = pair.link
    packet = udp_packet(link.local_addr, link.peer_addr, b"authentic payload")
    return packet, pair.local.output(packet)[0]


def _drops(pair, bad):
    with counted(pair.peer.stats) as delta:
        assert pair.peer.input(bad) is None
    assert (
        sum(delta[name] for name in XFRM_STAT) + delta["EspInKeepalive"] + delta["EspInIke"] == 1
    ), delta
    assert delta["EspInPackets"] == 0
    return delta


def test_every_truncation_and_every_bit_flip_is_dropped(pair):
    packet, sent = _sent(pair)
    header = 28  # IPv4 + UDP
    for length in range(len(sent)):
        _drops(pair, _resized(sent, length))
    rng = random.Random(7)
    for position in range(header, len(sent)):
        flipped = bytearray(sent)
        flipped[position] ^= 1 << rng.randrange(8)
        _drops(pair, bytes(flipped))
    assert pair.peer.input(sent) == packet  # the window did not move for any of them


def _resized(packet, length):
    """``packet`` cut to ``length`` bytes with its IPv4 and UDP lengths made to agree, so
    the damage reaches ESP rather than stopping at the IP header check."""
    cut = bytearray(packet[:length])
    if length >= 20:
        cut[2:4] = struct.pack(">H", length)
    if length >= 28:
        cut[24:26] = struct.pack(">H", length - 20)
    return bytes(cut)


def test_unknown_spi_replay_and_malformed_headers(pair):
    packet, sent = _sent(pair)
    unknown = bytearray(sent)
    unknown[28:32] = b"\xde\xad\xbe\xef"
    assert _drops(pair, bytes(unknown))["XfrmInNoStates"] == 1
    assert pair.peer.input(sent) == packet
    assert _drops(pair, sent)["XfrmInStateSeqError"] == 1
    with_options = bytearray(sent[:20] + b"\x01\x01\x01\x00" + sent[20:])  # 4 bytes of NOPs
    with_options[0] = 0x46
    with_options[2:4] = struct.pack(">H", len(with_options))
    assert _drops(pair, bytes(with_options))["XfrmInHdrError"] == 1
    short = udp_packet("192.0.2.2", "192.0.2.1", b"\x00\x00\x01", 4500, 4500)  # < ESP header
    assert _drops(pair, short)["XfrmInHdrError"] == 1
    assert _drops(pair, b"")["XfrmInHdrError"] == 1
    assert _drops(pair, b"\x60" + bytes(10))["XfrmInHdrError"] == 1


def test_garbage_never_raises(pair):
    rng = random.Random(11)
    _, sent = _sent(pair)
    for _ in range(2000):
        size = rng.randrange(0, 120)
        junk = bytes(rng.randrange(256) for _ in range(size))
        if rng.random() < 0.5:
            junk = sent[: rng.randrange(len(sent))] + junk
        assert pair.peer.input(junk) is None or junk[9:10] not in (b"\x32", b"\x11")
        pair.local.output(junk)  # plaintext side: never raises either


def test_an_ipv6_extension_header_is_not_handled():
    pair = build_pair(version=6, mode=IpsecMode.TUNNEL)
    link = pair.link
    hop_by_hop = bytes((17, 0)) + bytes(6)  # next header UDP, length 0: 8 bytes
    packet = ip_packet(link.local_addr, link.peer_addr, 0, hop_by_hop + b"\0" * 8)
    with counted(pair.local.stats) as delta:
        assert pair.local.output(packet) == []
    assert delta["XfrmOutError"] == 1
