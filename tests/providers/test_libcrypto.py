"""The libcrypto provider's ESP drivers (``esp_batch.c``) against `cryptography`'s AESGCM,
ChaCha20Poly1305 and AES-CBC with hashlib's HMAC on seeded random inputs, forgeries
refused, bad arguments refused by the extension itself, and its build on first use. (The
published vectors of the names run on them with every other implementation of the names;
the runs are compared with the data path's Python framing in
``tests/esp/test_fastpath.py``.)"""

import hashlib
import hmac
import random

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
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
    with pytest.raises(ValueError, match="IV of 8 bytes"):
        key.seal(bytes(12), b"", b"")
    with pytest.raises(module.Forged):
        key.open(bytes(8), bytes(15), b"")  # shorter than the ICV
    with pytest.raises(ValueError, match="bind"):
        key.open_run([bytes(64)], 0, 1, 10, 1e9)  # no SA bound yet
    key.bind(bytes(4), False, 4)
    with pytest.raises(ValueError, match="outside the payloads"):
        key.open_run([bytes(64)], 2, 1, 10, 1e9)
    with pytest.raises(ValueError, match="IPv4, IPv4 and UDP, or none"):
        key.seal_run([b"\x45" + bytes(19)], 1, 0, b"", bytes(12))
    with pytest.raises(ValueError, match="1 to 65535"):
        key.seal_run([b""], 1, 0, b"", b"")
    with pytest.raises(ValueError, match="too long for its outer header"):
        key.seal_run([b"\x45" + bytes(0xFFF0)], 1, 0, b"", b"\x45" + bytes(19))
    huge = bytes(4) + (1).to_bytes(4, "big") + bytes(0x10000)
    assert key.open_run([huge], 0, 1, 10, 1e9) == ([], b"", 0)  # left to the Python path


