"""``setkey -D`` / ``-DP`` text, field for field as ipsec-tools 0.8.2 prints it.

ipsec-tools' setkey is not installed here, so the expected outputs are typed from the
printf formats of its ``src/libipsec/pfkey_dump.c`` (``pfkey_sadump1``, ``pfkey_spdump1``,
``str_time``, ``str_prefport``, ``str_upperspec``, ``str_lifetime_byte``),
``ipsec_dump_policy.c`` (``ipsec_dump_policy1``, ``ipsec_dump_ipsecrequest``) and
``key_debug.c`` (``ipsec_hexdump``), for fixed messages, a fixed clock and TZ=UTC.
Trailing spaces are part of the format (``GETMSGSTR`` prints ``"%s "``).
"""

import os
import time

import pytest

from cryptoapi.pfkey.setkey.show import ctime_text, format_policy, format_sa
from cryptoapi.pfkey.wire.constants import (
    IPPROTO_ESP,
    AuthAlg,
    EncryptAlg,
    ExtType,
    IpsecDir,
    IpsecLevel,
    IpsecMode,
    MsgType,
    PolicyType,
    SaState,
    SaType,
)
from cryptoapi.pfkey.wire.extensions import Address, Key, Lifetime, Sa
from cryptoapi.pfkey.wire.message import Message
from cryptoapi.pfkey.wire.policy import IpsecRequest, Policy
from cryptoapi.pfkey.wire.sockaddr import SockAddr
from cryptoapi.pfkey.wire.x_extensions import NatTPort, NatTType, Sa2
from tests.cli.test_setkey import setkey

CREATED = 1796126400  # Tue Dec  1 12:00:00 2026 UTC
NOW = CREATED + 90  # the listing's time(0)
ENC_KEY = bytes(range(16))
AUTH_KEY = bytes(range(0x20, 0x48))  # 40 bytes: ipsec_hexdump breaks the line after 32


