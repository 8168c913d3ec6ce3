"""The messages the key manager originates, byte by byte as Linux's net/key/af_key.c builds
them, one test per builder (named in its docstring):

- ACQUIRE (``pfkey_send_acquire``) and EXPIRE (``key_notify_sa_expire`` through
  ``__pfkey_xfrm_state2msg`` with ``hsc`` 1 or 2);
- the ADD, UPDATE and DELETE notifications (``key_notify_sa``: ``pfkey_xfrm_state2msg``,
  ``hsc`` 3), FLUSH's (``key_notify_sa_flush``), the reply to GETSPI (``pfkey_getspi``) and
  to REGISTER (``compose_sadb_supported``);
- the SPDADD, SPDUPDATE, SPDGET, SPDDELETE and SPDDELETE2 notifications and replies
  (``key_notify_policy`` and ``key_pol_get_resp`` through ``pfkey_xfrm_policy2msg``) and
  SPDFLUSH's (``key_notify_policy_flush``).

keyd does not send X_SPDEXPIRE (its policies' lifetimes are kept, never run: there is no
packet path in the key manager) and does not offer X_MIGRATE (EOPNOTSUPP).

Where keyd differs on purpose, the test says so: no keys in any notification (Linux
broadcasts them to every socket), notifications only to registered clients (Linux: all),
one FLUSH or SPDFLUSH reply to the sender (Linux: its ``unicast_flush_resp`` and then the
broadcast, two), an SA's addresses as its client sent them (Linux: protocol 0, full
prefix), no SUPPORTED_ENCRYPT for AH, and AEAD algorithms in REGISTER's list.

Every number here is typed from include/uapi/linux/pfkeyv2.h and ipsec.h, not taken from
the package's own constants, so a wrong constant there cannot hide."""

import struct

import pytest

from cryptoapi.pfkey import KeyManager, Message, MsgType, Sa2, SaType
from cryptoapi.pfkey.km.routing import Notice, Reply
from cryptoapi.pfkey.wire.sockaddr import SockAddr
from tests.pfkey.conftest import (
    DST,
    SRC,
    address,
    header,
    lookup_message,
    make_registry,
    only,
    sa_message,
)

PF_KEY_V2 = 2
SADB_GETSPI, SADB_UPDATE, SADB_ADD, SADB_DELETE = 1, 2, 3, 4
SADB_ACQUIRE, SADB_REGISTER, SADB_EXPIRE, SADB_FLUSH = 6, 7, 8, 9
SADB_X_SPDUPDATE, SADB_X_SPDADD, SADB_X_SPDDELETE, SADB_X_SPDGET = 13, 14, 15, 16
SADB_X_SPDFLUSH, SADB_X_SPDDELETE2, SADB_X_MIGRATE = 19, 22, 24
SADB_SATYPE_UNSPEC, SADB_SATYPE_AH, SADB_SATYPE_ESP = 0, 2, 3
SADB_SASTATE_LARVAL, SADB_SASTATE_MATURE, SADB_SASTATE_DYING = 0, 1, 2
SADB_EXT_SA, SADB_EXT_LIFETIME_CURRENT, SADB_EXT_LIFETIME_HARD = 1, 2, 3
SADB_EXT_LIFETIME_SOFT, SADB_EXT_ADDRESS_SRC, SADB_EXT_ADDRESS_DST = 4, 5, 6
SADB_EXT_KEY_AUTH, SADB_EXT_KEY_ENCRYPT = 8, 9
SADB_EXT_PROPOSAL, SADB_EXT_SUPPORTED_AUTH, SADB_EXT_SUPPORTED_ENCRYPT = 13, 14, 15
SADB_X_EXT_POLICY, SADB_X_EXT_SA2 = 18, 19
SADB_X_AALG_SHA2_256HMAC, SADB_X_EALG_AESCBC = 5, 12
IPSEC_POLICY_IPSEC, IPSEC_DIR_OUTBOUND, IPSEC_MODE_TUNNEL = 2, 2, 2
IPSEC_LEVEL_REQUIRE, IPSEC_PROTO_ANY, IPPROTO_ESP = 2, 255, 50
EOPNOTSUPP = 95
SADB_MSG = struct.Struct("<BBBBHHII")  # version type errno satype len reserved seq pid
EXT_HEADER = struct.Struct("<HH")  # len (64-bit words), exttype
SADB_SA = struct.Struct("<HH4sBBBBI")  # len exttype spi (network order) replay state auth
# encrypt flags
SADB_LIFETIME = struct.Struct("<HHIQQQ")  # len exttype allocations bytes addtime usetime
SADB_X_POLICY = struct.Struct("<HHHBBII")  # len exttype type dir reserved id priority
SADB_X_IPSECREQUEST = struct.Struct("<HHBBHII")  # len proto mode level reserved1 reqid reserved2
SADB_X_SA2 = struct.Struct("<HHBBHII")  # len exttype mode reserved1 reserved2 sequence reqid
SADB_ADDRESS = struct.Struct("<HHBBH")  # len exttype proto prefixlen reserved
SADB_SUPPORTED = struct.Struct("<HHI")  # len exttype reserved
SADB_ALG = struct.Struct("<BBHHH")  # id ivlen minbits maxbits reserved
XFRM_ACQ_EXPIRES = 30  # seconds: the hard add lifetime of the state GETSPI makes
NOW = 1_000_000  # the clock fixture's time


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


