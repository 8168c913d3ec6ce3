"""The hashes and ciphers issue 14 adds (BLAKE2b/BLAKE2s, CRC32C, xxHash64, SM3, SM4,
AEGIS-128), every implementation of each name checked against the published vectors and
against an implementation independent of it, on random inputs."""

import hashlib
import random

import pytest
from Crypto.Hash import BLAKE2b as PycryptodomeBlake2b
from Crypto.Hash import BLAKE2s as PycryptodomeBlake2s
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from cryptoapi import BadMessage, InvalidArgument, Registry
from cryptoapi.providers.generic.sm3 import Sm3
from cryptoapi.providers.generic.sm4 import SBOX
from cryptoapi.selftest.fuzz.references import REFERENCES
from cryptoapi.selftest.vectors import vectors_for
from tests.vectors import drivers_of, load, message

registry = Registry(selftests="off")

BLAKE2 = {
    "blake2b-160": (hashlib.blake2b, PycryptodomeBlake2b, 20, 64),
    "blake2b-256": (hashlib.blake2b, PycryptodomeBlake2b, 32, 64),
    "blake2b-384": (hashlib.blake2b, PycryptodomeBlake2b, 48, 64),
    "blake2b-512": (hashlib.blake2b, PycryptodomeBlake2b, 64, 64),
    "blake2s-256": (hashlib.blake2s, PycryptodomeBlake2s, 32, 32),
}
NEW_NAMES = (*BLAKE2, "crc32c", "xxhash64", "sm3", "sm4", "aegis128")


@pytest.fixture
def rng():
    return random.Random(14)


def every_driver(*names):
    return [(name, driver) for name in names for driver in drivers_of(name)]


def streamed(tfm, data, rng):
    """The digest of ``data`` fed in random pieces, through a copy taken midway."""
    desc = tfm.init()
    cut = rng.randrange(len(data) + 1)
    desc.update(data[:cut])
    fork = desc.copy()
    desc.update(b"garbage the fork must not see")
    fork.update(memoryview(data)[cut:])
    return fork.digest()


# --- BLAKE2 (RFC 7693) ----------------------------------------------------------------------


def blake2_reference(name, driver, data, key):
    """hashlib's BLAKE2, or pycryptodome's for the driver over hashlib itself."""
    ours, theirs, size, _ = BLAKE2[name]
    if driver.endswith("-openssl"):
        return theirs.new(data=data, digest_bytes=size, key=key).digest()
    return ours(data, digest_size=size, key=key).digest()