@pytest.fixture(autouse=True)
def utc():
    """str_time prints local time: pin the zone, and put it back afterwards."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    yield
    if before is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = before
    time.tzset()


def address(exttype, ip, *, prefixlen=32, proto=255, port=0):
    return Address(exttype, SockAddr.of(ip, port), proto=proto, prefixlen=prefixlen)


def lifetimes():
    return (
        Lifetime(ExtType.LIFETIME_CURRENT, allocations=3, nbytes=1234, addtime=CREATED,
                 usetime=CREATED + 60),
        Lifetime(ExtType.LIFETIME_HARD, allocations=0, nbytes=10_000_000, addtime=3600,
                 usetime=600),
        Lifetime(ExtType.LIFETIME_SOFT, allocations=0, nbytes=8_000_000, addtime=2880,
                 usetime=480),
    )  # fmt: skip


def esp_tunnel_sa():
    return Message(
        MsgType.DUMP, SaType.ESP, seq=1, pid=4242, reserved=0,
        extensions=(
            Sa(0x1001, replay=32, state=SaState.MATURE, auth=AuthAlg.X_SHA2_256HMAC,
               encrypt=EncryptAlg.X_AESCBC),
            *lifetimes(),
            address(ExtType.ADDRESS_SRC, "10.0.0.1"),
            address(ExtType.ADDRESS_DST, "10.0.0.2"),
            Key(ExtType.KEY_AUTH, 320, AUTH_KEY),
            Key(ExtType.KEY_ENCRYPT, 128, ENC_KEY),
            Sa2(mode=IpsecMode.TUNNEL, reqid=5, sequence=7),
        ),
    )  # fmt: skip


ESP_TUNNEL_LIFETIMES = (
    "\tcreated: Dec  1 12:00:00 2026\tcurrent: Dec  1 12:01:30 2026\n"
    "\tdiff: 90(s)\thard: 3600(s)\tsoft: 2880(s)\n"
    "\tlast: Dec  1 12:01:00 2026\thard: 600(s)\tsoft: 480(s)\n"
    "\tcurrent: 1234(bytes)\thard: 10000000(bytes)\tsoft: 8000000(bytes)\n"
    "\tallocated: 3\thard: 0\tsoft: 0\n"
)


def test_an_esp_tunnel_sa_with_its_keys():
    assert format_sa(esp_tunnel_sa(), show_keys=True, now=NOW) + "\n" == (
        "10.0.0.1 10.0.0.2 \n"
        "\tesp mode=tunnel spi=4097(0x00001001) reqid=5(0x00000005)\n"
        "\tE: aes-cbc  00010203 04050607 08090a0b 0c0d0e0f\n"
        "\tA: hmac-sha256  20212223 24252627 28292a2b 2c2d2e2f 30313233 34353637 38393a3b"
        " 3c3d3e3f\n 40414243 44454647\n"
        "\tseq=0x00000007 replay=32 flags=0x00000000 state=mature \n"
        + ESP_TUNNEL_LIFETIMES
        + "\tsadb_seq=1 pid=4242 refcnt=0\n"
    )


def test_keys_stay_hidden_unless_asked():
    text = format_sa(esp_tunnel_sa(), now=NOW)
    assert "\tE: aes-cbc  <128-bit key hidden>\n" in text
    assert "\tA: hmac-sha256  <320-bit key hidden>\n" in text
    assert ENC_KEY.hex()[:8] not in text and AUTH_KEY.hex()[:8] not in text


def test_an_ah_sa_without_lifetimes_keys_or_a_known_mode():
    """No current lifetime: no lifetime rows at all; no KEY_ENCRYPT: no ``E:`` line (and
    never one for AH); a mode past ``tunnel`` is its number; refcnt is sadb_msg_reserved."""
    msg = Message(
        MsgType.GET, SaType.AH, seq=0, pid=7, reserved=2,
        extensions=(
            Sa(0x2000, replay=0, state=SaState.DYING, auth=AuthAlg.SHA1HMAC),
            address(ExtType.ADDRESS_SRC, "2001:db8::1"),
            address(ExtType.ADDRESS_DST, "2001:db8::2"),
            Sa2(mode=4, reqid=0),
        ),
    )  # fmt: skip
    assert format_sa(msg, now=NOW) == (
        "2001:db8::1 2001:db8::2 \n"
        "\tah mode=4 spi=8192(0x00002000) reqid=0(0x00000000)\n"
        "\tseq=0x00000000 replay=0 flags=0x00000000 state=dying \n"
        "\tsadb_seq=0 pid=7 refcnt=2"
    )


def test_an_esp_in_udp_sa_shows_its_ports_and_absent_limits_as_zero():
    msg = Message(
        MsgType.DUMP, SaType.ESP, seq=0, pid=1,
        extensions=(
            Sa(0x3000, replay=64, encrypt=EncryptAlg.X_AES_GCM_ICV16, flags=0),
            Lifetime(ExtType.LIFETIME_CURRENT, addtime=CREATED),
            address(ExtType.ADDRESS_SRC, "192.0.2.1"),
            address(ExtType.ADDRESS_DST, "198.51.100.2"),
            Key(ExtType.KEY_ENCRYPT, 160, bytes(20)),
            Sa2(mode=IpsecMode.TRANSPORT, reqid=16385),
            NatTType(2),
            NatTPort(ExtType.X_NAT_T_SPORT, 4500),
            NatTPort(ExtType.X_NAT_T_DPORT, 4501),
        ),
    )  # fmt: skip
    assert format_sa(msg, now=NOW).splitlines() == [
        "192.0.2.1[4500] 198.51.100.2[4501] ",
        "\tesp-udp mode=transport spi=12288(0x00003000) reqid=16385(0x00004001)",
        "\tE: aes-gcm-16  <160-bit key hidden>",
        "\tseq=0x00000000 replay=64 flags=0x00000000 state=mature ",
        "\tcreated: Dec  1 12:00:00 2026\tcurrent: Dec  1 12:01:30 2026",
        "\tdiff: 90(s)\thard: 0(s)\tsoft: 0(s)",
        "\tlast:                     \thard: 0(s)\tsoft: 0(s)",
        "\tcurrent: 0(bytes)\thard: 0(bytes)\tsoft: 0(bytes)",
        "\tallocated: 0\thard: 0\tsoft: 0",
        "\tsadb_seq=0 pid=1 refcnt=0",
    ]


def test_ctime_text_is_ctime_without_the_weekday():
    assert ctime_text(CREATED) == "Dec  1 12:00:00 2026"
    assert ctime_text(CREATED + 9 * 86400 + 3661) == "Dec 10 13:01:01 2026"
    assert ctime_text(0) == " " * 20


def policy(requests, *, dir=IpsecDir.OUTBOUND, id=1, priority=0x80000000, type=None):
    kind = PolicyType.IPSEC if type is None else type
    return Policy(type=kind, dir=dir, id=id, priority=priority, requests=tuple(requests))


def spd_message(pol, src, dst, *, seq=0, lifetimes=True, reserved=1):
    extra = (
        (
            Lifetime(ExtType.LIFETIME_CURRENT, addtime=CREATED, usetime=0),
            Lifetime(ExtType.LIFETIME_HARD, addtime=0, usetime=0),
        )
        if lifetimes
        else ()
    )
    return Message(MsgType.X_SPDDUMP, 0, seq=seq, pid=4242, reserved=reserved,
                   extensions=(src, dst, pol, *extra))  # fmt: skip


def test_a_tunnel_policy_with_full_length_selectors():
    tunnel = (SockAddr.of("10.0.0.1"), SockAddr.of("10.0.0.2"))
    request = IpsecRequest(IPPROTO_ESP, IpsecMode.TUNNEL, IpsecLevel.REQUIRE, tunnel=tunnel)
    msg = spd_message(
        policy([request], id=9),
        address(ExtType.ADDRESS_SRC, "10.0.0.1"),
        address(ExtType.ADDRESS_DST, "10.0.0.2"),
        seq=2,
    )
    assert format_policy(msg) + "\n" == (
        "10.0.0.1[any] 10.0.0.2[any] 255\n"
        "\tout prio def ipsec\n"
        "\tesp/tunnel/10.0.0.1-10.0.0.2/require\n"
        "\tcreated: Dec  1 12:00:00 2026  lastused:                     \n"
        "\tlifetime: 0(s) validtime: 0(s)\n"
        "\tspid=9 seq=2 pid=4242\n"
        "\trefcnt=1\n"
    )


def test_prefixes_ports_protocols_priorities_and_reqids():
    requests = [
        IpsecRequest(51, IpsecMode.TRANSPORT, IpsecLevel.UNIQUE, reqid=7),
        IpsecRequest(IPPROTO_ESP, IpsecMode.TRANSPORT, IpsecLevel.UNIQUE, reqid=0x4001),
        IpsecRequest(IPPROTO_ESP, IpsecMode.ANY, IpsecLevel.USE, reqid=3),
    ]
    msg = spd_message(
        policy(requests, dir=IpsecDir.INBOUND, id=16, priority=0x80000000 - 5),
        address(ExtType.ADDRESS_SRC, "10.0.0.0", prefixlen=24, proto=6, port=80),
        address(ExtType.ADDRESS_DST, "2001:db8::", prefixlen=64, proto=6),
        lifetimes=False,
    )
    assert format_policy(msg).splitlines() == [
        "10.0.0.0/24[80] 2001:db8::/64[any] tcp",
        "\tin prio def + 5 ipsec",
        "\tah/transport//unique:7",
        "\tesp/transport//unique#16385",
        "\tesp/any//use:3",
        "\tspid=16 seq=0 pid=4242",
        "\trefcnt=1",
    ]


@pytest.mark.parametrize(
    ("priority", "shown"),
    [
        (0, "fwd discard"),
        (0x40000000, "fwd prio high discard"),
        (0x5FFFFFFF, "fwd prio high - 536870911 discard"),
        (0x60000000, "fwd prio def + 536870912 discard"),
        (0x80000003, "fwd prio def - 3 discard"),
        (0xA0000000, "fwd prio low + 536870912 discard"),
        (0xC0000009, "fwd prio low - 9 discard"),
    ],
)
def test_priorities_as_ipsec_dump_policy1_bands_them(priority, shown):
    msg = spd_message(
        policy([], dir=IpsecDir.FWD, id=2, priority=priority, type=PolicyType.DISCARD),
        address(ExtType.ADDRESS_SRC, "10.0.0.0", prefixlen=8),
        address(ExtType.ADDRESS_DST, "10.0.0.0", prefixlen=8),
    )
    assert format_policy(msg).splitlines()[1] == f"\t{shown}"


def test_icmp_selectors_have_no_port_brackets_but_type_and_code():
    msg = spd_message(
        policy([], type=PolicyType.NONE),
        address(ExtType.ADDRESS_SRC, "10.0.0.1", proto=1, port=8),
        address(ExtType.ADDRESS_DST, "10.0.0.2", proto=1, port=0),
    )
    assert format_policy(msg).splitlines()[:2] == [
        "10.0.0.1 10.0.0.2 icmp 8,0",
        "\tout prio def none",
    ]


def test_a_socket_policy_index_is_shown_as_linux_setkey_shows_it():
    """On Linux, pfkey_spdump1 takes an index whose low 3 bits are 3 or more for a socket's."""
    msg = spd_message(
        policy([], id=8 * 4 + 3, type=PolicyType.BYPASS),
        address(ExtType.ADDRESS_SRC, "10.0.0.1"),
        address(ExtType.ADDRESS_DST, "10.0.0.2"),
    )
    assert format_policy(msg).splitlines()[0] == "(per-socket policy) "


