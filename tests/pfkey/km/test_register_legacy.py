"""Issue 11 point 9: REGISTER lists 3DES, CAST, Blowfish, Camellia and HMAC-RIPEMD-160 as
Linux does (``net/xfrm/xfrm_algo.c``: their ``sadb_alg_id`` and key bits; the IV of
Camellia-CBC is its 16-byte block, RFC 4312, where Linux says 8), SAs with them are kept,
and setkey parses them by ipsec-tools' names. Twofish, which no well-kept Python library
implements, is not listed."""

import errno

import pytest

from cryptoapi import Registry
from cryptoapi.pfkey import AlgDesc, ExtType, KeyManager, MsgType, SaType, Supported
from cryptoapi.pfkey.setkey import LocalTransport, SetkeyError, apply, parse
from cryptoapi.pfkey.setkey.show import sa_dict
from tests.pfkey.conftest import header, only, refused, sa_message

LINUX_ENCRYPT = {  # xfrm_algo.c ealg_list: sadb_alg_id, ivlen, minbits, maxbits
    3: AlgDesc(3, 8, 192, 192),  # cbc(des3_ede), SADB_EALG_3DESCBC
    6: AlgDesc(6, 8, 40, 128),  # cbc(cast5), SADB_X_EALG_CASTCBC
    7: AlgDesc(7, 8, 40, 448),  # cbc(blowfish), SADB_X_EALG_BLOWFISHCBC
    22: AlgDesc(22, 16, 128, 256),  # cbc(camellia), SADB_X_EALG_CAMELLIACBC (Linux: ivlen 8)
}
RIPEMD160_HMAC = AlgDesc(8, 0, 160, 160)  # aalg_list hmac(rmd160), SADB_X_AALG_RIPEMD160HMAC


@pytest.fixture(scope="module")
def registry():
    return Registry(selftests="lazy")  # the real implementations, each KAT-tested on use


@pytest.fixture
def km(registry, clock):
    return KeyManager(registry, clock=clock)


def test_register_lists_them_with_linuxs_numbers_and_key_bits(km):
    reply = only(km, header(MsgType.REGISTER, SaType.ESP))
    auth = reply.get(ExtType.SUPPORTED_AUTH, Supported).algs
    encrypt = reply.get(ExtType.SUPPORTED_ENCRYPT, Supported).algs
    assert RIPEMD160_HMAC in auth
    assert set(LINUX_ENCRYPT.values()) <= set(encrypt)
    ids = [a.id for a in encrypt]
    # ealg_list's order: null, 3des, cast5, blowfish, aes, camellia, then rfc3686(ctr(aes))
    assert ids[: ids.index(13)] == [11, 3, 6, 7, 12, 22]
    assert [a.id for a in auth].index(8) == [a.id for a in auth].index(7) + 1
    assert 253 not in ids and 252 not in ids  # no Twofish, no Serpent


def test_ah_registers_hmac_ripemd160_too(km):
    reply = only(km, header(MsgType.REGISTER, SaType.AH))
    assert RIPEMD160_HMAC in reply.get(ExtType.SUPPORTED_AUTH, Supported).algs


@pytest.mark.parametrize(
    ("encrypt", "key_bytes"),
    [(3, 24), (6, 5), (6, 16), (7, 5), (7, 16), (7, 56), (22, 16), (22, 24), (22, 32)],
)
def test_an_sa_with_each_is_added(km, encrypt, key_bytes):
    message = sa_message(0x500, encrypt=encrypt, enc_key=bytes(range(1, key_bytes + 1)))
    assert only(km, message).errno == 0
    reply = only(km, sa_message(0x501, auth=8, auth_key=bytes(20), encrypt=encrypt,
                                enc_key=bytes(range(7, 7 + key_bytes))))  # fmt: skip
    assert reply.errno == 0


@pytest.mark.parametrize(
    ("encrypt", "key_bytes"),
    [(3, 16), (3, 32), (6, 4), (6, 17), (7, 4), (7, 57), (22, 20), (22, 40)],
)
def test_key_lengths_outside_linuxs_are_refused(km, encrypt, key_bytes):
    refused(km, sa_message(0x600, encrypt=encrypt, enc_key=bytes(key_bytes)), errno.EINVAL)


def test_an_hmac_ripemd160_key_must_be_160_bits(km):
    refused(km, sa_message(0x700, auth=8, auth_key=bytes(16)), errno.EINVAL)


KEYS = {"3des-cbc": 24, "cast128-cbc": 16, "blowfish-cbc": 56, "camellia-cbc": 32}


@pytest.mark.parametrize("name", sorted(KEYS))
def test_setkey_parses_and_adds_them_by_ipsec_tools_names(km, name):
    key = "0x" + "5a" * KEYS[name]
    text = f"add 10.0.0.1 10.0.0.2 esp 0x1234 -E {name} {key} -A hmac-ripemd160 0x{'33' * 20};"
    (outcome,) = apply(parse(text, "t.conf"), LocalTransport(km))
    assert outcome.ok, outcome.describe_errors()
    (dumped,) = apply(parse("get 10.0.0.1 10.0.0.2 esp 0x1234;", "t.conf"), LocalTransport(km))
    shown = sa_dict(dumped.replies[0])
    assert (shown["encrypt"], shown["auth"]) == (name, "hmac-ripemd160")
    assert (shown["encrypt_key_bits"], shown["auth_key_bits"]) == (8 * KEYS[name], 160)


def test_twofish_is_still_refused_by_name():
    with pytest.raises(SetkeyError, match="twofish-cbc is not offered"):
        parse(f"add 10.0.0.1 10.0.0.2 esp 0x1234 -E twofish-cbc 0x{'00' * 16};", "t.conf")
