"""The SPD in the key manager: SADB_X_SPDADD ... SPDDUMP kept and dumped as Linux's
af_key.c answers them, each refusal with its errno and the SPD unchanged."""

import errno

import pytest

from cryptoapi.pfkey import (
    Address,
    ExtType,
    IpsecRequest,
    Lifetime,
    Message,
    MsgType,
    Policy,
    SecCtx,
    decode,
)
from tests.pfkey.conftest import (
    DEFAULT_PRIORITY,
    ESP_TRANSPORT,
    TUNNEL,
    by_id,
    only,
    refused_spd,
    replies_of,
    spd,
)


def test_spdadd_keeps_the_policy_and_answers_as_linux(km):
    reply = only(km, spd(extra=(Lifetime(ExtType.LIFETIME_HARD, 0, 0, 100, 0),)))
    assert (reply.type, reply.errno, reply.satype, reply.seq, reply.pid) == (14, 0, 0, 11, 77)
    policy = reply.get(ExtType.X_POLICY, Policy)
    assert policy.id & 7 == 1  # outbound: Linux's index is 8k + (dir - 1)
    assert policy == Policy(2, 2, policy.id, DEFAULT_PRIORITY, (ESP_TRANSPORT,))
    src = reply.get(ExtType.ADDRESS_SRC, Address)
    assert (str(src.addr), src.prefixlen, src.proto) == ("10.0.0.0", 24, 255)
    assert reply.get(ExtType.LIFETIME_HARD, Lifetime).addtime == 100
    assert reply.get(ExtType.LIFETIME_SOFT, Lifetime) == Lifetime(ExtType.LIFETIME_SOFT)
    assert reply.get(ExtType.LIFETIME_CURRENT, Lifetime).addtime == int(km.clock())
    assert len(km.spd) == km.stats()["policies"] == 1


def test_spdadd_of_a_taken_selector_is_eexist_but_another_direction_is_not(km):
    only(km, spd())
    refused_spd(km, spd(ptype=0, requests=()), errno.EEXIST)
    assert only(km, spd(dir=1)).errno == 0
    assert only(km, spd(dir=3)).errno == 0
    assert only(km, spd(ctx=b"system_u:object_r:x\0")).errno == 0  # the context is selector
    assert only(km, spd(dplen=24)).errno == 0
    ids = [p.index for p in km.spd]
    assert len(set(ids)) == 5 and [i & 7 for i in ids] == [1, 0, 2, 1, 1]


def test_spdupdate_replaces_keeping_the_index_or_adds(km):
    first = only(km, spd()).get(ExtType.X_POLICY, Policy).id
    reply = only(km, spd(MsgType.X_SPDUPDATE, requests=(TUNNEL,), priority=5))
    assert reply.type == MsgType.X_SPDUPDATE
    assert reply.get(ExtType.X_POLICY, Policy) == Policy(2, 2, first, 5, (TUNNEL,))
    assert len(km.spd) == 1
    assert only(km, spd(MsgType.X_SPDUPDATE, dir=1)).errno == 0
    assert len(km.spd) == 2


def test_spddelete_by_selector_and_enoent(km):
    added = only(km, spd()).get(ExtType.X_POLICY, Policy)
    refused_spd(km, spd(MsgType.X_SPDDELETE, dir=1), errno.ENOENT)
    reply = only(km, spd(MsgType.X_SPDDELETE, ptype=0, requests=()))
    assert reply.type == MsgType.X_SPDDELETE
    assert reply.get(ExtType.X_POLICY, Policy) == added
    assert len(km.spd) == 0
    refused_spd(km, spd(MsgType.X_SPDDELETE), errno.ENOENT)


