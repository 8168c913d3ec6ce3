"""Extended sequence numbers and replay windows above 255, as FreeBSD's PF_KEY has them: the
SA flag ``SaFlags.ESN`` and the ``SA_REPLAY`` extension (our number 32), through the codec,
the key manager, setkey and its listing, and into the ESP data path."""

import errno
import struct

import pytest

from cryptoapi.esp import Datapath
from cryptoapi.pfkey import (
    ExtType,
    Key,
    KeyManager,
    Lifetime,
    Message,
    MsgType,
    Sa,
    Sa2,
    SaFlags,
    SaReplay,
    SaType,
    decode,
    scan,
)
from cryptoapi.pfkey.setkey import LocalTransport, SetkeyError, apply, parse
from cryptoapi.pfkey.setkey.show import format_reply, sa_dict
from cryptoapi.pfkey.wire.constants import REPLAY_WINDOW_MAX, SADB_EXT_MAX
from tests.pfkey.conftest import (
    AUTH_KEY,
    DST,
    ENC_KEY,
    address,
    getspi_message,
    lookup_message,
    only,
    refused,
)

ESN = int(SaFlags.ESN)
GCM_KEY = "0x" + "42" * 20  # AES-128 key and 4-byte salt (RFC 4106 §8.1)


def add_message(
    spi,
    *,
    replay=32,
    flags=0,
    window=None,
    satype=SaType.ESP,
    type=MsgType.ADD,
    soft=None,
):
    """An ADD (or UPDATE) of an hmac(sha256) SA (and cbc(aes) for ESP), with ``flags`` in
    ``sadb_sa`` and, when ``window`` is given, an SA_REPLAY extension."""
    encrypt = 12 if satype == SaType.ESP else 0
    exts = [Sa(spi, replay, 1, 5, encrypt, flags), address(5, "10.0.0.1"), address(6, DST)]
    exts.append(Key(ExtType.KEY_AUTH, 8 * len(AUTH_KEY), AUTH_KEY))
    if encrypt:
        exts.append(Key(ExtType.KEY_ENCRYPT, 8 * len(ENC_KEY), ENC_KEY))
    if soft is not None:
        exts.append(Lifetime(ExtType.LIFETIME_SOFT, *soft))
    exts.append(Sa2(1, 0))
    if window is not None:
        exts.append(SaReplay(window))
    return Message(type, satype, 1, 4242, 0, tuple(exts)).encode()


def get(km, spi, satype=SaType.ESP):
    reply = only(km, lookup_message(MsgType.GET, spi, satype=satype))
    assert reply.errno == 0, reply
    return reply


# -- the codec ------------------------------------------------------------------------


def test_sa_replay_has_freebsds_layout_under_a_number_no_linux_or_freebsd_extension_uses():
    wire = SaReplay(4096).encode()
    assert wire == struct.pack("<HHI", 1, 32, 4096)  # sadb_x_sa_replay: len 1, exttype, u32
    assert ExtType.SA_REPLAY == 32 > 31 > SADB_EXT_MAX  # FreeBSD's last is 31, Linux's 26


@pytest.mark.parametrize("window", [0, 255, 4096, REPLAY_WINDOW_MAX, 0xFFFFFFFF])
def test_sa_replay_round_trips(window):
    message = Message(MsgType.ADD, SaType.ESP, 7, 42, 0, (Sa(0x1001), SaReplay(window)))
    data = message.encode()
    assert decode(data) == message
    assert decode(data).encode() == data
    assert scan(data).decode(ExtType.SA_REPLAY) == SaReplay(window)


