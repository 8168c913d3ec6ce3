"""Published vectors for the AEADs, each run against every implementation of its name: the
one-piece drivers (``gcm-aes-openssl``) and the templates over every implementation of their
inner algorithms (``gcm(aes-generic)``, ``rfc4106(gcm-aes-openssl)``,
``rfc7539(chacha20-generic,poly1305-openssl)``, ``authenc(hmac(sha1-generic),cbc(...))``).

NIST CAVP GCM (gcmEncryptExtIV, gcmDecrypt with its FAIL cases) and CCM (DVPT, VNT); RFC 8439
ChaCha20-Poly1305 (BoringSSL's and OpenSSL's collections, and those with an ESP-sized AAD as
RFC 7634 salt || IV); the self-test vectors of aead.json (McGrew-Viega, RFC 3610, SP 800-38C,
draft-mcgrew-gcm-test-01, Wycheproof, RFC 7634, draft-irtf-cfrg-xchacha), and the ESP test
cases of draft-mcgrew-gcm-test-01 §4 as rfc4106. The ESP names take only ESP's 8- or 12-byte
AAD, which no CAVP GCM or CCM record has: on those records they must refuse, as the kernel's
do.
Template instances run pure Python somewhere (ghash, at least), so they meet a deterministic
subsample of the big CAVP files; one-piece drivers meet all of it.
"""

import functools
import json
import pathlib

import pytest

from cryptoapi import BadMessage, InvalidArgument, Registry
from cryptoapi.selftest.kat import run_known_answers
from cryptoapi.selftest.vectors import vectors_for
from tests.vectors import Record, drivers_of
from tests.vectors import load as load_file

registry = Registry(selftests="off")


@functools.cache
def load(path: str) -> list[Record]:
    """Each file parsed once for all the implementations that meet it (records are read-only)."""
    return load_file(path)


def composed(driver: str) -> bool:
    """A template instance (some part of it pure Python), rather than a one-piece driver."""
    return "(" in driver


def cases(name: str, paths: list[str]) -> list[tuple[str, str]]:
    return [(driver, path) for driver in drivers_of(name) for path in paths]


def open_or_forged(tfm, iv: bytes, sealed: bytes, assoc: bytes) -> bytes | None:
    """The plaintext, or None when the transform rejects the message as forged."""
    try:
        return tfm.decrypt(iv, sealed, assoc)
    except BadMessage:
        return None


# --- NIST CAVP GCM (GCMVS) ------------------------------------------------------------------

GCM_ENCRYPT = [f"ciphers/AES/GCM/gcmEncryptExtIV{bits}.rsp" for bits in (128, 192, 256)]
GCM_DECRYPT = [f"ciphers/AES/GCM/gcmDecrypt{bits}.rsp" for bits in (128, 192, 256)]


def sample(records: list[Record], driver: str, every: int = 2) -> list[Record]:
    """All records for a one-piece driver; for a composition the first record and the first
    FAIL record of every ``every``-th section (every IV, tag and data length still occurs)."""
    if not composed(driver):
        return records
    sections: dict[tuple, list[Record]] = {}
    for record in records:
        sections.setdefault(tuple(record.section.items()), []).append(record)
    picked = []
    for index, group in enumerate(sections.values()):
        if index % every == 0:
            picked.append(group[0])
            picked += [r for r in group if "FAIL" in r][:1]
    return picked


@pytest.mark.parametrize(("driver", "path"), cases("gcm(aes)", GCM_ENCRYPT))
def test_cavp_gcm_encrypt(driver, path):
    tfm = registry.alloc_aead(driver)
    records = sample(load(path), driver)
    assert {len(r.hex("IV")) for r in records} == {1, 12, 128}
    for record in records:
        tfm.setkey(record.hex("Key"))
        tfm.setauthsize(len(record.hex("Tag")))
        iv, pt, aad = record.hex("IV"), record.hex("PT"), record.hex("AAD")
        sealed = record.hex("CT") + record.hex("Tag")
        assert tfm.encrypt(iv, pt, aad) == sealed, f"{path}:{record.line}"
        assert tfm.decrypt(iv, sealed, aad) == pt, f"{path}:{record.line}"


