"""The messages the key manager originates for its listeners, byte by byte as Linux's
net/key/af_key.c builds them: ACQUIRE (``pfkey_send_acquire``) and EXPIRE
(``key_notify_sa_expire`` through ``__pfkey_xfrm_state2msg`` with ``hsc`` 1 or 2).

Every number here is typed from include/uapi/linux/pfkeyv2.h and ipsec.h, not taken from
the package's own constants, so a wrong constant there cannot hide."""

import struct

import pytest

from cryptoapi.pfkey import KeyManager, MsgType, SaType
from cryptoapi.pfkey.wire.sockaddr import SockAddr

from .conftest import DST, SRC, address, header, make_registry, only, sa_message

PF_KEY_V2 = 2
SADB_ACQUIRE, SADB_EXPIRE, SADB_X_SPDADD = 6, 8, 14
SADB_SATYPE_ESP = 3
SADB_EXT_SA, SADB_EXT_LIFETIME_CURRENT, SADB_EXT_LIFETIME_HARD = 1, 2, 3
SADB_EXT_LIFETIME_SOFT, SADB_EXT_ADDRESS_SRC, SADB_EXT_ADDRESS_DST = 4, 5, 6
SADB_EXT_PROPOSAL, SADB_X_EXT_POLICY, SADB_X_EXT_SA2 = 13, 18, 19
IPSEC_POLICY_IPSEC, IPSEC_DIR_OUTBOUND, IPSEC_MODE_TUNNEL = 2, 2, 2
SADB_MSG = struct.Struct("<BBBBHHII")  # version type errno satype len reserved seq pid
EXT_HEADER = struct.Struct("<HH")  # len (64-bit words), exttype
SADB_X_POLICY = struct.Struct("<HHHBBII")  # len exttype type dir reserved id priority
SADB_X_SA2 = struct.Struct("<HHBBHII")  # len exttype mode reserved1 reserved2 sequence reqid
SADB_ADDRESS = struct.Struct("<HHBBH")  # len exttype proto prefixlen reserved


def extensions(message: bytes) -> list[tuple[int, bytes]]:
    """(exttype, bytes) of each extension after the 16-byte header, in order."""
    out, offset = [], SADB_MSG.size
    while offset < len(message):
        words, exttype = EXT_HEADER.unpack_from(message, offset)
        out.append((exttype, message[offset : offset + words * 8]))
        offset += words * 8
    assert offset == len(message)
    return out


@pytest.fixture
def listening(clock):
    km = KeyManager(make_registry(), clock=clock)
    only(km, header(MsgType.REGISTER, SaType.ESP))
    return km


