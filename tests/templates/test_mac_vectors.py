"""Published vectors for the MACs, each run against every implementation of its name
(``cmac-aes-openssl``, ``cmac(aes-generic)``, ``poly1305-generic`` ...), each vector in
several ways: one-shot, split updates, a copy taken mid-stream, bytes/bytearray/memoryview.

NIST SP 800-38B CMAC-AES (the cryptography-vectors transcription); RFC 3566 XCBC (the seven
test cases of its Test Vectors section, typed below); RFC 8439 Poly1305 (the RFC's vectors as
NIST-style text); GHASH checked against the GCM CAVP file (there Tag XOR CIPH_K(J0) is
GHASH_H(A, C), SP 800-38D §7.1); and the self-test vectors of mac.json.
"""

import functools

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from cryptoapi import Registry
from cryptoapi.selftest.kat import run_known_answers
from cryptoapi.selftest.vectors import vectors_for
from tests.vectors import Record, drivers_of, load

registry = Registry(selftests="off")


def every_way(tfm, key: bytes, message: bytes, expected: bytes, where: str) -> None:
    """One-shot over three buffer types, and streamed in two parts with a copy between."""
    tfm.setkey(key)
    assert tfm.digest(message) == expected, where
    assert tfm.digest(bytearray(message)) == expected, where
    assert tfm.digest(memoryview(b"\xff" + message)[1:]) == expected, where
    desc = tfm.init()
    half = len(message) // 2
    desc.update(message[:half])
    snapshot = desc.copy()
    desc.update(memoryview(message)[half:])
    assert desc.final() == expected, f"{where} split"
    snapshot.update(bytearray(message[half:]))
    assert snapshot.hexdigest() == expected.hex(), f"{where} copy"
    for size in (1, 15, 16, 17):  # updates across block boundaries, the last block held back
        desc = tfm.init()
        for start in range(0, len(message), size):
            desc.update(message[start : start + size])
        assert desc.digest() == expected, f"{where} in pieces of {size}"


# --- NIST SP 800-38B CMAC-AES ----------------------------------------------------------------

CMAC_FILES = [f"CMAC/nist-800-38b-aes{bits}.txt" for bits in (128, 192, 256)]


@pytest.mark.parametrize(
    ("driver", "path"), [(d, p) for d in drivers_of("cmac(aes)") for p in CMAC_FILES]
)
def test_sp800_38b_cmac_aes(driver, path):
    tfm = registry.alloc_shash(driver)
    assert (tfm.alg_name, tfm.digestsize, tfm.blocksize) == ("cmac(aes)", 16, 16)
    records = load(path)
    assert len(records) == 4
    for record in records:
        message = bytes.fromhex(record["MESSAGE"])
        where = f"{path}:{record.line}"
        every_way(tfm, record.hex("KEY"), message, record.hex("OUTPUT"), where)


# --- RFC 3566 AES-XCBC-MAC-96 test cases (the full 128-bit MAC) -----------------------------

XCBC_KEY = bytes(range(16))
XCBC_CASES = [  # (message, AES-XCBC-MAC) for Test Case #1 to #7
    (b"", "75f0251d528ac01c4573dfd584d79f29"),
    (bytes(range(3)), "5b376580ae2f19afe7219ceef172756f"),
    (bytes(range(16)), "d2a246fa349b68a79998a4394ff7a263"),
    (bytes(range(20)), "47f51b4564966215b8985c63055ed308"),
    (bytes(range(32)), "f54f0ec8d2b9f3d36807734bd5283fd4"),
    (bytes(range(34)), "becbb3bccdb518a30677d5481fb6b4d8"),
    (bytes(1000), "f0dafee895db30253761103b5d84528f"),
]


@pytest.mark.parametrize("driver", drivers_of("xcbc(aes)"))
def test_rfc3566_xcbc(driver):
    tfm = registry.alloc_shash(driver)
    assert (tfm.alg_name, tfm.digestsize) == ("xcbc(aes)", 16)
    for number, (message, mac) in enumerate(XCBC_CASES, 1):
        every_way(tfm, XCBC_KEY, message, bytes.fromhex(mac), f"RFC 3566 test case #{number}")


