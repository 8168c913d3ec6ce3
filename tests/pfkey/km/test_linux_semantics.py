"""PF_KEY as Linux answers it (net/key/af_key.c, net/xfrm/xfrm_state.c, xfrm_policy.c),
for the clients written against it (issue 11, points 2 to 8). Each test names the Linux
function whose behaviour it checks."""

import dataclasses
import errno
import os
import shutil

import pytest

from cryptoapi.pfkey import (
    Address,
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
    Sa,
    Sa2,
    SaFlags,
    SaType,
    SockAddr,
    decode,
)
from cryptoapi.pfkey.daemon.store import StateStore
from cryptoapi.pfkey.db.statefind import select_sa
from tests.pfkey.conftest import (
    DST,
    SRC,
    address,
    by_id,
    dump_seqs,
    getspi,
    header,
    lookup_message,
    only,
    refused_spd,
    replies_of,
    sa_message,
    spd,
)

ENDS = (SockAddr.of("192.0.2.1"), SockAddr.of("192.0.2.2"))


def request(mode, level, reqid=0):
    tunnel = ENDS if mode == IpsecMode.TUNNEL else None
    return IpsecRequest(50, mode, level, reqid, tunnel)


def get(km, spi, satype=SaType.ESP):
    return only(km, lookup_message(MsgType.GET, spi, satype=satype))


def dumped_policies(km):
    return replies_of(km, Message(MsgType.X_SPDDUMP, 0, 3, 9).encode())


def levels(km):
    """(level, reqid) of each policy's first request, oldest first."""
    found = reversed([m.get(ExtType.X_POLICY, Policy) for m in dumped_policies(km)])
    return [(p.requests[0].level, p.requests[0].reqid) for p in found]


# -- 2. parse_ipsecrequest: no optional tunnel or BEET transform outbound -----------------


@pytest.mark.parametrize("mode", [IpsecMode.TUNNEL, IpsecMode.BEET])
def test_an_outbound_tunnel_or_beet_request_at_level_use_is_einval(km, mode):
    """parse_ipsecrequest: IPSEC_LEVEL_USE with XFRM_MODE_TUNNEL or XFRM_MODE_BEET and
    IPSEC_DIR_OUTBOUND is -EINVAL (xfrm_user.c validate_tmpl refuses the same)."""
    data = spd(dir=IpsecDir.OUTBOUND, requests=(request(mode, IpsecLevel.USE),))
    refused_spd(km, data, errno.EINVAL)
    update = spd(type=MsgType.X_SPDUPDATE, requests=(request(mode, IpsecLevel.USE),))
    refused_spd(km, update, errno.EINVAL)


@pytest.mark.parametrize(
    ("direction", "mode", "level"),
    [
        (IpsecDir.INBOUND, IpsecMode.TUNNEL, IpsecLevel.USE),
        (IpsecDir.FWD, IpsecMode.TUNNEL, IpsecLevel.USE),
        (IpsecDir.INBOUND, IpsecMode.BEET, IpsecLevel.USE),
        (IpsecDir.OUTBOUND, IpsecMode.TRANSPORT, IpsecLevel.USE),
        (IpsecDir.OUTBOUND, IpsecMode.TUNNEL, IpsecLevel.REQUIRE),
        (IpsecDir.OUTBOUND, IpsecMode.BEET, IpsecLevel.UNIQUE),
    ],
)
def test_the_other_use_requests_are_accepted(km, direction, mode, level):
    """parse_ipsecrequest refuses only the outbound optional tunnel/BEET combination."""
    assert only(km, spd(dir=direction, requests=(request(mode, level),))).errno == 0


def test_a_second_request_outbound_tunnel_use_refuses_the_whole_policy(km):
    transport = request(IpsecMode.TRANSPORT, IpsecLevel.REQUIRE)
    both = (transport, request(IpsecMode.TUNNEL, IpsecLevel.USE))
    refused_spd(km, spd(requests=both), errno.EINVAL)


def test_spddelete_reads_no_requests(km):
    """pfkey_spddelete finds the policy by selector alone (parse_ipsecrequests is not
    called), so a request SPDADD would refuse does not make it EINVAL."""
    only(km, spd())
    reply = only(km, spd(MsgType.X_SPDDELETE, requests=(request(2, IpsecLevel.USE),)))
    assert reply.errno == 0 and len(km.spd) == 0


