"""wolfCrypt's drivers (through the wolfcrypt binding) against independent implementations:
hashlib and `cryptography` on seeded random inputs, forgeries refused, bad keys and the
fallbacks for what wolfSSL lacks. (The published vectors of each name run on them too,
with every other implementation of the name.)"""

import hashlib
import random

import pytest

from cryptoapi import BadMessage, InvalidArgument, InvalidKey, Registry

pytest.importorskip(
    "wolfcrypt", reason="the wolfcrypt binding is not installed (scripts/system-deps builds it)"
)

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from tests.providers.agreement import check_chacha20

REGISTRY = Registry("off")
RANDOM = random.Random(20261216)
LENGTHS = (0, 1, 15, 16, 17, 63, 64, 65, 127, 128, 129, 1000, 4099)
HASHES = ("sha1", "sha256", "sha384", "sha512", "sha3-224", "sha3-256", "sha3-384", "sha3-512")


def _hashlib_name(name):
    return name.replace("-", "_")


@pytest.mark.parametrize("name", HASHES)
@pytest.mark.parametrize("length", LENGTHS)
def test_hashes_agree_with_hashlib_one_shot_streamed_and_copied(name, length):
    message = RANDOM.randbytes(length)
    expected = hashlib.new(_hashlib_name(name), message).digest()
    tfm = REGISTRY.alloc_shash(f"{name}-wolfcrypt")
    assert tfm.digest(memoryview(message)) == expected
    desc = tfm.init()
    desc.update(message[: length // 3])
    copied = desc.copy()  # the binding's own copy of a SHA-3 state loses its size
    desc.update(message[length // 3 :])
    copied.update(bytearray(message[length // 3 :]))
    assert desc.final() == copied.final() == expected


def test_a_hash_refuses_text():
    with pytest.raises(TypeError):
        REGISTRY.alloc_shash("sha256-wolfcrypt").init().update("abc")


def _openssl(key, mode):
    return Cipher(algorithms.AES(key), mode)


@pytest.mark.parametrize("keysize", [16, 24, 32])
@pytest.mark.parametrize("blocks", [0, 1, 2, 5])
def test_cbc_and_the_block_agree_with_cryptography(keysize, blocks):
    key, iv, data = RANDOM.randbytes(keysize), RANDOM.randbytes(16), RANDOM.randbytes(16 * blocks)
    cbc = REGISTRY.alloc_skcipher("cbc-aes-wolfcrypt")
    cbc.setkey(key)
    expected = _openssl(key, modes.CBC(iv)).encryptor().update(data)
    assert cbc.encrypt(iv, data) == expected
    assert cbc.encrypt(iv, data) == expected  # no chaining state left from the last call
    assert cbc.decrypt(iv, expected) == data
    block = REGISTRY.alloc_cipher("aes-wolfcrypt")
    block.setkey(key)
    if blocks:
        assert block.encrypt(data[:16]) == _openssl(key, modes.ECB()).encryptor().update(data[:16])
        assert block.decrypt(block.encrypt(data[:16])) == data[:16]


@pytest.mark.parametrize("length", LENGTHS)
def test_ctr_agrees_with_cryptography_across_the_128_bit_counter(length):
    key, data = RANDOM.randbytes(16), RANDOM.randbytes(length)
    iv = bytes([0xFF] * 15 + [0xFE])  # the counter carries through all 16 bytes and wraps
    tfm = REGISTRY.alloc_skcipher("ctr-aes-wolfcrypt")
    tfm.setkey(key)
    expected = _openssl(key, modes.CTR(iv)).encryptor().update(data)
    assert tfm.encrypt(iv, data) == expected
    assert tfm.decrypt(iv, expected) == data


@pytest.mark.parametrize("length", LENGTHS)
def test_chacha20_agrees_with_cryptography(length):
    check_chacha20(REGISTRY, "chacha20-wolfcrypt", RANDOM, length, counter_limit=1 << 20)


@pytest.mark.parametrize("length", LENGTHS)
@pytest.mark.parametrize("keysize", [16, 32])
def test_gcm_agrees_with_cryptography(length, keysize):
    key, iv = RANDOM.randbytes(keysize), RANDOM.randbytes(12)
    data, assoc = RANDOM.randbytes(length), RANDOM.randbytes(length % 40)
    tfm = REGISTRY.alloc_aead("gcm-aes-wolfcrypt")
    tfm.setkey(key)
    sealed = tfm.encrypt(iv, data, assoc)
    assert sealed == AESGCM(key).encrypt(iv, data, assoc)
    assert tfm.decrypt(iv, sealed, assoc) == data


@pytest.mark.parametrize("authsize", [4, 8, 12, 16])
@pytest.mark.parametrize("ivsize", [1, 8, 16, 17, 64])
def test_gcm_short_tags_and_other_iv_sizes_agree_with_the_generic_one(authsize, ivsize):
    """IVs past wolfSSL's 16 bytes are served by the next implementation (NeedFallback)."""
    key, iv, data = RANDOM.randbytes(16), RANDOM.randbytes(ivsize), RANDOM.randbytes(37)
    sealed = []
    for driver in ("gcm-aes-wolfcrypt", "gcm(aes-generic)"):
        tfm = REGISTRY.alloc_aead(driver)
        tfm.setkey(key)
        tfm.setauthsize(authsize)
        sealed.append(tfm.encrypt(iv, data, b"hdr"))
        assert tfm.decrypt(iv, sealed[-1], b"hdr") == data
    assert sealed[0] == sealed[1] and len(sealed[0]) == 37 + authsize


@pytest.mark.parametrize("authsize", [4, 16])
def test_a_gcm_forgery_is_refused(authsize):
    tfm = REGISTRY.alloc_aead("gcm-aes-wolfcrypt")
    tfm.setkey(bytes(16))
    tfm.setauthsize(authsize)
    iv = bytes(12)
    sealed = tfm.encrypt(iv, b"attack at dawn", b"hdr")
    for position in (0, len(sealed) - 1):
        forged = bytearray(sealed)
        forged[position] ^= 1
        with pytest.raises(BadMessage, match="gcm"):
            tfm.decrypt(iv, bytes(forged), b"hdr")
    with pytest.raises(BadMessage):
        tfm.decrypt(iv, sealed, b"other header")


@pytest.mark.parametrize(
    ("driver", "alloc", "key"),
    [
        ("aes-wolfcrypt", "alloc_cipher", bytes(20)),
        ("cbc-aes-wolfcrypt", "alloc_skcipher", bytes(15)),
        ("ctr-aes-wolfcrypt", "alloc_skcipher", bytes(33)),
        ("chacha20-wolfcrypt", "alloc_skcipher", bytes(16)),
        ("gcm-aes-wolfcrypt", "alloc_aead", bytes(8)),
    ],
)
def test_a_key_of_the_wrong_size_is_refused(driver, alloc, key):
    tfm = getattr(REGISTRY, alloc)(driver)
    with pytest.raises(InvalidKey):
        tfm.setkey(key)


def test_cbc_refuses_a_partial_block():
    tfm = REGISTRY.alloc_skcipher("cbc-aes-wolfcrypt")
    tfm.setkey(bytes(16))
    with pytest.raises(InvalidArgument):
        tfm.encrypt(bytes(16), bytes(17))


def test_the_drivers_are_the_fuzzers_opinions_with_their_library_named():
    from cryptoapi.selftest.fuzz.libraries import library
    from cryptoapi.selftest.fuzz.references import OPINION_PROVIDERS

    assert "wolfcrypt" in OPINION_PROVIDERS
    assert library("wolfcrypt").startswith("wolfSSL ")
    assert "gcm-aes-wolfcrypt" in REGISTRY.implementations("gcm(aes)")


def test_wolfcrypt_votes_in_the_majority_that_names_a_faulty_driver(monkeypatch):
    pytest.importorskip("Crypto")
    pytest.importorskip("nacl")
    from cryptoapi.selftest.fuzz import fuzz, opinions_for, reference_for

    monkeypatch.setenv("CRYPTOAPI_FAULT", "sha256-openssl")
    faulty = Registry("off")
    impl = faulty.lookup("sha256-openssl")
    others = opinions_for(faulty, impl)
    assert {alg.provider for alg in others} == {"pycryptodome", "sodium", "wolfcrypt"}
    result = fuzz(faulty.new_transform, impl, reference_for(faulty, impl), 3, iterations=100,
                  others=others)  # fmt: skip
    assert result.mismatch is not None
    verdict = result.mismatch.verdict
    assert verdict.startswith("odd one out: sha256-openssl [OpenSSL "), verdict
    assert verdict.endswith("(4 of 5 agree)")
