"""Every DRBG driver reproduces NIST's CAVP vectors (typed in under ``vectors/``), on the
fastest primitives and on the readable generic ones; every driver has registration KATs."""

import pytest

from cryptoapi import Registry
from cryptoapi.selftest.vectors import vectors_for
from tests.rng.conftest import CAVP, DRBG_DRIVERS, replay


@pytest.mark.parametrize("vector", CAVP, ids=lambda v: f"{v['driver']}@{v['source'][-12:-1]}")
def test_cavp_vector(registry, vector):
    rng = registry.alloc_rng(vector["driver"])
    assert replay(rng, vector).hex() == vector["output"]


def test_every_driver_meets_several_cavp_vectors_of_each_input_shape():
    for driver in DRBG_DRIVERS:
        shapes = {v["source"].split("[PersonalizationStringLen")[1].split("COUNT")[0]
                  for v in CAVP if v["driver"] == driver}  # fmt: skip
        assert len(shapes) == 4, driver  # with and without personalization x additional input


def test_every_registered_drbg_has_its_own_selftest_vector(registry):
    drivers = set(registry.implementations("stdrng"))
    assert drivers == set(DRBG_DRIVERS)
    assert {v["driver"] for v in vectors_for("stdrng")} == drivers


GENERIC_ONLY = (
    "sha256-openssl,sha384-openssl,sha512-openssl,sha256-pycryptodome,sha384-pycryptodome,"
    "sha512-pycryptodome,aes-openssl,aes-pycryptodome,ecb-aes-openssl,cbc-aes-openssl,"
    "ctr-aes-openssl,cbc-aes-pycryptodome,ctr-aes-pycryptodome,sha256-sodium,sha512-sodium,"
    "sha256-wolfcrypt,sha384-wolfcrypt,sha512-wolfcrypt,aes-wolfcrypt,cbc-aes-wolfcrypt,"
    "ctr-aes-wolfcrypt,hmac-sha256-sodium,hmac-sha512-sodium"
)


def test_drbgs_run_on_the_generic_primitives_when_the_fast_ones_fail(monkeypatch):
    """The DRBG looks its primitive up in its registry: with every faster hash and AES
    failing its self-test, it runs on the generic ones and still meets the vectors."""
    monkeypatch.setenv("CRYPTOAPI_BREAK_SELFTEST", GENERIC_ONLY)
    registry = Registry(selftests="lazy")
    assert registry.lookup("hmac(sha512)").driver == "hmac(sha512-generic)"
    assert registry.lookup("ctr(aes)").driver == "ctr(aes-generic)"
    for driver in ("drbg_nopr_hmac_sha512", "drbg_pr_sha384", "drbg_nopr_ctr_aes192"):
        vector = next(v for v in CAVP if v["driver"] == driver)
        assert replay(registry.alloc_rng(driver), vector).hex() == vector["output"]