# -- 3. pfkey_dump_sa / pfkey_dump_sp: newest first, seq 1 .. n-1, then 0 ---------------


def test_dump_lists_newest_first_with_linux_seq(km):
    """pfkey_dump_sa walks xfrm_state_walk from the head of net->xfrm.state_all, where
    __xfrm_state_insert list_add()s each new state; dump_sa sets count + 1 and
    pfkey_do_dump 0 on the last."""
    for spi in (0x301, 0x302, 0x303, 0x304):
        only(km, sa_message(spi))
    dumped = replies_of(km, header(MsgType.DUMP, SaType.ESP, seq=1, pid=5))
    assert [(m.get(ExtType.SA, Sa).spi, m.seq) for m in dumped] == [
        (0x304, 1), (0x303, 2), (0x302, 3), (0x301, 0),
    ]  # fmt: skip


def dumped_spis(km):
    return [m.get(ExtType.SA, Sa).spi for m in replies_of(km, header(MsgType.DUMP))]


def test_an_sa_a_getspi_made_is_the_newest_once_updated(km):
    """xfrm_state_update: when the state found is larval (XFRM_STATE_ACQ), the new state
    is __xfrm_state_insert()ed (at the head of state_all, which dumps walk) and the larval
    one deleted; an update of a valid state copies into it where it is."""
    larval = getspi(km).get(ExtType.SA, Sa).spi
    only(km, sa_message(0x301))
    only(km, sa_message(0x302))
    assert dumped_spis(km) == [0x302, 0x301, larval]
    only(km, sa_message(larval, type=MsgType.UPDATE))
    assert dumped_spis(km) == [larval, 0x302, 0x301]
    only(km, sa_message(0x301, type=MsgType.UPDATE, hard=(0, 0, 500, 0)))  # valid: in place
    assert dumped_spis(km) == [larval, 0x302, 0x301]


@pytest.mark.parametrize("commits", [(), ("getspi",), ("getspi", "adds")])
def test_the_updated_sa_is_the_newest_after_a_restart(km, registry, clock, where, commits):
    """The order of xfrm_state_update (above) survives a restart of a --state store,
    whether the GETSPI, the ADDs around it and the UPDATE share one commit or not; and so
    does an SA deleted and added again (xfrm_state_add inserts it anew) and one updated in
    place (a valid state: it keeps its place)."""
    path = os.path.join(where, "state.db")
    store = StateStore(path)
    store.attach(km)
    only(km, sa_message(0x300))
    only(km, sa_message(0x301))
    larval = getspi(km).get(ExtType.SA, Sa).spi
    if "getspi" in commits:
        store.commit()
    only(km, sa_message(0x302))
    if "adds" in commits:
        store.commit()
    only(km, sa_message(larval, type=MsgType.UPDATE))
    only(km, lookup_message(MsgType.DELETE, 0x300))
    only(km, sa_message(0x300))
    only(km, sa_message(0x301, type=MsgType.UPDATE, hard=(0, 0, 500, 0)))
    expected = [0x300, larval, 0x302, 0x301]
    assert dumped_spis(km) == expected
    store.commit()
    store.close()
    again, store = KeyManager(registry, clock=clock), StateStore(path)
    try:
        store.attach(again)
        assert dumped_spis(again) == expected
        assert again.handle(header(MsgType.DUMP)) == km.handle(header(MsgType.DUMP))
    finally:
        store.close()