def _spd_message(type_: int, priority: int, seq: int = 1) -> bytes:
    """setkey's ``spdadd SRC DST any -P out prio N ipsec esp/tunnel/SRC-DST/require`` (or
    its spdupdate, spddelete), typed as the message: X_POLICY with one IPsec request (len 2
    words + 2 + addresses)."""
    tunnel = SockAddr.of(SRC).encode() + SockAddr.of(DST).encode()
    request = SADB_X_IPSECREQUEST.pack(
        16 + len(tunnel), IPPROTO_ESP, IPSEC_MODE_TUNNEL, IPSEC_LEVEL_REQUIRE, 0, 0, 0
    )
    body = request + tunnel
    policy = SADB_X_POLICY.pack(
        (SADB_X_POLICY.size + len(body)) // 8, SADB_X_EXT_POLICY, IPSEC_POLICY_IPSEC,
        IPSEC_DIR_OUTBOUND, 0, 0, priority,
    ) + body  # fmt: skip
    exts = address(SADB_EXT_ADDRESS_SRC, SRC).encode() + address(SADB_EXT_ADDRESS_DST, DST).encode()
    exts += policy
    return SADB_MSG.pack(PF_KEY_V2, type_, 0, 0, 2 + len(exts) // 8, 0, seq, 4242) + exts


def _outbound_policy(km: KeyManager, priority: int) -> None:
    """Add the policy of :func:`_spd_message`."""
    (reply,) = [
        r for r in km.handle(_spd_message(SADB_X_SPDADD, priority)) if r[1] == SADB_X_SPDADD
    ]
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
    """Header seq 0, pid 0; SA (DYING, soft or hard: the hard one is XFRM_STATE_DEAD,
    shown as dying), the lifetime reached (hsc: soft or hard, the SA's limit), the current
    lifetime, ADDRESS_SRC, ADDRESS_DST, X_SA2 (mode, reqid, sequence 0), in
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
    assert exts[0][1] == _sa(
        0x1001, 32, SADB_SASTATE_DYING, SADB_X_AALG_SHA2_256HMAC, SADB_X_EALG_AESCBC
    )
    _, _, allocations, nbytes, _, _ = SADB_LIFETIME.unpack(exts[2][1])
    assert (allocations, nbytes) == (3, 1000)
    assert exts[-1][1] == SADB_X_SA2.pack(2, SADB_X_EXT_SA2, IPSEC_MODE_TUNNEL, 0, 0, 0, 77)


# -- the SA and SPD messages the key manager builds (key_notify_sa, key_notify_policy, ...)


STATE_ORDER = [
    SADB_EXT_SA, SADB_EXT_LIFETIME_HARD, SADB_EXT_LIFETIME_SOFT, SADB_EXT_LIFETIME_CURRENT,
    SADB_EXT_ADDRESS_SRC, SADB_EXT_ADDRESS_DST, SADB_X_EXT_SA2,
]  # fmt: skip
"""``__pfkey_xfrm_state2msg`` with ``hsc`` 3 and no keys (KEY_AUTH, KEY_ENCRYPT would come
after the addresses; keyd leaves them out of every notification)."""
NO_LIMIT_SOFT = SADB_LIFETIME.pack(4, SADB_EXT_LIFETIME_SOFT, 0, 0, 0, 0)  # _X2KEY(XFRM_INF)
SA2_TUNNEL_77 = SADB_X_SA2.pack(2, SADB_X_EXT_SA2, IPSEC_MODE_TUNNEL, 0, 0, 0, 77)


@pytest.fixture
def clients(clock):
    """A key manager, a client registered for ESP (the listener) and one that is not."""
    km = KeyManager(make_registry(), clock=clock)
    listener, sender = km.connect(), km.connect()
    km.process(listener, header(MsgType.REGISTER, SaType.ESP))
    return km, listener, sender


def _sent(km: KeyManager, sender: int, data: bytes, *, heard: bool = True) -> bytes:
    """The one reply to ``data`` from ``sender``; the other client (id 1, registered) is sent
    the same bytes if ``heard`` (``pfkey_broadcast``), nothing otherwise (``BROADCAST_ONE``)."""
    events = km.process(sender, data)
    (reply,) = [e.data for e in events if isinstance(e, Reply)]
    notices = [e.data for e in events if isinstance(e, Notice) and 1 in e.to]
    assert notices == ([reply] if heard else [])
    return reply


def _fields(message: bytes) -> tuple[int, ...]:
    """version, type, errno, satype, reserved, seq, pid; ``sadb_msg_len`` checked."""
    version, kind, errno, satype, words, reserved, seq, pid = SADB_MSG.unpack_from(message)
    assert words * 8 == len(message)
    return version, kind, errno, satype, reserved, seq, pid


def _state_message(message: bytes, kind: int, seq: int) -> dict[int, bytes]:
    """The header ``key_notify_sa`` (and ``pfkey_getspi``) writes over the state message:
    version 2, the type, errno 0, satype ESP, reserved 0, the request's seq and pid; the
    extensions in ``__pfkey_xfrm_state2msg``'s order, returned by type."""
    assert _fields(message) == (PF_KEY_V2, kind, 0, SADB_SATYPE_ESP, 0, seq, 4242)
    exts = extensions(message)
    assert [t for t, _ in exts] == STATE_ORDER
    assert SADB_EXT_KEY_AUTH not in dict(exts) and SADB_EXT_KEY_ENCRYPT not in dict(exts)
    return dict(exts)


def _sa(spi: int, replay: int, state: int, auth: int, encrypt: int) -> bytes:
    return SADB_SA.pack(2, SADB_EXT_SA, spi.to_bytes(4, "big"), replay, state, auth, encrypt, 0)


def _added(km: KeyManager, sender: int, spi: int) -> bytes:
    add = sa_message(spi, seq=5, hard=(0, 5000, 3600, 0), sa2=(IPSEC_MODE_TUNNEL, 77))
    return _sent(km, sender, add)


def test_add_is_key_notify_sas_newsa(clients):
    """``pfkey_add`` -> ``km_state_notify`` (XFRM_MSG_NEWSA) -> ``key_notify_sa``: the
    state message (``pfkey_xfrm_state2msg``) for every listener and the sender, seq and pid
    of the request: SA (MATURE), the hard lifetime given, the soft one all zero (no limit),
    the current one (nothing used, added now), the addresses, SA2 (mode, reqid, sequence
    0). Linux sends the keys too, to every socket; keyd to none, registered clients only."""
    km, _, sender = clients
    exts = _state_message(_added(km, sender, 0x1001), SADB_ADD, 5)
    assert exts[SADB_EXT_SA] == _sa(
        0x1001, 32, SADB_SASTATE_MATURE, SADB_X_AALG_SHA2_256HMAC, SADB_X_EALG_AESCBC
    )
    assert exts[SADB_EXT_LIFETIME_HARD] == SADB_LIFETIME.pack(4, 3, 0, 5000, 3600, 0)
    assert exts[SADB_EXT_LIFETIME_SOFT] == NO_LIMIT_SOFT
    assert exts[SADB_EXT_LIFETIME_CURRENT] == SADB_LIFETIME.pack(4, 2, 0, 0, NOW, 0)
    assert exts[SADB_EXT_ADDRESS_SRC] == address(SADB_EXT_ADDRESS_SRC, SRC).encode()
    assert exts[SADB_EXT_ADDRESS_DST] == address(SADB_EXT_ADDRESS_DST, DST).encode()
    assert exts[SADB_X_EXT_SA2] == SA2_TUNNEL_77


def _getspi(seq: int) -> bytes:
    exts = (address(SADB_EXT_ADDRESS_SRC, SRC), address(SADB_EXT_ADDRESS_DST, DST),
            Sa2(IPSEC_MODE_TUNNEL, 77))  # fmt: skip
    return Message(MsgType.GETSPI, SaType.ESP, seq, 4242, 0, exts).encode()


def _spi(message: bytes) -> int:
    """The SPI of the SA extension, the first after the header."""
    return int.from_bytes(SADB_SA.unpack_from(message, SADB_MSG.size)[2], "big")


def test_getspi_is_pfkey_getspis(clients):
    """``pfkey_getspi``: ``pfkey_xfrm_state2msg`` of the ACQ state it made, for the sender
    only (``BROADCAST_ONE``): SA (the new SPI in 0x100-0x0fffffff, LARVAL, no algorithms,
    window 0), the hard lifetime ``__find_acq_core`` gives it (added + XFRM_ACQ_EXPIRES,
    30 s: how long it waits for its UPDATE), no soft limit, current (added now), addresses,
    SA2 with the mode and reqid asked for."""
    km, _, sender = clients
    reply = _sent(km, sender, _getspi(seq=7), heard=False)
    exts = _state_message(reply, SADB_GETSPI, 7)
    spi = _spi(reply)
    assert 0x100 <= spi <= 0x0FFFFFFF
    assert exts[SADB_EXT_SA] == _sa(spi, 0, SADB_SASTATE_LARVAL, 0, 0)
    hard = SADB_LIFETIME.pack(4, 3, 0, 0, XFRM_ACQ_EXPIRES, 0)
    assert exts[SADB_EXT_LIFETIME_HARD] == hard
    assert exts[SADB_EXT_LIFETIME_SOFT] == NO_LIMIT_SOFT
    assert exts[SADB_EXT_LIFETIME_CURRENT] == SADB_LIFETIME.pack(4, 2, 0, 0, NOW, 0)
    assert exts[SADB_X_EXT_SA2] == SA2_TUNNEL_77


def test_update_is_key_notify_sas_updsa(clients):
    """``pfkey_add`` with SADB_UPDATE -> ``key_notify_sa`` (XFRM_MSG_UPDSA): the LARVAL SA
    of a GETSPI, MATURE now, as ADD's notification with type UPDATE (Linux shows an UPDATE
    of an SA that was MATURE already as DYING, the state ``xfrm_state_update`` leaves the
    message's copy in; keyd shows the SA's state)."""
    km, _, sender = clients
    spi = _spi(_sent(km, sender, _getspi(seq=7), heard=False))
    update = sa_message(spi, type=MsgType.UPDATE, seq=8, sa2=(IPSEC_MODE_TUNNEL, 77))
    exts = _state_message(_sent(km, sender, update), SADB_UPDATE, 8)
    assert exts[SADB_EXT_SA] == _sa(
        spi, 32, SADB_SASTATE_MATURE, SADB_X_AALG_SHA2_256HMAC, SADB_X_EALG_AESCBC
    )
    assert exts[SADB_EXT_LIFETIME_HARD] == SADB_LIFETIME.pack(4, 3, 0, 0, 0, 0)
    assert exts[SADB_X_EXT_SA2] == SA2_TUNNEL_77


def test_delete_is_key_notify_sas_delsa(clients):
    """``pfkey_delete`` -> ``key_notify_sa`` (XFRM_MSG_DELSA): the whole state message, not
    RFC 2367's ``<base, SA, address(SD)>``; the SA DYING (``__xfrm_state_delete`` made it
    XFRM_STATE_DEAD, which ``__pfkey_xfrm_state2msg`` shows as SADB_SASTATE_DYING)."""
    km, _, sender = clients
    _added(km, sender, 0x1001)
    reply = _sent(km, sender, lookup_message(MsgType.DELETE, 0x1001, seq=9))
    exts = _state_message(reply, SADB_DELETE, 9)
    assert exts[SADB_EXT_SA] == _sa(
        0x1001, 32, SADB_SASTATE_DYING, SADB_X_AALG_SHA2_256HMAC, SADB_X_EALG_AESCBC
    )
    assert exts[SADB_EXT_LIFETIME_HARD] == SADB_LIFETIME.pack(4, 3, 0, 5000, 3600, 0)
    assert exts[SADB_X_EXT_SA2] == SA2_TUNNEL_77


@pytest.mark.parametrize("satype", [SADB_SATYPE_ESP, SADB_SATYPE_UNSPEC], ids=["esp", "all"])
def test_flush_is_key_notify_sa_flush(clients, satype):
    """``pfkey_flush`` -> ``key_notify_sa_flush``: the header alone (len 2), type FLUSH,
    satype ``pfkey_proto2satype`` of the flushed protocol (UNSPEC for all), errno 0,
    reserved 0, the request's seq and pid. Linux also sends the sender the copy of its own
    header ``unicast_flush_resp`` makes, before the broadcast; keyd answers once."""
    km, _, sender = clients
    _added(km, sender, 0x1001)
    flush = Message(MsgType.FLUSH, satype, 11, 4242).encode()
    reply = _sent(km, sender, flush)
    assert len(reply) == SADB_MSG.size
    assert _fields(reply) == (PF_KEY_V2, SADB_FLUSH, 0, satype, 0, 11, 4242)


def _supported(ext: bytes) -> list[bytes]:
    """The ``sadb_alg`` entries of a ``sadb_supported`` extension (its header checked)."""
    words, _, reserved = SADB_SUPPORTED.unpack_from(ext)
    assert words * 8 == len(ext) and reserved == 0
    algs = ext[SADB_SUPPORTED.size :]
    return [algs[i : i + SADB_ALG.size] for i in range(0, len(algs), SADB_ALG.size)]


@pytest.mark.parametrize(
    ("satype", "order"),
    [(SADB_SATYPE_ESP, [SADB_EXT_SUPPORTED_AUTH, SADB_EXT_SUPPORTED_ENCRYPT]),
     (SADB_SATYPE_AH, [SADB_EXT_SUPPORTED_AUTH])],
    ids=["esp", "ah"],
)  # fmt: skip
def test_register_is_compose_sadb_supporteds(clock, satype, order):
    """``pfkey_register`` -> ``compose_sadb_supported``: the request's header
    (``pfkey_hdr_dup``: type, satype, seq, pid), errno 0, then SUPPORTED_AUTH and
    SUPPORTED_ENCRYPT, each ``sadb_alg`` as ``xfrm_algo.c``'s ``.desc``; for every
    registered socket (``BROADCAST_REGISTERED``), the sender and the other listener, not an
    unregistered one. Unlike Linux: AH gets no SUPPORTED_ENCRYPT (RFC 2367 §3.1.7: AH
    has no encryption), the AEAD algorithms keyd takes are listed, and AES-CBC's ivlen is
    the 16 bytes RFC 3602 sends (Linux says 8; see ``pfkey.km.algorithms``)."""
    km = KeyManager(make_registry(), clock=clock)
    listener, _unregistered, sender = km.connect(), km.connect(), km.connect()
    km.process(listener, header(MsgType.REGISTER, SaType.ESP))
    events = km.process(sender, Message(MsgType.REGISTER, satype, 12, 4242).encode())
    (reply,) = [e.data for e in events if isinstance(e, Reply)]
    assert [e.to for e in events if isinstance(e, Notice)] == [(listener,)]
    assert _fields(reply) == (PF_KEY_V2, SADB_REGISTER, 0, satype, 0, 12, 4242)
    exts = extensions(reply)
    assert [t for t, _ in exts] == order
    auth = _supported(exts[0][1])
    assert SADB_ALG.pack(SADB_X_AALG_SHA2_256HMAC, 0, 256, 256, 0) in auth
    if satype == SADB_SATYPE_ESP:
        assert SADB_ALG.pack(SADB_X_EALG_AESCBC, 16, 128, 256, 0) in _supported(exts[1][1])


def _policy_message(kind: int, seq: int, index: int, refcnt: int) -> bytes:
    """``pfkey_xfrm_policy2msg`` of :func:`_spd_message`'s policy under the header
    ``key_notify_policy`` writes: satype 0, errno 0, the reference count in
    ``sadb_msg_reserved``; addresses with the selector's protocol (``pfkey_proto_from_xfrm``:
    any is 255), prefix and port; hard and soft lifetimes (no limits: 0), the current one
    (added now); the policy (type, dir, id, priority) and its request, whose level is
    REQUIRE (no reqid, not optional)."""
    exts = b""
    for exttype, ip in ((SADB_EXT_ADDRESS_SRC, SRC), (SADB_EXT_ADDRESS_DST, DST)):
        exts += SADB_ADDRESS.pack(3, exttype, IPSEC_PROTO_ANY, 32, 0) + SockAddr.of(ip).encode()
    exts += SADB_LIFETIME.pack(4, SADB_EXT_LIFETIME_HARD, 0, 0, 0, 0) + NO_LIMIT_SOFT
    exts += SADB_LIFETIME.pack(4, SADB_EXT_LIFETIME_CURRENT, 0, 0, NOW, 0)
    tunnel = SockAddr.of(SRC).encode() + SockAddr.of(DST).encode()
    request = SADB_X_IPSECREQUEST.pack(
        16 + len(tunnel), IPPROTO_ESP, IPSEC_MODE_TUNNEL, IPSEC_LEVEL_REQUIRE, 0, 0, 0
    )
    body = request + tunnel
    exts += SADB_X_POLICY.pack(
        (SADB_X_POLICY.size + len(body)) // 8, SADB_X_EXT_POLICY, IPSEC_POLICY_IPSEC,
        IPSEC_DIR_OUTBOUND, 0, index, 1234,
    ) + body  # fmt: skip
    return SADB_MSG.pack(PF_KEY_V2, kind, 0, 0, 2 + len(exts) // 8, refcnt, seq, 4242) + exts


def _by_id(kind: int, index: int) -> bytes:
    """SPDGET or SPDDELETE2: ``<base, policy>`` naming the policy by its id."""
    policy = SADB_X_POLICY.pack(2, SADB_X_EXT_POLICY, IPSEC_POLICY_IPSEC, IPSEC_DIR_OUTBOUND,
                                0, index, 0)  # fmt: skip
    return SADB_MSG.pack(PF_KEY_V2, kind, 0, 0, 2 + len(policy) // 8, 0, 6, 4242) + policy


@pytest.mark.parametrize(
    ("kind", "refcnt", "heard"),
    [(SADB_X_SPDADD, 2, True), (SADB_X_SPDUPDATE, 2, True), (SADB_X_SPDGET, 2, False),
     (SADB_X_SPDDELETE, 1, True), (SADB_X_SPDDELETE2, 1, True)],
    ids=["spdadd", "spdupdate", "spdget", "spddelete", "spddelete2"],
)  # fmt: skip
def test_spd_messages_are_key_notify_policys(clients, kind, refcnt, heard):
    """``pfkey_spdadd`` (XFRM_MSG_NEWPOLICY, UPDPOLICY), ``pfkey_spddelete`` (DELPOLICY)
    and ``pfkey_spdget`` with SPDDELETE2 (DELPOLICY ``byid``) -> ``key_notify_policy``, for
    every listener; SPDGET -> ``key_pol_get_resp``, for the sender only. Each is
    ``pfkey_xfrm_policy2msg`` (see :func:`_policy_message`), the request's seq and pid; the
    reference count is 2 while the handler holds the policy, 1 once it is out of the SPD
    (see ``pfkey.db.spd``). An SPDUPDATE keeps the replaced policy's id."""
    km, _, sender = clients
    if kind != SADB_X_SPDADD:
        _sent(km, sender, _spd_message(SADB_X_SPDADD, 1234, seq=1))
    index = next(iter(km.spd)).index if len(km.spd) else 8 | 1  # the first outbound id
    if kind in (SADB_X_SPDGET, SADB_X_SPDDELETE2):
        request = _by_id(kind, index)
    else:
        request = _spd_message(kind, 1234, seq=6)
    reply = _sent(km, sender, request, heard=heard)
    assert reply == _policy_message(kind, 6, index, refcnt)
    assert len(km.spd) == (0 if refcnt == 1 else 1)


def test_spdflush_is_key_notify_policy_flush(clients):
    """``pfkey_spdflush`` -> ``key_notify_policy_flush``: the header alone, type SPDFLUSH,
    satype UNSPEC, errno 0, reserved 0, the request's seq and pid, for every listener
    (Linux's sender gets ``unicast_flush_resp``'s copy of its header first; keyd answers
    once)."""
    km, _, sender = clients
    _sent(km, sender, _spd_message(SADB_X_SPDADD, 1234, seq=1))
    request = SADB_MSG.pack(PF_KEY_V2, SADB_X_SPDFLUSH, 0, 0, 2, 0, 13, 4242)
    reply = _sent(km, sender, request)
    assert len(reply) == SADB_MSG.size
    assert _fields(reply) == (PF_KEY_V2, SADB_X_SPDFLUSH, 0, SADB_SATYPE_UNSPEC, 0, 13, 4242)


def test_migrate_is_not_offered(clients):
    """keyd has no ``pfkey_migrate``: X_MIGRATE is answered with EOPNOTSUPP, as a Linux
    built without CONFIG_NET_KEY_MIGRATE answers it, and nobody else hears of it."""
    km, _, sender = clients
    request = SADB_MSG.pack(PF_KEY_V2, SADB_X_MIGRATE, 0, 0, 2, 0, 14, 4242)
    reply = _sent(km, sender, request, heard=False)
    assert _fields(reply) == (PF_KEY_V2, SADB_X_MIGRATE, EOPNOTSUPP, 0, 0, 14, 4242)