# --- RFC 8439 Poly1305 -----------------------------------------------------------------------


@pytest.mark.parametrize("driver", drivers_of("poly1305"))
def test_rfc8439_poly1305(driver):
    tfm = registry.alloc_shash(driver)
    assert (tfm.alg_name, tfm.digestsize, tfm.blocksize) == ("poly1305", 16, 16)
    records = load("poly1305/rfc7539.txt")
    assert len(records) >= 10
    for record in records:
        where = f"poly1305/rfc7539.txt:{record.line}"
        every_way(tfm, record.hex("KEY"), record.hex("MSG"), record.hex("TAG"), where)


# --- GHASH against the GCM CAVP vectors ------------------------------------------------------


def aes_block(key: bytes, block: bytes) -> bytes:
    encryptor = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
    return encryptor.update(block) + encryptor.finalize()


def ghash_input(aad: bytes, ciphertext: bytes) -> bytes:
    """A || 0^v || C || 0^u || [len(A)]_64 || [len(C)]_64 (SP 800-38D §7.1 step 5)."""
    lengths = (8 * len(aad)).to_bytes(8, "big") + (8 * len(ciphertext)).to_bytes(8, "big")
    return aad + bytes(-len(aad) % 16) + ciphertext + bytes(-len(ciphertext) % 16) + lengths


@functools.cache
def gcm_full_tag_records(bits: int) -> list[Record]:
    """96-bit IVs with 128-bit tags: there S = T XOR CIPH_K(IV || 0^31 || 1) in full."""
    records = load(f"ciphers/AES/GCM/gcmEncryptExtIV{bits}.rsp")
    chosen = [r for r in records if r.section["IVlen"] == "96" and r.section["Taglen"] == "128"]
    return chosen[::5]


@pytest.mark.parametrize("driver", drivers_of("ghash"))
@pytest.mark.parametrize("bits", [128, 256])
def test_ghash_from_gcm_vectors(driver, bits):
    tfm = registry.alloc_shash(driver)
    assert (tfm.alg_name, tfm.digestsize, tfm.blocksize) == ("ghash", 16, 16)
    for record in gcm_full_tag_records(bits):
        key = record.hex("Key")
        tag, j0 = record.hex("Tag"), record.hex("IV") + b"\0\0\0\1"
        expected = bytes(a ^ b for a, b in zip(tag, aes_block(key, j0), strict=True))
        message = ghash_input(record.hex("AAD"), record.hex("CT"))
        where = f"gcmEncryptExtIV{bits}.rsp:{record.line}"
        every_way(tfm, aes_block(key, bytes(16)), message, expected, where)


# --- the self-test vectors (mac.json) on every implementation -------------------------------

MAC_NAMES = ["cmac(aes)", "xcbc(aes)", "poly1305", "ghash"]


@pytest.mark.parametrize(
    ("name", "driver"), [(name, driver) for name in MAC_NAMES for driver in drivers_of(name)]
)
def test_known_answers_on_every_implementation(name, driver):
    alg = registry.lookup(driver)
    assert alg.name == name
    assert alg.keyed
    vectors = vectors_for(name)
    assert vectors, f"no self-test vectors for {name}"
    run_known_answers(alg, vectors, corrupt=False)


def test_every_implementation_is_covered():
    assert {"cmac-aes-openssl", "cmac(aes-generic)", "cmac(aes-openssl)"} <= set(
        drivers_of("cmac(aes)")
    )
    assert {"xcbc(aes-generic)", "xcbc(aes-openssl)"} <= set(drivers_of("xcbc(aes)"))
    assert {"poly1305-generic", "poly1305-openssl"} <= set(drivers_of("poly1305"))
    assert "ghash-generic" in drivers_of("ghash")
