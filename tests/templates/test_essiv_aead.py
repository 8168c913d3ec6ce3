"""``essiv(authenc(hmac(sha256),cbc(aes)),sha256)``, the AEAD form of essiv, on every
implementation: the kernel's testmgr vectors (``essiv_hmac_sha256_aes_cbc_tv_temp``,
``data/testmgr_essiv_aead.json``) converted to this package's conventions, and an
independent computation from cryptography's AES and the standard library's hashlib and
hmac, itself checked against the kernel's vectors in the kernel's own layout."""

import hashlib
import hmac
import os
import random

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from cryptoapi import AlgorithmNotFound, BadMessage, InvalidArgument, InvalidKey, Registry
from tests.vectors import authenc_key, drivers_of, load_testmgr

NAME = "essiv(authenc(hmac(sha256),cbc(aes)),sha256)"
KERNEL = load_testmgr("templates/data/testmgr_essiv_aead.json")
SLOT = 16  # the IV at the end of the kernel's assoc
registry = Registry(selftests="off")


def _aes(key: bytes, mode: modes.Mode, data: bytes) -> bytes:
    encryptor = Cipher(algorithms.AES(key), mode).encryptor()
    return encryptor.update(data) + encryptor.finalize()


def _reference(
    key: bytes, iv: bytes, plaintext: bytes, assoc: bytes, authsize: int = 32
) -> tuple[bytes, bytes]:
    """ESSIV over authenc in the kernel's layout (``crypto/essiv.c``): the salt is
    SHA-256(enckey || authkey), IV' = AES_salt(IV) is written over the assoc's last 16
    bytes, and authenc MACs that assoc, then the CBC ciphertext under IV'. Returns the
    sealed message and IV'."""
    enckeylen = int.from_bytes(key[:4], "big")
    authkey, enckey = key[4 : len(key) - enckeylen], key[len(key) - enckeylen :]
    essiv = _aes(hashlib.sha256(enckey + authkey).digest(), modes.ECB(), iv)
    ciphertext = _aes(enckey, modes.CBC(essiv), plaintext)
    tag = hmac.new(authkey, assoc[:-SLOT] + essiv + ciphertext, "sha256").digest()
    return ciphertext + tag[:authsize], essiv


@pytest.mark.parametrize("vector", KERNEL, ids=[f"vector {i}" for i in range(1, len(KERNEL) + 1)])
def test_the_reference_meets_the_kernels_vectors_in_the_kernels_layout(vector):
    """The kernel's vectors hold IV' in the assoc's slot (testmgr checks the buffer the
    kernel wrote it into): the reference reproduces the sealed message and that IV'."""
    key = authenc_key(vector["key"])
    sealed, essiv = _reference(key, vector["iv"], vector["ptext"], vector["assoc"])
    assert sealed == vector["ctext"]
    assert essiv == vector["assoc"][-SLOT:]


@pytest.mark.parametrize("driver", drivers_of(NAME))
def test_kernel_vectors_on_every_implementation(driver):
    """Each vector with the rtattr taken off its key and the IV's slot off its assoc (this
    package authenticates IV' after the assoc, where the kernel writes it into the slot)."""
    tfm = registry.alloc_aead(driver)
    for vector in KERNEL:
        tfm.setkey(authenc_key(vector["key"]))
        assoc = vector["assoc"][:-SLOT]
        assert tfm.encrypt(vector["iv"], vector["ptext"], assoc) == vector["ctext"]
        assert tfm.decrypt(vector["iv"], vector["ctext"], assoc) == vector["ptext"]


def _random_case(rng: random.Random, enckeylen: int) -> tuple[bytes, bytes, bytes, bytes]:
    authkey = rng.randbytes(rng.choice((20, 32, 64, 100)))
    key = enckeylen.to_bytes(4, "big") + authkey + rng.randbytes(enckeylen)
    plaintext = rng.randbytes(16 * rng.randrange(0, 9))
    return key, rng.randbytes(16), plaintext, rng.randbytes(rng.randrange(0, 40))


