"""What a newcomer reads off a transform: PEP 452's names on a Shash, a ``digest`` that is a
real method (help() shows it), ``keyed`` true for every cipher type in ``algorithms()``,
and ``serving_driver`` naming the implementation that holds the key after a fallback."""

import hashlib
import inspect
import os
import pydoc
from pathlib import Path

import pytest

from cryptoapi import Algorithm, AlgType, InvalidArgument, Registry, Shash, Skcipher
from tests.vectors import drivers_of

registry = Registry(selftests="off")

HASHES = {"sha256": "sha256", "sha1": "sha1", "sha3-384": "sha3_384", "md5": "md5"}


@pytest.mark.parametrize(
    ("driver", "hashlib_name"),
    [(driver, peer) for name, peer in HASHES.items() for driver in drivers_of(name)],
)
def test_a_shash_has_pep_452_names(driver, hashlib_name):
    tfm = registry.alloc_shash(driver)
    reference = hashlib.new(hashlib_name)
    assert (tfm.name, tfm.digest_size, tfm.block_size) == (
        tfm.alg_name, reference.digest_size, reference.block_size,
    )  # fmt: skip
    assert (tfm.digestsize, tfm.blocksize) == (tfm.digest_size, tfm.block_size)


def test_a_keyed_shash_has_them_too():
    tfm = registry.alloc_shash("hmac(sha512)")
    assert (tfm.name, tfm.digest_size, tfm.block_size) == ("hmac(sha512)", 64, 128)


def test_digest_is_a_method_with_a_signature_and_a_docstring():
    assert list(inspect.signature(Shash.digest).parameters) == ["self", "data"]
    assert "one message" in (Shash.digest.__doc__ or "")
    tfm = registry.alloc_shash("sha256")
    assert tfm.digest.__func__ is Shash.digest  # type: ignore[attr-defined]
    assert "digest(self, data" in pydoc.render_doc(Shash, renderer=pydoc.plaintext)
    assert not hasattr(tfm, "__dict__")  # __slots__ kept: no per-transform dict


def test_digest_still_hashes_and_still_needs_a_key():
    tfm = registry.alloc_shash("sha256-generic")
    assert tfm.digest(b"abc") == hashlib.sha256(b"abc").digest()
    mac = registry.alloc_shash("hmac(sha256-generic)")
    with pytest.raises(InvalidArgument, match="call setkey"):
        mac.digest(b"abc")
    mac.setkey(b"key")
    assert len(mac.digest(b"abc")) == 32


KEYED_TYPES = {AlgType.CIPHER, AlgType.SKCIPHER, AlgType.AEAD, AlgType.KDF}


def test_algorithms_shows_every_cipher_type_as_keyed():
    registry.alloc_kdf("hkdf(hmac(sha256))")  # KDFs are template instances: build one
    infos = registry.algorithms()
    assert {info.type for info in infos} >= KEYED_TYPES
    for info in infos:
        if info.type in KEYED_TYPES:
            assert info.keyed, info.driver
            assert info.as_dict()["keyed"] is True
    by_driver = {info.driver: info for info in infos}
    assert not by_driver["sha256-generic"].keyed
    assert by_driver["hmac(sha256-generic)"].keyed
    assert by_driver["aes-generic"].keyed


def test_a_cipher_record_is_keyed_whatever_it_was_given():
    def record(type_: AlgType, **extra) -> Algorithm:
        return Algorithm(
            name="x", driver="x-mine", type=type_, priority=1, provider="t", create=object,
            **extra,
        )  # fmt: skip

    assert record(AlgType.SKCIPHER).keyed
    assert record(AlgType.AEAD, keyed=False).keyed
    assert not record(AlgType.SHASH).keyed
    assert record(AlgType.SHASH, keyed=True).keyed


XTS_192 = os.urandom(48)  # OpenSSL has no AES-192-XTS: its driver raises NeedFallback


def openssl_xts_falling_back_to(backup: str) -> Skcipher:
    """xts-aes-openssl whose fallback is ``backup``, as a registry hands it over."""
    return Skcipher(registry.lookup("xts-aes-openssl"), lambda passed: registry.lookup(backup))


@pytest.mark.parametrize("backup", [d for d in drivers_of("xts(aes)") if d != "xts-aes-openssl"])
def test_serving_driver_names_the_fallback_that_took_the_key(backup):
    tfm = openssl_xts_falling_back_to(backup)
    assert tfm.serving_driver == tfm.driver_name == "xts-aes-openssl"  # before any key
    tfm.setkey(XTS_192)
    assert (tfm.driver_name, tfm.serving_driver) == ("xts-aes-openssl", backup)
    reference = registry.alloc_skcipher(backup)
    reference.setkey(XTS_192)
    assert tfm.encrypt(bytes(16), bytes(40)) == reference.encrypt(bytes(16), bytes(40))
    tfm.setkey(os.urandom(64))  # a key OpenSSL has: its own again
    assert tfm.serving_driver == "xts-aes-openssl"


def test_serving_driver_is_what_its_docstring_and_the_readme_say():
    """A 48-byte key on the name's best: the xts template over OpenSSL's AES takes it."""
    tfm = registry.alloc_skcipher("xts(aes)")
    tfm.setkey(XTS_192)
    shown = f"{tfm.driver_name} -> {tfm.serving_driver}"
    assert shown == "xts-aes-openssl -> xts(aes-openssl)"
    assert shown in " ".join(type(tfm).serving_driver.__doc__.split())
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    assert f'print(xts.driver_name, "->", xts.serving_driver) # {shown}\n' in readme


def test_serving_driver_is_the_primary_when_it_takes_the_key():
    for name, key in (("cbc(aes)", bytes(16)), ("xts(aes)", bytes(range(32)))):
        tfm = registry.alloc_skcipher(name)
        tfm.setkey(key)
        assert tfm.serving_driver == tfm.driver_name


def test_a_call_served_by_the_fallback_does_not_change_serving_driver():
    """OpenSSL takes GCM IVs of 8 to 128 bytes; a 7-byte IV is one call for the next."""
    tfm = registry.alloc_aead("gcm-aes-openssl")
    tfm.setkey(bytes(16))
    sealed = tfm.encrypt(bytes(7), b"data")
    assert tfm.decrypt(bytes(7), sealed) == b"data"
    assert tfm.serving_driver == "gcm-aes-openssl"


def test_serving_driver_through_the_registry():
    tfm = registry.alloc_skcipher("xts(aes)")
    tfm.setkey(XTS_192)
    assert tfm.serving_driver in drivers_of("xts(aes)")
    assert tfm.serving_driver != tfm.driver_name
