"""PF_KEY refusals and messages in words: what an errno means for the message it answers
(ESRCH to a DELETE is "no such SA", not strerror's "No such process"), and one line naming
the SA a message is about."""

import errno

import pytest

from cryptoapi.pfkey import ExtType, KeyManager, Lifetime, Message, MsgType, SaType, decode
from cryptoapi.pfkey.errors import PfkeyError
from cryptoapi.pfkey.km.explain import describe, describe_data, refusal, sa_name
from tests.pfkey.conftest import sa_message


@pytest.mark.parametrize(
    ("kind", "code", "words"),
    [
        (MsgType.DELETE, errno.ESRCH, "no such SA (never added, or expired or deleted) (ESRCH)"),
        (MsgType.ADD, errno.EEXIST, "an SA with this SPI and destination exists already (EEXIST)"),
        (MsgType.X_SPDDELETE, errno.ENOENT, "no such policy (ENOENT)"),
        (MsgType.GETSPI, errno.EEXIST, "no free SPI is left in the range asked for (EEXIST)"),
        (MsgType.ADD, errno.ENOSYS, "an algorithm is unknown or not available (ENOSYS)"),
        (MsgType.ADD, errno.EIO, "Input/output error (EIO)"),  # nothing better: strerror
    ],
)
def test_refusals_in_words(kind, code, words):
    assert refusal(kind, code) == words
    assert "process" not in refusal(kind, code)


def test_the_key_manager_s_own_reason_wins():
    assert refusal(MsgType.DELETE, errno.ESRCH, "no SA of type 3 with SPI 0x9") == (
        "no SA of type 3 with SPI 0x9 (ESRCH)"
    )


def test_an_sa_is_named_by_type_spi_and_addresses():
    message = decode(sa_message(0x1001))
    assert sa_name(message) == "ESP SA SPI 0x1001 10.0.0.1 -> 10.0.0.2"
    assert describe(message) == "ADD of ESP SA SPI 0x1001 10.0.0.1 -> 10.0.0.2"


@pytest.mark.parametrize(
    ("exttype", "kind"), [(ExtType.LIFETIME_SOFT, "soft"), (ExtType.LIFETIME_HARD, "hard")]
)
def test_an_expire_says_soft_or_hard_and_what_the_sa_carried(exttype, kind):
    sa = decode(sa_message(0x1001))
    current = Lifetime(ExtType.LIFETIME_CURRENT, allocations=7, nbytes=700)
    expire = Message(
        MsgType.EXPIRE, sa.satype, 0, 0, 0,
        (*sa.extensions[:1], current, Lifetime(exttype, allocations=7), *sa.extensions[1:3]),
    )  # fmt: skip
    assert describe(decode(expire.encode())) == (
        f"{kind} EXPIRE of ESP SA SPI 0x1001 10.0.0.1 -> 10.0.0.2 after 700 bytes, 7 packets"
    )


def test_an_acquire_is_named_from_its_bytes_without_decoding_the_proposal():
    km = KeyManager()
    km.registered.add(SaType.ESP)
    (acquire,) = km.acquire(SaType.ESP, "192.0.2.1", "198.18.0.1")
    assert len(acquire) > 1000  # the proposal, which describe_data leaves alone
    assert describe_data(acquire) == "ACQUIRE: no ESP SA 192.0.2.1 -> 198.18.0.1 yet"
    with pytest.raises(PfkeyError):
        describe_data(acquire[:20])