@pytest.mark.parametrize("driver", drivers_of(NAME))
def test_every_implementation_agrees_with_an_independent_computation(driver):
    rng = random.Random(driver)  # a seed per driver: a failure replays as it is
    tfm = registry.alloc_aead(driver)
    for enckeylen in (16, 24, 32):
        key, iv, plaintext, assoc = _random_case(rng, enckeylen)
        in_kernel_layout = assoc + bytes(SLOT)  # the slot's content does not matter there
        sealed, _ = _reference(key, iv, plaintext, in_kernel_layout)
        tfm.setkey(key)
        tfm.setauthsize(32)
        assert tfm.encrypt(iv, plaintext, assoc) == sealed, (key.hex(), iv.hex())
        assert tfm.decrypt(iv, sealed, assoc) == plaintext
        tfm.setauthsize(16)  # HMAC-SHA-256-128, as IPsec and dm-crypt truncate
        truncated, _ = _reference(key, iv, plaintext, in_kernel_layout, authsize=16)
        assert tfm.encrypt(iv, plaintext, assoc) == truncated


@pytest.mark.parametrize("driver", drivers_of(NAME)[:1] + drivers_of(NAME)[-1:])
def test_forgeries_are_refused(driver):
    tfm = registry.alloc_aead(driver)
    tfm.setkey(authenc_key(KERNEL[4]["key"]))
    iv, sealed, assoc = KERNEL[4]["iv"], KERNEL[4]["ctext"], KERNEL[4]["assoc"][:-SLOT]
    other_iv = bytes([iv[0] ^ 1]) + iv[1:]  # another sector: another IV', another tag
    for args in (
        (iv, sealed[:-1] + bytes([sealed[-1] ^ 1]), assoc),
        (iv, bytes([sealed[0] ^ 1]) + sealed[1:], assoc),
        (iv, sealed, assoc[:-1] + bytes([assoc[-1] ^ 1])),
        (other_iv, sealed, assoc),
    ):
        with pytest.raises(BadMessage):
            tfm.decrypt(*args)


def test_sizes_are_authencs_and_the_best_driver_is_openssls():
    tfm = registry.alloc_aead(NAME)
    assert (tfm.ivsize, tfm.maxauthsize, tfm.authsize) == (16, 32, 32)
    assert (tfm.min_keysize, tfm.max_keysize) == (4 + 16, 4 + 1024 + 32)
    assert tfm.driver_name.endswith("sha256-openssl)")
    tfm.setkey(authenc_key(KERNEL[0]["key"]))
    with pytest.raises(InvalidArgument):
        tfm.encrypt(bytes(16), bytes(15), b"")  # CBC: whole blocks


def test_malformed_keys_are_refused():
    tfm = registry.alloc_aead(NAME)
    good = authenc_key(KERNEL[0]["key"])
    for key in (good[:3], (17).to_bytes(4, "big") + good[4:], (99).to_bytes(4, "big") + good[4:]):
        with pytest.raises(InvalidKey):
            tfm.setkey(key)


def test_the_kernels_rules_for_the_inner_algorithms():
    """Only an authenc AEAD (an AEAD name is looked up as an skcipher otherwise); an
    unkeyed hash whose digest is a key of the mode's cipher; an IV of one block."""
    with pytest.raises(AlgorithmNotFound):
        registry.alloc_aead("essiv(gcm(aes),sha256)")
    for name in (
        "essiv(authenc(hmac(sha256),cbc(aes)),sha512)",  # 64 bytes: no AES key
        "essiv(authenc(hmac(sha256),cbc(aes)),hmac(sha256))",
    ):
        with pytest.raises(InvalidArgument, match="essiv needs"):
            registry.alloc_aead(name)


def test_the_same_key_and_sector_seal_the_same_and_sectors_differ():
    tfm = registry.alloc_aead(NAME)
    tfm.setkey((16).to_bytes(4, "big") + os.urandom(32) + os.urandom(16))
    sector = (7).to_bytes(16, "little")
    data = bytes(64)
    first = tfm.encrypt(sector, data, b"")
    assert tfm.encrypt(sector, data, b"") == first
    assert tfm.encrypt((8).to_bytes(16, "little"), data, b"")[:16] != first[:16]
