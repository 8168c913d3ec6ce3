"""The approved table against the kernel's: Linux 6.12 crypto/testmgr.c, ``alg_test_descs``.

``TESTMGR_FIPS_ALLOWED`` is typed from that file: every entry marked ``.fips_allowed = 1``
(names and drivers; the s390 ``paes`` entries, compressors and signature algorithms
included, though this project offers none of them). The approved table must be exactly
those the project offers, plus the ciphers ``alg_test`` allows through their ``ecb(...)``
entry and the KDF the kernel tests outside testmgr.
"""

import re
from pathlib import Path

import pytest

import cryptoapi
from cryptoapi.fips.approved import ALLOWED, APPROVED, CIPHERS_VIA_ECB, OUTSIDE_TESTMGR

# Typed (as data: the names only) from Linux 6.12 crypto/testmgr.c, alg_test_descs[]: the
# 98 entries with ".fips_allowed = 1" (the 4 blake2b entries say "= 0"; the other 119 have
# no flag). Read from github.com/shilei-massclouds/linux-6.12, commit
# 2974a9e75df28e0b27025e156bede92f4a314128 ("Import Linux 6.12 source"; its Makefile says
# VERSION 6, PATCHLEVEL 12, SUBLEVEL 0), file blob 2f5f6b52b2d4546844e86b81b5ef761f1ed2cd2c;
# the same blob is crypto/testmgr.c in 6.12.33 (tes-rep/linux-6.12.y 445e77df6f0d,
# ty3ry/linux-6.12.y a2cd6d4ee13e) and 6.12.94 (RBCSFQ/linux-6.12.y f98186d5cccb).
TESTMGR_FIPS_ALLOWED = frozenset({
    "authenc(hmac(sha1),cbc(aes))", "authenc(hmac(sha1),ctr(aes))",
    "authenc(hmac(sha1),rfc3686(ctr(aes)))", "authenc(hmac(sha256),cbc(aes))",
    "authenc(hmac(sha256),ctr(aes))", "authenc(hmac(sha256),rfc3686(ctr(aes)))",
    "authenc(hmac(sha384),ctr(aes))", "authenc(hmac(sha384),rfc3686(ctr(aes)))",
    "authenc(hmac(sha512),cbc(aes))", "authenc(hmac(sha512),ctr(aes))",
    "authenc(hmac(sha512),rfc3686(ctr(aes)))",
    "cbc(aes)", "cbc(paes)", "cbc-paes-s390", "ccm(aes)", "cmac(aes)", "crc32", "crc32c",
    "crc64-rocksoft", "crct10dif", "ctr(aes)", "ctr(paes)", "ctr-paes-s390", "cts(cbc(aes))",
    "cts(cbc(paes))", "deflate", "deflate-iaa",
    "drbg_nopr_ctr_aes128", "drbg_nopr_ctr_aes192", "drbg_nopr_ctr_aes256",
    "drbg_nopr_hmac_sha256", "drbg_nopr_hmac_sha512", "drbg_nopr_sha256", "drbg_nopr_sha512",
    "drbg_pr_ctr_aes128", "drbg_pr_ctr_aes192", "drbg_pr_ctr_aes256",
    "drbg_pr_hmac_sha256", "drbg_pr_hmac_sha512", "drbg_pr_sha256", "drbg_pr_sha512",
    "ecb(aes)", "ecb(cipher_null)", "ecb(paes)", "ecb-paes-s390",
    "ecdh-nist-p256", "ecdh-nist-p384", "ecdsa-nist-p256", "ecdsa-nist-p384", "ecdsa-nist-p521",
    "essiv(authenc(hmac(sha256),cbc(aes)),sha256)", "essiv(cbc(aes),sha256)",
    "ffdhe2048(dh)", "ffdhe3072(dh)", "ffdhe4096(dh)", "ffdhe6144(dh)", "ffdhe8192(dh)",
    "gcm(aes)", "hmac(sha1)", "hmac(sha224)", "hmac(sha256)", "hmac(sha3-224)",
    "hmac(sha3-256)", "hmac(sha3-384)", "hmac(sha3-512)", "hmac(sha384)", "hmac(sha512)",
    "jitterentropy_rng", "kw(aes)", "lz4", "lz4hc", "lzo", "lzo-rle",
    "pkcs1pad(rsa,sha224)", "pkcs1pad(rsa,sha256)", "pkcs1pad(rsa,sha3-256)",
    "pkcs1pad(rsa,sha3-384)", "pkcs1pad(rsa,sha3-512)", "pkcs1pad(rsa,sha384)",
    "pkcs1pad(rsa,sha512)", "rfc3686(ctr(aes))", "rfc4106(gcm(aes))", "rfc4309(ccm(aes))",
    "rsa", "sha1", "sha224", "sha256", "sha3-224", "sha3-256", "sha3-384", "sha3-512",
    "sha384", "sha512", "xts(aes)", "xts(paes)", "xts-paes-s390", "xxhash64", "zstd",
})  # fmt: skip
"""Typed from Linux v6.12 crypto/testmgr.c (``.fips_allowed = 1`` entries)."""