def test_a_failed_build_leaves_the_provider_absent(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(extension, "read_source", lambda: b"#error broken on purpose\n")
    with pytest.raises(ModuleNotFoundError, match="broken on purpose") as raised:
        extension.load()
    assert raised.value.name == extension.MODULE  # the registry's "optional library absent"
    assert not list((tmp_path / "cryptoapi").glob("esp_batch-*"))  # nothing half-built kept


AUTHENC = {"sha1": 20, "sha256": 32, "sha384": 48, "sha512": 64}


def cbc(key, iv, data, *, encrypt):
    cipher = Cipher(algorithms.AES(key), modes.CBC(iv))
    made = cipher.encryptor() if encrypt else cipher.decryptor()
    return made.update(data) + made.finalize()


@pytest.mark.parametrize("hash_name", AUTHENC)
@pytest.mark.parametrize("size", [16, 24, 32])
@pytest.mark.parametrize("length", [0, 16, 1408, 4096])
def test_the_authenc_drivers_agree_with_cbc_and_hmac(hash_name, size, length):
    """RFC 4303 §3.3.2 as the authenc template reads it: C = AES-CBC(P), the ICV the
    first bytes of HMAC(assoc || IV || C); here with the full digest and with ESP's half
    (RFC 4868 §2; 12 bytes for SHA-1, RFC 2404)."""
    enckey, authkey = RANDOM.randbytes(size), RANDOM.randbytes(AUTHENC[hash_name])
    iv, assoc, plaintext = RANDOM.randbytes(16), RANDOM.randbytes(8), RANDOM.randbytes(length)
    tfm = REGISTRY.alloc_aead(f"authenc-hmac-{hash_name}-cbc-aes-libcrypto")
    tfm.setkey(size.to_bytes(4, "big") + authkey + enckey)
    ciphertext = cbc(enckey, iv, plaintext, encrypt=True)
    digest = hmac.new(authkey, assoc + iv + ciphertext, hash_name).digest()
    for icv in (len(digest), 12 if hash_name == "sha1" else len(digest) // 2):
        tfm.setauthsize(icv)
        sealed = tfm.encrypt(iv, plaintext, assoc)
        assert sealed == ciphertext + digest[:icv]
        assert tfm.decrypt(iv, bytearray(sealed), memoryview(assoc)) == plaintext
        for at in {0, len(sealed) - 1}:  # a flipped bit in the ciphertext or in the ICV
            forged = bytearray(sealed)
            forged[at] ^= 1
            with pytest.raises(BadMessage, match="tag does not verify"):
                tfm.decrypt(iv, bytes(forged), assoc)


def test_a_cbc_run_with_esn_authenticates_the_high_bits_after_the_payload():
    """RFC 4303 §2.2.1 and §3.3.2.1: with ESN the ICV covers SPI, the low 32 bits, the IV
    and the ciphertext, then the high 32 bits, which are not sent; the run crosses 2^32."""
    module = extension.load()
    enckey, authkey, spi = RANDOM.randbytes(16), RANDOM.randbytes(32), RANDOM.randbytes(4)
    key = module.EtmKey("AES-128-CBC", enckey, "SHA256", authkey, 16)
    key.bind(spi, True, 16)
    inner = [b"\x45" + RANDOM.randbytes(n) for n in (39, 99, 1399)]
    ivs, first = RANDOM.randbytes(16 * len(inner)), 2**32 - 2
    sealed = key.seal_run(inner, first, 0, ivs, b"")
    for number, (esp, packet) in enumerate(zip(sealed, inner, strict=True)):
        seq, iv = first + number, ivs[16 * number : 16 * number + 16]
        assert esp[:8] == spi + (seq & 0xFFFFFFFF).to_bytes(4, "big") and esp[8:24] == iv
        ciphertext, icv = esp[24:-16], esp[-16:]
        high = (seq >> 32).to_bytes(4, "big")
        assert icv == hmac.new(authkey, esp[:-16] + high, hashlib.sha256).digest()[:16]
        plain = cbc(enckey, iv, ciphertext, encrypt=False)
        pad = plain[-2]
        assert plain[: -2 - pad] == packet and plain[-1] == 4  # IPv4 inside
    opened, next_headers, cause = key.open_run(sealed, 0, first, 10, 1e9)
    assert (opened, next_headers, cause) == (inner, bytes((4, 4, 4)), 0)
    assert key.open_run(sealed, 0, first + 2**32, 10, 1e9)[2] == 2  # other high bits: forged


def test_the_extension_refuses_what_it_cannot_take_for_cbc():
    module = extension.load()
    with pytest.raises(ValueError, match="block cipher mode named AES-128-GCM"):
        module.EtmKey("AES-128-GCM", bytes(16), "SHA256", bytes(32), 16)
    with pytest.raises(ValueError, match="no 17-byte key block cipher mode"):
        module.EtmKey("AES-128-CBC", bytes(17), "SHA256", bytes(32), 16)
    with pytest.raises(ValueError, match="no HMAC over a digest named NOPE"):
        module.EtmKey("AES-128-CBC", bytes(16), "NOPE", bytes(32), 16)
    for taglen in (0, 33):
        with pytest.raises(ValueError, match="ICV of 1 byte to the whole digest"):
            module.EtmKey("AES-128-CBC", bytes(16), "SHA256", bytes(32), taglen)
    key = module.EtmKey("AES-128-CBC", bytes(16), "SHA256", bytes(32), 16)
    with pytest.raises(ValueError, match="IV of 16 bytes"):
        key.seal(bytes(8), bytes(16), b"")
    with pytest.raises(ValueError, match="whole 16-byte blocks"):
        key.seal(bytes(16), bytes(15), b"")
    with pytest.raises(ValueError, match="whole 16-byte blocks"):
        key.open(bytes(16), bytes(17 + 16), b"")
    with pytest.raises(ValueError, match="whole blocks"):
        key.bind(bytes(4), False, 4)  # ESP's padding must reach the cipher's block
    key.bind(bytes(4), False, 16)
    with pytest.raises(ValueError, match="random IVs, one per packet"):
        key.seal_run([b"\x45" + bytes(19)] * 2, 1, 0, bytes(16), b"")
    aead = module.Key("AES-128-GCM", bytes(16), bytes(4), 16)
    aead.bind(bytes(4), False, 4)
    with pytest.raises(ValueError, match="none for an AEAD"):
        aead.seal_run([b"\x45" + bytes(19)], 1, 0, bytes(16), b"")