@pytest.mark.parametrize(("driver", "path"), cases("gcm(aes)", GCM_DECRYPT))
def test_cavp_gcm_decrypt_including_fail(driver, path):
    tfm = registry.alloc_aead(driver)
    records = sample(load(path), driver)
    assert 0 < sum("FAIL" in r for r in records) < len(records)
    for record in records:
        tfm.setkey(record.hex("Key"))
        tfm.setauthsize(len(record.hex("Tag")))
        sealed = record.hex("CT") + record.hex("Tag")
        opened = open_or_forged(tfm, record.hex("IV"), sealed, record.hex("AAD"))
        expected = None if "FAIL" in record else record.hex("PT")
        assert opened == expected, f"{path}:{record.line}"


@pytest.mark.parametrize(("driver", "path"), cases("rfc4106(gcm(aes))", GCM_ENCRYPT))
def test_rfc4106_refuses_the_cavp_gcm_aad_lengths(driver, path):
    """CAVP's AADs are 0, 16, 20, 48 and 90 bytes, none an ESP AAD of RFC 4106 §5 (16 and 20
    are the kernel's assoc with the IV in it); every implementation refuses them, split as
    §4 salt || IV, before any output."""
    tfm = registry.alloc_aead(driver)
    records = [r for r in sample(load(path), driver) if r.section["IVlen"] == "96"]
    assert {len(r.hex("AAD")) for r in records} == {0, 16, 20, 48, 90}
    for record in records:
        nonce = record.hex("IV")
        tfm.setkey(record.hex("Key") + nonce[:4])
        sealed, aad = record.hex("CT") + record.hex("Tag"), record.hex("AAD")
        for operation, data in ((tfm.encrypt, record.hex("PT")), (tfm.decrypt, sealed)):
            with pytest.raises(InvalidArgument, match="assoc must be 8 or 12 bytes"):
                operation(nonce[4:], data, aad)


# The ESP test cases of draft-mcgrew-gcm-test-01 §4 (typed from the draft for the ESP data
# path's tests): AES-128/192/256, SPI || seq (8 bytes) and SPI || ESN (12 bytes) as the AAD.
MCGREW_ESP = pathlib.Path(__file__).parents[1] / "esp" / "vectors" / "draft-mcgrew-gcm-test-01.json"


def mcgrew_gcm_esp() -> list[dict[str, str]]:
    vectors = json.loads(MCGREW_ESP.read_text())["vectors"]
    return [v for v in vectors if v["algorithm"] == "AES-GCM-ESP"]


