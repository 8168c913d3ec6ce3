"""RFC 2202 (HMAC-MD5, HMAC-SHA-1) and RFC 4231 (HMAC-SHA-224..512) vectors against every
``hmac(H)`` instance: one per implementation of H, built by the template."""

import hmac as stdlib_hmac

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cryptoapi import Registry
from tests.vectors import drivers_of, load

FILES = {
    "md5": "rfc-2202-md5.txt",
    "sha1": "rfc-2202-sha1.txt",
    "sha224": "rfc-4231-sha224.txt",
    "sha256": "rfc-4231-sha256.txt",
    "sha384": "rfc-4231-sha384.txt",
    "sha512": "rfc-4231-sha512.txt",
}
HMAC_CASES = [(name, driver) for name in FILES for driver in drivers_of(name)]

registry = Registry(selftests="off")


@pytest.mark.parametrize(("hash_name", "hash_driver"), HMAC_CASES)
def test_rfc_vectors(hash_name, hash_driver):
    tfm = registry.alloc_shash(f"hmac({hash_driver})")
    assert tfm.alg_name == f"hmac({hash_name})"
    assert tfm.driver_name == f"hmac({hash_driver})"
    records = load(f"HMAC/{FILES[hash_name]}")
    assert len(records) >= 6
    for record in records:
        tfm.setkey(record.hex("Key"))
        expected, msg = record.hex("MD"), record.hex("Msg")
        assert tfm.digest(msg) == expected, f"{FILES[hash_name]}:{record.line}"
        desc = tfm.init()
        desc.update(msg[:7])
        desc.copy().update(b"ignored")
        desc.update(msg[7:])
        assert desc.final() == expected


HASHLIB_NAMES = {"sha3-256": "sha3_256", "sha3-512": "sha3_512", "sha1": "sha1"}


@pytest.mark.parametrize("driver", [d for name in HASHLIB_NAMES for d in drivers_of(name)])
@settings(max_examples=40, deadline=None)
@given(key=st.binary(max_size=200), msg=st.binary(max_size=400))
def test_matches_stdlib_hmac(driver, key, msg):
    tfm = registry.alloc_shash(f"hmac({driver})")
    tfm.setkey(key)
    name = driver.rsplit("-", 1)[0]
    assert tfm.digest(msg) == stdlib_hmac.digest(key, msg, HASHLIB_NAMES[name])
