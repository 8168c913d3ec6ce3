"""setkey statements applied to an in-process key manager: every statement type, refusals
reported with their position (the run goes on), and listings that hide keys."""

import errno

from cryptoapi.pfkey import ExtType, Key, KeyManager, MsgType, Policy, SaState, SaType
from cryptoapi.pfkey.setkey import LocalTransport, apply, parse
from cryptoapi.pfkey.setkey.show import format_reply, policy_dict, sa_dict
from tests.pfkey.conftest import make_registry

AES = "0x000102030405060708090a0b0c0d0e0f"
SHA256 = "0x" + "11" * 32
CONFIG = f"""
flush;
spdflush;
add 10.0.0.1 10.0.0.2 esp 0x1001 -m tunnel -u 7 -E aes-cbc {AES} -A hmac-sha256 {SHA256};
add 10.0.0.1 10.0.0.2 esp 0x1002 -E aes-gcm-16 0x{"22" * 20} -lh 3600;
add 10.0.0.1 10.0.0.3 esp 0x1003 -E aes-cbc {AES} -A hmac-sha256 {SHA256};
add 10.0.0.2 10.0.0.1 ah 0x1004 -A hmac-sha256 {SHA256};
getspi 10.0.0.1 10.0.0.2 esp 0x5000;
update 10.0.0.1 10.0.0.2 esp 0x5000 -E aes-cbc {AES} -A hmac-sha256 {SHA256};
spdadd 10.0.0.0/24 10.1.0.0/16 any -P out ipsec esp/tunnel/10.0.0.1-10.0.0.2/unique:7;
spdadd 10.1.0.0/16 10.0.0.0/24 any -P in ipsec esp/tunnel/10.0.0.2-10.0.0.1/require;
spdupdate 10.1.0.0/16 10.0.0.0/24 any -P in prio 5 ipsec esp/tunnel/10.0.0.2-10.0.0.1/use;
get 10.0.0.1 10.0.0.2 esp 0x1001;
dump esp;
spddump;
"""


def run(km, text):
    return apply(parse(text, "t.conf"), LocalTransport(km))


def test_a_whole_configuration(km):
    outcomes = run(km, CONFIG)
    assert all(o.ok for o in outcomes), [o.describe_errors() for o in outcomes]
    assert len(km.sad) == 5 and len(km.spd) == 2
    sa = km.sad.get(SaType.ESP, "10.0.0.2", 0x5000)
    assert sa.state == SaState.MATURE and sa.auth_key == bytes.fromhex("11" * 32)
    assert km.sad.get(SaType.ESP, "10.0.0.2", 0x1002).hard.addtime == 3600
    by = {o.statement.command: o for o in outcomes}
    (got,) = by["get"].replies
    assert got.get(ExtType.KEY_AUTH, Key).key == bytes.fromhex("11" * 32)
    assert {m.type for m in by["dump"].replies} == {MsgType.DUMP}
    assert len(by["dump"].replies) == 4  # esp only
    policies = [m.get(ExtType.X_POLICY, Policy) for m in by["spddump"].replies]
    assert [(p.dir, p.priority, p.requests[0].level) for p in policies] == [
        (1, 0x80000000 - 5, 1),  # the SPDUPDATE replaced it: the newest (Linux dumps first)
        (2, 0x80000000, 3),
    ]


def test_refusals_are_reported_with_their_position_and_the_run_goes_on(km):
    outcomes = run(
        km,
        f"add 10.0.0.1 10.0.0.2 esp 0x1001 -E aes-cbc {AES} -A hmac-sha256 {SHA256};\n"
        f"add 10.0.0.1 10.0.0.2 esp 0x1001 -E aes-cbc {AES} -A hmac-sha256 {SHA256};\n"
        "delete 10.0.0.1 10.0.0.2 esp 0x9999;\n"
        "spddelete 10.0.0.0/24 10.1.0.0/16 any -P out;\n"
        f"add 10.0.0.1 10.0.0.2 esp 0x1002 -E aes-cbc {AES} -A hmac-sha256 {SHA256};\n",
    )
    assert [o.ok for o in outcomes] == [True, False, False, False, True]
    reason = "an SA of type 3 with SPI 0x1001 exists (EEXIST)"  # the key manager's why
    assert outcomes[1].errors == [(errno.EEXIST, reason)]
    assert outcomes[1].describe_errors() == [f"t.conf:2:1: add: {reason}"]
    assert outcomes[2].errors[0][0] == errno.ESRCH
    assert outcomes[3].errors[0][0] == errno.ENOENT
    assert len(km.sad) == 2