def _outbound_policy(km: KeyManager, priority: int) -> None:
    """setkey's ``spdadd SRC DST any -P out prio N ipsec esp/tunnel/SRC-DST/require``,
    typed as the message: X_POLICY with one IPsec request (len 2 words + 2 + addresses)."""
    tunnel = SockAddr.of(SRC).encode() + SockAddr.of(DST).encode()
    request = struct.pack("<HHBBHII", 16 + len(tunnel), 50, IPSEC_MODE_TUNNEL, 2, 0, 0, 0)
    body = request + tunnel
    policy = SADB_X_POLICY.pack(
        (SADB_X_POLICY.size + len(body)) // 8, SADB_X_EXT_POLICY, IPSEC_POLICY_IPSEC,
        IPSEC_DIR_OUTBOUND, 0, 0, priority,
    ) + body  # fmt: skip
    exts = address(SADB_EXT_ADDRESS_SRC, SRC).encode() + address(SADB_EXT_ADDRESS_DST, DST).encode()
    exts += policy
    head = SADB_MSG.pack(PF_KEY_V2, SADB_X_SPDADD, 0, 0, 2 + len(exts) // 8, 0, 1, 4242)
    (reply,) = [r for r in km.handle(head + exts) if r[1] == SADB_X_SPDADD]
    assert reply[2] == 0, f"SPDADD refused: errno {reply[2]}"


def test_acquire_is_pfkey_send_acquires(listening):
    """Header seq from the acquire sequence, pid 0; ADDRESS_SRC, ADDRESS_DST (proto 0,
    full prefix), X_POLICY (IPSEC, out, the triggering policy's id and priority, no
    requests: 2 words), PROPOSAL."""
    km = listening
    _outbound_policy(km, priority=1234)
    (policy,) = list(km.spd)
    sent = [
        km.acquire(SaType.ESP, SRC, DST, policy)[0],
        km.acquire(SaType.ESP, SRC, DST, policy)[0],
    ]
    for number, message in enumerate(sent, start=1):
        version, kind, errno, satype, words, reserved, seq, pid = SADB_MSG.unpack_from(message)
        assert (version, kind, errno, satype, reserved, pid) == (
            PF_KEY_V2, SADB_ACQUIRE, 0, SADB_SATYPE_ESP, 0, 0,
        )  # fmt: skip
        assert words * 8 == len(message) and seq == number  # km.seq = get_acqseq()
        exts = extensions(message)
        assert [t for t, _ in exts] == [
            SADB_EXT_ADDRESS_SRC, SADB_EXT_ADDRESS_DST, SADB_X_EXT_POLICY, SADB_EXT_PROPOSAL,
        ]  # fmt: skip
        for _, ext in exts[:2]:
            _, _, proto, prefixlen, _ = SADB_ADDRESS.unpack_from(ext)
            assert (proto, prefixlen) == (0, 32)
        expected = SADB_X_POLICY.pack(
            2, SADB_X_EXT_POLICY, IPSEC_POLICY_IPSEC, IPSEC_DIR_OUTBOUND, 0, policy.index, 1234
        )
        assert exts[2][1] == expected
        assert policy.index & 7 == 1  # an outbound index (xfrm_gen_index: dir 1)


def test_acquire_without_a_policy_has_none(listening):
    message = listening.acquire(SaType.ESP, SRC, DST)[0]
    assert SADB_X_EXT_POLICY not in [t for t, _ in extensions(message)]


@pytest.mark.parametrize(
    ("limits", "which"),
    [({"soft": (0, 1000, 0, 0), "hard": (0, 5000, 0, 0)}, SADB_EXT_LIFETIME_SOFT),
     ({"hard": (0, 1000, 0, 0)}, SADB_EXT_LIFETIME_HARD)],
    ids=["soft", "hard"],
)  # fmt: skip
def test_expire_is_key_notify_sa_expires(listening, limits, which):
    """Header seq 0, pid 0; SA, the lifetime reached (hsc: soft or hard, the SA's limit),
    the current lifetime, ADDRESS_SRC, ADDRESS_DST, X_SA2 (mode, reqid, sequence 0), in
    ``__pfkey_xfrm_state2msg``'s order, with no keys."""
    km = listening
    km.handle(sa_message(0x1001, sa2=(IPSEC_MODE_TUNNEL, 77), **limits))
    (message,) = km.account(SaType.ESP, DST, 0x1001, nbytes=1000, allocations=3)
    version, kind, errno, satype, words, reserved, seq, pid = SADB_MSG.unpack_from(message)
    assert words * 8 == len(message)
    assert (version, kind, errno, satype, reserved, seq, pid) == (
        PF_KEY_V2, SADB_EXPIRE, 0, SADB_SATYPE_ESP, 0, 0, 0,
    )  # fmt: skip
    exts = extensions(message)
    assert [t for t, _ in exts] == [
        SADB_EXT_SA, which, SADB_EXT_LIFETIME_CURRENT, SADB_EXT_ADDRESS_SRC,
        SADB_EXT_ADDRESS_DST, SADB_X_EXT_SA2,
    ]  # fmt: skip
    _, _, allocations, nbytes, _, _ = struct.unpack_from("<HHIQQQ", exts[2][1])
    assert (allocations, nbytes) == (3, 1000)
    assert exts[-1][1] == SADB_X_SA2.pack(2, SADB_X_EXT_SA2, IPSEC_MODE_TUNNEL, 0, 0, 0, 77)
