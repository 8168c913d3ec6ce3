"""Published vectors for the skciphers, each run against every implementation of its name:
the one-piece drivers (``cbc-aes-openssl``) and the templates over every implementation of
their inner algorithm (``cbc(aes-generic)``, ``cbc(aes-openssl)``, ``cts(cbc-aes-openssl)``).

NIST CAVP AES ECB/CBC (KAT and MMT) and XTS (XTSGenAES) response files; RFC 3686 CTR (as
``ctr(aes)`` with the whole counter block as IV, and as ``rfc3686(ctr(aes))``); RFC 3962
CTS; RFC 8439 ChaCha20; draft-irtf-cfrg-xchacha XChaCha20.
"""

import struct

import pytest

from cryptoapi import Registry
from tests.vectors import Record, drivers_of, load
from tests.xchacha_draft import DHOLE, XCHACHA_CIPHERTEXTS, XCHACHA_IV, XCHACHA_KEY

registry = Registry(selftests="off")


def cases(names: list[str], paths: list[str]) -> list[tuple[str, str]]:
    return [(driver, path) for name in names for driver in drivers_of(name) for path in paths]


def check(tfm, record: Record, where: str, key: bytes, iv: bytes, pt: bytes, ct: bytes):
    """One record in the direction its section says (the CAVP files list ENCRYPT first)."""
    tfm.setkey(key)
    if "DECRYPT" in record.section:
        assert tfm.decrypt(iv, ct) == pt, f"{where}:{record.line} decrypt"
    else:
        assert tfm.encrypt(iv, pt) == ct, f"{where}:{record.line} encrypt"


# --- NIST CAVP AES ECB and CBC (AESAVS KAT and MMT) -------------------------------------------

AESAVS = [f"{kind}{bits}" for kind in ("GFSbox", "KeySbox", "VarKey", "VarTxt", "MMT")
          for bits in (128, 192, 256)]  # fmt: skip


@pytest.mark.parametrize(
    ("driver", "path"),
    cases(["ecb(aes)"], [f"ciphers/AES/ECB/ECB{f}.rsp" for f in AESAVS])
    + cases(["cbc(aes)"], [f"ciphers/AES/CBC/CBC{f}.rsp" for f in AESAVS]),
)
def test_cavp_ecb_cbc(driver, path):
    tfm = registry.alloc_skcipher(driver)
    records = load(path)
    directions = {"DECRYPT" in r.section for r in records}
    assert directions == {False, True}, "both ENCRYPT and DECRYPT sections"
    for record in records:
        iv = record.hex("IV") if "IV" in record else b""
        check(tfm, record, path, record.hex("KEY"), iv, *_pt_ct(record))


def _pt_ct(record: Record) -> tuple[bytes, bytes]:
    return record.hex("PLAINTEXT"), record.hex("CIPHERTEXT")


# --- NIST CAVP XTS-AES (XTSVS), whole-byte data units ---------------------------------------

XTS_FILES = [
    f"ciphers/AES/XTS/{tweak}/XTSGenAES{bits}.rsp"
    for tweak in ("tweak-128hexstr", "tweak-dataunitseqno")
    for bits in (128, 256)
]


def xts_tweak(record: Record) -> bytes:
    """The 16-byte tweak: given, or the data unit sequence number little-endian (1619 §5.1)."""
    if "i" in record:
        return record.hex("i")
    return int(record["DataUnitSeqNumber"]).to_bytes(16, "little")


@pytest.mark.parametrize(("driver", "path"), cases(["xts(aes)"], XTS_FILES))
def test_cavp_xts(driver, path):
    tfm = registry.alloc_skcipher(driver)
    records = [r for r in load(path) if int(r["DataUnitLen"]) % 8 == 0]
    sizes = {len(r.hex("PT")) for r in records}
    assert sizes >= ({16, 25, 32} if "AES128" in path else {32, 48}), "whole and stolen blocks"
    for record in records:
        pt, ct = record.hex("PT"), record.hex("CT")
        check(tfm, record, path, record.hex("Key"), xts_tweak(record), pt, ct)


# --- RFC 3686 AES-CTR ------------------------------------------------------------------------

CTR_FILES = [f"ciphers/AES/CTR/aes-{bits}-ctr.txt" for bits in (128, 192, 256)]


@pytest.mark.parametrize(("driver", "path"), cases(["ctr(aes)"], CTR_FILES))
def test_rfc3686_vectors_as_ctr(driver, path):
    """The files give the whole counter block nonce || IV || 00000001 as the IV."""
    tfm = registry.alloc_skcipher(driver)
    for record in load(path):
        tfm.setkey(record.hex("KEY"))
        iv, (pt, ct) = record.hex("IV"), _pt_ct(record)
        assert tfm.encrypt(iv, pt) == ct, f"{path}:{record.line}"
        assert tfm.decrypt(iv, ct) == pt, f"{path}:{record.line}"