def test_an_sa_updated_in_place_keeps_its_place_between_its_addresses(km, registry, clock, where):
    """xfrm_state_update copies into a valid state where it is, so it keeps its place on
    the bydst chain that xfrm_state_find walks; among SAs as good and as old (one add
    time), xfrm_state_find keeps the first found: the newest inserted. between() keeps
    the SAD's order through an in-place UPDATE, as a restart does, so the data path's
    choice (select_sa) changes with neither."""
    path = os.path.join(where, "state.db")
    store = StateStore(path)
    store.attach(km)
    only(km, sa_message(0x301))
    only(km, sa_message(0x302))  # the same clock: the same add time
    ends = (SockAddr.of(SRC).addr, SockAddr.of(DST).addr)
    request = IpsecRequest(50, IpsecMode.TRANSPORT, IpsecLevel.REQUIRE)

    def chosen(manager):
        between = [sa.spi for sa in manager.sad.between(SaType.ESP, *ends)]
        return between, select_sa(manager.sad, request, *ends).spi

    assert chosen(km) == ([0x301, 0x302], 0x302)  # the index is built now
    only(km, sa_message(0x301, type=MsgType.UPDATE, hard=(0, 0, 500, 0)))
    assert chosen(km) == ([0x301, 0x302], 0x302)
    store.commit()
    store.close()
    again, store = KeyManager(registry, clock=clock), StateStore(path)
    try:
        store.attach(again)
        assert chosen(again) == chosen(km)
    finally:
        store.close()


def test_an_sa_replaced_from_another_source_is_found_there(km):
    """replace() with a new source address (no handler does it: UPDATE refuses one)
    moves the SA to the other pair's list, in the SAD's order."""
    for spi in (0x301, 0x302, 0x303):
        only(km, sa_message(spi, src="10.0.0.9" if spi == 0x303 else SRC))
    dst = SockAddr.of(DST).addr
    pairs = {ip: SockAddr.of(ip).addr for ip in (SRC, "10.0.0.9")}
    assert [sa.spi for sa in km.sad.between(SaType.ESP, pairs[SRC], dst)] == [0x301, 0x302]
    first = km.sad.get(SaType.ESP, DST, 0x301)
    elsewhere = address(ExtType.ADDRESS_SRC, "10.0.0.9").encode()
    km.sad.replace(first, dataclasses.replace(first, src_ext=elsewhere))
    listed = {ip: [sa.spi for sa in km.sad.between(SaType.ESP, a, dst)] for ip, a in pairs.items()}
    assert listed == {SRC: [0x302], "10.0.0.9": [0x301, 0x303]}


def test_a_single_sa_dump_is_seq_zero(km):
    only(km, sa_message(0x301))
    assert [m.seq for m in replies_of(km, header(MsgType.DUMP, SaType.UNSPEC))] == [0]


def test_lazy_dumps_number_as_the_whole_ones(km):
    """handle_lazily (the daemon's DUMP) gives the same messages, built as taken."""
    for spi in range(0x301, 0x306):
        only(km, sa_message(spi))
    for plen in (8, 16, 24):
        only(km, spd(dplen=plen))
    for message, count in ((header(MsgType.DUMP, SaType.ESP), 5), (spd(MsgType.X_SPDDUMP), 3)):
        due, lazy = km.handle_lazily(message)
        assert due == [] and lazy is not None and len(lazy) == count
        taken = list(lazy)
        assert taken == km.handle(message)
        assert [decode(m).seq for m in taken] == dump_seqs(count)


def test_spddump_lists_newest_first_and_an_updated_policy_is_newest(km):
    """xfrm_policy_walk follows net->xfrm.policy_all, to whose head __xfrm_policy_link
    adds; SPDUPDATE (xfrm_policy_insert, excl 0) links the new policy and unlinks the old
    one, whose index it takes."""
    only(km, spd(dplen=8))
    first = only(km, spd(dplen=16)).get(ExtType.X_POLICY, Policy).id
    only(km, spd(dplen=24))
    only(km, spd(MsgType.X_SPDUPDATE, dplen=16, priority=7))
    dumped = dumped_policies(km)
    newest = dumped[0].get(ExtType.X_POLICY, Policy)
    assert (newest.priority, newest.id) == (7, first)
    assert [m.seq for m in dumped] == [1, 2, 0]


POLICY_STEPS = (
    ("add A", spd(dplen=8)),
    ("add B", spd(dplen=16)),
    ("add C", spd(dplen=24)),
    ("update A", spd(MsgType.X_SPDUPDATE, dplen=8, priority=5)),
    ("delete B", spd(MsgType.X_SPDDELETE, dplen=16)),
    ("add B again", spd(dplen=16)),
    ("update C", spd(MsgType.X_SPDUPDATE, dplen=24, priority=6)),
    ("add D", spd(dplen=12)),
)