@pytest.mark.parametrize(("name", "driver"), every_driver(*BLAKE2))
def test_blake2_matches_an_independent_implementation(name, driver, rng):
    tfm = registry.alloc_shash(driver)
    block = tfm.blocksize
    max_key = BLAKE2[name][3]
    for key_size in (0, 1, max_key // 2, max_key):
        key = rng.randbytes(key_size)
        tfm.setkey(key)
        for size in (0, 1, block - 1, block, block + 1, 2 * block, 3 * block + 5):
            data = rng.randbytes(size)
            expected = blake2_reference(name, driver, data, key)
            assert tfm.digest(data) == expected, (key_size, size)
            assert streamed(tfm, data, rng) == expected, (key_size, size)


def selftest_seq(length, seed):
    """RFC 7693 Appendix E: the deterministic test sequence (a Fibonacci generator)."""
    a, b, out = (0xDEAD4BAD * seed) & 0xFFFFFFFF, 1, bytearray()
    for _ in range(length):
        a, b = b, (a + b) & 0xFFFFFFFF
        out.append(b >> 24)
    return bytes(out)


# RFC 7693 Appendix E: the digest sizes, input lengths and expected grand hash (BLAKE2b-256
# or BLAKE2s-256 of every digest, unkeyed then keyed with selftest_seq(outlen, outlen)).
SELFTEST = {
    "blake2b": (
        ("blake2b-160", "blake2b-256", "blake2b-384", "blake2b-512"),
        (0, 3, 128, 129, 255, 1024),
        "c23a7800d98123bd10f506c61e29da5603d763b8bbad2e737f5e765a7bccd475",
    ),
}


@pytest.mark.parametrize("provider", ["generic", "openssl", "pycryptodome"])
def test_blake2b_rfc7693_appendix_e_self_test(provider):
    names, lengths, expected = SELFTEST["blake2b"]
    grand = registry.alloc_shash(f"blake2b-256-{provider}")
    grand.setkey(b"")
    total = grand.init()
    for name in names:
        tfm = registry.alloc_shash(f"{name}-{provider}")
        for length in lengths:
            data = selftest_seq(length, length)
            tfm.setkey(b"")
            total.update(tfm.digest(data))
            tfm.setkey(selftest_seq(tfm.digestsize, tfm.digestsize))
            total.update(tfm.digest(data))
    assert total.hexdigest() == expected


@pytest.mark.parametrize(
    ("name", "driver", "path"),
    [
        (name, driver, path)
        for name, path in (
            ("blake2b-512", "hashes/blake2/blake2b.txt"),
            ("blake2s-256", "hashes/blake2/blake2s.txt"),
        )
        for driver in drivers_of(name)
    ],
)
def test_blake2_published_unkeyed_vectors(name, driver, path):
    tfm = registry.alloc_shash(driver)
    tfm.setkey(b"")
    for record in load(path):
        assert tfm.digest(message(record)) == record.hex("MD"), f"{path}:{record.line}"


@pytest.mark.parametrize(("name", "driver"), every_driver(*BLAKE2))
def test_blake2_refuses_a_key_longer_than_the_digest_allows(name, driver):
    tfm = registry.alloc_shash(driver)
    with pytest.raises(InvalidArgument):
        tfm.setkey(bytes(BLAKE2[name][3] + 1))


# --- CRC32C (RFC 3720 B.4; the kernel's seed) -----------------------------------------------

# RFC 3720 Appendix B.4: the 48-byte iSCSI SCSI Read (10) command PDU and its CRC.
ISCSI_READ_PDU = bytes.fromhex(
    "01c00000 00000000 00000000 00000000 14000000 00000400"
    "00000014 00000018 28000000 00000000 02000000 00000000"
)


@pytest.mark.parametrize("driver", drivers_of("crc32c"))
def test_crc32c_rfc3720_pdu_example(driver):
    tfm = registry.alloc_shash(driver)
    tfm.setkey(b"\xff\xff\xff\xff")
    assert tfm.digest(ISCSI_READ_PDU).hex() == "563a96d9"


@pytest.mark.parametrize("driver", drivers_of("crc32c"))
def test_crc32c_matches_google_crc32c_with_any_seed(driver, rng):
    google_crc32c = pytest.importorskip("google_crc32c")
    tfm = registry.alloc_shash(driver)
    for size in (0, 1, 3, 64, 1000):
        seed = rng.getrandbits(32)
        tfm.setkey(seed.to_bytes(4, "little"))
        data = rng.randbytes(size)
        # The kernel's seed is the raw register; extend() continues a finished CRC.
        expected = google_crc32c.extend(~seed & 0xFFFFFFFF, data).to_bytes(4, "little")
        assert tfm.digest(data) == expected
        assert streamed(tfm, data, rng) == expected


@pytest.mark.parametrize("driver", drivers_of("crc32c"))
def test_crc32c_seed_continues_a_crc_as_the_kernel_documents(driver, rng):
    """crc32c_generic.c: a CRC that starts from ~0 continues with its register, that is the
    complement of the digest so far, as the next seed."""
    tfm = registry.alloc_shash(driver)
    first, second = rng.randbytes(37), rng.randbytes(50)
    tfm.setkey(b"\xff\xff\xff\xff")
    whole = tfm.digest(first + second)
    tfm.setkey(bytes(~byte & 0xFF for byte in tfm.digest(first)))
    assert tfm.digest(second) == whole


# --- xxHash64 ---------------------------------------------------------------------------


@pytest.mark.parametrize("driver", drivers_of("xxhash64"))
def test_xxhash64_matches_the_xxhash_package(driver, rng):
    xxhash = pytest.importorskip("xxhash")
    tfm = registry.alloc_shash(driver)
    for size in (0, 1, 3, 4, 7, 8, 31, 32, 33, 64, 100, 1000):
        seed = rng.getrandbits(64)
        tfm.setkey(seed.to_bytes(8, "little"))
        data = rng.randbytes(size)
        expected = xxhash.xxh64_intdigest(data, seed=seed).to_bytes(8, "little")
        assert tfm.digest(data) == expected, size
        assert streamed(tfm, data, rng) == expected, size


@pytest.mark.parametrize(("name", "size"), [("crc32c", 4), ("xxhash64", 8)])
def test_seeds_must_have_the_kernels_length(name, size):
    for driver in drivers_of(name):
        tfm = registry.alloc_shash(driver)
        for wrong in (0, size - 1, size + 1):
            with pytest.raises(InvalidArgument):
                tfm.setkey(bytes(wrong))


# --- SM3 and SM4 ----------------------------------------------------------------------------


@pytest.mark.parametrize("driver", drivers_of("sm3"))
def test_sm3_published_vectors(driver):
    tfm = registry.alloc_shash(driver)
    for record in load("hashes/SM3/oscca.txt"):
        assert tfm.digest(message(record)) == record.hex("MD"), record.line


@pytest.mark.parametrize("driver", drivers_of("sm3"))
def test_sm3_matches_an_independent_implementation(driver, rng):
    """OpenSSL's SM3, or the generic one for OpenSSL's driver itself."""
    tfm = registry.alloc_shash(driver)
    for size in (0, 1, 55, 56, 63, 64, 65, 200):
        data = rng.randbytes(size)
        if driver == "sm3-openssl":
            expected = Sm3(data).digest()
        else:
            expected = hashlib.new("sm3", data).digest()
        assert tfm.digest(data) == expected
        assert streamed(tfm, data, rng) == expected


SM4_FILES = {
    "ecb(sm4)": "ciphers/SM4/draft-ribose-cfrg-sm4-10-ecb.txt",
    "cbc(sm4)": "ciphers/SM4/draft-ribose-cfrg-sm4-10-cbc.txt",
    "ctr(sm4)": "ciphers/SM4/draft-ribose-cfrg-sm4-10-ctr.txt",
}


@pytest.mark.parametrize(("name", "driver"), every_driver(*SM4_FILES))
def test_sm4_modes_compose_and_meet_the_drafts_examples(name, driver):
    tfm = registry.alloc_skcipher(driver)
    for record in load(SM4_FILES[name]):
        tfm.setkey(record.hex("KEY"))
        iv = record.hex("IV") if "IV" in record else b""
        assert tfm.encrypt(iv, record.hex("PLAINTEXT")) == record.hex("CIPHERTEXT")
        assert tfm.decrypt(iv, record.hex("CIPHERTEXT")) == record.hex("PLAINTEXT")


@pytest.mark.parametrize("driver", drivers_of("sm4"))
def test_sm4_matches_openssl_on_random_blocks(driver, rng):
    tfm = registry.alloc_cipher(driver)
    for _ in range(20):
        key, block = rng.randbytes(16), rng.randbytes(16)
        tfm.setkey(key)
        expected = Cipher(algorithms.SM4(key), modes.ECB()).encryptor().update(block)
        assert tfm.encrypt(block) == expected
        assert tfm.decrypt(expected) == block


def test_sm4_sbox_derived_is_a_permutation_starting_as_the_standards_table():
    assert sorted(SBOX) == list(range(256))
    # GB/T 32907-2016 §6.2 (draft-ribose-cfrg-sm4-10 §6.2.1): the table's first row.
    assert bytes(SBOX[:16]).hex() == "d690e9fecce13db716b614c228fb2c05"


# --- AEGIS-128 (the CAESAR v1.1 algorithm, as the kernel's aegis128) --------------------------

# Wycheproof aegis128_test.json (C2SP/wycheproof testvectors_v1): the known test vectors of
# the AEGIS v1.1 specification (tcId 1-11) and short pseudorandom ones (tcId 14-21):
# key, iv, aad, msg, ct, tag.
AEGIS128_VECTORS = [
    ("00" * 16, "00" * 16, "", "00" * 16, "951b050fa72b1a2fc16d2e1f01b07d7e",
     "a7d2a99773249542f422217ee888d5f1"),
    ("00" * 16, "00" * 16, "00" * 16, "00" * 16, "10b0dee65a97d751205c128a992473a1",
     "46dcb9ee93c46cf13731d41b9646c131"),
    ("00010000000000000000000000000000", "00000200000000000000000000000000", "00010203",
     "00" * 16, "2b78f5c1618da39afbb2920f5dae02b0", "74759cd0e19314650d6c635b563d80fd"),
    ("10010000000000000000000000000000", "10000200000000000000000000000000", "0001020304050607",
     "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
     "e08ec10685d63c7364eca78ff6e1a1ddfdfc15d5311a7f2988a0471a13973fd7",
     "27e84b6c4cc46cb6ece8f1f3e4aa0e78"),
    ("00" * 16, "00" * 16, "", "", "", "242d8006b64d87c36cb35714af7121f9"),
    ("00" * 16, "00" * 16, "", "01", "94", "7cb6018c1bb027166d17b40c3b2a9628"),
    ("00" * 16, "00" * 16, "01", "", "", "fb43fc8f4fe485e1824384dc1cc6930d"),
    ("01" + "00" * 15, "00" * 16, "00", "00", "f3", "82ad581c234f6d1b59876602b4044c3d"),
    ("00" * 16, "01" + "00" * 15, "00", "00", "bd", "8cb23a983ba37f48fa165f1a4c1ac465"),
    ("01" * 16, "01" * 16, "01" * 16, "01" * 16, "d48151ffb81b297ea5c739ead4a7f1e9",
     "929f4674a8a3cea123b5246cfe978a77"),
    ("000102030405060708090a0b0c0d0e0f", "000306090c0f1215181b1e2124272a2d", "01" * 16,
     "01" * 16, "66d71d9d0b10f3ad3b4074ec8d6829f0", "e0b479e968258e4c993e5b4900493a7d"),
    ("b67b1a6efdd40d37080fbe8f8047aeb9", "fa294b129972f7fc5bbd5b96bba837c9", "", "", "",
     "8a40f6464d958c9820f633146a95c697"),
    ("209e6dbf2ad26a105445fc0207cd9e9a", "9477849d6ccdfca112d92e53fae4a7ca", "", "01", "9d",
     "461c19a2444417f7aa3f04eed6b7f67e"),
    ("ef82ab03129d93cf7f06b88aad17b595", "be1c0009a6bbf1cdb86bae6cad029ee4", "", "1155", "ead7",
     "b5aa453a5676ddd6d645b4974fa99aec"),
    ("45d761e2a6a9384b3b69343a83a0dfcb", "e117d91548f9c7caf88493a25be62410", "", "3bf2e8",
     "4b6a96", "226cdc016cd0a966295577fb690e1366"),
    ("4ca75d221f93bea97e3571832b87dfb3", "934a839a6e56c11f6f4e66ba1bb65671", "", "ae09c978",
     "9ea5a0be", "6954219250abe8634a1f51aac5ddf824"),
    ("dd69b91f5203cc747adba6774b7944d9", "8238b76f8089afe3d189126f3a92c16f", "", "8b72d6cc5f",
     "9ab9b438eb", "b1c26b2575521f9422e38bed6b4655a3"),
    ("d3c38350e5f2734a692c982dc14cd1f2", "37ef955586290a179413e4e29847aa90", "", "0b0c5c6d8d22",
     "28cfb46c1868", "8fa0694ec29c7f9ea899fc80d9a40f06"),
    ("8d263349fea29d36d0ec479609a95801", "43cad2e7270dad51e21efd4ba7156866", "",
     "23c6a97133decf", "2fad26e8ca9cf0", "5e6b65f1fbccdb589c6eb723466ad894"),
]  # fmt: skip


@pytest.mark.parametrize("driver", drivers_of("aegis128"))
@pytest.mark.parametrize("vector", AEGIS128_VECTORS)
def test_aegis128_wycheproof_known_vectors(driver, vector):
    key, iv, aad, msg, ct, tag = map(bytes.fromhex, vector)
    tfm = registry.alloc_aead(driver)
    tfm.setkey(key)
    assert tfm.encrypt(iv, msg, aad) == ct + tag
    assert tfm.decrypt(iv, ct + tag, aad) == msg


@pytest.mark.parametrize("driver", drivers_of("aegis128"))
def test_aegis128_truncates_the_tag_and_refuses_any_forgery(driver, rng):
    key, iv, aad, msg, ct, tag = map(bytes.fromhex, AEGIS128_VECTORS[3])
    tfm = registry.alloc_aead(driver)
    tfm.setkey(key)
    for authsize in range(8, 17):
        tfm.setauthsize(authsize)
        sealed = tfm.encrypt(iv, msg, aad)
        assert sealed == ct + tag[:authsize]  # the kernel's tag: the first authsize bytes
        for position in (0, len(ct) - 1, len(sealed) - 1):
            forged = bytearray(sealed)
            forged[position] ^= 1 << rng.randrange(8)
            with pytest.raises(BadMessage):
                tfm.decrypt(iv, bytes(forged), aad)
        with pytest.raises(BadMessage):
            tfm.decrypt(iv, sealed, aad + b"\x00")
    for authsize in (4, 7, 17):
        with pytest.raises(InvalidArgument):
            tfm.setauthsize(authsize)


# --- registration ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", NEW_NAMES)
def test_each_name_has_known_answers_and_a_generic_reference(name):
    assert vectors_for(name)
    assert REFERENCES[name] == f"{name}-generic"
    assert f"{name}-generic" in drivers_of(name)


# --- optional keys (the kernel's CRYPTO_ALG_OPTIONAL_KEY) --------------------------------


def _unkeyed_expectations():
    """(driver, message, the digest an independent implementation gives with no key: BLAKE2
    unkeyed, crc32c from ~0 (RFC 3720 B.4's PDU), xxhash64 with seed 0)."""
    pdu_crc = bytes.fromhex("563a96d9")
    cases = [(d, ISCSI_READ_PDU, pdu_crc) for d in drivers_of("crc32c")]
    for name in ("blake2b-160", "blake2b-256", "blake2b-384", "blake2b-512"):
        size = int(name.split("-")[1]) // 8
        digest = hashlib.blake2b(b"abc", digest_size=size).digest()
        cases += [(d, b"abc", digest) for d in drivers_of(name)]
    cases += [(d, b"abc", hashlib.blake2s(b"abc").digest()) for d in drivers_of("blake2s-256")]
    return cases


@pytest.mark.parametrize(("driver", "msg", "digest"), _unkeyed_expectations())
def test_an_optional_key_may_be_left_unset_as_in_the_kernel(driver, msg, digest):
    tfm = registry.alloc_shash(driver)
    assert tfm.keyed
    assert tfm.digest(msg) == digest


def test_xxhash64_without_a_key_is_seed_zero():
    xxhash = pytest.importorskip("xxhash")
    for driver in drivers_of("xxhash64"):
        expected = xxhash.xxh64_intdigest(b"abc", seed=0).to_bytes(8, "little")
        assert registry.alloc_shash(driver).digest(b"abc") == expected
