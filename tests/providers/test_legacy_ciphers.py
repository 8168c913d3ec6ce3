"""The ciphers and hash IPsec still names (issue 11): Triple DES, Camellia, Blowfish, CAST5
and RIPEMD-160, every implementation of each name (one-piece drivers and template
compositions alike) against the published vectors cryptography-vectors carries and against
each other on random inputs, with the kernel's key lengths."""

import random

import cryptography_vectors
import pytest

from cryptoapi import AlgType, InvalidKey, Registry
from tests.vectors import Record, drivers_of, load, message

registry = Registry(selftests="off")

CIPHERS = ("des3_ede", "camellia", "blowfish", "cast5")
KEY_LENGTHS = {  # the kernel's: des_generic.c, camellia_generic.c, blowfish, cast5
    "des3_ede": [24],
    "camellia": [16, 24, 32],
    "blowfish": list(range(4, 57)),
    "cast5": list(range(5, 17)),
}

ECB_FILES = {  # (name, path) of the single-block vectors
    "des3_ede": ["ciphers/3DES/ECB/TECBMMT3.rsp", "ciphers/3DES/ECB/TECBvarkey.rsp"],
    "blowfish": ["ciphers/Blowfish/bf-ecb.txt"],
    "cast5": ["ciphers/CAST5/cast5-ecb.txt"],
}
CBC_FILES = {
    "des3_ede": ["ciphers/3DES/CBC/TCBCMMT3.rsp", "ciphers/3DES/CBC/TCBCvartext.rsp"],
    "camellia": ["ciphers/Camellia/camellia-cbc.txt"],
    "blowfish": ["ciphers/Blowfish/bf-cbc.txt"],
    "cast5": ["ciphers/CAST5/cast5-cbc.txt"],
}
NTT_CAMELLIA = [f"ciphers/Camellia/camellia-{bits}-ecb.txt" for bits in (128, 192, 256)]


def field(record: Record, name: str) -> bytes:
    """A hex field, whatever case the file spells its name in."""
    for key, value in record.fields.items():
        if key.lower() == name:
            return bytes.fromhex(value)
    raise KeyError(name)


def key_of(record: Record) -> bytes:
    """The key; the NIST TDES files give its three parts (KEY1, KEY2, KEY3), or in the
    known-answer files one key used three times (KEYs)."""
    if "KEYs" in record:
        return field(record, "keys") * 3
    if "KEY1" in record:
        return field(record, "key1") + field(record, "key2") + field(record, "key3")
    return field(record, "key")


def decrypting(record: Record) -> bool:
    return "DECRYPT" in record.section


def ntt_records(path: str) -> list[tuple[bytes, bytes, bytes]]:
    """(key, plaintext, ciphertext) of NTT's Camellia file (``K No.001 : 00 01 ...``)."""
    found, key, plaintext = [], b"", b""
    with cryptography_vectors.open_vector_file(path, "r") as stream:
        for line in stream:
            label, _, value = line.partition(":")
            if not label.startswith(("K No.", "P No.", "C No.")):
                continue
            data = bytes.fromhex(value.replace(" ", ""))
            if label.startswith("K No."):
                key = data
            elif label.startswith("P No."):
                plaintext = data
            elif label.startswith("C No."):
                found.append((key, plaintext, data))
    return found


def cases(files: dict[str, list[str]], mode: str) -> list[tuple[str, str]]:
    return [
        (driver, path)
        for name, paths in files.items()
        for path in paths
        for driver in drivers_of(mode.format(name))
    ]


def test_every_name_has_the_implementations_expected():
    """OpenSSL everywhere; pycryptodome except Camellia; the cbc template over each."""
    for name in CIPHERS:
        drivers = set(drivers_of(name))
        assert f"{name}-openssl" in drivers
        assert (f"{name}-pycryptodome" in drivers) == (name != "camellia")
        assert {f"cbc-{name}-openssl", f"cbc({name}-openssl)"} <= set(drivers_of(f"cbc({name})"))
    assert set(drivers_of("rmd160")) == {"rmd160-openssl", "rmd160-pycryptodome"}


@pytest.mark.parametrize(("driver", "path"), cases(ECB_FILES, "{}"))
def test_single_blocks_meet_the_published_vectors(driver, path):
    tfm = registry.alloc_cipher(driver)
    records = load(path)
    assert records
    for record in records:
        tfm.setkey(key_of(record))
        plaintext, ciphertext = field(record, "plaintext"), field(record, "ciphertext")
        size = tfm.blocksize
        for at in range(0, len(plaintext), size):  # ECB: block by block
            p, c = plaintext[at : at + size], ciphertext[at : at + size]
            if decrypting(record):
                assert tfm.decrypt(c) == p, f"{path}:{record.line}"
            else:
                assert tfm.encrypt(p) == c, f"{path}:{record.line}"


@pytest.mark.parametrize(("driver", "path"), cases(CBC_FILES, "cbc({})"))
def test_cbc_meets_the_published_vectors(driver, path):
    tfm = registry.alloc_skcipher(driver)
    records = load(path)
    assert records
    for record in records:
        tfm.setkey(key_of(record))
        iv = field(record, "iv")
        plaintext, ciphertext = field(record, "plaintext"), field(record, "ciphertext")
        assert tfm.decrypt(iv, ciphertext) == plaintext, f"{path}:{record.line}"
        if not decrypting(record):
            assert tfm.encrypt(iv, plaintext) == ciphertext, f"{path}:{record.line}"