def test_a_repeated_sa_replay_is_einval(km):
    data = add_message(0x1001, window=4096) + SaReplay(64).encode()
    data = data[:4] + struct.pack("<H", len(data) // 8) + data[6:]
    refused(km, data, errno.EINVAL)


# -- the key manager ------------------------------------------------------------------


def test_a_window_of_4096_is_kept_and_get_and_dump_carry_it_in_sa_replay(km):
    added = only(km, add_message(0x1001, replay=255, window=4096))
    assert added.errno == 0 and added.get(ExtType.SA, Sa).replay == 255
    assert km.sad.get(SaType.ESP, DST, 0x1001).replay == 4096
    for reply in (get(km, 0x1001), only(km, Message(MsgType.DUMP, SaType.ESP).encode())):
        assert reply.get(ExtType.SA, Sa).replay == 255  # min(window, 255)
        assert reply.get(ExtType.SA_REPLAY, SaReplay) == SaReplay(4096)


def test_a_window_of_100_is_sent_exactly_as_linux_sends_it(km):
    assert only(km, add_message(0x1001, replay=100)).errno == 0
    reply = get(km, 0x1001)
    assert reply.get(ExtType.SA, Sa).replay == 100
    assert reply.get(ExtType.SA_REPLAY, SaReplay) is None
    assert ExtType.SA_REPLAY not in scan(km.handle(lookup_message(MsgType.GET, 0x1001))[0]).spans


def test_sa_replay_overrides_sadb_sa_replay_whatever_its_size(km):
    assert only(km, add_message(0x1001, replay=200, window=64)).errno == 0
    assert km.sad.get(SaType.ESP, DST, 0x1001).replay == 64
    assert get(km, 0x1001).get(ExtType.SA, Sa).replay == 64


def test_the_esn_flag_is_kept_and_shown(km):
    assert only(km, add_message(0x1001, replay=64, flags=ESN)).errno == 0
    assert km.sad.get(SaType.ESP, DST, 0x1001).flags & SaFlags.ESN
    assert get(km, 0x1001).get(ExtType.SA, Sa).flags == ESN


def test_esn_on_ah_is_allowed_rfc_4302_has_it_too(km):
    assert only(km, add_message(0x1001, replay=64, flags=ESN, satype=SaType.AH)).errno == 0
    assert get(km, 0x1001, SaType.AH).get(ExtType.SA, Sa).flags == ESN


@pytest.mark.parametrize(
    "options",
    [
        {"replay": 0, "flags": ESN},  # ESN needs a window (Linux xfrm_init_replay)
        {"replay": 64, "flags": ESN, "window": 0},  # SA_REPLAY's 0 overrides the 64
        {"window": REPLAY_WINDOW_MAX + 1},
        {"window": 0xFFFFFFFF, "flags": ESN},
    ],
)
def test_esn_without_a_window_and_windows_above_the_maximum_are_einval(km, options):
    refused(km, add_message(0x1001, **options), errno.EINVAL)


def test_the_largest_window_is_accepted(km):
    assert only(km, add_message(0x1001, window=REPLAY_WINDOW_MAX, flags=ESN)).errno == 0
    assert km.sad.get(SaType.ESP, DST, 0x1001).replay == REPLAY_WINDOW_MAX


def test_update_of_a_larval_sa_takes_sa_replay_and_esn(km):
    spi = decode(km.handle(getspi_message(0x3000, 0x3000))[0]).get(ExtType.SA, Sa).spi
    update = add_message(spi, type=MsgType.UPDATE, replay=0, flags=ESN, window=1024)
    assert only(km, update).errno == 0
    sa = km.sad.get(SaType.ESP, DST, spi)
    assert (sa.replay, sa.flags & SaFlags.ESN) == (1024, ESN)


def test_an_expire_of_a_large_window_sa_says_255(km, clock):
    km.handle(Message(MsgType.REGISTER, SaType.ESP).encode())
    assert only(km, add_message(0x1001, window=4096, soft=(0, 0, 10, 0))).errno == 0
    clock.advance(11)
    (expire,) = [decode(m) for m in km.tick()]
    assert expire.type == MsgType.EXPIRE and expire.get(ExtType.SA, Sa).replay == 255


# -- setkey -----------------------------------------------------------------------------


def parsed(text):
    (statement,) = parse(text, "t.conf")
    (message,) = statement.messages
    assert decode(message.encode()) == message
    return message


def test_setkey_r_above_255_sends_sa_replay_after_sa2_as_freebsds_setkey():
    m = parsed(f"add 10.0.0.1 10.0.0.2 esp 0x1001 -r 4096 -E aes-gcm-16 {GCM_KEY} ;")
    assert m.get(ExtType.SA, Sa).replay == 255
    assert m.get(ExtType.SA_REPLAY, SaReplay) == SaReplay(4096)  # packets, not bytes
    types = [e.exttype for e in m.extensions]
    assert types.index(ExtType.SA_REPLAY) == types.index(ExtType.X_SA2) + 1


def test_setkey_r_up_to_255_sends_only_sadb_sa_replay():
    m = parsed(f"add 10.0.0.1 10.0.0.2 esp 0x1001 -r 255 -E aes-gcm-16 {GCM_KEY} ;")
    assert m.get(ExtType.SA, Sa).replay == 255
    assert m.get(ExtType.SA_REPLAY, SaReplay) is None


def test_setkey_esn_token_sets_the_flag():
    m = parsed(f"add 10.0.0.1 10.0.0.2 esp 0x1001 -esn -r 64 -E aes-gcm-16 {GCM_KEY} ;")
    assert m.get(ExtType.SA, Sa).flags & SaFlags.ESN
    plain = parsed(f"add 10.0.0.1 10.0.0.2 esp 0x1001 -r 64 -E aes-gcm-16 {GCM_KEY} ;")
    assert not plain.get(ExtType.SA, Sa).flags & SaFlags.ESN


def test_setkey_esn_without_a_window_points_at_the_token():
    with pytest.raises(SetkeyError) as caught:
        parse(f"add 10.0.0.1 10.0.0.2 esp 0x1001 -esn -E aes-gcm-16 {GCM_KEY} ;", "t.conf")
    assert (caught.value.where.line, caught.value.where.column) == (1, 34)
    assert "-r" in str(caught.value)


def test_setkey_dump_shows_the_window_in_packets_and_the_flags(km):
    text = f"add 10.0.0.1 10.0.0.2 esp 0x1001 -r 4096 -esn -E aes-cbc 0x{'00' * 16} "
    text += f"-A hmac-sha256 0x{'11' * 32} ;\nget 10.0.0.1 10.0.0.2 esp 0x1001 ;"
    outcomes = apply(parse(text, "t.conf"), LocalTransport(km))
    assert all(o.ok for o in outcomes), [o.describe_errors() for o in outcomes]
    (reply,) = outcomes[1].replies
    shown = "\tseq=0x00000000 replay=4096 flags=0x00000400 state=mature "  # pfkey_sadump1
    assert shown in format_reply(reply).splitlines()
    # ESN kept, setkey's CYCSEQ (0x40) not: Linux keeps only the flags it implements
    assert (sa_dict(reply)["replay"], sa_dict(reply)["flags"]) == (4096, 0x400)


# -- the data path ----------------------------------------------------------------------


SAS = f"""
add 192.0.2.1 192.0.2.2 esp 0x1001 -m tunnel -r 4096 -esn -E aes-gcm-16 {GCM_KEY} ;
add 192.0.2.2 192.0.2.1 esp 0x2002 -m tunnel -r 4096 -esn -E aes-gcm-16 {GCM_KEY} ;
spdadd 10.1.0.0/16 10.2.0.0/16 any -P {{a}} ipsec esp/tunnel/192.0.2.1-192.0.2.2/require ;
spdadd 10.2.0.0/16 10.1.0.0/16 any -P {{b}} ipsec esp/tunnel/192.0.2.2-192.0.2.1/require ;
"""


def endpoint(a, b):
    key_manager = KeyManager()
    outcomes = apply(parse(SAS.format(a=a, b=b)), LocalTransport(key_manager))
    assert all(o.ok for o in outcomes), [o.describe_errors() for o in outcomes]
    return key_manager, Datapath(key_manager)


def ping(ident):
    header = bytearray.fromhex("4500001c00004000400100000a0100070a020009")
    header[4:6] = ident.to_bytes(2, "big")
    total = sum(int.from_bytes(header[i : i + 2], "big") for i in range(0, 20, 2))
    while total > 0xFFFF:
        total = (total & 0xFFFF) + (total >> 16)
    header[10:12] = (0xFFFF - total).to_bytes(2, "big")
    return bytes(header) + bytes.fromhex("0800f7ff00000000")


def test_the_data_path_uses_the_4096_window_and_esn_of_an_sa_added_by_setkey():
    _, left = endpoint("out", "in")
    key_manager, right = endpoint("in", "out")
    sa = key_manager.sad.get(SaType.ESP, "192.0.2.2", 0x1001)
    assert (sa.replay, bool(sa.flags & SaFlags.ESN)) == (4096, True)
    sealed = [left.output(ping(i))[0] for i in range(1, 302)]
    for packet in sealed[1:]:
        assert right.input(packet) is not None
    state = right.state_of(sa)
    assert state.replay.size == 4096 and state.esn and state.replay.esn
    assert right.input(sealed[0]) == ping(1)  # 300 behind: in a 4096 window, not in 255
    assert right.input(sealed[0]) is None  # and a replay of it is not
    assert right.stats()["XfrmInStateSeqError"] == 1
