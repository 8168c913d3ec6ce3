"""NIST CAVP SHA-1/SHA-2 (SHAVS) and SHA-3 (SHA3VS) vectors, and RFC 1321 for MD5, run
against every registered implementation of each hash, each vector in several ways."""

import pytest

from cryptoapi import Registry
from tests.vectors import drivers_of, load, message

SHA2_FILES = {
    "sha1": "SHA1/SHA1",
    "sha224": "SHA2/SHA224",
    "sha256": "SHA2/SHA256",
    "sha384": "SHA2/SHA384",
    "sha512": "SHA2/SHA512",
    "sha3-224": "SHA3/SHA3_224",
    "sha3-256": "SHA3/SHA3_256",
    "sha3-384": "SHA3/SHA3_384",
    "sha3-512": "SHA3/SHA3_512",
}

registry = Registry(selftests="off")


def cases(kinds: tuple[str, ...]) -> list[tuple[str, str, str]]:
    return [
        (name, driver, f"hashes/{stem}{kind}.rsp")
        for name, stem in SHA2_FILES.items()
        for kind in kinds
        for driver in drivers_of(name)
    ]


@pytest.mark.parametrize(("name", "driver", "path"), cases(("ShortMsg",)))
def test_short_messages_every_way(name, driver, path):
    tfm = registry.alloc_shash(driver)
    assert tfm.alg_name == name
    for record in load(path):
        msg, expected = message(record), record.hex("MD")
        assert tfm.digest(msg) == expected, f"{path}:{record.line}"
        assert tfm.digest(bytearray(msg)) == expected
        assert tfm.digest(memoryview(b"\xff" + msg)[1:]) == expected
        desc = tfm.init()
        half = len(msg) // 2
        desc.update(msg[:half])
        snapshot = desc.copy()
        desc.update(memoryview(msg)[half:])
        assert desc.final() == expected, f"{path}:{record.line} split"
        snapshot.update(msg[half:])
        assert snapshot.hexdigest() == expected.hex(), f"{path}:{record.line} copy"


@pytest.mark.parametrize(("name", "driver", "path"), cases(("LongMsg",)))
def test_long_messages(name, driver, path):
    tfm = registry.alloc_shash(driver)
    for record in load(path):
        assert tfm.digest(message(record)) == record.hex("MD"), f"{path}:{record.line}"


def monte_sha2(tfm, seed: bytes) -> list[bytes]:
    """SHAVS §6.4: each checkpoint hashes the three previous digests 1000 times."""
    checkpoints = []
    for _ in range(100):
        md = [seed, seed, seed]
        for _ in range(1000):
            md = [md[1], md[2], tfm.digest(md[0] + md[1] + md[2])]
        seed = md[2]
        checkpoints.append(seed)
    return checkpoints


def monte_sha3(tfm, seed: bytes) -> list[bytes]:
    """SHA3VS §6.2.3: each checkpoint iterates the hash 1000 times on its own output."""
    checkpoints = []
    for _ in range(100):
        for _ in range(1000):
            seed = tfm.digest(seed)
        checkpoints.append(seed)
    return checkpoints


MONTE = [
    (name, driver)
    for name in SHA2_FILES
    for driver in drivers_of(name)
    if driver.endswith("-openssl") or name == "sha256" or name == "sha3-256"
]


@pytest.mark.parametrize(("name", "driver"), MONTE)
def test_monte_carlo(name, driver):
    records = load(f"hashes/{SHA2_FILES[name]}Monte.rsp")
    seed = records[0].hex("Seed")
    expected = [r.hex("MD") for r in records[1:]]
    run = monte_sha3 if name.startswith("sha3-") else monte_sha2
    assert run(registry.alloc_shash(driver), seed) == expected


@pytest.mark.parametrize("driver", drivers_of("md5"))
def test_md5_rfc1321(driver):
    tfm = registry.alloc_shash(driver)
    records = load("hashes/MD5/rfc-1321.txt")
    assert len(records) == 7
    for record in records:
        assert tfm.digest(message(record)) == record.hex("MD"), f"rfc-1321:{record.line}"


def test_every_hash_has_generic_and_openssl():
    for name in (*SHA2_FILES, "md5"):
        assert {f"{name}-generic", f"{name}-openssl"} <= set(drivers_of(name))
