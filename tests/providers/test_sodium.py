"""libsodium's drivers (through PyNaCl and pysodium) against independent implementations:
hashlib, the standard hmac and `cryptography` on seeded random inputs, and forgeries refused.
(The published vectors of each name run on them too, with every other implementation of the
name; the partial AES-256-GCM driver's self-test is checked here.)"""

import hashlib
import hmac
import random

import pytest

from cryptoapi import BadMessage, InvalidArgument, InvalidKey, Registry, SelfTestFailed

pytest.importorskip("nacl")

from cryptography.hazmat.primitives import poly1305
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305

from cryptoapi.registry.manifest import UNSERVED
from cryptoapi.selftest.kat import run_known_answers
from cryptoapi.selftest.vectors import vectors_for
from tests.providers.agreement import check_chacha20

REGISTRY = Registry("off")
RANDOM = random.Random(20261201)
LENGTHS = (0, 1, 15, 16, 17, 63, 64, 65, 127, 128, 129, 1000, 4099)


@pytest.mark.parametrize("name", ["sha256", "sha512"])
@pytest.mark.parametrize("length", LENGTHS)
def test_hashes_agree_with_hashlib_one_shot_and_streamed(name, length):
    message = RANDOM.randbytes(length)
    tfm = REGISTRY.alloc_shash(f"{name}-sodium")
    assert tfm.digest(message) == hashlib.new(name, message).digest()
    desc = tfm.init()
    desc.update(message[: length // 3])
    copied = desc.copy()
    desc.update(message[length // 3 :])
    copied.update(message[length // 3 :])
    assert desc.final() == copied.final() == hashlib.new(name, message).digest()


needs_aesni = pytest.mark.skipif(
    "gcm-aes-sodium" not in REGISTRY.implementations("gcm(aes)"),
    reason="libsodium's AES-256-GCM needs AES-NI and CLMUL on this CPU",
)


AEADS = [
    ("rfc7539-chacha20-poly1305-sodium", ChaCha20Poly1305),
    pytest.param("gcm-aes-sodium", AESGCM, marks=needs_aesni),  # AES-256 keys only
]


@pytest.mark.parametrize(("driver", "peer"), AEADS)
@pytest.mark.parametrize("length", LENGTHS)
def test_aeads_agree_with_cryptography(driver, peer, length):
    key, nonce = RANDOM.randbytes(32), RANDOM.randbytes(12)
    data, assoc = RANDOM.randbytes(length), RANDOM.randbytes(length % 40)
    tfm = REGISTRY.alloc_aead(driver)
    tfm.setkey(key)
    sealed = tfm.encrypt(nonce, data, assoc)
    assert sealed == peer(key).encrypt(nonce, data, assoc)
    assert tfm.decrypt(nonce, sealed, assoc) == data
    assert tfm.serving_driver == driver  # served by itself, not by a fallback


@pytest.mark.parametrize("length", LENGTHS)
def test_xchacha20poly1305_agrees_with_the_other_implementations(length):
    key, nonce = RANDOM.randbytes(32), RANDOM.randbytes(24)
    data, assoc = RANDOM.randbytes(length), RANDOM.randbytes(length % 40)
    sealed = {}
    for driver in REGISTRY.implementations("xchacha20poly1305"):
        tfm = REGISTRY.alloc_aead(driver)
        tfm.setkey(key)
        sealed[driver] = tfm.encrypt(nonce, data, assoc)
    assert "xchacha20poly1305-sodium" in sealed and len(sealed) >= 3
    assert len(set(sealed.values())) == 1, sealed


@pytest.mark.parametrize("driver", ["rfc7539-chacha20-poly1305-sodium", "xchacha20poly1305-sodium"])
def test_a_forgery_is_refused_and_a_short_key_too(driver):
    tfm = REGISTRY.alloc_aead(driver)
    tfm.setkey(bytes(32))
    iv = bytes(tfm.ivsize)
    sealed = bytearray(tfm.encrypt(iv, b"attack at dawn", b"hdr"))
    sealed[0] ^= 1
    with pytest.raises(BadMessage):
        tfm.decrypt(iv, bytes(sealed), b"hdr")
    with pytest.raises(InvalidKey):
        tfm.setkey(bytes(16))


# --- AES-256-GCM (PyNaCl; a partial gcm(aes): AES-256, 12-byte IVs, 16-byte tags) ----------


@needs_aesni
@pytest.mark.parametrize(
    ("keysize", "ivsize", "authsize"),
    [(16, 12, 16), (24, 12, 16), (32, 8, 16), (32, 60, 16), (32, 12, 12)],
)
def test_aes256gcm_hands_what_libsodium_lacks_to_the_next_driver(keysize, ivsize, authsize):
    key, nonce, data = RANDOM.randbytes(keysize), RANDOM.randbytes(ivsize), RANDOM.randbytes(50)
    tfm = REGISTRY.alloc_aead("gcm-aes-sodium")
    tfm.setkey(key)
    tfm.setauthsize(authsize)
    expected = AESGCM(key).encrypt(nonce, data, b"hdr")
    expected = expected[: len(data) + authsize]
    assert tfm.encrypt(nonce, data, b"hdr") == expected
    assert tfm.decrypt(nonce, expected, b"hdr") == data
    if keysize != 32:
        assert tfm.serving_driver != "gcm-aes-sodium"


@needs_aesni
def test_aes256gcm_refuses_a_forgery():
    tfm = REGISTRY.alloc_aead("gcm-aes-sodium")
    tfm.setkey(bytes(32))
    sealed = bytearray(tfm.encrypt(bytes(12), b"attack at dawn", b"hdr"))
    sealed[-1] ^= 1
    with pytest.raises(BadMessage):
        tfm.decrypt(bytes(12), bytes(sealed), b"hdr")


@needs_aesni
@pytest.mark.parametrize("name", ["gcm(aes)", "rfc4106(gcm(aes))"])
def test_the_partial_driver_passes_on_the_aes256_vectors_it_serves(name):
    driver = "gcm-aes-sodium" if name == "gcm(aes)" else "rfc4106(gcm-aes-sodium)"
    alg = REGISTRY.lookup(driver)
    vectors = vectors_for(name)
    assert any(len(v["key"]) // 2 in (32, 36) for v in vectors)  # AES-256 ones are there
    assert any(len(v["key"]) // 2 in (16, 20) for v in vectors)  # and some it skips
    run_known_answers(alg, vectors, corrupt=False)
    with pytest.raises(SelfTestFailed, match="mismatch"):  # what it serves is really checked
        run_known_answers(alg, vectors, corrupt=True)


@needs_aesni
def test_a_partial_driver_serving_no_vector_fails_and_the_name_falls_back():
    """draft-mcgrew-gcm-test-01 has no AES-256 AES-GMAC-ESP case (its only one is
    AES-128), so rfc4543 over libsodium's AES-256-only GCM has nothing to be tested on."""
    registry = Registry("lazy")
    alg = registry.lookup("rfc4543(gcm(aes))")  # the best one that passed
    with pytest.raises(SelfTestFailed, match="serves none"):
        run_known_answers(
            REGISTRY.lookup("rfc4543(gcm-aes-sodium)"), vectors_for(alg.name), corrupt=False
        )
    tfm = registry.alloc_aead("rfc4543(gcm(aes))")
    assert tfm.driver_name != "rfc4543(gcm-aes-sodium)"


@needs_aesni
def test_the_instance_no_vector_can_test_is_left_out_of_every_listing():
    """manifest.UNSERVED keeps it out of ``implementations`` (and so out of
    ``cryptoapi selftest`` and the fuzzer), for as long as the test above shows it is
    needed: an AES-256 RFC 4543 vector added to the KATs makes that test fail first."""
    assert "rfc4543(gcm-aes-sodium)" in UNSERVED
    registry = Registry("lazy")
    drivers = registry.implementations("rfc4543(gcm(aes))")
    assert "rfc4543(gcm-aes-sodium)" not in drivers and "gcm-aes-sodium" in (
        registry.implementations("gcm(aes)")
    )
    assert "rfc4106(gcm-aes-sodium)" in registry.implementations("rfc4106(gcm(aes))")


# --- pysodium: Poly1305, HMAC-SHA-256/512, ChaCha20 and XChaCha20 streams ------------------

pysodium_drivers = pytest.mark.skipif(
    "poly1305-sodium" not in REGISTRY.implementations("poly1305"),
    reason="pysodium or the system libsodium (scripts/system-deps) is not installed",
)


def _streamed(tfm, message):
    desc = tfm.init()
    desc.update(message[: len(message) // 3])
    copied = desc.copy()
    desc.update(message[len(message) // 3 :])
    copied.update(message[len(message) // 3 :])
    return desc.final(), copied.final()


@pysodium_drivers
@pytest.mark.parametrize("length", LENGTHS)
def test_poly1305_agrees_with_cryptography(length):
    key, message = RANDOM.randbytes(32), RANDOM.randbytes(length)
    tfm = REGISTRY.alloc_shash("poly1305-sodium")
    tfm.setkey(key)
    expected = poly1305.Poly1305.generate_tag(key, message)
    assert tfm.digest(message) == expected
    assert _streamed(tfm, message) == (expected, expected)
    with pytest.raises(InvalidKey):
        tfm.setkey(bytes(16))


@pysodium_drivers
@pytest.mark.parametrize("bits", [256, 512])
@pytest.mark.parametrize("keysize", [0, 1, 20, 32, 64, 65, 128, 129, 200])
def test_hmac_agrees_with_the_standard_library(bits, keysize):
    key, message = RANDOM.randbytes(keysize), RANDOM.randbytes(RANDOM.choice(LENGTHS))
    tfm = REGISTRY.alloc_shash(f"hmac-sha{bits}-sodium")
    tfm.setkey(key)
    expected = hmac.digest(key, message, f"sha{bits}")
    assert tfm.digest(message) == expected
    assert _streamed(tfm, message) == (expected, expected)


@pysodium_drivers
@pytest.mark.parametrize("length", LENGTHS)
def test_chacha20_agrees_with_cryptography(length):
    check_chacha20(REGISTRY, "chacha20-sodium", RANDOM, length, counter_limit=1 << 31)


@pysodium_drivers
@pytest.mark.parametrize("driver", ["chacha20-sodium", "xchacha20-sodium"])
def test_a_keystream_past_the_32_bit_counter_is_refused_as_elsewhere(driver):
    tfm = REGISTRY.alloc_skcipher(driver)
    tfm.setkey(bytes(32))
    last = (0xFFFFFFFF).to_bytes(4, "little")
    iv = last + bytes(12) if driver.startswith("chacha20") else bytes(24) + last + bytes(4)
    assert len(tfm.encrypt(iv, bytes(64))) == 64  # the last block is still there
    with pytest.raises(InvalidArgument, match="would wrap"):
        tfm.encrypt(iv, bytes(65))


@pysodium_drivers
@pytest.mark.parametrize("length", LENGTHS)
def test_xchacha20_agrees_with_the_other_implementations(length):
    key, data = RANDOM.randbytes(32), RANDOM.randbytes(length)
    position = RANDOM.randrange(1 << 20) | RANDOM.randrange(1 << 32) << 32  # high word too
    iv = RANDOM.randbytes(24) + position.to_bytes(8, "little")
    out = {}
    for driver in REGISTRY.implementations("xchacha20"):
        tfm = REGISTRY.alloc_skcipher(driver)
        tfm.setkey(key)
        out[driver] = tfm.encrypt(iv, data)
    assert "xchacha20-sodium" in out and len(out) >= 3
    assert len(set(out.values())) == 1, out


@pytest.mark.parametrize("size", [20, 32, 48, 64])
@pytest.mark.parametrize("keysize", [0, 1, 32, 64])
def test_blake2b_agrees_with_hashlib(size, keysize):
    key, message = RANDOM.randbytes(keysize), RANDOM.randbytes(RANDOM.choice(LENGTHS))
    tfm = REGISTRY.alloc_shash(f"blake2b-{size * 8}-sodium")
    if key:
        tfm.setkey(key)
    expected = hashlib.blake2b(message, digest_size=size, key=key).digest()
    assert tfm.digest(message) == expected
    assert _streamed(tfm, message) == (expected, expected)
    with pytest.raises(InvalidKey):
        tfm.setkey(bytes(65))
