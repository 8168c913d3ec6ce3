"""What espd logs of keyd's SAs: each SA added, updated or deleted at info level, naming it
(SPI, addresses), and a refusal of the local key manager in words, not an errno."""

import logging

import pytest

from cryptoapi.esp.espd.mirror import Mirror
from cryptoapi.pfkey import ExtType, KeyManager, Message, MsgType, Sa, SaType, decode
from cryptoapi.pfkey.setkey import LocalTransport, apply, parse

GCM_KEY = "0x" + "11" * 20
SAS = f"""
add 192.0.2.1 192.0.2.2 esp 0x1001 -m tunnel -r 32 -E aes-gcm-16 {GCM_KEY};
add 192.0.2.2 192.0.2.1 esp 0x2002 -m tunnel -r 32 -E aes-gcm-16 {GCM_KEY};
"""
MIRROR = "cryptoapi.esp.espd.mirror"


def keyd_entries(text: str) -> list[bytes]:
    """The DUMP (with keys) of a key manager standing in for keyd, with ``text`` applied."""
    keyd = KeyManager()
    apply(parse(text), LocalTransport(keyd))
    return keyd.handle(Message(MsgType.DUMP, SaType.ESP).encode())


def logged(caplog: pytest.LogCaptureFixture) -> list[tuple[int, str]]:
    return [(r.levelno, r.getMessage()) for r in caplog.records if r.name == MIRROR]


def test_sas_added_and_deleted_from_keyd_are_logged_at_info(caplog):
    caplog.set_level(logging.INFO, MIRROR)
    entries = keyd_entries(SAS)
    mirror = Mirror(KeyManager())
    assert mirror.sync_sad(entries) == []
    assert sorted(logged(caplog)) == [
        (logging.INFO, "SA added (from the key daemon): ESP SA SPI 0x1001 192.0.2.1 -> 192.0.2.2"),
        (logging.INFO, "SA added (from the key daemon): ESP SA SPI 0x2002 192.0.2.2 -> 192.0.2.1"),
    ]
    caplog.clear()
    kept = [e for e in entries if decode(e).get(ExtType.SA, Sa).spi == 0x2002]
    assert mirror.sync_sad(kept) == []  # keyd no longer has 0x1001
    assert logged(caplog) == [
        (
            logging.INFO,
            "SA deleted (as the key daemon says): ESP SA SPI 0x1001 192.0.2.1 -> 192.0.2.2",
        )
    ]


def test_a_refused_sa_says_why_in_words(caplog):
    caplog.set_level(logging.INFO, MIRROR)
    keyd = KeyManager(allow_unauthenticated=True)  # a keyd that admits encryption-only ESP
    cbc_only = "add 192.0.2.1 192.0.2.2 esp 0x1001 -m tunnel -E aes-cbc 0x" + "22" * 16 + ";"
    apply(parse(cbc_only), LocalTransport(keyd))
    (entry,) = keyd.handle(Message(MsgType.DUMP, SaType.ESP).encode())
    mirror = Mirror(KeyManager())  # espd without --allow-unauthenticated-esp
    assert not mirror.install(entry)
    ((level, line),) = logged(caplog)
    assert level == logging.WARNING
    assert line.startswith(
        "the local key manager refused ESP SA SPI 0x1001 192.0.2.1 -> 192.0.2.2: "
        "encryption-only ESP (cbc(aes)"
    )
    assert line.endswith("(EINVAL)") and "errno" not in line
