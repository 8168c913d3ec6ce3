"""Probing, REGISTER and ACQUIRE (RFC 2367 §3.1.6-7), and the rest of the manager."""

import errno
import random

import pytest

import cryptoapi
from cryptoapi.pfkey import (
    AlgDesc,
    Comb,
    ExtType,
    KeyManager,
    Message,
    MsgType,
    Proposal,
    Sa,
    SaType,
    Supported,
    decode,
)
from tests.pfkey.conftest import (
    DST,
    SRC,
    address,
    getspi,
    header,
    make_registry,
    only,
    refused,
    sa_message,
)

# -- probing ---------------------------------------------------------------------------


def test_probing_happens_once_per_algorithm_and_only_when_needed(registry, clock):
    km = KeyManager(registry, clock=clock)
    assert km.stats()["alg_probes"] == 0 and registry.lookups == {}
    for spi in range(0x100, 0x200):
        km.handle(sa_message(spi))
    assert km.stats()["alg_probes"] == 2
    assert registry.lookups == {"hmac(sha256)": 1, "cbc(aes)": 1}
    km.handle(sa_message(0x300, auth=0, auth_key=None, encrypt=18, enc_key=bytes(20)))
    km.handle(sa_message(0x301, auth=0, auth_key=None, encrypt=20, enc_key=bytes(36)))
    assert registry.lookups["rfc4106(gcm(aes))"] == 1  # one name behind 18, 19, 20
    km.handle(header(MsgType.REGISTER))
    km.handle(header(MsgType.REGISTER, SaType.AH))
    assert all(count == 1 for count in registry.lookups.values())
    assert km.stats()["alg_probes"] == len(registry.lookups) == 17  # every name in the table


def test_the_default_registry_is_used_when_none_is_given():
    assert KeyManager().registry is cryptoapi.default_registry()


def test_reprobe_mode_looks_everything_up_on_every_add(registry, clock):
    km = KeyManager(registry, clock=clock, reprobe=True)
    for spi in range(0x100, 0x105):
        assert only(km, sa_message(spi)).errno == 0
    assert registry.lookups["hmac(sha256)"] == 5
    assert km.stats()["alg_probes"] == 5 * 17


# -- REGISTER, ACQUIRE, the rest -------------------------------------------------------


def test_register_lists_what_the_registry_offers(km):

    reply = only(km, header(MsgType.REGISTER, SaType.ESP, seq=4, pid=8))
    assert (reply.type, reply.errno, reply.seq, reply.pid) == (MsgType.REGISTER, 0, 4, 8)
    auth = reply.get(ExtType.SUPPORTED_AUTH, Supported)
    encrypt = reply.get(ExtType.SUPPORTED_ENCRYPT, Supported)
    assert [a.id for a in auth.algs] == [2, 3, 5, 6, 7, 8, 9, 251]
    assert AlgDesc(5, 0, 256, 256) in auth.algs and AlgDesc(9, 0, 128, 128) in auth.algs
    assert [a.id for a in encrypt.algs] == [11, 3, 6, 7, 12, 22, 13, 14, 15, 16, 18, 19, 20, 23, 28]
    assert AlgDesc(12, 16, 128, 256) in encrypt.algs
    assert AlgDesc(20, 8, 160, 288) in encrypt.algs
    assert AlgDesc(14, 8, 152, 280) in encrypt.algs
    assert AlgDesc(28, 8, 288, 288) in encrypt.algs
    assert km.registered == {SaType.ESP}
    ah = only(km, header(MsgType.REGISTER, SaType.AH))
    assert ah.get(ExtType.SUPPORTED_ENCRYPT, Supported) is None
    only(km, header(MsgType.REGISTER, SaType.UNSPEC))
    assert km.registered == {SaType.ESP, SaType.AH}
    refused(km, header(MsgType.REGISTER, 10), errno.EINVAL)


def test_register_with_only_hashes_in_the_registry(clock):

    km = KeyManager(make_registry(names=(), legacy=False), clock=clock)
    reply = only(km, header(MsgType.REGISTER))
    auth = reply.get(ExtType.SUPPORTED_AUTH, Supported)
    assert [a.id for a in auth.algs] == [2, 3, 5, 6, 7, 8, 251]
    assert [a.id for a in reply.get(ExtType.SUPPORTED_ENCRYPT, Supported).algs] == [11]


@pytest.mark.parametrize("msgtype", [MsgType.X_SPDSETIDX, MsgType.X_MIGRATE])
def test_messages_not_handled_here_are_eopnotsupp(km, msgtype):
    refused(km, header(msgtype), errno.EOPNOTSUPP)


def test_acquire_from_the_kernel_side_and_the_key_managers_answer(km):

    assert km.acquire(SaType.ESP, SRC, DST) == []  # nobody listens
    km.handle(header(MsgType.REGISTER, SaType.ESP))
    (request,) = [decode(m) for m in km.acquire(SaType.ESP, SRC, DST)]
    assert (request.type, request.satype, request.pid) == (MsgType.ACQUIRE, SaType.ESP, 0)
    combs = request.get(ExtType.PROPOSAL, Proposal).combs
    assert {(c.auth, c.encrypt) for c in combs} >= {(5, 12), (0, 20), (0, 28)}
    assert km.stats()["acquires"] == 1
    failed = Message(MsgType.ACQUIRE, SaType.ESP, request.seq, 0, errno.ENOENT).encode()
    assert km.handle(failed) == []
    assert km.stats()["acquires"] == 0


def test_acquire_from_an_application_goes_to_the_listeners(km):

    exts = (address(5, SRC), address(6, DST), Proposal(0, (Comb(5, 12),)))
    ask = Message(MsgType.ACQUIRE, SaType.ESP, 51, 7, 0, exts).encode()
    refused(km, ask, errno.ESRCH)
    km.handle(header(MsgType.REGISTER, SaType.ESP))
    forwarded = only(km, ask)
    assert (forwarded.type, forwarded.seq, forwarded.extensions) == (MsgType.ACQUIRE, 51, exts)
    # the key manager's GETSPI for that request consumes it
    getspi(km, seq=51)
    assert km.stats()["acquires"] == 0
    refused(km, Message(MsgType.ACQUIRE, SaType.ESP, 1, 1, 0, exts[:2]).encode(), errno.EINVAL)


def test_stats(km):
    km.handle(sa_message(0x100))
    km.handle(sa_message(0x100))
    stats = km.stats()
    assert {k: stats[k] for k in ("alg_probes", "sas", "messages", "errors")} == {
        "alg_probes": 2,
        "sas": 1,
        "messages": 2,
        "errors": 1,
    }


def test_handle_takes_any_buffer(km):
    data = sa_message(0x100)
    assert only(km, bytearray(data)).errno == 0
    assert only(km, memoryview(sa_message(0x101))).errno == 0


def test_spis_from_a_seeded_rng_are_reproducible(registry, clock):
    def spis(seed):
        km = KeyManager(registry, clock=clock, rng=random.Random(seed))
        return [getspi(km).get(ExtType.SA, Sa).spi for _ in range(5)]

    assert spis(1) == spis(1) != spis(2)