def crash_image(path, directory):
    """The files ``kill -9`` would leave at ``path`` now (the database and its WAL; SQLite
    rebuilds the shared-memory index), copied whole into ``directory``."""
    os.mkdir(directory, 0o700)
    image = os.path.join(directory, os.path.basename(path))
    for suffix in ("", "-wal"):
        if os.path.exists(path + suffix):
            shutil.copy2(path + suffix, image + suffix)
    return image


@pytest.mark.parametrize(
    "commit_after",
    [
        (),  # every step in one commit
        ("add A", "add B", "add C", "update A", "delete B", "add B again", "update C"),
        ("add C",),  # the updates, the delete and the re-add in one commit after the adds
        ("delete B",),  # the re-add of B, the update of C and D in the commit after
        ("add A", "update A", "add B again"),
    ],
)
def test_spddump_order_survives_a_restart_at_every_commit(km, registry, clock, where, commit_after):
    """SPDDUMP walks net->xfrm.policy_all from its head (xfrm_policy_walk), where
    __xfrm_policy_link list_add()s every policy linked, an SPDUPDATE's new one included
    (xfrm_policy_insert): newest first. After a restart from the store at any commit point
    (the files kill -9 leaves), keyd dumps exactly what it dumped then, in that order."""
    path = os.path.join(where, "state.db")
    store = StateStore(path)
    store.attach(km)
    dump = Message(MsgType.X_SPDDUMP, 0, 3, 9).encode()
    images = []
    for name, message in POLICY_STEPS:
        assert only(km, message).errno == 0
        clock.advance(1)  # the order must not come from ``added`` alone
        if name in commit_after or name == POLICY_STEPS[-1][0]:
            store.commit()
            image = crash_image(path, os.path.join(where, f"image{len(images)}"))
            images.append((image, km.handle(dump)))
    store.close()
    final = [decode(m) for m in images[-1][1]]
    prefixes = [m.get(ExtType.ADDRESS_DST, Address).prefixlen for m in final]
    assert prefixes == [12, 24, 16, 8]  # D, C (updated), B (added again), A (updated)
    indexes = [m.get(ExtType.X_POLICY, Policy).id for m in final]
    assert indexes != sorted(indexes, reverse=True)  # not the order of the indexes
    for image, dumped in images:
        again, restored = KeyManager(registry, clock=clock), StateStore(image)
        try:
            restored.attach(again)
            assert again.handle(dump) == dumped
        finally:
            restored.close()


# -- 4. pfkey_msg2xfrm_state / __pfkey_xfrm_state2msg: only the flags Linux implements ----


def flagged(spi, flags, **fields):
    """sa_message(spi) with ``flags`` in its SA extension."""
    message = decode(sa_message(spi, **fields))
    exts = tuple(
        Sa(e.spi, e.replay, e.state, e.auth, e.encrypt, flags) if isinstance(e, Sa) else e
        for e in message.extensions
    )
    return Message(message.type, message.satype, message.seq, message.pid, 0, exts).encode()


def test_only_noecn_decap_dscp_and_nopmtudisc_are_kept(km):
    """pfkey_msg2xfrm_state maps SADB_SAFLAGS_NOECN, _DECAP_DSCP and _NOPMTUDISC into
    x->props.flags and nothing else; __pfkey_xfrm_state2msg sends back just those."""
    linux = SaFlags.NOECN | SaFlags.DECAP_DSCP | SaFlags.NOPMTUDISC
    only(km, flagged(0x301, 0x40))  # setkey's default (SADB_X_EXT_CYCSEQ)
    only(km, flagged(0x302, linux | SaFlags.PFS | 0x40))
    assert get(km, 0x301).get(ExtType.SA, Sa).flags == 0
    assert get(km, 0x302).get(ExtType.SA, Sa).flags == linux
    dumped = replies_of(km, header(MsgType.DUMP, SaType.ESP))
    assert [m.get(ExtType.SA, Sa).flags for m in dumped] == [linux, 0]


def test_the_esn_flag_stays(km):
    """This project's ESN (FreeBSD's flag; Linux's PF_KEY has none) is kept as before."""
    only(km, flagged(0x301, SaFlags.ESN | 0x40, replay=64))
    assert get(km, 0x301).get(ExtType.SA, Sa).flags == SaFlags.ESN