def test_encryption_only_esp_is_refused_with_its_reason_unless_opted_in(km, clock):
    text = f"add 10.0.0.1 10.0.0.2 esp 0x1001 -E aes-cbc {AES};"
    (outcome,) = run(km, text)
    ((code, why),) = outcome.errors
    assert code == errno.EINVAL and len(km.sad) == 0
    assert why.startswith("encryption-only ESP (cbc(aes), no authentication")
    unsafe = KeyManager(make_registry(), clock=clock, allow_unauthenticated=True)
    assert run(unsafe, text)[0].ok and len(unsafe.sad) == 1


def test_an_algorithm_the_registry_lacks_is_enosys(clock):
    km = KeyManager(make_registry(names=()), clock=clock)  # no cbc(aes) in this registry
    text = f"add 10.0.0.1 10.0.0.2 esp 0x1001 -E aes-cbc {AES} -A hmac-sha256 {SHA256};"
    (outcome,) = run(km, text)
    assert outcome.errors[0][0] == errno.ENOSYS and len(km.sad) == 0


def test_deleteall_removes_the_sas_between_two_addresses_only(km):
    run(km, CONFIG)
    (outcome,) = run(km, "deleteall 10.0.0.1 10.0.0.2 esp;")
    assert outcome.ok
    assert {m.type for m in outcome.replies} == {MsgType.DELETE}
    left = sorted((sa.satype, str(sa.destination), sa.spi) for sa in km.sad)
    assert left == [(2, "10.0.0.1", 0x1004), (3, "10.0.0.3", 0x1003)]
    (outcome,) = run(km, "deleteall 10.0.0.9 10.0.0.8;")
    assert outcome.ok and outcome.replies == []


def test_empty_dumps_are_not_errors(km):
    dump, spddump = run(km, "dump; spddump;")
    assert (dump.ok, dump.replies, spddump.ok, spddump.replies) == (True, [], True, [])


def test_listings_hide_keys_unless_asked(km):
    by = {o.statement.command: o for o in run(km, CONFIG)}
    (got,) = by["get"].replies
    hidden = format_reply(got)
    assert "11" * 32 not in hidden and "<256-bit key hidden>" in hidden
    assert "hmac-sha256" in hidden and "aes-cbc" in hidden and "mode=tunnel" in hidden
    assert " ".join(["11111111"] * 8) in format_reply(got, show_keys=True)  # ipsec_hexdump
    assert "auth_key" not in sa_dict(got) and sa_dict(got)["auth_key_bits"] == 256
    assert sa_dict(got, show_keys=True)["auth_key"] == "11" * 32
    dumped = by["spddump"].replies  # the newest (the inbound one) first, as Linux dumps
    policy = policy_dict(dumped[1])
    assert policy["requests"] == ["esp/tunnel/10.0.0.1-10.0.0.2/unique:7"]
    assert (policy["src"], policy["dir"], policy["priority"]) == ("10.0.0.0/24[any]", "out", "def")
    shown = format_reply(dumped[0])
    assert "in prio def + 5 ipsec" in shown


def test_listed_policies_read_back_the_same(km):
    """What a dump shows for a policy is setkey syntax that parses to the same policy."""
    run(km, "spdadd 10.0.0.0/8 10.1.0.0/16[80] tcp -P fwd prio low - 9 ipsec "
            "ah/transport//unique:4 esp/tunnel/::1-::2/default;")  # fmt: skip
    (outcome,) = run(km, "spddump;")
    d = policy_dict(outcome.replies[0])
    text = (
        f"spdupdate {d['src'].replace('[any]', '')} {d['dst']} {d['upper']} -P {d['dir']} "
        f"prio {d['priority']} {d['action']} {' '.join(d['requests'])};"
    )
    (again,) = run(km, text)
    assert again.ok
    assert again.replies[0].get(ExtType.X_POLICY, Policy) == outcome.replies[0].get(
        ExtType.X_POLICY, Policy
    )