SHA256_KEY = f"0x{AUTH_KEY[:32].hex()}"
CONFIG = f"""add 10.0.0.1 10.0.0.2 esp 0x1001 -m tunnel -E aes-cbc 0x{ENC_KEY.hex()}
    -A hmac-sha256 {SHA256_KEY} ;
add 10.0.0.2 10.0.0.1 esp 0x1002 -m tunnel -E aes-cbc 0x{ENC_KEY.hex()}
    -A hmac-sha256 {SHA256_KEY} ;
spdadd 10.0.0.1 10.0.0.2 any -P out ipsec esp/tunnel/10.0.0.1-10.0.0.2/require ;
"""


def test_a_dry_run_with_dash_d_prints_the_listing_once(tmp_path, capsys):
    conf = tmp_path / "ipsec.conf"
    conf.write_text(CONFIG)
    assert setkey("-f", str(conf), "-D") == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    spis = sorted(line for line in lines if "spi=" in line)  # newest first or not: both once
    assert spis == [
        "\tesp mode=tunnel spi=4097(0x00001001) reqid=0(0x00000000)",
        "\tesp mode=tunnel spi=4098(0x00001002) reqid=0(0x00000000)",
    ]
    assert sorted(line for line in lines if not line.startswith("\t")) == [
        "10.0.0.1 10.0.0.2 ", "10.0.0.2 10.0.0.1 "
    ]  # fmt: skip
    assert "dry run" not in captured.out and "holds 2 SAs and 1 policy." in captured.err
    assert setkey("-f", str(conf), "-D", "-P") == 0
    out = capsys.readouterr().out
    assert out.startswith("10.0.0.1[any] 10.0.0.2[any] 255\n\tout prio def ipsec\n")
    assert out.count("spid=") == 1 and "spi=" not in out
