"""The key manager's ADD and GET (RFC 2367 §3.1.3, §3.1.5): the SA database, algorithm
and key checks, each refusal's errno."""

import dataclasses
import errno
import ipaddress

import pytest

import cryptoapi
from cryptoapi.pfkey import (
    ExtType,
    Identity,
    Key,
    KeyManager,
    Lifetime,
    Message,
    MsgType,
    NatTPort,
    NatTType,
    Sa,
    SaState,
    SaType,
    SecurityAssociation,
    decode,
)
from cryptoapi.pfkey.km.local import LocalClient
from tests.pfkey.conftest import (
    AUTH_KEY,
    DST,
    ENC_KEY,
    SRC,
    address,
    getspi,
    lookup_message,
    make_registry,
    only,
    refused,
    sa_message,
    standin,
)

# -- ADD and GET -----------------------------------------------------------------------


def test_add_replies_without_keys_and_get_returns_them(km):
    reply = only(km, sa_message(0x1001, seq=77, pid=99))
    assert (reply.type, reply.errno, reply.seq, reply.pid) == (MsgType.ADD, 0, 77, 99)
    assert reply.get(ExtType.SA, Sa) == Sa(0x1001, 32, SaState.MATURE, 5, 12, 0)
    assert reply.get(ExtType.KEY_AUTH, Key) is None
    assert reply.get(ExtType.KEY_ENCRYPT, Key) is None
    assert len(km.sad) == 1

    got = only(km, lookup_message(MsgType.GET, 0x1001, seq=78))
    assert (got.type, got.errno, got.seq) == (MsgType.GET, 0, 78)
    assert got.get(ExtType.KEY_AUTH, Key) == Key(ExtType.KEY_AUTH, 256, AUTH_KEY)
    assert got.get(ExtType.KEY_ENCRYPT, Key) == Key(ExtType.KEY_ENCRYPT, 128, ENC_KEY)
    current = got.get(ExtType.LIFETIME_CURRENT, Lifetime)
    assert current is not None and current.addtime == int(km.clock())


def test_the_database_is_indexed_by_type_destination_and_spi(km):
    km.handle(sa_message(0x1001))
    km.handle(sa_message(0x1001, satype=SaType.AH, encrypt=0, enc_key=None))
    km.handle(sa_message(0x1001, dst="10.9.9.9"))
    km.handle(sa_message(0x1001, src="2001:db8::1", dst="2001:db8::2"))
    assert len(km.sad) == 4
    sa = km.sad.get(SaType.ESP, DST, 0x1001)
    assert sa is not None and (sa.auth, sa.encrypt, str(sa.source)) == (5, 12, SRC)
    assert km.sad.get(SaType.AH, ipaddress.ip_address(DST), 0x1001).encrypt == 0
    assert (SaType.ESP, "2001:db8::2", 0x1001) in km.sad
    assert km.sad[(SaType.ESP, "10.9.9.9", 0x1001)].spi == 0x1001
    assert km.sad.get(SaType.ESP, DST, 0x1002) is None
    assert "keys=<hidden>" in repr(sa) and AUTH_KEY.hex() not in repr(sa)


def test_nat_t_identities_and_proxy_are_kept_and_shown_again(km):

    kept = (
        address(ExtType.ADDRESS_PROXY, "10.5.0.0"),
        Identity(ExtType.IDENTITY_SRC, 2, 0, b"gw.example"),
        NatTType(2),
        NatTPort(ExtType.X_NAT_T_SPORT, 4500),
        NatTPort(ExtType.X_NAT_T_DPORT, 4500),
    )
    assert only(km, sa_message(0x100, extra=kept)).errno == 0
    sa = km.sad.get(SaType.ESP, DST, 0x100)
    assert sa.extensions() == kept
    assert (str(sa.source), str(sa.destination), sa.keys[0].key) == (SRC, DST, AUTH_KEY)
    got = only(km, lookup_message(MsgType.GET, 0x100))
    assert got.extensions[-len(kept) :] == kept
    assert got.get(ExtType.X_NAT_T_SPORT, NatTPort).port == 4500


def test_an_add_builds_the_record_the_keyword_constructor_would(km, clock):
    """admit fills SecurityAssociation.unfilled() by name (the per-add fast path): slot for
    slot, the SA equals the one the keyword constructor makes of the message's values."""
    kept = (address(ExtType.ADDRESS_PROXY, "10.5.0.0"), NatTType(2))
    hard, soft = (0, 0, 900, 0), (0, 0, 600, 0)
    message = sa_message(0x100, seq=7, replay=64, hard=hard, soft=soft, sa2=(2, 9), extra=kept)
    assert only(km, message).errno == 0
    expected = SecurityAssociation(
        satype=SaType.ESP, spi=0x100, dst=ipaddress.ip_address(DST).packed,
        state=SaState.MATURE, replay=64, auth=5, encrypt=12, flags=0,
        auth_key=AUTH_KEY, auth_bits=256, encrypt_key=ENC_KEY, encrypt_bits=128,
        mode=2, reqid=9, src_ext=address(5, SRC).encode(), dst_ext=address(6, DST).encode(),
        hard=Lifetime(ExtType.LIFETIME_HARD, *hard), soft=Lifetime(ExtType.LIFETIME_SOFT, *soft),
        extra=b"".join(e.encode() for e in kept), added=clock(), seq=7,
    )  # fmt: skip
    added = km.sad.get(SaType.ESP, DST, 0x100)
    slots = SecurityAssociation.__slots__
    assert [getattr(added, f) for f in slots] == [getattr(expected, f) for f in slots]