TESTMGR_NOT_ALLOWED = ("dh", "rfc4543(gcm(aes))", "ghash", "cbcmac(aes)", "cbc(des3_ede)",
                       "drbg_nopr_hmac_sha384", "md5", "xcbc(aes)")  # fmt: skip
"""Entries of the same table without the flag (a sample: those this project offers and a
reader might expect in the list)."""

REFUSED_EXAMPLES = ("hmac(md5)", "md5", "cbc(des3_ede)", "ghash", "curve25519",
                    "rfc7539esp(chacha20,poly1305)", "authenc(hmac(sha384),cbc(aes))",
                    "dh", "rfc4543(gcm(aes))")  # fmt: skip


@pytest.fixture(scope="module")
def offered() -> set[str]:
    """Every name and driver the project offers (every template instance built)."""
    registry = cryptoapi.Registry("off")
    registry.instantiate_all()
    return {n for info in registry.algorithms() for n in (info.name, info.driver)}


def test_the_typed_list_is_the_whole_of_testmgrs():
    assert len(TESTMGR_FIPS_ALLOWED) == 98
    assert not TESTMGR_FIPS_ALLOWED & set(TESTMGR_NOT_ALLOWED)


def test_the_table_is_the_kernels_for_the_names_offered(offered):
    assert TESTMGR_FIPS_ALLOWED & offered == APPROVED
    assert offered >= OUTSIDE_TESTMGR | CIPHERS_VIA_ECB
    assert not TESTMGR_FIPS_ALLOWED & (OUTSIDE_TESTMGR | CIPHERS_VIA_ECB)
    assert not ALLOWED & set(TESTMGR_NOT_ALLOWED)


def test_a_cipher_is_allowed_as_its_ecb_entry_is():
    """alg_test tests a single-block cipher (CRYPTO_ALG_TYPE_CIPHER) as ``ecb(<name>)``."""
    infos = cryptoapi.Registry("off").algorithms()
    ciphers = {i.name for i in infos if i.type == "cipher"}
    assert {c for c in ciphers if f"ecb({c})" in TESTMGR_FIPS_ALLOWED} == CIPHERS_VIA_ECB


def test_the_docs_table_lists_the_same_names():
    text = (Path(__file__).parents[2] / "docs" / "fips.md").read_text()
    table = text.split("<!-- approved -->")[1].split("<!-- /approved -->")[0]
    assert set(re.findall(r"`([^`]+)`", table)) == ALLOWED


@pytest.mark.parametrize("name", REFUSED_EXAMPLES)
def test_a_name_outside_is_not_found(fips, name):
    with pytest.raises(cryptoapi.AlgorithmNotFound, match="not approved in FIPS mode"):
        fips.lookup(name)


def test_templates_over_an_unapproved_inner_algorithm_are_refused(fips):
    with pytest.raises(cryptoapi.NotApproved, match=r"hmac\(md5\) is not approved in FIPS"):
        fips.alloc_shash("hmac(md5)")
    with pytest.raises(cryptoapi.AlgorithmNotFound, match="not approved in FIPS mode"):
        fips.alloc_aead("authenc(hmac(sha1),cbc(des3_ede))")


def test_a_driver_of_an_unapproved_name_is_refused_by_its_name(fips):
    with pytest.raises(cryptoapi.NotApproved, match=r"md5-generic \(md5, md5-generic\)"):
        fips.alloc_shash("md5-generic")


def test_approved_names_work_and_stdrng_is_an_approved_drbg(fips):
    assert fips.alloc_shash("sha256").digest(b"abc").hex().startswith("ba7816bf")
    assert fips.alloc_rng("stdrng").driver_name == "drbg_nopr_hmac_sha512"
    assert len(fips.get_random_bytes(70000)) == 70000


def test_unapproved_inner_algorithms_still_serve_approved_ones(fips):
    gcm = fips.alloc_aead("gcm(aes-generic)")  # over ghash, which is refused alone
    gcm.setkey(bytes(16))
    assert gcm.encrypt(bytes(12), b"").hex() == "58e2fccefa7e3061367f1d57a4e7455a"
    ffdhe = fips.alloc_kpp("ffdhe2048(dh)")  # over dh, which is refused alone
    ffdhe.setkey(None)
    assert len(ffdhe.public_key()) == 256


def test_the_aes_cipher_is_approved_through_ecb_aes(fips):
    assert fips.lookup("aes").name == "aes"
    aes = fips.alloc_cipher("aes")
    aes.setkey(bytes(16))
    assert aes.fips_approved


def test_the_listing_says_which_are_allowed():
    infos = {i.driver: i for i in cryptoapi.Registry("off").algorithms()}
    assert infos["sha256-generic"].fips_allowed and not infos["md5-generic"].fips_allowed
    assert infos["drbg_nopr_hmac_sha512"].fips_allowed
    assert not infos["drbg_nopr_hmac_sha384"].fips_allowed
    assert infos["md5-generic"].as_dict()["fips_allowed"] is False
