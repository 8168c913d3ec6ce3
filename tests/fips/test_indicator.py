"""The service indicator: ``fips_approved`` per transform, by the documented rules."""

import pytest

import cryptoapi


def keyed(transform, key: bytes):
    transform.setkey(key)
    return transform


def test_approved_algorithms_with_good_keys(fips):
    assert fips.alloc_shash("sha256").fips_approved
    assert keyed(fips.alloc_shash("hmac(sha256)"), bytes(14)).fips_approved
    assert keyed(fips.alloc_skcipher("cbc(aes)"), bytes(16)).fips_approved
    assert keyed(fips.alloc_aead("rfc4106(gcm(aes))"), bytes(20)).fips_approved
    assert keyed(fips.alloc_aead("ccm(aes)"), bytes(16)).fips_approved
    assert keyed(fips.alloc_kdf("kdf108ctr(hmac(sha256))"), bytes(14)).fips_approved
    assert fips.alloc_rng("stdrng").fips_approved


@pytest.mark.parametrize("name", ["hmac(sha256)", "hmac(sha1)"])
def test_hmac_keys_under_112_bits_are_not(fips, name):
    mac = fips.alloc_shash(name)
    assert not mac.fips_approved  # no key yet
    assert not keyed(mac, bytes(13)).fips_approved
    assert keyed(mac, bytes(14)).fips_approved  # SHA-1 HMAC is approved


def test_kdf_keys_under_112_bits_are_not(fips):
    assert not keyed(fips.alloc_kdf("kdf108ctr(hmac(sha256))"), bytes(13)).fips_approved


@pytest.mark.parametrize("name", ["xts(aes)", "xts(aes-generic)"])
def test_xts_needs_distinct_halves(fips, name):
    xts = fips.alloc_skcipher(name)
    with pytest.raises(cryptoapi.InvalidKey, match=r"halves .*must differ"):
        xts.setkey(bytes(32))  # every implementation refuses them: no such service at all
    assert not xts.fips_approved
    assert keyed(xts, bytes(16) + bytes([1]) * 16).fips_approved


def test_gcm_with_caller_ivs_is_not_esp_gcm_is(fips):
    assert not keyed(fips.alloc_aead("gcm(aes)"), bytes(16)).fips_approved
    assert keyed(fips.alloc_aead("rfc4106(gcm(aes))"), bytes(20)).fips_approved


def test_a_bare_sha1_digest_is_not(fips):
    assert not fips.alloc_shash("sha1").fips_approved


def test_unapproved_algorithms_are_not_outside_fips_mode_either():
    registry = cryptoapi.Registry()
    assert not registry.alloc_shash("md5").fips_approved
    assert registry.alloc_shash("sha512").fips_approved