def test_an_unfilled_record_has_the_keyword_defaults_and_nothing_else():
    blank = SecurityAssociation.unfilled()
    fields = dataclasses.fields(SecurityAssociation)
    defaults = {f.name: f.default for f in fields if f.default is not dataclasses.MISSING}
    assert {name: getattr(blank, name) for name in defaults} == defaults
    assert [f.name for f in fields if hasattr(blank, f.name)] == list(defaults)


def test_add_of_an_existing_sa_is_eexist(km):
    km.handle(sa_message(0x1001))
    refused(km, sa_message(0x1001, auth_key=bytes(32)), errno.EEXIST)


def test_aead_sas_work_and_the_replay_window_is_not_capped(km):
    key = bytes(range(36))  # AES-256 + 32-bit salt (RFC 4106 §8.1)
    assert only(km, sa_message(0x2001, auth=0, auth_key=None, encrypt=20, enc_key=key)).errno == 0
    assert (
        only(km, sa_message(0x2002, auth=0, auth_key=None, encrypt=14, enc_key=key[:19])).errno == 0
    )
    chacha = sa_message(0x2003, auth=0, auth_key=None, encrypt=28, enc_key=key, replay=255)
    assert only(km, chacha).errno == 0
    sa = km.sad.get(SaType.ESP, DST, 0x2003)
    assert (sa.replay, sa.encrypt_bits, sa.encrypt_key) == (255, 288, key)


EINVAL, ENOSYS = errno.EINVAL, errno.ENOSYS
NO_AUTH = {"auth": 0, "auth_key": None}
NO_ENC = {"encrypt": 0, "enc_key": None}
NULL_ENC = {"encrypt": 11, "enc_key": None}


@pytest.mark.parametrize(
    ("what", "message", "code"),
    [
        ("no SA extension", Message(3, 3, extensions=(address(5, SRC), address(6, DST))), EINVAL),
        ("no source", Message(3, 3, extensions=(Sa(0x100, 0, 1, 5, 12), address(6, DST))), EINVAL),
        ("families differ", sa_message(0x100, dst="2001:db8::1"), EINVAL),
        ("SA type RSVP", sa_message(0x100, satype=SaType.RSVP), EINVAL),
        ("SA type unspec", sa_message(0x100, satype=SaType.UNSPEC), EINVAL),
        ("SPI 0", sa_message(0), EINVAL),
        ("AH with encryption", sa_message(0x100, satype=SaType.AH), EINVAL),
        ("AH without auth", sa_message(0x100, satype=SaType.AH, **NO_AUTH, **NO_ENC), EINVAL),
        ("ESP without encryption", sa_message(0x100, encrypt=0, enc_key=None), EINVAL),
        ("ESP NULL and no auth", sa_message(0x100, **NO_AUTH, **NULL_ENC), EINVAL),
        ("ESP NULL and NULL auth", sa_message(0x100, auth=251, auth_key=None, **NULL_ENC), EINVAL),
        ("AEAD with auth", sa_message(0x100, encrypt=20, enc_key=bytes(20)), EINVAL),
        ("auth above SADB_AALG_MAX", sa_message(0x100, auth=252), EINVAL),
        ("HMAC-SHA-256 128-bit key", sa_message(0x100, auth_key=bytes(16)), EINVAL),
        ("HMAC-SHA1 256-bit key", sa_message(0x100, auth=3), EINVAL),
        ("AES 136-bit key", sa_message(0x100, enc_key=bytes(17)), EINVAL),
        ("GCM key, no salt", sa_message(0x100, **NO_AUTH, encrypt=18, enc_key=bytes(16)), EINVAL),
        ("missing auth key", sa_message(0x100, auth_key=None), EINVAL),
        ("missing encryption key", sa_message(0x100, enc_key=None), EINVAL),
        ("key for no algorithm", sa_message(0x100, auth=0, encrypt=20, enc_key=bytes(20)), EINVAL),
        ("NULL with a key", sa_message(0x100, encrypt=11, enc_key=bytes(8)), EINVAL),
        ("sa2 mode 9", sa_message(0x100, sa2=(9, 0)), EINVAL),
        ("Twofish: no library has it", sa_message(0x100, encrypt=253, enc_key=bytes(16)), ENOSYS),
        ("DES (not in the table)", sa_message(0x100, encrypt=2, enc_key=bytes(8)), ENOSYS),
    ],
)  # fmt: skip
def test_add_refusals(km, what, message, code):
    data = message if isinstance(message, bytes) else message.encode()
    refused(km, data, code)