# -- 5. pfkey_mode_to_xfrm: any, or no sa2, is transport --------------------------------


@pytest.mark.parametrize("sa2", [None, (IpsecMode.ANY, 0)], ids=["no sa2", "mode any"])
def test_an_sa_without_a_mode_is_transport(km, sa2):
    """pfkey_msg2xfrm_state: without SADB_X_EXT_SA2 x->props.mode stays 0, which is
    XFRM_MODE_TRANSPORT; pfkey_mode_to_xfrm maps IPSEC_MODE_ANY to XFRM_MODE_TRANSPORT; the
    SA2 of __pfkey_xfrm_state2msg then says IPSEC_MODE_TRANSPORT."""
    only(km, sa_message(0x301, sa2=sa2))
    assert km.sad.get(SaType.ESP, DST, 0x301).mode == IpsecMode.TRANSPORT
    assert get(km, 0x301).get(ExtType.X_SA2, Sa2).mode == IpsecMode.TRANSPORT


def test_getspi_without_a_mode_is_transport(km):
    """pfkey_getspi: no sa2 is mode 0 (XFRM_MODE_TRANSPORT) for the larval state."""
    spi = getspi(km).get(ExtType.SA, Sa).spi
    assert km.sad.get(SaType.ESP, DST, spi).mode == IpsecMode.TRANSPORT


def test_tunnel_and_beet_stay(km):
    only(km, sa_message(0x301, sa2=(IpsecMode.TUNNEL, 3)))
    only(km, sa_message(0x302, sa2=(IpsecMode.BEET, 0)))
    assert get(km, 0x301).get(ExtType.X_SA2, Sa2) == Sa2(IpsecMode.TUNNEL, 3)
    assert get(km, 0x302).get(ExtType.X_SA2, Sa2).mode == IpsecMode.BEET


# -- 6. pfkey_xfrm_policy2msg: a template is require, unique or use ---------------------


def test_level_default_is_dumped_as_require(km):
    """pfkey_xfrm_policy2msg shows IPSEC_LEVEL_REQUIRE for a template neither optional
    (USE) nor with a reqid (UNIQUE): a DEFAULT request comes back as REQUIRE."""
    for dplen, level in ((8, IpsecLevel.DEFAULT), (16, IpsecLevel.REQUIRE), (24, IpsecLevel.USE)):
        only(km, spd(dplen=dplen, requests=(request(IpsecMode.TRANSPORT, level),)))
    only(km, spd(dplen=32, requests=(request(IpsecMode.TRANSPORT, IpsecLevel.UNIQUE, 9),)))
    assert levels(km) == [
        (IpsecLevel.REQUIRE, 0),
        (IpsecLevel.REQUIRE, 0),
        (IpsecLevel.USE, 0),
        (IpsecLevel.UNIQUE, 9),
    ]


# -- 7. gen_reqid: unique without a manual reqid gets one from 0x4000 up -----------------


def unique(dplen, reqid=0, type=MsgType.X_SPDADD):
    return spd(
        type, dplen=dplen, requests=(request(IpsecMode.TRANSPORT, IpsecLevel.UNIQUE, reqid),)
    )


def test_unique_without_a_reqid_gets_one_from_0x4000(km):
    """parse_ipsecrequest: a reqid above IPSEC_MANUAL_REQID_MAX (0x3fff) is replaced, and
    0 is given gen_reqid(), which counts up from IPSEC_MANUAL_REQID_MAX + 1 skipping the
    reqids policies use (check_reqid); a manual one up to 0x3fff is kept."""
    first = only(km, unique(8)).get(ExtType.X_POLICY, Policy).requests[0].reqid
    assert first == 0x4000
    only(km, unique(16, reqid=0x3FFF))
    only(km, unique(24, reqid=0x4000))  # above the manual range: replaced, not kept
    only(km, unique(32, reqid=0xFFFFFFFF))
    assert levels(km) == [(IpsecLevel.UNIQUE, r) for r in (0x4000, 0x3FFF, 0x4001, 0x4002)]


def test_gen_reqid_does_not_go_back_to_a_freed_reqid(km):
    """gen_reqid keeps its counter in a static: after 0x4000 comes 0x4001, even once the
    policy holding 0x4000 is gone."""
    only(km, unique(16))  # 0x4000
    only(km, spd(MsgType.X_SPDDELETE, dplen=16))
    only(km, unique(24))
    assert levels(km) == [(IpsecLevel.UNIQUE, 0x4001)]