@pytest.mark.parametrize("driver", drivers_of("rfc4106(gcm(aes))"))
def test_draft_mcgrew_gcm_esp_cases_as_rfc4106(driver):
    """Every AES-GCM-ESP case of the draft on every implementation: key || salt (RFC 4106
    §8.1), IV = the nonce's last 8 bytes (§4), assoc = the draft's AAD (§5)."""
    tfm = registry.alloc_aead(driver)
    vectors = mcgrew_gcm_esp()
    assert {len(v["key"]) // 2 for v in vectors} == {16, 24, 32}
    assert {len(v["aad"]) // 2 for v in vectors} == {8, 12}
    for vector in vectors:
        nonce, aad = bytes.fromhex(vector["nonce"]), bytes.fromhex(vector["aad"])
        plaintext, sealed = bytes.fromhex(vector["plaintext"]), bytes.fromhex(vector["ctext_tag"])
        tfm.setkey(bytes.fromhex(vector["key"]) + nonce[:4])
        where = f"draft-mcgrew-gcm-test-01 §{vector['section']}"
        assert tfm.encrypt(nonce[4:], plaintext, aad) == sealed, where
        assert tfm.decrypt(nonce[4:], sealed, aad) == plaintext, where


# --- NIST CAVP CCM (CCMVS) ------------------------------------------------------------------

CCM_DVPT = [f"ciphers/AES/CCM/DVPT{bits}.rsp" for bits in (128, 192, 256)]
CCM_VNT = [f"ciphers/AES/CCM/VNT{bits}.rsp" for bits in (128, 192, 256)]


def ccm_records(path: str) -> list[tuple[bytes, Record]]:
    """(key, record) pairs: a CCM file gives each key once, before the records using it."""
    pairs, key = [], b""
    for record in load(path):
        if "Count" in record:
            pairs.append((key, record))
        elif "Key" in record:
            key = record.hex("Key")
    return pairs


def ccm_params(record: Record) -> dict[str, int]:
    """The section's settings: DVPT gives ``[Alen = 0, Plen = 0, Nlen = 7, Tlen = 4]`` on one
    line, which the loader keeps as ``{"Alen": "0, Plen = 0, Nlen = 7, Tlen = 4"}``."""
    text = ", ".join(f"{key} = {value}" for key, value in record.section.items())
    pairs = (part.partition("=") for part in text.split(","))
    return {key.strip(): int(value) for key, _, value in pairs}


@pytest.mark.parametrize(("driver", "path"), cases("ccm(aes)", CCM_DVPT))
def test_cavp_ccm_dvpt(driver, path):
    tfm = registry.alloc_aead(driver)
    pairs = ccm_records(path)
    if composed(driver):
        pairs = pairs[::2]
    assert {r["Result"] for _, r in pairs} == {"Pass", "Fail"}
    for key, record in pairs:
        params = ccm_params(record)
        tfm.setkey(key)
        tfm.setauthsize(params["Tlen"])
        nonce, sealed = record.hex("Nonce"), record.hex("CT")
        aad = record.hex("Adata")[: params["Alen"]]  # a zero length is written "00"
        assert len(nonce) == params["Nlen"]
        opened = open_or_forged(tfm, nonce, sealed, aad)
        if record["Result"] == "Pass":
            payload = record.hex("Payload")[: params["Plen"]]
            assert opened == payload, f"{path}:{record.line}"
            assert tfm.encrypt(nonce, payload, aad) == sealed, f"{path}:{record.line}"
        else:
            assert opened is None, f"{path}:{record.line}"


@pytest.mark.parametrize(("driver", "path"), cases("ccm(aes)", CCM_VNT))
def test_cavp_ccm_vnt(driver, path):
    """VNT: nonces of 7 to 13 bytes, 32-byte AAD, 24-byte payload, 16-byte tags."""
    tfm = registry.alloc_aead(driver)
    pairs = ccm_records(path)
    assert {ccm_params(r)["Nlen"] for _, r in pairs} == set(range(7, 14))
    for key, record in pairs[:: 7 if composed(driver) else 1]:
        nonce, aad = record.hex("Nonce"), record.hex("Adata")
        tfm.setkey(key)
        assert tfm.encrypt(nonce, record.hex("Payload"), aad) == record.hex("CT")
        assert tfm.decrypt(nonce, record.hex("CT"), aad) == record.hex("Payload")


@pytest.mark.parametrize(("driver", "path"), cases("rfc4309(ccm(aes))", CCM_VNT))
def test_rfc4309_refuses_the_cavp_ccm_aad(driver, path):
    """VNT's 11-byte nonces split as RFC 4309 §4 salt || IV carry a 32-byte AAD, not the
    8- or 12-byte ESP AAD of §5: refused (aead.json meets a Wycheproof vector of ESP shape)."""
    tfm = registry.alloc_aead(driver)
    pairs = [(k, r) for k, r in ccm_records(path) if ccm_params(r)["Nlen"] == 11]
    assert len(pairs) == 10
    for key, record in pairs:
        nonce, aad = record.hex("Nonce"), record.hex("Adata")
        tfm.setkey(key + nonce[:3])
        for operation, data in (
            (tfm.encrypt, record.hex("Payload")),
            (tfm.decrypt, record.hex("CT")),
        ):
            with pytest.raises(InvalidArgument, match="assoc must be 8 or 12 bytes"):
                operation(nonce[3:], data, aad)


# --- RFC 8439 ChaCha20-Poly1305, and as RFC 7634 ---------------------------------------------

CHACHAPOLY_FILES = [f"ciphers/ChaCha20Poly1305/{name}.txt" for name in ("boringssl", "openssl")]


def field(record: Record, *names: str) -> bytes:
    """A hex field, or a quoted ASCII string (BoringSSL's notation), under any of ``names``."""
    value = next(record[name] for name in names if name in record)
    return value[1:-1].encode() if value.startswith('"') else bytes.fromhex(value)


def chachapoly_records(path: str) -> list[tuple[Record, bytes, bytes, bytes, bytes, bytes]]:
    """(record, key, nonce, aad, plaintext, ciphertext || tag) in either file's notation."""
    out = []
    for record in load(path):
        nonce = field(record, "NONCE", "IV")
        plaintext = field(record, "IN", "Plaintext")
        sealed = field(record, "CT", "Ciphertext") + field(record, "TAG", "Tag")
        out.append((record, field(record, "KEY", "Key"), nonce, field(record, "AD", "AAD"),
                    plaintext, sealed))  # fmt: skip
    return out


@pytest.mark.parametrize(("driver", "path"), cases("rfc7539(chacha20,poly1305)", CHACHAPOLY_FILES))
def test_chacha20poly1305(driver, path):
    tfm = registry.alloc_aead(driver)
    records = chachapoly_records(path)
    assert len(records) >= 5
    for record, key, nonce, aad, plaintext, sealed in records:
        tfm.setkey(key)
        where = f"{path}:{record.line}"
        if record.fields.get("Result") == "CIPHERFINAL_ERROR":
            assert open_or_forged(tfm, nonce, sealed, aad) is None, where
            continue
        assert tfm.encrypt(nonce, plaintext, aad) == sealed, where
        assert tfm.decrypt(nonce, sealed, aad) == plaintext, where


@pytest.mark.parametrize(
    ("driver", "path"), cases("rfc7539esp(chacha20,poly1305)", CHACHAPOLY_FILES)
)
def test_chacha20poly1305_as_rfc7634(driver, path):
    """The same vectors in the ESP form of RFC 7634 §2: key || salt, nonce = salt || IV. Those
    with an 8- or 12-byte AAD (§2.1: SPI || seq, SPI || ESN) must match; the rest are
    refused."""
    tfm = registry.alloc_aead(driver)
    matched = 0
    for record, key, nonce, aad, plaintext, sealed in chachapoly_records(path):
        tfm.setkey(key + nonce[:4])
        where = f"{path}:{record.line}"
        if len(aad) not in (8, 12):
            with pytest.raises(InvalidArgument, match="assoc must be 8 or 12 bytes"):
                tfm.encrypt(nonce[4:], plaintext, aad)
        elif record.fields.get("Result") == "CIPHERFINAL_ERROR":
            assert open_or_forged(tfm, nonce[4:], sealed, aad) is None, where
        else:
            assert tfm.encrypt(nonce[4:], plaintext, aad) == sealed, where
            assert tfm.decrypt(nonce[4:], sealed, aad) == plaintext, where
            matched += 1
    assert matched >= 1


# --- the self-test vectors (aead.json) on every implementation -------------------------------

AEAD_NAMES = [
    "gcm(aes)",
    "ccm(aes)",
    "rfc4106(gcm(aes))",
    "rfc4309(ccm(aes))",
    "rfc4543(gcm(aes))",
    "rfc7539(chacha20,poly1305)",
    "rfc7539esp(chacha20,poly1305)",
    "xchacha20poly1305",
    *(f"authenc(hmac({h}),cbc(aes))" for h in ("sha1", "sha256", "sha384", "sha512")),
]


@pytest.mark.parametrize(
    ("name", "driver"), [(name, driver) for name in AEAD_NAMES for driver in drivers_of(name)]
)
def test_known_answers_on_every_implementation(name, driver):
    alg = registry.lookup(driver)
    assert alg.name == name
    vectors = vectors_for(name)
    assert vectors, f"no self-test vectors for {name}"
    run_known_answers(alg, vectors, corrupt=False)


def test_every_implementation_is_covered():
    """Generic, OpenSSL and composed implementations all take part."""
    assert {"gcm-aes-openssl", "gcm(aes-generic)", "gcm(aes-openssl)"} <= set(
        drivers_of("gcm(aes)")
    )
    assert {"ccm-aes-openssl", "ccm(aes-generic)"} <= set(drivers_of("ccm(aes)"))
    assert {"rfc4106(gcm-aes-openssl)", "rfc4106(gcm(aes-generic))"} <= set(
        drivers_of("rfc4106(gcm(aes))")
    )
    assert {
        "rfc7539-chacha20-poly1305-openssl",
        "rfc7539(chacha20-generic,poly1305-generic)",
        "rfc7539(chacha20-openssl,poly1305-generic)",
    } <= set(drivers_of("rfc7539(chacha20,poly1305)"))
    assert {"xchacha20poly1305-generic", "xchacha20poly1305-openssl"} <= set(
        drivers_of("xchacha20poly1305")
    )
    assert {
        "authenc(hmac(sha256-generic),cbc(aes-generic))",
        "authenc(hmac(sha256-openssl),cbc-aes-openssl)",
    } <= set(drivers_of("authenc(hmac(sha256),cbc(aes))"))
