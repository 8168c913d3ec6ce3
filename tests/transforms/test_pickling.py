"""No transform and no running hash pickles or copies through ``copy``: each may hold a key,
and a pickle of a keyed one would be that key, working, wherever the bytes go. Checked for
every implementation (generic drivers and compositions included) of a representative set
of names of every type, before and after setkey; ``desc.copy()`` keeps working."""

import copy
import pickle

import pytest

from cryptoapi import Registry
from tests.vectors import drivers_of

registry = Registry(selftests="off")

AUTHENC_KEY = (16).to_bytes(4, "big") + bytes(range(32)) + bytes(range(100, 116))
KEYS = {  # a valid key per name; None: an unkeyed hash
    "shash": {
        "sha256": None, "sha3-256": None, "md5": None, "hmac(sha256)": b"k" * 32,
        "hmac(sha512)": b"k" * 7, "cmac(aes)": bytes(16), "xcbc(aes)": bytes(16),
        "poly1305": bytes(range(32)), "ghash": bytes(16),
    },
    "cipher": {"aes": bytes(32)},
    "skcipher": {
        "cbc(aes)": bytes(16), "ctr(aes)": bytes(24), "xts(aes)": bytes(range(48)),
        "chacha20": bytes(32), "rfc3686(ctr(aes))": bytes(20),
    },
    "aead": {
        "gcm(aes)": bytes(16), "rfc4106(gcm(aes))": bytes(20), "ccm(aes)": bytes(16),
        "rfc7539(chacha20,poly1305)": bytes(32), "authenc(hmac(sha256),cbc(aes))": AUTHENC_KEY,
    },
    "kdf": {"kdf108ctr(hmac(sha256))": b"k" * 32, "hkdf(hmac(sha256))": b"ikm"},
}  # fmt: skip
CASES = [
    pytest.param(kind, driver, key, id=driver)
    for kind, names in KEYS.items()
    for name, key in names.items()
    for driver in drivers_of(name)
]
COPIERS = [
    *(pytest.param(lambda obj, p=p: pickle.dumps(obj, p), id=f"pickle{p}") for p in range(6)),
    pytest.param(copy.copy, id="copy"),
    pytest.param(copy.deepcopy, id="deepcopy"),
]


def refused(obj, copier):
    with pytest.raises(TypeError, match="cannot pickle or copy") as error:
        copier(obj)
    return str(error.value)


def allocate(kind, driver):
    return getattr(registry, f"alloc_{kind}")(driver)


def test_the_cases_cover_every_type_and_generic_drivers():
    assert {kind for kind, *_ in (case.values for case in CASES)} == set(KEYS)
    generic = [case for case in CASES if "generic" in case.values[1]]
    assert {case.values[0] for case in generic} == set(KEYS)


@pytest.mark.parametrize("copier", COPIERS)
@pytest.mark.parametrize(("kind", "driver", "key"), CASES)
def test_a_transform_refuses_pickle_and_copy(kind, driver, key, copier):
    tfm = allocate(kind, driver)
    refused(tfm, copier)
    if key is not None:
        tfm.setkey(key)
        message = refused(tfm, copier)
        assert key.hex() not in message and repr(key) not in message


@pytest.mark.parametrize("copier", COPIERS)
@pytest.mark.parametrize(
    ("driver", "key"), [case.values[1:] for case in CASES if case.values[0] == "shash"]
)
def test_a_running_hash_refuses_pickle_and_copy_but_copies_itself(driver, key, copier):
    tfm = allocate("shash", driver)
    if key is not None:
        tfm.setkey(key)
    desc = tfm.init()
    desc.update(b"the secret-keyed prefix")
    refused(desc, copier)
    fork = desc.copy()  # the hashlib-like method still works
    fork.update(b"!")
    desc.update(b"!")
    assert fork.digest() == desc.digest() == tfm.digest(b"the secret-keyed prefix!")


def test_a_keyed_generic_hmac_desc_no_longer_pickles_into_a_working_mac():
    """The report that started this: the generic HMAC's state is plain Python objects."""
    tfm = registry.alloc_shash("hmac(sha256-generic)")
    tfm.setkey(b"key")
    desc = tfm.init()
    with pytest.raises(TypeError):
        pickle.loads(pickle.dumps(desc))
    with pytest.raises(TypeError):
        pickle.dumps(tfm)