@pytest.mark.parametrize("driver", drivers_of("camellia"))
@pytest.mark.parametrize("path", NTT_CAMELLIA)
def test_camellia_meets_ntts_vectors(driver, path):
    tfm = registry.alloc_cipher(driver)
    records = ntt_records(path)
    assert len(records) > 100
    for key, plaintext, ciphertext in records:
        tfm.setkey(key)
        assert tfm.encrypt(plaintext) == ciphertext
        assert tfm.decrypt(ciphertext) == plaintext


@pytest.mark.parametrize("driver", drivers_of("rmd160"))
def test_rmd160_meets_the_ripemd_pages_vectors(driver):
    tfm = registry.alloc_shash(driver)
    assert (tfm.digestsize, tfm.blocksize) == (20, 64)
    records = load("hashes/ripemd160/ripevectors.txt")
    assert len(records) >= 8
    for record in records:
        assert tfm.digest(message(record)) == record.hex("MD"), record.line


@pytest.mark.parametrize("driver", drivers_of("hmac(rmd160)"))
def test_hmac_rmd160_meets_rfc_2286(driver):
    tfm = registry.alloc_shash(driver)
    records = load("HMAC/rfc-2286-ripemd160.txt")
    assert len(records) == 7
    for record in records:
        tfm.setkey(record.hex("Key"))
        assert tfm.digest(record.hex("Msg")) == record.hex("MD"), record.line


def test_one_million_a_digest():
    """The RIPEMD-160 paper's last vector, on the pycryptodome and OpenSSL drivers."""
    for driver in drivers_of("rmd160"):
        tfm = registry.alloc_shash(driver).init()
        for _ in range(1000):
            tfm.update(b"a" * 1000)
        assert tfm.hexdigest() == "52783243c1697bdbe16d37f97f68f08325dc1528", driver


@pytest.mark.parametrize("name", CIPHERS)
def test_every_implementation_agrees_on_random_inputs(name):
    """Each driver of the cipher and of cbc(cipher) against every other one, for keys of
    every length the kernel takes."""
    rng = random.Random(f"legacy {name}")
    ciphers = [registry.alloc_cipher(d) for d in drivers_of(name)]
    modes = [registry.alloc_skcipher(d) for d in drivers_of(f"cbc({name})")]
    block = ciphers[0].blocksize
    for length in KEY_LENGTHS[name]:
        key, iv = rng.randbytes(length), rng.randbytes(block)
        data = rng.randbytes(block * rng.randrange(1, 9))
        for tfm in (*ciphers, *modes):
            tfm.setkey(key)
        encrypted = {c.driver_name: c.encrypt(data[:block]) for c in ciphers}
        assert len(set(encrypted.values())) == 1, (length, encrypted)
        sealed = {m.driver_name: m.encrypt(iv, data) for m in modes}
        assert len(set(sealed.values())) == 1, (length, sealed)
        assert all(m.decrypt(iv, sealed[m.driver_name]) == data for m in modes)


@pytest.mark.parametrize("driver", [d for n in CIPHERS for d in drivers_of(n)])
def test_sizes_and_key_lengths_are_the_kernels(driver):
    alg = registry.lookup(driver)
    assert alg.type is AlgType.CIPHER
    lengths = KEY_LENGTHS[alg.name]
    assert (alg.min_keysize, alg.max_keysize) == (lengths[0], lengths[-1])
    assert alg.blocksize == (16 if alg.name == "camellia" else 8)
    tfm = registry.alloc_cipher(driver)
    for length in range(0, 60):
        if length in lengths:
            tfm.setkey(bytes(range(1, length + 1)))
        else:
            with pytest.raises(InvalidKey, match=alg.name):
                tfm.setkey(bytes(length))


@pytest.mark.parametrize("driver", drivers_of("des3_ede") + drivers_of("cbc(des3_ede)"))
def test_degenerate_triple_des_keys_are_accepted_as_linux_does(driver):
    """K1 = K2 (or K2 = K3) makes Triple DES single DES under K3 (K1): Linux accepts such a
    key outside FIPS mode (des3_ede_verify_key), so every driver does; pycryptodome, which
    refuses it, hands it on to the next implementation."""
    k1, k3 = bytes.fromhex("0123456789abcdef"), bytes.fromhex("fedcba9876543210")
    block = bytes.fromhex("5468652071756663")
    single = registry.alloc_cipher("des3_ede-openssl")
    single.setkey(k3 * 3)  # three equal keys: single DES under k3
    expected = single.encrypt(block)
    if registry.lookup(driver).type is AlgType.CIPHER:
        tfm = registry.alloc_cipher(driver)
        tfm.setkey(k1 + k1 + k3)
        assert tfm.encrypt(block) == expected
        assert tfm.decrypt(expected) == block
    else:
        tfm = registry.alloc_skcipher(driver)
        tfm.setkey(k1 + k1 + k3)
        assert tfm.encrypt(bytes(8), block) == expected
    assert (tfm.serving_driver == driver) == ("pycryptodome" not in driver)


def test_twofish_is_not_offered():
    """No well-kept Python library implements Twofish, so PF_KEY does not list it."""
    assert drivers_of("twofish") == []
    assert drivers_of("cbc(twofish)") == []
