"""The libcrypto provider's ESP drivers (``esp_batch.c``) against `cryptography`'s AESGCM and
ChaCha20Poly1305 on seeded random inputs, forgeries refused, bad arguments refused by the
extension itself, and its build on first use. (The published vectors of both names run on
them with every other implementation of the names; the runs are compared with the data
path's Python framing in ``tests/esp/test_fastpath.py``.)"""

import random

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305

from cryptoapi import BadMessage, InvalidKey, Registry
from cryptoapi.providers.libcrypto import extension

REGISTRY = Registry("off")
RANDOM = random.Random(20261206)
LENGTHS = (0, 1, 15, 16, 17, 255, 1400, 4099)
DRIVERS = {
    "rfc4106-gcm-aes-libcrypto": (AESGCM, (16, 24, 32)),
    "rfc7539esp-chacha20-poly1305-libcrypto": (ChaCha20Poly1305, (32,)),
}


def _drivers():
    return [(driver, size) for driver, (_, sizes) in DRIVERS.items() for size in sizes]


@pytest.mark.parametrize(("driver", "size"), _drivers())
@pytest.mark.parametrize("length", LENGTHS)
def test_the_drivers_agree_with_cryptography(driver, size, length):
    independent, _ = DRIVERS[driver]
    key, salt = RANDOM.randbytes(size), RANDOM.randbytes(4)
    iv, assoc, plaintext = RANDOM.randbytes(8), RANDOM.randbytes(8), RANDOM.randbytes(length)
    tfm = REGISTRY.alloc_aead(driver)
    tfm.setkey(key + salt)
    sealed = tfm.encrypt(iv, plaintext, assoc)
    assert sealed == independent(key).encrypt(salt + iv, plaintext, assoc)
    assert tfm.decrypt(iv, bytearray(sealed), memoryview(assoc)) == plaintext
    for at in (0, len(sealed) - 1):  # a flipped bit in the ciphertext or in the ICV
        forged = bytearray(sealed)
        forged[at] ^= 1
        with pytest.raises(BadMessage, match="tag does not verify"):
            tfm.decrypt(iv, bytes(forged), assoc)


@pytest.mark.parametrize("icv", [8, 12])
def test_a_truncated_icv_is_the_full_one_cut(icv):
    key, salt = RANDOM.randbytes(16), RANDOM.randbytes(4)
    iv, assoc, plaintext = RANDOM.randbytes(8), RANDOM.randbytes(12), RANDOM.randbytes(100)
    tfm = REGISTRY.alloc_aead("rfc4106-gcm-aes-libcrypto")
    tfm.setkey(key + salt)
    tfm.setauthsize(icv)
    full = AESGCM(key).encrypt(salt + iv, plaintext, assoc)
    assert tfm.encrypt(iv, plaintext, assoc) == full[: 100 + icv]
    assert tfm.decrypt(iv, full[: 100 + icv], assoc) == plaintext
    with pytest.raises(BadMessage):
        tfm.decrypt(iv, full[: 100 + icv - 1] + b"\0", assoc)


def test_keys_of_other_lengths_are_refused_and_never_shown():
    tfm = REGISTRY.alloc_aead("rfc4106-gcm-aes-libcrypto")
    with pytest.raises(InvalidKey, match="20, 28, 36 bytes"):
        tfm.setkey(bytes(21))
    secret = bytes(range(1, 21))
    tfm.setkey(secret)
    shown = repr(tfm) + repr(tfm._core)
    assert secret.hex() not in shown and repr(secret) not in shown


def test_the_extension_refuses_what_it_cannot_take():
    module = extension.load()
    with pytest.raises(ValueError, match="4-byte salt"):
        module.Key("AES-128-GCM", bytes(16), bytes(3), 16)
    with pytest.raises(ValueError, match="no 17-byte key AEAD named AES-128-GCM"):
        module.Key("AES-128-GCM", bytes(17), bytes(4), 16)
    with pytest.raises(ValueError, match="named AES-128-CBC"):  # not an AEAD with a 12-byte nonce
        module.Key("AES-128-CBC", bytes(16), bytes(4), 16)
    key = module.Key("AES-128-GCM", bytes(16), bytes(4), 16)
    with pytest.raises(TypeError, match="iv must be bytes"):
        key.seal(bytearray(8), b"", b"")
    with pytest.raises(ValueError, match="8-byte IV"):
        key.seal(bytes(12), b"", b"")
    with pytest.raises(module.Forged):
        key.open(bytes(8), bytes(15), b"")  # shorter than the ICV
    with pytest.raises(ValueError, match="bind"):
        key.open_run([bytes(64)], 0, 1, 10, 1e9)  # no SA bound yet
    key.bind(bytes(4), False, 4)
    with pytest.raises(ValueError, match="outside the payloads"):
        key.open_run([bytes(64)], 2, 1, 10, 1e9)
    with pytest.raises(ValueError, match="IPv4, IPv4 and UDP, or none"):
        key.seal_run([b"\x45" + bytes(19)], 1, 0, bytes(12), 0)
    with pytest.raises(ValueError, match="1 to 65535"):
        key.seal_run([b""], 1, 0, b"", 0)
    with pytest.raises(ValueError, match="too long for its outer header"):
        key.seal_run([b"\x45" + bytes(0xFFF0)], 1, 0, b"\x45" + bytes(19), 0)
    huge = bytes(4) + (1).to_bytes(4, "big") + bytes(0x10000)
    assert key.open_run([huge], 0, 1, 10, 1e9) == ([], b"", 0)  # left to the Python path


def test_a_failed_build_leaves_the_provider_absent(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(extension, "read_source", lambda: b"#error broken on purpose\n")
    with pytest.raises(ModuleNotFoundError, match="broken on purpose") as raised:
        extension.load()
    assert raised.value.name == extension.MODULE  # the registry's "optional library absent"
    assert not list((tmp_path / "cryptoapi").glob("esp_batch-*"))  # nothing half-built kept
