"""Published key-agreement vectors on every implementation of each name: RFC 7748 §5.2
(cryptography-vectors' transcription) and §6.1 for X25519, and NIST CAVP's KAS ECC validity
tests (both roles, pass and fail records) for P-256 and P-384."""

import pytest

from cryptoapi import InvalidArgument, Registry
from tests.vectors import Record, drivers_of, load

REG = Registry(selftests="off")

RFC7748 = load("asymmetric/X25519/rfc7748.txt")
CAVP_FILES = (
    "asymmetric/ECDH/KASValidityTest_ECCStaticUnified_NOKC_ZZOnly_init.fax",
    "asymmetric/ECDH/KASValidityTest_ECCStaticUnified_NOKC_ZZOnly_resp.fax",
)
CURVE_BY_KEY_LENGTH = {32: "ecdh-nist-p256", 48: "ecdh-nist-p384"}


def _cavp(name: str) -> list[Record]:
    records = [r for path in CAVP_FILES for r in load(path) if "dsIUT" in r]
    return [r for r in records if CURVE_BY_KEY_LENGTH.get(len(r.hex("dsIUT"))) == name]


@pytest.mark.parametrize("driver", drivers_of("curve25519"))
@pytest.mark.parametrize("record", RFC7748, ids=lambda r: r["COUNT"])
def test_rfc7748_section_5_2(driver, record):
    tfm = REG.alloc_kpp(driver)
    tfm.setkey(record.hex("INPUT_SCALAR"))
    assert tfm.shared_secret(record.hex("INPUT_U")) == record.hex("OUTPUT_U")


# RFC 7748 §6.1: Alice's and Bob's private keys, public keys and the shared secret K.
ALICE = (
    "77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a",
    "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a",
)
BOB = (
    "5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb",
    "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f",
)
K = "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742"


@pytest.mark.parametrize("driver", drivers_of("curve25519"))
@pytest.mark.parametrize(("ours", "theirs"), [(ALICE, BOB), (BOB, ALICE)], ids=["alice", "bob"])
def test_rfc7748_section_6_1(driver, ours, theirs):
    tfm = REG.alloc_kpp(driver)
    tfm.setkey(bytes.fromhex(ours[0]))
    assert tfm.public_key().hex() == ours[1]
    assert tfm.shared_secret(bytes.fromhex(theirs[1])).hex() == K


@pytest.mark.parametrize("name", sorted(set(CURVE_BY_KEY_LENGTH.values())))
def test_cavp_files_hold_vectors_of_both_outcomes(name):
    results = {r["Result"][0] for r in _cavp(name)}
    assert results == {"P", "F"}


def _cavp_cases() -> list[tuple[str, Record]]:
    return [
        (driver, record)
        for name in sorted(set(CURVE_BY_KEY_LENGTH.values()))
        for driver in drivers_of(name)
        for record in _cavp(name)
    ]


@pytest.mark.parametrize(
    ("driver", "record"), _cavp_cases(), ids=lambda v: v if isinstance(v, str) else str(v.line)
)
def test_cavp_kas_ecc_validity(driver, record):
    """Result P: our public key is QsIUT and the secret with QsCAVS is Z. Result F (a
    changed key, point or Z): the agreement must not reproduce the record's values."""
    tfm = REG.alloc_kpp(driver)
    tfm.setkey(record.hex("dsIUT"))
    public = tfm.public_key()
    peer = record.hex("QsCAVSx") + record.hex("QsCAVSy")
    if record["Result"].startswith("P"):
        assert public == record.hex("QsIUTx") + record.hex("QsIUTy")
        assert tfm.shared_secret(peer) == record.hex("Z")
        return
    try:
        shared = tfm.shared_secret(peer)
    except InvalidArgument:
        return
    assert (public, shared) != (record.hex("QsIUTx") + record.hex("QsIUTy"), record.hex("Z"))