ENCRYPTION_ONLY = {
    "aes-cbc, no auth": sa_message(0x300, **NO_AUTH),
    "aes-cbc, NULL auth": sa_message(0x300, auth=251, auth_key=None),
    "aes-ctr, no auth": sa_message(0x300, **NO_AUTH, encrypt=13, enc_key=bytes(20)),
    "3des-cbc, no auth": sa_message(0x300, **NO_AUTH, encrypt=3, enc_key=bytes(24)),
}
"""ESP with confidentiality and no integrity: refused unless the key manager opts in."""


@pytest.mark.parametrize("message", ENCRYPTION_ONLY.values(), ids=ENCRYPTION_ONLY)
def test_encryption_only_esp_is_einval_naming_the_problem_and_changes_nothing(km, message):
    km.handle(sa_message(0x1001))  # something for the refusal to leave alone
    client = LocalClient(km)  # its answer has the key manager's reason
    for _ in range(2):  # refused every time: a refusal is not remembered as admitted
        refused(km, message, errno.EINVAL)
        answer = client.request(decode(message))
        assert answer.errno == errno.EINVAL
        assert answer.reason.startswith("encryption-only ESP (")
        assert "RFC 8221" in answer.reason and "allow_unauthenticated=True" in answer.reason
    assert len(km.sad) == 1


def test_encryption_only_esp_is_refused_when_a_larval_sa_is_completed(km):
    spi = getspi(km, 0x5000, 0x5000).get(ExtType.SA, Sa).spi
    refused(km, sa_message(spi, type=MsgType.UPDATE, **NO_AUTH), errno.EINVAL)
    assert km.sad.get(SaType.ESP, DST, spi).state == SaState.LARVAL


@pytest.mark.parametrize("message", ENCRYPTION_ONLY.values(), ids=ENCRYPTION_ONLY)
def test_the_unsafe_opt_in_admits_encryption_only_esp(clock, message):
    km = KeyManager(make_registry(), clock=clock, allow_unauthenticated=True)
    assert only(km, message).errno == 0
    assert km.sad.get(SaType.ESP, DST, 0x300).auth in (0, 251)


@pytest.mark.parametrize(
    ("encrypt", "enc_key", "auth"),
    [
        (20, bytes(20), 0),  # AES-GCM-16
        (14, bytes(19), 0),  # AES-CCM-8
        (28, bytes(36), 0),  # ChaCha20-Poly1305
        (23, bytes(20), 0),  # AES-GMAC: integrity only
        (11, None, 5),  # NULL with HMAC-SHA-256
        (12, ENC_KEY, 5),  # AES-CBC with HMAC-SHA-256
        (13, bytes(20), 9),  # AES-CTR with AES-XCBC-MAC
    ],
)
def test_esp_with_integrity_stays_allowed_by_default(km, encrypt, enc_key, auth):
    auth_key = {0: None, 5: AUTH_KEY, 9: bytes(16)}[auth]
    message = sa_message(0x300, encrypt=encrypt, enc_key=enc_key, auth=auth, auth_key=auth_key)
    assert only(km, message).errno == 0


def test_null_algorithms_need_no_registry_and_no_key(km):
    assert only(km, sa_message(0x100, encrypt=11, enc_key=None)).errno == 0
    ah_null = sa_message(0x101, satype=SaType.AH, auth=251, auth_key=None, encrypt=0, enc_key=None)
    assert only(km, ah_null).errno == 0
    zero_bits = Key(ExtType.KEY_ENCRYPT, 0, b"")
    assert only(km, sa_message(0x102, encrypt=11, enc_key=None, extra=(zero_bits,))).errno == 0
    assert km.stats()["alg_probes"] == 1  # hmac(sha256) only


def test_algorithms_the_registry_lacks_are_enosys(clock):
    km = KeyManager(make_registry(names=("cbc(aes)",)), clock=clock)
    refused(
        km, sa_message(0x100, auth=0, auth_key=None, encrypt=20, enc_key=bytes(20)), errno.ENOSYS
    )
    refused(km, sa_message(0x101, auth=9, auth_key=bytes(16)), errno.ENOSYS)  # xcbc(aes)
    assert only(km, sa_message(0x102)).errno == 0


def test_key_sizes_are_limited_to_what_the_registry_takes(clock):
    registry = cryptoapi.Registry(selftests="off")

    registry.register(standin("cbc(aes)", cryptoapi.AlgType.SKCIPHER, 16, 16, 16))  # AES-128 only
    km = KeyManager(registry, clock=clock)
    assert only(km, sa_message(0x100, enc_key=bytes(16))).errno == 0
    reply = refused(km, sa_message(0x101, enc_key=bytes(24)), errno.EINVAL)
    assert reply.seq == 1