def test_a_failed_spdadd_takes_no_reqid(km):
    only(km, unique(8))
    refused_spd(km, unique(8), errno.EEXIST)
    assert only(km, unique(16)).get(ExtType.X_POLICY, Policy).requests[0].reqid == 0x4001


def test_allocated_reqids_survive_a_restart_and_are_skipped_after_it(km, registry, clock, where):
    """A restored policy keeps its reqid; the new manager's counter starts again at
    0x4000, and gen_reqid skips it because check_reqid finds a policy using it."""
    path = os.path.join(where, "state.db")
    store = StateStore(path)
    store.attach(km)
    only(km, unique(8))
    store.commit()
    store.close()
    again, store = KeyManager(registry, clock=clock), StateStore(path)
    try:
        store.attach(again)
        assert levels(again) == [(IpsecLevel.UNIQUE, 0x4000)]
        assert only(again, unique(16)).get(ExtType.X_POLICY, Policy).requests[0].reqid == 0x4001
    finally:
        store.close()


# -- 8. __pfkey_xfrm_state2msg lifetimes; pfkey_xfrm_policy2msg refcount -----------------


def test_get_and_dump_always_carry_hard_soft_and_current_lifetimes(km, clock):
    """pfkey_xfrm_state2msg is __pfkey_xfrm_state2msg(x, 1, 3): hard and soft always, 0
    for no limit (_X2KEY(XFRM_INF)), and current."""
    only(km, sa_message(0x301))
    for message in (get(km, 0x301), *replies_of(km, header(MsgType.DUMP, SaType.ESP))):
        assert message.get(ExtType.LIFETIME_HARD, Lifetime) == Lifetime(ExtType.LIFETIME_HARD)
        assert message.get(ExtType.LIFETIME_SOFT, Lifetime) == Lifetime(ExtType.LIFETIME_SOFT)
        current = message.get(ExtType.LIFETIME_CURRENT, Lifetime)
        assert current is not None and current.addtime == int(clock())
    types = [e.exttype for e in get(km, 0x301).extensions]
    lifetimes = [ExtType.LIFETIME_HARD, ExtType.LIFETIME_SOFT, ExtType.LIFETIME_CURRENT]
    assert types[:4] == [ExtType.SA, *lifetimes]


def test_a_set_lifetime_is_sent_as_it_is(km):
    only(km, sa_message(0x301, hard=(0, 0, 600, 0)))
    assert get(km, 0x301).get(ExtType.LIFETIME_HARD, Lifetime).addtime == 600


def test_spd_messages_carry_the_policy_refcount(km):
    """pfkey_xfrm_policy2msg puts refcount_read(&xp->refcnt) in sadb_msg_reserved: a
    policy at rest holds the SPD's reference (__xfrm_policy_link) alone, so a dump says 1;
    the SPDADD and SPDGET replies are built while the handler holds one more."""
    added = only(km, spd())
    assert added.reserved == 2
    assert [m.reserved for m in dumped_policies(km)] == [1]
    index = added.get(ExtType.X_POLICY, Policy).id
    assert only(km, by_id(MsgType.X_SPDGET, index)).reserved == 2
    assert only(km, by_id(MsgType.X_SPDDELETE2, index)).reserved == 1  # the handler's


def test_a_request_with_reserved_set_is_einval(km):
    """pfkey_get_base_msg: sadb_msg_reserved != 0 in a message sent to PF_KEY is -EINVAL,
    even though replies carry a refcount there."""
    data = bytearray(spd())
    data[6] = 1  # sadb_msg_reserved, the u16 after sadb_msg_len
    refused_spd(km, bytes(data), errno.EINVAL)


# -- kept as documented ------------------------------------------------------------------


def test_sa_flags_of_an_update_of_a_mature_sa_stay(km):
    only(km, flagged(0x301, SaFlags.NOECN))
    only(km, flagged(0x301, 0, type=MsgType.UPDATE))
    assert get(km, 0x301).get(ExtType.SA, Sa).flags == SaFlags.NOECN
