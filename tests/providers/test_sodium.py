"""libsodium's drivers (through PyNaCl) against independent implementations: hashlib and
`cryptography` on seeded random inputs, and forgeries refused. (The published vectors of
each name run on them too, with every other implementation of the name.)"""

import hashlib
import random

import pytest

from cryptoapi import BadMessage, InvalidKey, Registry

pytest.importorskip("nacl")

from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

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


@pytest.mark.parametrize("length", LENGTHS)
def test_chacha20poly1305_agrees_with_cryptography(length):
    key, nonce = RANDOM.randbytes(32), RANDOM.randbytes(12)
    data, assoc = RANDOM.randbytes(length), RANDOM.randbytes(length % 40)
    tfm = REGISTRY.alloc_aead("rfc7539-chacha20-poly1305-sodium")
    tfm.setkey(key)
    sealed = tfm.encrypt(nonce, data, assoc)
    assert sealed == ChaCha20Poly1305(key).encrypt(nonce, data, assoc)
    assert tfm.decrypt(nonce, sealed, assoc) == data


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