def test_spdget_and_spddelete2_by_id(km):
    added = only(km, spd()).get(ExtType.X_POLICY, Policy)
    got = only(km, by_id(MsgType.X_SPDGET, added.id))
    assert (got.type, got.seq, got.get(ExtType.X_POLICY, Policy)) == (16, 12, added)
    refused_spd(km, by_id(MsgType.X_SPDGET, added.id + 8), errno.ENOENT)
    refused_spd(km, by_id(MsgType.X_SPDGET, 8 | 5), errno.EINVAL)  # no direction 5
    refused_spd(km, Message(MsgType.X_SPDGET, 0, 1, 1).encode(), errno.EINVAL)
    deleted = only(km, by_id(MsgType.X_SPDDELETE2, added.id))
    assert deleted.type == MsgType.X_SPDDELETE2 and len(km.spd) == 0


def test_spddump_lists_newest_first_and_is_enoent_when_empty(km):
    """Linux pfkey_dump_sp: xfrm_policy_walk from the head of policy_all, where
    __xfrm_policy_link puts each new policy; seq count + 1, 0 on the last."""
    refused_spd(km, Message(MsgType.X_SPDDUMP, 0, 3, 9).encode(), errno.ENOENT)
    for plen in (8, 16, 24):
        only(km, spd(dplen=plen))
    dumped = replies_of(km, Message(MsgType.X_SPDDUMP, 0, 3, 9).encode())
    assert [(m.type, m.seq, m.pid) for m in dumped] == [(18, 1, 9), (18, 2, 9), (18, 0, 9)]
    prefixes = [m.get(ExtType.ADDRESS_DST, Address).prefixlen for m in dumped]
    assert prefixes == [24, 16, 8]


def test_spdflush_empties_the_spd_and_replies_with_the_header(km):
    only(km, spd())
    only(km, spd(dir=1))
    reply = only(km, Message(MsgType.X_SPDFLUSH, 0, 4, 9).encode())
    assert (reply.type, reply.errno, reply.seq, reply.extensions) == (19, 0, 4, ())
    assert len(km.spd) == 0
    only(km, spd())  # the selector is free again


def test_a_non_ipsec_policy_keeps_no_requests(km):
    reply = only(km, spd(ptype=0))
    assert reply.get(ExtType.X_POLICY, Policy).requests == ()


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (Message(MsgType.X_SPDADD).encode(), errno.EINVAL),
        (Message(MsgType.X_SPDADD, 0, 1, 1, 0, (Policy(),)).encode(), errno.EINVAL),
        (spd(dst="2001:db8::1", dplen=64), errno.EINVAL),
        (spd(ptype=3), errno.EINVAL),  # entrust: Linux's spdadd takes discard/none/ipsec
        (spd(dir=0), errno.EINVAL),
        (spd(dir=4), errno.EINVAL),
        (spd(requests=(IpsecRequest(17, 1, 2),)), errno.EINVAL),
        (spd(requests=(IpsecRequest(50, 0, 2),)), errno.EINVAL),
        (spd(requests=(IpsecRequest(50, 1, 7),)), errno.EINVAL),
        (spd(requests=(ESP_TRANSPORT,) * 7), errno.ELOOP),
        (spd(MsgType.X_SPDUPDATE, dir=5), errno.EINVAL),
        (spd(MsgType.X_SPDDELETE, dir=0), errno.EINVAL),
    ],
    ids=[
        "header-only", "no-addresses", "two-families", "entrust", "dir-0", "dir-4",
        "udp-request", "mode-0", "level-7", "seven-requests", "update-dir-5", "delete-dir-0",
    ],
)  # fmt: skip
def test_refusals_leave_the_spd_unchanged(km, data, code):
    only(km, spd(dir=1))
    refused_spd(km, data, code)


def test_the_codec_decodes_what_the_spd_sends(km):
    data = km.handle(spd(requests=(TUNNEL, ESP_TRANSPORT), ctx=b"ctx\0"))[0]
    assert decode(data).get(ExtType.X_SEC_CTX, SecCtx) == SecCtx(1, 1, b"ctx\0")
    assert "requests=2" in repr(next(iter(km.spd)))