@pytest.mark.parametrize(("driver", "path"), cases(["rfc3686(ctr(aes))"], CTR_FILES))
def test_rfc3686_vectors_as_rfc3686(driver, path):
    """The ESP form: key = AES key || nonce, IV = the 8 bytes a packet carries (§4, §5.1)."""
    tfm = registry.alloc_skcipher(driver)
    assert (tfm.ivsize, tfm.blocksize) == (8, 1)
    for record in load(path):
        block = record.hex("IV")
        assert block[12:] == b"\0\0\0\1"
        tfm.setkey(record.hex("KEY") + block[:4])
        pt, ct = _pt_ct(record)
        assert tfm.encrypt(block[4:12], pt) == ct, f"{path}:{record.line}"
        assert tfm.decrypt(block[4:12], ct) == pt, f"{path}:{record.line}"


# --- RFC 3962 Appendix B: AES-CTS as cts(cbc(aes)) ------------------------------------------

RFC3962_KEY = bytes.fromhex("636869636b656e207465726979616b69")  # "chicken teriyaki"
RFC3962_MESSAGE = b"I would like the General Gau's Chicken, please, and wonton soup."
RFC3962_OUTPUTS = [
    "c6353568f2bf8cb4d8a580362da7ff7f97",
    "fc00783e0efdb2c1d445d4c8eff7ed2297687268d6ecccc0c07b25e25ecfe5",
    "39312523a78662d5be7fcbcc98ebf5a897687268d6ecccc0c07b25e25ecfe584",
    "97687268d6ecccc0c07b25e25ecfe584b3fffd940c16a18c1b5549d2f838029e"
    "39312523a78662d5be7fcbcc98ebf5",
    "97687268d6ecccc0c07b25e25ecfe5849dad8bbb96c4cdc03bc103e1a194bbd8"
    "39312523a78662d5be7fcbcc98ebf5a8",
    "97687268d6ecccc0c07b25e25ecfe58439312523a78662d5be7fcbcc98ebf5a8"
    "4807efe836ee89a526730dbc2f7bc8409dad8bbb96c4cdc03bc103e1a194bbd8",
]


@pytest.mark.parametrize("driver", drivers_of("cts(cbc(aes))"))
def test_rfc3962_cts(driver):
    tfm = registry.alloc_skcipher(driver)
    tfm.setkey(RFC3962_KEY)
    iv = bytes(16)
    for output in RFC3962_OUTPUTS:
        ct = bytes.fromhex(output)
        pt = RFC3962_MESSAGE[: len(ct)]
        assert tfm.encrypt(iv, pt) == ct, len(pt)
        assert tfm.decrypt(iv, ct) == pt, len(pt)


# --- RFC 8439 (RFC 7539) ChaCha20 ------------------------------------------------------------


@pytest.mark.parametrize("driver", drivers_of("chacha20"))
def test_rfc8439_chacha20(driver):
    """The kernel's IV: the 32-bit little-endian initial block counter || the 96-bit nonce."""
    tfm = registry.alloc_skcipher(driver)
    records = load("ciphers/ChaCha20/rfc7539.txt")
    assert len(records) >= 3
    for record in records:
        tfm.setkey(record.hex("KEY"))
        iv = struct.pack("<I", int(record["INITIAL_BLOCK_COUNTER"])) + record.hex("NONCE")
        pt, ct = _pt_ct(record)
        assert tfm.encrypt(iv, pt) == ct, f"rfc7539.txt:{record.line}"
        assert tfm.decrypt(iv, ct) == pt, f"rfc7539.txt:{record.line}"


# --- draft-irtf-cfrg-xchacha-03 §A.3.2 XChaCha20 ---------------------------------------------


@pytest.mark.parametrize("driver", drivers_of("xchacha20"))
def test_xchacha20_draft(driver):
    """The kernel's IV: the 24-byte nonce || the 64-bit little-endian stream position."""
    tfm = registry.alloc_skcipher(driver)
    tfm.setkey(XCHACHA_KEY)
    iv = XCHACHA_IV + struct.pack("<Q", 0)
    assert tfm.encrypt(iv, DHOLE) == XCHACHA_CIPHERTEXTS[0]
    assert tfm.decrypt(iv, XCHACHA_CIPHERTEXTS[0]) == DHOLE
    # Starting one block later gives the same keystream shifted by one block.
    later = tfm.encrypt(XCHACHA_IV + struct.pack("<Q", 1), bytes(len(DHOLE)))
    keystream = bytes(a ^ b for a, b in zip(DHOLE, XCHACHA_CIPHERTEXTS[0], strict=True))
    assert later[: len(DHOLE) - 64] == keystream[64:]


# --- every name meets the vectors on every implementation -----------------------------------


def test_every_implementation_is_covered():
    """Generic, OpenSSL and composed implementations all take part."""
    assert {"ecb-aes-openssl", "ecb(aes-generic)", "ecb(aes-openssl)"} <= set(
        drivers_of("ecb(aes)")
    )
    assert {"cts(cbc-aes-openssl)", "cts(cbc(aes-generic))"} <= set(drivers_of("cts(cbc(aes))"))
    assert {"chacha20-generic", "chacha20-openssl"} <= set(drivers_of("chacha20"))
    assert {"xchacha20-generic", "xchacha20-openssl"} <= set(drivers_of("xchacha20"))
